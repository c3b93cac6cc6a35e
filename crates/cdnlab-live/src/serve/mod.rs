//! The accept loop every live server shares: HTTP/1.1 by hyper, with connection limits (global
//! and per client address; when all slots are taken, a newcomer sheds the connection that
//! costs most for what it delivers ([`conns`]), and what still finds none gets 503; during a
//! graceful stop new connections are refused), a timeout for reading a request's head
//! (slow clients), a send timeout (clients that stop reading), a size limit on the head (hyper
//! answers 431 or 414 above it), HTTP/1.1 requests without exactly one `Host` refused,
//! requests with a body refused (these servers take none, so no smuggled second request can
//! hide in one), and two stops: at once, or draining in-flight responses first. Refusals,
//! reclaims and send timeouts are counted in the server's [`Metrics`].

pub mod conns;
pub mod flight;
pub mod http;
pub mod metrics;
pub mod shaper;
pub mod warn;

use crate::Error;
use crate::serve::metrics::Metrics;
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use conns::{Conns, Io, RECLAIM_WAIT, SAMPLE_EVERY, Tracked};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt;

/// Largest request body any route takes: a player report (the origin's `POST /player/report`);
/// every other route takes none.
pub const MAX_REPORT_BYTES: usize = 64 << 10;

/// The header carrying a shared secret on internal calls (DHT edges, admission thresholds, the
/// steering server's reports).
pub const SECRET: &str = "x-cdnlab-secret";

/// Whether the request carries `want` in [`SECRET`] (compared in constant time).
pub fn has_secret(h: &axum::http::HeaderMap, want: &str) -> bool {
    h.get(SECRET)
        .is_some_and(|v| same_secret(want.as_bytes(), v.as_bytes()))
}

/// Whether two secrets are equal, compared in constant time (no early exit that would tell an
/// attacker how many leading bytes were right).
pub fn same_secret(want: &[u8], given: &[u8]) -> bool {
    given.len() == want.len() && given.iter().zip(want).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0
}

/// An internal endpoint's query: 401 without the secret (`authorised` false), 400 with
/// `expected` (the query's shape) when it does not parse; otherwise the query.
#[allow(clippy::result_large_err)] // the Err is the response to send, once per refusal
pub fn internal_query<T>(
    authorised: bool,
    q: Result<axum::extract::Query<T>, axum::extract::rejection::QueryRejection>,
    expected: &str,
) -> Result<T, axum::response::Response> {
    use axum::response::IntoResponse;
    if !authorised {
        return Err(secret_required());
    }
    q.map(|axum::extract::Query(q)| q).map_err(|_| {
        (
            axum::http::StatusCode::BAD_REQUEST,
            format!("{expected} expected\n"),
        )
            .into_response()
    })
}

