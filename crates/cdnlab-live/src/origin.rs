//! The origin: `GET /content/{id}` answers object `id` of a synthetic [`Catalogue`], after an
//! optional added latency, unless an injected failure answers 503 instead (a share of
//! requests, chosen by a hash of (seed, request number), or every request while down).
//! Answers carry an `ETag` (from the catalogue's seed, the id and the size) and a
//! `Last-Modified` (the origin's start), and honour conditional and range requests
//! ([`crate::http`]). `/health` says whether it is up; `/metrics` counts what it answered.

use crate::Error;
use crate::catalogue::{Catalogue, IdError, parse_id};
use crate::http::{self, Validators};
use crate::metrics::{self, Metrics};
use crate::server::{self, Limits, Running};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cdnlab::rng::splitmix64;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime};

/// How an origin behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OriginConfig {
    pub catalogue: Catalogue,
    /// Added before every answer.
    pub latency: Duration,
    /// Share of content requests answered 503 instead, in [0, 1].
    pub error_share: f64,
    /// Answer 503 to everything (a failed origin that still accepts connections).
    pub down: bool,
    pub limits: Limits,
}

impl OriginConfig {
    /// An origin that serves `catalogue` promptly, without failures, with default limits.
    pub fn serving(catalogue: Catalogue) -> Self {
        OriginConfig {
            catalogue,
            latency: Duration::ZERO,
            error_share: 0.0,
            down: false,
            limits: Limits::default(),
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
}

struct OriginState {
    cfg: OriginConfig,
    down: AtomicBool,
    counter: AtomicU64,
    metrics: Metrics,
    /// Every object's `Last-Modified`: when this origin started (the catalogue is fixed).
    started: SystemTime,
}

/// Starts an origin on `addr`.
pub async fn start(addr: SocketAddr, cfg: OriginConfig) -> Result<Origin, Error> {
    cfg.validate()?;
    let state = Arc::new(OriginState {
        cfg,
        down: AtomicBool::new(cfg.down),
        counter: AtomicU64::new(0),
        metrics: Metrics::default(),
        started: Validators::seconds(SystemTime::now()),
    });
    let router = Router::new()
        .route("/content/{id}", get(content))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .with_state(state.clone());
    let listener = server::bind(addr).await?;
    Ok(Origin {
        server: server::spawn(listener, router, cfg.limits, &state.metrics)?,
        state,
    })
}

async fn content(
    State(s): State<Arc<OriginState>>,
    Path(id): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let n = s.counter.fetch_add(1, Relaxed);
    if !s.cfg.latency.is_zero() {
        tokio::time::sleep(s.cfg.latency).await;
    }
    // Request n fails if a uniform draw keyed by (seed, n) falls below the share.
    let draw = (splitmix64(s.cfg.catalogue.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 11)
        as f64
        / (1u64 << 53) as f64;
    let injected = draw < s.cfg.error_share;
    let r = if s.down.load(Relaxed) || injected {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "origin failure (injected)\n",
        )
            .into_response()
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
