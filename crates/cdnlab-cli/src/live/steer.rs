//! `cdnlab live steer`.

use super::*;
use cdnlab_lab::{Error, Result};
use cdnlab_live::media::Asset;
use cdnlab_live::steer::{self, SteerConfig, Topology};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub(super) struct SteerArgs {
    /// The topology file (metros, links, edges with capacities, populations, secret).
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
    /// The streaming asset (a directory built by media/make-asset.sh, also given to the
    /// origin): enables `/play/{population}/master.m3u8` and `/play/{population}/manifest.mpd`,
    /// which open a session with one pathway per edge.
    #[arg(long)]
    media: Option<PathBuf>,
    /// Stop after this many seconds (default: run until SIGINT or SIGTERM).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(super) async fn run_steer(a: &SteerArgs) -> Result<()> {
    let topology = Topology::load(&a.topology).map_err(|e| Error::Failed(e.to_string()))?;
    let s = steer::start(SteerConfig {
        topology,
        listen: a.listen,
        ttl: a.ttl,
        window: Duration::from_millis(a.window_ms),
        b_max: a.b_max,
        timeout: Duration::from_secs(5),
        limits: a.limits.limits(),
        min_share: a.min_share,
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
