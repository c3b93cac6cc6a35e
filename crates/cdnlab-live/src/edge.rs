//! The edge: a caching reverse proxy in front of the origin. `GET /content/{id}` is served from
//! the cache (the library's policy decides what stays, within a capacity in bytes) or fetched
//! from the origin, concurrent misses for one object sharing one fetch. Every answer about
//! content says what the cache did in an RFC 9211 `Cache-Status` header:
//!
//! | case | status | `Cache-Status` |
//! |---|---|---|
//! | hit | 200 | `cdnlab; hit` |
//! | miss, fetched and stored | 200 | `cdnlab; fwd=miss; stored` |
//! | miss, fetched, too large to store | 200 | `cdnlab; fwd=miss` |
//! | miss, answered by another request's fetch | 200 | `cdnlab; fwd=miss; collapsed` |
//! | origin has no such object | 404 | `cdnlab; fwd=miss; fwd-status=404` |
//! | origin answered an error | 502 | `cdnlab; fwd=miss; fwd-status=<code>` |
//! | origin unreachable | 502 | `cdnlab; fwd=miss; detail="origin unreachable"` |
//! | origin too slow | 504 | `cdnlab; fwd=miss; detail="origin timeout"` |
//!
//! `GET /p/{population}/{session}/{name}` serves file `name` of the origin's media asset
//! (`/media/{name}`) to a streaming session (see [`crate::media`]): cached by name, shared by
//! every session, with the origin's `Content-Type`. With admission, a session of a population is
//! admitted at its first request while fewer of that population's sessions than its threshold
//! are active here, and stays admitted while it keeps requesting (a lease of
//! [`EdgeConfig::session_lease`] from its latest request); a refused session gets 503 with
//! `Retry-After` and counts once per lease as blocked. Content answers allow any origin (CORS).
//!
//! Only complete 200 answers are stored. With a bandwidth, bodies go out in 16 KiB chunks
//! through one [`TokenBucket`] per edge, so its streams share that rate. `/metrics` and
//! `/health` report on it.

use crate::Error;
use crate::catalogue::{IdError, parse_id};
use crate::serve::flight::Flights;
use crate::serve::http::{self, Validators};
use crate::serve::metrics::{self, Kind, Metrics, single};
use crate::serve::shaper::TokenBucket;
use crate::serve::{self, Limits, Running};
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use cdnlab::Named;
use cdnlab::alloc::admission;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// Longest wait for the origin's whole answer.
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
}

/// The default of [`EdgeConfig::session_lease`]: five 2-second segments, so a player that
/// fetches a segment every 2 s once its buffer is full keeps its slot, and one that stopped
/// gives it back within 10 s.
pub const DEFAULT_SESSION_LEASE: Duration = Duration::from_secs(10);

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
        let hit = self.cache.access(id, charged(b.bytes.len()));
        debug_assert!(hit, "bytes held only for cached objects");
        Some(b)
    }

    /// Offers a fetched object to the policy; true if it was stored.
    fn put(&mut self, id: u64, body: &Object) -> bool {
        if self.objects.contains_key(&id) {
            return true;
        }
        self.cache.access(id, charged(body.bytes.len()));
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

/// An object as fetched from the origin: its bytes, its validators, and when it was fetched
/// (for `Age`).
#[derive(Debug, Clone)]
struct Object {
    bytes: Bytes,
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
    fn name(&self) -> Option<&Arc<str>> {
        self.media.as_ref().map(|m| &m.0)
    }

    fn content_type(&self) -> &'static str {
        self.media
            .as_ref()
            .map_or("application/octet-stream", |m| m.1)
    }
}

/// What one origin fetch gave.
#[derive(Debug, Clone)]
enum Fetched {
    Body(Object),
    Status(u16),
    Timeout,
    Unreachable,
}

struct EdgeState {
    cfg: EdgeConfig,
    origin_url: String,
    store: Mutex<Store>,
    inflight: Flights<u64, Fetched>,
    client: reqwest::Client,
    shaper: Option<TokenBucket>,
    metrics: Metrics,
    /// Per-population admission state, by population name.
    admission: Mutex<HashMap<String, Share>>,
    /// Streaming sessions by (population, session).
    sessions: Mutex<Sessions>,
}

/// Streaming sessions: when each admitted one last asked, and when each refused one was
/// refused (counted as blocked once per lease).
#[derive(Default)]
struct Sessions {
    admitted: HashMap<(String, String), Instant>,
    refused: HashMap<(String, String), Instant>,
    swept: Option<Instant>,
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

/// A population's share at this edge: its threshold, streams now, and counts.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Share {
    pub limit: u64,
    pub active: u64,
    pub admitted: u64,
    pub blocked: u64,
}

