//! Experiments: one replication of one cell, as a pure function of parameters and an RNG.
//!
//! An [`Experiment`] declares its parameters ([`params::ParamSpec`]: name, kind, range, default,
//! help) and its metrics, and computes the metric values of one replication. The runner in the
//! binary expands a scenario's grid, resolves each cell's parameters against the declaration
//! (so range errors name the parameter and the allowed values before anything runs), and calls
//! [`Experiment::run`] with that replication's own RNG stream. The [`registry`] maps scenario
//! names to experiments; later models register here and the runner stays as it is.
//!
//! | folder | paper | experiments | rules it drives (written once, in the library) |
//! |---|---|---|---|
//! | `gwtw/` | Go-With-The-Winner | `gwtw`, `gwtw-orient` | `select::gwtw`, `select::matching` |
//! | `multihash/` | multi-hash DHT CDN | `multihash`, `rbs` (`rbs.rs`) | `dht::search`, `dht::replication`, `dht::repair`, `dht::store` |
//! | `transport/` | optimal allocation for streaming | `stream`, `paths`, `solver` | `alloc::admission`, `alloc::topology`, `alloc::simplex` |
//! | `lru_che.rs` | the cache model | `lru-che` | `cache` |
//! | `steering.rs` | cdnlab's own: steering by what viewers experience | `steering` | `steer::player`, `steer::policy`, `steer::tally`, `alloc::admission` |

pub mod gwtw;
pub mod lru_che;
pub mod multihash;
pub mod params;
pub mod steering;
pub mod transport;

use crate::Error;
use crate::rng::Rng;
pub use params::{Kind, MetricSpec, ParamSpec, Params, Value};

/// A model that the runner can sweep.
/// What an experiment is, declared once: its scenario name (`experiment = "..."`), one line on
/// what it measures, its parameters (with defaults and ranges), its metrics (in the order
/// [`Experiment::run`] returns them, with units and meanings), and whether some metrics are
/// wall-clock times (the runner then runs one cell at a time, so that cells do not compete for
/// the cores).
#[derive(Debug)]
pub struct Spec {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    pub metrics: &'static [MetricSpec],
    pub timed: bool,
}

pub trait Experiment: Sync {
    /// What it is: see [`Spec`].
    fn spec(&self) -> &'static Spec;
    /// The scenario name (`experiment = "..."`).
    fn name(&self) -> &'static str {
        self.spec().name
    }
    /// One line saying what it measures.
    fn about(&self) -> &'static str {
        self.spec().about
    }
    /// The parameters it takes, with defaults and ranges.
    fn params(&self) -> &'static [ParamSpec] {
        self.spec().params
    }
    /// The metrics [`Experiment::run`] returns, in order, with units and meanings.
    fn metrics(&self) -> &'static [MetricSpec] {
        self.spec().metrics
    }
    /// The metrics' names, in order (the columns of `results.csv`).
    fn metric_names(&self) -> Vec<&'static str> {
        self.metrics().iter().map(|m| m.name).collect()
    }
    /// Checks that involve several parameters (single ranges are checked from
    /// [`Experiment::params`]).
    fn check(&self, _p: &Params) -> Result<(), Error> {
        Ok(())
    }
    /// Whether some metrics are wall-clock times.
    fn timed(&self) -> bool {
        self.spec().timed
    }
    /// One replication: the metric values, in the order of [`Experiment::metrics`].
    fn run(&self, p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error>;
}

/// For an experiment without checks beyond its parameters' ranges.
pub(crate) fn no_check(_: &Params) -> Result<(), Error> {
    Ok(())
}

/// Implements [`Experiment`] for a type from its [`Spec`] (name, one line, parameters, metrics,
/// `timed` when some metrics are wall-clock times) and two functions, the checks and one
/// replication: `fn(&Params) -> Result<(), Error>` and
/// `fn(&Params, &mut Rng) -> Result<Vec<f64>, Error>`.
macro_rules! experiment {
    ($ty:ident = $name:literal, $about:literal, $params:ident, $metrics:ident $(, $timed:ident)?;
     $check:path, $run:path) => {
        impl $crate::sim::Experiment for $ty {
            fn spec(&self) -> &'static $crate::sim::Spec {
                static SPEC: $crate::sim::Spec = $crate::sim::Spec {
                    name: $name,
                    about: $about,
                    params: $params,
                    metrics: $metrics,
                    timed: $crate::sim::experiment!(@timed $($timed)?),
                };
                &SPEC
            }
            fn check(&self, p: &$crate::sim::Params) -> Result<(), $crate::Error> {
                $check(p)
            }
            fn run(
                &self,
                p: &$crate::sim::Params,
                rng: &mut $crate::rng::Rng,
            ) -> Result<Vec<f64>, $crate::Error> {
                $run(p, rng)
            }
        }
    };
    (@timed timed) => {
        true
    };
    (@timed) => {
        false
    };
}
pub(crate) use experiment;

/// Every registered experiment.
pub fn registry() -> &'static [&'static dyn Experiment] {
    &[
        &lru_che::LruChe,
        &gwtw::experiment::GwtwExperiment,
        &gwtw::orient::OrientExperiment,
        &gwtw::balls::BallsExperiment,
        &multihash::experiment::MultihashExperiment,
        &multihash::rbs::RbsExperiment,
        &transport::stream::StreamExperiment,
        &transport::paths::PathsExperiment,
        &transport::solver::SolverExperiment,
        &transport::backbone::BackboneExperiment,
        &transport::backbone::SeriesExperiment,
        &steering::SteeringExperiment,
    ]
}

/// The experiment named `name`.
pub fn find(name: &str) -> Result<&'static dyn Experiment, Error> {
    registry()
        .iter()
        .copied()
        .find(|e| e.name() == name)
        .ok_or_else(|| Error::Unknown {
            what: "experiment",
            name: name.into(),
            allowed: registry()
                .iter()
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric says what it is and in what unit, once; no parameter's help states a range
    /// of its own (the declaration does, so the two cannot contradict each other).
    #[test]
    fn metrics_and_parameters_describe_themselves_once() {
        for e in registry() {
            let names = e.metric_names();
            for (i, m) in e.metrics().iter().enumerate() {
                assert!(
                    !m.unit.is_empty() && !m.help.is_empty(),
                    "{}: {m:?}",
                    e.name()
                );
                assert!(
                    !names[..i].contains(&m.name),
                    "{}: {} twice",
                    e.name(),
                    m.name
                );
            }
            for p in e.params() {
                for range_words in ["(> 0)", "(>= 0)", "(>= 1)", "in (0, 1", "in [0, 1"] {
                    assert!(!p.help.contains(range_words), "{}: {}", e.name(), p.help);
                }
            }
        }
        let q = ParamSpec::positive("q", 1.0, 0.5, "");
        assert!(q.validate(&Value::Float(0.0)).is_err());
        assert!(q.validate(&Value::Float(1.0)).is_ok());
        assert_eq!(q.kind.allowed(), "a number above 0, at most 1");
        let g = ParamSpec::range("gamma", (0.0, true), (1.0, true), 0.75, "");
        assert!(g.validate(&Value::Int(1)).is_err());
        assert_eq!(g.kind.allowed(), "a number above 0 and below 1");
    }
}
