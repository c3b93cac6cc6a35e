//! Helpers shared by the loopback tests: servers on free ports, plain HTTP requests, and raw
//! bytes on a socket for what a well-behaved client would never send.

#![allow(dead_code)]

use cdnlab_live::catalogue::Catalogue;
use cdnlab_live::dht::ring::RingFile;
use cdnlab_live::dht::{self, DhtConfig, DhtEdge};
use cdnlab_live::edge::{self, Edge, EdgeConfig};
use cdnlab_live::origin::{self, Origin, OriginConfig};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The next port of this test process's block of 120 loopback ports, below the ephemeral
/// range (32768 up, where outgoing connections take theirs): a server stopped and restarted
/// on its port, or a ring edge that is down, does not lose its port to a client socket.
pub fn next_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering::Relaxed};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 100) as u16 * 120;
    base + NEXT.fetch_add(1, Relaxed) % 120
}

/// Starts a server with `start` on the next free port of the block (a port another process
/// holds is skipped).
pub async fn on_free_port<T, F, Fut>(mut start: F) -> T
where
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Result<T, cdnlab_live::Error>>,
{
    for _ in 0..1_000 {
        let addr = ([127, 0, 0, 1], next_port()).into();
        match start(addr).await {
            Ok(t) => return t,
            Err(cdnlab_live::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AddrInUse =>
            {
                continue;
            }
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no free port in this test process's block")
}

/// A plain listener on the next free port of the block.
pub async fn listener() -> tokio::net::TcpListener {
    on_free_port(|a| async move { cdnlab_live::serve::bind(a).await }).await
}

pub fn catalogue() -> Catalogue {
    Catalogue::new(1000, 1000, 4000, 3).unwrap()
}

pub fn origin_config() -> OriginConfig {
    OriginConfig::serving(catalogue())
}

/// An origin that answers after `latency`.
pub async fn slow_origin(latency: Duration) -> Origin {
    origin(OriginConfig {
        latency,
        ..origin_config()
    })
    .await
}

/// `GET url` with client `c` (panics if no answer comes).
pub async fn get_with(c: &reqwest::Client, url: String) -> reqwest::Response {
    c.get(url).send().await.unwrap()
}

/// A client that goes straight to loopback (no proxy), with a 5 s timeout.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

pub async fn origin(cfg: OriginConfig) -> Origin {
    on_free_port(|a| origin::start(a, cfg.clone())).await
}

pub fn edge_config(origin: SocketAddr) -> EdgeConfig {
    EdgeConfig {
        capacity: 1 << 20,
        origin_timeout: Duration::from_secs(2),
        ..EdgeConfig::in_front_of(origin)
    }
}

pub async fn edge(cfg: EdgeConfig) -> Edge {
    on_free_port(|a| edge::start(a, cfg.clone())).await
}

/// A GET through reqwest: (status, Cache-Status, body).
pub async fn get(addr: SocketAddr, path: &str) -> (u16, String, bytes::Bytes) {
    let r = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(format!("http://{addr}{path}"))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let cs = r
        .headers()
        .get("cache-status")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, cs, r.bytes().await.unwrap())
}

/// Sends raw bytes and reads until the server closes or `wait` passes: (what came back, whether
/// the server closed the connection).
pub async fn raw(addr: SocketAddr, request: &[u8], wait: Duration) -> (String, bool) {
    raw_on(TcpStream::connect(addr).await.unwrap(), request, wait).await
}

/// [`raw`] on a connection already open.
pub async fn raw_on(mut s: TcpStream, request: &[u8], wait: Duration) -> (String, bool) {
    // The server may have refused and closed already.
    let _ = s.write_all(request).await;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

/// The status code of the first response in `text`.
pub fn status_of(text: &str) -> u16 {
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Checks a server's `/metrics` with Prometheus's own `promtool check metrics` (Debian's
/// `prometheus` package, which `.ci/run` installs): the exposition must parse and pass its
/// lint (help text, `_total` counters, units). Returns the text. Without promtool the lint is
/// skipped outside CI (cdnlab_testkit::need) and the text still returned for the test's checks.
pub async fn promtool_check(addr: SocketAddr) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let r = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "text/plain; version=0.0.4"
    );
    let text = r.text().await.unwrap();
    let Some(promtool) = cdnlab_testkit::need(
        cdnlab_testkit::PROMTOOL,
        cdnlab_testkit::on_path("promtool"),
    ) else {
        return text;
    };
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics failed for {addr}: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Free loopback addresses for a ring (from the block; each checked free by binding it).
pub async fn free_addrs(n: usize) -> Vec<SocketAddr> {
    let mut v = Vec::new();
    while v.len() < n {
        let addr: SocketAddr = ([127, 0, 0, 1], next_port()).into();
        if !v.contains(&addr) && tokio::net::TcpListener::bind(addr).await.is_ok() {
            v.push(addr);
        }
    }
    v
}

/// A connection to `to` from the loopback address `from` (any 127.x.y.z works on Linux), for
/// tests that need several client addresses.
pub async fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind((from, 0).into()).unwrap();
    socket.connect(to).await.unwrap()
}

/// The value of the first sample in exposition text `m` whose line starts with `name` (give
/// the labels, or a trailing space, to pick one series); 0 if there is none.
pub fn metric(m: &str, name: &str) -> f64 {
    m.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0)
}

/// A ring file of `addrs` (ids in order) with K = `k`, 8 virtual nodes and `secret`.
pub fn ring_file(addrs: &[SocketAddr], k: u32, secret: &str) -> RingFile {
    let edges: Vec<String> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| format!(r#"{{"id": {i}, "addr": "{a}"}}"#))
        .collect();
    RingFile::parse(&format!(
        r#"{{"secret": "{secret}", "k": {k}, "vnodes": 8, "edges": [{}]}}"#,
        edges.join(",")
    ))
    .unwrap()
}

/// An edge `id` of `ring` in front of `origin`, with windows and repair rounds of 200 ms and
/// c_high 20 (tests change what they need).
pub fn dht_config(ring: &RingFile, id: u32, origin: SocketAddr) -> DhtConfig {
    DhtConfig {
        ring: ring.clone(),
        id,
        origin,
        window: Duration::from_millis(200),
        c_high: 20.0,
        gamma: 0.75,
        rgr_period: Duration::from_millis(200),
        timeout: Duration::from_secs(2),
        seed: 1,
        limits: cdnlab_live::serve::Limits::default(),
        capacity: 1 << 20,
    }
}

/// Starts every edge of `ring`, each with [`dht_config`] changed by `set`.
pub async fn dht_edges(
    ring: &RingFile,
    origin: SocketAddr,
    set: impl Fn(&mut DhtConfig),
) -> Vec<DhtEdge> {
    let mut v = Vec::new();
    for id in 0..ring.edges.len() as u32 {
        let mut c = dht_config(ring, id, origin);
        set(&mut c);
        v.push(dht::start(c).await.unwrap());
    }
    v
}

/// Stops `servers` in order.
pub async fn stop_all(servers: impl IntoIterator<Item = cdnlab_live::serve::Running>) {
    for s in servers {
        s.stop().await;
    }
}