/// A stream admitted for a population: it holds a slot until dropped (the body ended, or the
/// client went away).
struct Admitted {
    state: Arc<EdgeState>,
    population: String,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Some(s) = self
            .state
            .admission
            .lock()
            .expect("admission lock")
            .get_mut(&self.population)
        {
            s.active -= 1;
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
        client,
        shaper,
        metrics: Metrics::default(),
        admission: Mutex::new(HashMap::new()),
        sessions: Mutex::new(Sessions::default()),
        cfg: cfg.clone(),
    });
    let router = Router::new()
        .route("/content/{id}", get(content))
        .route("/p/{population}/{session}/{name}", get(media))
        .route("/internal/admission", get(shares).post(install))
        .route("/health", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let listener = serve::bind(addr).await?;
    Ok(Edge {
        server: serve::spawn(listener, router, cfg.limits, &state.metrics)?,
        state,
    })
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
        let s = shares.get_mut(p).ok_or(Refusal::Unknown)?;
        // The library's threshold rule at one server (the steering server sized the
        // thresholds within this edge's capacity).
        if !admission::under_threshold(s.active, s.limit) {
            s.blocked += 1;
            return Err(Refusal::OverShare);
        }
        s.active += 1;
        s.admitted += 1;
        Ok(Some(Admitted {
            state: self.clone(),
            population: p.to_string(),
        }))
    }
}

impl EdgeState {
    /// Admits a request of streaming session `session` of `population`: an admitted session's
    /// lease is renewed; a new one takes a slot if the population is under its threshold here.
    fn admit_session(&self, population: &str, session: &str) -> Result<(), Refusal> {
        if self.cfg.admission.is_none() {
            return Ok(());
        }
        let now = Instant::now();
        let lease = self.cfg.session_lease;
        let mut shares = self.admission.lock().expect("admission lock");
        let mut sessions = self.sessions.lock().expect("sessions lock");
        // Expired leases give their slots back (swept at most four times a lease).
        if sessions
            .swept
            .is_none_or(|t| now.duration_since(t) >= lease / 4)
        {
            sessions.swept = Some(now);
            sessions.admitted.retain(|(p, _), last| {
                let live = now.duration_since(*last) < lease;
                if !live && let Some(s) = shares.get_mut(p) {
                    s.active = s.active.saturating_sub(1);
                }
                live
            });
            sessions
                .refused
                .retain(|_, at| now.duration_since(*at) < lease);
        }
        let key = (population.to_string(), session.to_string());
        if let Some(last) = sessions.admitted.get_mut(&key) {
            *last = now;
            return Ok(());
        }
        let s = shares.get_mut(population).ok_or(Refusal::Unknown)?;
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
        sessions.admitted.insert(key, now);
        s.active += 1;
        s.admitted += 1;
        Ok(())
    }
}

/// Why a content request was not admitted.
enum Refusal {
    NoPopulation,
    Unknown,
    OverShare,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::NoPopulation => (
                StatusCode::BAD_REQUEST,
                "population required (?population=NAME)\n",
            )
                .into_response(),
            Refusal::Unknown => (StatusCode::BAD_REQUEST, "unknown population\n").into_response(),
            Refusal::OverShare => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "population over its share at this edge\n",
            )
                .into_response(),
        }
    }
}

async fn install(
    State(s): State<Arc<EdgeState>>,
    h: HeaderMap,
    q: Result<Query<Install>, QueryRejection>,
) -> Response {
    if !s.authorised(&h) {
        return crate::serve::secret_required();
    }
    let Ok(Query(q)) = q else {
        return (
            StatusCode::BAD_REQUEST,
            "population=NAME&limit=STREAMS expected\n",
        )
            .into_response();
    };
    if q.population.is_empty() || q.population.len() > 64 {
        return (StatusCode::BAD_REQUEST, "population: 1 to 64 characters\n").into_response();
    }
    let mut shares = s.admission.lock().expect("admission lock");
    if shares.len() >= 4096 && !shares.contains_key(&q.population) {
        return (
            StatusCode::BAD_REQUEST,
            "too many populations (4096 at most)\n",
        )
            .into_response();
    }
    // Streams already admitted keep their slots: a lower limit only refuses new ones.
    shares.entry(q.population).or_default().limit = q.limit;
    StatusCode::NO_CONTENT.into_response()
}

