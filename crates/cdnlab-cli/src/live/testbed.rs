//! `cdnlab testbed ...`: the emulated multi-host testbed (docs/testbed.md). `run` builds a
//! scenario's network in namespaces, runs its experiment, writes CSV, a figure and a summary,
//! and removes everything; `up` builds one and waits; `down` removes what dead runs left. The
//! hidden `wire` and `probe` commands are what the testbed itself starts inside namespaces.

use super::live_err;
use cdnlab_lab::{Error, Result};
use cdnlab_live::testbed::{
    self, Spec, Testbed, admission, agree, dht, fidelity, gwtw, net, paths, segments, steering,
};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct TestbedArgs {
    #[command(subcommand)]
    command: TestbedCommand,
}

#[derive(Debug, Subcommand)]
enum TestbedCommand {
    /// Build a scenario's network, run its experiment, write the results, remove everything.
    ///
    /// Needs root (network namespaces). Examples:
    ///   sudo cdnlab testbed run scenarios/testbed-ci.toml --out out/fidelity
    ///   sudo cdnlab testbed run scenarios/testbed-*.toml    (into out/testbed/<name>/)
    Run(RunArgs),
    /// Build a scenario's network and keep it until Ctrl-C (then remove it), to look around:
    /// `ip netns exec NAMESPACE bash` opens a shell on a node.
    ///
    /// Example: sudo cdnlab testbed up scenarios/testbed-fidelity.toml
    Up(UpArgs),
    /// Remove what testbed runs left behind: namespaces, links, qdiscs, guard routes of runs
    /// whose process is gone (or of every run, with --all).
    Down(DownArgs),
    /// Check a scenario file without building anything: nodes, links, addresses, routes.
    Check(CheckArgs),
    /// The emulation claims of finished runs: a report of their agreement with the simulator,
    /// and with --record, the committed record that `cdnlab reproduce`'s report shows.
    ///
    /// Example (after `sudo cdnlab testbed run scenarios/testbed-gwtw.toml --out out/gwtw`):
    ///   cdnlab testbed report out/gwtw --record scenarios/verdicts-emulation.csv
    Report(ReportArgs),
    #[command(hide = true)]
    Wire(WireArgs),
    #[command(hide = true, subcommand)]
    Probe(ProbeCommand),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The scenarios: testbed descriptions (TOML; docs/testbed.md), run one after another.
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Folder for the results (created; must be empty or absent unless --replace). With
    /// several scenarios, each writes into a subfolder named after its file. Default:
    /// out/testbed/<scenario file's name>.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write into a folder that already has results, replacing them.
    #[arg(long)]
    replace: bool,
}

#[derive(Debug, Args)]
struct UpArgs {
    scenario: PathBuf,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Result folders of `cdnlab testbed run` with an experiment that is judged against the
    /// simulator.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Write the report (Markdown) here instead of printing it.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Put the runs' verdicts into this record (replacing the rows of the same scenarios).
    #[arg(long)]
    record: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    scenario: PathBuf,
}

#[derive(Debug, Args)]
struct DownArgs {
    /// Remove only this run (its id, as `up` and `run` print it).
    #[arg(long)]
    run: Option<String>,
    /// Remove every run, even one whose process is still alive.
    #[arg(long, conflicts_with = "run")]
    all: bool,
    /// The watchdog: wait for standard input to close, then remove --run.
    #[arg(long, hide = true, requires = "run")]
    after_parent: bool,
}

#[derive(Debug, Args)]
struct WireArgs {
    #[arg(long)]
    a: String,
    #[arg(long)]
    b: String,
    #[arg(long)]
    delay_ms: f64,
    #[arg(long)]
    jitter_ms: f64,
    #[arg(long)]
    loss: f64,
    #[arg(long, default_value_t = 0)]
    spin_us: u64,
    #[arg(long)]
    seed_ab: u64,
    #[arg(long)]
    seed_ba: u64,
}

#[derive(Debug, Subcommand)]
enum ProbeCommand {
    UdpSend {
        #[arg(long)]
        to: std::net::SocketAddr,
        #[arg(long)]
        count: u64,
        #[arg(long)]
        rate: f64,
        #[arg(long)]
        bytes: usize,
        /// Poisson gaps drawn from this seed instead of even ones.
        #[arg(long)]
        poisson: Option<u64>,
    },
    UdpRecv {
        #[arg(long)]
        listen: std::net::SocketAddr,
        #[arg(long)]
        count: u64,
        #[arg(long)]
        limit_s: f64,
    },
    TcpSend {
        #[arg(long)]
        to: std::net::SocketAddr,
        #[arg(long)]
        seconds: f64,
    },
    /// The DHT experiment's load generator (docs/testbed.md#dht), in the clients' namespace.
    DhtLoad {
        #[arg(long)]
        scenario: PathBuf,
        #[arg(long)]
        ring: PathBuf,
    },
    /// The tp-admission experiment's streams of one policy (docs/testbed.md#tp-admission).
    TpAdmission {
        #[arg(long)]
        scenario: PathBuf,
        #[arg(long)]
        topology: PathBuf,
        #[arg(long)]
        policy: String,
        /// Only this population's streams (its index in the reference order), for a
        /// population at its own metro's clients node.
        #[arg(long)]
        population: Option<usize>,
    },
    /// The tp-segments experiment's player (docs/testbed.md#tp-segments).
    Segments {
        /// The sources, segment k from the (k mod n)-th.
        #[arg(long, value_delimiter = ',', required = true)]
        sources: Vec<std::net::SocketAddr>,
        #[arg(long)]
        every_s: f64,
        #[arg(long)]
        count: u64,
        #[arg(long)]
        limit_s: f64,
    },
    /// The steering experiment's session emulator (docs/steering.md#the-testbed-experiment),
    /// in the clients' namespace: player sessions of the library's model over real HTTP.
    Steering {
        /// The steering server's /play/{population}/master.m3u8.
        #[arg(long)]
        play: String,
        #[arg(long)]
        sessions: usize,
        /// ABR rules, session k follows the (k mod n)-th: hlsjs, dashjs, shaka.
        #[arg(long, value_delimiter = ',', required = true, value_parser = crate::cmd::named::<cdnlab::steer::player::Abr>())]
        abr: Vec<cdnlab::steer::player::Abr>,
        #[arg(long)]
        segments: u32,
        #[arg(long)]
        buffer_s: f64,
        #[arg(long)]
        spread_s: f64,
        #[arg(long)]
        seconds: f64,
        /// The origin's /player/reports, fetched at the end.
        #[arg(long)]
        reports: Option<String>,
        /// A wrong model: always the top rendition.
        #[arg(long)]
        greedy: bool,
    },
    TcpRecv {
        #[arg(long)]
        listen: std::net::SocketAddr,
        #[arg(long)]
        warmup_s: f64,
        #[arg(long)]
        limit_s: f64,
    },
}

