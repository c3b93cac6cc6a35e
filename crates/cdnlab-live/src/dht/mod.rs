//! Edges as a DHT (`cdnlab live edge --ring FILE --id N`): multi-hash replication on real HTTP,
//! with the library's ring, hash family, searches and replication rules.
//!
//! Replica i of file f lives on the edge owning ring position h_i(f). Index 1 is the home copy:
//! it always exists, its owner filling it from the origin on demand. Any edge takes
//! `GET /content/{f}`, runs random binary search over 1..=K, one probe per index (a local look,
//! or `GET /internal/has/{f}/{i}` to the owner), and serves the replica it finds itself or
//! redirects (307) to `GET /replica/{f}/{i}` on its owner. Every `window`, each replica compares
//! the requests it served with c_high x window: an overloaded one searches for the smallest
//! unused index above its own and sends `POST /internal/create/{f}/{j}` to that index's owner,
//! the arbiter (CREATE_IF_ABSENT: idempotent, concurrent calls make one replica); the top
//! replica deletes itself when the others would stay below gamma x c_high. Every `rgr_period`,
//! each replica i > 1 probes one uniform index below it and refills it if missing (random gap
//! removal).
//!
//! A replica that leaves (de-replication, handover) stops being advertised at once but answers
//! for the edges' request timeout the redirects already sent: the probe and the redirected GET
//! are two requests, and the replica may leave between them.
//!
//! Failures: an edge that refuses a connection is taken off this edge's view of the ring, so
//! its positions pass to their successors; internal calls carry the caller's list of edges
//! down (`x-cdnlab-down`), which the callee takes into its own view, so the successor accepts
//! a position at the first call that finds its owner gone; a health check every 500 ms brings
//! it back, and
//! replicas this edge holds at positions that are the returning edge's again are handed over to
//! it (created there, dropped here), so it shows no false gaps. The internal endpoints require
//! the ring file's secret in `x-cdnlab-secret`.

pub mod ring;
mod rounds;
mod routes;
mod state;

use rounds::*;
use routes::*;

use crate::Error;
use crate::catalogue::parse_id;
use crate::dht::ring::RingFile;
use crate::serve::flight::Flights;
use crate::serve::http::{self, Validators};
use crate::serve::metrics::{self, Kind, Metrics, family, single};
use crate::serve::warn::{self, Warn};
use crate::serve::{self, Limits, Running, SECRET};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use cdnlab::dht::hash::position;
use cdnlab::dht::repair;
use cdnlab::dht::replication::{Action, Growth, Leave, Phase, Place, Rules, Search, WindowEnd};
use cdnlab::dht::ring::Ring;
use cdnlab::dht::search::RbsSearch;
use cdnlab::rng::Rng;
use rand::RngExt;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The header of internal calls that lists the edges the caller's view has down
/// (comma-separated ids).
const DOWN: &str = "x-cdnlab-down";

/// Headers of a `/content` answer: the lookup's probes, and those sent to another edge.
pub const PROBES: HeaderName = HeaderName::from_static("x-cdnlab-probes");
pub const REMOTE_PROBES: HeaderName = HeaderName::from_static("x-cdnlab-remote-probes");

/// Failures of replica creations and origin fills, logged at most every 10 s each.
static REPLICATION: Warn = Warn::new("DHT replication", Duration::from_secs(10));
static ORIGIN: Warn = Warn::new("DHT origin fill", Duration::from_secs(10));

/// How a DHT edge behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct DhtConfig {
    pub ring: RingFile,
    /// This edge's id in the ring file (it listens on that id's address).
    pub id: u32,
    pub origin: SocketAddr,
    /// Counting window of the replicas.
    pub window: Duration,
    /// Requests per second a replica takes before it is overloaded.
    pub c_high: f64,
    /// De-replication hysteresis, in (0, 1).
    pub gamma: f64,
    /// Period of random gap removal.
    pub rgr_period: Duration,
    /// Longest wait for an internal call or the origin.
    pub timeout: Duration,
    pub seed: u64,
    pub limits: Limits,
    /// Bytes of home copies kept (least recently used evicted; a request for an evicted one
    /// refetches it from the origin), and as many again for replicas above index 1 (a creation
    /// beyond that is refused with 507: the file stays served by its lower indices).
    pub capacity: u64,
}

