//! Reproductions of the cache substrate: LRU against the Che approximation.

use super::{Claim, Reproduction, metric};
use crate::runner::SummaryRow;
use crate::scenario::Scenario;

/// The cache reproductions.
pub fn registry() -> Vec<Reproduction> {
    vec![Reproduction {
        id: "cache-che",
        paper: "cache",
        title: "LRU hit ratio vs the Che approximation",
        quick: scenario!("cache-che.toml"),
        full: scenario!("cache-che-full.toml"),
        notes: "Independent requests over a Zipf(alpha) catalogue of unit-size objects into one \
                LRU cache. The Che approximation (characteristic time T solving \
                sum(1 - exp(-p_i T)) = C) is known to be accurate in this regime, so agreement \
                checks the cache, the Zipf sampler and the approximation together.",
        claims: cache_claims,
    }]
}

/// Tolerance of `cache.C1`: mean simulated hit ratio within this of Che's, in every cell.
pub const CHE_TOLERANCE: f64 = 0.01;

fn cache_claims(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let worst = rows
        .iter()
        .map(|r| (metric(sc, r, "hit_ratio") - metric(sc, r, "che_hit_ratio")).abs())
        .fold(0.0f64, f64::max);
    // Monotonicity: along cache_size for each alpha, and along alpha for each cache_size.
    let increasing = |key: &str, other: &str| {
        let mut ok = true;
        for a in rows {
            for b in rows {
                let same_other = a.params[other] == b.params[other];
                let less = match (&a.params[key], &b.params[key]) {
                    (cdnlab::sim::Value::Float(x), cdnlab::sim::Value::Float(y)) => x < y,
                    (cdnlab::sim::Value::Int(x), cdnlab::sim::Value::Int(y)) => x < y,
                    _ => false,
                };
                if same_other && less && metric(sc, a, "hit_ratio") >= metric(sc, b, "hit_ratio") {
                    ok = false;
                }
            }
        }
        ok
    };
    let by_size = increasing("cache_size", "alpha");
    let by_alpha = increasing("alpha", "cache_size");
    vec![
        Claim {
            id: "cache.C1".into(),
            paper: "cache",
            claim: "Simulated LRU hit ratio agrees with the Che approximation in every cell".into(),
            measured: serde_json::json!(worst),
            expected: format!("max |simulated - Che| <= {CHE_TOLERANCE}"),
            pass: worst <= CHE_TOLERANCE && !rows.is_empty(),
        },
        Claim {
            id: "cache.C2".into(),
            paper: "cache",
            claim: "LRU hit ratio increases with the cache size, for every alpha".into(),
            measured: serde_json::json!(by_size),
            expected: "true".into(),
            pass: by_size && !rows.is_empty(),
        },
        Claim {
            id: "cache.C3".into(),
            paper: "cache",
            claim: "LRU hit ratio increases with the Zipf exponent alpha, at every cache size"
                .into(),
            measured: serde_json::json!(by_alpha),
            expected: "true".into(),
            pass: by_alpha && !rows.is_empty(),
        },
    ]
}