pub fn run(a: &TestbedArgs) -> Result<()> {
    match &a.command {
        TestbedCommand::Run(r) => run_scenarios(r),
        TestbedCommand::Up(u) => up(u),
        TestbedCommand::Down(d) => down(d),
        TestbedCommand::Check(c) => check(c),
        TestbedCommand::Report(r) => report(r),
        TestbedCommand::Wire(w) => {
            let impair = testbed::wire::Impair {
                delay: Duration::from_secs_f64(w.delay_ms / 1e3),
                jitter: Duration::from_secs_f64(w.jitter_ms / 1e3),
                loss: w.loss,
                spin: Duration::from_micros(w.spin_us),
            };
            testbed::wire::serve(&w.a, &w.b, impair, [w.seed_ab, w.seed_ba]).map_err(live_err)
        }
        TestbedCommand::Probe(p) => probe(p),
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Failed(format!("{what}: {e}"))
}

fn probe(p: &ProbeCommand) -> Result<()> {
    use testbed::probe as pr;
    match p {
        ProbeCommand::UdpSend {
            to,
            count,
            rate,
            bytes,
            poisson,
        } => pr::udp_send(*to, *count, *rate, *bytes, *poisson).map_err(io("udp-send")),
        ProbeCommand::UdpRecv {
            listen,
            count,
            limit_s,
        } => {
            let sock = std::net::UdpSocket::bind(listen).map_err(io("udp-recv bind"))?;
            println!("ready");
            let d = pr::udp_receive(
                &sock,
                *count,
                Duration::from_secs(2),
                Duration::from_secs_f64(*limit_s),
            )
            .map_err(io("udp-recv"))?;
            println!("{}", serde_json::to_string(&d).expect("json"));
            Ok(())
        }
        ProbeCommand::DhtLoad { scenario, ring } => {
            let spec = load(scenario)?;
            let Experiment::Dht(plan, _) = plan(&spec)? else {
                return Err(Error::Usage(format!(
                    "{}: not a dht experiment",
                    scenario.display()
                )));
            };
            let ring = cdnlab_live::dht::ring::RingFile::load(ring).map_err(Error::Failed)?;
            let out = dht::load(&plan, &ring, spec.seed).map_err(live_err)?;
            println!("{}", serde_json::to_string(&out).expect("json"));
            Ok(())
        }
        ProbeCommand::TpAdmission {
            scenario,
            topology,
            policy,
            population,
        } => {
            let spec = load(scenario)?;
            let Experiment::TpAdmission(plan, layout) = plan(&spec)? else {
                return Err(Error::Usage(format!(
                    "{}: not a tp-admission experiment",
                    scenario.display()
                )));
            };
            let t = cdnlab_live::steer::Deployment::load(topology)
                .map_err(|e| Error::Failed(e.to_string()))?;
            let out = admission::load(&spec, &plan, &layout, &t, policy, *population)
                .map_err(live_err)?;
            println!("{}", serde_json::to_string(&out).expect("json"));
            Ok(())
        }
        ProbeCommand::Segments {
            sources,
            every_s,
            count,
            limit_s,
        } => {
            let dur = |what: &str, s: f64| {
                Duration::try_from_secs_f64(s)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| Error::Usage(format!("--{what} {s}: seconds > 0 are allowed")))
            };
            let out = segments::play(
                sources,
                dur("every-s", *every_s)?,
                *count,
                dur("limit-s", *limit_s)?,
            )
            .map_err(live_err)?;
            println!("{}", serde_json::to_string(&out).expect("json"));
            Ok(())
        }
        ProbeCommand::Steering {
            play,
            sessions,
            abr,
            segments,
            buffer_s,
            spread_s,
            seconds,
            reports,
            greedy,
        } => {
            let cfg = cdnlab_live::testbed::emulator::Config {
                play: play.clone(),
                sessions: *sessions,
                abr: abr.clone(),
                segments: *segments,
                buffer_s: *buffer_s,
                spread_s: *spread_s,
                seconds: *seconds,
                greedy: *greedy,
                reports: reports.clone(),
            };
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(io("the session emulator's runtime"))?;
            let out = rt.block_on(cdnlab_live::testbed::emulator::run(cfg));
            println!("{}", serde_json::to_string(&out).expect("json"));
            Ok(())
        }
        ProbeCommand::TcpSend { to, seconds } => pr::tcp_send(*to, *seconds)
            .map(|_| ())
            .map_err(io("tcp-send")),
        ProbeCommand::TcpRecv {
            listen,
            warmup_s,
            limit_s,
        } => {
            let l = std::net::TcpListener::bind(listen).map_err(io("tcp-recv bind"))?;
            println!("ready");
            let t = pr::tcp_receive(&l, *warmup_s, Duration::from_secs_f64(*limit_s))
                .map_err(io("tcp-recv"))?;
            println!("{}", serde_json::to_string(&t).expect("json"));
            Ok(())
        }
    }
}

fn load(path: &Path) -> Result<Spec> {
    testbed::spec::load(path).map_err(live_err)
}

