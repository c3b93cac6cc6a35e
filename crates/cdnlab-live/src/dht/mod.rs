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
//! its positions pass to their successors; a health check every 500 ms brings it back, and
//! replicas this edge holds at positions that are the returning edge's again are handed over to
//! it (created there, dropped here), so it shows no false gaps. The internal endpoints require
//! the ring file's secret in `x-cdnlab-secret`.

pub mod ring;

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
use cdnlab::dht::replication::{Action, Growth, Phase, Rules, WindowEnd};
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
use tokio::task::JoinHandle;

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

/// A creation's fetch: the origin's bytes and validators and what became of them (None: the
/// origin did not give them).
type Fetched = Option<(Bytes, Arc<Validators>, Stored)>;

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
    pub server: Running,
    state: Arc<DhtState>,
    stop: watch::Sender<bool>,
    background: JoinHandle<()>,
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

    /// Stops the edge (as a crash: nothing is handed over).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.background.await;
        self.server.stop().await;
    }

    /// Stops gracefully: no more windows or repair rounds, in-flight responses finish (for up
    /// to `drain`).
    pub async fn drain(self, drain: Duration) {
        let _ = self.stop.send(true);
        let _ = self.background.await;
        self.server.drain(drain).await;
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
    let server = serve::spawn(listener, router, state.cfg.limits, &state.metrics)?;
    let (stop, stopped) = watch::channel(false);
    let background = tokio::spawn(background(state.clone(), stopped));
    Ok(DhtEdge {
        server,
        state,
        stop,
        background,
    })
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

impl DhtState {
    fn addr(&self, node: u32) -> SocketAddr {
        self.cfg.ring.edges[node as usize]
    }

    /// The edge owning replica i of f in this edge's view.
    fn owner(&self, f: u64, i: u32) -> Option<u32> {
        self.view.lock().expect("view lock").owner(position(f, i))
    }

    /// Bytes of the replicas held here.
    fn held_bytes(&self) -> u64 {
        let held = self.held.lock().expect("held lock");
        held.values().map(|h| h.bytes.len() as u64).sum()
    }

    /// Whether replica i of f is held here now (a home copy may be evicted).
    fn held_here(&self, f: u64, i: u32) -> bool {
        self.held.lock().expect("held lock").contains_key(&(f, i))
    }

    fn holds(&self, f: u64, i: u32) -> bool {
        i == 1 || self.held.lock().expect("held lock").contains_key(&(f, i))
    }

    /// Whether replica i of f exists (one probe).
    async fn probe(&self, f: u64, i: u32) -> bool {
        self.probe_at(f, i).await.is_some()
    }

    /// The edge that holds replica i of f, if it exists (one probe). An owner that refuses the
    /// connection is taken off the view and the probe asks the position's new owner. The
    /// answer names the edge that said yes, not the owner in the view afterwards: the view may
    /// change meanwhile (an edge back), and a redirect must go where the replica is.
    async fn probe_at(&self, f: u64, i: u32) -> Option<u32> {
        self.counters.probes.fetch_add(1, Relaxed);
        for _ in 0..self.cfg.ring.edges.len() {
            let owner = self.owner(f, i)?;
            if owner == self.cfg.id {
                return self.holds(f, i).then_some(owner);
            }
            let url = format!("http://{}/internal/has/{f}/{i}", self.addr(owner));
            match self
                .client
                .get(url)
                .header(SECRET, &self.cfg.ring.secret)
                .send()
                .await
            {
                Ok(r) => return (r.status() == reqwest::StatusCode::OK).then_some(owner),
                Err(e) if e.is_connect() => self.mark_down(owner),
                Err(_) => return None, // slow or confused: treated as a miss
            }
        }
        None
    }

    fn mark_down(&self, node: u32) {
        let mut v = self.view.lock().expect("view lock");
        if v.is_alive(node) && v.live() > 1 {
            let _ = v.crash(node);
        }
    }

    /// Creates replica i of f at its owner (CREATE_IF_ABSENT); true if this call created it.
    async fn create_at_owner(&self, f: u64, i: u32) -> bool {
        for _ in 0..self.cfg.ring.edges.len() {
            let Some(owner) = self.owner(f, i) else {
                return false;
            };
            if owner == self.cfg.id {
                return matches!(self.create_here(f, i).await, Some((Created::New, ..)));
            }
            let url = format!("http://{}/internal/create/{f}/{i}", self.addr(owner));
            match self
                .client
                .post(url)
                .header(SECRET, &self.cfg.ring.secret)
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    return r.status() == reqwest::StatusCode::CREATED;
                }
                Ok(r) => {
                    REPLICATION.warn(format!(
                        "replica {i} of file {f} at edge {owner}: answered {}",
                        r.status()
                    ));
                    return false;
                }
                Err(e) if e.is_connect() => self.mark_down(owner),
                Err(e) => {
                    REPLICATION.warn(format!(
                        "replica {i} of file {f} at edge {owner}: {}",
                        warn::cause(&e)
                    ));
                    return false;
                }
            }
        }
        false
    }

    /// CREATE_IF_ABSENT here, with the replica's bytes: `None` if the origin did not give
    /// them. Concurrent calls for one replica share one origin fetch.
    async fn create_here(&self, f: u64, i: u32) -> Option<(Created, Bytes, Arc<Validators>)> {
        if let Some(h) = self.held.lock().expect("held lock").get(&(f, i)) {
            return Some((Created::Exists, h.bytes.clone(), h.validators.clone()));
        }
        // The fetch stores the replica before its result is out, so every call that shares
        // it sees the same outcome.
        let mut flight = self.creating.join((f, i));
        let (bytes, validators, stored) = flight
            .result(|| async {
                let (bytes, validators) = self.fetch_origin(f).await?;
                let mut held = self.held.lock().expect("held lock");
                let stored = if held.contains_key(&(f, i)) {
                    Stored::Already
                } else if self.admit(&mut held, f, i, bytes.len()) {
                    held.insert(
                        (f, i),
                        Held {
                            bytes: bytes.clone(),
                            validators: validators.clone(),
                            count: 0,
                            settled: false,
                        },
                    );
                    Stored::Now
                } else {
                    Stored::NoRoom
                };
                Some((bytes, validators, stored))
            })
            .await?;
        let created = match (stored, flight.ran()) {
            (Stored::Now, true) => Created::New,
            (Stored::Now | Stored::Already, _) => Created::Exists,
            (Stored::NoRoom, _) => Created::NoRoom,
        };
        Some((created, bytes, validators))
    }

    /// Takes room for a new replica i of f of `size` bytes, evicting home copies as the home
    /// cache's policy says; false if there is none (`held` is locked by the caller).
    fn admit(&self, held: &mut HashMap<(u64, u32), Held>, f: u64, i: u32, size: usize) -> bool {
        let mut b = self.budget.lock().expect("budget lock");
        if i > 1 {
            let cost = u64::from(crate::edge::charged(size));
            let fits = b.above + cost <= self.cfg.capacity;
            if fits {
                b.above += cost;
            }
            return fits;
        }
        let b = &mut *b;
        b.home.access(f, crate::edge::charged(size));
        b.home.drain_evictions(&mut b.evicted);
        for e in b.evicted.drain(..) {
            held.remove(&(e, 1));
        }
        b.home.contains(f)
    }

    /// Gives back the room of a replica that left (home copies stay in the cache's accounting
    /// until it evicts them).
    fn release(&self, i: u32, size: usize) {
        if i > 1 {
            let mut b = self.budget.lock().expect("budget lock");
            b.above = b
                .above
                .saturating_sub(u64::from(crate::edge::charged(size)));
        }
    }

    async fn fetch_origin(&self, f: u64) -> Option<(Bytes, Arc<Validators>)> {
        self.counters.origin_fills.fetch_add(1, Relaxed);
        let r = match self
            .client
            .get(format!("http://{}/content/{f}", self.cfg.origin))
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                ORIGIN.warn(format!("file {f}: {}", warn::cause(&e)));
                return None;
            }
        };
        if r.status() != reqwest::StatusCode::OK {
            // A file the origin does not have is the client's mistake, not a failure.
            if r.status() != reqwest::StatusCode::NOT_FOUND {
                ORIGIN.warn(format!("file {f}: answered {}", r.status()));
            }
            return None;
        }
        let validators = Arc::new(Validators::from_headers(r.headers()));
        let bytes = crate::edge::read_body(r).await.ok()?;
        Some((bytes, validators))
    }

    /// Serves replica i of f from here, filling the home copy from the origin on demand (and
    /// keeping it if the home cache takes it).
    async fn serve_local(&self, f: u64, i: u32, req: &HeaderMap) -> Response {
        let found = {
            let mut held = self.held.lock().expect("held lock");
            held.get_mut(&(f, i)).map(|h| {
                h.count += 1;
                (h.bytes.clone(), h.validators.clone())
            })
        };
        let (bytes, validators) = match found {
            Some(b) => {
                if i == 1 {
                    // A hit on the home copy: the cache's policy sees it.
                    let mut budget = self.budget.lock().expect("budget lock");
                    budget.home.access(f, crate::edge::charged(b.0.len()));
                }
                b
            }
            None if i == 1 => match self.create_here(f, 1).await {
                None => return text(StatusCode::BAD_GATEWAY, "the origin did not give the file"),
                Some((_, b, v)) => {
                    if let Some(h) = self.held.lock().expect("held lock").get_mut(&(f, 1)) {
                        h.count += 1;
                    }
                    (b, v)
                }
            },
            None => match self.draining.lock().expect("draining lock").get(&(f, i)) {
                Some((b, v, t)) if t.elapsed() < self.cfg.timeout => (b.clone(), v.clone()),
                _ => return text(StatusCode::NOT_FOUND, "no such replica here"),
            },
        };
        // Conditional and range requests (RFC 9110), on the origin's validators.
        let (status, mut headers, part) = http::answer(req, &validators, &bytes);
        self.metrics.bytes_sent.inc_by(part.len() as u64);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        headers.insert(
            HeaderName::from_static("x-cdnlab-replica"),
            HeaderValue::from(i),
        );
        (status, headers, part).into_response()
    }

    /// Replica i of f leaves here: it stops counting against the capacity and being
    /// advertised, and answers redirects already sent for `cfg.timeout` (the drained ones that
    /// are older go now).
    fn drop_replica(&self, held: &mut HashMap<(u64, u32), Held>, f: u64, i: u32) -> bool {
        let Some(h) = held.remove(&(f, i)) else {
            return false;
        };
        self.release(i, h.bytes.len());
        self.drain_expired();
        let mut draining = self.draining.lock().expect("draining lock");
        draining.insert((f, i), (h.bytes, h.validators, Instant::now()));
        true
    }

    /// Drops the replicas that left more than `cfg.timeout` ago (memory only: `serve_local`
    /// serves none older).
    fn drain_expired(&self) {
        let now = Instant::now();
        let mut draining = self.draining.lock().expect("draining lock");
        draining.retain(|_, (.., t)| now.duration_since(*t) < self.cfg.timeout);
    }

    fn authorised(&self, h: &HeaderMap) -> bool {
        serve::has_secret(h, &self.cfg.ring.secret)
    }

    fn next_rng(&self) -> Rng {
        let seed = self.rng.lock().expect("rng lock").random::<u64>();
        cdnlab::rng::from_seed(seed)
    }
}

