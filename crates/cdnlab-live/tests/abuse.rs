//! The live servers attacked as a tester would, on loopback, bounded in time and count: each
//! test repeats a finding of the hardening issue and asserts the fixed behaviour.

mod common;
use cdnlab_live::dht::DhtEdge;
use cdnlab_live::dht::ring::RingFile;
use cdnlab_live::serve::Limits;
use common::*;
use std::net::SocketAddr;
use std::time::Duration;

const KEY: &str = "0123456789abcdef-abuse";

fn ring(addrs: &[SocketAddr]) -> RingFile {
    ring_file(addrs, 8, KEY)
}

async fn scanned_edges(origin: SocketAddr, n: usize, capacity: u64) -> Vec<DhtEdge> {
    let addrs = free_addrs(n).await;
    dht_edges(&ring(&addrs), origin, |c| {
        // Long windows and a high c_high: no replication during the scan.
        c.window = Duration::from_secs(60);
        c.c_high = 1e6;
        c.rgr_period = Duration::from_secs(60);
        c.capacity = capacity;
    })
    .await
}

/// Finding 1: `GET /replica/{file}/1` at an edge that does not own the file's home position
/// made it fetch and keep the file for good. Now it is refused with 421 and nothing is kept;
/// replicas above 1 are never made by a client request; what an edge keeps of the home copies
/// it owns stays within its capacity, and an evicted one is fetched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_scan_fills_nothing_and_home_copies_stay_within_capacity() {
    let o = origin(origin_config()).await;
    // Objects of 1000 to 4000 bytes: at most 20 fit in 40 kB.
    let capacity = 40_000;
    let edges = scanned_edges(o.server.addr, 3, capacity).await;
    let c = client();
    let target = edges[0].server.addr;
    let (mut misdirected, mut served) = (0, 0);
    for f in 0..300u64 {
        let r = get_with(&c, format!("http://{target}/replica/{f}/1")).await;
        match r.status().as_u16() {
            421 => misdirected += 1,
            200 => served += 1,
            s => panic!("file {f}: status {s}"),
        }
        let r = get_with(&c, format!("http://{target}/replica/{f}/2")).await;
        assert_eq!(r.status().as_u16(), 404, "file {f}, index 2");
    }
    // Edge 0 owns about a third of the home positions.
    assert!(misdirected > 100 && served > 50, "{misdirected} / {served}");
    // Its replicas answer ranges and conditionals on the origin's validators.
    let f = (0..300u64)
        .find(|&f| edges[0].replicas().contains(&(f, 1)))
        .unwrap();
    let url = format!("http://{target}/replica/{f}/1");
    let r = c
        .get(&url)
        .header("range", "bytes=2-5")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 206);
    let etag = r.headers()["etag"].to_str().unwrap().to_string();
    assert_eq!(r.bytes().await.unwrap(), catalogue().bytes(f).slice(2..6));
    let r = c
        .get(&url)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 304);
    assert!(
        edges[0].replicas().iter().all(|&(_, i)| i == 1),
        "{:?}",
        edges[0].replicas()
    );
    assert!(
        edges[0].held_bytes() <= capacity,
        "{} bytes held",
        edges[0].held_bytes()
    );
    // The same scan through /content, the client-facing path, at every edge: each keeps
    // home copies within its capacity, and every answer has the origin's bytes, also for
    // files whose home copy was evicted meanwhile.
    for f in 0..300u64 {
        let entry = edges[f as usize % 3].server.addr;
        let r = get_with(&c, format!("http://{entry}/content/{f}")).await;
        assert_eq!(r.status().as_u16(), 200, "file {f}");
        assert_eq!(r.bytes().await.unwrap(), catalogue().bytes(f), "file {f}");
    }
    for e in &edges {
        assert!(e.held_bytes() <= capacity, "{} bytes held", e.held_bytes());
        let m = promtool_check(e.server.addr).await;
        assert!(m.contains("cdnlab_dht_capacity_bytes 40000"), "{m}");
    }
    let r = get_with(&c, format!("http://{}/content/0", edges[1].server.addr)).await;
    assert_eq!(r.bytes().await.unwrap(), catalogue().bytes(0));
    stop_all(edges.into_iter().map(|e| e.server).chain([o.server])).await;
}

