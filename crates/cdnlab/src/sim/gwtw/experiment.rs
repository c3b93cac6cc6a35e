//! The `gwtw` experiment: one run of the GWTW model per replication (web or video service).

use super::{Config, Draw, Model, Outcome, PrequalLatency, UserPolicy};
use crate::Error;
use crate::Named;
use crate::rng::Rng;
use crate::select::Service;
use crate::select::gwtw::{self, GwtwConfig, Pick, Probe, Retrial};
use crate::sim::params::{MetricSpec, ParamSpec, Params};

/// The experiment.
pub struct GwtwExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "model",
        Service::NAMES,
        "service: web (LRU hit rate) or video (bit rate)",
    ),
    ParamSpec::choice("policy", UserPolicy::NAMES, "how users pick servers"),
    ParamSpec::int("servers", 1, 1_000_000, 200, "number of servers n").unit("servers"),
    ParamSpec::float(
        "load",
        0.0,
        100.0,
        1.0,
        "users per server lambda (users = round(lambda n))",
    )
    .unit("users per server"),
    ParamSpec::int(
        "k",
        1,
        64,
        2,
        "candidate servers per GWTW user (1: a random server kept)",
    ),
    ParamSpec::int(
        "tau",
        1,
        1_000_000,
        gwtw::DEFAULT_TAU as i64,
        "history window: outcomes per candidate",
    )
    .unit("outcomes per candidate"),
    ParamSpec::choice("probe", Probe::NAMES, "where trial requests go"),
    ParamSpec::choice(
        "retrial",
        Retrial::NAMES,
        "when a settled user measures again (move: E9, cdnlab's variant: to another candidate without a trial)",
    ),
    ParamSpec::choice(
        "pick",
        Pick::NAMES,
        "which candidate a trial settles on (uniform: a wrong model, for checking claims)",
    ),
    ParamSpec::positive(
        "q",
        1.0,
        gwtw::DEFAULT_Q,
        "activation probability of a re-trial",
    ),
    ParamSpec::float(
        "partial",
        0.0,
        1.0,
        1.0,
        "fraction p of users running GWTW (the rest k = 1)",
    )
    .unit("fraction of users"),
    ParamSpec::choice(
        "draw",
        Draw::NAMES,
        "how a user's candidates are drawn: random (GWTW-R1); striped is a wrong model (user u \
         gets servers u, u + 1, ... modulo n), see docs/claims.md, \"Wrong models\"",
    ),
    ParamSpec::int(
        "prequal_probes",
        1,
        1_000_000,
        crate::select::prequal::DEFAULT_PROBES as i64,
        "policy prequal: probes a user sends with each request (to distinct random servers)",
    )
    .unit("probes"),
    ParamSpec::choice(
        "prequal_latency",
        PrequalLatency::NAMES,
        "policy prequal: what a probe reports as latency: probed (web: the server's miss ratio \
         over its last slot; video: the time for a unit at the rate one more stream would get); \
         load is a wrong model (requests in flight again), see docs/claims.md, \"Wrong models\"",
    ),
    ParamSpec::int("horizon", 1, 100_000_000, 3000, "slots simulated").unit("slots"),
    ParamSpec::int(
        "measure",
        1,
        100_000_000,
        100,
        "final slots over which per-user values are measured",
    ),
    ParamSpec::flag(
        "exclude_warmup",
        true,
        "do not count compulsory misses of a (user, server) pair in the windows",
    ),
    ParamSpec::flag(
        "exclude_rewarm",
        false,
        "E9 (cdnlab's variant): count a miss only if the previous request for that item at that server missed too",
    ),
    ParamSpec::float(
        "capacity_spread",
        0.0,
        0.99,
        0.0,
        "server capacities uniform in base x [1-h, 1+h]",
    ),
    ParamSpec::int(
        "cache_size",
        1,
        100_000_000,
        40,
        "web: LRU capacity C in items",
    )
    .unit("items"),
    ParamSpec::int("catalogue", 1, 100_000_000, 20, "web: items N per user"),
    ParamSpec::float(
        "alpha",
        0.0,
        10.0,
        0.8,
        "web: Zipf exponent of each user's requests",
    )
    .unit("Zipf exponent"),
    ParamSpec::float("bandwidth", 0.0, 1e9, 2.0, "video: bandwidth B per server"),
    ParamSpec::positive("r_max", 1e9, 1.0, "video: highest bit rate of a stream"),
    ParamSpec::flag(
        "ladder",
        false,
        "video: round rates down to r_max / 2^i (i = 0..4)",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "feasible",
        "0/1",
        "1 if an optimal state exists for the candidate sets (a b-matching places every user)",
    ),
    MetricSpec::new(
        "converged",
        "0/1",
        "1 if the run ended in the optimal state",
    ),
    MetricSpec::new(
        "convergence_slot",
        "slots",
        "slot from which the run stayed optimal (the horizon if it did not end optimal)",
    ),
    MetricSpec::new(
        "satisfied",
        "fraction",
        "users settled on a server within its capacity at the end",
    ),
    MetricSpec::new(
        "at_best",
        "fraction",
        "users whose value over the final slots was the best a server gives",
    ),
    MetricSpec::new(
        "worst_value",
        "hit rate or bit rate",
        "lowest per-user value over the final slots",
    ),
    MetricSpec::new(
        "mean_value",
        "hit rate or bit rate",
        "mean per-user value over the final slots",
    ),
    MetricSpec::new(
        "wrong_settle_rate",
        "per settle",
        "settles onto an overloaded server per settle decision",
    ),
    MetricSpec::new(
        "retrials_per_user",
        "re-trials",
        "re-trials per user over the run",
    ),
    MetricSpec::new(
        "retrials_within_capacity",
        "share",
        "of the re-trials, those of users whose server held at most its capacity of settled \
         users: shortfalls caused by trial probes or re-warm misses, not by sharing",
    ),
    MetricSpec::new(
        "retrials_probed",
        "share",
        "of the re-trials within capacity, those made while a user in a trial had that server \
         among its candidates (its requests there can evict the resident's items)",
    ),
    MetricSpec::new(
        "in_trial",
        "fraction",
        "users in a trial at the end (a livelock keeps a steady share in trial)",
    ),
    MetricSpec::new(
        "warmup_slot",
        "slots",
        "first slot whose mean served value reached 90% of the best",
    ),
    MetricSpec::new(
        "max_load",
        "users",
        "most settled users on one server at the end",
    ),
    MetricSpec::new(
        "requests",
        "requests",
        "requests servers answered over the run (trial probes included)",
    ),
];

