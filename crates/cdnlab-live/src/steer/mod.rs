//! The steering server (`cdnlab live steer`): the Transportation Problem over a metro topology,
//! solved with the library's network simplex, turned into per-population admission thresholds
//! on the edges and into HLS/DASH content-steering manifests.
//!
//! Rows are populations (demand D_i, scaled to the total capacity), columns are edges (capacity
//! C_j), costs are hop counts between metros. Threshold T_ij = x_ij is installed on edge j for
//! population i (`POST /internal/admission`, with the topology's secret); an edge refuses a
//! population's streams above it with 503 and Retry-After, and counts them as blocked. Every
//! `window` the server reads each edge's counts (`GET /internal/admission`: the reports), and
//! when some population's blocking in the window exceeds `b_max` it re-estimates the demands
//! from the window's arrivals, re-solves warm from the previous basis and installs the new
//! thresholds. Streams already admitted keep their slots: a lower threshold only refuses new
//! ones. Every window also compares each edge's report with the plan and installs again what
//! an edge lacks (it restarted); such an edge is left out of the orders until it holds them.
//! An edge may also ask for its thresholds when it starts (`GET /internal/thresholds?edge=E`).
//!
//! `GET /steering/{population}` answers the content-steering manifest: `VERSION`, `TTL`,
//! `RELOAD-URI` and `PATHWAY-PRIORITY`, the population's edges (pathways) by share, largest
//! first (ties: fewer hops, then order). `GET /allocation` shows the plan; `/metrics` the
//! blocking per population, re-solves and the solve time.
//!
//! Streaming sessions (with an asset, [`SteerConfig::media`]): `GET /play/{population}/master.m3u8`
//! and `GET /play/{population}/manifest.mpd` open a session and answer its multivariant
//! playlist or MPD ([`crate::media`]), whose pathways are the edges the session's order lists
//! and whose steering URI is `/steering/{population}?session=S` (`/steering/{population}/dash`
//! for DASH). The session's name S is a token signed with the topology's secret
//! ([`crate::session`]), valid for [`SessionLimits::lifetime`], which the edges check before
//! the session may take a slot. A population opens at most [`SessionLimits::rate`] times its
//! allocated streams of new sessions per window (more get 429); the session table holds
//! [`SessionLimits::max`], and when it is full a
//! newcomer takes the place of the session unused the longest, if that one has been idle for
//! three TTLs (a player reloads the manifest every TTL), and is refused with 503 otherwise:
//! a flood of `/play` cannot push out sessions in use. A session's order comes from the
//! library's rule
//! ([`cdnlab::alloc::steering::session_order`]): the n-th session of a population gets the
//! n-th point of the golden-ratio sequence, so the first pathways of N sessions follow the
//! allocation's shares; the order is sticky while the shares stand (`RELOAD-URI` keeps the
//! session). The player's report is honoured: a pathway whose `_HLS_throughput` (or
//! `_DASH_throughput`) for this session is below the asset's lowest rendition goes last. An edge
//! that the session's playlist did not list (one that gained a share after a re-allocation, or
//! came back) is added with `PATHWAY-CLONES`: a copy of a listed pathway with the edge's host
//! and, for hls.js, which replaces only host names, every variant's URI (`PER-VARIANT-URIS`).
//! Edges whose report failed in the last window, or taken out by the operator
//! (`POST /internal/edge?name=E&out=true`, with the secret), are left out of every order.

mod deployment;
mod routes;

use routes::*;

use crate::Error;
use crate::edge::Share;
use crate::media::{Asset, Pathway};
use crate::serve::SECRET;
use crate::serve::metrics::{self, Kind, Metrics, family, single};
use crate::serve::shaper::Allowance;
use crate::serve::warn::{self, Warn};
use crate::serve::{self, Limits, Running};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cdnlab::alloc::simplex::Basis;
use cdnlab::alloc::{admission, steering};
use cdnlab::steer::policy::{self, Memory, Policy, Steering};
use cdnlab::steer::tally::Summary;
use deployment::good_name;
pub use deployment::{Deployment, DeploymentError, Population, Server};
use serde::Deserialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How the steering server behaves.
#[derive(Debug, Clone)]
pub struct SteerConfig {
    pub topology: Deployment,
    pub listen: SocketAddr,
    /// Seconds a manifest stays valid.
    pub ttl: u32,
    /// Reporting window.
    pub window: Duration,
    /// Blocking in a window above which the allocation is re-solved.
    pub b_max: f64,
    pub timeout: Duration,
    pub limits: Limits,
    /// Every population's guaranteed share after any solve, as a fraction of an equal split
    /// of the capacity (at least 1 stream each): a flood from one population cannot take
    /// the others' whole share (`cdnlab::alloc::admission::demand_rows`).
    pub min_share: f64,
    /// The asset streamed through the edges: enables `/play/...` sessions.
    pub media: Option<Arc<Asset>>,
    /// Session tokens' lifetime, new sessions per window, the session table's size.
    pub sessions: SessionLimits,
    /// Keep each population the planned share it uses in every re-allocation
    /// ([`admission::guarantee`]); false: re-allocate by the demand estimate alone (with the
    /// `min_share` floor), as the paper's rule does.
    pub guarantee: bool,
    /// How a session's pathways are ordered (`cdnlab::steer::policy`): `tp` (the default,
    /// TP-R8's shares) or another of the library's policies, fed each window by the edges'
    /// reports (requests in flight, CMCD aggregates, a timed probe).
    pub policy: Policy,
}

