//! The edge: a caching reverse proxy in front of the origin. `GET /content/{id}` is served from
//! the cache (the library's policy decides what stays, within a capacity in bytes) or fetched
//! from the origin, concurrent misses for one object sharing one fetch. Every answer about
//! content says what the cache did in an RFC 9211 `Cache-Status` header:
//!
//! | case | status | `Cache-Status` |
//! |---|---|---|
//! | hit | 200 | `cdnlab; hit` |
//! | miss, being filled and stored | 200 | `cdnlab; fwd=miss; stored` |
//! | miss, passed through (too large, or no room in the fill budget) | 200 | `cdnlab; fwd=miss` |
//! | miss, read from another request's fill | 200 | `cdnlab; fwd=miss; collapsed` |
//! | origin has no such object | 404 | `cdnlab; fwd=miss; fwd-status=404` |
//! | origin answered an error | 502 | `cdnlab; fwd=miss; fwd-status=<code>` |
//! | origin unreachable | 502 | `cdnlab; fwd=miss; detail="origin unreachable"` |
//! | origin too slow | 504 | `cdnlab; fwd=miss; detail="origin timeout"` |
//!
//! `GET /p/{population}/{session}/{name}` serves file `name` of the origin's media asset
//! (`/media/{name}`) to a streaming session (see [`crate::media`]): cached by name, shared by
//! every session, with the origin's `Content-Type`. With admission, the session is a token the
//! steering server minted and signed for the population ([`crate::session`]); a made-up,
//! altered, other population's or (at its first request here) expired token gets 403, counted.
//! A session of a population is admitted at its first request while fewer of that population's
//! sessions than its threshold are active here, and stays admitted while it keeps requesting
//! (a lease of [`EdgeConfig::session_lease`] from the end of its latest request); a refused
//! session gets 503 with `Retry-After` and counts once per lease as blocked. One session has at
//! most [`EdgeConfig::session_requests`] requests under way (more get 429, counted): a token
//! shared by many clients does not become many streams on one slot. Content answers allow any
//! origin (CORS).
//!
//! Misses stream through fills within a memory budget, and responses never pin an evicted
//! body ([`fill`]). Only complete 200 answers are stored. With a bandwidth, bodies go out in
//! 16 KiB chunks
//! through one [`TokenBucket`] per edge, so its streams share that rate. `/metrics` and
//! `/health` report on it.

pub mod fill;
mod routes;
pub use routes::Qoe;

use fill::{Fill, Pieces};
use routes::*;

use crate::Error;
use crate::catalogue::{IdError, parse_id};
use crate::serve::flight::Flights;
use crate::serve::http::{self, Validators};
use crate::serve::metrics::{self, Kind, Metrics, family, single};
use crate::serve::shaper::TokenBucket;
use crate::serve::{self, Limits, Running};
use crate::session;
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use cdnlab::Named;
use cdnlab::alloc::admission;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use cdnlab::steer::cmcd::{self, Refused};
use cdnlab::steer::tally::Tally;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Chunk of a shaped body.
const CHUNK: usize = 16 << 10;

/// How an edge behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeConfig {
    pub origin: SocketAddr,
    pub policy: Policy,
    /// Cache capacity in bytes.
    pub capacity: u64,
    /// Total sending rate in bytes per second (None: unshaped).
    pub bandwidth: Option<u64>,
    /// Longest wait for the origin's response head, and for a fill's whole body; a
    /// pass-through waits this long at most for each chunk.
    pub origin_timeout: Duration,
    pub limits: Limits,
    /// Per-population admission: with a secret, content requests name their population
    /// (`?population=P`) and are admitted while fewer than its threshold are streaming here;
    /// thresholds are installed with `POST /internal/admission?population=P&limit=L`, which
    /// requires the secret in `x-cdnlab-secret`. None: every request is admitted.
    pub admission: Option<String>,
    /// Pace every response at this many bytes per second (a stream's bit rate, so that a
    /// stream lasts size / rate); None: as fast as the bandwidth allows.
    pub stream_rate: Option<u64>,
    /// How long an admitted streaming session keeps its slot after its latest request.
    pub session_lease: Duration,
    /// Requests of one streaming session under way at once; more get 429.
    pub session_requests: u32,
    /// With admission: the steering server to ask for this edge's thresholds when it starts
    /// (a restarted edge need not wait for the steering server's next window).
    pub steering: Option<SteeringLink>,
    /// Largest object stored; larger ones are passed through, uncached (None: an eighth of
    /// the capacity, so that one object cannot flush most of the cache).
    pub max_object_size: Option<u64>,
    /// Bytes of all fills under way at once (None: a quarter of the capacity); a miss that
    /// finds no room is passed through. With the cache, this bounds the bodies held: the
    /// process stays within 1.3 times the capacity plus what the runtime takes.
    pub fill_budget: Option<u64>,
    /// Pass-through streams at once (each holds an origin connection); more get 503.
    pub pass_through: usize,
    /// The window the sessions' CMCD reports are aggregated over (`/internal/qoe`,
    /// `/metrics`).
    pub qoe_window: Duration,
}

