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
                LRU cache, against LRU's exact stationary hit ratio (the Flajolet-Gardy-Thimonier \
                integral, computed to 1e-9) and the Che approximation (characteristic time T \
                solving sum(1 - exp(-p_i T)) = C). The simulation must match the exact value \
                within its sampling error (Student-t on the replications' standard error, \
                family-wise false-failure rate 0.001 over the cells); Che's own error is then \
                computed, not assumed, so simulation and Che agree within the sampling error \
                plus that error.",
        claims: cache_claims,
    }]
}

fn cache_claims(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    // Per cell: |simulated - exact| over its sampling allowance (a two-sided t at the family-wise
    // level). The simulated cache is exactly stationary once the warm-up has requested C
    // distinct objects (LRU's state is then a function of i.i.d. requests), so its mean is the
    // exact value and the allowance is sampling error alone; Che's error is reported beside it.
    struct Cell {
        over: f64,
        alpha: f64,
        c: f64,
        sim: cdnlab::stats::Summary,
        exact: f64,
        che: f64,
    }
    let cells: Vec<Cell> = rows
        .iter()
        .map(|r| {
            let exact = metric(sc, r, "exact_hit_ratio");
            let allow =
                critical(r.metrics[0].n.saturating_sub(1), rows.len()) * se(sc, r, "hit_ratio");
            Cell {
                // A missing reference (NaN) counts as over.
                over: if exact.is_finite() {
                    (metric(sc, r, "hit_ratio") - exact).abs() / allow
                } else {
                    f64::INFINITY
                },
                alpha: super::num(r, "alpha"),
                c: super::num(r, "cache_size"),
                sim: *super::summary(sc, r, "hit_ratio"),
                exact,
                che: metric(sc, r, "che_hit_ratio"),
            }
        })
        .collect();
    let worst = cells.iter().max_by(|a, b| a.over.total_cmp(&b.over));
    let che_rel = |c: &Cell| (c.che - c.exact).abs() / c.exact;
    let che_worst = cells
        .iter()
        .filter(|c| c.exact.is_finite())
        .max_by(|a, b| che_rel(a).total_cmp(&che_rel(b)));
    let in_words = match (worst, che_worst) {
        (Some(w), Some(e)) => format!(
            "{} cells; the farthest from LRU's exact value (alpha {}, C = {}): simulated {} \
             against exact {}, {} of its sampling allowance. Che's largest error (alpha {}, \
             C = {}): {} against exact {}, {}% of it",
            cells.len(),
            words::sig(w.alpha, 3),
            words::sig(w.c, 6),
            words::ci(&w.sim),
            words::sig(w.exact, 5),
            words::sig(w.over, 2),
            words::sig(e.alpha, 3),
            words::sig(e.c, 6),
            words::sig(e.che, 5),
            words::sig(e.exact, 5),
            words::sig(100.0 * che_rel(e), 2)
        ),
        _ => "no cells with an exact reference were run".into(),
    };
    vec![
        super::claim(
            "cache",
            "cache.C1",
            "Simulated LRU hit ratio equals LRU's exact value within sampling error in every cell, \
             so it agrees with the Che approximation within Che's computed error (the GWTW \
             spec's cross-check of cache and workload)",
            serde_json::json!({
                "worst_gap_over_allowance": worst.map(|w| w.over),
                "at": worst.map(|w| serde_json::json!({"alpha": w.alpha, "cache_size": w.c})),
                "che_largest_relative_error": che_worst.map(che_rel),
                "che_at": che_worst.map(|w| serde_json::json!({"alpha": w.alpha, "cache_size": w.c})),
            }),
            "|simulated - exact| <= t(0.001 family-wise) x standard error in every cell (Che's \
             error |Che - exact| reported)"
                .to_string(),
            worst.is_some_and(|w| w.over <= 1.0),
        )
        .says(in_words),
    ]
}

#[cfg(test)]
mod falsify;
#[cfg(test)]
pub(super) use falsify::falsifiers;
