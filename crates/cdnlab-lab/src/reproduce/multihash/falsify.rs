//! The falsifiers of the multi-hash DHT claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{Falsifier as F, To::*, always, normal};
    use cdnlab::rng::Rng;

    type V = Vec<(&'static str, f64)>;
    fn x1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (k, n) = (num(r, "k") as u32, num(r, "n") as u32);
        let (e, var) = (
            analysis::expected_probes(k, n),
            analysis::probe_variance(k, n),
        );
        let req = num(r, "requests");
        vec![
            ("probes_mean", normal(rng, e, (var / req).sqrt())),
            ("probes_expected", e),
            (
                "probes_var",
                normal(
                    rng,
                    var,
                    ((analysis::probe_fourth_cumulant(k, n) + 2.0 * var * var) / req).sqrt(),
                ),
            ),
            ("var_expected", var),
            ("chi2", 10.0),
            ("chi2_bound", 20.0),
            ("fits", 1.0),
        ]
    }
    fn gaps_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (n, g) = (num(r, "n"), num(r, "gap"));
        let f = if g == 1.0 { 1.0 / n } else { 0.0 };
        let p = (n - g) / (n - 1.0);
        let trials = num(r, "rounds_trials").max(1.0);
        vec![
            ("fits", 1.0),
            (
                "fail_rate",
                normal(rng, f, (f * (1.0 - f) / num(r, "requests")).sqrt()),
            ),
            (
                "rgr_rounds",
                normal(
                    rng,
                    analysis::rgr_mean_rounds(n as u32, g as u32),
                    ((1.0 - p) / (p * p) / trials).sqrt(),
                ),
            ),
            ("max_abs_dev", 0.001),
        ]
    }
    fn x3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        match text(r, "policy") {
            "multihash" => vec![("max_mean", normal(rng, 1.5, 0.05))],
            _ => vec![("max_mean", normal(rng, 1.5 * gain(r), 0.3))],
        }
    }
    fn steady_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        if num(r, "window") >= 10000.0 {
            vec![("hot_in_band", 1.0), ("in_band", 1.0)]
        } else {
            vec![
                ("hot_in_band", (normal(rng, 0.2, 0.1)).clamp(0.0, 0.9)),
                ("in_band", 0.98),
            ]
        }
    }
    fn flash_target(r: &SummaryRow) -> f64 {
        let pmf0 = Law::Zipf {
            alpha: num(r, "alpha"),
        }
        .pmf(num(r, "files") as usize)
        .map_or(f64::NAN, |p| p[0]);
        let lambda = num(r, "flash") * pmf0 * num(r, "load") * num(r, "nodes");
        f64::from(analysis::steady_replicas(lambda, num(r, "c_high")))
    }
    fn x4_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let (h, start, end) = (
            num(r, "horizon"),
            num(r, "flash_start"),
            num(r, "flash_end"),
        );
        let target = flash_target(r);
        let base = (target / num(r, "flash")).ceil();
        let at = |t: f64| match growth(r) {
            "one" => (t + 1.0).min(target),
            _ if t <= start => base,
            _ => target,
        };
        let top = if h <= end {
            at(h)
        } else {
            (at(end) - (h - end)).max(base)
        };
        let load = if growth(r) == "one" && h > start && h <= end {
            2.0
        } else {
            0.45
        };
        vec![
            ("top_replicas", top),
            ("top_replica_load", load),
            ("prefix_breaks", 0.0),
            ("home_missing", 0.0),
        ]
    }
    fn x5_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let p = 0.01 * num(r, "fail_fraction");
        let n = num(r, "load") * num(r, "nodes") * num(r, "window");
        let below = 8000.0;
        vec![
            ("predicted_failure_after", p),
            (
                "failure_rate_after",
                normal(rng, p, (p * (1.0 - p) / n).sqrt()),
            ),
            ("repair_rounds", 5.0),
            ("below_gap_served", normal(rng, below, below.sqrt())),
            ("below_gap_expected", below),
            ("below_gap_uniform", 0.8 * below),
        ]
    }
    fn x6_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let n = num(r, "nodes");
        let e = 7.5 - 0.5 * n.ln();
        vec![
            ("chord_hops", normal(rng, 0.5 * n.log2(), 0.05)),
            ("probes_per_request", normal(rng, e, 0.004)),
            ("probes_expected", e),
            ("probes_se", 0.004),
            ("messages_per_replication", 0.5 * n.ln()),
            ("replication_formula", 0.5 * n.ln()),
            ("repair_messages_per_round", 0.8 * n),
            ("repair_formula", 0.8 * n),
            ("create_refused", 2.0 * n),
            ("duplicate_replicas", 0.0),
        ]
    }
    fn fits(_: &SummaryRow, _: u64, _: &mut Rng) -> V {
        vec![("fits", 1.0)]
    }
    fn growth(r: &SummaryRow) -> &str {
        text(r, "growth")
    }
    fn gain(r: &SummaryRow) -> f64 {
        2.0 + 10.0 * num(r, "alpha")
    }
    vec![
        F::new("mh-x1", "mh.rbs-uniform", x1_right).doctor(
            "RBS favours the lowest index in one run",
            |r, rep| rep == 1 && r.cell == 3,
            &[("fits", Is(0.0)), ("chi2", Is(90.0))],
        ),
        F::new("mh-x1", "mh.rbs-probes", x1_right).doctor(
            "an extra probe 5% of the time",
            always,
            &[("probes_mean", Map(|_, x| x + 0.05))],
        ),
        F::new("mh-x1", "mh.rbs-variance", x1_right).doctor(
            "variance 3% high",
            always,
            &[("probes_var", Map(|_, x| x * 1.03))],
        ),
        F::new("mh-gaps", "mh.gap-single", gaps_right)
            .doctor(
                "failure 1.3 / n at g = 1",
                |r, _| num(r, "gap") == 1.0,
                &[("fail_rate", Map(|r, x| x + 0.3 / num(r, "n")))],
            )
            .doctor(
                "served index skewed in one run",
                |r, rep| rep == 0 && r.cell == 5,
                &[("fits", Is(0.0))],
            ),
        F::new("mh-gaps", "mh.rgr-rounds", gaps_right).doctor(
            "rounds n / (n - g) (probing [1, i])",
            always,
            &[(
                "rgr_rounds",
                Map(|r, x| {
                    let (n, g) = (num(r, "n"), num(r, "gap"));
                    x - (n - 1.0) / (n - g) + n / (n - g)
                }),
            )],
        ),
        F::new("mh-multigap", "mh.gap-multi", fits).doctor(
            "one run off the recursion",
            |r, rep| rep == 2 && r.cell == 7,
            &[("fits", Is(0.0))],
        ),
        F::new("mh-x3", "mh.balance-gain", x3_right)
            .doctor(
                "replication does not balance",
                |r, _| text(r, "policy") == "multihash",
                &[("max_mean", Map(|r, x| x * gain(r)))],
            )
            .doctor(
                "the gain does not grow with alpha",
                |r, _| text(r, "policy") != "multihash",
                &[("max_mean", Map(|r, x| x / gain(r) * 5.0))],
            ),
        F::new("mh-steady", "mh.steady-replicas", steady_right)
            .doctor(
                "single-hash (one replica each)",
                always,
                &[("hot_in_band", Is(0.0)), ("in_band", Is(0.97))],
            )
            .doctor(
                "hot files overshoot at the long window too",
                always,
                &[("hot_in_band", Is(0.7))],
            ),
        F::new("mh-steady", "mh.steady-noise", steady_right).doctor(
            "no overshoot with the short window",
            always,
            &[("hot_in_band", Is(1.0)), ("in_band", Is(1.0))],
        ),
        F::new("mh-x4", "mh.flash-growth", x4_right)
            .doctor(
                "double and jump add one replica per window",
                |r, _| growth(r) != "one" && num(r, "horizon") > num(r, "flash_start"),
                &[(
                    "top_replicas",
                    Map(|r, _| {
                        let (h, start) = (num(r, "horizon"), num(r, "flash_start"));
                        let base = (flash_target(r) / num(r, "flash")).ceil();
                        (base + (h - start)).min(flash_target(r))
                    }),
                )],
            )
            .doctor(
                "doubling goes on doubling on noise (4x the target in one run)",
                |r, rep| growth(r) == "double" && rep == 1 && num(r, "horizon") == 20.0,
                &[("top_replicas", Map(|r, _| 4.0 * flash_target(r)))],
            )
            .doctor(
                "jump takes the largest estimate twice over (2x the target in one run)",
                |r, rep| growth(r) == "jump" && rep == 0 && num(r, "horizon") == 15.0,
                &[("top_replicas", Map(|r, _| 2.0 * flash_target(r)))],
            ),
        F::new("mh-x4", "mh.flash-load", x4_right)
            .doctor(
                "jump replicates too little (load twice c_high)",
                |r, _| growth(r) == "jump",
                &[("top_replica_load", Is(1.0))],
            )
            .doctor("one keeps up", always, &[("top_replica_load", Is(0.45))]),
        F::new("mh-x4", "mh.invariants", x4_right)
            .doctor(
                "de-replication removes a middle replica",
                |r, rep| rep == 1 && num(r, "horizon") == 40.0 && growth(r) == "jump",
                &[("prefix_breaks", Is(3.0))],
            )
            .doctor(
                "the home copy removed",
                |r, rep| rep == 0 && num(r, "horizon") == 60.0 && growth(r) == "one",
                &[("home_missing", Is(1.0))],
            ),
        F::new("mh-x4", "mh.flash-shrink", x4_right).doctor(
            "no de-replication",
            |r, _| num(r, "horizon") > num(r, "flash_end") && growth(r) != "one",
            &[("top_replicas", Map(|r, _| flash_target(r)))],
        ),
        F::new("mh-x5", "mh.failure-recursion", x5_right).doctor(
            "failures 50% above the recursion",
            always,
            &[("failure_rate_after", Map(|_, x| x * 1.5))],
        ),
        F::new("mh-x5", "mh.gap-skew", x5_right)
            .doctor(
                "requests uniform over surviving replicas",
                always,
                &[("below_gap_served", Is(6400.0))],
            )
            .doctor(
                "gaps shift more load than the recursion",
                always,
                &[("below_gap_served", Map(|_, x| x * 1.05))],
            ),
        F::new("mh-x5", "mh.repair", x5_right).doctor(
            "one rgr run never repaired",
            |r, rep| rep == 1 && text(r, "repair") == "rgr" && num(r, "fail_fraction") == 0.4,
            &[(
                "repair_rounds",
                Map(|r, _| num(r, "horizon") - num(r, "fail_at")),
            )],
        ),
        F::new("mh-x6", "mh.chord-hops", x6_right)
            .doctor(
                "log2 N hops",
                always,
                &[("chord_hops", Map(|r, _| num(r, "nodes").log2()))],
            )
            .doctor(
                "hops that do not grow with N (a constant 4)",
                always,
                &[("chord_hops", Draw(|_, rng| normal(rng, 4.0, 0.05)))],
            ),
        F::new("mh-x6", "mh.x6-probes", x6_right)
            .doctor(
                "an extra probe in 5% of one run's requests",
                |r, rep| rep == 1 && r.cell == 2,
                &[(
                    "probes_per_request",
                    Map(|r, _| 7.5 - 0.5 * num(r, "nodes").ln() + 0.05),
                )],
            )
            .doctor(
                "binary search then a pick: log2 K + 1 probes",
                always,
                &[("probes_per_request", Is(11.0))],
            ),
        F::new("mh-x6", "mh.x6-replication", x6_right).doctor(
            "a linear search upward in one run",
            |r, rep| rep == 0 && r.cell == 3,
            &[(
                "messages_per_replication",
                Map(|r, _| 0.5 * num(r, "nodes").ln() + 1.5),
            )],
        ),
    ]
}