/// Where an edge asks for its thresholds: the steering server, and the edge's name in its
/// topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SteeringLink {
    pub addr: SocketAddr,
    pub edge: String,
}

/// The default of [`EdgeConfig::session_lease`]: five 2-second segments, so a player that
/// fetches a segment every 2 s once its buffer is full keeps its slot, and one that stopped
/// gives it back within 10 s.
pub const DEFAULT_SESSION_LEASE: Duration = Duration::from_secs(10);

/// The default of [`EdgeConfig::qoe_window`]: as long as a session lease, so the sessions
/// counted are those holding a slot here.
pub const DEFAULT_QOE_WINDOW: Duration = DEFAULT_SESSION_LEASE;

/// The default of [`EdgeConfig::session_requests`]: 6, the connections a browser opens to one
/// host over HTTP/1.1, so no player in a browser can be refused (hls.js and dash.js have a
/// playlist or manifest and a segment per media type under way at most).
pub const DEFAULT_SESSION_REQUESTS: u32 = 6;

impl EdgeConfig {
    /// An LRU edge of 64 MiB in front of `origin`: unshaped, a 5 s origin timeout, default
    /// limits, every request admitted, the default session lease.
    pub fn in_front_of(origin: SocketAddr) -> Self {
        EdgeConfig {
            origin,
            policy: Policy::Lru,
            capacity: 64 << 20,
            bandwidth: None,
            origin_timeout: Duration::from_secs(5),
            limits: Limits::default(),
            admission: None,
            stream_rate: None,
            session_lease: DEFAULT_SESSION_LEASE,
            session_requests: DEFAULT_SESSION_REQUESTS,
            steering: None,
            max_object_size: None,
            fill_budget: None,
            pass_through: fill::PASS_THROUGH,
            qoe_window: DEFAULT_QOE_WINDOW,
        }
    }
}

/// Most streaming sessions tracked at once (admitted and recently refused).
pub const MAX_SESSIONS: usize = 100_000;

/// A running edge.
pub struct Edge {
    pub server: Running,
    state: Arc<EdgeState>,
}

impl Edge {
    /// The edge's counters.
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// Whether object `id` is in the cache.
    pub fn holds(&self, id: u64) -> bool {
        self.state
            .store
            .lock()
            .expect("store lock")
            .objects
            .contains_key(&id)
    }
}

/// The cache: the policy's bookkeeping and the bytes of what it holds, kept in step through
/// the policy's eviction log.
struct Store {
    cache: Box<dyn Cache + Send>,
    objects: HashMap<u64, Object>,
    evicted: Vec<u64>,
}

/// What a cached object costs beyond its body, charged against the capacity so that the
/// capacity bounds the memory really held: the map entry, the policy's slot, the validators
/// and the allocator's headers. Measured with 1 KiB objects (`bench/abuse.sh`): about 330
/// bytes each; charged as 384.
pub const PER_OBJECT_BYTES: usize = 384;

