//! `solver`: experiment T5, the Transportation Problem solver's time against instance size, cold
//! and warm, beside a reference LP solver (up to `reference_max`); every optimum is also checked
//! against LEMON's network simplex. Instances as in `bench/transport.sh`: dense, random,
//! balanced; the warm re-solve follows a change of a share of the demands.
//!
//! The optimal costs and pivot counts are deterministic; the `*_seconds` metrics (and the
//! ratios of them) are wall-clock measurements and vary from run to run. The runner runs this
//! experiment's cells one at a time ([`Experiment::timed`]) so that they do not compete.

use crate::Error;
use crate::alloc::simplex;
use crate::alloc::{Problem, initial, lemon, lp};
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use rand::RngExt;
use std::time::Instant;

/// The experiment.
pub struct SolverExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("size", 1, 5000, 100, "supplies = demands = size").unit("supplies = demands"),
    ParamSpec::int(
        "max_cost",
        1,
        1 << 31,
        1000,
        "costs uniform in 1..=max_cost",
    ),
    ParamSpec::int(
        "max_q",
        1,
        1 << 20,
        100,
        "supplies and demands uniform in 1..=max_q (demands then scaled to the total supply)",
    ),
    ParamSpec::float(
        "change",
        0.0,
        1.0,
        0.01,
        "share of the demands that each give up to 20 units to another random demand before the warm re-solve (at least one)",
    ),
    ParamSpec::int(
        "reference_max",
        0,
        5000,
        300,
        "solve with the reference LP solver (good_lp + microlp) up to this size (it is dense and slow)",
    ),
    ParamSpec::int(
        "repeats",
        1,
        100,
        3,
        "each time is the best of this many solves",
    ),
    ParamSpec::float(
        "repeat_below",
        0.0,
        1e6,
        1.0,
        "a solve that took at least this many seconds is not repeated (its one time is kept): the best-of rule is against noise of milliseconds",
    )
    .unit("s"),
    ParamSpec::choice(
        "solver",
        &["simplex", "lp", "vogel"],
        "what computes the allocation: the network simplex (TP-R2); lp and vogel are wrong models \
         (the general LP solver, which has no warm start; Vogel's approximation passed off as the \
         optimum), see docs/claims.md, \"Wrong models\"",
    ),
    ParamSpec::choice(
        "vogel_order",
        &["cheapest", "dearest"],
        "the order Vogel's method reads each line's cells in (dearest: a wrong model, a flipped \
         comparator, see docs/claims.md)",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new("cost", "cost units", "optimal cost of the random instance"),
    MetricSpec::new(
        "pivots",
        "pivots",
        "network simplex pivots of the cold solve",
    ),
    MetricSpec::new("cold_seconds", "s", "cold solve time (best of repeats)"),
    MetricSpec::new(
        "warm_pivots",
        "pivots",
        "pivots of the warm re-solve after the demand change",
    ),
    MetricSpec::new("warm_seconds", "s", "warm re-solve time"),
    MetricSpec::new(
        "warm_ratio",
        "ratio",
        "warm re-solve time / cold solve of the changed instance",
    ),
    MetricSpec::new(
        "reference_seconds",
        "s",
        "reference LP solver time (NaN above reference_max)",
    ),
    MetricSpec::new(
        "reference_ratio",
        "ratio",
        "network simplex time / reference LP solver time",
    ),
    MetricSpec::new(
        "reference_agrees",
        "0/1",
        "1 if the reference LP solver found the same optimal cost",
    ),
    MetricSpec::new(
        "lemon_agrees",
        "0/1",
        "1 if LEMON's network simplex (the second, fast reference; every size) found the same optimal cost (NaN if the instance is too large for its 32-bit costs)",
    ),
    MetricSpec::new(
        "vogel_gap",
        "relative cost",
        "Vogel's initial solution above the optimum",
    ),
    MetricSpec::new(
        "northwest_gap",
        "relative cost",
        "the north-west corner's initial solution above the optimum",
    ),
];

/// The fastest of `repeats` runs of `f`, with its result; a run that took `repeat_below`
/// seconds or more ends the repeats (the best-of rule is against timer, cache and scheduler
/// noise of the order of milliseconds, a negligible share of such a run, while repeating the
/// reference LP at size 1000, about a minute a solve, would triple T5's time).
fn best_of<T>(
    repeats: i64,
    repeat_below: f64,
    mut f: impl FnMut() -> Result<T, Error>,
) -> Result<(T, f64), Error> {
    let mut best: Option<(T, f64)> = None;
    for _ in 0..repeats {
        let t = Instant::now();
        let s = f()?;
        let secs = t.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|b| secs < b.1) {
            best = Some((s, secs));
        }
        if secs >= repeat_below {
            break;
        }
    }
    Ok(best.expect("repeats >= 1"))
}

/// The optimal cost, the pivots and the basis of one solve by the `solver` parameter's method
/// (only the network simplex has pivots and a basis to start warm from).
struct Solved {
    cost: i64,
    pivots: f64,
    basis: Option<simplex::Basis>,
}

