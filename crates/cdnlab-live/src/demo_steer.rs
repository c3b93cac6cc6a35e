//! The steering demo: the spec's reference metros (8 metros, 12 links, capacities and the R15
//! demand profile, all divided by 10) with an admission-controlled edge per metro and a
//! population per metro, streams arriving Poisson at rho D_i / h and lasting h. Two policies
//! under the same load, one after the other: the steering server's optimal allocation (a
//! population tries its manifest's pathways in order, CP-1) and nearest-server allocation (a
//! population only uses its own metro's edge, with all of its capacity). It shows the
//! transport claim for real: the optimal allocation blocks less.

use crate::Error;
use crate::catalogue::Catalogue;
use crate::edge::{self, Edge, EdgeConfig};
use crate::origin::{self, OriginConfig};
use crate::server::Limits;
use crate::steer::{self, SteerConfig, Topology};
use cdnlab::cache::Policy;
use cdnlab::sim::stream::{CAPACITY, LINKS, METROS, R15};
use rand::RngExt;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A steering demo run.
#[derive(Debug, Clone, PartialEq)]
pub struct SteerDemoConfig {
    /// Offered load: sum of arrival rates x holding time / total capacity.
    pub rho: f64,
    /// A stream's holding time.
    pub holding: Duration,
    /// Time each policy runs (the first 20% is warm-up, not measured).
    pub phase: Duration,
    pub seed: u64,
}

/// Blocking of one policy.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PolicyResult {
    pub policy: String,
    pub arrivals: u64,
    pub blocked: u64,
    pub blocking: f64,
    /// Per population (reference metro order).
    pub per_population: Vec<f64>,
}

/// The run's result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SteerOutcome {
    pub populations: Vec<String>,
    pub capacity: Vec<i64>,
    pub demand: Vec<i64>,
    pub results: Vec<PolicyResult>,
}

const OBJECT: u32 = 16 << 10;
const SECRET: &str = "steering-demo-secret-0001";

/// Runs both policies.
pub async fn run(
    cfg: &SteerDemoConfig,
    mut on_phase: impl FnMut(&PolicyResult),
) -> Result<SteerOutcome, Error> {
    if !(cfg.rho > 0.0 && cfg.rho <= 3.0)
        || cfg.holding.is_zero()
        || cfg.phase < Duration::from_secs(2)
    {
        return Err(cdnlab::Error::param(
            "rho/holding/phase",
            cfg.rho,
            "rho in (0, 3], holding > 0, phase >= 2 s",
        )
        .into());
    }
    let capacity: Vec<i64> = CAPACITY.iter().map(|c| c / 10).collect();
    let demand = cdnlab::alloc::problem::scale_to(&R15, capacity.iter().sum());
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let origin = origin::start(
        any,
        OriginConfig {
            catalogue: Catalogue::new(64, OBJECT, OBJECT, cfg.seed)?,
            latency: Duration::ZERO,
            error_share: 0.0,
            down: false,
            limits: Limits::default(),
        },
    )
    .await?;
    let rate = (f64::from(OBJECT) / cfg.holding.as_secs_f64()).max(1.0) as u64;
    let mut edges: Vec<Edge> = Vec::new();
    for _ in 0..METROS.len() {
        edges.push(
            edge::start(
                any,
                EdgeConfig {
                    origin: origin.server.addr,
                    policy: Policy::Lru,
                    capacity: 64 << 20,
                    bandwidth: None,
                    origin_timeout: Duration::from_secs(5),
                    limits: Limits::default(),
                    admission: Some(SECRET.into()),
                    stream_rate: Some(rate),
                },
            )
            .await?,
        );
    }
    let name = |m: &str| m.to_lowercase();
    let topology = Topology::parse(&serde_json::json!({
        "secret": SECRET,
        "metros": METROS,
        "links": LINKS.iter().map(|&(a, b)| [METROS[a], METROS[b]]).collect::<Vec<_>>(),
        "servers": METROS.iter().zip(&edges).zip(&capacity).map(|((m, e), c)| serde_json::json!({
            "name": format!("edge-{}", name(m)), "metro": m, "addr": e.server.addr.to_string(), "capacity": c})).collect::<Vec<_>>(),
        "populations": METROS.iter().zip(&demand).map(|(m, d)| serde_json::json!({
            "name": name(m), "metro": m, "demand": d})).collect::<Vec<_>>(),
    }).to_string())
    .map_err(|e| cdnlab::Error::param("topology", e, "the reference topology"))?;
    let addrs: Vec<SocketAddr> = edges.iter().map(|e| e.server.addr).collect();
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(cfg.holding * 4 + Duration::from_secs(5))
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let mut results = Vec::new();
    // Optimal: the steering server (no re-allocation during the comparison: b_max near 1).
    let s = steer::start(SteerConfig {
        topology: topology.clone(),
        listen: any,
        ttl: 10,
        window: Duration::from_secs(3600),
        b_max: 0.99,
        timeout: Duration::from_secs(5),
        limits: Limits::default(),
    })
    .await?;
    let mut pathways: Vec<Vec<usize>> = Vec::new();
    for p in &topology.populations {
        let m: serde_json::Value = client
            .get(format!("http://{}/steering/{}", s.server.addr, p.name))
            .send()
            .await
            .map_err(|e| Error::Client(e.to_string()))?
            .json()
            .await
            .map_err(|e| Error::Client(e.to_string()))?;
        let order = m["PATHWAY-PRIORITY"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(|x| {
                        topology
                            .servers
                            .iter()
                            .position(|s| Some(s.name.as_str()) == x.as_str())
                    })
                    .collect()
            })
            .unwrap_or_default();
        pathways.push(order);
    }
    let r = phase(
        cfg, "optimal", &topology, &addrs, &pathways, &demand, &client,
    )
    .await;
    on_phase(&r);
    results.push(r);
    s.stop().await;
    // Nearest: each population only at its own metro's edge, with all of its capacity.
    let n = topology.servers.len();
    let mut nearest = vec![0i64; topology.populations.len() * n];
    for (i, p) in topology.populations.iter().enumerate() {
        let j = topology
            .servers
            .iter()
            .position(|s| s.metro == p.metro)
            .expect("an edge per metro");
        nearest[i * n + j] = topology.servers[j].capacity;
    }
    steer::install_thresholds(&client, &topology, &nearest).await;
    let own: Vec<Vec<usize>> = (0..topology.populations.len())
        .map(|i| (0..n).filter(|&j| nearest[i * n + j] > 0).collect())
        .collect();
    let r = phase(cfg, "nearest", &topology, &addrs, &own, &demand, &client).await;
    on_phase(&r);
    results.push(r);
    for e in edges {
        e.server.stop().await;
    }
    origin.server.stop().await;
    Ok(SteerOutcome {
        populations: topology
            .populations
            .iter()
            .map(|p| p.name.clone())
            .collect(),
        capacity,
        demand,
        results,
    })
}