/// `b` in an allocation of exactly its size: a body may be a slice of a much larger read
/// buffer, which a cached slice would keep alive; one already exact is kept as it is (a
/// second allocation per miss fragments the heap).
pub fn exact(b: Bytes) -> Bytes {
    match b.try_into_mut() {
        Ok(m) if m.capacity() == m.len() => m.freeze(),
        Ok(m) => Bytes::copy_from_slice(&m),
        Err(b) => Bytes::copy_from_slice(&b),
    }
}

/// An origin response's body, read chunk by chunk into one allocation of its announced length
/// (then [`exact`]). `Response::bytes` keeps every chunk until the last one arrives, so ten
/// concurrent 8 MiB misses held 80 MiB of small chunks at once, and the heap they left behind
/// stayed resident after they were freed.
pub async fn read_body(mut r: reqwest::Response) -> Result<Bytes, reqwest::Error> {
    // The announced length sizes the buffer only up to a bound: a wrong one cannot make it huge.
    const MAX_RESERVE: u64 = 256 << 20;
    let mut body = Vec::with_capacity(r.content_length().unwrap_or(0).min(MAX_RESERVE) as usize);
    while let Some(chunk) = r.chunk().await? {
        body.extend_from_slice(&chunk);
    }
    Ok(exact(Bytes::from(body)))
}

/// The process's reference instant for objects' fetch times.
static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// Tenths of a second since [`EPOCH`] (saturating after 13 years).
fn tenths_since_epoch() -> u32 {
    u32::try_from(EPOCH.elapsed().as_millis() / 100).unwrap_or(u32::MAX)
}

/// The size an object of `len` bytes is charged.
pub fn charged(len: usize) -> u32 {
    u32::try_from(len.saturating_add(PER_OBJECT_BYTES)).unwrap_or(u32::MAX)
}

impl Store {
    /// The object's bytes on a hit (the policy counts the access).
    fn get(&mut self, id: u64, name: Option<&Arc<str>>) -> Option<Object> {
        let b = self.objects.get(&id)?.clone();
        if b.name() != name {
            return None; // another file with the same hash: fetched, not stored
        }
        let hit = self.cache.access(id, charged(b.body.len()));
        debug_assert!(hit, "bytes held only for cached objects");
        Some(b)
    }

    /// A stored object validated again (a 304): fresh again from `fetched`, if it is still the
    /// same body.
    fn refresh(&mut self, id: u64, body: &Arc<Pieces>, fresh: &Fresh, fetched: u32) {
        if let Some(o) = self.objects.get_mut(&id)
            && Arc::ptr_eq(&o.body, body)
        {
            o.fresh = fresh.clone();
            o.fetched = fetched;
        }
    }

    /// Offers a fetched object to the policy; true if it was stored. A stored object of the
    /// same key is replaced (a validation answered with a new representation) if the new one
    /// is no larger, within the size the policy charged; else the old one stays.
    fn put(&mut self, id: u64, body: &Object) -> bool {
        if let Some(old) = self.objects.get_mut(&id) {
            if body.body.len() <= old.body.len() && old.name() == body.name() {
                *old = body.clone();
            }
            return true;
        }
        self.cache.access(id, charged(body.body.len()));
        let stored = self.cache.contains(id);
        if stored {
            self.objects.insert(id, body.clone());
        }
        self.cache.drain_evictions(&mut self.evicted);
        for e in self.evicted.drain(..) {
            self.objects.remove(&e);
        }
        stored
    }
}

/// Until when a stored object may be served, and to which requests (RFC 9111 section 4).
#[derive(Debug, Clone, Default)]
struct Fresh {
    /// Fresh until, in tenths of a second since [`EPOCH`].
    until: u32,
    /// May be served stale, when the origin fails, until (RFC 5861 `stale-if-error`).
    stale_until: u32,
    /// The request headers it varies on, with the values of the request that fetched it
    /// (section 4.1): another request's values must match for it to be used.
    vary: Option<Arc<Vec<Selecting>>>,
}

/// A request header a stored response varies on, and its value in the request that fetched
/// it (None: absent).
type Selecting = (String, Option<Box<[u8]>>);

