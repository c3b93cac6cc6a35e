//! `cdnlab live ...`: the servers and clients of `cdnlab-live` from the command line. Servers
//! bind 127.0.0.1 by default and run until Ctrl-C or `--duration`; the demo runs an origin,
//! edges and users on loopback for a fixed time per k and writes a summary and a plot.

use cdnlab::select::Service;
use cdnlab::select::gwtw::{self, GwtwConfig, Pick, Probe, Retrial};
use cdnlab_lab::{Error, Result};
use cdnlab_live::client::Measure;
use cdnlab_live::serve::Limits;
use clap::{Args, Subcommand};
use std::time::Duration;

mod client;
mod demo;
mod edge;
mod origin;
mod steer;
pub mod testbed;
mod testbed_steering;

use client::{ClientArgs, run_client};
use demo::{DemoArgs, run_demo};
use edge::{EdgeArgs, run_edge};
use origin::{OriginArgs, run_origin};
use steer::{SteerArgs, run_steer};

#[derive(Debug, Args)]
pub struct LiveArgs {
    #[command(subcommand)]
    command: LiveCommand,
}

#[derive(Debug, Subcommand)]
enum LiveCommand {
    /// Serve a synthetic catalogue at /content/{id}, with optional latency and failures.
    Origin(OriginArgs),
    /// A caching reverse proxy in front of an origin (Cache-Status, /metrics, /health).
    Edge(EdgeArgs),
    /// GWTW users against candidate edges; prints the share of users at the best value.
    Client(ClientArgs),
    /// An origin, N edges and M users on loopback, for each k in turn; summary, CSV and SVG.
    Demo(DemoArgs),
    /// The steering server: optimal allocation over a metro topology, admission thresholds on
    /// the edges, content-steering manifests at /steering/{population}.
    Steer(SteerArgs),
}

/// Connection limits of a server.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Connections served at once; when all are taken, a new connection sheds another (idle
    /// keep-alive, then heads slower than --head-grace-ms, then readers below --min-rate, then
    /// one of the address holding the most), and one that still finds no slot gets 503.
    #[arg(long, default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Connections served at once from one client address; more get 503.
    #[arg(long, default_value_t = Limits::default().max_per_address)]
    max_per_address: usize,
    /// Milliseconds a client has to send a request's head.
    #[arg(long, default_value_t = Limits::default().header_timeout.as_millis() as u64)]
    header_timeout_ms: u64,
    /// Milliseconds a response may wait for the client to take more bytes before the
    /// connection is closed (nginx's send_timeout).
    #[arg(long, default_value_t = Limits::default().send_timeout.as_millis() as u64)]
    send_timeout_ms: u64,
    /// When slots run short: milliseconds a request head may take before its connection may be
    /// shed for a newcomer (a head takes one round trip; 2 s covers a retransmission).
    #[arg(long, default_value_t = Limits::default().head_grace.as_millis() as u64)]
    head_grace_ms: u64,
    /// When slots run short: bytes per second below which a reader the server waits on may be
    /// shed for a newcomer (16 KiB/s is below the lowest rendition of common video ladders).
    #[arg(long, default_value_t = Limits::default().min_rate)]
    min_rate: u64,
    /// Milliseconds over which --min-rate is averaged (at least 1000).
    #[arg(long, default_value_t = Limits::default().rate_window.as_millis() as u64)]
    rate_window_ms: u64,
    /// Largest request head in bytes (8192 to 1048576).
    #[arg(long, default_value_t = Limits::default().max_header_bytes)]
    max_header_bytes: usize,
    /// Write an access log: one JSON line per request on standard output (time, client,
    /// method, path, status, bytes, ms).
    #[arg(long)]
    access_log: bool,
    /// On SIGTERM or SIGINT: milliseconds to let in-flight responses finish before exiting.
    #[arg(long, default_value_t = 10_000)]
    drain_ms: u64,
}

impl LimitArgs {
    fn drain(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }

    fn limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            max_per_address: self.max_per_address,
            header_timeout: Duration::from_millis(self.header_timeout_ms),
            send_timeout: Duration::from_millis(self.send_timeout_ms),
            max_header_bytes: self.max_header_bytes,
            head_grace: Duration::from_millis(self.head_grace_ms),
            min_rate: self.min_rate,
            rate_window: Duration::from_millis(self.rate_window_ms),
            access_log: self.access_log,
        }
    }
}

