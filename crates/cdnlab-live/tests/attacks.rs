//! The second hardening round's attacks (what an operator meets next), on loopback, bounded in
//! time and count: each test repeats a finding and asserts the fixed behaviour. The bar for a
//! normal client on another address during an attack: at least 99% of its requests answered
//! 200, and a p99 within [`P99_BOUND`]. `bench/abuse.sh` runs the long versions side by side
//! with nginx.

mod common;
use cdnlab_live::serve::Limits;
use common::*;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A request that needs a slot either finds one, or sheds a connection and waits at most
/// `RECLAIM_WAIT` (200 ms) for its slot, else gets 503. So an answered request takes at most
/// 200 ms plus its unloaded time (about 1 ms) plus scheduling on two loaded cores, allowed
/// 100 ms. Written before the runs it judges.
const P99_BOUND: Duration = Duration::from_millis(300);

/// Attackers: `per_address` connections from each of `from`, each sending `request` and then
/// nothing, reopened as the server closes them, until stopped.
struct Attack {
    stop: Arc<AtomicBool>,
    opened: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Attack {
    fn start(
        target: SocketAddr,
        from: &[[u8; 4]],
        per_address: usize,
        request: &'static [u8],
    ) -> Attack {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicU64::new(0));
        let tasks = from
            .iter()
            .map(|&ip| {
                let (stop, opened) = (stop.clone(), opened.clone());
                tokio::spawn(async move {
                    let mut held: Vec<Option<TcpStream>> = (0..per_address).map(|_| None).collect();
                    // Bounded: at most 20 rounds of reopening a second, until stopped.
                    while !stop.load(Relaxed) {
                        for slot in held.iter_mut() {
                            let closed = match slot {
                                None => true,
                                Some(s) => {
                                    let mut b = [0u8; 1];
                                    // A never-reading client never reads; this only peeks at
                                    // whether the server has closed (0, or a reset).
                                    matches!(s.try_read(&mut b), Ok(0) | Err(_))
                                        && !matches!(s.try_read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
                                }
                            };
                            if closed {
                                let socket = tokio::net::TcpSocket::new_v4().unwrap();
                                socket.bind((ip, 0).into()).unwrap();
                                if let Ok(mut s) = socket.connect(target).await {
                                    let _ = s.write_all(request).await;
                                    opened.fetch_add(1, Relaxed);
                                    *slot = Some(s);
                                }
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                })
            })
            .collect();
        Attack {
            stop,
            opened,
            tasks,
        }
    }

    async fn end(self) -> u64 {
        self.stop.store(true, Relaxed);
        for t in self.tasks {
            let _ = t.await;
        }
        self.opened.load(Relaxed)
    }
}

/// A normal client on 127.0.0.1: `n` requests for `path`, each on a new connection (the
/// hardest case: each needs a slot), `gap` apart. Returns (answered 200, sorted latencies of
/// the 200s).
async fn normal_client(
    target: SocketAddr,
    path: &str,
    n: usize,
    gap: Duration,
) -> (usize, Vec<Duration>) {
    let c = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut took = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        if let Ok(r) = c.get(format!("http://{target}{path}")).send().await
            && r.status() == 200
            && r.bytes().await.is_ok()
        {
            took.push(t.elapsed());
        }
        tokio::time::sleep(gap).await;
    }
    took.sort_unstable();
    (took.len(), took)
}

fn p99(took: &[Duration]) -> Duration {
    took[(took.len() * 99).div_ceil(100) - 1]
}

/// The bar for a normal client during an attack: at least 99% of its `n` requests answered
/// 200, with a p99 within [`P99_BOUND`].
fn meets_the_bar(ok: usize, took: &[Duration], n: usize) {
    assert!(ok * 100 >= n * 99, "{ok} of {n} answered 200");
    assert!(p99(took) <= P99_BOUND, "p99 {:?}", p99(took));
}

/// Connections shed for `why`, in exposition text `m`.
fn reclaimed(m: &str, why: &str) -> f64 {
    metric(
        m,
        &format!("cdnlab_connections_reclaimed_total{{reason=\"{why}\"}}"),
    )
}

const ATTACKERS: [[u8; 4]; 4] = [
    [127, 0, 0, 2],
    [127, 0, 0, 3],
    [127, 0, 0, 4],
    [127, 0, 0, 5],
];

/// Finding: 8 addresses x 256 never-reading connections on a cached 8 MiB object held every
/// slot until the send timeout; a client on another address got nothing. At test scale: 128
/// slots, 4 addresses x 64 never-reading connections, reopened as they are closed. Now the
/// fair share between addresses makes room for the newcomer at once (and the attackers, at
/// unequal counts, shed each other).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_readers_from_many_addresses_cannot_hold_the_slots() {
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(4, 8 << 20, 8 << 20, 1).unwrap();
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 64 << 20;
    ec.limits = Limits {
        max_connections: 128,
        max_per_address: 64,
        rate_window: Duration::from_secs(1),
        ..Limits::default()
    };
    let e = edge(ec).await;
    assert_eq!(get(e.server.addr, "/content/0").await.0, 200); // cached
    let attack = Attack::start(
        e.server.addr,
        &ATTACKERS,
        64,
        b"GET /content/0 HTTP/1.1\r\nhost: x\r\n\r\n",
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (ok, took) =
        normal_client(e.server.addr, "/content/1", 100, Duration::from_millis(30)).await;
    let m = promtool_check(e.server.addr).await;
    let opened = attack.end().await;
    meets_the_bar(ok, &took, 100);
    let reclaimed = |why: &str| reclaimed(&m, why);
    assert!(reclaimed("fair_share") >= 1.0, "{m}");
    assert!(opened >= 256, "{opened} attacking connections opened");
    stop_all([e.server, o.server]).await;
}

/// The slow-reader rule on its own: one address holds every slot with never-reading
/// connections (its cap is the whole server), so no fair share applies among the others. Once
/// their answers are a rate window old, each newcomer sheds one of them as a slow reader (and
/// its slot comes to the newcomer); before the hardening the newcomer got 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_below_the_minimum_rate_make_room() {
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(4, 8 << 20, 8 << 20, 1).unwrap();
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.limits = Limits {
        max_connections: 32,
        max_per_address: 32,
        rate_window: Duration::from_secs(1),
        ..Limits::default()
    };
    let e = edge(ec).await;
    assert_eq!(get(e.server.addr, "/content/0").await.0, 200);
    let mut held = Vec::new();
    for _ in 0..32 {
        let mut s = connect_from([127, 0, 0, 2], e.server.addr).await;
        s.write_all(b"GET /content/0 HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        held.push(s);
    }
    // Two sampling periods past the window: every held answer has a whole window measured.
    tokio::time::sleep(Duration::from_millis(3_100)).await;
    let (ok, took) =
        normal_client(e.server.addr, "/content/1", 20, Duration::from_millis(20)).await;
    assert_eq!(ok, 20);
    assert!(p99(&took) <= P99_BOUND, "p99 {:?}", p99(&took));
    let m = promtool_check(e.server.addr).await;
    let reclaimed = |why: &str| reclaimed(&m, why);
    // The first request sheds one and takes its slot; the slot is free again when that
    // request's connection closes, for the next one and the scrape.
    assert_eq!(reclaimed("slow_reader"), 1.0, "{m}");
    assert_eq!(metric(&m, "cdnlab_connections_open "), 32.0, "{m}");
    assert_eq!(reclaimed("fair_share"), 0.0, "{m}");
    drop(held);
    stop_all([e.server, o.server]).await;
}

/// Finding: slowloris from 5 addresses x 230 partial heads, reopened, got 58% of a normal
/// client's requests refused; the partial heads counted as reclaimed lived on to the header
/// timeout. At test scale: 128 slots, 4 addresses x 64 partial heads, reopened. Now heads past
/// the 2 s grace are shed abortively (and the fair share covers the first 2 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_from_many_addresses_cannot_hold_the_slots() {
    let o = origin(origin_config()).await;
    let mut ec = edge_config(o.server.addr);
    ec.limits = Limits {
        max_connections: 128,
        max_per_address: 64,
        ..Limits::default()
    };
    let e = edge(ec).await;
    let attack = Attack::start(
        e.server.addr,
        &ATTACKERS,
        64,
        b"GET /content/1 HTTP/1.1\r\nhost: x\r\nx-a: ",
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (ok, took) =
        normal_client(e.server.addr, "/content/1", 100, Duration::from_millis(30)).await;
    let m = promtool_check(e.server.addr).await;
    attack.end().await;
    meets_the_bar(ok, &took, 100);
    let reclaimed = |why: &str| reclaimed(&m, why);
    assert!(reclaimed("partial_head") >= 1.0, "{m}");
    // What was counted was shed: the slots held are within the limit, not 128 heads living
    // to the header timeout beside the count.
    assert!(metric(&m, "cdnlab_connections_open ") <= 128.0, "{m}");
    stop_all([e.server, o.server]).await;
}

/// Minor finding: a file id the origin does not have gave 502 at a DHT edge (a failure of the
/// origin), where 404 (the client's mistake) is right; also from the replica's owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dht_file_the_origin_lacks_is_404() {
    let o = origin(origin_config()).await; // 1000 objects: ids 0 to 999
    let addrs = free_addrs(2).await;
    let edges = dht_edges(
        &ring_file(&addrs, 4, "0123456789abcdef-minor"),
        o.server.addr,
        |_| {},
    )
    .await;
    let c = client(); // follows the redirect to the owner
    for e in &edges {
        let r = get_with(&c, format!("http://{}/content/5000", e.server.addr)).await;
        assert_eq!(r.status().as_u16(), 404, "at {}", e.server.addr);
        let r = get_with(&c, format!("http://{}/content/7", e.server.addr)).await;
        assert_eq!(r.status().as_u16(), 200);
    }
    stop_all(edges.into_iter().map(|e| e.server).chain([o.server])).await;
}

/// Minor finding: a connection arriving during the drain of a graceful stop was accepted and
/// then reset. Now the listening socket is closed when the drain begins, so the connection is
/// refused, while the response in flight still completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_during_the_drain_are_refused() {
    let o = slow_origin(Duration::from_millis(1_500)).await;
    let e = edge(edge_config(o.server.addr)).await;
    let addr = e.server.addr;
    let in_flight = tokio::spawn(async move { get(addr, "/content/3").await.0 });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let drained = tokio::spawn(e.server.drain(Duration::from_secs(5)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late = TcpStream::connect(addr).await;
    assert_eq!(
        late.as_ref().map_err(std::io::Error::kind).err(),
        Some(std::io::ErrorKind::ConnectionRefused),
        "{late:?}"
    );
    assert_eq!(in_flight.await.unwrap(), 200);
    drained.await.unwrap();
    o.server.stop().await;
}

/// Finding: the player-report bomb (400 posts of 64 KiB in 0.4 s). One address now gets its
/// burst (1 MiB: 16 of them) and then 429 with Retry-After, counted; what is kept is the
/// bytes received. (The memory bound is `tests/cli/live.rs` `a_player_report_bomb_stays_bounded`,
/// on the process.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_reports_from_one_address_are_rate_limited() {
    let o = origin(origin_config()).await;
    let bomb = format!("[0{}]", ",0".repeat(32_765)); // 65,534 bytes
    let c = client();
    let mut codes = Vec::new();
    for _ in 0..40 {
        let r = c
            .post(format!("http://{}/player/report", o.server.addr))
            .body(bomb.clone())
            .send()
            .await
            .unwrap();
        codes.push((r.status().as_u16(), r.headers().contains_key("retry-after")));
    }
    let ok = codes.iter().filter(|c| c.0 == 204).count();
    // The 1 MiB burst holds 16; the rate (64 KiB/s) adds one per second of the run.
    assert!((16..=18).contains(&ok), "{codes:?}");
    assert!(
        codes
            .iter()
            .filter(|c| c.0 != 204)
            .all(|&c| c == (429, true)),
        "{codes:?}"
    );
    assert_eq!(o.report_bytes(), ok * bomb.len());
    assert_eq!(o.reports().len(), ok);
    let m = promtool_check(o.server.addr).await;
    assert_eq!(
        metric(&m, "cdnlab_player_reports_refused_total{reason=\"rate\"}"),
        (40 - ok) as f64,
        "{m}"
    );
    o.server.stop().await;
}

/// An origin on a raw socket that sends `body` with its length in two halves, `pause` apart,
/// to every request (any path); counts the requests.
async fn halting_origin(body: bytes::Bytes, pause: Duration) -> (SocketAddr, Arc<AtomicU64>) {
    use tokio::io::AsyncReadExt;
    let l = listener().await;
    let addr = l.local_addr().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let n = count.clone();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            let (body, n) = (body.clone(), n.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => head.extend_from_slice(&buf[..k]),
                    }
                }
                n.fetch_add(1, Relaxed);
                let h = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\netag: \"halting\"\r\ncache-control: max-age=60\r\n\r\n",
                    body.len()
                );
                let half = body.len() / 2;
                let _ = c.write_all(h.as_bytes()).await;
                let _ = c.write_all(&body[..half]).await;
                tokio::time::sleep(pause).await;
                let _ = c.write_all(&body[half..]).await;
            });
        }
    });
    (addr, count)
}