async fn content(
    State(s): State<Arc<DhtState>>,
    Path(f): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match parse_id(&f, None) {
        Err(_) => text(StatusCode::BAD_REQUEST, "file id: 1 to 20 decimal digits"),
        Ok(f) => {
            s.counters.lookups.fetch_add(1, Relaxed);
            let mut rng = s.next_rng();
            let mut search = RbsSearch::new(s.cfg.ring.k);
            let mut served = None;
            while let Some(i) = search.next(&mut rng) {
                if let Some(at) = s.probe_at(f, i).await {
                    served = Some((i, at));
                    break;
                }
                search.missed(i);
            }
            match served {
                None => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no replica reachable; retry",
                ),
                Some((i, owner)) if owner == s.cfg.id => s.serve_local(f, i, &req).await,
                Some((i, owner)) => {
                    s.counters.redirects.fetch_add(1, Relaxed);
                    (
                        StatusCode::TEMPORARY_REDIRECT,
                        [(
                            header::LOCATION,
                            format!("http://{}/replica/{f}/{i}", s.addr(owner)),
                        )],
                    )
                        .into_response()
                }
            }
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn replica(
    State(s): State<Arc<DhtState>>,
    Path((f, i)): Path<(String, String)>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        // Only the owner of h_1(f) fetches a home copy from the origin (so a scan of ids at
        // one edge fills nothing there); other replicas exist only if created, which takes the
        // secret.
        Some((f, 1)) if !s.held_here(f, 1) && s.owner(f, 1) != Some(s.cfg.id) => text(
            StatusCode::MISDIRECTED_REQUEST,
            "this edge does not own that file's home copy; ask /content/{file} at any edge",
        ),
        Some((f, i)) => s.serve_local(f, i, &req).await,
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn has(
    State(s): State<Arc<DhtState>>,
    h: HeaderMap,
    Path((f, i)): Path<(String, String)>,
) -> Response {
    if !s.authorised(&h) {
        return text(
            StatusCode::UNAUTHORIZED,
            "internal endpoint: the ring's secret is required",
        );
    }
    match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        Some((f, i)) if s.holds(f, i) && s.owner(f, i) == Some(s.cfg.id) => {
            text(StatusCode::OK, "yes")
        }
        Some(_) => text(StatusCode::NOT_FOUND, "no"),
    }
}

async fn create(
    State(s): State<Arc<DhtState>>,
    h: HeaderMap,
    Path((f, i)): Path<(String, String)>,
) -> Response {
    if !s.authorised(&h) {
        return text(
            StatusCode::UNAUTHORIZED,
            "internal endpoint: the ring's secret is required",
        );
    }
    match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        Some((f, i)) if s.owner(f, i) != Some(s.cfg.id) => text(
            StatusCode::MISDIRECTED_REQUEST,
            "this edge does not own that replica's position",
        ),
        Some((f, i)) => match s.create_here(f, i).await {
            Some((Created::New, ..)) => text(StatusCode::CREATED, "created"),
            Some((Created::Exists, ..)) => text(StatusCode::OK, "exists"),
            Some((Created::NoRoom, ..)) => text(
                StatusCode::INSUFFICIENT_STORAGE,
                "no room for another replica here",
            ),
            None => text(StatusCode::BAD_GATEWAY, "the origin did not give the file"),
        },
    }
}

async fn metrics(State(s): State<Arc<DhtState>>) -> Response {
    let c = &s.counters;
    // Replicas held here per file (summed over the edges: replicas per file), for the files
    // with more than their home copy somewhere, i.e. an index above 1 here.
    let (held, per_file) = {
        let h = s.held.lock().expect("held lock");
        let mut per: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
        for &(f, _) in h.keys() {
            *per.entry(f).or_default() += 1;
        }
        let replicated: std::collections::BTreeSet<u64> =
            h.keys().filter(|k| k.1 > 1).map(|k| k.0).collect();
        per.retain(|f, _| replicated.contains(f));
        (h.len() as f64, per)
    };
    let bytes = s.held_bytes() as f64;
    let g = |a: &AtomicU64| a.load(Relaxed) as f64;
    let mut extra = vec![
        single(
            "cdnlab_dht_lookups_total",
            "Random binary searches run here.",
            Kind::COUNTER,
            g(&c.lookups),
        ),
        single(
            "cdnlab_dht_probes_total",
            "Probes made here (searches, replication, gap removal).",
            Kind::COUNTER,
            g(&c.probes),
        ),
        single(
            "cdnlab_dht_redirects_total",
            "Requests redirected to a replica on another edge.",
            Kind::COUNTER,
            g(&c.redirects),
        ),
        single(
            "cdnlab_dht_replications_total",
            "Replicas created on behalf of overloaded replicas here.",
            Kind::COUNTER,
            g(&c.replications),
        ),
        single(
            "cdnlab_dht_dereplications_total",
            "Top replicas that left this edge.",
            Kind::COUNTER,
            g(&c.dereplications),
        ),
        single(
            "cdnlab_dht_gaps_found_total",
            "Missing replicas found by random gap removal.",
            Kind::COUNTER,
            g(&c.gaps_found),
        ),
        single(
            "cdnlab_dht_gaps_filled_total",
            "Of those, refilled.",
            Kind::COUNTER,
            g(&c.gaps_filled),
        ),
        single(
            "cdnlab_dht_handovers_total",
            "Replicas handed over to an edge that came back.",
            Kind::COUNTER,
            g(&c.handovers),
        ),
        single(
            "cdnlab_dht_origin_fills_total",
            "Origin fetches to create replicas here.",
            Kind::COUNTER,
            g(&c.origin_fills),
        ),
        single(
            "cdnlab_dht_replicas_held",
            "Replicas held here.",
            Kind::GAUGE,
            held,
        ),
        single(
            "cdnlab_dht_held_bytes",
            "Bytes of the replicas held here (home copies and above).",
            Kind::GAUGE,
            bytes,
        ),
        single(
            "cdnlab_dht_capacity_bytes",
            "Capacity for home copies, and as much again for replicas above index 1.",
            Kind::GAUGE,
            s.cfg.capacity as f64,
        ),
    ];
    extra.push(family(
        "cdnlab_dht_file_replicas",
        "Replicas of a file held here (files with replicas beyond the home copy here); summed over the edges, replicas per file.",
        Kind::GAUGE,
        per_file
            .into_iter()
            .map(|(f, n)| (vec![("file", f.to_string())], n as f64)),
    ));
    metrics::response(s.metrics.render(extra))
}

/// Windows, gap removal and the health of edges that are down, until stopped.
async fn background(s: Arc<DhtState>, mut stopped: watch::Receiver<bool>) {
    let start = tokio::time::Instant::now();
    let (mut next_window, mut next_rgr, mut next_health) = (
        start + s.cfg.window,
        start + s.cfg.rgr_period,
        start + Duration::from_millis(500),
    );
    loop {
        let wake = next_window.min(next_rgr).min(next_health);
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = stopped.changed() => return,
        }
        let now = tokio::time::Instant::now();
        if now >= next_window {
            end_window(&s).await;
            next_window += s.cfg.window;
        }
        if now >= next_rgr {
            gap_removal(&s).await;
            next_rgr += s.cfg.rgr_period;
        }
        if now >= next_health {
            s.drain_expired();
            health(&s).await;
            next_health += Duration::from_millis(500);
        }
    }
}

