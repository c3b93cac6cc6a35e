//! `cdnlab live ...`: the servers and clients of `cdnlab-live` from the command line. Servers
//! bind 127.0.0.1 by default and run until Ctrl-C or `--duration`; the demo runs an origin,
//! edges and users on loopback for a fixed time per k and writes a summary and a plot.

use crate::error::{CliError, Result};
use crate::output::{self, outln, write_atomic};
use crate::plot::{self, Chart, Series};
use cdnlab::cache::Policy;
use cdnlab::select::gwtw::{self, GwtwConfig, Probe, Retrial};
use cdnlab_live::catalogue::Catalogue;
use cdnlab_live::client::Measure;
use cdnlab_live::client::{Users, UsersConfig};
use cdnlab_live::demo::{self, DemoConfig};
use cdnlab_live::demo_dht::{self, DhtDemoConfig};
use cdnlab_live::demo_steer::{self, SteerDemoConfig};
use cdnlab_live::dht::{self, DhtConfig};
use cdnlab_live::edge::{self, EdgeConfig};
use cdnlab_live::origin::{self, OriginConfig};
use cdnlab_live::ring::RingFile;
use cdnlab_live::server::Limits;
use cdnlab_live::steer::{self, SteerConfig, Topology};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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

#[derive(Debug, Args)]
struct SteerArgs {
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
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Connection limits of a server.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Connections served at once; more get 503.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Milliseconds a client has to send a request's head.
    #[arg(long, default_value_t = 10_000)]
    header_timeout_ms: u64,
    /// Largest request head in bytes (8192 to 1048576).
    #[arg(long, default_value_t = 16384)]
    max_header_bytes: usize,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            header_timeout: Duration::from_millis(self.header_timeout_ms),
            max_header_bytes: self.max_header_bytes,
        }
    }
}

#[derive(Debug, Args)]
struct OriginArgs {
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
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Debug, Args)]
struct EdgeArgs {
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
    /// Pace every response at this many bytes per second (a stream's bit rate).
    #[arg(long)]
    stream_rate: Option<u64>,
    /// Eviction policy: lru, fifo, lfu, s3fifo or sieve (the library's registry).
    #[arg(long, default_value = "lru")]
    policy: Policy,
    /// Cache capacity in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    capacity: u64,
    /// Total sending rate in bytes per second (default: unshaped).
    #[arg(long)]
    bandwidth: Option<u64>,
    /// Milliseconds to wait for the origin's whole answer before answering 504.
    #[arg(long, default_value_t = 5000)]
    origin_timeout_ms: u64,
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq)]
enum ModelArg {
    /// Hit rate, from Cache-Status.
    Web,
    /// Delivered throughput against --rate.
    Video,
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
    #[arg(long, value_enum, default_value = "web")]
    model: ModelArg,
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
        let default = if self.model == ModelArg::Video { 1 } else { 10 };
        Duration::from_millis(self.interval_ms.unwrap_or(default))
    }

    fn gwtw(&self) -> GwtwConfig {
        GwtwConfig {
            tau: self.tau,
            probe: self.probe,
            retrial: self.retrial,
            q: self.q,
            best: 1.0,
        }
    }

    fn model(&self) -> Measure {
        match self.model {
            ModelArg::Web => Measure::Web,
            ModelArg::Video => Measure::Video {
                rate: self.rate,
                tolerance: self.tolerance,
            },
        }
    }
}

