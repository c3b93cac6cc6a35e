//! The DHT demo: an origin and N edges forming a multi-hash DHT on loopback, a Zipf load over
//! the files from random entry edges, a flash crowd on one file, and an edge killed during the
//! crowd. It shows the replication claims for real: the hot file is replicated (at the
//! smallest unused indices) while the crowd lasts and de-replicated after it, the killed edge's
//! replica is refilled, and requests find a replica in a few probes.

use crate::Error;
use crate::catalogue::Catalogue;
use crate::dht::ring::RingFile;
use crate::dht::{self, DhtConfig, DhtEdge};
use crate::origin::{self, OriginConfig};
use crate::serve::Limits;
use cdnlab::workload::popularity::{Law, Sampler};
use rand::RngExt;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The hot file of the flash crowd.
pub const HOT: u64 = 0;

/// A DHT demo run.
#[derive(Debug, Clone, PartialEq)]
pub struct DhtDemoConfig {
    pub edges: usize,
    pub files: u64,
    pub alpha: f64,
    /// Requests per second over all files.
    pub base_rate: f64,
    /// Extra requests per second on the hot file during the crowd.
    pub crowd_rate: f64,
    pub crowd_start: Duration,
    pub crowd_end: Duration,
    /// Kill the edge of a middle replica of the hot file at this time.
    pub kill_at: Option<Duration>,
    pub duration: Duration,
    pub sample_every: Duration,
    pub k: u32,
    /// Requests per second a replica takes.
    pub c_high: f64,
    pub window: Duration,
    pub seed: u64,
}

impl DhtDemoConfig {
    /// The demo's experiment (`cdnlab live demo --model dht`) over `duration` with `edges`
    /// edges: 1000 files, Zipf(0.8) at 100 requests/s, a flash crowd of 300 requests/s on file 0
    /// from 20% to 60% of the run, the edge of one of its middle replicas killed at 40%; K = 32,
    /// c_high = 40 requests/s per replica, windows of 0.5 s, a sample every 250 ms.
    pub fn standard(duration: Duration, edges: usize, seed: u64) -> Self {
        let at = |share: f64| duration.mul_f64(share);
        DhtDemoConfig {
            edges,
            files: 1000,
            alpha: 0.8,
            base_rate: 100.0,
            crowd_rate: 300.0,
            crowd_start: at(0.2),
            crowd_end: at(0.6),
            kill_at: Some(at(0.4)),
            duration,
            sample_every: Duration::from_millis(250),
            k: 32,
            c_high: 40.0,
            window: Duration::from_millis(500),
            seed,
        }
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        use cdnlab::Error as E;
        if !(2..=64).contains(&self.edges) {
            return Err(E::param("edges", self.edges, "2 to 64 for the DHT demo"));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return Err(E::param(
                "duration",
                format!("{:?}", self.duration),
                "1 s to 1 hour",
            ));
        }
        if !(self.base_rate >= 0.0
            && self.crowd_rate >= 0.0
            && self.base_rate + self.crowd_rate <= 5000.0)
        {
            return Err(E::param(
                "rates",
                self.base_rate + self.crowd_rate,
                "0 to 5000 requests per second",
            ));
        }
        Ok(())
    }
}

/// One point of the timeline.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct DhtSample {
    pub t: f64,
    /// Replicas of the hot file held by live edges, and its highest index.
    pub hot_replicas: usize,
    pub hot_top: u32,
    /// Probes per request since the previous sample.
    pub probes_per_request: f64,
    pub requests: u64,
    pub lost: u64,
}

/// What the run showed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DhtOutcome {
    pub timeline: Vec<DhtSample>,
    pub max_hot_replicas: usize,
    pub final_hot_replicas: usize,
    /// Over the run: probes per lookup (searches only count lookups; replication and gap
    /// removal probes are included in the probes).
    pub probes_per_request: f64,
    pub requests: u64,
    /// Requests that failed at three entry edges in turn.
    pub lost: u64,
    pub replications: u64,
    pub dereplications: u64,
    pub gaps_filled: u64,
    pub handovers: u64,
    /// The edge killed and the hot file's index it held.
    pub killed: Option<(usize, u32)>,
}

