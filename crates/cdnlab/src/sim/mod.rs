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

pub mod gwtw;
pub mod lru_che;
pub mod multihash;
pub mod params;
pub mod transport;

use crate::Error;
use crate::rng::Rng;
pub use params::{Kind, ParamSpec, Params, Value};

/// A model that the runner can sweep.
pub trait Experiment: Sync {
    /// The scenario name (`experiment = "..."`).
    fn name(&self) -> &'static str;
    /// One line saying what it measures.
    fn about(&self) -> &'static str;
    /// The parameters it takes, with defaults and ranges.
    fn params(&self) -> &'static [ParamSpec];
    /// The names of the metrics [`Experiment::run`] returns, in order.
    fn metrics(&self) -> &'static [&'static str];
    /// Checks that involve several parameters (single ranges are checked from
    /// [`Experiment::params`]).
    fn check(&self, _p: &Params) -> Result<(), Error> {
        Ok(())
    }
    /// Whether some metrics are wall-clock times: the runner then runs one cell at a time, so
    /// that cells do not compete for the cores.
    fn timed(&self) -> bool {
        false
    }
    /// One replication: the metric values, in the order of [`Experiment::metrics`].
    fn run(&self, p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error>;
}

/// Every registered experiment.
pub fn registry() -> &'static [&'static dyn Experiment] {
    &[
        &lru_che::LruChe,
        &gwtw::experiment::GwtwExperiment,
        &gwtw::orient::OrientExperiment,
        &multihash::experiment::MultihashExperiment,
        &multihash::rbs::RbsExperiment,
        &transport::stream::StreamExperiment,
        &transport::paths::PathsExperiment,
        &transport::solver::SolverExperiment,
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