/// Finding 6: a miss abandoned by its only client left its in-flight entry behind. Now the
/// abandoned fetch removes it: after 200 aborted misses, no fetch is under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_misses_leave_no_in_flight_entry() {
    let o = slow_origin(Duration::from_secs(2)).await;
    let e = edge(edge_config(o.server.addr)).await;
    let impatient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..200u64)
        .map(|id| {
            let (c, a) = (impatient.clone(), e.server.addr);
            tokio::spawn(async move { c.get(format!("http://{a}/content/{id}")).send().await })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_err(), "the origin answers after 2 s");
    }
    let gauge = |m: &str| metric(m, "cdnlab_origin_fetches_in_flight ");
    // The server notices each closed connection and cancels its handler.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    let mut m = promtool_check(e.server.addr).await;
    while gauge(&m) > 0.0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        m = promtool_check(e.server.addr).await;
    }
    assert!(m.contains("cdnlab_origin_fetches_in_flight "), "{m}");
    assert_eq!(gauge(&m), 0.0, "{m}");
    stop_all([e.server, o.server]).await;
}

/// The smaller findings on HTTP semantics: 400 for an HTTP/1.1 request without a `Host` or
/// with two (RFC 9112); 206 and 416 for `Range`; `ETag`, `Last-Modified` and `Age`, with 304
/// for `If-None-Match` and `If-Modified-Since` (RFC 9110, 9111), at the edge and the origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_semantics_hosts_ranges_validators_and_age() {
    let o = origin(origin_config()).await;
    let e = edge(edge_config(o.server.addr)).await;
    for addr in [o.server.addr, e.server.addr] {
        let (no_host, _) = raw(
            addr,
            b"GET /content/1 HTTP/1.1\r\nconnection: close\r\n\r\n",
            Duration::from_secs(2),
        )
        .await;
        assert_eq!(status_of(&no_host), 400, "{no_host}");
        let (two_hosts, _) = raw(
            addr,
            b"GET /content/1 HTTP/1.1\r\nhost: a\r\nhost: b\r\nconnection: close\r\n\r\n",
            Duration::from_secs(2),
        )
        .await;
        assert_eq!(status_of(&two_hosts), 400, "{two_hosts}");
        let (old, _) = raw(
            addr,
            b"GET /content/1 HTTP/1.0\r\n\r\n",
            Duration::from_secs(2),
        )
        .await;
        assert_eq!(status_of(&old), 200, "HTTP/1.0 needs no Host: {old}");
    }
    let c = client();
    let want = catalogue().bytes(3);
    let url = |a: SocketAddr| format!("http://{a}/content/3");
    for addr in [o.server.addr, e.server.addr] {
        let r = c.get(url(addr)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.headers()["accept-ranges"], "bytes");
        let etag = r.headers()["etag"].to_str().unwrap().to_string();
        let modified = r.headers()["last-modified"].to_str().unwrap().to_string();
        assert_eq!(r.bytes().await.unwrap(), want);
        let r = c
            .get(url(addr))
            .header("range", "bytes=0-9")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 206);
        assert_eq!(
            r.headers()["content-range"],
            format!("bytes 0-9/{}", want.len()).as_str()
        );
        assert_eq!(r.bytes().await.unwrap(), want.slice(0..10));
        let r = c
            .get(url(addr))
            .header("range", "bytes=-5")
            .send()
            .await
            .unwrap();
        assert_eq!(r.bytes().await.unwrap(), want.slice(want.len() - 5..));
        let r = c
            .get(url(addr))
            .header("range", "bytes=99999-")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 416);
        assert_eq!(
            r.headers()["content-range"],
            format!("bytes */{}", want.len()).as_str()
        );
        let r = c
            .get(url(addr))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 304);
        assert_eq!(r.headers()["etag"], etag.as_str());
        assert!(r.bytes().await.unwrap().is_empty());
        let r = c
            .get(url(addr))
            .header("if-modified-since", &modified)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 304);
        let r = c
            .get(url(addr))
            .header("if-none-match", "\"something-else\"")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    // The edge's copy ages: a hit a second later says so.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = c.get(url(e.server.addr)).send().await.unwrap();
    assert_eq!(r.headers()["cache-status"], "cdnlab; hit");
    let age: u64 = r.headers()["age"].to_str().unwrap().parse().unwrap();
    assert!(age >= 1, "{age}");
    stop_all([e.server, o.server]).await;
}