fn check(c: &CheckArgs) -> Result<()> {
    let spec = load(&c.scenario)?;
    plan(&spec)?;
    println!(
        "{}: {} nodes, {} links, range {}/{}, routing by {}",
        spec.name,
        spec.nodes.len(),
        spec.links.len(),
        spec.range.0,
        spec.range.1,
        cdnlab::named::Named::name(spec.routing)
    );
    for n in &spec.nodes {
        println!(
            "  node {:<16} {:<10} {}{}",
            n.name,
            format!("{:?}", n.role).to_lowercase(),
            n.address,
            if n.count > 1 {
                format!("  x{}", n.count)
            } else {
                String::new()
            }
        );
    }
    for (l, k) in spec.links.iter().enumerate() {
        println!(
            "  link {l:<3} {}-{}: {:.3} Mbit/s, delay {:.2} ms, jitter {:.2} ms, loss {}, queue {} bytes",
            spec.nodes[k.a].name,
            spec.nodes[k.b].name,
            k.rate / 1e6,
            k.delay.as_secs_f64() * 1e3,
            k.jitter.as_secs_f64() * 1e3,
            k.loss,
            k.queue
        );
    }
    Ok(())
}

fn exe() -> Result<PathBuf> {
    std::env::current_exe()
        .map_err(|e| Error::Failed(format!("cannot find this program's path: {e}")))
}

fn up(u: &UpArgs) -> Result<()> {
    let spec = load(&u.scenario)?;
    let tb = Testbed::up(&spec, &exe()?).map_err(live_err)?;
    net::teardown_on_signal(tb.run.clone());
    println!(
        "testbed {} is up (run {}); Ctrl-C removes it",
        spec.name, tb.run
    );
    for (i, n) in spec.nodes.iter().enumerate() {
        println!(
            "  {:<16} {:<16} ip netns exec {} bash",
            n.name,
            n.address,
            net::node_ns(&tb.run, i)
        );
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn down(d: &DownArgs) -> Result<()> {
    let gone = match (&d.run, d.after_parent) {
        (Some(run), true) => net::watch(run),
        (Some(run), false) => net::remove(run),
        (None, _) => net::remove_stale(d.all),
    };
    if !d.after_parent {
        if gone.is_empty() {
            println!("nothing to remove");
        }
        for g in gone {
            println!("removed {g}");
        }
    }
    Ok(())
}

/// Runs each scenario into its folder, after checking every one (and its folder) first.
fn run_scenarios(r: &RunArgs) -> Result<()> {
    let stem = |p: &Path| {
        PathBuf::from(
            p.file_stem()
                .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned()),
        )
    };
    let outs: Vec<PathBuf> = r
        .scenarios
        .iter()
        .map(|sc| match &r.out {
            Some(o) if r.scenarios.len() == 1 => o.clone(),
            Some(o) => o.join(stem(sc)),
            None => Path::new("out/testbed").join(stem(sc)),
        })
        .collect();
    for (i, sc) in r.scenarios.iter().enumerate() {
        plan(&load(sc)?)?;
        if outs[..i].contains(&outs[i]) {
            return Err(Error::Usage(format!(
                "{}: two scenarios would write into {}",
                sc.display(),
                outs[i].display()
            )));
        }
        check_out(&outs[i], r.replace)?;
    }
    let many = r.scenarios.len() > 1;
    for (sc, out) in r.scenarios.iter().zip(&outs) {
        if many {
            eprintln!("== {} -> {}", sc.display(), out.display());
        }
        run_scenario(sc, out, r.replace)?;
    }
    Ok(())
}

fn run_scenario(scenario: &Path, out: &Path, replace: bool) -> Result<()> {
    let spec = load(scenario)?;
    let plan = plan(&spec)?;
    net::preflight().map_err(live_err)?;
    prepare_out(out, replace)?;
    let prov = cdnlab_lab::provenance::Start::now();
    let started = std::time::Instant::now();
    let mut tb = Testbed::up(&spec, &exe()?).map_err(live_err)?;
    net::teardown_on_signal(tb.run.clone());
    eprintln!(
        "testbed {} up in {:.1} s (run {}): {} nodes, {} links",
        spec.name,
        started.elapsed().as_secs_f64(),
        tb.run,
        spec.nodes.len(),
        spec.links.len()
    );
    let mut progress = |m: &str| eprintln!("  {m}");
    let result = match &plan {
        Experiment::Fidelity(p) => fidelity::measure(&mut tb, p, &mut progress).map(Done::Fidelity),
        Experiment::GwtwVideo(p, layout) => {
            gwtw::emulate(&tb, p, layout, &mut progress).map(Done::GwtwVideo)
        }
        Experiment::TpPaths(p, layout) => {
            paths::emulate(&tb, p, layout, &mut progress).map(Done::TpPaths)
        }
        Experiment::Dht(p, layout) => {
            dht::emulate(&tb, p, layout, out, &mut progress).map(Done::Dht)
        }
        Experiment::TpSegments(p, layout) => {
            segments::emulate(&tb, p, layout, &mut progress).map(Done::TpSegments)
        }
        Experiment::TpAdmission(p, layout) => {
            admission::emulate(&tb, p, layout, out, &mut progress).map(Done::TpAdmission)
        }
        Experiment::Steering(p, layout) => {
            steering::emulate(&tb, p, layout, out, &mut progress).map(Done::Steering)
        }
    };
    let gone = tb.teardown();
    eprintln!(
        "testbed removed ({} namespaces)",
        gone.iter().filter(|g| g.starts_with("namespace")).count()
    );
    match (result.map_err(live_err)?, &plan) {
        (Done::Fidelity(rows), Experiment::Fidelity(p)) => write_fidelity(out, &spec, p, &rows),
        (Done::GwtwVideo(runs), Experiment::GwtwVideo(p, layout)) => {
            eprintln!("  simulating: {} runs per k", p.sim_runs);
            let sims = gwtw::simulate(&spec, p, layout).map_err(live_err)?;
            write_gwtw(out, &spec, p, layout, &runs, &sims)?;
            write_run(out, "gwtw-video", scenario, &prov)
        }
        (Done::TpPaths(streams), Experiment::TpPaths(p, layout)) => {
            eprintln!("  simulating: {} runs per number of sources", p.sim_runs);
            let sims = paths::simulate(&spec, p, layout).map_err(live_err)?;
            write_paths(out, &spec, p, layout, &streams, &sims)?;
            write_run(out, "tp-paths", scenario, &prov)
        }
        (Done::Dht(e), Experiment::Dht(p, layout)) => {
            eprintln!("  simulating: {} runs", p.sim_runs);
            let sim = dht::simulate(&spec, p, layout).map_err(live_err)?;
            write_dht(out, &spec, p, layout, &e, &sim)?;
            write_run(out, "dht", scenario, &prov)
        }
        (Done::TpAdmission(runs), Experiment::TpAdmission(p, _)) => {
            eprintln!("  simulating: {} runs per policy", p.sim_runs);
            let sims = admission::simulate(&spec, p).map_err(live_err)?;
            write_admission(out, &spec, p, &runs, &sims)?;
            write_run(out, "tp-admission", scenario, &prov)
        }
        (Done::TpSegments(runs), Experiment::TpSegments(p, layout)) => {
            write_segments(out, &spec, p, layout, &runs)?;
            write_run(out, "tp-segments", scenario, &prov)
        }
        (Done::Steering((cal, runs)), Experiment::Steering(p, layout)) => {
            eprintln!("  simulating: {} runs per policy", p.sim_runs);
            let sums = steering::summarise(&spec, p, layout, &runs).map_err(live_err)?;
            super::testbed_steering::write(out, &spec, p, layout, &cal, &runs, &sums)?;
            write_run(out, "steering", scenario, &prov)
        }
        _ => unreachable!("the run's result is its experiment's"),
    }
}

/// `run.json`: what a judged run was (its experiment, scenario, build and date, and the
/// fingerprint of the code its verdicts depend on), for `testbed report`.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunInfo {
    experiment: String,
    scenario: String,
    commit: String,
    date: String,
    code: String,
}

