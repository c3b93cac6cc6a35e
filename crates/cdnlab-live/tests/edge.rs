//! The edge against a real origin on loopback: hits and misses, coalescing, and faults.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// A miss is fetched and stored, the next request hits; bytes are the origin's, both times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miss_then_hit_with_cache_status() {
    let o = origin(origin_config()).await;
    let e = edge(edge_config(o.server.addr)).await;
    let want = catalogue().bytes(42);
    let (code, cs, body) = get(e.server.addr, "/content/42").await;
    assert_eq!((code, cs.as_str()), (200, "cdnlab; fwd=miss; stored"));
    assert_eq!(body, want);
    let (code, cs, body) = get(e.server.addr, "/content/42").await;
    assert_eq!((code, cs.as_str()), (200, "cdnlab; hit"));
    assert_eq!(body, want);
    assert_eq!(o.requests(), 1);
    let (code, cs, _) = get(e.server.addr, "/content/999999").await;
    assert_eq!(
        (code, cs.as_str()),
        (404, "cdnlab; fwd=miss; fwd-status=404")
    );
    stop_all([e.server, o.server]).await;
}

/// Concurrent misses for one object make one origin fetch; the others are answered from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_misses_are_coalesced() {
    let o = slow_origin(Duration::from_millis(300)).await;
    let e = edge(edge_config(o.server.addr)).await;
    let addr = e.server.addr;
    let tasks: Vec<_> = (0..20)
        .map(|_| tokio::spawn(async move { get(addr, "/content/7").await }))
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        let (code, cs, body) = t.await.unwrap();
        assert_eq!(code, 200);
        assert_eq!(body, catalogue().bytes(7));
        statuses.push(cs);
    }
    assert_eq!(o.requests(), 1, "one origin fetch");
    let stored = statuses.iter().filter(|s| s.ends_with("stored")).count();
    let collapsed = statuses.iter().filter(|s| s.ends_with("collapsed")).count();
    assert_eq!((stored, collapsed), (1, 19), "{statuses:?}");
    stop_all([e.server, o.server]).await;
}

/// Origin errors become 502 with the origin's status in Cache-Status, and are not cached: once
/// the origin recovers, the object is fetched afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_errors_are_502_and_not_cached() {
    let o = origin(origin_config()).await;
    let e = edge(edge_config(o.server.addr)).await;
    o.set_down(true);
    let (code, cs, _) = get(e.server.addr, "/content/5").await;
    assert_eq!(
        (code, cs.as_str()),
        (502, "cdnlab; fwd=miss; fwd-status=503")
    );
    assert!(!e.holds(5));
    o.set_down(false);
    let (code, cs, body) = get(e.server.addr, "/content/5").await;
    assert_eq!((code, cs.as_str()), (200, "cdnlab; fwd=miss; stored"));
    assert_eq!(body, catalogue().bytes(5));
    // An origin that is gone: 502, unreachable.
    o.server.stop().await;
    let (code, cs, _) = get(e.server.addr, "/content/6").await;
    assert_eq!(
        (code, cs.as_str()),
        (502, "cdnlab; fwd=miss; detail=\"origin unreachable\"")
    );
    e.server.stop().await;
}

/// A slow origin: the edge answers 504 at its origin timeout, not when the origin answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_origin_times_out() {
    let o = slow_origin(Duration::from_secs(3)).await;
    let mut ec = edge_config(o.server.addr);
    ec.origin_timeout = Duration::from_millis(300);
    let e = edge(ec).await;
    let t = Instant::now();
    let (code, cs, _) = get(e.server.addr, "/content/1").await;
    let took = t.elapsed();
    assert_eq!(
        (code, cs.as_str()),
        (504, "cdnlab; fwd=miss; detail=\"origin timeout\"")
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(!e.holds(1));
    stop_all([e.server, o.server]).await;
}

/// A small cache evicts; what it reports holding is exactly what hits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_keeps_bytes_and_policy_in_step() {
    let o = origin(origin_config()).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 20_000; // 5 to 20 objects of 1000..4000 bytes
    ec.max_object_size = Some(20_000); // not the default eighth: every object is stored
    let e = edge(ec).await;
    for id in 0..60 {
        get(e.server.addr, &format!("/content/{id}")).await;
    }
    let held: Vec<u64> = (0..60).filter(|&id| e.holds(id)).collect();
    assert!(held.len() >= 5 && held.len() < 60, "{held:?}");
    // A held object hits; one not held misses (each request changes what is held, so one of
    // each, the held one first).
    let (_, cs, _) = get(e.server.addr, &format!("/content/{}", held[0])).await;
    assert_eq!(cs, "cdnlab; hit");
    let gone = (0..60).find(|id| !held.contains(id)).unwrap();
    let (_, cs, _) = get(e.server.addr, &format!("/content/{gone}")).await;
    assert_eq!(cs, "cdnlab; fwd=miss; stored");
    let m = promtool_check(e.server.addr).await;
    assert!(m.contains("cdnlab_cache_capacity_bytes 20000"), "{m}");
    promtool_check(o.server.addr).await;
    stop_all([e.server, o.server]).await;
}

