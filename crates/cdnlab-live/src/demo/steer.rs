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
use crate::serve::Limits;
use crate::steer::{self, Deployment, SteerConfig};
use cdnlab::alloc::topology::{CAPACITY, METROS, R1, R15, SHIFTED, reference_network};
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
    /// The reference capacities and demands are divided by this.
    pub scale: i64,
    /// The steering server's reporting window in the demand-shift runs.
    pub window: Duration,
    pub seed: u64,
}

impl SteerDemoConfig {
    /// The demo's experiment (`cdnlab live demo --scenario steering`): rho = 0.9 with streams of
    /// 2 s, each policy for `phase`, on the reference instance divided by `scale`.
    pub fn standard(phase: Duration, scale: i64, window: Duration, seed: u64) -> Self {
        SteerDemoConfig {
            rho: 0.9,
            holding: Duration::from_secs(2),
            phase,
            scale,
            window,
            seed,
        }
    }
}

/// Blocking of one policy.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct PolicyResult {
    pub policy: String,
    pub arrivals: u64,
    pub blocked: u64,
    pub blocking: f64,
    /// Per population (reference metro order).
    pub per_population: Vec<f64>,
    /// Blocking in the final third of the run (after a demand shift, once settled).
    pub final_third: f64,
    /// Re-allocations the steering server made, and the time of its last solve.
    pub resolves: u64,
    /// NaN (written as null in JSON) when nothing was solved.
    #[serde(deserialize_with = "nan_if_null")]
    pub solve_seconds: f64,
    /// Blocking per second of the run: (second, blocking).
    pub timeline: Vec<(f64, f64)>,
    /// Arrivals and blocked arrivals in each second of the run, warm-up included.
    pub per_second: Vec<(u64, u64)>,
}

/// A number that JSON has as null where it was NaN (serde_json writes NaN so).
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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
    if !(1..=100).contains(&cfg.scale) || cfg.window.is_zero() {
        return Err(cdnlab::Error::param(
            "scale/window",
            cfg.scale,
            "a divisor of 1 to 100 and a window > 0",
        )
        .into());
    }
    let capacity: Vec<i64> = CAPACITY.iter().map(|c| (c / cfg.scale).max(1)).collect();
    let demand = cdnlab::alloc::problem::scale_to(&R15, capacity.iter().sum());
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let origin = origin::start(
        any,
        OriginConfig::serving(Catalogue::new(64, OBJECT, OBJECT, cfg.seed)?),
    )
    .await?;
    let rate = (f64::from(OBJECT) / cfg.holding.as_secs_f64()).max(1.0) as u64;
    let mut edges: Vec<Edge> = Vec::new();
    for _ in 0..METROS.len() {
        edges.push(
            edge::start(
                any,
                EdgeConfig {
                    admission: Some(SECRET.into()),
                    stream_rate: Some(rate),
                    ..EdgeConfig::in_front_of(origin.server.addr)
                },
            )
            .await?,
        );
    }
    let topology = reference(&edges, &capacity, &demand)?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(cfg.holding * 4 + Duration::from_secs(5))
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let steered = steered_routes;
    let steering = |t: &Deployment, b_max: f64| SteerConfig {
        topology: t.clone(),
        listen: any,
        ttl: 10,
        window: cfg.window,
        b_max,
        timeout: Duration::from_secs(5),
        limits: Limits::default(),
        min_share: steer::DEFAULT_MIN_SHARE,
        sessions: steer::SessionLimits::default(),
        guarantee: true,
        policy: cdnlab::steer::policy::Policy::Shares,
        media: None,
    };
    let mut results = Vec::new();
    // 1. Optimal: the steering server's allocation (no re-allocation: b_max near 1).
    let s = steer::start(steering(&topology, 0.99)).await?;
    let r = phase(
        cfg,
        "optimal",
        &steered(s.server.addr, &topology),
        &demand,
        None,
        &client,
    )
    .await;
    on_phase(&r);
    results.push(r);
    s.server.stop().await;
    // 2. Nearest: each population only at its own metro's edge, with all of its capacity.
    let (nearest, own) = nearest_routes(&topology);
    steer::install_thresholds(&client, &topology, &nearest).await;
    let r = phase(cfg, "nearest", &own, &demand, None, &client).await;
    on_phase(&r);
    results.push(r);
    // 3 and 4. The spec's demand shift (from R1) a third into the run, with the steering server
    // re-allocating when a window blocks more than 5%, and without (stale).
    let before = cdnlab::alloc::problem::scale_to(&R1, capacity.iter().sum());
    let after = cdnlab::alloc::problem::scale_to(&SHIFTED, capacity.iter().sum());
    let shifted = reference(&edges, &capacity, &before)?;
    for (policy, b_max) in [("shift, re-allocating", 0.05), ("shift, stale", 0.99)] {
        let s = steer::start(steering(&shifted, b_max)).await?;
        let r = phase(
            cfg,
            policy,
            &steered(s.server.addr, &shifted),
            &before,
            Some((&after, cfg.phase / 3)),
            &client,
        )
        .await;
        on_phase(&r);
        results.push(PolicyResult {
            resolves: s.resolves(),
            solve_seconds: s.solve_seconds(),
            ..r
        });
        s.server.stop().await;
    }
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