/// The answer to an internal endpoint's request without the secret: 401.
pub fn secret_required() -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        axum::http::StatusCode::UNAUTHORIZED,
        "internal endpoint: the secret is required\n",
    )
        .into_response()
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
    /// Connections served at once. When all are taken, a new connection sheds another (idle
    /// keep-alive, then partial heads past `head_grace`, then readers below `min_rate`, then
    /// one of the address holding the most slots: [`conns`]); one that still finds no slot
    /// within 200 ms gets 503.
    pub max_connections: usize,
    /// Connections served at once from one client address; more get 503 at once.
    pub max_per_address: usize,
    /// Time to read a request's head (line and headers).
    pub header_timeout: Duration,
    /// Largest request head in bytes (at least 8192, hyper's minimum buffer).
    pub max_header_bytes: usize,
    /// Longest a response may wait for the client to take more bytes (nginx's `send_timeout`:
    /// between two successive writes). A writer is only woken when about a third of the
    /// socket's send buffer is free, so this also sets a minimum rate of roughly that much per
    /// `send_timeout`.
    pub send_timeout: Duration,
    /// How long a request head may take before its connection may be shed for a newcomer
    /// when every slot is taken. A client sends its head in one packet, within a round trip;
    /// 2 s covers the longest round trips and a retransmission (RFC 6298's initial RTO is 1 s).
    pub head_grace: Duration,
    /// Bytes per second below which a reader that stalls the server may be shed for a
    /// newcomer when every slot is taken, averaged over `rate_window` of its answer. 16 KiB/s
    /// is below the lowest rendition of common video ladders (about 145 kbit/s): a client this
    /// slow cannot play anything in real time, and would hold a slot for over 8 minutes for
    /// an 8 MiB object.
    pub min_rate: u64,
    /// The window over which `min_rate` is measured: long enough that a client's burst into
    /// the kernel's buffers (up to a few MiB on a fast link) has to be followed by real reads.
    pub rate_window: Duration,
    /// Write one JSON line per answered request to standard output (client address, method,
    /// path, status, body bytes, milliseconds to the response head); off by default.
    pub access_log: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_per_address: 256,
            header_timeout: Duration::from_secs(10),
            max_header_bytes: 16 << 10,
            send_timeout: Duration::from_secs(30),
            head_grace: Duration::from_secs(2),
            min_rate: 16 << 10,
            rate_window: Duration::from_secs(5),
            access_log: false,
        }
    }
}

impl Limits {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        if self.max_connections == 0 {
            return Err(cdnlab::Error::param("max-connections", 0, "at least 1"));
        }
        if self.max_per_address == 0 {
            return Err(cdnlab::Error::param("max-per-address", 0, "at least 1"));
        }
        if self.header_timeout.is_zero()
            || self.send_timeout.is_zero()
            || self.head_grace.is_zero()
            || self.rate_window < SAMPLE_EVERY
        {
            return Err(cdnlab::Error::param(
                "header-timeout/send-timeout/head-grace/rate-window",
                "0",
                "durations > 0 (the rate window at least 1 s, the sampling period)",
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

/// A running server, with the background loop (windows, repair rounds) of the service it
/// serves, if any.
pub struct Running {
    pub addr: SocketAddr,
    stop: watch::Sender<Option<Duration>>,
    task: JoinHandle<()>,
    background: Option<(watch::Sender<bool>, JoinHandle<()>)>,
}

impl Running {
    /// Runs `background` beside the server until the server stops; it is told to stop
    /// through the receiver, and is stopped first.
    pub(crate) fn with_background<F>(
        mut self,
        background: impl FnOnce(watch::Receiver<bool>) -> F,
    ) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        self.background = Some((stop, tokio::spawn(background(stopped))));
        self
    }

    /// Stops accepting and ends every connection (in-flight requests are cut off, as when a
    /// process dies; a service's background loop ends with nothing handed over); returns when
    /// the port is released.
    pub async fn stop(self) {
        self.drain(Duration::ZERO).await;
    }

    /// Stops gracefully: ends the background loop, stops accepting, lets in-flight responses
    /// finish (closing each connection after its current response) for up to `drain`, then
    /// ends what is left.
    pub async fn drain(self, drain: Duration) {
        if let Some((stop, task)) = self.background {
            let _ = stop.send(true);
            let _ = task.await;
        }
        let _ = self.stop.send(Some(drain));
        let _ = self.task.await;
    }
}

/// Connections the kernel queues for `accept` (capped by `net.core.somaxconn`, 4096 by default
/// since Linux 5.4). The standard library's 128 overflowed under a burst of connections (8
/// addresses reopening never-reading connections): the kernel dropped SYNs, and a normal
/// client's connect waited for its retransmission, a whole second (RFC 6298's initial RTO).
/// nginx uses 511.
const BACKLOG: i32 = 4096;

/// Unsent bytes a connection's socket may hold (`TCP_NOTSENT_LOWAT`, Linux): two 64 KiB body
/// pieces, so the kernel always has the next piece while it sends one.
#[cfg(target_os = "linux")]
const NOTSENT_LOWAT: u32 = 128 << 10;

/// Binds `addr` (port 0: any free port).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, Error> {
    let err = |e| Error::io(format!("cannot listen on {addr}"), e);
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )
    .map_err(err)?;
    // As the standard library and tokio do: a restarted server may bind at once.
    socket.set_reuse_address(true).map_err(err)?;
    socket.bind(&addr.into()).map_err(err)?;
    socket.listen(BACKLOG).map_err(err)?;
    socket.set_nonblocking(true).map_err(err)?;
    TcpListener::from_std(socket.into()).map_err(err)
}

/// Serves `router` on `listener` until stopped, counting refused and reclaimed connections in
/// `metrics`.
pub fn spawn(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    metrics: &Metrics,
) -> Result<Running, Error> {
    limits.validate()?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("listening socket", e))?;
    let router = router.layer(axum::middleware::from_fn(refuse_bodies));
    let (stop, mut stopped) = watch::channel(None::<Duration>);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let conns = Arc::new(Conns::default());
    let metrics = metrics.clone();
    let task = tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        let mut sweep = tokio::time::interval(SAMPLE_EVERY);
        let drain = loop {
            tokio::select! {
                _ = stopped.changed() => break stopped.borrow().unwrap_or_default(),
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                _ = sweep.tick() => conns.sample(limits.rate_window),
                accepted = listener.accept() => {
                    let Ok((stream, peer)) = accepted else {
                        // Out of file descriptors, or a connection reset before accept: pause
                        // briefly rather than spin.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    let (router, slots, conns, metrics) =
                        (router.clone(), slots.clone(), conns.clone(), metrics.clone());
                    tasks.spawn(connection(stream, peer, router, limits, slots, conns, metrics));
                }
            }
        };
        // New connections are refused from now on (the kernel answers them with a reset to
        // the SYN, not an accept followed by a reset).
        drop(listener);
        // Graceful: every connection closes after its current response, within `drain`.
        conns.close_all();
        if !drain.is_zero() {
            let _ =
                tokio::time::timeout(drain, async { while tasks.join_next().await.is_some() {} })
                    .await;
        }
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    });
    Ok(Running {
        addr,
        stop,
        task,
        background: None,
    })
}