/// A counter summed over the edges, the killed ones' final counts (`retired`) included.
fn sum(
    edges: &[Option<DhtEdge>],
    retired: &dht::DhtCounters,
    f: impl Fn(&dht::DhtCounters) -> &AtomicU64,
) -> u64 {
    edges
        .iter()
        .flatten()
        .map(|e| f(e.counters()).load(Relaxed))
        .sum::<u64>()
        + f(retired).load(Relaxed)
}

fn hot(edges: &[Option<DhtEdge>]) -> Vec<(u32, usize)> {
    let mut v: Vec<(u32, usize)> = edges
        .iter()
        .enumerate()
        .filter_map(|(n, e)| e.as_ref().map(|e| (n, e)))
        .flat_map(|(n, e)| {
            e.replicas()
                .into_iter()
                .filter(|r| r.0 == HOT)
                .map(move |r| (r.1, n))
        })
        .collect();
    v.sort_unstable();
    v
}

/// Runs the demo; `on_sample` sees each timeline point as it is taken.
pub async fn run(
    cfg: &DhtDemoConfig,
    mut on_sample: impl FnMut(&DhtSample),
) -> Result<DhtOutcome, Error> {
    cfg.validate()?;
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let catalogue = Catalogue::new(cfg.files, 4096, 4096, cfg.seed)?;
    let origin = origin::start(any, OriginConfig::serving(catalogue)).await?;
    // Free ports for the ring (bound, read, released: the edges bind them next). Taken below
    // the ephemeral range (32768 up), where outgoing connections' own ports would otherwise
    // take one between its release and the edge's bind; from a base per process.
    let mut probes = Vec::new();
    let base = 20_000 + (std::process::id() % 400) as u16 * 30;
    for port in (base..base + 30).chain(20_000..32_000) {
        if probes.len() == cfg.edges {
            break;
        }
        if let Ok(l) = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await
        {
            probes.push(l);
        }
    }
    if probes.len() < cfg.edges {
        return Err(
            cdnlab::Error::param("edges", cfg.edges, "as many free ports in 20000-31999").into(),
        );
    }
    let addrs: Vec<SocketAddr> = probes.iter().filter_map(|l| l.local_addr().ok()).collect();
    drop(probes);
    let secret: String = format!("demo-{:016x}", cdnlab::rng::splitmix64(cfg.seed ^ 0x5ec2e7));
    let edges_json: Vec<String> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| format!(r#"{{"id": {i}, "addr": "{a}"}}"#))
        .collect();
    let ring = RingFile::parse(&format!(
        r#"{{"secret": "{secret}", "k": {}, "vnodes": 16, "edges": [{}]}}"#,
        cfg.k,
        edges_json.join(",")
    ))
    .map_err(|e| cdnlab::Error::param("ring", e, "a valid ring"))?;
    let mut edges: Vec<Option<DhtEdge>> = Vec::new();
    for id in 0..cfg.edges as u32 {
        edges.push(Some(
            dht::start(DhtConfig {
                ring: ring.clone(),
                id,
                origin: origin.server.addr,
                window: cfg.window,
                c_high: cfg.c_high,
                gamma: 0.75,
                rgr_period: cfg.window,
                timeout: Duration::from_secs(2),
                seed: cfg.seed,
                limits: Limits::default(),
                capacity: 64 << 20,
            })
            .await?,
        ));
    }
    // The load: every 10 ms, the requests due, each from a random entry edge, retried at the
    // next two entries on failure.
    let (stop, requests, lost) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let sampler = Arc::new(Sampler::new(
        Law::Zipf { alpha: cfg.alpha },
        cfg.files as usize,
    )?);
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(3))
        .build()
        .map_err(|e| Error::Client(e.to_string()))?;
    let t0 = Instant::now();
    let load = {
        let (stop, requests, lost, sampler, addrs, cfg) = (
            stop.clone(),
            requests.clone(),
            lost.clone(),
            sampler.clone(),
            addrs.clone(),
            cfg.clone(),
        );
        tokio::spawn(async move {
            let mut rng = cdnlab::rng::stream(cfg.seed, 1, 0);
            let slots = Arc::new(tokio::sync::Semaphore::new(256));
            let mut due = 0.0;
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            while !stop.load(Relaxed) {
                tick.tick().await;
                let t = t0.elapsed();
                let crowd = t >= cfg.crowd_start && t < cfg.crowd_end;
                let rate = cfg.base_rate + if crowd { cfg.crowd_rate } else { 0.0 };
                due += rate * 0.01;
                while due >= 1.0 {
                    due -= 1.0;
                    let f = if crowd && rng.random::<f64>() < cfg.crowd_rate / rate {
                        HOT
                    } else {
                        sampler.sample(&mut rng) as u64
                    };
                    let entry = rng.random_range(0..addrs.len());
                    let Ok(permit) = slots.clone().try_acquire_owned() else {
                        lost.fetch_add(1, Relaxed); // the load generator itself is saturated
                        continue;
                    };
                    let (client, addrs, requests, lost) = (
                        client.clone(),
                        addrs.clone(),
                        requests.clone(),
                        lost.clone(),
                    );
                    tokio::spawn(async move {
                        let _permit = permit;
                        requests.fetch_add(1, Relaxed);
                        for attempt in 0..3 {
                            let a = addrs[(entry + attempt) % addrs.len()];
                            if let Ok(r) =
                                client.get(format!("http://{a}/content/{f}")).send().await
                                && r.status() == reqwest::StatusCode::OK
                                && r.bytes().await.is_ok()
                            {
                                return;
                            }
                        }
                        lost.fetch_add(1, Relaxed);
                    });
                }
            }
        })
    };
    let mut timeline = Vec::new();
    let mut killed = None;
    let retired = dht::DhtCounters::default();
    let (mut last_probes, mut last_lookups) = (0u64, 0u64);
    let mut next = cfg.sample_every;
    while next <= cfg.duration {
        tokio::time::sleep_until((t0 + next).into()).await;
        if let Some(at) = cfg.kill_at
            && killed.is_none()
            && t0.elapsed() >= at
        {
            let h = hot(&edges);
            let top = h.last().map_or(1, |x| x.0);
            // A middle replica's edge, not holding the top (so the loss is a gap).
            let victim = h
                .iter()
                .find(|&&(i, n)| i > 1 && i < top && !h.iter().any(|&(j, m)| j == top && m == n))
                .copied();
            if let Some((i, n)) = victim
                && let Some(e) = edges[n].take()
            {
                // Its counts stay in the totals.
                retired.add(e.counters());
                e.server.stop().await;
                killed = Some((n, i));
            }
        }
        let h = hot(&edges);
        let (p, l) = (
            sum(&edges, &retired, |c| &c.probes),
            sum(&edges, &retired, |c| &c.lookups),
        );
        let sample = DhtSample {
            t: t0.elapsed().as_secs_f64(),
            hot_replicas: h.len(),
            hot_top: h.last().map_or(0, |x| x.0),
            probes_per_request: if l > last_lookups {
                (p - last_probes.min(p)) as f64 / (l - last_lookups) as f64
            } else {
                0.0
            },
            requests: requests.load(Relaxed),
            lost: lost.load(Relaxed),
        };
        (last_probes, last_lookups) = (p, l);
        on_sample(&sample);
        timeline.push(sample);
        next += cfg.sample_every;
    }
    stop.store(true, Relaxed);
    let _ = load.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let out = DhtOutcome {
        max_hot_replicas: timeline.iter().map(|s| s.hot_replicas).max().unwrap_or(0),
        final_hot_replicas: hot(&edges).len(),
        probes_per_request: sum(&edges, &retired, |c| &c.probes) as f64
            / sum(&edges, &retired, |c| &c.lookups).max(1) as f64,
        requests: requests.load(Relaxed),
        lost: lost.load(Relaxed),
        replications: sum(&edges, &retired, |c| &c.replications),
        dereplications: sum(&edges, &retired, |c| &c.dereplications),
        gaps_filled: sum(&edges, &retired, |c| &c.gaps_filled),
        handovers: sum(&edges, &retired, |c| &c.handovers),
        killed,
        timeline,
    };
    for e in edges.into_iter().flatten() {
        e.server.stop().await;
    }
    origin.server.stop().await;
    Ok(out)
}
