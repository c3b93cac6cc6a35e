//! `gwtw-orient`: whether an optimal state exists at all, around the orientability (cuckoo)
//! thresholds of the spec. m users each draw k distinct random servers (as GWTW users do) and a
//! maximum b-matching places them within capacity c per server; no simulation of requests, so
//! n = 10^4 and more is cheap.
//!
//! Rules: GWTW-R8 of docs/spec/gwtw.md.

use super::{Draw, candidates_of};
use crate::Error;
use crate::Named;
use crate::rng::Rng;
use crate::select::{analysis, matching};
use crate::sim::params::{MetricSpec, ParamSpec, Params};

/// The experiment.
pub struct OrientExperiment;

/// The (k, c) pairs with a known threshold, by name.
const REGIMES: &[&str] = &["k2-c1", "k3-c1", "k4-c1", "k2-c2", "k2-c3"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("servers", 1, 10_000_000, 10_000, "number of servers n").unit("servers"),
    ParamSpec::choice(
        "regime",
        REGIMES,
        "candidates k and capacity c per server, as kK-cC (those with a known threshold)",
    ),
    ParamSpec::float(
        "relative",
        0.0,
        10.0,
        1.0,
        "load per capacity lambda / c as a multiple of the regime's threshold",
    )
    .unit("multiple of the threshold"),
    ParamSpec::choice(
        "draw",
        Draw::NAMES,
        "how a user's candidates are drawn: random (GWTW-R8); striped is a wrong model (user u \
         gets servers u, u + 1, ... modulo n)",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "feasible",
        "0/1",
        "1 if every user fits on one of its k candidates (a b-matching places all)",
    ),
    MetricSpec::new(
        "placed",
        "fraction",
        "share of users a maximum b-matching places",
    ),
    MetricSpec::new(
        "ratio",
        "users per capacity",
        "load lambda / c of the run (relative x the threshold)",
    ),
    MetricSpec::new(
        "threshold",
        "users per capacity",
        "the regime's orientability threshold",
    ),
];

/// (k, c) of a regime name.
fn regime(name: &str) -> (u32, u32) {
    let (k, c) = name
        .trim_start_matches('k')
        .split_once("-c")
        .expect("declared regime");
    (
        k.parse().expect("declared regime"),
        c.parse().expect("declared regime"),
    )
}

/// Checks that involve several parameters.
fn check(p: &Params) -> Result<(), Error> {
    let (k, _) = regime(p.text("regime"));
    if p.int("servers") < i64::from(k) {
        return Err(p.refuse("servers", format!("at least k = {k}")));
    }
    Ok(())
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    check(p)?;
    let (k, c) = regime(p.text("regime"));
    let theta = analysis::orientability_threshold(k, c).expect("declared regime");
    let n = p.int("servers") as u32;
    let ratio = p.float("relative") * theta;
    let m = (ratio * f64::from(c) * f64::from(n)).round() as usize;
    let draw = p.named::<Draw>("draw")?;
    let cands: Vec<Vec<u32>> = (0..m).map(|u| candidates_of(draw, u, n, k, rng)).collect();
    let placed = matching::assign(&cands, &vec![c; n as usize])
        .iter()
        .filter(|a| a.is_some())
        .count();
    Ok(vec![
        f64::from(u8::from(placed == m)),
        if m == 0 {
            1.0
        } else {
            placed as f64 / m as f64
        },
        ratio,
        theta,
    ])
}

crate::sim::experiment! {
    OrientExperiment = "gwtw-orient",
    "whether every user fits on one of k random servers of capacity c, around the orientability thresholds",
    PARAMS, METRICS; check, run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Experiment;
    use crate::sim::Value;
    use std::collections::BTreeMap;

    fn run(regime: &str, relative: f64, seed: u64) -> Vec<f64> {
        let mut g = BTreeMap::new();
        g.insert("servers".to_string(), Value::Int(2000));
        g.insert("regime".to_string(), Value::Text(regime.into()));
        g.insert("relative".to_string(), Value::Float(relative));
        let p = Params::resolve(PARAMS, &g).unwrap();
        OrientExperiment
            .run(&p, &mut crate::rng::from_seed(seed))
            .unwrap()
    }

    /// Well below the threshold everyone fits; 30% above it some users find no room.
    #[test]
    fn far_from_the_threshold() {
        for r in REGIMES {
            assert_eq!(run(r, 0.7, 1)[0], 1.0, "{r}");
            let above = run(r, 1.3, 2);
            assert_eq!(above[0], 0.0, "{r}");
            assert!(above[1] > 0.5 && above[1] < 1.0, "{r}: {above:?}");
        }
        assert_eq!(regime("k2-c3"), (2, 3));
    }
}