fn write_run(
    out: &Path,
    experiment: &str,
    scenario: &Path,
    prov: &cdnlab_lab::provenance::Start,
) -> Result<()> {
    let p = prov.finish(1);
    let info = RunInfo {
        experiment: experiment.into(),
        scenario: scenario.display().to_string(),
        // 12 digits of the hash, and "-dirty" when the build had uncommitted changes (the
        // fingerprint in `code` then says which).
        commit: format!(
            "{}{}",
            p.commit.chars().take(12).collect::<String>(),
            if p.commit.ends_with("-dirty") {
                "-dirty"
            } else {
                ""
            }
        ),
        date: p.started.chars().take(10).collect(),
        code: cdnlab_lab::emulation::code(experiment).unwrap_or_default(),
    };
    let text = serde_json::to_string_pretty(&info).map_err(|e| Error::Failed(e.to_string()))?;
    cdnlab_lab::files::write_atomic(&out.join("run.json"), text.as_bytes())
}

fn report(r: &ReportArgs) -> Result<()> {
    use cdnlab_lab::emulation::{self, Recorded};
    let mut rows: Vec<Recorded> = Vec::new();
    let mut text = String::from("# Emulation against simulation\n");
    for dir in &r.runs {
        let path = dir.join("run.json");
        let info: RunInfo =
            serde_json::from_str(&std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?)
                .map_err(|e| Error::File {
                    path: path.clone(),
                    message: format!("not a judged run's run.json ({e})"),
                })?;
        // The steering experiment compares policies, real players and the emulator: it has no
        // claims of kind "emulation" (its findings are judged in the simulator).
        if emulation::code(&info.experiment).is_none() && !dir.join("agreement.csv").exists() {
            eprintln!(
                "{}: experiment {} has no emulation claims (its results: {})",
                dir.display(),
                info.experiment,
                dir.join("summary.md").display()
            );
            continue;
        }
        let path = dir.join("agreement.csv");
        let cases: Vec<agree::Agreement> = csv::Reader::from_path(&path)
            .and_then(|mut rd| rd.deserialize().collect())
            .map_err(|e| Error::File {
                path: path.clone(),
                message: format!("unreadable ({e})"),
            })?;
        if rows.iter().any(|x| x.scenario == info.scenario) {
            return Err(Error::Usage(format!(
                "{}: a second run of scenario {}; give one run per scenario",
                dir.display(),
                info.scenario
            )));
        }
        let stale = emulation::code(&info.experiment).is_none_or(|c| c != info.code);
        text.push_str(&format!(
            "\n## {} ({}, {}, commit {}{})\n",
            info.experiment,
            info.scenario,
            info.date,
            info.commit,
            if stale {
                "; stale: the code has changed since"
            } else {
                ""
            }
        ));
        text.push_str(&agreement_table(&cases));
        rows.extend(cases.into_iter().map(|c| Recorded {
            experiment: c.experiment,
            claim: c.claim,
            case: c.case,
            emulated: c.emulated,
            simulated: c.simulated,
            tolerance: c.tolerance,
            agree: c.agree,
            scenario: info.scenario.clone(),
            commit: info.commit.clone(),
            date: info.date.clone(),
            code: info.code.clone(),
        }));
    }
    match &r.out {
        Some(out) => cdnlab_lab::files::write_atomic(out, text.as_bytes())?,
        None => print!("{text}"),
    }
    if let Some(path) = &r.record {
        let old = if path.exists() {
            emulation::parse(&std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?)
        } else {
            Vec::new()
        };
        let bytes = emulation::merge(&old, &rows)
            .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?;
        cdnlab_lab::files::write_atomic(path, &bytes)?;
        eprintln!("{} cases recorded in {}", rows.len(), path.display());
    }
    Ok(())
}

/// A scenario's experiment.
enum Experiment {
    Fidelity(fidelity::Plan),
    GwtwVideo(gwtw::Plan, gwtw::Layout),
    TpPaths(paths::Plan, paths::Layout),
    Dht(dht::Plan, dht::Layout),
    TpAdmission(admission::Plan, admission::Layout),
    TpSegments(segments::Plan, segments::Layout),
    // Boxed: the steering plan would make every variant as large as it.
    Steering(Box<steering::Plan>, steering::Layout),
}

