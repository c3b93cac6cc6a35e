//! `cdnlab trace-stats`: the flags of a trace's characterisation, and its table or JSON.

use super::replay::TraceArgs;
use crate::say::outln;
use cdnlab::workload::analysis::{HEAD_COUNT, Quantiles, Summary};
use cdnlab_lab::trace::stats::{draw, histogram_quantile, to_json, trace_stats};
use cdnlab_lab::{Error, Result};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cdnlab trace-stats`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab trace-stats --trace t.oracleGeneral
  cdnlab trace-stats --trace t.oracleGeneral.zst --json > stats.json
  cdnlab trace-stats --trace t.csv --format csv --csv-id 2 --csv-size 3 --plot-dir figs
Reuse distance counts the requests between two requests for the same object (1: back to back);
inter-arrival time is the gap between consecutive timestamps, in the trace's time unit (seconds
in oracleGeneral). Both are shown as power-of-two buckets: [1, 2), [2, 4), ...")]
pub struct TraceStatsArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Print one JSON object (every figure and histogram) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Where to draw popularity.svg, reuse.svg and sizes.svg (and their PNGs).
    #[arg(long, default_value = "out/trace-stats")]
    pub plot_dir: PathBuf,
    /// Draw nothing.
    #[arg(long)]
    pub no_plot: bool,
}

/// Runs the command.
pub fn run(a: &TraceStatsArgs) -> Result<()> {
    if !a.no_plot && a.plot_dir.as_os_str().is_empty() {
        return Err(Error::Usage("--plot-dir: give a folder".into()));
    }
    let input = a.input.input()?;
    let s = trace_stats(&input)?;
    if a.json {
        outln!("{}", to_json(&input, &s));
    } else {
        print_table(a, &s);
    }
    if !a.no_plot {
        let files = draw(&s, &a.plot_dir)?;
        eprintln!("plots: {}", files.join(", "));
    }
    Ok(())
}

fn print_table(a: &TraceStatsArgs, s: &Summary) {
    let pct = |x: f64| format!("{:.2} %", 100.0 * x);
    let q = |q: &Quantiles| {
        format!(
            "min {} / median {} / p90 {} / p99 {} / max {} / mean {:.1}",
            q.min, q.p50, q.p90, q.p99, q.max, q.mean
        )
    };
    let h = |h: &[u64]| match (
        histogram_quantile(h, 0.5),
        histogram_quantile(h, 0.9),
        histogram_quantile(h, 0.99),
    ) {
        (Some(a), Some(b), Some(c)) => {
            format!(
                "median in [{a}, {}), p90 in [{b}, {}), p99 in [{c}, {}) ({} gaps)",
                (a * 2).max(1),
                (b * 2).max(1),
                (c * 2).max(1),
                h.iter().sum::<u64>()
            )
        }
        _ => "none (no object requested twice)".into(),
    };
    outln!("trace            {}", a.input.trace.display());
    outln!(
        "requests         {} (times {} to {}{})",
        s.requests,
        s.first_time,
        s.last_time,
        if s.backwards > 0 {
            format!(", {} out of order", s.backwards)
        } else {
            String::new()
        }
    );
    outln!(
        "objects          {} distinct; working set {} bytes; {} bytes requested",
        s.objects,
        s.working_set_bytes,
        s.bytes_requested
    );
    outln!(
        "one-hit wonders  {} objects: {} of the objects, {} of the requests",
        s.one_hit_objects,
        pct(s.one_hit_share_objects),
        pct(s.one_hit_share_requests)
    );
    outln!("request size     {}", q(&s.request_size));
    outln!("object size      {}", q(&s.object_size));
    match s.zipf {
        Some(f) => outln!(
            "Zipf alpha       {:.4} (R^2 {:.4}, all {} ranks, as libCacheSim fits)",
            f.alpha,
            f.r2,
            f.ranks
        ),
        None => outln!("Zipf alpha       none (fewer than 2 objects)"),
    }
    if let Some(f) = s.zipf_head {
        outln!(
            "                 {:.4} (R^2 {:.4}, the {} ranks requested at least {HEAD_COUNT} times)",
            f.alpha,
            f.r2,
            f.ranks
        );
    }
    outln!("reuse distance   {}", h(&s.reuse_requests));
    outln!("reuse time       {}", h(&s.reuse_time));
    outln!("inter-arrival    {}", h(&s.interarrival));
}