impl Fresh {
    /// The rules of a response that arrived now with `caching`, for a request `req`.
    fn of(c: &http::Caching, req: &HeaderMap, fetched: u32) -> Fresh {
        let tenths = |d: Duration| u32::try_from(d.as_millis() / 100).unwrap_or(u32::MAX);
        let until = fetched.saturating_add(tenths(c.lifetime));
        let stale_until = if c.must_revalidate {
            until
        } else {
            until.saturating_add(tenths(c.stale_if_error))
        };
        let vary = (!c.vary.is_empty()).then(|| {
            Arc::new(
                c.vary
                    .iter()
                    .map(|f| (f.clone(), req.get(f.as_str()).map(|v| v.as_bytes().into())))
                    .collect(),
            )
        });
        Fresh {
            until,
            stale_until,
            vary,
        }
    }

    fn fresh(&self, now: u32) -> bool {
        now < self.until
    }

    /// Whether the request `req` may be answered with it (section 4.1).
    fn selects(&self, req: &HeaderMap) -> bool {
        self.vary.as_ref().is_none_or(|vary| {
            vary.iter()
                .all(|(f, v)| req.get(f.as_str()).map(|x| x.as_bytes()) == v.as_deref())
        })
    }
}

/// An object as fetched from the origin: its bytes, its validators, when it was fetched (for
/// `Age`) and how long it stays fresh.
#[derive(Debug, Clone)]
struct Object {
    body: Arc<Pieces>,
    fresh: Fresh,
    validators: Arc<Validators>,
    /// When it was fetched, in tenths of a second since [`EPOCH`] (for `Age`, whole seconds):
    /// 4 bytes where an `Instant` takes 16, so that an object with the media pointer below
    /// costs what it did before media came (13 years of uptime fit).
    fetched: u32,
    /// A media file's name and type (None for catalogue objects, which are octet streams):
    /// the name is checked on every hit, since media objects are cached under a hash of it.
    /// One pointer, so that catalogue objects cost no more than before media came.
    media: Option<Arc<(Arc<str>, &'static str)>>,
}

impl Object {
    /// What a response with it says.
    fn meta(&self) -> Meta {
        Meta {
            validators: self.validators.clone(),
            len: Some(self.body.len()),
            fetched: self.fetched,
            media: self.media.clone(),
            fresh: self.fresh.clone(),
            forward: None,
        }
    }

    fn name(&self) -> Option<&Arc<str>> {
        self.media.as_ref().map(|m| &m.0)
    }
}

/// What one origin fetch gave, once the origin's response head came.
#[derive(Clone)]
enum Fetched {
    /// A cacheable object being filled: every request for it reads the fill.
    Fill(Arc<Fill>, Meta),
    /// An object passed through: the origin's response, for the request that fetched it; the
    /// others that waited fetch their own.
    Pass(
        Arc<Mutex<Option<(reqwest::Response, OwnedSemaphorePermit)>>>,
        Meta,
    ),
    /// Every pass-through stream is taken.
    Busy,
    /// The stored object is still valid (a 304 to a validation), fresh again as said.
    NotModified(Fresh, u32),
    Status(u16),
    Timeout,
    Unreachable,
}

/// What is known of a fetched object from the origin's response head.
#[derive(Debug, Clone)]
struct Meta {
    validators: Arc<Validators>,
    /// The length the origin announced.
    len: Option<usize>,
    /// When it was fetched, as [`Object::fetched`] (its age at arrival counted).
    fetched: u32,
    media: Option<Arc<(Arc<str>, &'static str)>>,
    fresh: Fresh,
    /// Headers passed on to the client of a response that is not stored (its `Set-Cookie`,
    /// `Cache-Control`, `Vary`, `Expires`), copied out of the origin's read buffer.
    forward: Option<Arc<HeaderMap>>,
}

impl Meta {
    fn name(&self) -> Option<&Arc<str>> {
        self.media.as_ref().map(|m| &m.0)
    }