/// What bounds streaming sessions at the steering server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionLimits {
    /// How long a session token may start a session at an edge.
    pub lifetime: Duration,
    /// New sessions a population may open per window, as a multiple of its allocated streams.
    pub rate: f64,
    /// Most sessions remembered.
    pub max: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            lifetime: DEFAULT_SESSION_LIFETIME,
            rate: DEFAULT_SESSION_RATE,
            max: MAX_SESSIONS,
        }
    }
}

/// The default of [`SessionLimits::lifetime`]: 6 hours, a long film with its pauses; a
/// token copied out of a playlist starts sessions for no longer.
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(6 * 3600);

/// The default of [`SessionLimits::rate`]: twice the population's allocated streams per
/// window. Admitted sessions hold their slots for minutes, so a population that fills its
/// share from nothing opens its allocation once; twice leaves room for players that give up
/// and come back, and bounds a flood to that.
pub const DEFAULT_SESSION_RATE: f64 = 2.0;

/// The default of [`SessionLimits::max`] (a forgotten session still gets manifests,
/// with its point from its token's serial and every edge taken as listed).
pub const MAX_SESSIONS: usize = 65_536;

/// A streaming session opened by `/play`.
#[derive(Debug, Clone)]
struct Session {
    population: usize,
    point: f64,
    /// The edges its playlist or MPD listed.
    listed: Vec<usize>,
    /// The pathway it last reported (`_HLS_pathway`), and when.
    pathway: Option<(usize, Instant)>,
    /// When it was last used (opened, or a manifest asked for), and its place in that order.
    used: Instant,
    tick: u64,
    /// What the policy remembers of it (GWTW's candidates and windows).
    mem: Memory,
    /// Steering manifests it asked for.
    reloads: u64,
    /// Ended by the operator: its manifests answer 410 Gone.
    ended: bool,
    /// Its next manifest answers 429 with this Retry-After, in seconds (the operator's).
    throttle: Option<u32>,
}

/// Sessions by id, in the order of their last use, with per-population counts.
#[derive(Debug, Default)]
struct Sessions {
    by_id: HashMap<String, Session>,
    /// Ids by last use, least recent first.
    by_use: std::collections::BTreeMap<u64, String>,
    ticks: u64,
    /// Sessions opened per population (the next serial).
    opened: Vec<u64>,
    /// New sessions per population: its allowance, and refusals for the rate and for a full
    /// table.
    allowance: Vec<Option<Allowance>>,
    refused_rate: Vec<u64>,
    refused_full: Vec<u64>,
    evicted: u64,
}

impl Sessions {
    /// Session `id` of population `i`, marked used now; None if there is no such session.
    fn touch(&mut self, id: &str, i: usize, now: Instant) -> Option<&mut Session> {
        let x = self.by_id.get_mut(id).filter(|x| x.population == i)?;
        self.ticks += 1;
        self.by_use.remove(&x.tick);
        x.tick = self.ticks;
        x.used = now;
        self.by_use.insert(x.tick, id.to_string());
        Some(x)
    }

    fn insert(&mut self, id: String, mut x: Session) {
        self.ticks += 1;
        x.tick = self.ticks;
        self.by_use.insert(x.tick, id.clone());
        if let Some(old) = self.by_id.insert(id, x) {
            self.by_use.remove(&old.tick);
        }
    }

