//! Reproductions of the cache substrate: LRU against the Che approximation.

use super::{Claim, Reproduction, critical, metric, se, words};
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
                checks the cache, the Zipf sampler and the approximation together. The \
                tolerance is statistical (Student-t on the replications' standard error, \
                family-wise false-failure rate 0.001 over the cells) plus Che's own \
                approximation error, taken as 0.5% of the hit ratio.",
        claims: cache_claims,
    }]
}

/// Che's own relative error allowed on top of the sampling error (it is an approximation, least
/// accurate for small caches: the quick run's largest relative gap is 0.65%, at alpha 1.0 and
/// C = 10, where the sampling term covers the rest).
pub const CHE_RELATIVE: f64 = 0.005;

fn cache_claims(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    // Per cell: the gap over its allowance (sampling error at the family-wise level plus Che's
    // relative error); the claim holds when the worst cell stays at or below 1.
    let worst = rows
        .iter()
        .map(|r| {
            let (sim, che) = (metric(sc, r, "hit_ratio"), metric(sc, r, "che_hit_ratio"));
            let n = r.metrics[0].n;
            let allow = critical(n.saturating_sub(1), rows.len()) * se(sc, r, "hit_ratio")
                + CHE_RELATIVE * che;
            (
                (sim - che).abs() / allow,
                (sim - che).abs() / che,
                super::num(r, "alpha"),
                super::num(r, "cache_size"),
                *super::summary(sc, r, "hit_ratio"),
                che,
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let in_words = match &worst {
        Some(w) => format!(
            "{} cells; the farthest from Che (alpha {}, C = {}): simulated {} against Che {}, a \
             relative gap of {}%, {} of its allowance",
            rows.len(),
            words::sig(w.2, 3),
            words::sig(w.3, 6),
            words::ci(&w.4),
            words::sig(w.5, 5),
            words::sig(100.0 * w.1, 2),
            words::sig(w.0, 2)
        ),
        None => "no cells were run".into(),
    };
    vec![
        super::claim(
            "cache",
            "cache.C1",
            "Simulated LRU hit ratio agrees with the Che approximation in every cell (the GWTW \
             spec's cross-check of cache and workload)",
            serde_json::json!(worst.as_ref().map(|w| serde_json::json!({
                "worst_gap_over_allowance": w.0, "its_relative_gap": w.1, "alpha": w.2, "cache_size": w.3
            }))),
            format!(
                "|simulated - Che| <= t(0.001 family-wise) x standard error + {CHE_RELATIVE} x Che, \
                 in every cell"
            ),
            worst.as_ref().is_some_and(|w| w.0 <= 1.0),
        )
        .says(in_words),
    ]
}

#[cfg(test)]
mod falsify;
#[cfg(test)]
pub(super) use falsify::falsifiers;
