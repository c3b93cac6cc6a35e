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
    assert!(ok >= 99, "{ok} of 100 answered 200");
    assert!(p99(&took) <= P99_BOUND, "p99 {:?}", p99(&took));
    let reclaimed = |why: &str| {
        metric(
            &m,
            &format!("cdnlab_connections_reclaimed_total{{reason=\"{why}\"}}"),
        )
    };
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
    let reclaimed = |why: &str| {
        metric(
            &m,
            &format!("cdnlab_connections_reclaimed_total{{reason=\"{why}\"}}"),
        )
    };
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
    assert!(ok >= 99, "{ok} of 100 answered 200");
    assert!(p99(&took) <= P99_BOUND, "p99 {:?}", p99(&took));
    let reclaimed = |why: &str| {
        metric(
            &m,
            &format!("cdnlab_connections_reclaimed_total{{reason=\"{why}\"}}"),
        )
    };
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