#[derive(Debug, Args)]
struct ClientArgs {
    /// Edge addresses, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    edges: Vec<SocketAddr>,
    /// Users.
    #[arg(long, default_value_t = 16)]
    users: usize,
    /// Candidate edges per user.
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Print the final per-user states as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    user: UserArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq)]
enum ScenarioArg {
    /// GWTW users choosing among caching edges: k = 2 converges, k = 1 does not.
    Gwtw,
    /// Edges as a multi-hash DHT: a flash crowd replicated then de-replicated, a killed edge
    /// repaired.
    Dht,
    /// The steering server on the reference metros: optimal allocation vs nearest server.
    Steering,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// What to show.
    #[arg(long, value_enum, default_value = "gwtw")]
    scenario: ScenarioArg,
    /// Edges.
    #[arg(long, default_value_t = 8)]
    edges: usize,
    /// Users.
    #[arg(long, default_value_t = 16)]
    users: usize,
    /// Candidate edges per user; several (comma-separated) run in turn.
    #[arg(long, value_delimiter = ',', default_value = "2,1")]
    k: Vec<usize>,
    /// Users an edge serves at the best value: catalogues its cache holds (web), or streams at
    /// --rate its bandwidth carries (video).
    #[arg(long, default_value_t = 3)]
    users_per_edge: usize,
    /// Bytes per object.
    #[arg(long, default_value_t = 1024)]
    object_size: u32,
    /// Seconds per run.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Steering demo: the reference capacities and demands are divided by this.
    #[arg(long, default_value_t = 2)]
    scale: i64,
    /// Steering demo: the steering server's reporting window in the shift runs, milliseconds.
    #[arg(long, default_value_t = 4000)]
    window_ms: u64,
    /// Kill edge --kill-edge this many seconds into each run.
    #[arg(long)]
    kill_at: Option<f64>,
    /// The edge to kill (index from 0).
    #[arg(long, default_value_t = 0)]
    kill_edge: usize,
    /// Output folder.
    #[arg(long, default_value = "out/live-demo")]
    out: PathBuf,
    #[command(flatten)]
    user: UserArgs,
}

pub fn run(a: &LiveArgs) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
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

fn live_err(e: cdnlab_live::Error) -> CliError {
    CliError::Failed(e.to_string())
}

fn seconds(what: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::Usage(format!("--{what} {s}: a number of seconds > 0 is allowed")))
}

/// Runs until Ctrl-C, or for `duration` seconds.
async fn wait(duration: Option<f64>) -> Result<()> {
    match duration {
        Some(s) => tokio::time::sleep(seconds("duration", s)?).await,
        None => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    Ok(())
}

async fn run_origin(a: &OriginArgs) -> Result<()> {
    let catalogue = Catalogue::new(a.objects, a.min_size, a.max_size, a.seed)?;
    let cfg = OriginConfig {
        catalogue,
        latency: Duration::from_millis(a.latency_ms),
        error_share: a.error_share,
        down: a.down,
        limits: a.limits.limits(),
    };
    let o = origin::start(a.listen, cfg).await.map_err(live_err)?;
    eprintln!(
        "origin on http://{}/content/{{id}} ({} objects; /health, /metrics)",
        o.server.addr, a.objects
    );
    wait(a.duration).await?;
    o.server.stop().await;
    Ok(())
}

async fn run_edge(a: &EdgeArgs) -> Result<()> {
    if let (Some(path), Some(id)) = (&a.ring, a.id) {
        let ring = RingFile::load(path).map_err(CliError::Failed)?;
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
        };
        let e = dht::start(cfg).await.map_err(live_err)?;
        eprintln!(
            "DHT edge {id} on http://{}/content/{{id}} ({}; /health, /metrics)",
            e.server.addr,
            path.display()
        );
        wait(a.duration).await?;
        e.stop().await;
        return Ok(());
    }
    let cfg = EdgeConfig {
        origin: a.origin,
        policy: a.policy,
        capacity: a.capacity,
        bandwidth: a.bandwidth,
        origin_timeout: Duration::from_millis(a.origin_timeout_ms),
        limits: a.limits.limits(),
        admission: a
            .admission
            .as_ref()
            .map(|p| Topology::load(p).map(|t| t.secret))
            .transpose()
            .map_err(CliError::Failed)?,
        stream_rate: a.stream_rate,
    };
    let e = edge::start(a.listen, cfg).await.map_err(live_err)?;
    eprintln!(
        "edge on http://{}/content/{{id}} in front of {} ({:?}, {} bytes; /health, /metrics)",
        e.server.addr, a.origin, a.policy, a.capacity
    );
    wait(a.duration).await?;
    e.server.stop().await;
    Ok(())
}

