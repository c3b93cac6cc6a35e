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
