//! The falsifiers of the cache (Che approximation) claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{To, normal};
    use crate::reproduce::num;
    use cdnlab::rng::Rng;
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        static CHE: RefCell<HashMap<(u64, u64, u64), f64>> = RefCell::new(HashMap::new());
    }
    // Che's value of the row's cell with alpha shifted. The right model uses it as the exact
    // reference too: the claim only compares the simulation with whatever reference the run
    // reports, and the exact integral at the full grid would take this test most of a minute
    // (the integral itself is checked against King's formula in `cache::che`).
    fn che(r: &SummaryRow, alpha_shift: f64) -> f64 {
        let (a, c, n) = (
            num(r, "alpha") + alpha_shift,
            num(r, "cache_size"),
            num(r, "objects"),
        );
        CHE.with(|m| {
            *m.borrow_mut()
                .entry((a.to_bits(), c.to_bits(), n.to_bits()))
                .or_insert_with(|| {
                    let pmf = cdnlab::workload::popularity::Law::Zipf { alpha: a }
                        .pmf(n as usize)
                        .unwrap();
                    cdnlab::cache::che::lru_hit_ratio(&pmf, c).unwrap()
                })
        })
    }
    // Sampling noise of a hit ratio over the cell's requests, twice the binomial one (hits
    // are correlated in an LRU).
    fn noisy(r: &SummaryRow, h: f64, rng: &mut Rng) -> f64 {
        let sd = 2.0 * (h * (1.0 - h) / num(r, "requests")).sqrt();
        normal(rng, h, sd)
    }
    fn right(r: &SummaryRow, _: u64, rng: &mut Rng) -> Vec<(&'static str, f64)> {
        let exact = che(r, 0.0);
        vec![
            ("hit_ratio", noisy(r, exact, rng)),
            ("che_hit_ratio", exact),
            ("exact_hit_ratio", exact),
        ]
    }
    vec![
        Falsifier::new("cache-che", "cache.C1", right)
            // A sampler that reads alpha 0.05 too high: hit ratios a few percent off.
            .whole("zipf alpha off by 0.05", |r, _, rng| {
                vec![
                    ("hit_ratio", noisy(r, che(r, 0.05), rng)),
                    ("che_hit_ratio", che(r, 0.0)),
                    ("exact_hit_ratio", che(r, 0.0)),
                ]
            })
            // A cache that loses 3% of its hits (FIFO-like under IRM), in one cell only.
            .doctor(
                "one cell 3% low",
                |r, _| num(r, "alpha") == 1.0 && r.cell % 4 == 2,
                &[("hit_ratio", To::Map(|_, x| x * 0.97))],
            )
            // The exact reference skipped in one cell (too costly): no verdict without it.
            .doctor(
                "one cell without its exact reference",
                |r, _| r.cell == 5,
                &[("exact_hit_ratio", To::Is(f64::NAN))],
            ),
    ]
}