fn solve_by(solver: &str, p: &Problem, warm: Option<&simplex::Basis>) -> Result<Solved, Error> {
    Ok(match solver {
        "lp" => Solved {
            // Integral data with a totally unimodular matrix: the LP optimum is an integer.
            cost: lp::optimum(p)?.round() as i64,
            pivots: f64::NAN,
            basis: None,
        },
        "vogel" => Solved {
            cost: initial::vogel(p)?.cost,
            pivots: 0.0,
            basis: None,
        },
        _ => {
            let s = match warm {
                Some(b) => simplex::solve_warm(p, b)?,
                None => simplex::solve(p)?,
            };
            Solved {
                cost: s.allocation.cost,
                pivots: s.pivots as f64,
                basis: Some(s.basis),
            }
        }
    })
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    let size = p.int("size") as usize;
    let repeats = p.int("repeats");
    let below = p.float("repeat_below");
    let solver = p.text("solver");
    let first = Problem::random(rng, size, size, 1..=p.int("max_cost"), 1..=p.int("max_q"))?;
    let (cold, cold_seconds) = best_of(repeats, below, || solve_by(solver, &first, None))?;
    // The re-allocation: a share of the demands each give up to 20 units to another.
    let mut second = first.clone();
    let moves = ((p.float("change") * size as f64).round() as usize).max(1);
    for _ in 0..moves {
        let (a, b) = (rng.random_range(0..size), rng.random_range(0..size));
        let x = second.demand[a].min(rng.random_range(1..=20));
        second.demand[a] -= x;
        second.demand[b] += x;
    }
    let (again, again_seconds) = best_of(repeats, below, || solve_by(solver, &second, None))?;
    let (warm, warm_seconds) = best_of(repeats, below, || {
        solve_by(solver, &second, cold.basis.as_ref())
    })?;
    if warm.cost != again.cost {
        return Err(Error::param(
            "warm start",
            warm.cost,
            format!("the cold optimum {}", again.cost),
        ));
    }
    let cost = cold.cost as f64;
    let lemon_agrees = lemon::optimum(&first).map_or(f64::NAN, |c| f64::from(c == cold.cost));
    let (reference_seconds, agrees) = if size as i64 <= p.int("reference_max") {
        // Timed like the network simplex: from the problem to the optimum (building the LP
        // model included, as the simplex builds its tree), best of the same repeats.
        let (lp, secs) = best_of(repeats, below, || lp::optimum(&first))?;
        (
            secs,
            f64::from((lp - cost).abs() <= 1e-6 * cost.abs().max(1.0)),
        )
    } else {
        (f64::NAN, f64::NAN)
    };
    // The stand-alone initial solutions, as relative cost above the true optimum (the network
    // simplex's, whatever `solver` says: these judge the initial solutions, not the solver).
    let optimum = match solver {
        "simplex" => cost,
        _ => simplex::solve(&first)?.allocation.cost as f64,
    };
    let gap = |c: i64| (c as f64 - optimum) / optimum.abs().max(1.0);
    let order = match p.text("vogel_order") {
        "dearest" => initial::Order::Dearest,
        _ => initial::Order::Cheapest,
    };
    let vogel_gap = gap(initial::vogel_in(&first, order)?.cost);
    let northwest_gap = gap(initial::northwest(&first)?.cost);
    Ok(vec![
        cost,
        cold.pivots,
        cold_seconds,
        warm.pivots,
        warm_seconds,
        warm_seconds / again_seconds,
        reference_seconds,
        cold_seconds / reference_seconds,
        agrees,
        lemon_agrees,
        vogel_gap,
        northwest_gap,
    ])
}

crate::sim::experiment! {
    SolverExperiment = "solver",
    "Transportation Problem solver time vs size, cold and warm (after a demand change), against a reference LP solver",
    PARAMS, METRICS, timed; crate::sim::no_check, run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::sim::Experiment;
    use crate::sim::Params;
    use std::collections::BTreeMap;

    /// Best-of repeats every solve while each is shorter than `repeat_below`, and stops at the
    /// first that is not.
    #[test]
    fn long_solves_are_timed_once() {
        let calls = |repeats, below| {
            let mut n = 0;
            best_of(repeats, below, || {
                n += 1;
                Ok(n)
            })
            .unwrap();
            n
        };
        assert_eq!(calls(3, 1e6), 3);
        assert_eq!(calls(3, 0.0), 1);
        assert_eq!(calls(1, 1e6), 1);
    }

    /// The deterministic metrics depend on the seed only and the reference agrees; times are
    /// only checked to be there (they vary from run to run).
    #[test]
    fn costs_agree_with_the_reference_and_repeat() {
        let mut given = BTreeMap::new();
        given.insert("size".to_string(), crate::sim::Value::Int(20));
        let p = Params::resolve(PARAMS, &given).unwrap();
        let a = SolverExperiment.run(&p, &mut stream(5, 0, 0)).unwrap();
        let b = SolverExperiment.run(&p, &mut stream(5, 0, 0)).unwrap();
        let at = |name: &str| METRICS.iter().position(|m| m.name == name).unwrap();
        for m in [
            "cost",
            "pivots",
            "warm_pivots",
            "reference_agrees",
            "lemon_agrees",
            "vogel_gap",
        ] {
            assert_eq!(a[at(m)], b[at(m)], "{m}");
        }
        assert_eq!(a[at("reference_agrees")], 1.0);
        assert_eq!(a[at("lemon_agrees")], 1.0);
        // Feasible allocations cost at least the optimum.
        assert!(a[at("vogel_gap")] >= 0.0 && a[at("northwest_gap")] >= 0.0);
        assert!(a[at("cold_seconds")] > 0.0 && a[at("reference_seconds")] > 0.0);
    }
}
