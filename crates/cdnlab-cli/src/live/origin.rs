//! `cdnlab live origin`.

use super::*;
use cdnlab_lab::{Error, Result};
use cdnlab_live::catalogue::Catalogue;
use cdnlab_live::media::{Asset, Files};
use cdnlab_live::origin::{self, OriginConfig};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub(super) struct OriginArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Objects in the catalogue (ids 0..objects).
    #[arg(long, default_value_t = 100_000)]
    objects: u64,
    /// Smallest object, bytes.
    #[arg(long, default_value_t = 1024)]
    min_size: u32,
    /// Largest object, bytes (sizes are uniform in between, per object).
    #[arg(long, default_value_t = 1024)]
    max_size: u32,
    /// Seed of sizes and bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Milliseconds added before every answer.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Share of content requests answered 503 instead (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    error_share: f64,
    /// Answer 503 to everything.
    #[arg(long)]
    down: bool,
    /// Serve the files of this streaming asset under /media/ (a directory built by
    /// media/make-asset.sh).
    #[arg(long)]
    media: Option<PathBuf>,
    /// Serve the files of this directory under /player/ (player pages and scripts), and
    /// collect the pages' reports at POST /player/report.
    #[arg(long)]
    player: Option<PathBuf>,
    /// With --player: bytes of player reports kept in all (later ones get 507).
    #[arg(long, default_value_t = origin::ReportLimits::default().max_bytes)]
    max_report_bytes: usize,
    /// With --player: bytes per second of reports one client address may post on average
    /// (1 MiB at once above it); more get 429. A player page posts about 400 bytes per player
    /// per second.
    #[arg(long, default_value_t = origin::ReportLimits::default().rate)]
    report_rate: f64,
    /// Seconds caches may keep content and media fresh (Cache-Control: max-age); 0 makes
    /// every edge validate each use (a 304 when unchanged).
    #[arg(long, default_value_t = origin::DEFAULT_MAX_AGE)]
    max_age: u32,
    /// Stop after this many seconds (default: run until SIGINT or SIGTERM).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(super) async fn run_origin(a: &OriginArgs) -> Result<()> {
    let catalogue = Catalogue::new(a.objects, a.min_size, a.max_size, a.seed)?;
    if !(a.report_rate.is_finite() && a.report_rate > 0.0) {
        return Err(Error::Usage(format!(
            "--report-rate {}: bytes per second > 0 are allowed",
            a.report_rate
        )));
    }
    let cfg = OriginConfig {
        catalogue,
        latency: Duration::from_millis(a.latency_ms),
        error_share: a.error_share,
        down: a.down,
        limits: a.limits.limits(),
        media: a
            .media
            .as_deref()
            .map(|d| Asset::load(d).map(Arc::new))
            .transpose()
            .map_err(Error::Failed)?,
        player: a
            .player
            .as_deref()
            .map(|d| Files::player(d).map(Arc::new))
            .transpose()
            .map_err(Error::Failed)?,
        max_age: a.max_age,
        reports: origin::ReportLimits {
            max_bytes: a.max_report_bytes,
            rate: a.report_rate,
            ..origin::ReportLimits::default()
        },
    };
    let o = origin::start(a.listen, cfg).await.map_err(live_err)?;
    eprintln!(
        "origin on http://{}/content/{{id}} ({} objects; /health, /metrics)",
        o.server.addr, a.objects
    );
    wait(a.duration).await?;
    o.server.drain(a.limits.drain()).await;
    Ok(())
}
