//! The `cdnlab` command: flags and printing. It parses flags into the plans of `cdnlab-lab`
//! (experiments, traces, reports) and `cdnlab-live` (servers), prints what comes back, and
//! reports errors as one clear message.

#![forbid(unsafe_code)]

mod cmd;
#[cfg(feature = "live")]
mod live;
mod say;

use clap::{Parser, Subcommand};
use cmd::{
    hierarchy, mrc, replay, reproduce, run as runner, synth as gentrace, topo, tp,
    trace_stats as tracestats,
};
use std::process::ExitCode;

/// cdnlab: CDN server selection and load balancing, simulated and measured.
#[derive(Debug, Parser)]
#[command(name = "cdnlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a trace through cache policies at several sizes: miss ratios, timings, throughput.
    CacheReplay(replay::ReplayArgs),
    /// Replay a trace through edge caches and a shared parent: each tier's hits and the origin's
    /// traffic.
    CacheHierarchy(hierarchy::HierarchyArgs),
    /// A miss-ratio curve: LRU's in one pass (exact, or SHARDS), any policy's by full or
    /// miniature replays.
    Mrc(mrc::MrcArgs),
    /// Run a scenario: its grid x replications in parallel, with results, summary and plots.
    Run(runner::RunArgs),
    /// Combine the output folders of `run --shard` into one.
    Merge(runner::MergeArgs),
    /// Re-draw a finished run's figures (other axes, series, log scales, SVG or PNG) without
    /// re-running it.
    Plot(runner::PlotArgs),
    /// Run every registered experiment and write report.html and claims.json.
    Reproduce(reproduce::ReproduceArgs),
    /// Characterise a trace: objects, bytes, one-hit wonders, sizes, Zipf fit, reuse, with plots.
    TraceStats(tracestats::TraceStatsArgs),
    /// Write a synthetic Zipf trace in oracleGeneral format.
    GenTrace(gentrace::GenTraceArgs),
    /// List the experiments a scenario can name, with their parameters and metrics.
    Experiments,
    /// The Transportation Problem: solve an instance (optimal, north-west corner or Vogel).
    Tp(tp::TpArgs),
    /// Real network topologies: statistics, maps, conversion (Topology Zoo, SNDlib, topohub).
    Topo(topo::TopoArgs),
    /// Real HTTP on loopback: origin, caching edges, GWTW users, and a demo of all three.
    #[cfg(feature = "live")]
    Live(live::LiveArgs),
    /// The emulated multi-host testbed: the live servers and clients in network namespaces
    /// joined by links with rate, delay, jitter and loss (needs root; docs/testbed.md).
    #[cfg(feature = "live")]
    Testbed(live::testbed::TestbedArgs),
    /// Not built in: this cdnlab was built without its default feature `live`.
    #[cfg(not(feature = "live"))]
    #[command(hide = true, disable_help_flag = true)]
    Live {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Not built in: the testbed runs the live servers, so it needs the feature `live` too.
    #[cfg(not(feature = "live"))]
    #[command(hide = true, disable_help_flag = true)]
    Testbed {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::CacheReplay(a) => replay::run(a),
        Command::Mrc(a) => mrc::run(a),
        Command::CacheHierarchy(a) => hierarchy::run(a),
        Command::Run(a) => runner::run(a),
        Command::Merge(a) => runner::merge(a),
        Command::Plot(a) => runner::plot(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::GenTrace(a) => gentrace::run(a),
        Command::TraceStats(a) => tracestats::run(a),
        Command::Tp(a) => tp::run(a),
        Command::Topo(a) => topo::run(a),
        #[cfg(feature = "live")]
        Command::Live(a) => live::run(a),
        #[cfg(feature = "live")]
        Command::Testbed(a) => live::testbed::run(a),
        #[cfg(not(feature = "live"))]
        Command::Live { .. } | Command::Testbed { .. } => {
            eprintln!(
                "error: this cdnlab was built without the live servers (--no-default-features); \
                 build it with its default features for `cdnlab live` and `cdnlab testbed`: \
                 cargo install --path crates/cdnlab-cli"
            );
            return ExitCode::FAILURE;
        }
        Command::Experiments => {
            cmd::experiments::run();
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
