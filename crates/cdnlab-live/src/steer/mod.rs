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
//! ones.
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
//! for DASH). A session's order comes from the library's rule
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

mod topology;

use crate::Error;
use crate::edge::Share;
use crate::media::{Asset, Pathway};
use crate::serve::SECRET;
use crate::serve::metrics::{self, Kind, Metrics, family, single};
use crate::serve::warn::{self, Warn};
use crate::serve::{self, Limits, Running};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cdnlab::alloc::simplex::Basis;
use cdnlab::alloc::{Problem, admission, steering};
use serde::Deserialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use topology::good_name;
pub use topology::{Population, Server, Topology, TopologyError};

/// How the steering server behaves.
#[derive(Debug, Clone)]
pub struct SteerConfig {
    pub topology: Topology,
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
}

/// Most sessions remembered (the oldest is forgotten first; a forgotten session still gets
/// manifests, with a point hashed from its id and every edge taken as listed).
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
}

/// Sessions by id, with the order they came in and the count per population.
#[derive(Debug, Default)]
struct Sessions {
    by_id: HashMap<String, Session>,
    arrival: std::collections::VecDeque<String>,
    opened: Vec<u64>,
}

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
    /// Per edge: whether its last report was read, and whether the operator took it out.
    reachable: Mutex<Vec<bool>>,
    out: Mutex<Vec<bool>>,
}

/// A running steering server.
pub struct Steer {
    pub server: Running,
    state: Arc<SteerState>,
    stop: watch::Sender<bool>,
    background: JoinHandle<()>,
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

    /// Stops the server and its window loop.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.background.await;
        self.server.stop().await;
    }

    /// Stops gracefully: no more windows, in-flight answers finish (for up to `drain`).
    pub async fn drain(self, drain: Duration) {
        let _ = self.stop.send(true);
        let _ = self.background.await;
        self.server.drain(drain).await;
    }
}

/// Solves the allocation for `demand` (scaled to the total capacity, every population at least
/// its floor of `min_share`, so each keeps a share), warm from `basis` if given.
fn solve(
    t: &Topology,
    demand: &[i64],
    min_share: f64,
    basis: Option<&Basis>,
) -> Result<(Vec<i64>, Basis), cdnlab::Error> {
    let capacity: Vec<i64> = t.servers.iter().map(|s| s.capacity).collect();
    let rows = admission::demand_rows(demand, capacity.iter().sum(), min_share);
    let p = Problem::new(rows, capacity, t.costs())?;
    let (a, b) = admission::optimal(&p, basis)?;
    Ok((a.dense(p.rows(), p.cols()), b))
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
    let (thresholds, basis) = solve(t, &demand, cfg.min_share, None)?;
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
            ..Sessions::default()
        }),
        reachable: Mutex::new(vec![true; t.servers.len()]),
        out: Mutex::new(vec![false; t.servers.len()]),
        cfg,
    });
    install(&state).await;
    let router = Router::new()
        .route("/steering/{population}", get(manifest))
        .route("/steering/{population}/dash", get(dash_manifest))
        .route("/play/{population}/{file}", get(play))
        .route("/internal/edge", axum::routing::post(edge_out))
        .route("/allocation", get(allocation))
        .route("/health", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), record))
        .with_state(state.clone());
    let server = serve::spawn(listener, router, state.cfg.limits, &state.metrics)?;
    let (stop, stopped) = watch::channel(false);
    let background = tokio::spawn(windows(state.clone(), stopped));
    Ok(Steer {
        server,
        state,
        stop,
        background,
    })
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
/// installations failed.
pub async fn install_thresholds(
    client: &reqwest::Client,
    t: &Topology,
    thresholds: &[i64],
) -> (u64, Option<String>) {
    let n = t.servers.len();
    let (mut failed, mut reason) = (0, None);
    for (j, server) in t.servers.iter().enumerate() {
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
        let (mut arrivals, mut blocked) = (
            vec![0u64; t.populations.len()],
            vec![0u64; t.populations.len()],
        );
        for (j, server) in t.servers.iter().enumerate() {
            let report = s
                .client
                .get(format!("http://{}/internal/admission", server.addr))
                .header(SECRET, &t.secret)
                .send()
                .await;
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
                    continue;
                }
            };
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
            let basis = s.plan.lock().expect("plan lock").basis.clone();
            let clock = Instant::now();
            if let Ok((thresholds, basis)) = solve(t, &estimate, s.cfg.min_share, Some(&basis)) {
                s.solve_micros
                    .store(clock.elapsed().as_micros() as u64, Relaxed);
                *s.plan.lock().expect("plan lock") = Plan {
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

/// The answer to an unknown population.
fn unknown_population() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({"error": "unknown population"})),
    )
        .into_response()
}