/// The run configuration of a parameter set.
pub fn config(p: &Params) -> Result<Config, Error> {
    let servers = p.int("servers") as u32;
    let users = (p.float("load") * f64::from(servers)).round();
    let model = match p.named::<Service>("model")? {
        Service::Web => Model::Web {
            cache: p.int("cache_size") as u32,
            catalogue: p.int("catalogue") as u32,
            alpha: p.float("alpha"),
        },
        Service::Video => Model::Video {
            bandwidth: p.float("bandwidth"),
            r_max: p.float("r_max"),
            ladder: p.values()["ladder"] == crate::sim::Value::Bool(true),
        },
    };
    let best = match model {
        Model::Web { .. } => 1.0,
        Model::Video { r_max, .. } => r_max,
    };
    let cfg = Config {
        servers,
        users: users.min(f64::from(u32::MAX)) as u32,
        k: p.int("k") as u32,
        policy: p.named("policy")?,
        gwtw: GwtwConfig {
            tau: p.int("tau") as usize,
            // The parameter's choices are the registry's names, checked on load.
            probe: p.named("probe")?,
            retrial: p.named("retrial")?,
            pick: p.named("pick")?,
            q: p.float("q"),
            best: if best > 0.0 { best } else { 1.0 },
        },
        partial: p.float("partial"),
        draw: p.named("draw")?,
        prequal_probes: p.int("prequal_probes") as u32,
        prequal_latency: p.named("prequal_latency")?,
        horizon: p.int("horizon") as u32,
        measure: p.int("measure") as u32,
        exclude_warmup: p.values()["exclude_warmup"] == crate::sim::Value::Bool(true),
        exclude_rewarm: p.values()["exclude_rewarm"] == crate::sim::Value::Bool(true),
        capacity_spread: p.float("capacity_spread"),
        model,
        fast_forward: true,
    };
    cfg.validate()?;
    Ok(cfg)
}

impl Outcome {
    /// The metric values, in the order of the experiment's metrics.
    pub fn values(&self) -> Vec<f64> {
        vec![
            f64::from(u8::from(self.feasible)),
            f64::from(u8::from(self.converged)),
            f64::from(self.convergence_slot),
            self.satisfied,
            self.at_best,
            self.worst_value,
            self.mean_value,
            self.wrong_settle_rate,
            self.retrials_per_user,
            self.retrials_within_capacity,
            self.retrials_probed,
            self.in_trial,
            f64::from(self.warmup_slot),
            f64::from(self.max_load),
            self.requests as f64,
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
    GwtwExperiment = "gwtw",
    "Go-With-The-Winner client-side server selection (web or video), against k = 1, P2C, Prequal and an oracle",
    PARAMS, METRICS; check, run
}