/// An edge restarted on the same address comes back with a cold cache: misses, then hits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarted_edge_starts_cold() {
    let o = origin(origin_config()).await;
    let e = edge(edge_config(o.server.addr)).await;
    let addr = e.server.addr;
    get(addr, "/content/9").await;
    assert_eq!(get(addr, "/content/9").await.1, "cdnlab; hit");
    e.server.stop().await;
    // Down: connections are refused.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    let e = cdnlab_live::edge::start(addr, edge_config(o.server.addr))
        .await
        .unwrap();
    let (code, cs, body) = get(addr, "/content/9").await;
    assert_eq!((code, cs.as_str()), (200, "cdnlab; fwd=miss; stored"));
    assert_eq!(body, catalogue().bytes(9));
    assert_eq!(get(addr, "/content/9").await.1, "cdnlab; hit");
    assert_eq!(o.requests(), 2);
    stop_all([e.server, o.server]).await;
}

/// With a bandwidth, concurrent downloads share it: 8 objects of 200 kB at 1 MB/s take about
/// 1.6 s in all, not the 0.2 s they take unshaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shaping_limits_the_total_rate() {
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(100, 200_000, 200_000, 1).unwrap();
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 10 << 20;
    ec.bandwidth = Some(1_000_000);
    let e = edge(ec).await;
    let addr = e.server.addr;
    for id in 0..8 {
        get(addr, &format!("/content/{id}")).await; // warm (shaped too)
    }
    let t = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|id| tokio::spawn(async move { get(addr, &format!("/content/{id}")).await }))
        .collect();
    for t in tasks {
        let (code, cs, body) = t.await.unwrap();
        assert_eq!(
            (code, cs.as_str(), body.len()),
            (200, "cdnlab; hit", 200_000)
        );
    }
    let took = t.elapsed().as_secs_f64();
    // 1.6 MB at 1 MB/s, less the burst saved up (0.1 s worth).
    assert!((1.3..5.0).contains(&took), "{took}");
    stop_all([e.server, o.server]).await;
}

/// Per-population admission: a population streams up to its installed threshold; the next
/// stream is refused with 503 and Retry-After; a finished stream frees its slot; thresholds
/// can only be installed with the secret, and requests must name a known population.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_thresholds_refuse_above_the_share() {
    const SECRET: &str = "0123456789abcdef-adm";
    let mut oc = origin_config();
    oc.catalogue = cdnlab_live::catalogue::Catalogue::new(100, 100_000, 100_000, 1).unwrap();
    let o = origin(oc).await;
    let mut ec = edge_config(o.server.addr);
    ec.capacity = 10 << 20;
    ec.admission = Some(SECRET.into());
    ec.stream_rate = Some(200_000); // a 100 kB object streams for 0.5 s
    let e = edge(ec).await;
    let addr = e.server.addr;
    let c = reqwest::Client::builder().no_proxy().build().unwrap();
    let install = |secret: Option<&'static str>, q: &'static str| {
        let mut r = c.post(format!("http://{addr}/internal/admission?{q}"));
        if let Some(s) = secret {
            r = r.header("x-cdnlab-secret", s);
        }
        async move { r.send().await.unwrap().status().as_u16() }
    };
    for (secret, q, code) in [
        (None, "population=a&limit=2", 401),
        (Some("0123456789abcdef-xxx"), "population=a&limit=2", 401),
        (Some(SECRET), "population=a&limit=-1", 400),
        (Some(SECRET), "population=a", 400),
        (Some(SECRET), "population=a&limit=2", 204),
    ] {
        assert_eq!(install(secret, q).await, code, "{secret:?} {q}");
    }
    assert_eq!(get(addr, "/content/1").await.0, 400, "no population");
    assert_eq!(
        get(addr, "/content/1?population=zz").await.0,
        503,
        "no threshold for the population (yet): retry"
    );
    let streams: Vec<_> = (0..2)
        .map(|i| {
            tokio::spawn(async move { get(addr, &format!("/content/{i}?population=a")).await.0 })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let r = get_with(&c, format!("http://{addr}/content/3?population=a")).await;
    assert_eq!(r.status().as_u16(), 503);
    assert_eq!(r.headers().get("retry-after").unwrap(), "1");
    for s in streams {
        assert_eq!(s.await.unwrap(), 200);
    }
    assert_eq!(
        get(addr, "/content/3?population=a").await.0,
        200,
        "slots freed"
    );
    let shares: serde_json::Value = c
        .get(format!("http://{addr}/internal/admission"))
        .header("x-cdnlab-secret", SECRET)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        shares["a"],
        serde_json::json!({"limit": 2, "active": 0, "peak": 2, "admitted": 3, "blocked": 1, "in_flight": 0})
    );
    stop_all([e.server, o.server]).await;
}

/// An edge cannot run an offline policy: the error names it and what is allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_policy_is_refused() {
    let mut cfg = edge_config("127.0.0.1:9".parse().unwrap());
    cfg.policy = cdnlab::cache::Policy::Belady;
    let e = cdnlab_live::edge::start(([127, 0, 0, 1], next_port()).into(), cfg)
        .await
        .err()
        .expect("belady refused")
        .to_string();
    assert!(e.contains("belady") && e.contains("next access"), "{e}");
}
