//! The `multihash` experiment: one run of the DHT CDN per replication.

use super::{
    Config, Growth, Leave, Outcome, Place, PlacementPolicy, Repair, RingLayout, Routing, Search,
};
use crate::dht::search::Strategy;
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use crate::{Error, Named};

/// The experiment.
pub struct MultihashExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "policy",
        PlacementPolicy::NAMES,
        "where requests go: multi-hash replicas, or a production baseline without replication",
    ),
    ParamSpec::int("nodes", 1, 1_000_000, 1000, "CDN nodes N").unit("nodes"),
    ParamSpec::int("vnodes", 1, 1000, 1, "ring positions per node"),
    ParamSpec::choice(
        "ring",
        RingLayout::NAMES,
        "a new ring per replication (per-run) or the live deployments' ring in every run (fixed)",
    ),
    ParamSpec::int("files", 1, 100_000_000, 10_000, "files M"),
    ParamSpec::int("k", 1, 1 << 20, 1024, "hash functions K"),
    ParamSpec::float("alpha", 0.0, 10.0, 1.0, "Zipf exponent of file popularity")
        .unit("Zipf exponent"),
    ParamSpec::float(
        "load",
        0.0,
        100.0,
        0.5,
        "offered load per node (node capacity 1 request per time unit)",
    )
    .unit("requests per node per unit time"),
    ParamSpec::positive(
        "c_high",
        1e9,
        0.5,
        "requests per time unit a replica takes before it is overloaded",
    ),
    ParamSpec::range(
        "gamma",
        (0.0, true),
        (1.0, true),
        0.75,
        "de-replication hysteresis",
    ),
    ParamSpec::flag(
        "shrink",
        true,
        "the top replica deletes itself when demand drops",
    ),
    ParamSpec::positive(
        "window",
        1e9,
        200.0,
        "window W of the overload detection, time units",
    ),
    ParamSpec::choice(
        "growth",
        Growth::NAMES,
        "replicas added per overloaded window",
    ),
    ParamSpec::choice(
        "routing",
        Routing::NAMES,
        "how a lookup travels (successors: a wrong model, for checking claims)",
    ),
    ParamSpec::choice(
        "place",
        Place::NAMES,
        "where new replicas go (random: a wrong model, for checking claims)",
    ),
    ParamSpec::choice(
        "leave",
        Leave::NAMES,
        "which replica may leave (any: a wrong model, for checking claims)",
    ),
    ParamSpec::choice(
        "search",
        Search::NAMES,
        "how an overloaded replica finds the smallest unused index (linear: a wrong model, for \
         checking claims)",
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
        "fraction of nodes that crash after window fail_at",
    )
    .unit("fraction of nodes"),
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
    ParamSpec::int("horizon", 1, 100_000_000, 40, "windows simulated").unit("windows"),
    ParamSpec::int(
        "measure",
        1,
        100_000_000,
        10,
        "final windows over which node loads are measured",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new("requests", "requests", "requests simulated"),
    MetricSpec::new("probes_per_request", "probes", "ring lookups per request"),
    MetricSpec::new("failure_rate", "fraction", "requests that found no replica"),
    MetricSpec::new(
        "max_mean",
        "ratio",
        "busiest node's load / mean node load over the measured windows",
    ),
    MetricSpec::new(
        "p99_mean",
        "ratio",
        "99th-percentile node load / mean node load",
    ),
    MetricSpec::new(
        "over_capacity",
        "fraction",
        "nodes above capacity over the measured windows",
    ),
    MetricSpec::new("replicas", "replicas", "replicas of all files at the end"),
    MetricSpec::new(
        "top_replicas",
        "replicas",
        "replicas of the most popular file at the end",
    ),
    MetricSpec::new(
        "top_steady",
        "replicas",
        "the steady-state count for the top file's rate, max(1, ceil(lambda_f / c_high))",
    ),
    MetricSpec::new(
        "steady_match",
        "fraction",
        "files whose replica count equals the steady-state count",
    ),
    MetricSpec::new(
        "steady_error",
        "relative error",
        "mean |n_f - steady| / steady over files",
    ),
    MetricSpec::new(
        "in_band",
        "fraction",
        "files inside the hysteresis band of replica counts",
    ),
    MetricSpec::new(
        "hot_in_band",
        "fraction",
        "the 10 most popular files inside their band",
    ),
    MetricSpec::new(
        "prefix_breaks",
        "(window, file) pairs",
        "pairs before any crash where a file's indices were not a prefix",
    ),
    MetricSpec::new(
        "home_missing",
        "(window, file) pairs",
        "pairs before any crash where a file's home copy was missing",
    ),
    MetricSpec::new(
        "top_replica_load",
        "requests per time unit",
        "highest per-replica load of the top file in the final window",
    ),
    MetricSpec::new(
        "gaps_after_failure",
        "gaps",
        "missing indices below a file's top replica right after the crash",
    ),
    MetricSpec::new(
        "lost_files",
        "files",
        "files with no replica left after the crash",
    ),
    MetricSpec::new(
        "failure_rate_after",
        "fraction",
        "request failure rate in the window after the crash",
    ),
    MetricSpec::new(
        "predicted_failure_after",
        "fraction",
        "the same, predicted by the exact recursion",
    ),
    MetricSpec::new(
        "below_gap_served",
        "fraction",
        "after the crash, requests of files with a gap served below the lowest gap",
    ),
    MetricSpec::new(
        "below_gap_expected",
        "fraction",
        "the same, expected by the recursion",
    ),
    MetricSpec::new(
        "below_gap_uniform",
        "fraction",
        "the same under a uniform pick",
    ),
    MetricSpec::new(
        "repair_rounds",
        "windows",
        "windows after the crash until no gap is left (horizon - fail_at if never)",
    ),
    MetricSpec::new(
        "messages_per_replication",
        "messages",
        "search probes and CREATE_IF_ABSENT per replica created",
    ),
    MetricSpec::new(
        "repair_messages_per_round",
        "messages",
        "repair messages per round per replica",
    ),
    MetricSpec::new(
        "chord_hops",
        "hops",
        "mean Chord hops of a lookup on this ring (sampled)",
    ),
    MetricSpec::new(
        "probes_expected",
        "probes",
        "expected probes per request from the replica state (1 + H_K - H_n, or the recursion)",
    ),
    MetricSpec::new(
        "probes_se",
        "probes",
        "standard error of the measured probes per request",
    ),
    MetricSpec::new(
        "replication_formula",
        "messages",
        "messages per replica created by each search's closed form",
    ),
    MetricSpec::new(
        "repair_formula",
        "messages",
        "messages per repair round by the formula (one probe per replica above the home plus refills)",
    ),
    MetricSpec::new(
        "create_refused",
        "attempts",
        "CREATE_IF_ABSENT attempts refused because the replica existed",
    ),
    MetricSpec::new(
        "duplicate_replicas",
        "(window, file, index)",
        "triples held twice at a window's end",
    ),
];

/// The run configuration of a parameter set.
pub fn config(p: &Params) -> Result<Config, Error> {
    let cfg = Config {
        nodes: p.int("nodes") as u32,
        vnodes: p.int("vnodes") as u32,
        ring: p.named("ring")?,
        routing: p.named("routing")?,
        files: p.int("files") as u32,
        k: p.int("k") as u32,
        alpha: p.float("alpha"),
        load: p.float("load"),
        c_high: p.float("c_high"),
        gamma: p.float("gamma"),
        shrink: p.values()["shrink"] == crate::sim::Value::Bool(true),
        window: p.float("window"),
        growth: p.named("growth")?,
        place: p.named("place")?,
        leave: p.named("leave")?,
        search: p.named("search")?,
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

/// Checks that involve several parameters.
fn check(p: &Params) -> Result<(), Error> {
    config(p).map(|_| ())
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    Ok(super::run(&config(p)?, rng)?.values())
}

crate::sim::experiment! {
    MultihashExperiment = "multihash",
    "DHT CDN with multiple hash functions: RBS lookups, replication, gap repair, against production hashing",
    PARAMS, METRICS; check, run
}