/// Which edges may be in an order now: reachable at the last report and not taken out.
fn usable(s: &SteerState) -> Vec<bool> {
    let reachable = s.reachable.lock().expect("reachable lock");
    let out = s.out.lock().expect("out lock");
    reachable
        .iter()
        .zip(out.iter())
        .map(|(&r, &o)| r && !o)
        .collect()
}

fn set_out(s: &SteerState, name: &str, out: bool) -> bool {
    let Some(j) = s.cfg.topology.servers.iter().position(|e| e.name == name) else {
        return false;
    };
    s.out.lock().expect("out lock")[j] = out;
    true
}

/// The order of population `i`'s session at `point`, by the library's rule, with the
/// pathways in `slow` moved last.
fn order_for(s: &SteerState, i: usize, point: f64, slow: &[usize]) -> Vec<usize> {
    let (shares, hops, up) = population_view(s, i);
    let mut order = steering::session_order(&shares, &hops, &up, point);
    order.sort_by_key(|j| slow.contains(j));
    order
}

/// Population `i`'s edges when no session is named: by share, largest first
/// ([`steering::share_order`]).
fn population_order(s: &SteerState, i: usize) -> Vec<usize> {
    let (shares, hops, up) = population_view(s, i);
    steering::share_order(&shares, &hops, &up)
}

/// What the steering rule reads for population `i`: its thresholds (shares) at each edge, the
/// hops to each edge, and which edges are usable.
fn population_view(s: &SteerState, i: usize) -> (Vec<i64>, Vec<i64>, Vec<bool>) {
    let t = &s.cfg.topology;
    let n = t.servers.len();
    let shares = s.plan.lock().expect("plan lock").thresholds[i * n..(i + 1) * n].to_vec();
    let hops: Vec<i64> = t
        .servers
        .iter()
        .map(|e| t.hops[t.populations[i].metro][e.metro])
        .collect();
    (shares, hops, usable(s))
}

/// The pathways a player reports as slower than the lowest rendition: pairs of
/// `{prefix}_pathway` and `{prefix}_throughput` (comma-separated lists for DASH), bits per second.
fn slow_pathways(s: &SteerState, q: &HashMap<String, String>, prefix: &str) -> Vec<usize> {
    let Some(min) = s.cfg.media.as_ref().map(|a| a.min_bandwidth as f64) else {
        return Vec::new();
    };
    let (Some(paths), Some(rates)) = (
        q.get(&format!("{prefix}_pathway")),
        q.get(&format!("{prefix}_throughput")),
    ) else {
        return Vec::new();
    };
    let servers = &s.cfg.topology.servers;
    paths
        .split(',')
        .zip(rates.split(','))
        .filter(|(_, r)| r.trim().parse::<f64>().is_ok_and(|r| r > 0.0 && r < min))
        .filter_map(|(p, _)| servers.iter().position(|e| e.name == p.trim()))
        .collect()
}

/// A content-steering manifest (HLS, or DASH-IF's, which has the same keys).
async fn manifest(
    State(s): State<Arc<SteerState>>,
    Path(population): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    steering_answer(&s, &population, &q, false)
}

async fn dash_manifest(
    State(s): State<Arc<SteerState>>,
    Path(population): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    steering_answer(&s, &population, &q, true)
}