    fn content_type(&self) -> &'static str {
        self.media
            .as_ref()
            .map_or("application/octet-stream", |m| m.1)
    }
}

struct EdgeState {
    cfg: EdgeConfig,
    origin_url: String,
    store: Mutex<Store>,
    inflight: Flights<u64, Fetched>,
    /// Fills under way, by cache id: a request for one joins it mid-stream.
    filling: Mutex<HashMap<u64, (Arc<Fill>, Meta)>>,
    /// The fill budget, in KiB: each fill holds its object's size while it runs.
    fill_budget: Arc<Semaphore>,
    /// Pass-through streams allowed at once.
    streams: Arc<Semaphore>,
    /// Largest object stored, bytes.
    max_object: usize,
    client: reqwest::Client,
    shaper: Option<TokenBucket>,
    metrics: Metrics,
    /// Per-population admission state, by population name.
    admission: Mutex<HashMap<String, Share>>,
    /// Streaming sessions by (population, session).
    sessions: Mutex<Sessions>,
    /// Requests refused because their population has no threshold here (yet).
    no_threshold: std::sync::atomic::AtomicU64,
    /// Session requests refused for their token (403), and for too many under way (429).
    bad_token: std::sync::atomic::AtomicU64,
    busy: std::sync::atomic::AtomicU64,
    /// The sessions' CMCD reports, aggregated (by the session's name in the path).
    qoe: Mutex<Tally>,
    /// Requests with CMCD data read, refused (malformed, oversized), and values dropped.
    cmcd_read: std::sync::atomic::AtomicU64,
    cmcd_malformed: std::sync::atomic::AtomicU64,
    cmcd_oversized: std::sync::atomic::AtomicU64,
    cmcd_dropped: std::sync::atomic::AtomicU64,
}

/// Streaming sessions: each admitted one's requests under way and when its latest ended, and
/// when each refused one was refused (counted as blocked once per lease).
#[derive(Default)]
struct Sessions {
    admitted: HashMap<(String, String), Held>,
    refused: HashMap<(String, String), Instant>,
    swept: Option<Instant>,
}

/// An admitted session's slot.
struct Held {
    last: Instant,
    under_way: u32,
}

impl Sessions {
    /// Expired leases give their slots back: swept at most four times a lease, or now if
    /// `always` (a report must not show slots that have expired).
    fn sweep(
        &mut self,
        shares: &mut HashMap<String, Share>,
        now: Instant,
        lease: Duration,
        always: bool,
    ) {
        if !always
            && self
                .swept
                .is_some_and(|t| now.duration_since(t) < lease / 4)
        {
            return;
        }
        self.swept = Some(now);
        self.admitted.retain(|(p, _), held| {
            // A session with a request under way (a long download) keeps its slot.
            let live = held.under_way > 0 || now.duration_since(held.last) < lease;
            if !live && let Some(s) = shares.get_mut(p) {
                s.active = s.active.saturating_sub(1);
            }
            live
        });
        self.refused.retain(|_, at| now.duration_since(*at) < lease);
    }
}

/// What a content request names: a catalogue object, or a file of the media asset.
enum Key {
    Catalogue(u64),
    Media(Arc<str>),
}

impl Key {
    /// The cache's id: the catalogue id, or a hash of the file name with the top bit set (so
    /// the two never meet; the name is checked on hits).
    fn id(&self) -> u64 {
        match self {
            Key::Catalogue(id) => *id,
            Key::Media(name) => {
                xxhash_rust::xxh64::xxh64(name.as_bytes(), 0x006d_6564_6961) | 1 << 63
            }
        }
    }

    fn name(&self) -> Option<Arc<str>> {
        match self {
            Key::Catalogue(_) => None,
            Key::Media(n) => Some(n.clone()),
        }
    }
}

/// A population's share at this edge: its threshold, streams now, the most at once since the
/// last report was read, and counts.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Share {
    pub limit: u64,
    pub active: u64,
    /// The most streams at once since the last report (what the population used here, for the
    /// steering server's guarantee); reports of older edges have none.
    #[serde(default)]
    pub peak: u64,
    pub admitted: u64,
    pub blocked: u64,
    /// Requests of the population's sessions in flight here when the report was read (a
    /// response counts until its last byte is sent): Prequal's RIF. Older edges report none.
    #[serde(default)]
    pub in_flight: u64,
}

impl Share {
    /// One more stream.
    fn take(&mut self) {
        self.active += 1;
        self.admitted += 1;
        self.peak = self.peak.max(self.active);
    }
}

