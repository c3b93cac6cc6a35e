//! The accept loop every live server shares: HTTP/1.1 by hyper, with a connection limit (over
//! it, a new connection gets 503 and is closed), a timeout for reading a request's head (slow
//! clients), a size limit on the head (hyper answers 431 or 414 above it), HTTP/1.1 requests
//! without exactly one `Host` refused, requests with a body refused (these servers take none, so no smuggled second request can hide in one), and
//! a stop that ends every connection.

use crate::Error;
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

/// The header carrying a shared secret on internal calls (DHT edges, admission thresholds, the
/// steering server's reports).
pub const SECRET: &str = "x-cdnlab-secret";

/// Whether the request carries `want` in [`SECRET`] (compared in constant time).
pub fn has_secret(h: &axum::http::HeaderMap, want: &str) -> bool {
    h.get(SECRET)
        .is_some_and(|v| crate::ring::same_secret(want.as_bytes(), v.as_bytes()))
}

/// A response's body, or None if it is longer than `cap` bytes (read no further) or breaks off.
pub async fn body_capped(mut r: reqwest::Response, cap: usize) -> Option<bytes::Bytes> {
    if r.content_length().is_some_and(|n| n > cap as u64) {
        return None;
    }
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = r.chunk().await.ok()? {
        if body.len() + chunk.len() > cap {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    Some(body.freeze())
}

/// Limits on a server's connections and requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more get 503 and are closed.
    pub max_connections: usize,
    /// Time to read a request's head (line and headers).
    pub header_timeout: Duration,
    /// Largest request head in bytes (at least 8192, hyper's minimum buffer).
    pub max_header_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            max_header_bytes: 16 << 10,
        }
    }
}

impl Limits {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        if self.max_connections == 0 {
            return Err(cdnlab::Error::param("max-connections", 0, "at least 1"));
        }
        if self.header_timeout.is_zero() {
            return Err(cdnlab::Error::param(
                "header-timeout",
                "0",
                "a duration > 0",
            ));
        }
        if !(8192..=1 << 20).contains(&self.max_header_bytes) {
            return Err(cdnlab::Error::param(
                "max-header-bytes",
                self.max_header_bytes,
                "8192 to 1048576",
            ));
        }
        Ok(())
    }
}

/// What a connection over the limit is told.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nretry-after: 1\r\nconnection: close\r\n\r\n";

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Running {
    /// Stops accepting and ends every connection (in-flight requests are cut off, as when a
    /// process dies); returns when the port is released.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Binds `addr` (port 0: any free port).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, Error> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {addr}"), e))
}

/// Serves `router` on `listener` until stopped.
pub fn spawn(listener: TcpListener, router: Router, limits: Limits) -> Result<Running, Error> {
    limits.validate()?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("listening socket", e))?;
    let router = router.layer(axum::middleware::from_fn(refuse_bodies));
    let (stop, mut stopped) = watch::channel(false);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let task = tokio::spawn(async move {
        let mut conns = JoinSet::new();
        loop {
            tokio::select! {
                _ = stopped.changed() => break,
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
                accepted = listener.accept() => {
                    let Ok((mut stream, _)) = accepted else {
                        // Out of file descriptors, or a connection reset before accept: pause
                        // briefly rather than spin.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    let Ok(permit) = slots.clone().try_acquire_owned() else {
                        conns.spawn(async move {
                            let _ = stream.write_all(BUSY).await;
                            let _ = stream.shutdown().await;
                        });
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let svc = TowerToHyperService::new(router.clone());
                    conns.spawn(async move {
                        let _permit = permit;
                        let _ = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(limits.header_timeout)
                            .max_buf_size(limits.max_header_bytes)
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    });
                }
            }
        }
        conns.abort_all();
        while conns.join_next().await.is_some() {}
    });
    Ok(Running { addr, stop, task })
}

/// Refuses requests that carry a body (a Transfer-Encoding, or a Content-Length other than
/// 0), and HTTP/1.1 requests without exactly one `Host` (RFC 9112 section 3.2: 400).
async fn refuse_bodies(req: Request, next: Next) -> Response {
    let h = req.headers();
    if req.version() == axum::http::Version::HTTP_11 && h.get_all(header::HOST).iter().count() != 1
    {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONNECTION, "close")],
            "an HTTP/1.1 request needs exactly one Host header\n",
        )
            .into_response();
    }
    let chunked = h.contains_key(header::TRANSFER_ENCODING);
    let length = h
        .get_all(header::CONTENT_LENGTH)
        .iter()
        .any(|v| v.as_bytes() != b"0");
    if chunked || length {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONNECTION, "close")],
            "request bodies are not accepted\n",
        )
            .into_response();
    }
    next.run(req).await
}
