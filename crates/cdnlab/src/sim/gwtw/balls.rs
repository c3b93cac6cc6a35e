//! `gwtw-balls`: the balls-into-bins process behind GWTW's analysis (spec C6, "the power of two
//! choices"). m = load x n users arrive one at a time; each draws d servers uniformly (with
//! replacement, as the analysis does) and joins the least loaded of them (ties: the first
//! drawn). No requests are simulated, so n = 10^5 takes milliseconds. The reproduction compares
//! the shares of servers holding at least i users with the process's fluid limit
//! ([`crate::select::analysis::d_choice_shares`]).
//!
//! Rules: GWTW-R1 (k candidates per user) and GWTW-R8 (loads against capacity) of
//! docs/spec/gwtw.md, in the analysis's sequential form.

use crate::Error;
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use rand::RngExt;

/// The experiment.
pub struct BallsExperiment;

/// Levels whose shares are reported: at least 1, 2, 3 and 4 users on a server.
pub const LEVELS: usize = 4;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("servers", 1, 10_000_000, 10_000, "number of servers n").unit("servers"),
    ParamSpec::float("load", 0.0, 100.0, 1.0, "users per server, m / n").unit("users per server"),
    ParamSpec::int(
        "choices",
        1,
        16,
        2,
        "servers d each user draws (1: one random server)",
    ),
    ParamSpec::choice(
        "pick",
        &["least-loaded", "first"],
        "which drawn server a user joins: the least loaded (the power of d choices); first is a \
         wrong model that draws d but never compares (docs/claims.md, \"Wrong models\")",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new("max_load", "users", "users on the busiest server"),
    MetricSpec::new(
        "share_ge1",
        "fraction of servers",
        "share of servers with at least 1 user",
    ),
    MetricSpec::new(
        "share_ge2",
        "fraction of servers",
        "share of servers with at least 2 users",
    ),
    MetricSpec::new(
        "share_ge3",
        "fraction of servers",
        "share of servers with at least 3 users",
    ),
    MetricSpec::new(
        "share_ge4",
        "fraction of servers",
        "share of servers with at least 4 users",
    ),
];

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    let n = p.int("servers") as usize;
    let m = (p.float("load") * n as f64).round() as u64;
    let d = p.int("choices") as usize;
    let compare = p.text("pick") == "least-loaded";
    let mut load = vec![0u32; n];
    for _ in 0..m {
        let mut best = rng.random_range(0..n);
        for _ in 1..d {
            let s = rng.random_range(0..n);
            if compare && load[s] < load[best] {
                best = s;
            }
        }
        load[best] += 1;
    }
    let mut at_least = [0u64; LEVELS];
    for &l in &load {
        for (i, count) in at_least.iter_mut().enumerate() {
            if l as usize > i {
                *count += 1;
            }
        }
    }
    let mut out = vec![f64::from(load.iter().copied().max().unwrap_or(0))];
    out.extend(at_least.iter().map(|&c| c as f64 / n as f64));
    Ok(out)
}

crate::sim::experiment! {
    BallsExperiment = "gwtw-balls",
    "balls into bins with d choices: the busiest server and the shares of servers with at least i users, against the fluid limit",
    PARAMS, METRICS; crate::sim::no_check, run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Experiment;
    use crate::sim::Value;
    use std::collections::BTreeMap;

    fn run(choices: i64, pick: &str, seed: u64) -> Vec<f64> {
        let mut g = BTreeMap::new();
        g.insert("servers".to_string(), Value::Int(20_000));
        g.insert("choices".to_string(), Value::Int(choices));
        g.insert("pick".to_string(), Value::Text(pick.into()));
        let p = Params::resolve(PARAMS, &g).unwrap();
        BallsExperiment
            .run(&p, &mut crate::rng::from_seed(seed))
            .unwrap()
    }

    /// Every user is placed (the shares sum to the load, 1), a run is a function of its seed,
    /// and two choices keep the busiest server far below one choice's (3 against about 7 at
    /// n = 20,000), unless the draws are never compared.
    #[test]
    fn two_choices_thin_the_tail() {
        let two = run(2, "least-loaded", 3);
        assert_eq!(two, run(2, "least-loaded", 3));
        // All users placed: sum of shares = users per server, and no server above max_load.
        let total: f64 = two[1..].iter().sum();
        assert!(
            (total - 1.0).abs() < 1e-12 || two[0] > LEVELS as f64,
            "{two:?}"
        );
        assert!(two[0] <= 4.0, "{two:?}");
        let first = run(2, "first", 3);
        assert!(first[0] >= 6.0, "{first:?}");
        assert!(first[3] > 5.0 * two[3], "{first:?} {two:?}");
    }
}