/// The DHT demo: the live crate's standard experiment (`DhtDemoConfig::standard`).
async fn run_dht_demo(a: &DemoArgs) -> Result<()> {
    let duration = seconds("duration", a.duration)?;
    let cfg = DhtDemoConfig::standard(duration, a.edges, a.user.seed);
    cfg.validate()?;
    output::ensure_dir(&a.out)?;
    let bar = ProgressBar::new(duration.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("dht [{elapsed_precise}] {wide_bar} {msg}")
            .expect("valid template"),
    );
    let out = demo_dht::run(&cfg, |s| {
        bar.set_position((s.t * 1000.0) as u64);
        bar.set_message(format!(
            "file 0: {} replicas (top {}), {:.2} probes/request",
            s.hot_replicas, s.hot_top, s.probes_per_request
        ));
    })
    .await
    .map_err(live_err)?;
    bar.finish_and_clear();
    outln!(
        "file 0: up to {} replicas in the crowd, {} at the end; {} replications, {} de-replications",
        out.max_hot_replicas,
        out.final_hot_replicas,
        out.replications,
        out.dereplications
    );
    outln!(
        "{} requests, {:.2} probes per request, {} lost (three entries failed); edge killed: {}; gaps refilled {}, hand-overs {}",
        out.requests,
        out.probes_per_request,
        out.lost,
        out.killed
            .map_or("none (no middle replica)".into(), |(n, i)| format!(
                "{n} (held replica {i})"
            )),
        out.gaps_filled,
        out.handovers
    );
    let mut csv = String::from("t,hot_replicas,hot_top,probes_per_request,requests,lost\n");
    for s in &out.timeline {
        csv.push_str(&format!(
            "{:.3},{},{},{:.4},{},{}\n",
            s.t, s.hot_replicas, s.hot_top, s.probes_per_request, s.requests, s.lost
        ));
    }
    write_atomic(&a.out.join("dht_timeline.csv"), csv.as_bytes())?;
    let text = serde_json::to_string_pretty(&out).map_err(|e| CliError::Failed(e.to_string()))?;
    write_atomic(&a.out.join("dht_summary.json"), text.as_bytes())?;
    let line = |label: &str, color, dash, f: &dyn Fn(&demo_dht::DhtSample) -> f64| Series {
        label: label.into(),
        points: out.timeline.iter().map(|s| (s.t, f(s), f64::NAN)).collect(),
        color,
        dash,
    };
    let replicas = Chart {
        title: format!(
            "Flash crowd on file 0 ({} edges; crowd from {:.0} s to {:.0} s, an edge killed at {:.0} s)",
            a.edges,
            cfg.crowd_start.as_secs_f64(),
            cfg.crowd_end.as_secs_f64(),
            cfg.kill_at.unwrap_or_default().as_secs_f64()
        ),
        x_label: "seconds".into(),
        y_label: "replicas of file 0".into(),
        series: vec![
            line("replicas held", 0, 0, &|s| s.hot_replicas as f64),
            line("highest index", 1, 1, &|s| f64::from(s.hot_top)),
        ],
        ..Chart::default()
    };
    write_atomic(
        &a.out.join("dht_replicas.svg"),
        plot::svg(&replicas).as_bytes(),
    )?;
    let probes = Chart {
        title: "Probes per request (random binary search, replication and gap removal)".into(),
        x_label: "seconds".into(),
        y_label: "probes per request".into(),
        series: vec![line("probes per request", 0, 0, &|s| s.probes_per_request)],
        ..Chart::default()
    };
    write_atomic(&a.out.join("dht_probes.svg"), plot::svg(&probes).as_bytes())?;
    outln!(
        "wrote {} (dht_summary.json, dht_timeline.csv, dht_replicas.svg, dht_probes.svg)",
        a.out.display()
    );
    Ok(())
}

