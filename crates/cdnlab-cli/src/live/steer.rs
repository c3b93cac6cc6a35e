//! `cdnlab live steer`.

use super::*;
use cdnlab::steer::policy::Policy;
use cdnlab_lab::{Error, Result};
use cdnlab_live::media::Asset;
use cdnlab_live::steer::{self, Deployment, SteerConfig};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub(super) struct SteerArgs {
    /// The deployment file: the secret, the network (a file any `cdnlab topo` command reads, or
    /// node-link JSON), edges with capacities and populations on its nodes (docs/live.md).
    #[arg(long)]
    topology: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Seconds a manifest stays valid (its TTL).
    #[arg(long, default_value_t = 10)]
    ttl: u32,
    /// Reporting window, milliseconds.
    #[arg(long, default_value_t = 5000)]
    window_ms: u64,
    /// Blocking in a window above which the allocation is re-solved.
    #[arg(long, default_value_t = 0.05)]
    b_max: f64,
    /// Every population's guaranteed share after any solve, as a fraction of an equal split
    /// of the capacity (at least 1 stream each), so that a flood from one population cannot
    /// take the others' share.
    #[arg(long, default_value_t = steer::DEFAULT_MIN_SHARE)]
    min_share: f64,
    /// Re-allocate by the demand estimate alone (with the --min-share floor), as the paper's
    /// rule does. By default a re-allocation keeps each population the streams it was planned
    /// to have under the topology's demands, as far as it uses them, whatever another
    /// population's flood does to the estimate.
    #[arg(long)]
    no_guarantee: bool,
    /// Hours a session token (minted by /play) may start a session at an edge.
    #[arg(long, default_value_t = steer::DEFAULT_SESSION_LIFETIME.as_secs_f64() / 3600.0)]
    session_lifetime_hours: f64,
    /// New sessions a population may open per window, as a multiple of its allocated streams
    /// (more get 429 with Retry-After).
    #[arg(long, default_value_t = steer::DEFAULT_SESSION_RATE)]
    session_rate: f64,
    /// Most sessions remembered; when full, a new session replaces one idle for three TTLs,
    /// or is refused (503).
    #[arg(long, default_value_t = steer::MAX_SESSIONS)]
    max_sessions: usize,
    /// The streaming asset (a directory built by media/make-asset.sh, also given to the
    /// origin): enables `/play/{population}/master.m3u8` and `/play/{population}/manifest.mpd`,
    /// which open a session with one pathway per edge.
    #[arg(long)]
    media: Option<PathBuf>,
    /// How sessions' pathways are ordered (docs/steering.md): tp (the Transportation
    /// Problem's shares, TP-R8), priority, nearest, gwtw (go with the winner by the
    /// throughput players report), cmcd-qoe (move sessions off pathways whose sessions starve,
    /// from the edges' CMCD) or prequal (requests in flight and a timed probe of each edge).
    /// The edges' signals are read every window.
    #[arg(long, default_value = "tp", value_parser = crate::cmd::named::<Policy>())]
    policy: Policy,
    /// Stop after this many seconds (default: run until SIGINT or SIGTERM).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(super) async fn run_steer(a: &SteerArgs) -> Result<()> {
    let topology = Deployment::load(&a.topology).map_err(|e| Error::Failed(e.to_string()))?;
    let s = steer::start(SteerConfig {
        topology,
        listen: a.listen,
        ttl: a.ttl,
        window: Duration::from_millis(a.window_ms),
        b_max: a.b_max,
        timeout: Duration::from_secs(5),
        limits: a.limits.limits(),
        min_share: a.min_share,
        guarantee: !a.no_guarantee,
        policy: a.policy,
        sessions: steer::SessionLimits {
            lifetime: Duration::try_from_secs_f64(a.session_lifetime_hours * 3600.0)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "--session-lifetime-hours {}: a number of hours > 0 is allowed",
                        a.session_lifetime_hours
                    ))
                })?,
            rate: a.session_rate,
            max: a.max_sessions,
        },
        media: a
            .media
            .as_deref()
            .map(|d| Asset::load(d).map(std::sync::Arc::new))
            .transpose()
            .map_err(Error::Failed)?,
    })
    .await
    .map_err(live_err)?;
    eprintln!(
        "steering on http://{}/steering/{{population}} ({}; /allocation, /metrics)",
        s.server.addr,
        a.topology.display()
    );
    wait(a.duration).await?;
    s.server.drain(a.limits.drain()).await;
    Ok(())
}
