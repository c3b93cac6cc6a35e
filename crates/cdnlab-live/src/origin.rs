//! The origin: `GET /content/{id}` answers object `id` of a synthetic [`Catalogue`], after an
//! optional added latency, unless an injected failure answers 503 instead (a share of
//! requests, chosen by a hash of (seed, request number), or every request while down).
//! Answers carry an `ETag` (from the catalogue's seed, the id and the size) and a
//! `Last-Modified` (the origin's start), and honour conditional and range requests
//! ([`crate::serve::http`]). `/health` says whether it is up; `/metrics` counts what it answered.
//!
//! With an asset ([`crate::media::Asset`]), `GET /media/{name}` serves its files (the segments
//! and the packager's manifests), under the same latency and failures. With player files,
//! `GET /player/{name}` serves them (the player pages and the players' scripts), and
//! `POST /player/report` collects what the pages report (JSON values, 64 KiB each at most,
//! kept in order as the bytes received, within [`ReportLimits`]: a total in bytes and count,
//! and a rate per client address; `GET /player/reports` streams them as one JSON array). Media
//! and player answers allow any origin (CORS), since the pages play from the edges' hosts.

use crate::Error;
use crate::catalogue::{Catalogue, IdError, parse_id};
use crate::media::{Asset, Files, valid_name};
use crate::serve::http::{self, Validators};
use crate::serve::metrics::{self, Metrics};
use crate::serve::{self, Limits, Running};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use cdnlab::rng::splitmix64;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How an origin behaves.
#[derive(Debug, Clone)]
pub struct OriginConfig {
    pub catalogue: Catalogue,
    /// Added before every answer.
    pub latency: Duration,
    /// Share of content requests answered 503 instead, in [0, 1].
    pub error_share: f64,
    /// Answer 503 to everything (a failed origin that still accepts connections).
    pub down: bool,
    pub limits: Limits,
    /// The adaptive-bitrate asset under `/media/`.
    pub media: Option<Arc<Asset>>,
    /// The files under `/player/`.
    pub player: Option<Arc<Files>>,
    /// What `POST /player/report` keeps.
    pub reports: ReportLimits,
    /// Seconds a cache may keep content and media fresh (`Cache-Control: max-age`, RFC 9111
    /// section 5.2.2.1): the catalogue and the asset never change.
    pub max_age: u32,
}

/// The default of [`OriginConfig::max_age`]: a day.
pub const DEFAULT_MAX_AGE: u32 = 86_400;

/// What the origin keeps of the players' reports. The player page posts a batch of events
/// twice a second per player (a few hundred bytes): a page of 8 players sends about 3 KB/s,
/// and 32 MiB hold hours of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportLimits {
    /// Bytes of reports kept in all; later ones are refused (507) and counted.
    pub max_bytes: usize,
    /// Reports kept in all.
    pub max_count: usize,
    /// Bytes per second one client address may post, on average; more is refused (429).
    pub rate: f64,
    /// Bytes one client address may post at once above the rate.
    pub burst: f64,
}

impl Default for ReportLimits {
    fn default() -> Self {
        ReportLimits {
            max_bytes: 32 << 20,
            max_count: 200_000,
            rate: f64::from(64u32 << 10),
            burst: f64::from(1u32 << 20),
        }
    }
}

/// Client addresses whose report rate is tracked at once (buckets that are full again are
/// forgotten first).
const MAX_REPORTERS: usize = 4096;
/// Largest player report accepted (the serving loop refuses larger bodies before they reach
/// the route).
pub use crate::serve::MAX_REPORT_BYTES;

impl OriginConfig {
    /// An origin that serves `catalogue` promptly, without failures, with default limits.
    pub fn serving(catalogue: Catalogue) -> Self {
        OriginConfig {
            catalogue,
            latency: Duration::ZERO,
            error_share: 0.0,
            down: false,
            limits: Limits::default(),
            media: None,
            player: None,
            reports: ReportLimits::default(),
            max_age: DEFAULT_MAX_AGE,
        }
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        if !(0.0..=1.0).contains(&self.error_share) {
            return Err(cdnlab::Error::param(
                "error-share",
                self.error_share,
                "a share in [0, 1]",
            ));
        }
        self.limits.validate()
    }
}

/// A running origin, with switches a test or demo can flip.
pub struct Origin {
    pub server: Running,
    state: Arc<OriginState>,
}

impl Origin {
    /// Takes the origin down (503 to everything) or brings it back.
    pub fn set_down(&self, down: bool) {
        self.state.down.store(down, Relaxed);
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.state.metrics.requests()
    }

    /// The player reports received so far, in order.
    pub fn reports(&self) -> Vec<serde_json::Value> {
        let kept = self
            .state
            .reports
            .lock()
            .expect("reports lock")
            .kept
            .clone();
        kept.iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect()
    }