/// One policy: Poisson arrivals per population for `cfg.phase`; each tries its pathways in
/// order and streams from the first that admits it, or is blocked.
async fn phase(
    cfg: &SteerDemoConfig,
    policy: &str,
    t: &Topology,
    addrs: &[SocketAddr],
    pathways: &[Vec<usize>],
    demand: &[i64],
    client: &reqwest::Client,
) -> PolicyResult {
    let k = t.populations.len();
    let counts: Arc<Vec<(AtomicU64, AtomicU64)>> = Arc::new(
        (0..k)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
    );
    let start = tokio::time::Instant::now();
    let warm = start + cfg.phase.mul_f64(0.2);
    let end = start + cfg.phase;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..k {
        let rate = cfg.rho * demand[i] as f64 / cfg.holding.as_secs_f64();
        if rate <= 0.0 {
            continue;
        }
        let (counts, client, pop) = (
            counts.clone(),
            client.clone(),
            t.populations[i].name.clone(),
        );
        let targets: Vec<SocketAddr> = pathways[i].iter().map(|&j| addrs[j]).collect();
        let mut rng = cdnlab::rng::stream(cfg.seed, i as u64, u64::from(policy == "nearest"));
        tasks.spawn(async move {
            let mut streams = tokio::task::JoinSet::new();
            let mut at = start;
            loop {
                at += Duration::from_secs_f64(-(1.0 - rng.random::<f64>()).ln() / rate);
                if at >= end {
                    break;
                }
                tokio::time::sleep_until(at).await;
                let measured = at >= warm;
                let (counts, client, pop, targets) =
                    (counts.clone(), client.clone(), pop.clone(), targets.clone());
                let object = rng.random_range(0..64u32);
                streams.spawn(async move {
                    for a in &targets {
                        let Ok(r) = client
                            .get(format!("http://{a}/content/{object}?population={pop}"))
                            .send()
                            .await
                        else {
                            continue;
                        };
                        if r.status() == reqwest::StatusCode::OK {
                            if measured {
                                counts[i].0.fetch_add(1, Relaxed);
                            }
                            let _ = r.bytes().await; // the stream: holds its slot to the end
                            return;
                        }
                    }
                    if measured {
                        counts[i].0.fetch_add(1, Relaxed);
                        counts[i].1.fetch_add(1, Relaxed);
                    }
                });
            }
            while streams.join_next().await.is_some() {}
        });
    }
    while tasks.join_next().await.is_some() {}
    let per: Vec<(u64, u64)> = counts
        .iter()
        .map(|(a, b)| (a.load(Relaxed), b.load(Relaxed)))
        .collect();
    let (arrivals, blocked) = per.iter().fold((0, 0), |(a, b), &(x, y)| (a + x, b + y));
    PolicyResult {
        policy: policy.into(),
        arrivals,
        blocked,
        blocking: blocked as f64 / arrivals.max(1) as f64,
        per_population: per
            .iter()
            .map(|&(a, b)| b as f64 / a.max(1) as f64)
            .collect(),
    }
}