/// Replication and de-replication from the window's counts, by the library's window-end rule
/// (`cdnlab::dht::replication`, growth one), as the simulator runs it
/// (`cdnlab::sim::multihash::window_end`), in the library's phase order
/// ([`Phase::ORDER`]: the overloaded replicas' searches and creations, then the others' leave
/// decisions). Replicas created during the window wait for a full one.
async fn end_window(s: &DhtState) {
    let counts = window_counts(s);
    for phase in Phase::ORDER {
        let leaving = decide(s, &counts, phase).await;
        leave(s, &leaving);
    }
}

/// The replicas that decided to leave go.
fn leave(s: &DhtState, leaving: &[(u64, u32)]) {
    let mut held = s.held.lock().expect("held lock");
    for &(f, i) in leaving {
        if s.drop_replica(&mut held, f, i) {
            s.counters.dereplications.fetch_add(1, Relaxed);
        }
    }
}

/// The window's counts of the replicas held here that lived through it (sorted), resetting them.
fn window_counts(s: &DhtState) -> Vec<((u64, u32), f64)> {
    let mut held = s.held.lock().expect("held lock");
    let mut v: Vec<_> = held
        .iter_mut()
        .filter_map(|(&k, h)| {
            let count = std::mem::take(&mut h.count) as f64;
            std::mem::replace(&mut h.settled, true).then_some((k, count))
        })
        .collect();
    v.sort_unstable_by_key(|x| x.0);
    v
}