    /// Bytes of player reports kept.
    pub fn report_bytes(&self) -> usize {
        self.state.reports.lock().expect("reports lock").bytes
    }
}

/// The players' reports: the bytes of each, as received (a JSON value checked on arrival);
/// parsed values take ten times more (a 64 KiB `[0,0,...]` became about a megabyte).
#[derive(Default)]
struct Reports {
    kept: Vec<bytes::Bytes>,
    bytes: usize,
    /// Per client address: (tokens in bytes, when last filled).
    buckets: std::collections::HashMap<std::net::IpAddr, crate::serve::shaper::Allowance>,
    refused_rate: u64,
    refused_full: u64,
}

struct OriginState {
    cfg: OriginConfig,
    down: AtomicBool,
    counter: AtomicU64,
    metrics: Metrics,
    /// Every object's `Last-Modified`: when this origin started (the catalogue is fixed).
    started: SystemTime,
    reports: Mutex<Reports>,
}

/// Starts an origin on `addr`.
pub async fn start(addr: SocketAddr, cfg: OriginConfig) -> Result<Origin, Error> {
    cfg.validate()?;
    let state = Arc::new(OriginState {
        down: AtomicBool::new(cfg.down),
        cfg,
        counter: AtomicU64::new(0),
        metrics: Metrics::default(),
        started: Validators::seconds(SystemTime::now()),
        reports: Mutex::new(Reports::default()),
    });
    let router = Router::new()
        .route("/content/{id}", get(content))
        .route("/media/{name}", get(media))
        .route("/player/report", post(report))
        .route("/player/reports", get(reports))
        .route("/player/{name}", get(player))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let listener = serve::bind(addr).await?;
    Ok(Origin {
        server: serve::spawn(listener, router, state.cfg.limits, &state.metrics)?,
        state,
    })
}

