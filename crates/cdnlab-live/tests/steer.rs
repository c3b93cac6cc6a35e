//! The steering server with two admission-controlled edges on loopback: thresholds installed
//! from the optimal allocation, manifests ordered by share, blocking that triggers a warm
//! re-solve without dropping admitted streams, and reports that cannot be read.

mod common;
use cdnlab_live::server::Limits;
use cdnlab_live::steer::{self, SteerConfig, Topology};
use common::*;
use std::net::SocketAddr;
use std::time::Duration;

const KEY: &str = "0123456789abcdef-steer";

fn topology(a: SocketAddr, c: SocketAddr) -> Topology {
    Topology::parse(&format!(
        r#"{{"secret": "{KEY}", "metros": ["A", "B", "C"], "links": [["A", "B"], ["B", "C"]],
            "servers": [{{"name": "a", "metro": "A", "addr": "{a}", "capacity": 10}},
                        {{"name": "c", "metro": "C", "addr": "{c}", "capacity": 30}}],
            "populations": [{{"name": "pa", "metro": "A", "demand": 30}},
                            {{"name": "pc", "metro": "C", "demand": 10}}]}}"#
    ))
    .unwrap()
}

fn config(t: Topology) -> SteerConfig {
    SteerConfig {
        topology: t,
        listen: ANY.parse().unwrap(),
        ttl: 10,
        window: Duration::from_millis(300),
        b_max: 0.05,
        timeout: Duration::from_secs(2),
        limits: Limits::default(),
    }
}

async fn admission_edge(origin: SocketAddr) -> cdnlab_live::edge::Edge {
    let mut ec = edge_config(origin);
    ec.admission = Some(KEY.into());
    ec.stream_rate = Some(20_000); // objects of 1 to 4 kB stream for 0.05 to 0.2 s
    edge(ec).await
}

async fn json(url: String) -> (u16, serde_json::Value) {
    let r = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(url)
        .header("x-cdnlab-secret", KEY)
        .send()
        .await
        .unwrap();
    (
        r.status().as_u16(),
        r.json().await.unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thresholds_manifests_and_reallocation() {
    let o = origin(origin_config()).await;
    let (ea, ec) = (
        admission_edge(o.server.addr).await,
        admission_edge(o.server.addr).await,
    );
    let s = steer::start(config(topology(ea.server.addr, ec.server.addr)))
        .await
        .unwrap();
    // The optimum: pa has 10 at a and 20 at c; pc has 10 at c.
    assert_eq!(s.thresholds(), [10, 20, 0, 10]);
    let m = promtool_check(s.server.addr).await;
    assert!(
        m.lines()
            .any(|l| l == "cdnlab_steer_threshold{population=\"pa\",edge=\"c\"} 20"),
        "{m}"
    );
    let (_, at_a) = json(format!("http://{}/internal/admission", ea.server.addr)).await;
    let (_, at_c) = json(format!("http://{}/internal/admission", ec.server.addr)).await;
    assert_eq!(
        (at_a["pa"]["limit"].as_u64(), at_a["pc"]["limit"].as_u64()),
        (Some(10), Some(0))
    );
    assert_eq!(
        (at_c["pa"]["limit"].as_u64(), at_c["pc"]["limit"].as_u64()),
        (Some(20), Some(10))
    );
    let base = format!("http://{}", s.server.addr);
    let (code, m) = json(format!("{base}/steering/pa")).await;
    assert_eq!(code, 200);
    assert_eq!(m["PATHWAY-PRIORITY"], serde_json::json!(["c", "a"]));
    assert_eq!(m["VERSION"], 1);
    assert_eq!(m["TTL"], 10);
    assert_eq!(m["RELOAD-URI"], format!("{base}/steering/pa"));
    assert_eq!(
        json(format!("{base}/steering/pc")).await.1["PATHWAY-PRIORITY"],
        serde_json::json!(["c"])
    );
    assert_eq!(json(format!("{base}/steering/nobody")).await.0, 404);
    assert_eq!(json(format!("{base}/steering/..%2F..%2Fetc")).await.0, 404);
    // pc's demand grows past its 10 streams at c: 16 at once, then again; some are blocked.
    let c_addr = ec.server.addr;
    let mut codes = Vec::new();
    for _ in 0..6 {
        let streams: Vec<_> = (0..16)
            .map(|i| {
                tokio::spawn(async move {
                    get(c_addr, &format!("/content/{}?population=pc", 10 + i))
                        .await
                        .0
                })
            })
            .collect();
        for t in streams {
            codes.push(t.await.unwrap());
        }
        if s.resolves() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(codes.contains(&503), "{codes:?}");
    // Admitted streams all finished whole: none was dropped by a re-allocation.
    assert!(codes.iter().all(|&c| c == 200 || c == 503), "{codes:?}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while s.resolves() == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(s.resolves() >= 1, "re-solved after blocking");
    let x = s.thresholds();
    assert!(x[3] > 10, "pc's share at c grew: {x:?}");
    assert_eq!(x.iter().sum::<i64>(), 40, "all capacity allocated");
    let (_, at_c) = json(format!("http://{}/internal/admission", ec.server.addr)).await;
    assert_eq!(at_c["pc"]["limit"].as_i64(), Some(x[3]), "installed");
    s.stop().await;
    ea.server.stop().await;
    ec.server.stop().await;
    o.server.stop().await;
}

/// An edge whose reports cannot be read (here the origin, which has no admission endpoint) is
/// counted and skipped; manifests are still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_reports_are_counted() {
    let o = origin(origin_config()).await;
    let ea = admission_edge(o.server.addr).await;
    let s = steer::start(config(topology(ea.server.addr, o.server.addr)))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let m = promtool_check(s.server.addr).await;
    let errors = |name: &str| {
        m.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    assert!(errors("cdnlab_steer_report_errors_total") >= 1.0, "{m}");
    assert!(errors("cdnlab_steer_install_errors_total") >= 1.0, "{m}");
    assert_eq!(get(s.server.addr, "/steering/pa").await.0, 200);
    s.stop().await;
    ea.server.stop().await;
    o.server.stop().await;
}
