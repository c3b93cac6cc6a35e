//! The loopback demo: an origin, N edges and M GWTW users, run for a while, sampled on a
//! timeline. Edges are sized in users: in the web model an edge's cache holds the catalogues
//! of `users_per_edge` users (c = C / N of the simulator), in the video model its bandwidth
//! carries `users_per_edge` streams at the wanted rate. Optionally one edge is killed mid-run.

pub mod dht;
pub mod players;
pub mod steer;

use crate::Error;
use crate::catalogue::Catalogue;
use crate::client::{Measure, UserState, Users, UsersConfig};
use crate::edge::{self, Edge, EdgeConfig};
use crate::origin::{self, OriginConfig};
use cdnlab::cache::Policy;
use cdnlab::select::gwtw::GwtwConfig;
use cdnlab::select::matching;
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A demo run.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoConfig {
    pub edges: usize,
    pub users: usize,
    pub k: usize,
    pub users_per_edge: usize,
    pub objects_per_user: u64,
    pub object_size: u32,
    pub alpha: f64,
    /// The GWTW rule's settings (as the simulator's).
    pub gwtw: GwtwConfig,
    /// The service users measure (web: edges hold `users_per_edge` catalogues; video: edges
    /// send `users_per_edge` x rate).
    pub model: Measure,
    pub policy: Policy,
    pub interval: Duration,
    pub duration: Duration,
    pub sample_every: Duration,
    pub seed: u64,
    /// Kill edge `.1` at time `.0`.
    pub kill: Option<(Duration, usize)>,
}

impl DemoConfig {
    /// Checks what the parts do not check themselves.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        use cdnlab::Error as E;
        if self.edges == 0 || self.edges > 256 {
            return Err(E::param("edges", self.edges, "1 to 256"));
        }
        if self.users == 0 || self.users > 10_000 {
            return Err(E::param("users", self.users, "1 to 10000"));
        }
        if self.k == 0 || self.k > self.edges {
            return Err(E::param(
                "k",
                self.k,
                format!("1 to the number of edges ({})", self.edges),
            ));
        }
        if self.users_per_edge == 0 {
            return Err(E::param("users-per-edge", 0, "at least 1"));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return Err(E::param(
                "duration",
                format!("{:?}", self.duration),
                "1 s to 1 hour",
            ));
        }
        self.model.validate()?;
        if self.sample_every.is_zero() {
            return Err(E::param("sample-every", "0", "a duration > 0"));
        }
        if let Some((_, e)) = self.kill
            && e >= self.edges
        {
            return Err(E::param(
                "kill",
                e,
                format!("an edge index below {}", self.edges),
            ));
        }
        Ok(())
    }
}

/// One point of the timeline.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq)]
pub struct Sample {
    /// Seconds since the users started.
    pub t: f64,
    /// Share of users at the best value.
    pub at_best: f64,
    /// Share of users settled.
    pub settled: f64,
    pub requests: u64,
    pub failures: u64,
}

/// What one edge did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EdgeReport {
    pub addr: SocketAddr,
    pub hits: u64,
    pub misses: u64,
    pub collapsed: u64,
    pub bytes_sent: u64,
    pub killed: bool,
    /// Users settled on it at the end.
    pub settled_users: usize,
}

/// The run's result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Outcome {
    pub timeline: Vec<Sample>,
    pub users: Vec<UserState>,
    pub edges: Vec<EdgeReport>,
    /// Whether the users' candidates admit an assignment within the edges' capacities (the
    /// killed edge counted as gone): the optimum GWTW can find.
    pub feasible: bool,
    /// Start of the final stretch with every user at the best value, if the run ends in one.
    pub converged_at: Option<f64>,
}

/// Whether the users' candidates (as the run will draw them) admit an assignment within the
/// edges' capacities, the killed edge counted as gone.
pub fn feasible(cfg: &DemoConfig) -> bool {
    let mut capacities = vec![cfg.users_per_edge as u32; cfg.edges];
    if let Some((_, e)) = cfg.kill {
        capacities[e] = 0;
    }
    let draw = UsersConfig {
        edges: vec![SocketAddr::from(([127, 0, 0, 1], 0)); cfg.edges],
        users: cfg.users,
        k: cfg.k,
        gwtw: cfg.gwtw,
        objects_per_user: cfg.objects_per_user,
        alpha: cfg.alpha,
        measure: Measure::Web,
        interval: cfg.interval,
        timeout: cfg.interval,
        seed: cfg.seed,
    };
    let candidates: Vec<Vec<u32>> = (0..cfg.users).map(|u| draw.candidates(u)).collect();
    matching::assign(&candidates, &capacities)
        .iter()
        .all(Option::is_some)
}