/// The window-end decisions of one phase's replicas: those that grow have their creations made;
/// those that leave are returned, to go after every decision (the decisions of one window are
/// concurrent, as in the simulator).
async fn decide(s: &DhtState, counts: &[((u64, u32), f64)], phase: Phase) -> Vec<(u64, u32)> {
    let mut leaving = Vec::new();
    let rules = Rules {
        c_high: s.cfg.c_high,
        window: s.cfg.window.as_secs_f64(),
        gamma: s.cfg.gamma,
        k: s.cfg.ring.k,
        growth: Growth::One,
    };
    for &((f, i), count) in counts {
        let mut end = WindowEnd::new(rules, i, count);
        if !phase.decides(&end) {
            continue;
        }
        let action = loop {
            match end.step() {
                Action::Probe(j) => end.answer(s.probe(f, j).await),
                a => break a,
            }
        };
        match action {
            Action::Create(range) => {
                for j in range {
                    if s.create_at_owner(f, j).await {
                        s.counters.replications.fetch_add(1, Relaxed);
                    }
                }
            }
            Action::Leave => leaving.push((f, i)),
            Action::Probe(_) | Action::Done => {}
        }
    }
    leaving
}

/// Random gap removal, the library's round (`cdnlab::dht::repair::Round`) over the replicas of
/// each file held here: each replica i > 1 probes one uniform index below it; the missing ones
/// are refilled.
async fn gap_removal(s: &DhtState) {
    let mut keys: Vec<(u64, u32)> = s.held.lock().expect("held lock").keys().copied().collect();
    keys.sort_unstable();
    let mut rng = s.next_rng();
    for file in keys.chunk_by(|a, b| a.0 == b.0) {
        let f = file[0].0;
        let held: Vec<u32> = file.iter().map(|&(_, i)| i).collect();
        let mut round = repair::Round::new(&held, repair::Probe::Random);
        while let Some(j) = round.next(&mut rng) {
            let present = s.probe(f, j).await;
            round.answer(present);
        }
        for j in round.missing() {
            s.counters.gaps_found.fetch_add(1, Relaxed);
            if s.create_at_owner(f, j).await {
                s.counters.gaps_filled.fetch_add(1, Relaxed);
            }
        }
    }
}

/// Edges that are down in this view: back if /health answers; then hand over the replicas
/// whose positions are theirs again.
async fn health(s: &DhtState) {
    let down: Vec<u32> = {
        let v = s.view.lock().expect("view lock");
        (0..v.nodes()).filter(|&n| !v.is_alive(n)).collect()
    };
    for n in down {
        let ok = s
            .client
            .get(format!("http://{}/health", s.addr(n)))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if !ok {
            continue;
        }
        let _ = s.view.lock().expect("view lock").revive(n);
        let moving: Vec<(u64, u32)> = {
            let held = s.held.lock().expect("held lock");
            let mut v: Vec<_> = held
                .keys()
                .copied()
                .filter(|&(f, i)| s.owner(f, i) != Some(s.cfg.id))
                .collect();
            v.sort_unstable();
            v
        };
        for (f, i) in moving {
            if s.create_at_owner(f, i).await || s.probe(f, i).await {
                s.drop_replica(&mut s.held.lock().expect("held lock"), f, i);
                s.counters.handovers.fetch_add(1, Relaxed);
            }
        }
    }
}