/// Nearest-server allocation (S1): each population only at its own metro's edge, with all of
/// its capacity: the thresholds (population-major) and the routes.
pub(crate) fn nearest_routes(topology: &Deployment) -> (Vec<i64>, Vec<Route>) {
    let n = topology.servers.len();
    let mut nearest = vec![0i64; topology.populations.len() * n];
    let mut own = Vec::new();
    for (i, p) in topology.populations.iter().enumerate() {
        let j = topology
            .servers
            .iter()
            .position(|s| s.node == p.node)
            .expect("an edge per metro");
        nearest[i * n + j] = topology.servers[j].capacity;
        own.push(Route::Fixed(vec![topology.servers[j].addr]));
    }
    (nearest, own)
}

/// The routes of steered populations: each arrival reads its manifest at the steering server
/// at `addr` and tries its pathways in order.
pub(crate) fn steered_routes(addr: SocketAddr, t: &Deployment) -> Vec<Route> {
    let names: Vec<(String, SocketAddr)> =
        t.servers.iter().map(|s| (s.name.clone(), s.addr)).collect();
    t.populations
        .iter()
        .map(|p| Route::Steered {
            manifest: format!("http://{addr}/steering/{}", p.name),
            edges: names.clone(),
        })
        .collect()
}

/// The reference topology over `edges` with these capacities and demands.
fn reference(edges: &[Edge], capacity: &[i64], demand: &[i64]) -> Result<Deployment, Error> {
    let addrs: Vec<SocketAddr> = edges.iter().map(|e| e.server.addr).collect();
    reference_at(&addrs, SECRET, capacity, demand)
}

/// The reference topology with metro m's edge at `addrs[m]`, these capacities and demands,
/// and `secret` (also the testbed's experiment `tp-admission`'s).
pub(crate) fn reference_at(
    addrs: &[SocketAddr],
    secret: &str,
    capacity: &[i64],
    demand: &[i64],
) -> Result<Deployment, Error> {
    Ok(
        Deployment::parse(&reference_json(addrs, secret, capacity, demand)?)
            .map_err(|e| cdnlab::Error::param("topology", e, "the reference topology"))?,
    )
}

/// [`reference_at`]'s topology file (JSON; docs/live.md).
pub(crate) fn reference_json(
    addrs: &[SocketAddr],
    secret: &str,
    capacity: &[i64],
    demand: &[i64],
) -> Result<String, Error> {
    let name = |m: &str| m.to_lowercase();
    // The reference metros as a network (the library's one topology type, as node-link JSON).
    let mut bytes = Vec::new();
    cdnlab::topology::json::write(&reference_network(), &mut bytes)
        .map_err(|e| cdnlab::Error::param("topology", e, "the reference network"))?;
    let network: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| cdnlab::Error::param("topology", e, "the reference network"))?;
    Ok(serde_json::json!({
        "secret": secret,
        "network": network,
        "servers": METROS.iter().zip(addrs).zip(capacity).map(|((m, a), c)| serde_json::json!({
            "name": format!("edge-{}", name(m)), "metro": m, "addr": a.to_string(), "capacity": c})).collect::<Vec<_>>(),
        "populations": METROS.iter().zip(demand).map(|(m, d)| serde_json::json!({
            "name": name(m), "metro": m, "demand": d})).collect::<Vec<_>>(),
    }).to_string())
}

/// Where a population's streams go: fixed edges, or the steering server's manifest read at
/// each arrival (so re-allocations reach new streams).
#[derive(Clone)]
pub(crate) enum Route {
    Fixed(Vec<SocketAddr>),
    Steered {
        manifest: String,
        edges: Vec<(String, SocketAddr)>,
    },
}

