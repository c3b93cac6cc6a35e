//! The falsifiers of the multi-hash DHT claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{falsifier as f, normal, set, tweak};
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
        let gain = 2.0 + 10.0 * num(r, "alpha");
        match text(r, "policy") {
            "multihash" => vec![("max_mean", normal(rng, 1.5, 0.05))],
            _ => vec![("max_mean", normal(rng, 1.5 * gain, 0.3))],
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
        let at = |t: f64| match text(r, "growth") {
            "one" => (t + 1.0).min(target),
            _ if t <= start => base,
            _ => target,
        };
        let top = if h <= end {
            at(h)
        } else {
            (at(end) - (h - end)).max(base)
        };
        let load = if text(r, "growth") == "one" && h > start && h <= end {
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
    vec![
        f(
            "mh-x1",
            "mh.rbs-uniform",
            x1_right,
            vec![("RBS favours the lowest index in one run", |r, rep, rng| {
                let mut v = x1_right(r, rep, rng);
                if rep == 1 && r.cell == 3 {
                    set(&mut v, "fits", 0.0);
                    set(&mut v, "chi2", 90.0);
                }
                v
            })],
        ),
        f(
            "mh-x1",
            "mh.rbs-probes",
            x1_right,
            vec![("an extra probe 5% of the time", |r, rep, rng| {
                tweak(r, rep, rng, x1_right, "probes_mean", |_, x| x + 0.05)
            })],
        ),
        f(
            "mh-x1",
            "mh.rbs-variance",
            x1_right,
            vec![("variance 3% high", |r, rep, rng| {
                tweak(r, rep, rng, x1_right, "probes_var", |_, x| x * 1.03)
            })],
        ),
        f(
            "mh-gaps",
            "mh.gap-single",
            gaps_right,
            vec![
                ("failure 1.3 / n at g = 1", |r, rep, rng| {
                    tweak(r, rep, rng, gaps_right, "fail_rate", |r, x| {
                        if num(r, "gap") == 1.0 {
                            x + 0.3 / num(r, "n")
                        } else {
                            x
                        }
                    })
                }),
                ("served index skewed in one run", |r, rep, rng| {
                    let mut v = gaps_right(r, rep, rng);
                    if rep == 0 && r.cell == 5 {
                        set(&mut v, "fits", 0.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "mh-gaps",
            "mh.rgr-rounds",
            gaps_right,
            vec![("rounds n / (n - g) (probing [1, i])", |r, rep, rng| {
                tweak(r, rep, rng, gaps_right, "rgr_rounds", |r, x| {
                    let (n, g) = (num(r, "n"), num(r, "gap"));
                    x - (n - 1.0) / (n - g) + n / (n - g)
                })
            })],
        ),
        f(
            "mh-multigap",
            "mh.gap-multi",
            |_, _, _| vec![("fits", 1.0)],
            vec![("one run off the recursion", |r, rep, _| {
                vec![("fits", if rep == 2 && r.cell == 7 { 0.0 } else { 1.0 })]
            })],
        ),
        f(
            "mh-x3",
            "mh.balance-gain",
            x3_right,
            vec![
                ("replication does not balance", |r, rep, rng| {
                    tweak(r, rep, rng, x3_right, "max_mean", |r, x| {
                        if text(r, "policy") == "multihash" {
                            x * (2.0 + 10.0 * num(r, "alpha"))
                        } else {
                            x
                        }
                    })
                }),
                ("the gain does not grow with alpha", |r, rep, rng| {
                    tweak(r, rep, rng, x3_right, "max_mean", |r, x| {
                        if text(r, "policy") == "multihash" {
                            x
                        } else {
                            x / (2.0 + 10.0 * num(r, "alpha")) * 5.0
                        }
                    })
                }),
            ],
        ),
        f(
            "mh-steady",
            "mh.steady-replicas",
            steady_right,
            vec![
                ("single-hash (one replica each)", |_, _, _| {
                    vec![("hot_in_band", 0.0), ("in_band", 0.97)]
                }),
                (
                    "hot files overshoot at the long window too",
                    |r, rep, rng| tweak(r, rep, rng, steady_right, "hot_in_band", |_, _| 0.7),
                ),
            ],
        ),
        f(
            "mh-steady",
            "mh.steady-noise",
            steady_right,
            vec![("no overshoot with the short window", |_, _, _| {
                vec![("hot_in_band", 1.0), ("in_band", 1.0)]
            })],
        ),
        f(
            "mh-x4",
            "mh.flash-growth",
            x4_right,
            vec![
                (
                    "double and jump add one replica per window",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") != "one" {
                            let (h, start) = (num(r, "horizon"), num(r, "flash_start"));
                            let base = (flash_target(r) / num(r, "flash")).ceil();
                            if h > start {
                                set(
                                    &mut v,
                                    "top_replicas",
                                    (base + (h - start)).min(flash_target(r)),
                                );
                            }
                        }
                        v
                    },
                ),
                (
                    "doubling goes on doubling on noise (4x the target in one run)",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") == "double" && rep == 1 && num(r, "horizon") == 20.0 {
                            set(&mut v, "top_replicas", 4.0 * flash_target(r));
                        }
                        v
                    },
                ),
                (
                    "jump takes the largest estimate twice over (2x the target in one run)",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") == "jump" && rep == 0 && num(r, "horizon") == 15.0 {
                            set(&mut v, "top_replicas", 2.0 * flash_target(r));
                        }
                        v
                    },
                ),
            ],
        ),
        f(
            "mh-x4",
            "mh.flash-load",
            x4_right,
            vec![
                (
                    "jump replicates too little (load twice c_high)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, x4_right, "top_replica_load", |r, x| {
                            if text(r, "growth") == "jump" { 1.0 } else { x }
                        })
                    },
                ),
                ("one keeps up", |r, rep, rng| {
                    tweak(r, rep, rng, x4_right, "top_replica_load", |_, _| 0.45)
                }),
            ],
        ),
        f(
            "mh-x4",
            "mh.invariants",
            x4_right,
            vec![
                ("de-replication removes a middle replica", |r, rep, rng| {
                    let mut v = x4_right(r, rep, rng);
                    if rep == 1 && num(r, "horizon") == 40.0 && text(r, "growth") == "jump" {
                        set(&mut v, "prefix_breaks", 3.0);
                    }
                    v
                }),
                ("the home copy removed", |r, rep, rng| {
                    let mut v = x4_right(r, rep, rng);
                    if rep == 0 && num(r, "horizon") == 60.0 && text(r, "growth") == "one" {
                        set(&mut v, "home_missing", 1.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "mh-x4",
            "mh.flash-shrink",
            x4_right,
            vec![("no de-replication", |r, rep, rng| {
                let mut v = x4_right(r, rep, rng);
                if num(r, "horizon") > num(r, "flash_end") && text(r, "growth") != "one" {
                    set(&mut v, "top_replicas", flash_target(r));
                }
                v
            })],
        ),
        f(
            "mh-x5",
            "mh.failure-recursion",
            x5_right,
            vec![("failures 50% above the recursion", |r, rep, rng| {
                tweak(r, rep, rng, x5_right, "failure_rate_after", |_, x| x * 1.5)
            })],
        ),
        f(
            "mh-x5",
            "mh.gap-skew",
            x5_right,
            vec![
                ("requests uniform over surviving replicas", |r, rep, rng| {
                    tweak(r, rep, rng, x5_right, "below_gap_served", |_, _| 6400.0)
                }),
                ("gaps shift more load than the recursion", |r, rep, rng| {
                    tweak(r, rep, rng, x5_right, "below_gap_served", |_, x| x * 1.05)
                }),
            ],
        ),
        f(
            "mh-x5",
            "mh.repair",
            x5_right,
            vec![("one rgr run never repaired", |r, rep, rng| {
                let mut v = x5_right(r, rep, rng);
                if rep == 1 && text(r, "repair") == "rgr" && num(r, "fail_fraction") == 0.4 {
                    set(
                        &mut v,
                        "repair_rounds",
                        num(r, "horizon") - num(r, "fail_at"),
                    );
                }
                v
            })],
        ),
        f(
            "mh-x6",
            "mh.chord-hops",
            x6_right,
            vec![("log2 N hops", |r, rep, rng| {
                tweak(r, rep, rng, x6_right, "chord_hops", |r, _| {
                    num(r, "nodes").log2()
                })
            })],
        ),
        f(
            "mh-x6",
            "mh.x6-probes",
            x6_right,
            vec![
                (
                    "an extra probe in 5% of one run's requests",
                    |r, rep, rng| {
                        let mut v = x6_right(r, rep, rng);
                        if rep == 1 && r.cell == 2 {
                            set(
                                &mut v,
                                "probes_per_request",
                                7.5 - 0.5 * num(r, "nodes").ln() + 0.05,
                            );
                        }
                        v
                    },
                ),
                (
                    "binary search then a pick: log2 K + 1 probes",
                    |r, rep, rng| tweak(r, rep, rng, x6_right, "probes_per_request", |_, _| 11.0),
                ),
            ],
        ),
        f(
            "mh-x6",
            "mh.x6-replication",
            x6_right,
            vec![("a linear search upward in one run", |r, rep, rng| {
                let mut v = x6_right(r, rep, rng);
                if rep == 0 && r.cell == 3 {
                    set(
                        &mut v,
                        "messages_per_replication",
                        0.5 * num(r, "nodes").ln() + 1.5,
                    );
                }
                v
            })],
        ),
        f(
            "mh-x6",
            "mh.x6-repair",
            x6_right,
            vec![("each replica probes every index below it", |r, rep, rng| {
                tweak(
                    r,
                    rep,
                    rng,
                    x6_right,
                    "repair_messages_per_round",
                    |_, x| 3.0 * x,
                )
            })],
        ),
        f(
            "mh-x6",
            "mh.create-once",
            x6_right,
            vec![
                (
                    "no arbiter: a concurrent attempt makes a second copy",
                    |r, rep, rng| {
                        let mut v = x6_right(r, rep, rng);
                        if rep == 2 && r.cell == 0 {
                            set(&mut v, "duplicate_replicas", 1.0);
                        }
                        v
                    },
                ),
                ("no concurrent attempts exercised", |r, rep, rng| {
                    tweak(r, rep, rng, x6_right, "create_refused", |_, _| 0.0)
                }),
            ],
        ),
    ]
}