    /// Room for one more of at most `max`: forgets the session unused the longest if it has
    /// been idle for `idle` (counted); false if the table is full of sessions in use.
    fn make_room(&mut self, max: usize, idle: Duration, now: Instant) -> bool {
        if self.by_id.len() < max {
            return true;
        }
        let Some((&tick, id)) = self.by_use.first_key_value() else {
            return max > 0;
        };
        let idle_enough = self
            .by_id
            .get(id)
            .is_none_or(|x| now.saturating_duration_since(x.used) >= idle);
        if !idle_enough {
            return false;
        }
        let id = id.clone();
        self.by_use.remove(&tick);
        self.by_id.remove(&id);
        self.evicted += 1;
        true
    }
}

/// The seed of the policies' random draws (GWTW's candidates, CMCD-QoE's damping).
const POLICY_SEED: u64 = 41;

/// The default of [`SteerConfig::min_share`].
pub const DEFAULT_MIN_SHARE: f64 = 0.1;

/// Failures of edge reports and threshold installations, logged at most every 10 s each.
static REPORT: Warn = Warn::new("steering report", Duration::from_secs(10));
static INSTALL: Warn = Warn::new("steering install", Duration::from_secs(10));

/// Largest report an edge may send (4096 populations of a few dozen bytes each fit).
const MAX_REPORT_BYTES: usize = 4 << 20;

/// The allocation in force.
#[derive(Debug, Clone)]
struct Plan {
    /// Rows under the declared demands: what each population is planned to have.
    planned: Vec<i64>,
    /// Thresholds, population by server.
    thresholds: Vec<i64>,
    basis: Basis,
    demand: Vec<i64>,
}

struct SteerState {
    cfg: SteerConfig,
    addr: SocketAddr,
    plan: Mutex<Plan>,
    /// Last totals read from each edge, per population: (admitted, blocked).
    seen: Mutex<Vec<HashMap<String, (u64, u64)>>>,
    /// Blocking per population in the last window.
    blocking: Mutex<Vec<f64>>,
    resolves: AtomicU64,
    report_errors: AtomicU64,
    install_errors: AtomicU64,
    solve_micros: AtomicU64,
    client: reqwest::Client,
    metrics: Metrics,
    sessions: Mutex<Sessions>,
    /// Per edge: whether its last report was read, whether it showed the plan's thresholds
    /// (or they were installed again since), and whether the operator took it out.
    reachable: Mutex<Vec<bool>>,
    ready: Mutex<Vec<bool>>,
    out: Mutex<Vec<bool>>,
    /// Threshold installations made again because an edge's report lacked them.
    reinstalls: AtomicU64,
    /// The policy (with its memory of the pathways), what each edge reported in the last
    /// window, the policy's random draws (a fixed seed: the same requests get the same
    /// answers), and the time origin of its clock.
    steering: Mutex<Steering>,
    signals: Mutex<Vec<Signal>>,
    rng: Mutex<cdnlab::rng::Rng>,
    started: Instant,
}

/// What an edge reported in the last window, for the policies other than `tp`.
#[derive(Debug, Clone, Copy, Default)]
struct Signal {
    /// Streams it was serving (Prequal's requests in flight).
    in_flight: f64,
    /// How long its report took to answer, ms: a probe of its latency (None: it failed).
    latency_ms: Option<f64>,
    /// Its sessions' CMCD aggregates (`GET /internal/qoe`; read only for `cmcd-qoe`).
    qoe: Summary,
}

/// A running steering server.
pub struct Steer {
    /// The server; stopping it stops the window loop too.
    pub server: Running,
    state: Arc<SteerState>,
}

impl Steer {
    /// Re-solves made so far.
    pub fn resolves(&self) -> u64 {
        self.state.resolves.load(Relaxed)
    }

    /// Seconds the last solve took (the initial one, or the last re-solve).
    pub fn solve_seconds(&self) -> f64 {
        self.state.solve_micros.load(Relaxed) as f64 / 1e6
    }

    /// Thresholds in force, population by server.
    pub fn thresholds(&self) -> Vec<i64> {
        self.state
            .plan
            .lock()
            .expect("plan lock")
            .thresholds
            .clone()
    }

    /// Takes edge `name` out of every order (or puts it back), as `POST /internal/edge` does;
    /// false if there is no such edge.
    pub fn set_out(&self, name: &str, out: bool) -> bool {
        set_out(&self.state, name, out)
    }

    /// Ends session `id` (its steering manifests answer 410 from now on) or makes its next
    /// one answer 429 with `Retry-After: retry_after`, as `POST /internal/session` does; false
    /// if there is no such session.
    pub fn session_control(&self, id: &str, end: bool, retry_after: Option<u32>) -> bool {
        session_control(&self.state, id, end, retry_after)
    }