async fn content(
    State(s): State<Arc<OriginState>>,
    Path(id): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = if let Some(failed) = delay_or_fail(&s).await {
        failed
    } else {
        match parse_id(&id, Some(s.cfg.catalogue.objects)) {
            Ok(id) => {
                let body = s.cfg.catalogue.bytes(id);
                // An object's bytes are a function of the catalogue's seed, its id and size: a
                // strong validator.
                let v = Validators {
                    etag: Some(format!(
                        "\"{:x}-{id:x}-{:x}\"",
                        s.cfg.catalogue.seed,
                        body.len()
                    )),
                    last_modified: Some(s.started),
                };
                let (status, mut h, part) = http::answer(&req, &v, &body);
                h.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/octet-stream"),
                );
                h.insert(header::CACHE_CONTROL, max_age(&s));
                s.metrics.bytes_sent.inc_by(part.len() as u64);
                (status, h, part).into_response()
            }
            Err(IdError::Malformed) => (
                StatusCode::BAD_REQUEST,
                "object id: 1 to 20 decimal digits\n",
            )
                .into_response(),
            Err(IdError::Unknown) => (StatusCode::NOT_FOUND, "no such object\n").into_response(),
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

/// The latency and the injected failures every answer goes through; Some(answer) if failed.
async fn delay_or_fail(s: &OriginState) -> Option<Response> {
    let n = s.counter.fetch_add(1, Relaxed);
    if !s.cfg.latency.is_zero() {
        tokio::time::sleep(s.cfg.latency).await;
    }
    let draw = (splitmix64(s.cfg.catalogue.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 11)
        as f64
        / (1u64 << 53) as f64;
    (s.down.load(Relaxed) || draw < s.cfg.error_share).then(|| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "origin failure (injected)\n",
        )
            .into_response()
    })
}

/// A file of `files` (or 404), with conditional and range requests, open to any origin.
fn serve_file(s: &OriginState, files: Option<&Files>, name: &str, req: &HeaderMap) -> Response {
    let mut r = match files.filter(|_| valid_name(name)).and_then(|f| f.get(name)) {
        Some(f) => {
            let (status, mut h, part) = http::answer(req, &f.validators, &f.bytes);
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(f.content_type),
            );
            s.metrics.bytes_sent.inc_by(part.len() as u64);
            (status, h, part).into_response()
        }
        None if files.is_none() => (StatusCode::NOT_FOUND, "nothing served here\n").into_response(),
        None => (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    };
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    r
}

/// The `Cache-Control` of content and media.
fn max_age(s: &OriginState) -> HeaderValue {
    HeaderValue::from(s.cfg.max_age)
        .to_str()
        .ok()
        .and_then(|n| HeaderValue::from_str(&format!("max-age={n}")).ok())
        .unwrap_or(HeaderValue::from_static("no-cache"))
}

async fn media(
    State(s): State<Arc<OriginState>>,
    Path(name): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match delay_or_fail(&s).await {
        Some(failed) => failed,
        None => {
            let mut r = serve_file(&s, s.cfg.media.as_deref().map(|a| &a.files), &name, &req);
            if r.status().is_success() || r.status() == StatusCode::NOT_MODIFIED {
                r.headers_mut().insert(header::CACHE_CONTROL, max_age(&s));
            }
            r
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn player(
    State(s): State<Arc<OriginState>>,
    Path(name): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = serve_file(&s, s.cfg.player.as_deref(), &name, &req);
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn report(
    State(s): State<Arc<OriginState>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<SocketAddr>,
    body: axum::body::Bytes,
) -> Response {
    let t = Instant::now();
    let r = if body.len() > MAX_REPORT_BYTES {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a report is {MAX_REPORT_BYTES} bytes at most\n"),
        )
            .into_response()
    } else if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
        (
            StatusCode::BAD_REQUEST,
            format!("a JSON value expected: {e}\n"),
        )
            .into_response()
    } else {
        keep_report(&s, peer.ip(), body)
    };
    let mut r = r;
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

/// Keeps a report within the limits: the client's rate first (a token bucket of bytes per
/// address), then the totals.
fn keep_report(s: &OriginState, ip: std::net::IpAddr, body: bytes::Bytes) -> Response {
    let limits = s.cfg.reports;
    let mut r = s.reports.lock().expect("reports lock");
    let now = Instant::now();
    if r.buckets.len() >= MAX_REPORTERS && !r.buckets.contains_key(&ip) {
        // Forget the addresses whose buckets are full again: they lose nothing.
        r.buckets
            .retain(|_, a| a.level(limits.rate, limits.burst, now) < limits.burst);
    }
    if r.buckets.len() >= MAX_REPORTERS && !r.buckets.contains_key(&ip) {
        r.refused_rate += 1;
        return too_many();
    }
    let bucket = r
        .buckets
        .entry(ip)
        .or_insert(crate::serve::shaper::Allowance::full(limits.burst, now));
    if !bucket.try_take(body.len() as f64, limits.rate, limits.burst, now) {
        r.refused_rate += 1;
        return too_many();
    }
    if r.bytes + body.len() > limits.max_bytes || r.kept.len() >= limits.max_count {
        r.refused_full += 1;
        return (
            StatusCode::INSUFFICIENT_STORAGE,
            "the origin keeps no more player reports\n",
        )
            .into_response();
    }
    r.bytes += body.len();
    // Its own allocation: the body may be a slice of a larger read buffer.
    r.kept.push(crate::edge::exact(body));
    StatusCode::NO_CONTENT.into_response()
}

fn too_many() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, "1")],
        "player reports from this address above their rate\n",
    )
        .into_response()
}

/// The reports as one JSON array, streamed: the server holds references to the kept bytes,
/// not a copy of them all (which took 842 MB for the reports of a bomb).
async fn reports(State(s): State<Arc<OriginState>>) -> Response {
    let kept = s.reports.lock().expect("reports lock").kept.clone();
    let n = kept.len();
    let parts = kept.into_iter().enumerate().flat_map(move |(i, b)| {
        let open = if i == 0 { "[" } else { "," };
        let close = (i + 1 == n).then_some(bytes::Bytes::from_static(b"]"));
        [
            Some(bytes::Bytes::from_static(open.as_bytes())),
            Some(b),
            close,
        ]
        .into_iter()
        .flatten()
    });
    let body = if n == 0 {
        axum::body::Body::from("[]")
    } else {
        axum::body::Body::from_stream(futures_util::stream::iter(
            parts.map(Ok::<_, std::io::Error>),
        ))
    };
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn health(State(s): State<Arc<OriginState>>) -> Response {
    if s.down.load(Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "down\n").into_response()
    } else {
        "ok\n".into_response()
    }
}

async fn metrics(State(s): State<Arc<OriginState>>) -> Response {
    use crate::serve::metrics::{Kind, family, single};
    let (bytes, rate, full) = {
        let r = s.reports.lock().expect("reports lock");
        (r.bytes, r.refused_rate, r.refused_full)
    };
    metrics::response(s.metrics.render(vec![
        single(
            "cdnlab_player_report_bytes",
            "Bytes of player reports kept.",
            Kind::GAUGE,
            bytes as f64,
        ),
        family(
            "cdnlab_player_reports_refused_total",
            "Player reports refused: above the client's rate (429), or the store full (507).",
            Kind::COUNTER,
            [
                (vec![("reason", "rate".to_string())], rate as f64),
                (vec![("reason", "full".to_string())], full as f64),
            ],
        ),
    ]))
}