/// Finding 2: clients that ask for large objects and never read kept their connections (and
/// the bodies) for good. The send timeout closes them, counted in `/metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_are_cut_off_at_the_send_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(10, 8 << 20, 8 << 20, 1).unwrap();
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 64 << 20;
    ec.limits = Limits {
        send_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let e = edge(ec).await;
    let mut sockets = Vec::new();
    for id in 0..4 {
        let mut s = tokio::net::TcpStream::connect(e.server.addr).await.unwrap();
        s.write_all(format!("GET /content/{id} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        sockets.push(s); // never read
    }
    let value = metric;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut m = promtool_check(e.server.addr).await;
    while value(&m, "cdnlab_send_timeouts_total") < 4.0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        m = promtool_check(e.server.addr).await;
    }
    assert_eq!(value(&m, "cdnlab_send_timeouts_total"), 4.0, "{m}");
    // Only the scrape's own connection is left.
    assert_eq!(value(&m, "cdnlab_connections_open "), 1.0, "{m}");
    // What a client that wakes up now gets: what the kernel had buffered, then the close; not
    // the 8 MiB body, which the server used to go on sending.
    for mut s in sockets {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "the server still holds the connection");
        assert!(got.len() < 8 << 20, "{} bytes: the whole body", got.len());
    }
    stop_all([e.server, o.server]).await;
}

/// Finding 3 at test scale (`bench/abuse.sh` runs 2,000): with 256 connection slots, one
/// address opens 400 connections and holds them. Before, it took every slot and the other
/// clients got 503; now it gets its 64 and no more, and normal clients from another address
/// keep being served quickly (p99 under 50 ms over 100 requests).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_from_one_address_leaves_others_served() {
    let o = origin(origin_config()).await;
    let mut ec = edge_config(o.server.addr);
    ec.limits = Limits {
        max_connections: 256,
        max_per_address: 64,
        ..Limits::default()
    };
    let e = edge(ec).await;
    let mut held = Vec::new();
    for _ in 0..400 {
        held.push(connect_from([127, 0, 0, 2], e.server.addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let c = client();
    let mut took = Vec::new();
    for id in 0..100u64 {
        let t = std::time::Instant::now();
        let r = get_with(&c, format!("http://{}/content/{}", e.server.addr, id % 20)).await;
        assert_eq!(r.status().as_u16(), 200);
        r.bytes().await.unwrap();
        took.push(t.elapsed());
    }
    took.sort_unstable();
    assert!(took[98] < Duration::from_millis(50), "p99 {:?}", took[98]);
    let refused = |m: &str| {
        metric(
            m,
            "cdnlab_connections_refused_total{reason=\"per_address\"}",
        )
    };
    // Every connection beyond the 64 is refused (each as the server gets to it).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    let mut m = promtool_check(e.server.addr).await;
    while refused(&m) < 336.0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        m = promtool_check(e.server.addr).await;
    }
    assert_eq!(refused(&m), 336.0, "{m}");
    drop(held);
    stop_all([e.server, o.server]).await;
}