    /// Steering manifests session `id` asked for (None: no such session).
    pub fn reloads(&self, id: &str) -> Option<u64> {
        let sessions = self.state.sessions.lock().expect("sessions lock");
        sessions.by_id.get(id).map(|x| x.reloads)
    }
}

/// Solves the allocation for `demand` (scaled to the total capacity, every population at least
/// its floor of `min_share`, so each keeps a share, and its `guaranteed` streams), warm from
/// `basis` if given; returns the thresholds, the basis and the rows.
fn solve(
    t: &Deployment,
    demand: &[i64],
    min_share: f64,
    guaranteed: &[i64],
    basis: Option<&Basis>,
) -> Result<(Vec<i64>, Basis, Vec<i64>), cdnlab::Error> {
    let capacity: Vec<i64> = t.servers.iter().map(|s| s.capacity).collect();
    admission::thresholds(
        &capacity,
        demand,
        t.population_costs(),
        min_share,
        guaranteed,
        basis,
    )
}

/// Starts the steering server: solves, installs the thresholds, serves manifests.
pub async fn start(cfg: SteerConfig) -> Result<Steer, Error> {
    cfg.limits.validate()?;
    if !(cfg.b_max > 0.0 && cfg.b_max < 1.0) {
        return Err(cdnlab::Error::param("b-max", cfg.b_max, "a share in (0, 1)").into());
    }
    if cfg.window.is_zero() || cfg.timeout.is_zero() || cfg.ttl == 0 {
        return Err(cdnlab::Error::param("window/timeout/ttl", "0", "values > 0").into());
    }
    let t = &cfg.topology;
    let demand: Vec<i64> = t.populations.iter().map(|p| p.demand).collect();
    let clock = Instant::now();
    if !(0.0..=1.0).contains(&cfg.min_share) {
        return Err(
            cdnlab::Error::param("min-share", cfg.min_share, "a fraction in [0, 1]").into(),
        );
    }
    let limits = cfg.sessions;
    if !(limits.rate > 0.0 && limits.rate.is_finite()) {
        return Err(cdnlab::Error::param(
            "session-rate",
            limits.rate,
            "a multiple > 0 of the allocated streams",
        )
        .into());
    }
    if limits.max == 0 || limits.lifetime.is_zero() {
        return Err(
            cdnlab::Error::param("max-sessions/session-lifetime", "0", "values > 0").into(),
        );
    }
    let none = vec![0; demand.len()];
    let (thresholds, basis, planned) = solve(t, &demand, cfg.min_share, &none, None)?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(cfg.timeout)
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let listener = serve::bind(cfg.listen).await?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("listening socket", e))?;
    let state = Arc::new(SteerState {
        addr,
        plan: Mutex::new(Plan {
            planned,
            thresholds,
            basis,
            demand,
        }),
        seen: Mutex::new(vec![HashMap::new(); t.servers.len()]),
        blocking: Mutex::new(vec![0.0; t.populations.len()]),
        resolves: AtomicU64::new(0),
        report_errors: AtomicU64::new(0),
        install_errors: AtomicU64::new(0),
        solve_micros: AtomicU64::new(clock.elapsed().as_micros() as u64),
        client,
        metrics: Metrics::default(),
        sessions: Mutex::new(Sessions {
            opened: vec![0; t.populations.len()],
            allowance: vec![None; t.populations.len()],
            refused_rate: vec![0; t.populations.len()],
            refused_full: vec![0; t.populations.len()],
            ..Sessions::default()
        }),
        reachable: Mutex::new(vec![true; t.servers.len()]),
        ready: Mutex::new(vec![true; t.servers.len()]),
        out: Mutex::new(vec![false; t.servers.len()]),
        reinstalls: AtomicU64::new(0),
        steering: Mutex::new(Steering::new(cfg.policy, policy::Params::default())?),
        signals: Mutex::new(vec![Signal::default(); t.servers.len()]),
        rng: Mutex::new(cdnlab::rng::stream(POLICY_SEED, 0, 0)),
        started: Instant::now(),
        cfg,
    });
    install(&state).await;
    let router = Router::new()
        .route("/steering/{population}", get(manifest))
        .route("/steering/{population}/dash", get(dash_manifest))
        .route("/play/{population}/{file}", get(play))
        .route("/internal/edge", axum::routing::post(edge_out))
        .route("/internal/session", axum::routing::post(session_out))
        .route("/internal/thresholds", get(edge_thresholds))
        .route("/allocation", get(allocation))
        .route("/health", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), record))
        .with_state(state.clone());
    let server = serve::spawn(listener, router, state.cfg.limits, &state.metrics)?
        .with_background(|stopped| windows(state.clone(), stopped));
    Ok(Steer { server, state })
}