/// What an experiment's emulated part returned.
enum Done {
    Fidelity(Vec<fidelity::Row>),
    GwtwVideo(Vec<gwtw::Emulated>),
    TpPaths(Vec<paths::Stream>),
    Dht(dht::Emulated),
    TpAdmission(Vec<cdnlab_live::demo::steer::PolicyResult>),
    TpSegments(Vec<segments::Run>),
    Steering((Vec<steering::Calibration>, Vec<steering::Run>)),
}

/// The experiment kinds, as `[experiment] kind` names them.
const KINDS: &str = "fidelity, gwtw-video, tp-paths, tp-segments, tp-admission, dht, steering";

/// The scenario's experiment, checked.
fn plan(spec: &Spec) -> Result<Experiment> {
    let table = spec.experiment.clone().unwrap_or_default();
    match table.get("kind").map(|k| k.as_str()) {
        None | Some(Some("fidelity")) => fidelity::Plan::from_table(&table, &spec.source)
            .map(Experiment::Fidelity)
            .map_err(live_err),
        Some(Some("gwtw-video")) => gwtw::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::GwtwVideo(p, l))
            .map_err(live_err),
        Some(Some("tp-paths")) => paths::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::TpPaths(p, l))
            .map_err(live_err),
        Some(Some("tp-segments")) => segments::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::TpSegments(p, l))
            .map_err(live_err),
        Some(Some("tp-admission")) => admission::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::TpAdmission(p, l))
            .map_err(live_err),
        Some(Some("dht")) => dht::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::Dht(p, l))
            .map_err(live_err),
        Some(Some("steering")) => steering::Plan::from_table(&table, spec)
            .map(|(p, l)| Experiment::Steering(Box::new(p), l))
            .map_err(live_err),
        Some(k) => Err(Error::File {
            path: spec.source.clone(),
            message: format!(
                "experiment.kind: {} is not allowed; allowed: {KINDS}",
                k.map_or_else(|| table["kind"].to_string(), |k| format!("{k:?}"))
            ),
        }),
    }
}

fn prepare_out(out: &Path, replace: bool) -> Result<()> {
    check_out(out, replace)?;
    cdnlab_lab::files::ensure_dir(out)
}

/// A results folder must be empty or absent, unless it is to be replaced.
fn check_out(out: &Path, replace: bool) -> Result<()> {
    if out.exists()
        && !replace
        && std::fs::read_dir(out)
            .map_err(|e| Error::io(out, e))?
            .next()
            .is_some()
    {
        return Err(Error::Usage(format!(
            "--out {}: the folder has files; give an empty one, or --replace",
            out.display()
        )));
    }
    Ok(())
}

fn write_fidelity(
    out: &Path,
    spec: &Spec,
    plan: &fidelity::Plan,
    rows: &[fidelity::Row],
) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)
            .map_err(|e| Error::Failed(format!("fidelity.csv: {e}")))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Failed(format!("fidelity.csv: {e}")))?;
    cdnlab_lab::files::write_atomic(&out.join("fidelity.csv"), &bytes)?;
    let mut probes = String::from("link,arrival,one_way_ms\n");
    for r in rows {
        for (i, d) in r.delays_ms.iter().enumerate() {
            probes.push_str(&format!("{},{i},{d:.3}\n", r.link));
        }
    }
    cdnlab_lab::files::write_atomic(&out.join("probes.csv"), probes.as_bytes())?;
    // The figure: per link, the measured one-way delay's q-quantile minus the configured
    // delay's (delay + jitter (2q - 1), uniform jitter), against q: flat at zero is a perfect
    // link; the goal is under 2 ms at q = 0.99.
    let series = rows
        .iter()
        .map(|r| {
            let mut e = r.delays_ms.clone();
            e.sort_by(f64::total_cmp);
            let n = e.len().max(1) as f64;
            let step = (e.len() / 200).max(1);
            let points = e
                .iter()
                .enumerate()
                .filter(|(i, _)| i % step == 0 || *i + 1 == e.len())
                .map(|(i, x)| {
                    let q = (i + 1) as f64 / n;
                    (
                        q,
                        x - (r.delay_ms + r.jitter_ms * (2.0 * q - 1.0)),
                        f64::NAN,
                        f64::NAN,
                    )
                })
                .collect();
            cdnlab_lab::plot::Series {
                label: format!(
                    "{}-{}: {:.0} ms{}, {:.0} Mbit/s",
                    r.a,
                    r.b,
                    r.delay_ms,
                    if r.jitter_ms > 0.0 {
                        format!(" ±{:.0}", r.jitter_ms)
                    } else {
                        String::new()
                    },
                    r.rate_bps / 1e6
                ),
                points,
                dash: 0,
            }
        })
        .collect();
    let chart = cdnlab_lab::plot::Chart {
        title: format!("{}: one-way delay, measured minus configured", spec.name),
        x_label: "quantile of the probes' one-way delay".into(),
        y_label: "measured minus configured, ms".into(),
        series,
        marks: vec![(0.99, "p99".into())],
        ..Default::default()
    };
    cdnlab_lab::plot::write_chart(
        &chart,
        &out.join("fidelity.svg"),
        cdnlab_lab::plot::Format::Both,
        1.0,
    )?;
    let mut text = format!(
        "# Link fidelity: {}\n\n{} UDP probes of {} bytes at {}/s per link; {} s of TCP ({} s warm-up)\n\n",
        spec.name,
        plan.probes,
        plan.probe_bytes,
        plan.probe_rate,
        plan.goodput_seconds,
        plan.warmup_seconds
    );
    text.push_str("| link | rate Mbit/s | delay ms | jitter ms | loss | one-way p50 ms | p99 ms | p99 error ms | lost (95% range) | goodput / expected | element CPU us/frame |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        text.push_str(&format!(
            "| {}-{} | {:.3} | {:.2} | {:.2} | {} | {:.3} | {:.3} | {:+.3} | {} ({}-{}) | {:.4} | {:.2} |\n",
            r.a, r.b, r.rate_bps / 1e6, r.delay_ms, r.jitter_ms, r.loss, r.owd_p50_ms, r.owd_p99_ms, r.err_p99_ms, r.lost, r.lost_lo, r.lost_hi, r.goodput_ratio, r.cpu_us_per_frame
        ));
    }
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

