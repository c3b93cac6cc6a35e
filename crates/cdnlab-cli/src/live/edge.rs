//! `cdnlab live edge`.

use super::*;
use cdnlab::Named;
use cdnlab::cache::Policy;
use cdnlab_lab::{Error, Result};
use cdnlab_live::dht::ring::RingFile;
use cdnlab_live::dht::{self, DhtConfig};
use cdnlab_live::edge::{self, EdgeConfig};
use cdnlab_live::steer::Deployment;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub(super) struct EdgeArgs {
    /// The origin's address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    origin: SocketAddr,
    /// Address to listen on (with --ring: the ring file's address of --id).
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
    /// Join a DHT of edges (multi-hash replication) described by this ring file.
    #[arg(long, requires = "id")]
    ring: Option<PathBuf>,
    /// This edge's id in the ring file.
    #[arg(long)]
    id: Option<u32>,
    /// DHT: a replica's counting window, milliseconds.
    #[arg(long, default_value_t = 1000)]
    window_ms: u64,
    /// DHT: requests per second a replica takes before it replicates.
    #[arg(long, default_value_t = 100.0)]
    c_high: f64,
    /// DHT: de-replication hysteresis, in (0, 1).
    #[arg(long, default_value_t = 0.75)]
    gamma: f64,
    /// DHT: period of random gap removal, milliseconds.
    #[arg(long, default_value_t = 1000)]
    rgr_period_ms: u64,
    /// Admit per population, with thresholds from a steering server: the topology file whose
    /// secret the steering server installs them with.
    #[arg(long, conflicts_with = "ring")]
    admission: Option<PathBuf>,
    /// With --admission: the steering server's address, asked for this edge's thresholds when
    /// it starts (the edge is the topology's server whose address is --listen). Without it,
    /// the steering server installs them again at its next window.
    #[arg(long, requires = "admission")]
    steering: Option<SocketAddr>,
    /// Pace every response at this many bytes per second (a stream's bit rate).
    #[arg(long)]
    stream_rate: Option<u64>,
    /// Seconds an admitted streaming session (`/p/{population}/{session}/{file}`) keeps its
    /// slot after its latest request.
    #[arg(long, default_value_t = 10.0)]
    session_lease: f64,
    /// Requests of one streaming session under way at once (more get 429): a session token
    /// shared by many clients does not become many streams. The default is what a browser
    /// opens to one host.
    #[arg(long, default_value_t = cdnlab_live::edge::DEFAULT_SESSION_REQUESTS)]
    session_requests: u32,
    /// Seconds over which the sessions' CMCD reports (CTA-5004: buffer, throughput, bitrate,
    /// starvation) are aggregated for `/internal/qoe` and `/metrics`.
    #[arg(long, default_value_t = cdnlab_live::edge::DEFAULT_QOE_WINDOW.as_secs_f64())]
    qoe_window: f64,
    /// Eviction policy, from the library's registry; every one but belady, which needs to know
    /// the future.
    #[arg(long, default_value = Policy::Lru.name(), value_parser = crate::cmd::named::<Policy>())]
    policy: Policy,
    /// Cache capacity in bytes (with --ring: of home copies, least recently used evicted, and
    /// as much again for replicas above index 1).
    #[arg(long, default_value_t = 64 << 20)]
    capacity: u64,
    /// Largest object stored, bytes; larger ones are passed through, uncached (default: an
    /// eighth of --capacity, so that one object cannot flush most of the cache).
    #[arg(long)]
    max_object_size: Option<u64>,
    /// Bytes of all misses being filled at once (default: a quarter of --capacity); a miss
    /// that finds no room is passed through. With the cache, this bounds the bodies held.
    #[arg(long)]
    fill_budget: Option<u64>,
    /// Pass-through streams at once (each holds an origin connection); more get 503.
    #[arg(long, default_value_t = cdnlab_live::edge::fill::PASS_THROUGH)]
    max_pass_through: usize,
    /// Total sending rate in bytes per second (default: unshaped).
    #[arg(long)]
    bandwidth: Option<u64>,
    /// Milliseconds to wait for the origin's whole answer before answering 504.
    #[arg(long, default_value_t = 5000)]
    origin_timeout_ms: u64,
    /// Stop after this many seconds (default: run until SIGINT or SIGTERM).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(super) async fn run_edge(a: &EdgeArgs) -> Result<()> {
    if let (Some(path), Some(id)) = (&a.ring, a.id) {
        let ring = RingFile::load(path).map_err(Error::Failed)?;
        let cfg = DhtConfig {
            ring,
            id,
            origin: a.origin,
            window: Duration::from_millis(a.window_ms),
            c_high: a.c_high,
            gamma: a.gamma,
            rgr_period: Duration::from_millis(a.rgr_period_ms),
            timeout: Duration::from_millis(a.origin_timeout_ms),
            seed: u64::from(id),
            limits: a.limits.limits(),
            capacity: a.capacity,
        };
        let e = dht::start(cfg).await.map_err(live_err)?;
        eprintln!(
            "DHT edge {id} on http://{}/content/{{id}} ({}; /health, /metrics)",
            e.server.addr,
            path.display()
        );
        wait(a.duration).await?;
        e.server.drain(a.limits.drain()).await;
        return Ok(());
    }
    let topology = a
        .admission
        .as_ref()
        .map(|p| Deployment::load(p))
        .transpose()
        .map_err(|e| Error::Failed(e.to_string()))?;
    let steering = match (&topology, a.steering) {
        (Some(t), Some(addr)) => {
            let me = t.servers.iter().find(|s| s.addr == a.listen).ok_or_else(|| {
                Error::Usage(format!(
                    "--steering: no server of the topology listens on {} (--listen); its servers: {}",
                    a.listen,
                    t.servers
                        .iter()
                        .map(|s| format!("{} at {}", s.name, s.addr))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            Some(edge::SteeringLink {
                addr,
                edge: me.name.clone(),
            })
        }
        _ => None,
    };
    let cfg = EdgeConfig {
        origin: a.origin,
        policy: a.policy,
        capacity: a.capacity,
        bandwidth: a.bandwidth,
        origin_timeout: Duration::from_millis(a.origin_timeout_ms),
        limits: a.limits.limits(),
        admission: topology.map(|t| t.secret),
        stream_rate: a.stream_rate,
        session_lease: super::seconds("session-lease", a.session_lease)?,
        session_requests: a.session_requests,
        steering,
        max_object_size: a.max_object_size,
        fill_budget: a.fill_budget,
        pass_through: a.max_pass_through,
        qoe_window: super::seconds("qoe-window", a.qoe_window)?,
    };
    let e = edge::start(a.listen, cfg).await.map_err(live_err)?;
    eprintln!(
        "edge on http://{}/content/{{id}} in front of {} ({:?}, {} bytes; /health, /metrics)",
        e.server.addr, a.origin, a.policy, a.capacity
    );
    wait(a.duration).await?;
    e.server.drain(a.limits.drain()).await;
    Ok(())
}