/// A request admitted for a population: a stream's slot, or one of a session's requests under
/// way; given back when dropped (the body ended, or the client went away).
struct Admitted {
    state: Arc<EdgeState>,
    held: Holding,
}

enum Holding {
    Stream(String),
    Session((String, String)),
}

impl Drop for Admitted {
    fn drop(&mut self) {
        match &self.held {
            Holding::Stream(population) => {
                if let Some(s) = self
                    .state
                    .admission
                    .lock()
                    .expect("admission lock")
                    .get_mut(population)
                {
                    s.active -= 1;
                }
            }
            Holding::Session(key) => {
                let mut sessions = self.state.sessions.lock().expect("sessions lock");
                if let Some(h) = sessions.admitted.get_mut(key) {
                    h.under_way = h.under_way.saturating_sub(1);
                    // The lease runs from the end of the latest request.
                    h.last = Instant::now();
                }
            }
        }
    }
}

/// Starts an edge on `addr`.
pub async fn start(addr: SocketAddr, cfg: EdgeConfig) -> Result<Edge, Error> {
    cfg.limits.validate()?;
    let capacity = Capacity::new(cfg.capacity, Unit::Bytes)?;
    if cfg.origin_timeout.is_zero() {
        return Err(cdnlab::Error::param("origin-timeout", "0", "a duration > 0").into());
    }
    if cfg
        .admission
        .as_ref()
        .is_some_and(|s| s.chars().count() < 16)
    {
        return Err(cdnlab::Error::param("secret", "(too short)", "at least 16 characters").into());
    }
    if cfg.session_lease.is_zero() {
        return Err(cdnlab::Error::param("session-lease", "0", "a duration > 0").into());
    }
    if cfg.session_requests == 0 {
        return Err(cdnlab::Error::param("session-requests", 0, "at least 1 request").into());
    }
    if cfg.pass_through == 0 {
        return Err(cdnlab::Error::param("max-pass-through", 0, "at least 1 stream").into());
    }
    if cfg.stream_rate == Some(0) {
        return Err(cdnlab::Error::param("stream-rate", 0, "at least 1 byte per second").into());
    }
    if cfg.policy.offline() {
        return Err(cdnlab::Error::param(
            "policy",
            cfg.policy.name(),
            "a policy that does not read the future (belady needs each request's next access)",
        )
        .into());
    }
    let shaper = cfg
        .bandwidth
        .map(|b| TokenBucket::new(b, (b / 10).max(CHUNK as u64)))
        .transpose()?;
    let mut cache = cfg.policy.build(capacity);
    cache.log_evictions();
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(64)
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let state = Arc::new(EdgeState {
        origin_url: format!("http://{}/", cfg.origin),
        store: Mutex::new(Store {
            cache,
            objects: HashMap::new(),
            evicted: Vec::new(),
        }),
        inflight: Flights::default(),
        filling: Mutex::new(HashMap::new()),
        fill_budget: Arc::new(Semaphore::new(
            usize::try_from(cfg.fill_budget.unwrap_or(cfg.capacity / 4) >> 10)
                .unwrap_or(usize::MAX)
                .min(Semaphore::MAX_PERMITS),
        )),
        streams: Arc::new(Semaphore::new(cfg.pass_through)),
        max_object: usize::try_from(cfg.max_object_size.unwrap_or(cfg.capacity / 8))
            .unwrap_or(usize::MAX),
        client,
        shaper,
        metrics: Metrics::default(),
        admission: Mutex::new(HashMap::new()),
        sessions: Mutex::new(Sessions::default()),
        no_threshold: Default::default(),
        bad_token: Default::default(),
        busy: Default::default(),
        qoe: Mutex::new(Tally::new(
            u64::try_from(cfg.qoe_window.as_millis()).unwrap_or(u64::MAX),
            MAX_SESSIONS,
        )),
        cmcd_read: Default::default(),
        cmcd_malformed: Default::default(),
        cmcd_oversized: Default::default(),
        cmcd_dropped: Default::default(),
        cfg: cfg.clone(),
    });
    let router = Router::new()
        .route("/content/{id}", get(content))
        .route("/p/{population}/{session}/{name}", get(media))
        .route("/internal/admission", get(shares).post(install))
        .route("/internal/qoe", get(qoe))
        .route("/health", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let listener = serve::bind(addr).await?;
    let mut server = serve::spawn(listener, router, cfg.limits, &state.metrics)?;
    if let (Some(link), Some(secret)) = (cfg.steering.clone(), cfg.admission.clone()) {
        let st = state.clone();
        server = server.with_background(move |stopped| ask_thresholds(st, link, secret, stopped));
    }
    Ok(Edge { server, state })
}

/// Asks the steering server for this edge's thresholds (`GET /internal/thresholds?edge=E`)
/// and installs them, once a second until it has them or the edge stops.
async fn ask_thresholds(
    s: Arc<EdgeState>,
    link: SteeringLink,
    secret: String,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let url = format!(
        "http://{}/internal/thresholds?edge={}",
        link.addr, link.edge
    );
    loop {
        let got = match s
            .client
            .get(&url)
            .header(serve::SECRET, &secret)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => serve::body_capped(r, 4 << 20)
                .await
                .and_then(|b| serde_json::from_slice::<HashMap<String, u64>>(&b).ok()),
            _ => None,
        };
        if let Some(limits) = got {
            let mut shares = s.admission.lock().expect("admission lock");
            for (p, limit) in limits.into_iter().take(MAX_POPULATIONS) {
                if good_population(&p) {
                    shares.entry(p).or_default().limit = limit;
                }
            }
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stopped.changed() => return,
        }
    }
}