/// Serves one accepted connection within the limits.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    slots: Arc<Semaphore>,
    conns: Arc<Conns>,
    metrics: Metrics,
) {
    async fn busy(mut stream: TcpStream) {
        let _ = stream.write_all(BUSY).await;
        let _ = stream.shutdown().await;
    }
    let ip = peer.ip();
    // One address may not take every slot.
    let Some(_address) = conns.admit(ip, limits.max_per_address) else {
        metrics.refused_per_address.inc();
        busy(stream).await;
        return;
    };
    let permit = match slots.clone().try_acquire_owned() {
        Ok(p) => Some(p),
        // All slots taken: shed the connection that costs most for what it delivers, and
        // wait briefly for its slot; if none may be shed, or the one chosen ended on its own
        // and gave its slot to the pool (the heir's channel is then closed), for any slot.
        Err(_) => {
            let deadline = tokio::time::Instant::now() + RECLAIM_WAIT;
            let inherited = match conns.shed_one(ip, &limits, &metrics) {
                Some((_, heir)) => tokio::time::timeout_at(deadline, heir)
                    .await
                    .ok()
                    .and_then(Result::ok),
                None => None,
            };
            match inherited {
                Some(p) => Some(p),
                // `timeout_at` polls once even past the deadline: a free slot is taken.
                None => tokio::time::timeout_at(deadline, slots.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok),
            }
        }
    };
    let Some(permit) = permit else {
        metrics.refused_busy.inc();
        busy(stream).await;
        return;
    };
    let _ = stream.set_nodelay(true);
    // At most NOTSENT_LOWAT bytes wait unsent in the kernel (on top of those in flight): a
    // client that does not read holds that much kernel memory, not a send buffer autotuned up
    // to 4 MiB. With a thousand never-readers the buffers drove the kernel's TCP memory into
    // pressure, where every socket's buffer shrinks and every transfer slows.
    #[cfg(target_os = "linux")]
    let _ = socket2::SockRef::from(&stream).set_tcp_notsent_lowat(NOTSENT_LOWAT);
    let (id, conn) = conns.open(ip);
    metrics.connections.inc();
    let c = conn.clone();
    let svc = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
        // Answering from the head until the body's last byte (`Tracked`).
        let answering = c.begin();
        // The client's address for the routes that take a body (rates per client); not for
        // every request, which would cost each an allocation.
        if req.method() == axum::http::Method::POST {
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
        }
        let router = router.clone();
        let logged = limits
            .access_log
            .then(|| (Instant::now(), req.method().clone(), req.uri().clone()));
        async move {
            let r = router.oneshot(req.map(axum::body::Body::new)).await;
            if let (Some((t, method, uri)), Ok(resp)) = (logged, &r) {
                access_line(ip, &method, &uri, resp, t.elapsed());
            }
            r.map(|resp| {
                use http_body::Body as _;
                // A body of one piece goes to hyper whole and is written at once (the kernel
                // takes it): the answer ends with the handler, and it needs no wrapper (a
                // second boxed body on every small hit cost about a tenth of the hit rate).
                if resp
                    .body()
                    .size_hint()
                    .exact()
                    .is_some_and(|n| n <= conns::PIECE as u64)
                {
                    return resp;
                }
                resp.map(|b| axum::body::Body::new(Tracked::new(b, answering)))
            })
        }
    });
    let io = Io::new(
        stream,
        conn.clone(),
        limits.send_timeout,
        metrics.send_timeouts.clone(),
    );
    let mut served = Box::pin(
        http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .max_buf_size(limits.max_header_bytes)
            .serve_connection(TokioIo::new(io), svc),
    );
    tokio::select! {
        _ = served.as_mut() => {}
        // Shed abortively: dropping the connection resets it (`Io`).
        _ = conn.abort.notified() => {}
        _ = conn.close.notified() => {
            served.as_mut().graceful_shutdown();
            tokio::select! {
                _ = served.as_mut() => {}
                _ = conn.abort.notified() => {}
            }
        }
    }
    drop(served);
    conns.close(id);
    metrics.connections.dec();
    conn.release(permit);
}