/// Installs the plan's thresholds on every edge (failures are counted and retried at the next
/// re-solve).
async fn install(s: &SteerState) {
    let thresholds = s.plan.lock().expect("plan lock").thresholds.clone();
    let (failed, reason) = install_thresholds(&s.client, &s.cfg.topology, &thresholds).await;
    s.install_errors.fetch_add(failed, Relaxed);
    if let Some(r) = reason {
        INSTALL.warn(format!(
            "{failed} threshold installations; the first at {r}"
        ));
    }
}

/// Installs thresholds (population by server) on the topology's edges; returns how many
/// installations failed, and the first failure.
pub async fn install_thresholds(
    client: &reqwest::Client,
    t: &Deployment,
    thresholds: &[i64],
) -> (u64, Option<String>) {
    let (mut failed, mut reason) = (0, None);
    for j in 0..t.servers.len() {
        let (f, r) = install_at(client, t, thresholds, j).await;
        failed += f;
        reason = reason.or(r);
    }
    (failed, reason)
}

/// Installs edge `j`'s thresholds; returns how many installations failed, and the first
/// failure.
async fn install_at(
    client: &reqwest::Client,
    t: &Deployment,
    thresholds: &[i64],
    j: usize,
) -> (u64, Option<String>) {
    let n = t.servers.len();
    let server = &t.servers[j];
    let (mut failed, mut reason) = (0, None);
    for (i, p) in t.populations.iter().enumerate() {
        let url = format!(
            "http://{}/internal/admission?population={}&limit={}",
            server.addr,
            p.name,
            thresholds[i * n + j]
        );
        let why = match client.post(url).header(SECRET, &t.secret).send().await {
            Ok(r) if r.status() == reqwest::StatusCode::NO_CONTENT => continue,
            Ok(r) => format!("answered {}", r.status()),
            Err(e) => warn::cause(&e),
        };
        failed += 1;
        reason.get_or_insert(format!("edge {} ({}): {why}", server.name, server.addr));
    }
    (failed, reason)
}