/// Most populations an edge keeps thresholds for.
pub const MAX_POPULATIONS: usize = 4096;

/// A population name an edge takes: 1 to 64 bytes.
fn good_population(p: &str) -> bool {
    (1..=64).contains(&p.len())
}

/// The query of a content request.
#[derive(serde::Deserialize)]
struct Who {
    population: Option<String>,
}

/// The query of a threshold installation.
#[derive(serde::Deserialize)]
struct Install {
    population: String,
    limit: u64,
}

impl EdgeState {
    /// Reads the CMCD data of a request of `session` (its query string, else its CMCD
    /// headers) into the tally; data that is refused is counted and otherwise ignored.
    fn read_cmcd(&self, session: &str, query: Option<&str>, req: &HeaderMap) {
        let report = match query.map(cmcd::Report::from_query) {
            Some(Ok(Some(r))) => Ok(Some(r)),
            Some(Err(e)) => Err(e),
            _ => cmcd::Report::from_headers(
                req.iter()
                    .filter(|(n, _)| n.as_str().starts_with("cmcd-"))
                    .map(|(n, v)| (n.as_str(), v.as_bytes())),
            ),
        };
        match report {
            Ok(Some(r)) => {
                self.cmcd_read.fetch_add(1, Relaxed);
                self.cmcd_dropped.fetch_add(u64::from(r.dropped), Relaxed);
                let now = u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.qoe.lock().expect("qoe lock").record(session, now, &r);
            }
            Ok(None) => {}
            Err(Refused::Malformed) => {
                self.cmcd_malformed.fetch_add(1, Relaxed);
            }
            Err(Refused::Oversized { .. }) => {
                self.cmcd_oversized.fetch_add(1, Relaxed);
            }
        }
    }

    /// The sessions' aggregates over the window ending now.
    fn qoe_summary(&self) -> cdnlab::steer::tally::Summary {
        let now = u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.qoe.lock().expect("qoe lock").summary(now)
    }

    /// Whether the request carries the admission secret.
    fn authorised(&self, h: &HeaderMap) -> bool {
        self.cfg
            .admission
            .as_ref()
            .is_some_and(|want| crate::serve::has_secret(h, want))
    }

    /// Admits a stream of `population`, or says why not.
    fn admit(self: &Arc<Self>, population: Option<&str>) -> Result<Option<Admitted>, Refusal> {
        if self.cfg.admission.is_none() {
            return Ok(None);
        }
        let p = population.ok_or(Refusal::NoPopulation)?;
        let mut shares = self.admission.lock().expect("admission lock");
        let s = shares.get_mut(p).ok_or_else(|| self.no_threshold())?;
        // The library's threshold rule at one server (the steering server sized the
        // thresholds within this edge's capacity).
        if !admission::under_threshold(s.active, s.limit) {
            s.blocked += 1;
            return Err(Refusal::OverShare);
        }
        s.take();
        Ok(Some(Admitted {
            state: self.clone(),
            held: Holding::Stream(p.to_string()),
        }))
    }
}