impl Route {
    async fn targets(&self, client: &reqwest::Client) -> Vec<SocketAddr> {
        match self {
            Route::Fixed(v) => v.clone(),
            Route::Steered { manifest, edges } => {
                let Ok(r) = client.get(manifest).send().await else {
                    return Vec::new();
                };
                let m: serde_json::Value = r.json().await.unwrap_or_default();
                m["PATHWAY-PRIORITY"]
                    .as_array()
                    .map(|v| {
                        v.iter()
                            .filter_map(|x| {
                                edges
                                    .iter()
                                    .find(|(n, _)| Some(n.as_str()) == x.as_str())
                                    .map(|e| e.1)
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            }
        }
    }
}

/// One policy: Poisson arrivals per population at rho D_i / h (D switching to `after` at its
/// time, if given) for `cfg.phase`; each stream tries its route's edges in order and streams
/// from the first that admits it, or is blocked.
pub(crate) async fn phase(
    cfg: &SteerDemoConfig,
    policy: &str,
    routes: &[Route],
    before: &[i64],
    after: Option<(&[i64], Duration)>,
    client: &reqwest::Client,
) -> PolicyResult {
    let k = routes.len();
    let secs = cfg.phase.as_secs() as usize + 1;
    let counts: Arc<Vec<(AtomicU64, AtomicU64)>> = Arc::new(
        (0..k)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
    );
    let seconds: Arc<Vec<(AtomicU64, AtomicU64)>> = Arc::new(
        (0..secs)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
    );
    let start = tokio::time::Instant::now();
    let warm = start + cfg.phase.mul_f64(0.2);
    let end = start + cfg.phase;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..k {
        let rate = |d: i64| cfg.rho * d as f64 / cfg.holding.as_secs_f64();
        let (r0, shift) = (
            rate(before[i]),
            after.map(|(d, at)| (rate(d[i]), start + at)),
        );
        let (counts, seconds, client, route) = (
            counts.clone(),
            seconds.clone(),
            client.clone(),
            routes[i].clone(),
        );
        let mut rng = cdnlab::rng::stream(cfg.seed, i as u64, policy.len() as u64);
        tasks.spawn(async move {
            let mut streams = tokio::task::JoinSet::new();
            let mut at = start;
            loop {
                let (r, change) = match shift {
                    Some((r1, when)) if at >= when => (r1, None),
                    Some((_, when)) => (r0, Some(when)),
                    None => (r0, None),
                };
                let next = if r > 0.0 {
                    at + Duration::from_secs_f64(cdnlab::workload::arrivals::exponential(
                        &mut rng,
                        1.0 / r,
                    ))
                } else {
                    end
                };
                // Poisson: at the rate change the next arrival is drawn afresh at the new rate.
                if let Some(when) = change.filter(|&w| next >= w) {
                    at = when;
                    continue;
                }
                at = next;
                if at >= end {
                    break;
                }
                tokio::time::sleep_until(at).await;
                let measured = at >= warm;
                let second = (at - start).as_secs() as usize;
                let (counts, seconds, client, route) = (
                    counts.clone(),
                    seconds.clone(),
                    client.clone(),
                    route.clone(),
                );
                let object = rng.random_range(0..64u32);
                streams.spawn(async move {
                    let pop = METROS[i].to_lowercase(); // population i is metro i's
                    seconds[second].0.fetch_add(1, Relaxed);
                    if measured {
                        counts[i].0.fetch_add(1, Relaxed);
                    }
                    for a in route.targets(&client).await {
                        let Ok(r) = client
                            .get(format!("http://{a}/content/{object}?population={pop}"))
                            .send()
                            .await
                        else {
                            continue;
                        };
                        if r.status() == reqwest::StatusCode::OK {
                            let _ = r.bytes().await; // the stream: holds its slot to the end
                            return;
                        }
                    }
                    seconds[second].1.fetch_add(1, Relaxed);
                    if measured {
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
    let timeline: Vec<(f64, f64)> = seconds
        .iter()
        .enumerate()
        .filter(|(_, (a, _))| a.load(Relaxed) > 0)
        .map(|(t, (a, b))| {
            (
                t as f64 + 0.5,
                b.load(Relaxed) as f64 / a.load(Relaxed) as f64,
            )
        })
        .collect();
    let (la, lb) = seconds
        .iter()
        .skip(secs * 2 / 3)
        .fold((0, 0), |(a, b), (x, y)| {
            (a + x.load(Relaxed), b + y.load(Relaxed))
        });
    PolicyResult {
        policy: policy.into(),
        arrivals,
        blocked,
        blocking: blocked as f64 / arrivals.max(1) as f64,
        per_population: per
            .iter()
            .map(|&(a, b)| b as f64 / a.max(1) as f64)
            .collect(),
        final_third: lb as f64 / la.max(1) as f64,
        resolves: 0,
        solve_seconds: f64::NAN,
        timeline,
        per_second: seconds
            .iter()
            .map(|(a, b)| (a.load(Relaxed), b.load(Relaxed)))
            .collect(),
    }
}
