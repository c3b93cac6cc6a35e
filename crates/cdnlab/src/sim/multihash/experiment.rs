//! The `multihash` experiment: one run of the DHT CDN per replication.

use super::{Config, Growth, Outcome, Policy, Repair};
use crate::dht::search::Strategy;
use crate::rng::Rng;
use crate::sim::Experiment;
use crate::sim::params::{ParamSpec, Params};
use crate::{Error, Named};

/// The experiment.
pub struct MultihashExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "policy",
        Policy::NAMES,
        "where requests go: multi-hash replicas, or a production baseline without replication",
    ),
    ParamSpec::int("nodes", 1, 1_000_000, 1000, "CDN nodes N"),
    ParamSpec::int("vnodes", 1, 1000, 1, "ring positions per node"),
    ParamSpec::int("files", 1, 100_000_000, 10_000, "files M"),
    ParamSpec::int("k", 1, 1 << 20, 1024, "hash functions K (>= 1)"),
    ParamSpec::float(
        "alpha",
        0.0,
        10.0,
        1.0,
        "Zipf exponent of file popularity (>= 0)",
    ),
    ParamSpec::float(
        "load",
        0.0,
        100.0,
        0.5,
        "offered load per node (node capacity 1 request per time unit)",
    ),
    ParamSpec::float(
        "c_high",
        0.0,
        1e9,
        0.5,
        "requests per time unit a replica takes before it is overloaded (> 0)",
    ),
    ParamSpec::float(
        "gamma",
        0.0,
        1.0,
        0.75,
        "de-replication hysteresis, in (0, 1)",
    ),
    ParamSpec::flag(
        "shrink",
        true,
        "the top replica deletes itself when demand drops",
    ),
    ParamSpec::float(
        "window",
        0.0,
        1e9,
        200.0,
        "window W of the overload detection, time units",
    ),
    ParamSpec::choice(
        "growth",
        Growth::NAMES,
        "replicas added per overloaded window",
    ),
    ParamSpec::choice("strategy", Strategy::NAMES, "how a request finds a replica"),
    ParamSpec::float(
        "balance",
        1.0,
        100.0,
        1.25,
        "bounded-load factor 1 + epsilon",
    ),
    ParamSpec::float(
        "fail_fraction",
        0.0,
        1.0,
        0.0,
        "fraction of nodes that crash after window fail_at, in [0, 1]",
    ),
    ParamSpec::int(
        "fail_at",
        0,
        100_000_000,
        20,
        "window after which nodes crash",
    ),
    ParamSpec::choice(
        "repair",
        Repair::NAMES,
        "how gaps are found and filled after a crash",
    ),
    ParamSpec::float(
        "flash",
        1.0,
        1e6,
        1.0,
        "flash crowd: the top file's demand x this factor (1: none)",
    ),
    ParamSpec::int(
        "flash_start",
        0,
        100_000_000,
        10,
        "first window of the flash crowd",
    ),
    ParamSpec::int("flash_end", 0, 100_000_000, 30, "first window after it"),
    ParamSpec::int("horizon", 1, 100_000_000, 40, "windows simulated"),
    ParamSpec::int(
        "measure",
        1,
        100_000_000,
        10,
        "final windows over which node loads are measured",
    ),
];

const METRICS: &[&str] = &[
    "requests",
    "probes_per_request",
    "failure_rate",
    "max_mean",
    "p99_mean",
    "over_capacity",
    "replicas",
    "top_replicas",
    "top_steady",
    "steady_match",
    "steady_error",
    "in_band",
    "hot_in_band",
    "prefix_breaks",
    "home_missing",
    "top_replica_load",
    "gaps_after_failure",
    "lost_files",
    "failure_rate_after",
    "predicted_failure_after",
    "below_gap_served",
    "below_gap_expected",
    "below_gap_uniform",
    "repair_rounds",
    "messages_per_replication",
    "repair_messages_per_round",
    "chord_hops",
    "probes_expected",
    "probes_se",
    "replication_formula",
    "repair_formula",
    "create_refused",
    "duplicate_replicas",
];

/// The run configuration of a parameter set.
pub fn config(p: &Params) -> Result<Config, Error> {
    let cfg = Config {
        nodes: p.int("nodes") as u32,
        vnodes: p.int("vnodes") as u32,
        files: p.int("files") as u32,
        k: p.int("k") as u32,
        alpha: p.float("alpha"),
        load: p.float("load"),
        c_high: p.float("c_high"),
        gamma: p.float("gamma"),
        shrink: p.values()["shrink"] == crate::sim::Value::Bool(true),
        window: p.float("window"),
        growth: p.named("growth")?,
        strategy: p.named("strategy")?,
        policy: p.named("policy")?,
        balance: p.float("balance"),
        fail_fraction: p.float("fail_fraction"),
        fail_at: p.int("fail_at") as u32,
        repair: p.named("repair")?,
        flash: p.float("flash"),
        flash_start: p.int("flash_start") as u32,
        flash_end: p.int("flash_end") as u32,
        horizon: p.int("horizon") as u32,
        measure: p.int("measure") as u32,
    };
    cfg.validate()?;
    Ok(cfg)
}

impl Outcome {
    /// The metric values, in the order of the experiment's metrics.
    pub fn values(&self) -> Vec<f64> {
        vec![
            self.requests as f64,
            self.probes_per_request,
            self.failure_rate,
            self.max_mean,
            self.p99_mean,
            self.over_capacity,
            self.replicas as f64,
            f64::from(self.top_replicas),
            f64::from(self.top_steady),
            self.steady_match,
            self.steady_error,
            self.in_band,
            self.hot_in_band,
            self.prefix_breaks as f64,
            self.home_missing as f64,
            self.top_replica_load,
            self.gaps_after_failure as f64,
            self.lost_files as f64,
            self.failure_rate_after,
            self.predicted_failure_after,
            self.below_gap_served,
            self.below_gap_expected,
            self.below_gap_uniform,
            f64::from(self.repair_rounds),
            self.messages_per_replication,
            self.repair_messages_per_round,
            self.chord_hops,
            self.probes_expected,
            self.probes_se,
            self.replication_formula,
            self.repair_formula,
            self.create_refused as f64,
            self.duplicate_replicas as f64,
        ]
    }
}

impl Experiment for MultihashExperiment {
    fn name(&self) -> &'static str {
        "multihash"
    }
    fn about(&self) -> &'static str {
        "DHT CDN with multiple hash functions: RBS lookups, replication, gap repair, against production hashing"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn metrics(&self) -> &'static [&'static str] {
        METRICS
    }
    fn check(&self, p: &Params) -> Result<(), Error> {
        config(p).map(|_| ())
    }
    fn run(&self, p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
        Ok(super::run(&config(p)?, rng)?.values())
    }
}