/// Runs the demo; `on_sample` sees each timeline point as it is taken.
pub async fn run(cfg: &DemoConfig, mut on_sample: impl FnMut(&Sample)) -> Result<Outcome, Error> {
    cfg.validate()?;
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let objects = cfg.users as u64 * cfg.objects_per_user;
    let catalogue = Catalogue::new(objects, cfg.object_size, cfg.object_size, cfg.seed)?;
    let origin = origin::start(any, OriginConfig::serving(catalogue)).await?;
    // What one user's catalogue takes in an edge's cache (each object charged its bookkeeping
    // too, see `edge::PER_OBJECT_BYTES`).
    let catalogue_bytes = cfg.objects_per_user * u64::from(edge::charged(cfg.object_size as usize));
    let (capacity, bandwidth, measure) = match cfg.model {
        Measure::Web => (
            cfg.users_per_edge as u64 * catalogue_bytes,
            None,
            Measure::Web,
        ),
        Measure::Video { rate, tolerance } => (
            objects * u64::from(edge::charged(cfg.object_size as usize)),
            Some((cfg.users_per_edge as f64 * rate) as u64),
            Measure::Video { rate, tolerance },
        ),
    };
    let mut edges: Vec<Option<Edge>> = Vec::new();
    for _ in 0..cfg.edges {
        edges.push(Some(
            edge::start(
                any,
                EdgeConfig {
                    policy: cfg.policy,
                    capacity,
                    bandwidth,
                    ..EdgeConfig::in_front_of(origin.server.addr)
                },
            )
            .await?,
        ));
    }
    let addrs: Vec<SocketAddr> = edges.iter().flatten().map(|e| e.server.addr).collect();
    let ucfg = UsersConfig {
        edges: addrs.clone(),
        users: cfg.users,
        k: cfg.k,
        gwtw: cfg.gwtw,
        objects_per_user: cfg.objects_per_user,
        alpha: cfg.alpha,
        measure,
        interval: cfg.interval,
        timeout: Duration::from_secs(5),
        seed: cfg.seed,
    };
    let feasible = feasible(cfg);
    let users = Users::start(ucfg)?;
    let t0 = Instant::now();
    let mut timeline = Vec::new();
    let mut killed = None;
    let mut next = cfg.sample_every;
    while next <= cfg.duration {
        tokio::time::sleep_until((t0 + next).into()).await;
        if let Some((at, e)) = cfg.kill
            && killed.is_none()
            && t0.elapsed() >= at
            && let Some(edge) = edges[e].take()
        {
            let report = report(&edge, true);
            edge.server.stop().await;
            killed = Some((e, report));
        }
        let s = users.snapshot();
        let n = s.len() as f64;
        let sample = Sample {
            t: t0.elapsed().as_secs_f64(),
            at_best: s.iter().filter(|u| u.at_best).count() as f64 / n,
            settled: s.iter().filter(|u| u.settled.is_some()).count() as f64 / n,
            requests: s.iter().map(|u| u.requests).sum(),
            failures: s.iter().map(|u| u.failures).sum(),
        };
        on_sample(&sample);
        timeline.push(sample);
        next += cfg.sample_every;
    }
    let final_users = users.snapshot();
    users.stop().await;
    let mut reports = Vec::new();
    for (i, e) in edges.into_iter().enumerate() {
        let mut r = match (e, &killed) {
            (Some(e), _) => {
                let r = report(&e, false);
                e.server.stop().await;
                r
            }
            (None, Some((_, r))) => r.clone(),
            (None, None) => unreachable!("only a killed edge is gone"),
        };
        r.settled_users = final_users
            .iter()
            .filter(|u| u.settled == Some(i as u32))
            .count();
        reports.push(r);
    }
    origin.server.stop().await;
    let converged_at = timeline
        .iter()
        .rposition(|s| s.at_best < 1.0)
        .map_or(Some(0), |i| (i + 1 < timeline.len()).then_some(i + 1))
        .map(|i| timeline[i].t);
    Ok(Outcome {
        timeline,
        users: final_users,
        edges: reports,
        feasible,
        converged_at,
    })
}

fn report(e: &Edge, killed: bool) -> EdgeReport {
    let m = e.metrics();
    EdgeReport {
        addr: e.server.addr,
        hits: m.hits.get(),
        misses: m.misses.get(),
        collapsed: m.collapsed.get(),
        bytes_sent: m.bytes_sent.get(),
        killed,
        settled_users: 0,
    }
}