impl DhtConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        use cdnlab::Error as E;
        if self.id as usize >= self.ring.edges.len() {
            return Err(E::param(
                "id",
                self.id,
                format!(
                    "an edge id of the ring file (0 to {})",
                    self.ring.edges.len() - 1
                ),
            ));
        }
        if self.window.is_zero() || self.rgr_period.is_zero() || self.timeout.is_zero() {
            return Err(E::param("window/rgr-period/timeout", "0", "durations > 0"));
        }
        if !(self.c_high.is_finite() && self.c_high > 0.0) {
            return Err(E::param("c-high", self.c_high, "requests per second > 0"));
        }
        if !(self.gamma > 0.0 && self.gamma < 1.0) {
            return Err(E::param("gamma", self.gamma, "a number in (0, 1)"));
        }
        Capacity::new(self.capacity, Unit::Bytes)?;
        self.limits.validate()
    }
}

/// Counters of the DHT's work, besides the per-request [`Metrics`].
#[derive(Debug, Default)]
pub struct DhtCounters {
    pub lookups: AtomicU64,
    pub probes: AtomicU64,
    pub redirects: AtomicU64,
    pub replications: AtomicU64,
    pub dereplications: AtomicU64,
    pub gaps_found: AtomicU64,
    pub gaps_filled: AtomicU64,
    pub handovers: AtomicU64,
    pub origin_fills: AtomicU64,
}

impl DhtCounters {
    /// Adds `other`'s counts to these (to keep a stopped edge's counts in a total).
    pub fn add(&self, other: &DhtCounters) {
        let pairs = [
            (&self.lookups, &other.lookups),
            (&self.probes, &other.probes),
            (&self.redirects, &other.redirects),
            (&self.replications, &other.replications),
            (&self.dereplications, &other.dereplications),
            (&self.gaps_found, &other.gaps_found),
            (&self.gaps_filled, &other.gaps_filled),
            (&self.handovers, &other.handovers),
            (&self.origin_fills, &other.origin_fills),
        ];
        for (a, b) in pairs {
            a.fetch_add(b.load(Relaxed), Relaxed);
        }
    }
}

/// A creation's fetch: the origin's bytes and validators and what became of them, or why the
/// origin did not give them.
type Fetched = Result<(Bytes, Arc<Validators>, Stored), Missing>;

/// Why the origin did not give a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// It has no such file (404): the client's mistake, passed on as 404.
    NotFound,
    /// It failed, or could not be reached: 502.
    Failed,
}

impl Missing {
    fn answer(self) -> Response {
        match self {
            Missing::NotFound => text(StatusCode::NOT_FOUND, "the origin has no such file"),
            Missing::Failed => text(StatusCode::BAD_GATEWAY, "the origin did not give the file"),
        }
    }
}

/// What a creation's fetch did with the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    Now,
    Already,
    NoRoom,
}

/// What a CREATE_IF_ABSENT did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Created {
    New,
    Exists,
    /// The origin gave the bytes but the capacity has no room for them.
    NoRoom,
}

/// A replica held here: its bytes, the requests it served this window, and whether it has
/// lived through a whole window (a replica created during one takes no window-end decision
/// until the end of its first full window: a partial count says nothing of the rate).
struct Held {
    bytes: Bytes,
    /// The origin's validators, sent with every answer.
    validators: Arc<Validators>,
    count: u64,
    settled: bool,
}

/// Replicas that left: their bytes and validators, and when they left.
type Draining = HashMap<(u64, u32), (Bytes, Arc<Validators>, Instant)>;

/// What the replicas held here may take: home copies through an LRU cache of `capacity` bytes
/// (the library's policy, which only keeps the accounting; the bytes are in `held`), and
/// replicas above index 1 up to `capacity` bytes, counted here.
struct Budget {
    home: Box<dyn Cache + Send>,
    evicted: Vec<u64>,
    above: u64,
}

struct DhtState {
    cfg: DhtConfig,
    view: Mutex<Ring>,
    /// Lock order: `held`, then `budget`.
    held: Mutex<HashMap<(u64, u32), Held>>,
    /// Replicas that left here (de-replicated or handed over), kept for `cfg.timeout` to
    /// answer redirects already sent: an entry edge probes, then redirects the client, and the
    /// replica may leave between the two. `has` says no at once, so no new redirect comes.
    /// Taken after `held` when both are held.
    draining: Mutex<Draining>,
    budget: Mutex<Budget>,
    /// Replicas being created here (one origin fetch per replica at a time).
    creating: Flights<(u64, u32), Fetched>,
    client: reqwest::Client,
    rng: Mutex<Rng>,
    metrics: Metrics,
    counters: DhtCounters,
}