/// Finding: a miss was read whole from the origin before its first byte went out. Now it
/// streams: the first bytes reach the client while the origin is still sending, a request that
/// comes meanwhile joins the fill mid-stream (one origin request), ranges are answered from
/// it, and once complete the object is a hit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_streams_and_later_requests_join_it() {
    let body: bytes::Bytes = (0..2u32 << 20)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<_>>()
        .into();
    let (o, origin_requests) = halting_origin(body.clone(), Duration::from_millis(1_000)).await;
    let mut ec = edge_config(o);
    ec.capacity = 64 << 20;
    let e = edge(ec).await;
    let url = format!("http://{}/content/5", e.server.addr);
    let t = Instant::now();
    let mut first = client().get(&url).send().await.unwrap();
    assert_eq!(first.headers()["cache-status"], "cdnlab; fwd=miss; stored");
    let chunk = first.chunk().await.unwrap().unwrap();
    let to_first_byte = t.elapsed();
    // The origin pauses 1 s halfway: the first bytes came before it.
    assert!(
        to_first_byte < Duration::from_millis(600),
        "{to_first_byte:?}"
    );
    let joined = client().get(&url).send().await.unwrap();
    assert_eq!(
        joined.headers()["cache-status"],
        "cdnlab; fwd=miss; collapsed"
    );
    let ranged = client()
        .get(&url)
        .header("range", "bytes=1500000-1500099")
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status().as_u16(), 206);
    assert_eq!(
        ranged.bytes().await.unwrap(),
        body.slice(1_500_000..1_500_100)
    );
    let mut got = chunk.to_vec();
    while let Some(c) = first.chunk().await.unwrap() {
        got.extend_from_slice(&c);
    }
    assert!(got == body, "first client's body differs");
    assert!(
        joined.bytes().await.unwrap() == body,
        "joined client's body differs"
    );
    let (code, cs, b) = get(e.server.addr, "/content/5").await;
    assert_eq!((code, cs.as_str()), (200, "cdnlab; hit"));
    assert!(b == body);
    assert_eq!(origin_requests.load(Relaxed), 1);
    e.server.stop().await;
}