impl EdgeState {
    /// A refusal for a population without a threshold here: counted.
    fn no_threshold(&self) -> Refusal {
        self.no_threshold.fetch_add(1, Relaxed);
        Refusal::NoThreshold
    }

    /// Admits a request of streaming session `session` of `population`: a new session's token
    /// is checked, then it takes a slot if the population is under its threshold here; an
    /// admitted session's request is under way until the guard returned is dropped.
    fn admit_session(
        self: &Arc<Self>,
        population: &str,
        session: &str,
    ) -> Result<Option<Admitted>, Refusal> {
        let Some(secret) = &self.cfg.admission else {
            return Ok(None);
        };
        let now = Instant::now();
        let lease = self.cfg.session_lease;
        let key = (population.to_string(), session.to_string());
        let admitted = |held| {
            Ok(Some(Admitted {
                state: self.clone(),
                held,
            }))
        };
        {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            if let Some(h) = sessions.admitted.get_mut(&key) {
                if h.under_way >= self.cfg.session_requests {
                    self.busy.fetch_add(1, Relaxed);
                    return Err(Refusal::Busy);
                }
                h.under_way += 1;
                h.last = now;
                return admitted(Holding::Session(key));
            }
        }
        // Only a session admitted above skips the check: its token was checked then.
        if let Err(why) = session::check(secret, population, session, session::unix_now()) {
            self.bad_token.fetch_add(1, Relaxed);
            return Err(Refusal::Token(why));
        }
        let mut shares = self.admission.lock().expect("admission lock");
        let mut sessions = self.sessions.lock().expect("sessions lock");
        sessions.sweep(&mut shares, now, lease, false);
        if let Some(h) = sessions.admitted.get_mut(&key) {
            // Admitted by a concurrent first request meanwhile.
            h.under_way += 1;
            h.last = now;
            return admitted(Holding::Session(key));
        }
        let s = shares
            .get_mut(population)
            .ok_or_else(|| self.no_threshold())?;
        if !admission::under_threshold(s.active, s.limit) {
            if !sessions.refused.contains_key(&key) && sessions.refused.len() < MAX_SESSIONS {
                sessions.refused.insert(key, now);
                s.blocked += 1;
            }
            return Err(Refusal::OverShare);
        }
        if sessions.admitted.len() >= MAX_SESSIONS {
            return Err(Refusal::OverShare);
        }
        sessions.refused.remove(&key);
        sessions.admitted.insert(
            key.clone(),
            Held {
                last: now,
                under_way: 1,
            },
        );
        s.take();
        admitted(Holding::Session(key))
    }
}

/// Why a content request was not admitted.
enum Refusal {
    NoPopulation,
    /// No threshold here for the population: none installed yet (an edge just started or
    /// restarted), or a population the steering server does not know. Retrying is right: the
    /// steering server checks every edge's thresholds every window.
    NoThreshold,
    OverShare,
    /// A session token that is not the steering server's, or expired (403).
    Token(crate::session::TokenError),
    /// Too many requests of one session under way (429).
    Busy,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::NoPopulation => (
                StatusCode::BAD_REQUEST,
                "population required (?population=NAME)\n",
            )
                .into_response(),
            Refusal::NoThreshold => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "no threshold for this population at this edge (yet)\n",
            )
                .into_response(),
            Refusal::OverShare => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "population over its share at this edge\n",
            )
                .into_response(),
            Refusal::Token(why) => (
                StatusCode::FORBIDDEN,
                format!(
                    "{why}: open a session with the steering server (/play/POPULATION/master.m3u8 or manifest.mpd)\n"
                ),
            )
                .into_response(),
            Refusal::Busy => (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "1")],
                "too many requests of this session under way\n",
            )
                .into_response(),
        }
    }
}