/// One access-log line, JSON, on standard output.
fn access_line(
    ip: IpAddr,
    method: &axum::http::Method,
    uri: &axum::http::Uri,
    r: &Response,
    took: Duration,
) {
    let bytes = r
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let line = serde_json::json!({
        "time": (time * 1000.0).round() / 1000.0,
        "client": ip.to_string(),
        "method": method.as_str(),
        "path": uri.to_string(),
        "status": r.status().as_u16(),
        "bytes": bytes,
        "ms": (took.as_secs_f64() * 1e6).round() / 1e3,
    });
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
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
    let lengths: Vec<&[u8]> = h
        .get_all(header::CONTENT_LENGTH)
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    // Ambiguous framing (a Transfer-Encoding, or several lengths) is malformed: 400. One
    // length above what the route takes (0 bytes but for the player reports) is 413.
    let allowed =
        if req.method() == axum::http::Method::POST && req.uri().path() == "/player/report" {
            MAX_REPORT_BYTES
        } else {
            0
        };
    if chunked || lengths.len() > 1 {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONNECTION, "close")],
            "request bodies are not accepted\n",
        )
            .into_response();
    }
    let too_long = lengths.first().is_some_and(|v| {
        std::str::from_utf8(v)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .is_none_or(|n| n > allowed)
    });
    if too_long {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            [(header::CONNECTION, "close")],
            format!("request bodies are not accepted (at most {allowed} bytes)\n"),
        )
            .into_response();
    }
    next.run(req).await
}