fn write_gwtw(
    out: &Path,
    spec: &Spec,
    plan: &gwtw::Plan,
    layout: &gwtw::Layout,
    runs: &[gwtw::Emulated],
    sims: &[gwtw::Simulated],
) -> Result<()> {
    for (name, bytes) in gwtw::tables(plan, layout, runs, sims).map_err(live_err)? {
        cdnlab_lab::files::write_atomic(&out.join(name), &bytes)?;
    }
    let rows = gwtw::judge(plan, layout, runs, sims);
    write_agreement(out, &rows)?;
    let slot = layout.slot_s;
    let series = runs
        .iter()
        .map(|e| cdnlab_lab::plot::Series {
            label: format!("k = {}, emulated", e.k),
            points: e
                .timeline
                .iter()
                .map(|s| (s.t, s.at_best, f64::NAN, f64::NAN))
                .collect(),
            dash: 0,
        })
        .collect();
    let marks = sims
        .iter()
        .filter(|s| !s.converge_s.is_empty() && s.k >= 2)
        .map(|s| {
            (
                fidelity::quantile(&s.converge_s, 0.5),
                format!("k = {}: simulated median", s.k),
            )
        })
        .collect();
    let chart = cdnlab_lab::plot::Chart {
        title: format!("{}: GWTW video users at the full rate", spec.name),
        x_label: "seconds".into(),
        y_label: "share of users at the best value".into(),
        series,
        marks,
        ..Default::default()
    };
    cdnlab_lab::plot::write_chart(
        &chart,
        &out.join("gwtw.svg"),
        cdnlab_lab::plot::Format::Both,
        1.0,
    )?;
    let bw = layout.bandwidth(plan);
    let mut text = format!(
        "# GWTW video, emulated and simulated: {}

{} users want {:.0} kbit/s each (a download within {:.0}% of it counts as the full rate), {} KiB objects, tau {}, q {}; {} s per k; {} simulated runs per k; one slot = {:.3} s.

| edge | path rate Mbit/s | RTT ms | simulated bandwidth (streams) |
|---|---|---|---|
",
        spec.name,
        layout.users,
        plan.rate * 8.0 / 1e3,
        plan.tolerance * 100.0,
        plan.object_bytes / 1024,
        plan.tau,
        plan.q,
        plan.seconds,
        plan.sim_runs,
        slot
    );
    for (i, &e) in layout.edges.iter().enumerate() {
        text.push_str(&format!(
            "| {} | {:.3} | {:.1} | {:.3} |
",
            spec.nodes[e].name,
            layout.rate_bps[i] / 1e6,
            layout.rtt_s[i] * 1e3,
            bw[i]
        ));
    }
    text.push_str("\n## Emulation against simulation\n");
    text.push_str(&agreement_table(&rows));
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

/// `agreement.csv`: every case of every emulation claim.
fn write_agreement(out: &Path, rows: &[agree::Agreement]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)
            .map_err(|e| Error::Failed(format!("agreement.csv: {e}")))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Failed(format!("agreement.csv: {e}")))?;
    cdnlab_lab::files::write_atomic(&out.join("agreement.csv"), &bytes)
}

fn agreement_table(rows: &[agree::Agreement]) -> String {
    let mut t = String::from(
        "
| claim | case | emulated | simulated | tolerance | verdict |
|---|---|---|---|---|---|
",
    );
    for r in rows {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |
",
            r.claim,
            r.case,
            r.emulated,
            r.simulated,
            r.tolerance,
            if r.agree { "agree" } else { "DISAGREE" }
        ));
    }
    t
}