/// The steering demo: each of its four runs lasts --duration seconds, at rho = 0.9 with 2 s
/// streams, on the reference instance divided by --scale.
async fn run_steering_demo(a: &DemoArgs) -> Result<()> {
    let cfg = SteerDemoConfig {
        rho: 0.9,
        holding: Duration::from_secs(2),
        phase: seconds("duration", a.duration)?,
        scale: a.scale,
        window: Duration::from_millis(a.window_ms),
        seed: a.user.seed,
    };
    output::ensure_dir(&a.out)?;
    eprintln!(
        "steering demo: optimal allocation, nearest server, then a demand shift with and without re-allocation, {:.0} s each",
        a.duration
    );
    let out = demo_steer::run(&cfg, |r| {
        eprintln!(
            "  {}: blocking {:.3} ({} of {} arrivals)",
            r.policy, r.blocking, r.blocked, r.arrivals
        );
    })
    .await
    .map_err(live_err)?;
    for r in &out.results {
        outln!(
            "{}: blocking {:.3} ({} of {} arrivals); final third {:.3}; re-allocations {}{}",
            r.policy,
            r.blocking,
            r.blocked,
            r.arrivals,
            r.final_third,
            r.resolves,
            if r.resolves > 0 {
                format!(" (last solve {:.0} µs)", r.solve_seconds * 1e6)
            } else {
                String::new()
            }
        );
    }
    let text = serde_json::to_string_pretty(&out).map_err(|e| CliError::Failed(e.to_string()))?;
    write_atomic(&a.out.join("steering_summary.json"), text.as_bytes())?;
    let chart = Chart {
        title: format!(
            "Blocking per population: optimal allocation vs nearest server (rho 0.9, R15 / {})",
            a.scale
        ),
        x_label: format!("population ({})", out.populations.join(", ")),
        y_label: "blocked streams".into(),
        series: out
            .results
            .iter()
            .take(2)
            .enumerate()
            .map(|(c, r)| Series {
                label: format!("{} ({:.3} overall)", r.policy, r.blocking),
                points: r
                    .per_population
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| ((i + 1) as f64, b, f64::NAN))
                    .collect(),
                color: c,
                dash: 0,
            })
            .collect(),
        ..Chart::default()
    };
    write_atomic(
        &a.out.join("steering_blocking.svg"),
        plot::svg(&chart).as_bytes(),
    )?;
    let shift = Chart {
        title: format!(
            "Blocking per second, demand shift at {:.0} s (legend: blocking in the final third)",
            a.duration / 3.0
        ),
        x_label: "seconds".into(),
        y_label: "blocked streams".into(),
        series: out
            .results
            .iter()
            .skip(2)
            .enumerate()
            .map(|(c, r)| Series {
                label: format!(
                    "{} {:.3}",
                    r.policy.trim_start_matches("shift, "),
                    r.final_third
                ),
                points: r.timeline.iter().map(|&(t, b)| (t, b, f64::NAN)).collect(),
                color: c,
                dash: 0,
            })
            .collect(),
        ..Chart::default()
    };
    write_atomic(
        &a.out.join("steering_shift.svg"),
        plot::svg(&shift).as_bytes(),
    )?;
    outln!(
        "wrote {} (steering_summary.json, steering_blocking.svg, steering_shift.svg)",
        a.out.display()
    );
    Ok(())
}

async fn run_steer(a: &SteerArgs) -> Result<()> {
    let topology = Topology::load(&a.topology).map_err(CliError::Failed)?;
    let s = steer::start(SteerConfig {
        topology,
        listen: a.listen,
        ttl: a.ttl,
        window: Duration::from_millis(a.window_ms),
        b_max: a.b_max,
        timeout: Duration::from_secs(5),
        limits: a.limits.limits(),
    })
    .await
    .map_err(live_err)?;
    eprintln!(
        "steering on http://{}/steering/{{population}} ({}; /allocation, /metrics)",
        s.server.addr,
        a.topology.display()
    );
    wait(a.duration).await?;
    s.stop().await;
    Ok(())
}

async fn run_client(a: &ClientArgs) -> Result<()> {
    let duration = seconds("duration", a.duration)?;
    let u = &a.user;
    let users = Users::start(UsersConfig {
        edges: a.edges.clone(),
        users: a.users,
        k: a.k,
        gwtw: u.gwtw(),
        objects_per_user: u.objects_per_user,
        alpha: u.alpha,
        measure: u.model(),
        interval: u.interval(),
        timeout: Duration::from_secs(5),
        seed: u.seed,
    })
    .map_err(live_err)?;
    let t0 = tokio::time::Instant::now();
    let mut next = Duration::from_secs(1);
    while next <= duration {
        tokio::time::sleep_until(t0 + next).await;
        let s = users.snapshot();
        let n = s.len() as f64;
        outln!(
            "t {:>5.1} s  at best {:.3}  settled {:.3}  requests {}  failures {}",
            next.as_secs_f64(),
            s.iter().filter(|u| u.at_best).count() as f64 / n,
            s.iter().filter(|u| u.settled.is_some()).count() as f64 / n,
            s.iter().map(|u| u.requests).sum::<u64>(),
            s.iter().map(|u| u.failures).sum::<u64>()
        );
        next += Duration::from_secs(1);
    }
    let last = users.snapshot();
    users.stop().await;
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&last).map_err(|e| CliError::Failed(e.to_string()))?
        );
    }
    Ok(())
}

