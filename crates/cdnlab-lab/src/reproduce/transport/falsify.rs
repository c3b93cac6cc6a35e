//! The falsifiers of the Transportation Problem claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{falsifier as f, normal, set, tweak};
    use cdnlab::rng::Rng;

    type V = Vec<(&'static str, f64)>;
    // Blocking curves: optimal a logistic in rho, nearest above it by a bump peaking at 1.0.
    fn t1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let rho = num(r, "rho");
        // At least the blocking that keeps the carried load rho (1 - B) below 1.
        let opt = (0.3 / (1.0 + (-(rho - 1.1) * 8.0).exp())).max(1.0 - 0.99 / rho);
        let b = match text(r, "policy") {
            "optimal" | "northwest" => opt,
            "nearest" => opt + 0.15 * (-(rho - 1.0).powi(2) / 0.08).exp() + 0.02,
            _ => opt * 0.8,
        };
        let b = normal(rng, b, 0.003).max(0.0);
        let u = num(r, "rho") * (1.0 - b);
        let (a, hops) = match text(r, "policy") {
            "optimal" => (0.24, normal(rng, 0.95 * 0.24 / u.max(0.24), 0.001)),
            "northwest" => (0.7, normal(rng, 0.7, 0.001)),
            _ => (0.0, 0.1),
        };
        vec![
            ("blocking", b),
            ("hops", hops),
            ("alloc_hops", a),
            ("alloc_dmax", if a > 0.0 { 3.0 } else { 0.0 }),
        ]
    }
    fn t2_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let e = 0.02 * num(r, "rho");
        vec![
            ("blocking", normal(rng, e, 0.001)),
            ("erlang", e),
            ("max_z", 1.5),
        ]
    }
    fn t3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let re = r.params["reallocate"] == cdnlab::sim::Value::Bool(true);
        let target = 0.026;
        let b = if re { target + 0.003 } else { 0.12 };
        vec![
            ("blocking_tail", normal(rng, b, 0.004)),
            ("erlang_end", target),
            ("reallocations", 30.0),
        ]
    }
    fn t4_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let (x, k) = (num(r, "cross"), num(r, "sources"));
        let util = x + 0.3 / k;
        let loss = ((util - 0.8) * 0.3).max(0.0);
        vec![
            ("loss", loss),
            ("latency", 10.0 + 1.0 / (1.0 - util.min(0.99))),
        ]
    }
    fn slack_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let b = 0.05 * num(r, "rho") * (0.7 + 0.3 * num(r, "reserve"));
        vec![("blocking", normal(rng, b, 0.001))]
    }
    fn balance_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let rho = num(r, "rho");
        let spread = match text(r, "choice") {
            "fraction" => 0.06 - 0.02 * (rho - 0.5),
            "residual" => 0.6 / (1.0 + (4.0 * (rho - 0.9)).exp()) + 0.06,
            _ => 0.8 / (1.0 + (4.0 * (rho - 0.9)).exp()) + 0.03,
        };
        vec![
            ("cluster_spread", normal(rng, spread, 0.001)),
            ("blocking", normal(rng, 0.02 * rho, 0.002)),
        ]
    }
    fn t5_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let size = num(r, "size");
        let checked = if size <= 300.0 { 1.0 } else { f64::NAN };
        vec![
            ("reference_agrees", checked),
            ("reference_ratio", 0.03 * checked),
            ("lemon_agrees", 1.0),
            ("warm_ratio", 0.5 / size.sqrt()),
            ("vogel_gap", 0.05),
            ("northwest_gap", 3.0),
        ]
    }
    vec![
        f(
            "tp-t1",
            "tp.gap",
            t1_right,
            vec![(
                "an allocation that ignores the TP (optimal = nearest)",
                |r, rep, rng| {
                    let mut v = t1_right(r, rep, rng);
                    if text(r, "policy") == "optimal" {
                        let mut n = r.clone();
                        n.params
                            .insert("policy".into(), cdnlab::sim::Value::Text("nearest".into()));
                        v = t1_right(&n, rep, rng);
                    }
                    v
                },
            )],
        ),
        f(
            "tp-balance",
            "tp.cluster-balance",
            balance_right,
            vec![
                (
                    "the fraction pick reversed (smallest free fraction)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, balance_right, "cluster_spread", |r, x| {
                            if text(r, "choice") == "fraction" {
                                0.9
                            } else {
                                x
                            }
                        })
                    },
                ),
                (
                    "the pick costs blocking (a server refused early)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, balance_right, "blocking", |r, x| {
                            if text(r, "choice") == "fraction" {
                                x + 0.02
                            } else {
                                x
                            }
                        })
                    },
                ),
            ],
        ),
        f(
            "tp-t1",
            "tp.hops",
            t1_right,
            vec![
                ("S0's streams placed as the NW corner's", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "optimal" {
                            0.7
                        } else {
                            x
                        }
                    })
                }),
                ("hops counted to the nearest server", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "optimal" {
                            0.0
                        } else {
                            x
                        }
                    })
                }),
                ("a NW corner as near as the optimum", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "northwest" {
                            0.2
                        } else {
                            x
                        }
                    })
                }),
            ],
        ),
        f(
            "tp-t1",
            "tp.s4-lowest",
            t1_right,
            vec![("full sharing blocks more at high load", |r, rep, rng| {
                tweak(r, rep, rng, t1_right, "blocking", |r, x| {
                    if text(r, "policy") == "sharing" && num(r, "rho") >= 1.2 {
                        x + 0.2
                    } else {
                        x
                    }
                })
            })],
        ),
        f(
            "tp-t1-random",
            "tp.gap-random",
            t1_right,
            vec![("no gap on random graphs", |r, rep, rng| {
                let mut n = r.clone();
                if text(r, "policy") == "nearest" {
                    n.params
                        .insert("policy".into(), cdnlab::sim::Value::Text("optimal".into()));
                }
                t1_right(&n, rep, rng)
            })],
        ),
        f(
            "tp-t2",
            "tp.erlang",
            t2_right,
            vec![("blocking 20% above Erlang-B", |r, rep, rng| {
                tweak(r, rep, rng, t2_right, "blocking", |_, x| x * 1.2)
            })],
        ),
        f(
            "tp-t3",
            "tp.reallocation",
            t3_right,
            vec![
                ("re-allocation does not help", |r, rep, rng| {
                    tweak(r, rep, rng, t3_right, "blocking_tail", |_, x| x.max(0.1))
                }),
                (
                    "re-allocation removes only half the excess",
                    |r, rep, rng| tweak(r, rep, rng, t3_right, "blocking_tail", |_, x| x.max(0.07)),
                ),
            ],
        ),
        f(
            "tp-t3",
            "tp.reallocation-excess",
            t3_right,
            vec![(
                "thresholds from the true demand (no excess)",
                |r, rep, rng| {
                    tweak(r, rep, rng, t3_right, "blocking_tail", |r, x| {
                        if r.params["reallocate"] == cdnlab::sim::Value::Bool(true) {
                            x - 0.003
                        } else {
                            x
                        }
                    })
                },
            )],
        ),
        f(
            "tp-t4",
            "tp.multisource",
            t4_right,
            vec![("striping does not spread load", |r, rep, rng| {
                let mut n = r.clone();
                n.params
                    .insert("sources".into(), cdnlab::sim::Value::Int(1));
                t4_right(&n, rep, rng)
            })],
        ),
        f(
            "tp-slack",
            "tp.slack",
            slack_right,
            vec![("sharing slack raises blocking", |r, rep, rng| {
                tweak(r, rep, rng, slack_right, "blocking", |r, x| {
                    x + 0.03 * (1.0 - num(r, "reserve"))
                })
            })],
        ),
        f(
            "tp-t5",
            "tp.solver-exact",
            t5_right,
            vec![
                ("one instance off the reference", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if rep == 0 && num(r, "size") == 30.0 {
                        set(&mut v, "reference_agrees", 0.0);
                    }
                    v
                }),
                ("one large instance off LEMON", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if rep == 2 && num(r, "size") == 1000.0 {
                        set(&mut v, "lemon_agrees", 0.0);
                    }
                    v
                }),
                ("one size LEMON could not check", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if num(r, "size") == 1000.0 {
                        set(&mut v, "lemon_agrees", f64::NAN);
                    }
                    v
                }),
            ],
        ),
        f(
            "tp-t5",
            "tp.solver-faster",
            t5_right,
            vec![("slower than the reference in one run", |r, rep, rng| {
                let mut v = t5_right(r, rep, rng);
                if rep == 1 && num(r, "size") == 100.0 {
                    set(&mut v, "reference_ratio", 1.5);
                }
                v
            })],
        ),
        f(
            "tp-t5",
            "tp.vogel",
            t5_right,
            vec![(
                "Vogel ignoring costs (as the north-west corner)",
                |r, rep, rng| tweak(r, rep, rng, t5_right, "vogel_gap", |_, _| 3.0),
            )],
        ),
        f(
            "tp-t5",
            "tp.solver-warm",
            t5_right,
            vec![("warm re-solve no faster than cold", |r, rep, rng| {
                tweak(r, rep, rng, t5_right, "warm_ratio", |_, _| 0.9)
            })],
        ),
    ]
}