/// What users do (shared by `client` and `demo`).
#[derive(Debug, Args)]
struct UserArgs {
    /// Window length, outcomes per candidate (the simulator's default).
    #[arg(long, default_value_t = gwtw::DEFAULT_TAU)]
    tau: usize,
    /// Re-trial probability per shortfall observation.
    #[arg(long, default_value_t = gwtw::DEFAULT_Q)]
    q: f64,
    /// Where trial requests go: all (every candidate) or round-robin.
    #[arg(long, default_value = "all")]
    probe: Probe,
    /// When a settled user measures again: on-shortfall (the paper's rule), never, or move
    /// (E9, cdnlab's variant: to another candidate without a trial).
    #[arg(long, default_value = "on-shortfall")]
    retrial: Retrial,
    /// Objects in each user's own catalogue, N.
    #[arg(long, default_value_t = 10)]
    objects_per_user: u64,
    /// Zipf exponent of each user's requests.
    #[arg(long, default_value_t = 0.8)]
    alpha: f64,
    /// What users measure.
    #[arg(long, value_parser = crate::cmd::named::<Service>(), default_value = "web")]
    model: Service,
    /// Video: bytes per second each user wants.
    #[arg(long, default_value_t = 256_000.0)]
    rate: f64,
    /// Video: a throughput within this share of --rate counts as the full rate.
    #[arg(long, default_value_t = 0.1)]
    tolerance: f64,
    /// Milliseconds between a user's requests (default: 10 for web; 1 for video, whose users
    /// stream back to back, so that each gets its share of the edge's bandwidth).
    #[arg(long)]
    interval_ms: Option<u64>,
    /// Seed of candidates and requests.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl UserArgs {
    fn interval(&self) -> Duration {
        let default = if self.model == Service::Video { 1 } else { 10 };
        Duration::from_millis(self.interval_ms.unwrap_or(default))
    }

    fn gwtw(&self) -> GwtwConfig {
        GwtwConfig {
            tau: self.tau,
            probe: self.probe,
            retrial: self.retrial,
            pick: Pick::Winner,
            q: self.q,
            best: 1.0,
        }
    }

    fn model(&self) -> Measure {
        match self.model {
            Service::Web => Measure::Web,
            Service::Video => Measure::Video {
                rate: self.rate,
                tolerance: self.tolerance,
            },
        }
    }
}

pub fn run(a: &LiveArgs) -> Result<()> {
    malloc_settings();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Failed(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(async {
        match &a.command {
            LiveCommand::Origin(o) => run_origin(o).await,
            LiveCommand::Edge(e) => run_edge(e).await,
            LiveCommand::Client(c) => run_client(c).await,
            LiveCommand::Demo(d) => run_demo(d).await,
            LiveCommand::Steer(st) => run_steer(st).await,
        }
    })
}

/// glibc's malloc settings the live servers need to stay within their capacity, read only at
/// start, so the command starts itself again with them set (a value the user chose is kept):
/// - `MALLOC_ARENA_MAX=1`: with a heap ("arena") per thread, a body freed on one worker thread
///   is not reused by another's next allocation, and an edge held up to 1.6 times its cache
///   with 64 KiB objects; with one, 1.0 times.
/// - `MALLOC_MMAP_THRESHOLD_=1048576`: bodies of 1 MiB or more in their own mappings, returned
///   to the system when freed. glibc's moving threshold put them in the heap after the first
///   free, where freed ones stayed resident: after 100 never-reading clients of 8 MiB objects
///   an edge with a 64 MiB cache (full) held 82-96 MiB, and 68-69 MiB with the fixed threshold
///   and `edge::read_body` (`bench/abuse.sh`).
fn malloc_settings() {
    #[cfg(all(unix, target_env = "gnu"))]
    {
        let wanted = [
            ("MALLOC_ARENA_MAX", "1"),
            ("MALLOC_MMAP_THRESHOLD_", "1048576"),
        ];
        let missing: Vec<_> = wanted
            .into_iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .collect();
        if missing.is_empty() {
            return;
        }
        if let Ok(exe) = std::env::current_exe() {
            use std::os::unix::process::CommandExt;
            // Returns only if the restart failed: carry on with glibc's defaults.
            let e = std::process::Command::new(exe)
                .args(std::env::args_os().skip(1))
                .envs(missing)
                .exec();
            eprintln!(
                "note: could not restart with cdnlab's malloc settings ({e}); memory may exceed the capacity"
            );
        }
    }
}

pub(crate) fn live_err(e: cdnlab_live::Error) -> Error {
    Error::Failed(e.to_string())
}

fn seconds(what: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Error::Usage(format!("--{what} {s}: a number of seconds > 0 is allowed")))
}

/// Runs until Ctrl-C, or for `duration` seconds.
/// Waits for `duration`, or for SIGINT or SIGTERM (how a terminal, systemd and Kubernetes
/// stop a service); the caller then drains in-flight responses and exits 0.
async fn wait(duration: Option<f64>) -> Result<()> {
    let signalled = async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    };
    match duration {
        Some(s) => {
            let d = seconds("duration", s)?;
            tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = signalled => {}
            }
        }
        None => signalled.await,
    }
    Ok(())
}
