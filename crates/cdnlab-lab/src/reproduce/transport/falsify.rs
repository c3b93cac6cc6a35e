//! The falsifiers of the Transportation Problem claims: for each claim, a model of the runs under which
//! it must pass and plausible wrong models under which it must fail, run through the claim's
//! own function (`crate::reproduce::fixture` holds the machinery; `every_claim_fails_on_its_wrong_models`
//! runs them).

use super::*;
use crate::reproduce::fixture::Falsifier;

pub(in crate::reproduce) fn falsifiers() -> Vec<Falsifier> {
    use crate::reproduce::fixture::{Falsifier as F, To::*, always, normal};
    use cdnlab::rng::Rng;
    use cdnlab::sim::Value;

    type V = Vec<(&'static str, f64)>;
    // Blocking curves: optimal a logistic in rho, nearest above it by a bump peaking at 1.0.
    fn t1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let rho = num(r, "rho");
        // At least the blocking that keeps the carried load rho (1 - B) below 1.
        let opt = (0.3 / (1.0 + (-(rho - 1.1) * 8.0).exp())).max(1.0 - 0.99 / rho);
        let b = match text(r, "policy") {
            "optimal" | "northwest" => normal(rng, opt, 0.003).max(0.0),
            "nearest" => normal(
                rng,
                opt + 0.15 * (-(rho - 1.0).powi(2) / 0.08).exp() + 0.02,
                0.003,
            ),
            // Full sharing: the pooled Erlang loss system (800 slots).
            _ => {
                let e = cdnlab::alloc::erlang::erlang_b(rho * 800.0, 800);
                normal(rng, e, 0.05 * e)
            }
        };
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
        let re = reallocates(r);
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
    // Real networks: a network's properties from its place in the catalogue; the gap in
    // proportion to the mismatch; nearest's blocking the same whatever the links (it uses
    // none), a pseudo-noise of the cell and replication keeping twins equal.
    fn net_index(r: &SummaryRow) -> f64 {
        cdnlab::topology::catalog::NAMES
            .iter()
            .position(|n| *n == text(r, "network"))
            .unwrap_or(0) as f64
    }
    fn net_mismatch(r: &SummaryRow) -> f64 {
        let m = 0.06 + 0.34 * net_index(r) / 55.0;
        if text(r, "capacity") == "degree" {
            0.8 * m
        } else {
            m
        }
    }
    fn net_nodes(r: &SummaryRow) -> f64 {
        10.0 + (net_index(r) * 37.0) % 80.0
    }
    fn net_right(r: &SummaryRow, rep: u64, _: &mut Rng) -> V {
        let (i, rho) = (net_index(r), num(r, "rho"));
        let m = net_mismatch(r);
        let wiggle = ((i as u64 * 31 + rep * 17) % 10) as f64 * 0.0004;
        let opt = 0.03 * rho + wiggle;
        let gap = 0.5 * m * rho + wiggle;
        let links = text(r, "links") == "carried";
        vec![
            ("blocking_optimal", opt + if links { 0.01 } else { 0.0 }),
            ("blocking_nearest", opt + gap),
            ("blocking_sharing", 0.8 * opt),
            ("gap", gap - if links { 0.01 } else { 0.0 }),
            ("max_z", 1.5),
            ("link_blocked", if links { 0.2 } else { 0.0 }),
            ("link_blocked_nearest", 0.0),
            ("nodes", net_nodes(r)),
            ("diameter", 3.0 + (i * 7.0) % 10.0),
            ("mean_degree", 2.0 + ((i * 13.0) % 20.0) / 10.0),
            ("mismatch", m),
            ("has_matrix", if i < 26.0 { 1.0 } else { 0.0 }),
        ]
    }
    fn net_t3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let spans = text(r, "network") != "sndlib/germany50";
        let re = reallocates(r);
        let b = if re && spans { 0.05 } else { 0.10 };
        vec![
            ("blocking", normal(rng, b, 0.002)),
            ("blocking_tail", normal(rng, b, 0.004)),
            ("reallocations", if re { 30.0 } else { 0.0 }),
            ("warm_pivots", if re { 3.0 } else { 0.0 }),
            ("cold_pivots", if re { 20.0 } else { 0.0 }),
        ]
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
    fn policy(r: &SummaryRow) -> &str {
        text(r, "policy")
    }
    fn reallocates(r: &SummaryRow) -> bool {
        r.params["reallocate"] == Value::Bool(true)
    }
    vec![
        F::new("tp-t1", "tp.gap", t1_right).whole(
            "an allocation that ignores the TP (optimal = nearest)",
            |r, rep, rng| {
                let mut v = t1_right(r, rep, rng);
                if policy(r) == "optimal" {
                    let mut n = r.clone();
                    n.params
                        .insert("policy".into(), Value::Text("nearest".into()));
                    v = t1_right(&n, rep, rng);
                }
                v
            },
        ),
        F::new("tp-balance", "tp.cluster-balance", balance_right)
            .doctor(
                "the fraction pick reversed (smallest free fraction)",
                |r, _| text(r, "choice") == "fraction",
                &[("cluster_spread", Is(0.9))],
            )
            .doctor(
                "the pick costs blocking (a server refused early)",
                |r, _| text(r, "choice") == "fraction",
                &[("blocking", Map(|_, x| x + 0.02))],
            ),
        F::new("tp-t1", "tp.hops", t1_right)
            .doctor(
                "S0's streams placed as the NW corner's",
                |r, _| policy(r) == "optimal",
                &[("hops", Is(0.7))],
            )
            .doctor(
                "hops counted to the nearest server",
                |r, _| policy(r) == "optimal",
                &[("hops", Is(0.0))],
            )
            .doctor(
                "a NW corner as near as the optimum",
                |r, _| policy(r) == "northwest",
                &[("hops", Is(0.2))],
            ),
        F::new("tp-t1", "tp.s4-lowest", t1_right)
            .doctor(
                "full sharing blocks more at high load",
                |r, _| policy(r) == "sharing" && num(r, "rho") >= 1.2,
                &[("blocking", Map(|_, x| x + 0.2))],
            )
            .doctor(
                "sharing does not pool: 20% above the pooled Erlang-B everywhere",
                |r, _| policy(r) == "sharing",
                &[("blocking", Map(|_, x| x * 1.2 + 1e-4))],
            ),
        F::new("tp-t1-random", "tp.gap-random", t1_right).whole(
            "no gap on random graphs",
            |r, rep, rng| {
                let mut n = r.clone();
                if policy(r) == "nearest" {
                    n.params
                        .insert("policy".into(), Value::Text("optimal".into()));
                }
                t1_right(&n, rep, rng)
            },
        ),
        F::new("tp-t2", "tp.erlang", t2_right)
            .doctor(
                "blocking 20% above Erlang-B",
                always,
                &[("blocking", Map(|_, x| x * 1.2))],
            )
            .doctor(
                "one population far off Erlang-B in one run (the mix hides it)",
                |r, rep| rep == 1 && r.cell == 3,
                &[("max_z", Is(9.0))],
            ),
        F::new("tp-t3", "tp.reallocation", t3_right)
            .doctor(
                "re-allocation does not help",
                always,
                &[("blocking_tail", Map(|_, x| x.max(0.1)))],
            )
            .doctor(
                "re-allocation removes only half the excess",
                always,
                &[("blocking_tail", Map(|_, x| x.max(0.07)))],
            ),
        F::new("tp-t3", "tp.reallocation-excess", t3_right).doctor(
            "thresholds from the true demand (no excess)",
            |r, _| reallocates(r),
            &[("blocking_tail", Map(|_, x| x - 0.003))],
        ),
        F::new("tp-t4", "tp.multisource", t4_right).whole(
            "striping does not spread load",
            |r, rep, rng| {
                let mut n = r.clone();
                n.params.insert("sources".into(), Value::Int(1));
                t4_right(&n, rep, rng)
            },
        ),
        F::new("tp-slack", "tp.slack", slack_right).doctor(
            "sharing slack raises blocking",
            always,
            &[("blocking", Map(|r, x| x + 0.03 * (1.0 - num(r, "reserve"))))],
        ),
        F::new("tp-net-t1", "tp.net-gap", net_right)
            .doctor(
                "nearest beats the optimal allocation at high load",
                |r, _| num(r, "rho") > 1.1,
                &[("gap", Is(-0.01))],
            )
            .whole(
                "capacity where the demand is: no mismatch, no gap",
                |r, rep, rng| {
                    let mut v = net_right(r, rep, rng);
                    crate::reproduce::fixture::set(&mut v, "mismatch", 0.0);
                    crate::reproduce::fixture::set(&mut v, "gap", 0.0);
                    v
                },
            ),
        F::new("tp-net-t1", "tp.net-gap-predictor", net_right)
            .doctor(
                "the gap follows the size, not the mismatch",
                always,
                &[("gap", Map(|r, _| 0.001 * net_nodes(r)))],
            )
            .doctor(
                "the gap is the same everywhere",
                always,
                &[("gap", Is(0.05))],
            ),
        F::new("tp-net-t1", "tp.net-links", net_right)
            .doctor(
                "nearest's streams cross links",
                |r, rep| text(r, "links") == "carried" && rep == 2,
                &[("link_blocked_nearest", Is(0.1))],
            )
            .doctor("links never bind", always, &[("link_blocked", Is(0.0))]),
        F::new("tp-net-t1", "tp.net-erlang", net_right).doctor(
            "one population far off Erlang-B in one run",
            |r, rep| rep == 1 && r.cell == 5,
            &[("max_z", Is(40.0))],
        ),
        F::new("tp-net-t3", "tp.net-reallocation-zones", net_t3_right)
            .doctor(
                "re-allocation does not help",
                always,
                &[("blocking", Map(|_, x| x.max(0.1)))],
            )
            .doctor(
                "re-allocation helps only on GEANT",
                |r, _| text(r, "network") == "sndlib/abilene",
                &[("blocking", Map(|_, x| x.max(0.1)))],
            ),
        F::new("tp-net-t3", "tp.net-warm", net_t3_right)
            .doctor(
                "warm no faster than cold",
                |r, _| reallocates(r),
                &[("warm_pivots", Same("cold_pivots"))],
            )
            .doctor("never re-allocates", always, &[("reallocations", Is(0.0))]),
        F::new("tp-t5", "tp.solver-exact", t5_right)
            .doctor(
                "one instance off the reference",
                |r, rep| rep == 0 && num(r, "size") == 30.0,
                &[("reference_agrees", Is(0.0))],
            )
            .doctor(
                "one large instance off LEMON",
                |r, rep| rep == 2 && num(r, "size") == 1000.0,
                &[("lemon_agrees", Is(0.0))],
            )
            .doctor(
                "one size LEMON could not check",
                |r, _| num(r, "size") == 1000.0,
                &[("lemon_agrees", Is(f64::NAN))],
            ),
        F::new("tp-t5", "tp.solver-faster", t5_right).doctor(
            "slower than the reference in one run",
            |r, rep| rep == 1 && num(r, "size") == 100.0,
            &[("reference_ratio", Is(1.5))],
        ),
        F::new("tp-t5", "tp.vogel", t5_right).doctor(
            "Vogel ignoring costs (as the north-west corner)",
            always,
            &[("vogel_gap", Is(3.0))],
        ),
        F::new("tp-t5", "tp.solver-warm", t5_right).doctor(
            "warm re-solve no faster than cold",
            always,
            &[("warm_ratio", Is(0.9))],
        ),
    ]
}