/// Finding: a client that stops reading kept its body alive however the cache moved on. Now a
/// response holds a stored body by a weak reference: evicted while its client pauses, the body
/// is freed, and when the client reads on, the rest comes from the origin (a range request
/// checked with If-Range), byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_whose_body_was_evicted_gets_the_rest_from_the_origin() {
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(20, 8 << 20, 8 << 20, 1).unwrap();
    let cat = oc.catalogue;
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 64 << 20; // 7 objects of 8 MiB with their bookkeeping
    let e = edge(ec).await;
    assert_eq!(get(e.server.addr, "/content/0").await.0, 200); // stored
    let mut slow = client()
        .get(format!("http://{}/content/0", e.server.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(slow.headers()["cache-status"], "cdnlab; hit");
    let mut got = slow.chunk().await.unwrap().unwrap().to_vec();
    // Ten other objects evict object 0 meanwhile.
    for id in 1..=10 {
        assert_eq!(get(e.server.addr, &format!("/content/{id}")).await.0, 200);
    }
    assert!(!e.holds(0));
    let before = o.requests();
    while let Some(c) = slow.chunk().await.unwrap() {
        got.extend_from_slice(&c);
    }
    assert_eq!(got.len(), 8 << 20);
    assert!(got == cat.bytes(0), "the body differs");
    assert_eq!(o.requests(), before + 1, "one range request for the rest");
    stop_all([e.server, o.server]).await;
}

/// Objects above the largest stored size (by default an eighth of the capacity) are passed
/// through: answered whole, not stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_above_the_largest_size_pass_through() {
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(4, 300_000, 300_000, 1).unwrap();
    let cat = oc.catalogue;
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 2 << 20; // largest stored: 262,144 bytes
    let e = edge(ec).await;
    for _ in 0..2 {
        let (code, cs, b) = get(e.server.addr, "/content/1").await;
        assert_eq!((code, cs.as_str()), (200, "cdnlab; fwd=miss"));
        assert!(b == cat.bytes(1));
    }
    assert!(!e.holds(1));
    stop_all([e.server, o.server]).await;
}