/// Every window: read the edges' counts, and re-solve if some population blocked too much.
async fn windows(s: Arc<SteerState>, mut stopped: watch::Receiver<bool>) {
    let t = &s.cfg.topology;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(s.cfg.window) => {}
            _ = stopped.changed() => return,
        }
        let (mut arrivals, mut blocked, mut in_use) = (
            vec![0u64; t.populations.len()],
            vec![0u64; t.populations.len()],
            vec![0u64; t.populations.len()],
        );
        for (j, server) in t.servers.iter().enumerate() {
            let probe = Instant::now();
            let report = s
                .client
                .get(format!("http://{}/internal/admission", server.addr))
                .header(SECRET, &t.secret)
                .send()
                .await;
            let took_ms = probe.elapsed().as_secs_f64() * 1000.0;
            // Read at most MAX_REPORT_BYTES: an edge cannot make this server buffer more.
            let shares: Result<HashMap<String, Share>, String> = match report {
                Ok(r) if r.status().is_success() => serve::body_capped(r, MAX_REPORT_BYTES)
                    .await
                    .ok_or_else(|| format!("no body, or over {MAX_REPORT_BYTES} bytes"))
                    .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())),
                Ok(r) => Err(format!("answered {}", r.status())),
                Err(e) => Err(warn::cause(&e)),
            };
            s.reachable.lock().expect("reachable lock")[j] = shares.is_ok();
            let shares = match shares {
                Ok(x) => x,
                Err(why) => {
                    s.report_errors.fetch_add(1, Relaxed);
                    REPORT.warn(format!("edge {} ({}): {why}", server.name, server.addr));
                    s.signals.lock().expect("signals lock")[j].latency_ms = None;
                    continue;
                }
            };
            if s.cfg.policy != Policy::Shares {
                let qoe = if s.cfg.policy == Policy::Qoe {
                    qoe_of(&s, server).await
                } else {
                    Summary::default()
                };
                s.signals.lock().expect("signals lock")[j] = Signal {
                    // Prequal's requests in flight: responses under way at the edge now.
                    in_flight: shares.values().map(|x| x.in_flight as f64).sum(),
                    latency_ms: Some(took_ms),
                    qoe,
                };
            }
            // An edge that restarted (or lost an installation) reports other thresholds than
            // the plan's: it is not steered to until they are installed again, now.
            let plan = s.plan.lock().expect("plan lock").thresholds.clone();
            let n = t.servers.len();
            let holds = t.populations.iter().enumerate().all(|(i, p)| {
                shares
                    .get(&p.name)
                    .is_some_and(|x| i64::try_from(x.limit) == Ok(plan[i * n + j]))
            });
            if !holds {
                let (failed, reason) = install_at(&s.client, t, &plan, j).await;
                s.reinstalls.fetch_add(1, Relaxed);
                s.install_errors.fetch_add(failed, Relaxed);
                if let Some(r) = reason {
                    INSTALL.warn(format!(
                        "{failed} threshold installations; the first at {r}"
                    ));
                }
                s.ready.lock().expect("ready lock")[j] = failed == 0;
            } else {
                s.ready.lock().expect("ready lock")[j] = true;
            }
            let mut seen = s.seen.lock().expect("seen lock");
            for (i, p) in t.populations.iter().enumerate() {
                let Some(now) = shares.get(&p.name) else {
                    continue;
                };
                let (a0, b0) = seen[j].get(&p.name).copied().unwrap_or((0, 0));
                // Counts only grow; a restarted edge starts again from 0.
                let (da, db) = if now.admitted >= a0 && now.blocked >= b0 {
                    (now.admitted - a0, now.blocked - b0)
                } else {
                    (now.admitted, now.blocked)
                };
                // Saturating: an edge's counts may be anything.
                arrivals[i] = arrivals[i].saturating_add(da.saturating_add(db));
                blocked[i] = blocked[i].saturating_add(db);
                // What the population used: the most streams it held here in the window, and
                // the streams refused (a sum over edges of peaks: at most their sum's peak).
                in_use[i] = in_use[i].saturating_add(now.peak.max(now.active).saturating_add(db));
                seen[j].insert(p.name.clone(), (now.admitted, now.blocked));
            }
        }
        let b: Vec<f64> = arrivals
            .iter()
            .zip(&blocked)
            .map(|(&a, &b)| if a == 0 { 0.0 } else { b as f64 / a as f64 })
            .collect();
        *s.blocking.lock().expect("blocking lock") = b;
        // The library's re-allocation rule, as the simulator runs it.
        if let Some(estimate) = admission::reallocation(&arrivals, &blocked, s.cfg.b_max) {
            let (basis, planned) = {
                let plan = s.plan.lock().expect("plan lock");
                (plan.basis.clone(), plan.planned.clone())
            };
            let guaranteed = if s.cfg.guarantee {
                let used: Vec<i64> = in_use
                    .iter()
                    .map(|&u| i64::try_from(u).unwrap_or(i64::MAX))
                    .collect();
                admission::guarantee(&planned, &used)
            } else {
                vec![0; planned.len()]
            };
            let clock = Instant::now();
            if let Ok((thresholds, basis, _)) =
                solve(t, &estimate, s.cfg.min_share, &guaranteed, Some(&basis))
            {
                s.solve_micros
                    .store(clock.elapsed().as_micros() as u64, Relaxed);
                *s.plan.lock().expect("plan lock") = Plan {
                    planned,
                    thresholds,
                    basis,
                    demand: estimate,
                };
                s.resolves.fetch_add(1, Relaxed);
                install(&s).await;
            }
        }
    }
}

/// An edge's CMCD aggregates (`GET /internal/qoe`, with the secret); none when it does not
/// answer, or answers what is not one (read at most [`MAX_REPORT_BYTES`]).
async fn qoe_of(s: &SteerState, server: &Server) -> Summary {
    let t = &s.cfg.topology;
    let r = s
        .client
        .get(format!("http://{}/internal/qoe", server.addr))
        .header(SECRET, &t.secret)
        .send()
        .await;
    let body = match r {
        Ok(r) if r.status().is_success() => serve::body_capped(r, MAX_REPORT_BYTES).await,
        _ => None,
    };
    match body.map(|b| serde_json::from_slice::<crate::edge::Qoe>(&b)) {
        Some(Ok(q)) => q.summary,
        Some(Err(e)) => {
            REPORT.warn(format!("edge {} /internal/qoe: {e}", server.name));
            Summary::default()
        }
        None => Summary::default(),
    }
}

#[cfg(test)]
mod tests;