async fn shares(State(s): State<Arc<EdgeState>>, h: HeaderMap) -> Response {
    if !s.authorised(&h) {
        return crate::serve::secret_required();
    }
    let shares = s.admission.lock().expect("admission lock").clone();
    axum::Json(shares).into_response()
}

/// Counts a request in flight for as long as it lives.
struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

async fn content(
    State(s): State<Arc<EdgeState>>,
    Path(id): Path<String>,
    who: Result<Query<Who>, QueryRejection>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    s.metrics.in_flight.inc();
    let _guard = InFlight(&s.metrics);
    let population = who.ok().and_then(|Query(w)| w.population);
    let r = match (s.admit(population.as_deref()), parse_id(&id, None)) {
        (Ok(stream), Ok(id)) => answer(&s, Key::Catalogue(id), &req, stream).await,
        (Ok(_), Err(IdError::Malformed | IdError::Unknown)) => (
            StatusCode::BAD_REQUEST,
            "object id: 1 to 20 decimal digits\n",
        )
            .into_response(),
        (Err(refused), _) => refused.into_response(),
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

/// A name in a session path: 1 to 64 of letters, digits, `-` and `_`.
fn session_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

async fn media(
    State(s): State<Arc<EdgeState>>,
    Path((population, session, name)): Path<(String, String, String)>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    s.metrics.in_flight.inc();
    let _guard = InFlight(&s.metrics);
    let r = if !session_name(&population) || !session_name(&session) {
        (
            StatusCode::BAD_REQUEST,
            "population and session: 1 to 64 letters, digits, - or _\n",
        )
            .into_response()
    } else if !crate::media::valid_name(&name) {
        (
            StatusCode::BAD_REQUEST,
            "file name: 1 to 128 letters, digits, '.', '-' or '_'\n",
        )
            .into_response()
    } else {
        match s.admit_session(&population, &session) {
            Ok(()) => answer(&s, Key::Media(name.into()), &req, None).await,
            Err(refused) => refused.into_response(),
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    let mut r = r;
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    r
}

async fn answer(
    s: &Arc<EdgeState>,
    key: Key,
    req: &HeaderMap,
    stream: Option<Admitted>,
) -> Response {
    let id = key.id();
    let name = key.name();
    let cached = s.store.lock().expect("store lock").get(id, name.as_ref());
    if let Some(body) = cached {
        s.metrics.hits.inc();
        return s.send(req, &body, "cdnlab; hit", stream);
    }
    // One fetch per object at a time (`flight`): whoever runs it stores the result, the
    // others wait for it.
    let mut flight = s.inflight.join(id);
    let fetched = flight.result(|| s.fetch(&key)).await;
    let fetched_here = flight.ran();
    let mut stored = false;
    if fetched_here {
        if let Fetched::Body(b) = &fetched
            && b.name() == name.as_ref()
        {
            stored = s.store.lock().expect("store lock").put(id, b);
        }
        s.metrics.misses.inc();
    } else {
        s.metrics.collapsed.inc();
    }
    // After the store has it, so that no request finds neither.
    drop(flight);
    match fetched {
        Fetched::Body(b) => {
            let status = match (fetched_here, stored) {
                (false, _) => "cdnlab; fwd=miss; collapsed",
                (true, true) => "cdnlab; fwd=miss; stored",
                (true, false) => "cdnlab; fwd=miss",
            };
            s.send(req, &b, status, stream)
        }
        Fetched::Status(404) => failure(
            StatusCode::NOT_FOUND,
            "cdnlab; fwd=miss; fwd-status=404".into(),
        ),
        Fetched::Status(code) => failure(
            StatusCode::BAD_GATEWAY,
            format!("cdnlab; fwd=miss; fwd-status={code}"),
        ),
        Fetched::Timeout => failure(
            StatusCode::GATEWAY_TIMEOUT,
            "cdnlab; fwd=miss; detail=\"origin timeout\"".into(),
        ),
        Fetched::Unreachable => failure(
            StatusCode::BAD_GATEWAY,
            "cdnlab; fwd=miss; detail=\"origin unreachable\"".into(),
        ),
    }
}

/// An error answer with its `Cache-Status`.
fn failure(code: StatusCode, cache_status: String) -> Response {
    let mut r = (
        code,
        format!("{}\n", code.canonical_reason().unwrap_or("error")),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&cache_status) {
        r.headers_mut().insert("cache-status", v);
    }
    r
}

impl EdgeState {
    async fn fetch(&self, key: &Key) -> Fetched {
        self.metrics.origin_fetches.inc();
        let url = match key {
            Key::Catalogue(id) => format!("{}content/{id}", self.origin_url),
            Key::Media(name) => format!("{}media/{name}", self.origin_url),
        };
        let r = match self
            .client
            .get(url)
            .timeout(self.cfg.origin_timeout)
            .send()
            .await
        {
            Ok(resp) if resp.status() == reqwest::StatusCode::OK => {
                let validators = Arc::new(Validators::from_headers(resp.headers()));
                // One of the types the origin sends, as a static string: a parsed header value
                // is a slice of the response's whole read buffer, which a cached object would
                // keep alive (measured: 55 MB resident for an 8 MiB cache of 1 KiB objects).
                let content_type = resp
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map_or("application/octet-stream", crate::media::known_content_type);
                match read_body(resp).await {
                    Ok(bytes) => Fetched::Body(Object {
                        bytes,
                        validators,
                        fetched: tenths_since_epoch(),
                        media: key.name().map(|n| Arc::new((n, content_type))),
                    }),
                    Err(e) if e.is_timeout() => Fetched::Timeout,
                    Err(_) => Fetched::Unreachable,
                }
            }
            Ok(resp) => Fetched::Status(resp.status().as_u16()),
            Err(e) if e.is_timeout() => Fetched::Timeout,
            Err(_) => Fetched::Unreachable,
        };
        if !matches!(r, Fetched::Body(_) | Fetched::Status(404)) {
            self.metrics.origin_errors.inc();
        }
        r
    }

    /// A 200 answer with `body`: shaped if the edge has a bandwidth, paced if it has a stream
    /// rate, and holding an admitted stream's slot until its last byte.
    fn send(
        self: &Arc<Self>,
        req: &HeaderMap,
        object: &Object,
        cache_status: &'static str,
        stream: Option<Admitted>,
    ) -> Response {
        // Conditional and range requests (RFC 9110), on the object's validators.
        let (status, mut headers, body) = http::answer(req, &object.validators, &object.bytes);
        self.metrics.bytes_sent.inc_by(body.len() as u64);
        let len = body.len();
        let body = if self.shaper.is_some() || self.cfg.stream_rate.is_some() || stream.is_some() {
            let me = self.clone();
            let start = tokio::time::Instant::now();
            Body::from_stream(futures_util::stream::unfold(
                (0usize, stream),
                move |(at, stream)| {
                    let (me, body) = (me.clone(), body.clone());
                    async move {
                        if at >= body.len() {
                            return None; // the stream's slot, if any, is released here
                        }
                        let end = (at + CHUNK).min(body.len());
                        if let Some(b) = &me.shaper {
                            b.take((end - at) as u64).await;
                        }
                        if let Some(rate) = me.cfg.stream_rate {
                            // The chunk goes out when the stream has lasted its bytes / rate.
                            let due = start + Duration::from_secs_f64(end as f64 / rate as f64);
                            tokio::time::sleep_until(due).await;
                        }
                        Some((Ok::<_, std::io::Error>(body.slice(at..end)), (end, stream)))
                    }
                },
            ))
        } else {
            Body::from(body)
        };
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(object.content_type()),
        );
        if status != StatusCode::NOT_MODIFIED {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        headers.insert(
            HeaderName::from_static("cache-status"),
            HeaderValue::from_static(cache_status),
        );
        // Seconds since the object came from the origin (RFC 9111 section 5.1).
        headers.insert(
            header::AGE,
            HeaderValue::from(tenths_since_epoch().saturating_sub(object.fetched) / 10),
        );
        (status, headers, body).into_response()
    }
}

async fn metrics(State(s): State<Arc<EdgeState>>) -> Response {
    let (objects, used) = {
        let st = s.store.lock().expect("store lock");
        (st.cache.len() as f64, st.cache.used() as f64)
    };
    metrics::response(s.metrics.render(vec![
        single(
            "cdnlab_cache_objects",
            "Objects in the cache.",
            Kind::GAUGE,
            objects,
        ),
        single(
            "cdnlab_cache_bytes",
            "Bytes in the cache.",
            Kind::GAUGE,
            used,
        ),
        single(
            "cdnlab_cache_capacity_bytes",
            "Cache capacity in bytes.",
            Kind::GAUGE,
            s.cfg.capacity as f64,
        ),
        single(
            "cdnlab_origin_fetches_in_flight",
            "Origin fetches under way (one per object, shared by its concurrent misses).",
            Kind::GAUGE,
            s.inflight.len() as f64,
        ),
    ]))
}