fn steering_answer(
    s: &SteerState,
    population: &str,
    q: &HashMap<String, String>,
    dash: bool,
) -> Response {
    let t = &s.cfg.topology;
    let Some(i) = t.populations.iter().position(|p| p.name == population) else {
        return unknown_population();
    };
    let n = t.servers.len();
    let session = q.get("session").filter(|x| good_name(x));
    let prefix = if dash { "_DASH" } else { "_HLS" };
    let slow = slow_pathways(s, q, prefix);
    let (order, listed) = match session {
        None => {
            // No session: the population's edges by share, largest first.
            (population_order(s, i), (0..n).collect::<Vec<_>>())
        }
        Some(id) => {
            let mut sessions = s.sessions.lock().expect("sessions lock");
            let known = sessions
                .by_id
                .get_mut(id.as_str())
                .filter(|x| x.population == i);
            let (point, listed) = match known {
                Some(x) => {
                    if let Some(j) = q
                        .get("_HLS_pathway")
                        .and_then(|p| t.servers.iter().position(|e| &e.name == p))
                    {
                        x.pathway = Some((j, Instant::now()));
                    }
                    (x.point, x.listed.clone())
                }
                None => (steering::hashed_point(id), (0..n).collect()),
            };
            drop(sessions);
            (order_for(s, i, point, &slow), listed)
        }
    };
    let path = if dash {
        format!("{population}/dash")
    } else {
        population.to_string()
    };
    let reload = match session {
        Some(id) => format!("http://{}/steering/{path}?session={id}", s.addr),
        None => format!("http://{}/steering/{path}", s.addr),
    };
    let mut body = serde_json::json!({
        "VERSION": 1,
        "TTL": s.cfg.ttl,
        "RELOAD-URI": reload,
        "PATHWAY-PRIORITY": order.iter().map(|&j| t.servers[j].name.clone()).collect::<Vec<_>>(),
    });
    let clones: Vec<serde_json::Value> = match (session, listed.first()) {
        (Some(id), Some(&base)) => order
            .iter()
            .filter(|j| !listed.contains(j))
            .map(|&j| clone_of(s, i, id, base, j, dash))
            .collect(),
        _ => Vec::new(),
    };
    if !clones.is_empty() {
        body["PATHWAY-CLONES"] = serde_json::Value::Array(clones);
    }
    (
        [
            (header::CACHE_CONTROL, format!("max-age={}", s.cfg.ttl)),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// A session's URL prefix on edge `j`.
fn session_base(s: &SteerState, i: usize, session: &str, j: usize) -> String {
    let t = &s.cfg.topology;
    format!(
        "http://{}/p/{}/{session}/",
        t.servers[j].addr, t.populations[i].name
    )
}

/// A `PATHWAY-CLONES` entry adding edge `j` as a copy of listed pathway `base`.
fn clone_of(
    s: &SteerState,
    i: usize,
    session: &str,
    base: usize,
    j: usize,
    dash: bool,
) -> serde_json::Value {
    let t = &s.cfg.topology;
    let addr = t.servers[j].addr;
    let mut replacement = serde_json::json!({});
    if dash {
        // dash.js puts HOST, port included, in front of the base URL's path.
        replacement["HOST"] = addr.to_string().into();
    } else {
        replacement["HOST"] = addr.ip().to_string().into();
        if let Some(text) = s
            .cfg
            .media
            .as_ref()
            .and_then(|a| a.files.text(crate::media::HLS_MANIFEST))
        {
            let uris: serde_json::Map<String, serde_json::Value> =
                crate::media::per_variant_uris(text, &session_base(s, i, session, j))
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect();
            replacement["PER-VARIANT-URIS"] = uris.into();
        }
    }
    serde_json::json!({
        "BASE-ID": t.servers[base].name,
        "ID": t.servers[j].name,
        "URI-REPLACEMENT": replacement,
    })
}

/// Opens a session and answers its multivariant playlist (`master.m3u8`) or MPD
/// (`manifest.mpd`).
async fn play(
    State(s): State<Arc<SteerState>>,
    Path((population, file)): Path<(String, String)>,
) -> Response {
    let t = &s.cfg.topology;
    let Some(asset) = s.cfg.media.clone() else {
        return (
            StatusCode::NOT_FOUND,
            "no media asset on this steering server (--media)\n",
        )
            .into_response();
    };
    let Some(i) = t.populations.iter().position(|p| p.name == population) else {
        return unknown_population();
    };
    let dash = match file.as_str() {
        crate::media::HLS_MANIFEST => false,
        crate::media::DASH_MANIFEST => true,
        _ => {
            return (
                StatusCode::NOT_FOUND,
                format!(
                    "{} or {} expected\n",
                    crate::media::HLS_MANIFEST,
                    crate::media::DASH_MANIFEST
                ),
            )
                .into_response();
        }
    };
    let (id, point) = {
        let mut sessions = s.sessions.lock().expect("sessions lock");
        let k = sessions.opened[i];
        sessions.opened[i] += 1;
        (
            format!("{}-{k}", t.populations[i].name),
            steering::session_point(k),
        )
    };
    let mut listed = order_for(&s, i, point, &[]);
    if listed.is_empty() {
        // Nothing usable now: list every edge, so the player has somewhere to go.
        listed = (0..t.servers.len()).collect();
    }
    let pathways: Vec<Pathway> = listed
        .iter()
        .map(|&j| Pathway {
            id: t.servers[j].name.clone(),
            base: session_base(&s, i, &id, j),
        })
        .collect();
    let (body, kind) = if dash {
        let uri = format!("http://{}/steering/{population}/dash?session={id}", s.addr);
        (
            asset.dash(&pathways, &uri),
            crate::media::content_type(crate::media::DASH_MANIFEST),
        )
    } else {
        let uri = format!("http://{}/steering/{population}?session={id}", s.addr);
        (
            asset.hls(&pathways, &uri),
            crate::media::content_type(crate::media::HLS_MANIFEST),
        )
    };
    {
        let mut sessions = s.sessions.lock().expect("sessions lock");
        if sessions.by_id.len() >= MAX_SESSIONS
            && let Some(old) = sessions.arrival.pop_front()
        {
            sessions.by_id.remove(&old);
        }
        sessions.arrival.push_back(id.clone());
        sessions.by_id.insert(
            id,
            Session {
                population: i,
                point,
                listed,
                pathway: None,
            },
        );
    }
    (
        [
            (header::CONTENT_TYPE, kind.to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
        ],
        body,
    )
        .into_response()
}

/// The query of `POST /internal/edge`.
#[derive(Deserialize)]
struct EdgeOut {
    name: String,
    out: bool,
}

async fn edge_out(
    State(s): State<Arc<SteerState>>,
    h: axum::http::HeaderMap,
    q: Result<Query<EdgeOut>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if !crate::serve::has_secret(&h, &s.cfg.topology.secret) {
        return crate::serve::secret_required();
    }
    let Ok(Query(q)) = q else {
        return (
            StatusCode::BAD_REQUEST,
            "name=EDGE&out=true|false expected\n",
        )
            .into_response();
    };
    if set_out(&s, &q.name, q.out) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (StatusCode::NOT_FOUND, "no such edge\n").into_response()
    }
}

async fn allocation(State(s): State<Arc<SteerState>>) -> Response {
    let t = &s.cfg.topology;
    let plan = s.plan.lock().expect("plan lock").clone();
    let n = t.servers.len();
    // Sessions per population and pathway, as the players last reported (`_HLS_pathway`) within
    // three TTLs: the allocation as realised.
    let mut reported = vec![vec![0u64; n]; t.populations.len()];
    let fresh = Duration::from_secs(3 * u64::from(s.cfg.ttl));
    for x in s.sessions.lock().expect("sessions lock").by_id.values() {
        if let Some((j, at)) = x.pathway
            && at.elapsed() <= fresh
        {
            reported[x.population][j] += 1;
        }
    }
    axum::Json(serde_json::json!({
        "servers": t.servers.iter().map(|x| &x.name).collect::<Vec<_>>(),
        "populations": t.populations.iter().map(|x| &x.name).collect::<Vec<_>>(),
        "thresholds": plan.thresholds.chunks(n).collect::<Vec<_>>(),
        "demand": plan.demand,
        "blocking": *s.blocking.lock().expect("blocking lock"),
        "resolves": s.resolves.load(Relaxed),
        "sessions_reported": reported,
    }))
    .into_response()
}

/// Counts every answer of the steering server in its request metrics.
async fn record(
    State(s): State<Arc<SteerState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let t = Instant::now();
    let r = next.run(req).await;
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn metrics(State(s): State<Arc<SteerState>>) -> Response {
    let t = &s.cfg.topology;
    let blocking = s.blocking.lock().expect("blocking lock").clone();
    let thresholds = s.plan.lock().expect("plan lock").thresholds.clone();
    let n = t.servers.len();
    let families = [
        family(
            "cdnlab_steer_blocking",
            "Blocking per population in the last window.",
            Kind::GAUGE,
            t.populations
                .iter()
                .zip(blocking)
                .map(|(p, b)| (vec![("population", p.name.clone())], b)),
        ),
        family(
            "cdnlab_steer_threshold",
            "Streams of a population allowed at an edge.",
            Kind::GAUGE,
            t.populations.iter().enumerate().flat_map(|(i, p)| {
                let thresholds = &thresholds;
                t.servers.iter().enumerate().map(move |(j, e)| {
                    (
                        vec![("population", p.name.clone()), ("edge", e.name.clone())],
                        thresholds[i * n + j] as f64,
                    )
                })
            }),
        ),
        single(
            "cdnlab_steer_resolves_total",
            "Re-allocations made.",
            Kind::COUNTER,
            s.resolves.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_report_errors_total",
            "Edge reports that could not be read.",
            Kind::COUNTER,
            s.report_errors.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_install_errors_total",
            "Threshold installations that failed.",
            Kind::COUNTER,
            s.install_errors.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_solve_seconds",
            "Time of the last solve.",
            Kind::GAUGE,
            s.solve_micros.load(Relaxed) as f64 / 1e6,
        ),
    ];
    metrics::response(s.metrics.render(families.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"secret": "0123456789abcdef", "metros": ["A", "B", "C"],
        "links": [["A", "B"], ["B", "C"]],
        "servers": [{"name": "a", "metro": "A", "addr": "127.0.0.1:1", "capacity": 10},
                    {"name": "c", "metro": "C", "addr": "127.0.0.1:2", "capacity": 30}],
        "populations": [{"name": "pa", "metro": "A", "demand": 30}, {"name": "pc", "metro": "C", "demand": 10}]}"#;

    /// The plan is the library's optimum: population pa fills its local edge and the rest goes
    /// two hops to C; pc stays local.
    #[test]
    fn topology_and_plan() {
        let t = Topology::parse(GOOD).unwrap();
        assert_eq!(t.hops[0][2], 2);
        let (x, _) = solve(&t, &[30, 10], DEFAULT_MIN_SHARE, None).unwrap();
        assert_eq!(x, [10, 20, 0, 10]);
    }
}