/// A running DHT edge.
pub struct DhtEdge {
    /// The server; stopping it stops the windows and repair rounds too (as a crash with
    /// `stop`: nothing is handed over).
    pub server: Running,
    state: Arc<DhtState>,
}

impl DhtEdge {
    /// The request metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// The DHT counters.
    pub fn counters(&self) -> &DhtCounters {
        &self.state.counters
    }

    /// Bytes of the replicas held here.
    pub fn held_bytes(&self) -> u64 {
        self.state.held_bytes()
    }

    /// The replicas held here, as (file, index), sorted.
    pub fn replicas(&self) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = self
            .state
            .held
            .lock()
            .expect("held lock")
            .keys()
            .copied()
            .collect();
        v.sort_unstable();
        v
    }

    /// Sets the window count of a replica held here, as if it had lived through the window
    /// (for tests that compare decisions with the simulator's; false if not held).
    #[doc(hidden)]
    pub fn set_window_count(&self, f: u64, i: u32, count: u64) -> bool {
        let mut held = self.state.held.lock().expect("held lock");
        held.get_mut(&(f, i)).is_some_and(|h| {
            h.count = count;
            h.settled = true;
            true
        })
    }

    /// Takes the window's counts (see [`DhtEdge::set_window_count`]).
    #[doc(hidden)]
    pub fn window_counts(&self) -> Vec<((u64, u32), f64)> {
        window_counts(&self.state)
    }

    /// Runs one phase's window-end decisions of the replicas in `counts`: growth creates their
    /// replicas; shrinkage returns those that decided to leave, for [`DhtEdge::window_leave`].
    #[doc(hidden)]
    pub async fn window_decide(
        &self,
        counts: &[((u64, u32), f64)],
        phase: Phase,
    ) -> Vec<(u64, u32)> {
        decide(&self.state, counts, phase).await
    }

    /// The replicas that decided to leave go.
    #[doc(hidden)]
    pub fn window_leave(&self, leaving: &[(u64, u32)]) {
        leave(&self.state, leaving);
    }
}

/// Starts the edge `cfg.id` of the ring on its address.
pub async fn start(cfg: DhtConfig) -> Result<DhtEdge, Error> {
    cfg.validate()?;
    let ring = Ring::new(cfg.ring.edges.len() as u32, cfg.ring.vnodes)?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(cfg.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let addr = cfg.ring.edges[cfg.id as usize];
    let mut home = Policy::Lru.build(Capacity::new(cfg.capacity, Unit::Bytes)?);
    home.log_evictions();
    let state = Arc::new(DhtState {
        view: Mutex::new(ring),
        held: Mutex::new(HashMap::new()),
        draining: Mutex::new(HashMap::new()),
        budget: Mutex::new(Budget {
            home,
            evicted: Vec::new(),
            above: 0,
        }),
        creating: Flights::default(),
        client,
        rng: Mutex::new(cdnlab::rng::stream(cfg.seed, u64::from(cfg.id), 0)),
        metrics: Metrics::default(),
        counters: DhtCounters::default(),
        cfg,
    });
    let router = Router::new()
        .route("/content/{f}", get(content))
        .route("/replica/{f}/{i}", get(replica))
        .route("/internal/has/{f}/{i}", get(has))
        .route("/internal/create/{f}/{i}", post(create))
        .route("/health", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let listener = serve::bind(addr).await?;
    let server = serve::spawn(listener, router, state.cfg.limits, &state.metrics)?
        .with_background(|stopped| background(state.clone(), stopped));
    Ok(DhtEdge { server, state })
}

/// Parses a file id and a replica index in 1..=K.
fn file_and_index(s: &DhtState, f: &str, i: &str) -> Option<(u64, u32)> {
    let f = parse_id(f, None).ok()?;
    let i = parse_id(i, Some(u64::from(s.cfg.ring.k) + 1)).ok()?;
    (i >= 1).then_some((f, i as u32))
}

fn text(code: StatusCode, msg: &str) -> Response {
    (code, format!("{msg}\n")).into_response()
}
