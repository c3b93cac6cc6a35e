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
//! kept in order, [`MAX_REPORTS`] at most; `GET /player/reports` returns them). Media and player
//! answers allow any origin (CORS), since the pages play from the edges' hosts.

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
}

/// Most player reports kept; later ones are counted and dropped.
pub const MAX_REPORTS: usize = 200_000;
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
        self.state.reports.lock().expect("reports lock").clone()
    }
}

struct OriginState {
    cfg: OriginConfig,
    down: AtomicBool,
    counter: AtomicU64,
    metrics: Metrics,
    /// Every object's `Last-Modified`: when this origin started (the catalogue is fixed).
    started: SystemTime,
    reports: Mutex<Vec<serde_json::Value>>,
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
        reports: Mutex::new(Vec::new()),
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

async fn media(
    State(s): State<Arc<OriginState>>,
    Path(name): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match delay_or_fail(&s).await {
        Some(failed) => failed,
        None => serve_file(&s, s.cfg.media.as_deref().map(|a| &a.files), &name, &req),
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

async fn report(State(s): State<Arc<OriginState>>, body: axum::body::Bytes) -> Response {
    let t = Instant::now();
    let r = if body.len() > MAX_REPORT_BYTES {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a report is {MAX_REPORT_BYTES} bytes at most\n"),
        )
            .into_response()
    } else {
        match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(v) => {
                let mut reports = s.reports.lock().expect("reports lock");
                if reports.len() < MAX_REPORTS {
                    reports.push(v);
                }
                StatusCode::NO_CONTENT.into_response()
            }
            Err(e) => (
                StatusCode::BAD_REQUEST,
                format!("a JSON value expected: {e}\n"),
            )
                .into_response(),
        }
    };
    let mut r = r;
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

async fn reports(State(s): State<Arc<OriginState>>) -> Response {
    axum::Json(s.reports.lock().expect("reports lock").clone()).into_response()
}

async fn health(State(s): State<Arc<OriginState>>) -> Response {
    if s.down.load(Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "down\n").into_response()
    } else {
        "ok\n".into_response()
    }
}

async fn metrics(State(s): State<Arc<OriginState>>) -> Response {
    metrics::response(s.metrics.render(Vec::new()))
}