fn write_paths(
    out: &Path,
    spec: &Spec,
    plan: &paths::Plan,
    layout: &paths::Layout,
    streams: &[paths::Stream],
    sims: &[paths::Stream],
) -> Result<()> {
    cdnlab_lab::files::write_atomic(&out.join("streams.csv"), &paths::table(streams, sims))?;
    let rows = paths::judge(streams, sims);
    write_agreement(out, &rows)?;
    let series =
        |name: &str, v: &[paths::Stream], f: &dyn Fn(&paths::Stream) -> (f64, f64), dash| {
            cdnlab_lab::plot::Series {
                label: name.to_string(),
                points: v
                    .iter()
                    .map(|s| {
                        let (y, se) = f(s);
                        (s.sources as f64, y, y - 1.96 * se, y + 1.96 * se)
                    })
                    .collect(),
                dash,
            }
        };
    let loss = |s: &paths::Stream| (100.0 * s.loss, 100.0 * s.loss_se);
    let latency = |s: &paths::Stream| (s.latency_ms, s.latency_se);
    for (file, title, y, f) in [
        (
            "loss.svg",
            "packet loss",
            "lost packets, %",
            &loss as &dyn Fn(&paths::Stream) -> (f64, f64),
        ),
        ("latency.svg", "mean one-way latency", "ms", &latency),
    ] {
        let chart = cdnlab_lab::plot::Chart {
            title: format!("{}: {title}, emulated and simulated", spec.name),
            x_label: "sources the stream is striped over".into(),
            y_label: y.into(),
            series: vec![
                series("emulated (testbed)", streams, f, 0),
                series("simulated (packet model)", sims, f, 1),
            ],
            ..Default::default()
        };
        cdnlab_lab::plot::write_chart(
            &chart,
            &out.join(file),
            cdnlab_lab::plot::Format::Both,
            1.0,
        )?;
    }
    let mut text = format!(
        "# T4 streaming, emulated and simulated: {}\n\nA stream of {} packets/ms ({}-byte payloads) striped over 1-{} paths; each path {:.3} packets/ms, a buffer of {} packets, {} ms one way (per source, its routed path's propagation delay), Poisson cross traffic at {} of capacity; {} s per run; {} simulated runs each.\n\n| sources | emulated loss % | simulated loss % | emulated latency ms | simulated latency ms | emulated p99 ms | simulated p99 ms |\n|---|---|---|---|---|---|---|\n",
        spec.name,
        plan.rate,
        plan.payload,
        layout.sources.len(),
        layout.capacity,
        layout.buffer,
        layout
            .delays_ms
            .iter()
            .map(|d| format!("{d:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        plan.cross,
        plan.seconds,
        plan.sim_runs
    );
    for (e, s) in streams.iter().zip(sims) {
        text.push_str(&format!(
            "| {} | {:.3} ± {:.3} | {:.3} ± {:.3} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            e.sources,
            100.0 * e.loss,
            100.0 * e.loss_se,
            100.0 * s.loss,
            100.0 * s.loss_se,
            e.latency_ms,
            s.latency_ms,
            e.p99_ms,
            s.p99_ms
        ));
    }
    text.push_str("\n## Emulation against simulation\n");
    text.push_str(&agreement_table(&rows));
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

fn write_dht(
    out: &Path,
    spec: &Spec,
    plan: &dht::Plan,
    layout: &dht::Layout,
    e: &dht::Emulated,
    sim: &dht::Simulated,
) -> Result<()> {
    use cdnlab_lab::plot::{self, Chart, Series};
    cdnlab_lab::files::write_atomic(&out.join("requests.csv"), &dht::requests_table(e))?;
    cdnlab_lab::files::write_atomic(&out.join("samples.csv"), &dht::samples_table(e))?;
    cdnlab_lab::files::write_atomic(
        &out.join("replicas.csv"),
        &dht::replicas_table(plan, e, sim),
    )?;
    let rows = dht::judge(plan, layout, e, sim, dht::Model::RIGHT);
    write_agreement(out, &rows)?;
    let per_window = dht::hot_per_window(plan, &e.samples);
    let at = |w: usize| (w as f64 + 0.5) * plan.window;
    let replicas = Chart {
        title: format!(
            "{}: replicas of the hot file, emulated and simulated",
            spec.name
        ),
        x_label: "seconds".into(),
        y_label: "replicas".into(),
        series: vec![
            Series {
                label: "emulated (testbed, mean of the window's samples)".into(),
                points: per_window
                    .iter()
                    .enumerate()
                    .filter_map(|(w, v)| v.map(|v| (at(w), v, v, v)))
                    .collect(),
                dash: 0,
            },
            Series {
                label: format!("simulated (mean of {} runs, 95% band)", plan.sim_runs),
                points: sim
                    .hot
                    .iter()
                    .enumerate()
                    .map(|(w, &(m, se))| (at(w), m, m - 1.96 * se, m + 1.96 * se))
                    .collect(),
                dash: 1,
            },
        ],
        marks: vec![
            (plan.crowd[0], "crowd starts".into()),
            (plan.crowd[1], "crowd ends".into()),
        ],
        ..Default::default()
    };
    plot::write_chart(
        &replicas,
        &out.join("replicas.svg"),
        plot::Format::Both,
        1.0,
    )?;
    // Latency against round trips: each request's median per count, and n x RTT.
    let groups = dht::latency_groups(e, dht::Model::RIGHT);
    let q = fidelity::quantile;
    let latency = Chart {
        title: format!("{}: request latency against round trips", spec.name),
        x_label: "round trips: 1 + remote probes + redirect".into(),
        y_label: "ms".into(),
        series: vec![
            Series {
                label: "emulated: median (bars: 10th to 90th percentile)".into(),
                points: groups
                    .iter()
                    .map(|(&n, v)| (f64::from(n), q(v, 0.5), q(v, 0.1), q(v, 0.9)))
                    .collect(),
                dash: plot::SCATTER,
            },
            Series {
                label: format!("n x RTT ({:.1} ms)", layout.rtt_ms),
                points: groups
                    .keys()
                    .map(|&n| {
                        let y = f64::from(n) * layout.rtt_ms;
                        (f64::from(n), y, y, y)
                    })
                    .collect(),
                dash: 1,
            },
        ],
        ..Default::default()
    };
    plot::write_chart(&latency, &out.join("latency.svg"), plot::Format::Both, 1.0)?;
    let answered = e.requests.iter().filter(|r| r.status == 200).count();
    let mut text = format!(
        "# The DHT, emulated and simulated: {}\n\n{} DHT edges (K = {}, {} virtual nodes each), {} files of {} bytes, Zipf({}) at {} requests/s from uniform entry edges; the hot file's demand x{} from {} to {} s; c_high {} requests/s, gamma {}, windows of {} s; {} s; round trip {:.1} ms between the clients and any edge and between any two edges. {} simulated runs.\n\n{} requests sent, {} answered, {} not sent (the generator's 512 under way).\n",
        spec.name,
        layout.edges.len(),
        plan.k,
        plan.vnodes,
        plan.files,
        plan.file_bytes,
        plan.alpha,
        plan.rate,
        plan.flash,
        plan.crowd[0],
        plan.crowd[1],
        plan.c_high,
        plan.gamma,
        plan.window,
        plan.seconds,
        layout.rtt_ms,
        plan.sim_runs,
        e.requests.len(),
        answered,
        e.dropped
    );
    text.push_str("\n## Emulation against simulation\n");
    text.push_str(&agreement_table(&rows));
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

fn write_admission(
    out: &Path,
    spec: &Spec,
    plan: &admission::Plan,
    runs: &[cdnlab_live::demo::steer::PolicyResult],
    sims: &[admission::Blocking],
) -> Result<()> {
    use cdnlab_lab::plot::{self, Chart, Series};
    let emulated: Vec<admission::Blocking> =
        runs.iter().map(|r| admission::emulated(plan, r)).collect();
    cdnlab_lab::files::write_atomic(
        &out.join("blocking.csv"),
        &admission::table(&emulated, sims),
    )?;
    cdnlab_lab::files::write_atomic(&out.join("seconds.csv"), &admission::seconds_table(runs))?;
    let rows = admission::judge(&emulated, sims);
    write_agreement(out, &rows)?;
    // Blocking per second of each policy's run, and the simulated mean as a level.
    let mut series = Vec::new();
    for (p, (r, s)) in runs.iter().zip(sims).enumerate() {
        series.push(Series {
            label: format!("{}: emulated, per second", r.policy),
            points: r
                .per_second
                .iter()
                .enumerate()
                .filter(|(_, (a, _))| *a > 0)
                .map(|(t, &(a, b))| {
                    let y = 100.0 * b as f64 / a as f64;
                    (t as f64 + 0.5, y, y, y)
                })
                .collect(),
            dash: 2 * p,
        });
        let y = 100.0 * s.blocking;
        let band = 100.0 * 1.96 * s.se;
        series.push(Series {
            label: format!("{}: simulated mean", s.policy),
            points: [0.0, plan.seconds]
                .iter()
                .map(|&t| (t, y, y - band, y + band))
                .collect(),
            dash: 2 * p + 1,
        });
    }
    let chart = Chart {
        title: format!("{}: blocking per policy, emulated and simulated", spec.name),
        x_label: "seconds".into(),
        y_label: "blocked arrivals, %".into(),
        series,
        marks: vec![(0.2 * plan.seconds, "warm-up ends".into())],
        ..Default::default()
    };
    plot::write_chart(&chart, &out.join("blocking.svg"), plot::Format::Both, 1.0)?;
    let (capacity, demand) = plan.instance();
    let mut text = format!(
        "# Blocking with threshold admission, emulated and simulated: {}\n\nThe reference metros with capacities {:?} and demands (R15) {:?}: the spec's divided by {}. Streams of {} s arrive Poisson at rho {} x D_i / h per population; each policy runs {} s (the first 20% warm-up). {} simulated runs of {} hours per policy, deterministic holding times.\n\n| policy | emulated blocking % | simulated blocking % | arrivals |\n|---|---|---|---|\n",
        spec.name,
        capacity,
        demand,
        plan.scale,
        plan.holding,
        plan.rho,
        plan.seconds,
        plan.sim_runs,
        plan.sim_hours
    );
    for (e, s) in emulated.iter().zip(sims) {
        text.push_str(&format!(
            "| {} | {:.2} ± {:.2} | {:.2} ± {:.2} | {} |\n",
            e.policy,
            100.0 * e.blocking,
            100.0 * e.se,
            100.0 * s.blocking,
            100.0 * s.se,
            e.arrivals
        ));
    }
    text.push_str("\n## Emulation against simulation\n");
    text.push_str(&agreement_table(&rows));
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

fn write_segments(
    out: &Path,
    spec: &Spec,
    plan: &segments::Plan,
    layout: &segments::Layout,
    runs: &[segments::Run],
) -> Result<()> {
    use cdnlab_lab::plot::{self, Chart, Series};
    cdnlab_lab::files::write_atomic(&out.join("fetches.csv"), &segments::table(runs))?;
    cdnlab_lab::files::write_atomic(&out.join("cross.csv"), &segments::cross_table(runs))?;
    let outcomes: Vec<segments::Outcome> =
        runs.iter().map(|r| segments::outcome(plan, r)).collect();
    let rows = segments::judge(plan, layout, &outcomes, false);
    write_agreement(out, &rows)?;
    let chart = Chart {
        title: format!(
            "{}: segment fetch times, single and multi-source",
            spec.name
        ),
        x_label: "segment (one requested every segment duration)".into(),
        y_label: "fetch time, s".into(),
        series: runs
            .iter()
            .enumerate()
            .map(|(i, r)| Series {
                label: format!(
                    "{} source{} (model load {:.2} per path)",
                    r.sources,
                    if r.sources == 1 { "" } else { "s" },
                    plan.path_load(layout, r.sources, false)
                ),
                points: r
                    .fetches
                    .iter()
                    .map(|f| (f.k as f64, f.fetch_s, f.fetch_s, f.fetch_s))
                    .collect(),
                dash: i,
            })
            .chain([Series {
                label: format!("the buffer ({} s): later is a stall", plan.buffer_s),
                points: [0.0, plan.segments.saturating_sub(1) as f64]
                    .iter()
                    .map(|&k| (k, plan.buffer_s, plan.buffer_s, plan.buffer_s))
                    .collect(),
                dash: 3,
            }])
            .collect(),
        ..Default::default()
    };
    plot::write_chart(&chart, &out.join("fetches.svg"), plot::Format::Both, 1.0)?;
    let mut text = format!(
        "# T4 with HTTP segment fetches: {}\n\n{} segments of {} bytes, one every {} s, played {} s after their request, striped over 1-{} paths of {:.3} Mbit/s and {} ms round trip, each with Poisson UDP cross traffic at {} of capacity.\n\n| sources | model load per path | late | mean fetch s | first third s | last third s | cross traffic lost |\n|---|---|---|---|---|---|---|\n",
        spec.name,
        plan.segments,
        plan.segment_bytes,
        plan.segment_s,
        plan.buffer_s,
        layout.sources.len(),
        layout.rate_bps / 1e6,
        layout
            .rtt_ms
            .iter()
            .map(|r| format!("{r:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
        plan.cross
    );
    for o in &outcomes {
        text.push_str(&format!(
            "| {} | {:.3} | {:.0}% ± {:.0} | {:.2} ± {:.2} | {:.2} | {:.2} | {:.2}% |\n",
            o.sources,
            plan.path_load(layout, o.sources, false),
            100.0 * o.late,
            100.0 * o.late_se,
            o.fetch_s,
            o.fetch_se,
            o.first_third_s,
            o.last_third_s,
            100.0 * o.cross_loss
        ));
    }
    text.push_str("\n## Emulation against the packet model\n");
    text.push_str(&agreement_table(&rows));
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}
