//! `cdnlab mrc`: the flags of a miss-ratio curve (in objects or bytes: LRU's in one pass, any
//! policy's by full or miniature replays), and its table, JSON or CSV.

use super::Threads;
use super::replay::TraceArgs;
use crate::say::outln;
use cdnlab::Named;
use cdnlab::cache::{Policy, Unit};
use cdnlab_lab::Result;
use cdnlab_lab::trace::mrc::{MrcPlan, draw, mrc, parse_sizes};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cdnlab mrc`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab mrc --trace t.oracleGeneral                       exact curve at 40 sizes
  cdnlab mrc --trace t.oracleGeneral.zst --sizes 100,1000,10000 --json
  cdnlab mrc --trace big.oracleGeneral --sample 0.01 --exact-too   SHARDS and its error
  cdnlab mrc --trace big.oracleGeneral --sample-size 8192          SHARDS in bounded memory
  cdnlab mrc --trace cdn.oracleGeneral --size-unit bytes           byte-weighted, 40 sizes
  cdnlab mrc --trace cdn.oracleGeneral --sizes 64MiB,1GiB,16GiB --sample 0.01 --exact-too
  cdnlab mrc --trace t.oracleGeneral --policy s3fifo --sample 0.1    miniature simulation
  cdnlab mrc --trace t.oracleGeneral --policy s3fifo --sample 0.1 --exact-too   and its error
  cdnlab mrc --trace t.oracleGeneral --policy s3fifo --sample 0.1 --sample-seed 2   another sample
  cdnlab mrc --trace t.oracleGeneral --policy lru --replay --sample 0.1 --exact-too
LRU's curve comes from one pass (stack distances, or SHARDS with a sample); any other policy's
(or LRU's with --replay) from replaying it at every size: in full, or with a sample in miniature
(the sampled objects' requests, each cache scaled by the rate; Waldspurger et al., ATC'17).")]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Eviction policy (`cdnlab cache-replay --help` lists them).
    #[arg(long, default_value = Policy::Lru.name(), value_parser = super::named::<Policy>())]
    pub policy: Policy,
    /// Compute LRU's curve by replays too, as any other policy's (to check miniature
    /// simulation against the exact curve).
    #[arg(long)]
    pub replay: bool,
    #[command(flatten)]
    pub threads: Threads,
    /// Capacities, comma-separated: whole numbers in --size-unit units, or bytes with a unit
    /// (512KiB, 64MB, 1.5GiB) [default: 40 sizes spaced evenly on a log scale from 1 to the
    /// trace's distinct objects, or in bytes from its largest object to its working set].
    #[arg(long)]
    pub sizes: Option<String>,
    /// What a capacity counts: objects (every object weighs 1) or bytes (objects weigh their
    /// size; the curve then has the byte miss ratio too) [default: bytes when a size has a
    /// byte unit, else objects].
    #[arg(long)]
    pub size_unit: Option<String>,
    /// Estimate by sampling this share of the objects (spatially, by a hash of the id), in
    /// (0, 1]: SHARDS for LRU, a miniature simulation for any other policy (or with --replay).
    #[arg(long, group = "sampling")]
    pub sample: Option<f64>,
    /// Estimate by a fixed-size sample: fixed-size SHARDS for LRU (track at most this many
    /// objects, lowering the rate as the trace shows more: memory bounded whatever the trace),
    /// or a miniature simulation of this many objects (those of smallest hash, found in a first
    /// pass).
    #[arg(long, conflicts_with = "sample", group = "sampling")]
    pub sample_size: Option<usize>,
    /// With --sample or --sample-size: which objects the sample draws (0, the default, and
    /// any other number each give one fixed sample). The curves of several seeds show how
    /// much an estimate moves with the sample.
    #[arg(long, default_value_t = 0, requires = "sampling")]
    pub sample_seed: u64,
    /// With --sample or --sample-size, in a miniature simulation (not SHARDS): how its misses
    /// become the curve. adj: misses over R x the trace's requests, caches scaled by R (one
    /// pass). strata: a first pass counts every object; misses are weighed by popularity class
    /// (requests 1, 2-3, 4-7, ...) and caches scaled by the share of objects drawn: about half
    /// the error at the same rate, for the time of that pass (docs/traces.md).
    #[arg(long, default_value = "adj", requires = "sampling")]
    pub estimator: String,
    /// With --sample or --sample-size: compute the exact curve too (LRU: in the same pass; by
    /// replay: the full replays, timed on their own) and report the error.
    #[arg(long)]
    pub exact_too: bool,
    /// Print one JSON object per size, one a line.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: size, miss_ratio, byte_miss_ratio (exact_miss_ratio with --exact-too).
    #[arg(long)]
    pub csv: bool,
    /// Where to draw the curve (SVG and the PNG beside it).
    #[arg(long, default_value = "out/mrc/mrc.svg")]
    pub plot: PathBuf,
    /// Draw nothing.
    #[arg(long, conflicts_with = "plot")]
    pub no_plot: bool,
}

/// Runs the command.
pub fn run(a: &MrcArgs) -> Result<()> {
    let asked = a.size_unit.as_deref().map(str::parse::<Unit>).transpose()?;
    let (sizes, unit) = match a.sizes.as_deref() {
        Some(s) => {
            let (sizes, unit) = parse_sizes(&super::items(s), asked, "--sizes")?;
            (Some(sizes), unit)
        }
        None => (None, asked.unwrap_or(Unit::Objects)),
    };
    let svg_path = (!a.no_plot)
        .then(|| cdnlab_lab::plot::plot_target(&a.plot))
        .transpose()?;
    let sampled = a.sample.is_some() || a.sample_size.is_some();
    let m = mrc(&MrcPlan {
        input: a.input.input()?,
        sizes,
        unit,
        sample: a.sample,
        sample_size: a.sample_size,
        sample_seed: a.sample_seed,
        exact_too: a.exact_too,
        policy: a.policy,
        by_replay: a.replay,
        threads: a.threads.count,
        style: cdnlab_lab::error::ArgStyle::Cli,
        estimator: a
            .estimator
            .parse()
            .map_err(|e| cdnlab_lab::Error::Usage(format!("--estimator: {e}")))?,
    })?;
    let main = &m.miss_ratio;
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
    let bytes = m.byte_miss_ratio.as_ref();
    if a.json {
        for (i, &c) in m.sizes.iter().enumerate() {
            outln!(
                "{}",
                serde_json::json!({
                    "policy": m.policy.name(),
                    "size": c, "size_unit": m.unit.name(), "miss_ratio": main[i],
                    "byte_miss_ratio": bytes.map(|b| b[i]),
                    "exact_miss_ratio": m.exact.as_ref().map(|e| e[i]),
                    "sample": a.sample, "sample_size": a.sample_size,
                    "sample_seed": sampled.then_some(a.sample_seed),
                    "final_rate": m.final_rate,
                    "method": m.method, "requests": m.requests, "objects": m.objects,
                    "seconds": m.seconds, "exact_seconds": m.exact_seconds,
                    "warnings": m.warnings,
                })
            );
        }
    } else if a.csv {
        let exact = m.exact.as_ref().filter(|_| sampled);
        outln!(
            "size,miss_ratio{}{}",
            if bytes.is_some() {
                ",byte_miss_ratio"
            } else {
                ""
            },
            if exact.is_some() {
                ",exact_miss_ratio"
            } else {
                ""
            }
        );
        for (i, &c) in m.sizes.iter().enumerate() {
            let b = bytes.map_or(String::new(), |b| format!(",{}", b[i]));
            let e = exact.map_or(String::new(), |e| format!(",{}", e[i]));
            outln!("{c},{}{b}{e}", main[i]);
        }
    } else {
        outln!(
            "trace        {} ({} requests{})",
            a.input.trace.display(),
            m.requests,
            match (m.objects, m.exact.is_none()) {
                (0, _) => String::new(),
                (n, true) => format!(", {n} objects estimated"),
                (n, false) => format!(", {n} objects"),
            }
        );
        outln!("policy       {}", m.policy.name());
        let method = match m.method.as_str() {
            "exact" => "exact stack distances",
            other => other,
        };
        match m.exact_seconds {
            Some(e) => outln!(
                "method       {method} ({:.3} s), and full replays ({e:.3} s: {:.1}x the time)",
                m.seconds,
                e / m.seconds.max(1e-9)
            ),
            None if sampled && a.exact_too => {
                outln!("method       {method}, and exact ({:.3} s)", m.seconds)
            }
            None => outln!("method       {method} ({:.3} s)", m.seconds),
        }
        if let (Some(e), Some(mean)) = (m.error, m.mean_error) {
            outln!("|sampled - exact| over the sizes: mean {mean:.4}, largest {e:.4}");
        }
        let unit = m.unit.name();
        match bytes {
            Some(b) => {
                outln!(
                    "{:>14} {:>12} {:>12}",
                    format!("size ({unit})"),
                    "miss ratio",
                    "byte miss"
                );
                for (i, &c) in m.sizes.iter().enumerate() {
                    outln!("{c:>14} {:>12.6} {:>12.6}", main[i], b[i]);
                }
            }
            None => {
                outln!("{:>14} {:>12}", format!("size ({unit})"), "miss ratio");
                for (i, &c) in m.sizes.iter().enumerate() {
                    outln!("{c:>14} {:>12.6}", main[i]);
                }
            }
        }
    }
    if let Some(svg_path) = svg_path {
        let files = draw(&m, &svg_path)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("miss-ratio curve: {}", names.join(", "));
    }
    Ok(())
}