async fn run_demo(a: &DemoArgs) -> Result<()> {
    match a.scenario {
        ScenarioArg::Dht => return run_dht_demo(a).await,
        ScenarioArg::Steering => return run_steering_demo(a).await,
        ScenarioArg::Gwtw => {}
    }
    let duration = seconds("duration", a.duration)?;
    if a.k.is_empty() {
        return Err(CliError::Usage("--k: at least one k is needed".into()));
    }
    let u = &a.user;
    let model = u.model();
    let kill = a
        .kill_at
        .map(|s| seconds("kill-at", s).map(|d| (d, a.kill_edge)))
        .transpose()?;
    output::ensure_dir(&a.out)?;
    let mut runs = Vec::new();
    for &k in &a.k {
        let cfg = DemoConfig {
            edges: a.edges,
            users: a.users,
            k,
            users_per_edge: a.users_per_edge,
            objects_per_user: u.objects_per_user,
            object_size: a.object_size,
            alpha: u.alpha,
            gwtw: u.gwtw(),
            model,
            policy: Policy::Lru,
            interval: u.interval(),
            duration,
            sample_every: Duration::from_millis(250),
            seed: u.seed,
            kill,
        };
        cfg.validate()?;
        let bar = ProgressBar::new(duration.as_millis() as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} {msg}")
                .expect("valid template"),
        );
        bar.set_prefix(format!("k = {k}"));
        let out = demo::run(&cfg, |s| {
            bar.set_position((s.t * 1000.0) as u64);
            bar.set_message(format!(
                "at best {:.2}, settled {:.2}",
                s.at_best, s.settled
            ));
        })
        .await
        .map_err(live_err)?;
        bar.finish_and_clear();
        let last = out.timeline.last().map_or(0.0, |s| s.at_best);
        outln!(
            "k = {k}: {} of users at the best value at the end; {}; an optimum {}",
            format!("{:.0}%", last * 100.0),
            out.converged_at
                .map_or("no final convergence".into(), |t| format!(
                    "all at the best from {t:.1} s on"
                )),
            if out.feasible {
                "exists"
            } else {
                "does not exist (some edge is overloaded)"
            }
        );
        runs.push((k, out));
    }
    // Timeline CSV, summary JSON, plot.
    let mut csv = String::from("k,t,at_best,settled,requests,failures\n");
    for (k, out) in &runs {
        for s in &out.timeline {
            csv.push_str(&format!(
                "{k},{:.3},{},{},{},{}\n",
                s.t, s.at_best, s.settled, s.requests, s.failures
            ));
        }
    }
    write_atomic(&a.out.join("timeline.csv"), csv.as_bytes())?;
    let summary: Vec<serde_json::Value> = runs
        .iter()
        .map(|(k, out)| {
            serde_json::json!({
                "k": k,
                "feasible": out.feasible,
                "converged_at": out.converged_at,
                "final_at_best": out.timeline.last().map(|s| s.at_best),
                "edges": out.edges,
                "users": out.users,
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&serde_json::json!({
        "edges": a.edges, "users": a.users, "users_per_edge": a.users_per_edge,
        "objects_per_user": u.objects_per_user, "object_size": a.object_size,
        "tau": u.tau, "q": u.q, "alpha": u.alpha, "seed": u.seed,
        "model": format!("{:?}", u.model).to_lowercase(), "duration": a.duration, "runs": summary,
    }))
    .map_err(|e| CliError::Failed(e.to_string()))?;
    write_atomic(&a.out.join("summary.json"), text.as_bytes())?;
    let chart = Chart {
        title: format!(
            "Users at the best value over time ({} edges, {} users, {} per edge)",
            a.edges, a.users, a.users_per_edge
        ),
        x_label: "seconds".into(),
        y_label: "share of users at the best value".into(),
        series: runs
            .iter()
            .enumerate()
            .map(|(i, (k, out))| Series {
                label: format!("k = {k}"),
                points: out
                    .timeline
                    .iter()
                    .map(|s| (s.t, s.at_best, f64::NAN))
                    .collect(),
                color: i,
                dash: 0,
            })
            .collect(),
        ..Chart::default()
    };
    write_atomic(&a.out.join("satisfied.svg"), plot::svg(&chart).as_bytes())?;
    outln!(
        "wrote {}, {} and {}",
        a.out.join("summary.json").display(),
        a.out.join("timeline.csv").display(),
        a.out.join("satisfied.svg").display()
    );
    Ok(())
}
