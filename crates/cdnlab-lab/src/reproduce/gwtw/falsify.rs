//! The falsifiers of the Go-With-The-Winner claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{Model, doctor, falsifier as f, normal, set};
    use cdnlab::rng::Rng;
    use rand::RngExt;

    type V = Vec<(&'static str, f64)>;
    fn bern(rng: &mut Rng, p: f64) -> f64 {
        f64::from(u8::from(rng.random::<f64>() < p))
    }
    fn converged_all() -> V {
        vec![
            ("feasible", 1.0),
            ("converged", 1.0),
            ("satisfied", 1.0),
            ("at_best", 1.0),
            ("mean_value", 1.0),
        ]
    }
    fn e1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        if num(r, "k") >= 2.0 {
            return converged_all();
        }
        let p = analysis::k1_satisfied(users(r), num(r, "servers") as u64, capacity(r));
        let sd = (p * (1.0 - p) / users(r) as f64).sqrt();
        vec![("satisfied", normal(rng, p, sd))]
    }
    fn e2_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let mut v = converged_all();
        set(
            &mut v,
            "convergence_slot",
            normal(rng, 250.0 + 60.0 * num(r, "servers").ln(), 80.0),
        );
        v
    }
    fn e3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let tau = num(r, "tau");
        let mut v = converged_all();
        set(
            &mut v,
            "wrong_settle_rate",
            normal(rng, 0.1 / tau.powf(0.7), 0.004),
        );
        set(
            &mut v,
            "convergence_slot",
            normal(rng, 200.0 + 120.0 * tau.ln(), 60.0),
        );
        v
    }
    fn e3c1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let c = bern(rng, 1.0 - 0.5 / num(r, "tau").sqrt());
        vec![("feasible", 1.0), ("converged", c)]
    }
    fn e4_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let a = num(r, "alpha");
        let mut v = vec![("warmup_slot", normal(rng, 70.0 - 20.0 * a, 5.0))];
        if num(r, "k") == 2.0 {
            set(
                &mut v,
                "convergence_slot",
                normal(rng, 700.0 - 250.0 * a, 80.0),
            );
        }
        v
    }
    fn threshold(k: f64, c: u64) -> f64 {
        match (k as u32, c) {
            (2, 1) => 0.5,
            (3, 1) => 0.918,
            (2, 2) => 0.897,
            (3, 2) => 0.98,
            (2, 3) => 0.959,
            _ => 0.99,
        }
    }
    fn e5_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (c, k, load) = (capacity(r), num(r, "k"), num(r, "load"));
        let feasible = f64::from(u8::from(load / (c as f64) < threshold(k, c)));
        let converged = if c == 2 && k == 3.0 && load >= 1.6 {
            0.0
        } else if c == 1 && k == 2.0 {
            feasible * bern(rng, 0.8)
        } else {
            feasible
        };
        vec![("feasible", feasible), ("converged", converged)]
    }
    fn e6_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let b = partial_bound(r);
        let s = normal(rng, b - 0.01, 0.005).min(1.0);
        vec![("satisfied", s), ("at_best", (s - 0.005).min(1.0))]
    }
    fn e6_low_at_best(r: &SummaryRow, rep: u64, rng: &mut Rng) -> V {
        let mut v = e6_right(r, rep, rng);
        set(&mut v, "at_best", normal(rng, 0.85, 0.01));
        v
    }
    fn orient_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let x = num(r, "relative");
        let p = if text(r, "regime") == "k2-c1" {
            1.0 / (1.0 + ((x - 1.03) * 40.0).exp())
        } else {
            f64::from(u8::from(x < 1.0))
        };
        vec![("feasible", bern(rng, p))]
    }
    fn e9_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let feasible = bern(rng, 0.9);
        let converged = match rule(r) {
            Some("paper") => feasible * bern(rng, 0.7),
            _ => feasible,
        };
        let slot = match rule(r) {
            Some("e9") => 200.0 + 30.0 * num(r, "servers").ln(),
            _ => 250.0 + 50.0 * num(r, "servers").ln(),
        };
        vec![
            ("feasible", feasible),
            ("converged", converged),
            ("convergence_slot", normal(rng, slot, 60.0)),
        ]
    }
    fn e7_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let p = analysis::k1_max_at_most(users(r), num(r, "servers") as u64, capacity(r));
        vec![
            (
                "worst_value",
                normal(rng, 0.9 - 0.06 * num(r, "servers").ln(), 0.05),
            ),
            ("converged", bern(rng, p)),
        ]
    }
    thread_local! {
        static EMAX: std::cell::RefCell<std::collections::HashMap<(u64, u64), f64>> =
            Default::default();
    }
    fn maxload_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (m, n) = (users(r), num(r, "servers") as u64);
        let p = analysis::k1_satisfied(m, n, capacity(r));
        let e = EMAX.with(|c| {
            *c.borrow_mut()
                .entry((m, n))
                .or_insert_with(|| analysis::k1_expected_max(m, n))
        });
        vec![
            ("max_load", normal(rng, e, 0.7)),
            (
                "satisfied",
                normal(rng, p, (p * (1.0 - p) / m as f64).sqrt()),
            ),
        ]
    }
    fn all_converge(_: &SummaryRow, _: u64, _: &mut Rng) -> V {
        converged_all()
    }
    // Replication 3 of k = 3 (or of the largest n's k = 2 cell) does not converge.
    fn one_run_fails(r: &SummaryRow, rep: u64, rng: &mut Rng, right: Model) -> V {
        let mut v = right(r, rep, rng);
        if rep == 3 && num(r, "k") == 3.0 {
            set(&mut v, "converged", 0.0);
            set(&mut v, "satisfied", 0.99);
            set(&mut v, "mean_value", 0.98);
        }
        v
    }
    vec![
        f(
            "gwtw-e1",
            "gwtw.C1-time",
            e1_right,
            vec![
                ("k = 2 never re-trials (one run stuck)", |r, rep, rng| {
                    one_run_fails(r, rep, rng, e1_right)
                }),
                ("k = 1 users move too", |r, rep, rng| {
                    let mut v = e1_right(r, rep, rng);
                    if num(r, "k") == 1.0 {
                        v = converged_all();
                    }
                    v
                }),
            ],
        ),
        f(
            "gwtw-e2",
            "gwtw.C1",
            e2_right,
            vec![("one run of k = 2 or 3 does not converge", |r, rep, rng| {
                one_run_fails(r, rep, rng, e2_right)
            })],
        ),
        f(
            "gwtw-e2",
            "gwtw.C1-quick",
            e2_right,
            vec![
                ("time linear in n", |r, rep, rng| {
                    let mut v = e2_right(r, rep, rng);
                    set(
                        &mut v,
                        "convergence_slot",
                        normal(rng, 300.0 + 0.3 * num(r, "servers"), 80.0),
                    );
                    v
                }),
                ("time as sqrt n", |r, rep, rng| {
                    let mut v = e2_right(r, rep, rng);
                    set(
                        &mut v,
                        "convergence_slot",
                        normal(rng, 40.0 * num(r, "servers").sqrt(), 80.0),
                    );
                    v
                }),
            ],
        ),
        f(
            "gwtw-e3",
            "gwtw.C3",
            e3_right,
            vec![
                ("wrong settles do not depend on tau", |r, rep, rng| {
                    doctor(e3_right, r, rep, rng, "wrong_settle_rate", |_, rng| {
                        normal(rng, 0.02, 0.004)
                    })
                }),
                (
                    "wrong settles rise again at the middle tau",
                    |r, rep, rng| {
                        let mut v = e3_right(r, rep, rng);
                        if r.cell == 2 {
                            set(&mut v, "wrong_settle_rate", normal(rng, 0.08, 0.004));
                        }
                        v
                    },
                ),
            ],
        ),
        f(
            "gwtw-e3",
            "gwtw.C3-slower",
            e3_right,
            vec![("convergence does not depend on tau", |r, rep, rng| {
                doctor(e3_right, r, rep, rng, "convergence_slot", |_, rng| {
                    normal(rng, 500.0, 60.0)
                })
            })],
        ),
        f(
            "gwtw-e3-c1",
            "gwtw.C3-failure",
            e3c1_right,
            vec![("failures do not depend on tau", |_, _, rng| {
                vec![("feasible", 1.0), ("converged", bern(rng, 0.85))]
            })],
        ),
        f(
            "gwtw-e4",
            "gwtw.C4",
            e4_right,
            vec![("warm-up does not depend on alpha", |r, rep, rng| {
                doctor(e4_right, r, rep, rng, "warmup_slot", |_, rng| {
                    normal(rng, 55.0, 5.0)
                })
            })],
        ),
        f(
            "gwtw-e4",
            "gwtw.C4-control",
            e4_right,
            vec![(
                "k = 1 warm-up flat (selection causes the trend)",
                |r, rep, rng| {
                    let mut v = e4_right(r, rep, rng);
                    if num(r, "k") == 1.0 {
                        set(&mut v, "warmup_slot", normal(rng, 55.0, 5.0));
                    }
                    v
                },
            )],
        ),
        f(
            "gwtw-e4",
            "gwtw.C4-strict",
            e4_right,
            vec![(
                "strict convergence slows with alpha (this model)",
                |r, rep, rng| {
                    let mut v = e4_right(r, rep, rng);
                    set(
                        &mut v,
                        "convergence_slot",
                        normal(rng, 200.0 + 450.0 * num(r, "alpha"), 80.0),
                    );
                    v
                },
            )],
        ),
        f(
            "gwtw-e5",
            "gwtw.F2-livelock",
            e5_right,
            vec![("every feasible run converges", |r, rep, rng| {
                let mut v = e5_right(r, rep, rng);
                if capacity(r) == 1 {
                    let feasible = v[0].1;
                    set(&mut v, "converged", feasible);
                }
                v
            })],
        ),
        f(
            "gwtw-e5",
            "gwtw.E5-collapse",
            e5_right,
            vec![
                ("k = 3 converges at lambda / c = 0.9", |r, rep, rng| {
                    let mut v = e5_right(r, rep, rng);
                    if capacity(r) == 2 && num(r, "k") == 3.0 {
                        set(&mut v, "converged", 1.0);
                    }
                    v
                }),
                ("no optimum in one run", |r, rep, rng| {
                    let mut v = e5_right(r, rep, rng);
                    if rep == 1 && capacity(r) == 2 && num(r, "k") == 3.0 && num(r, "load") == 1.8 {
                        set(&mut v, "feasible", 0.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "gwtw-orient",
            "gwtw.orient",
            orient_right,
            vec![
                ("thresholds 4% lower than the spec's", |r, rep, rng| {
                    let mut v = orient_right(r, rep, rng);
                    if text(r, "regime") != "k2-c1" {
                        set(
                            &mut v,
                            "feasible",
                            f64::from(u8::from(num(r, "relative") < 0.92)),
                        );
                    }
                    v
                }),
                ("k = 3, c = 1 always has an optimum", |r, rep, rng| {
                    let mut v = orient_right(r, rep, rng);
                    if text(r, "regime") == "k3-c1" {
                        set(&mut v, "feasible", 1.0);
                    }
                    v
                }),
                ("k = 2, c = 1 without a transition", |r, rep, rng| {
                    let mut v = orient_right(r, rep, rng);
                    if text(r, "regime") == "k2-c1" {
                        set(&mut v, "feasible", bern(rng, 0.6));
                    }
                    v
                }),
            ],
        ),
        f(
            "gwtw-e6",
            "gwtw.C5",
            e6_right,
            vec![("85% at hit rate 1", e6_low_at_best)],
        ),
        f(
            "gwtw-e6",
            "gwtw.C5-c1",
            e6_right,
            vec![("85% at hit rate 1", e6_low_at_best)],
        ),
        f(
            "gwtw-e6",
            "gwtw.E6-sweep",
            e6_right,
            vec![
                ("k = 1 users escape (above the bound)", |r, rep, rng| {
                    let mut v = e6_right(r, rep, rng);
                    let s = (partial_bound(r) + 0.04).min(1.0);
                    set(&mut v, "satisfied", normal(rng, s, 0.003).min(1.0));
                    v
                }),
                ("GWTW users gain nothing (flat in p)", |r, rep, rng| {
                    doctor(e6_right, r, rep, rng, "satisfied", |_, rng| {
                        normal(rng, 0.4, 0.01)
                    })
                }),
            ],
        ),
        f(
            "gwtw-e7",
            "gwtw.C2",
            e7_right,
            vec![("worst hit rate flat in n", |r, rep, rng| {
                let mut v = e7_right(r, rep, rng);
                if text(r, "model") == "web" {
                    set(&mut v, "worst_value", normal(rng, 0.6, 0.05));
                }
                v
            })],
        ),
        f(
            "gwtw-e7",
            "gwtw.C2-video",
            e7_right,
            vec![("worst bit rate flat in n", |r, rep, rng| {
                let mut v = e7_right(r, rep, rng);
                if text(r, "model") == "video" {
                    set(&mut v, "worst_value", normal(rng, 0.6, 0.05));
                }
                v
            })],
        ),
        f(
            "gwtw-e7",
            "gwtw.C2-failure",
            e7_right,
            vec![("k = 1 converges half the time", |r, rep, rng| {
                doctor(e7_right, r, rep, rng, "converged", |_, rng| bern(rng, 0.5))
            })],
        ),
        f(
            "gwtw-maxload",
            "gwtw.k1-balls",
            maxload_right,
            vec![
                ("two choices (max load ln ln n / ln 2)", |r, rep, rng| {
                    let mut v = maxload_right(r, rep, rng);
                    set(
                        &mut v,
                        "max_load",
                        normal(rng, num(r, "servers").ln().ln() / 2f64.ln() + 1.0, 0.5),
                    );
                    v
                }),
                ("one more user on the busiest server", |r, rep, rng| {
                    let mut v = maxload_right(r, rep, rng);
                    let x = v[0].1;
                    set(&mut v, "max_load", x + 1.0);
                    v
                }),
            ],
        ),
        f(
            "gwtw-e8",
            "gwtw.C1-video",
            all_converge,
            vec![("one run of k >= 2 does not converge", |r, rep, rng| {
                one_run_fails(r, rep, rng, all_converge)
            })],
        ),
        f(
            "gwtw-e9-livelock",
            "gwtw.E9",
            e9_right,
            vec![
                ("E9 livelocks too", |r, rep, rng| {
                    let mut v = e9_right(r, rep, rng);
                    if rule(r) == Some("e9") && rep == 2 {
                        set(&mut v, "feasible", 1.0);
                        set(&mut v, "converged", 0.0);
                    }
                    v
                }),
                (
                    "no livelock to end (the paper's rule converges)",
                    |r, rep, rng| {
                        let mut v = e9_right(r, rep, rng);
                        let f = v[0].1;
                        set(&mut v, "converged", f);
                        v
                    },
                ),
            ],
        ),
        f(
            "gwtw-e9-main",
            "gwtw.E9-main",
            e9_right,
            vec![
                ("E9 twice as slow", |r, rep, rng| {
                    let mut v = e9_right(r, rep, rng);
                    if rule(r) == Some("e9") {
                        set(&mut v, "convergence_slot", normal(rng, 1200.0, 60.0));
                    }
                    v
                }),
                ("one E9 run not converged", |r, rep, rng| {
                    let mut v = e9_right(r, rep, rng);
                    if rule(r) == Some("e9") && rep == 4 {
                        set(&mut v, "feasible", 1.0);
                        set(&mut v, "converged", 0.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "gwtw-baselines",
            "gwtw.B1",
            all_converge,
            vec![(
                "one GWTW run per web cell short of the oracle",
                |r, rep, rng| {
                    let mut v = all_converge(r, rep, rng);
                    if rep == 2 && text(r, "policy") == "gwtw" && text(r, "model") == "web" {
                        set(&mut v, "mean_value", 0.97);
                    }
                    v
                },
            )],
        ),
    ]
}
