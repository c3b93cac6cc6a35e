//! `cdnlab mrc`: the LRU miss-ratio curve of a trace in one pass (capacities in objects):
//! exact by stack distances, or estimated by SHARDS sampling; CSV or JSON and a plot.

use crate::error::{CliError, Result};
use crate::output::outln;
use crate::plot::{Chart, Series};
use crate::replay::{TraceArgs, spare_core, stream};
use cdnlab::cache::mrc::{Shards, ShardsFixed, StackDistances};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `cdnlab mrc`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab mrc --trace t.oracleGeneral                       exact curve at 40 sizes
  cdnlab mrc --trace t.oracleGeneral.zst --sizes 100,1000,10000 --json
  cdnlab mrc --trace big.oracleGeneral --sample 0.01 --exact-too   SHARDS and its error
  cdnlab mrc --trace big.oracleGeneral --sample-size 8192          SHARDS in bounded memory")]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Capacities in objects, comma-separated [default: 40 sizes spaced evenly on a log scale
    /// from 1 to the trace's distinct objects].
    #[arg(long)]
    pub sizes: Option<String>,
    /// Estimate by SHARDS, sampling this share of the objects (spatially, by a hash of the id),
    /// in (0, 1].
    #[arg(long)]
    pub sample: Option<f64>,
    /// Estimate by fixed-size SHARDS: track at most this many objects, lowering the sampling
    /// rate as the trace shows more (memory bounded whatever the trace).
    #[arg(long, conflicts_with = "sample")]
    pub sample_size: Option<usize>,
    /// With --sample or --sample-size: compute the exact curve in the same pass too and report
    /// the error.
    #[arg(long)]
    pub exact_too: bool,
    /// Print one JSON object per size, one a line.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: size, miss_ratio (and exact_miss_ratio with --exact-too).
    #[arg(long)]
    pub csv: bool,
    /// Where to draw the curve (SVG and the PNG beside it).
    #[arg(long, default_value = "out/mrc/mrc.svg")]
    pub plot: PathBuf,
    /// Draw nothing.
    #[arg(long, conflicts_with = "plot")]
    pub no_plot: bool,
}

fn parse_sizes(s: &str) -> Result<Vec<u64>> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|&c| c >= 1)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "--sizes `{t}`: capacities are whole numbers of objects, at least 1"
                    ))
                })
        })
        .collect()
}

/// `n` capacities from 1 to `max`, evenly spaced in log, without repeats.
fn log_sizes(max: u64, n: usize) -> Vec<u64> {
    let max = max.max(1) as f64;
    let mut v: Vec<u64> = (0..n)
        .map(|i| max.powf(i as f64 / (n - 1).max(1) as f64).round() as u64)
        .collect();
    v.dedup();
    v
}

/// Runs the command.
pub fn run(a: &MrcArgs) -> Result<()> {
    let given = a.sizes.as_deref().map(parse_sizes).transpose()?;
    let svg_path = (!a.no_plot)
        .then(|| crate::runner::plot_target(&a.plot))
        .transpose()?;
    let sampled = a.sample.is_some() || a.sample_size.is_some();
    if a.exact_too && !sampled {
        return Err(CliError::Usage(
            "--exact-too compares a sampled curve with the exact one: give --sample or --sample-size"
                .into(),
        ));
    }
    let mut exact = (!sampled || a.exact_too).then(StackDistances::new);
    let mut shards = a
        .sample
        .map(|r| {
            Shards::new(r).map_err(|_| {
                CliError::Usage(format!("--sample {r}: the rate must be above 0, at most 1"))
            })
        })
        .transpose()?;
    let mut fixed = a
        .sample_size
        .map(|n| {
            ShardsFixed::new(n)
                .map_err(|_| CliError::Usage(format!("--sample-size {n}: at least 1 object")))
        })
        .transpose()?;
    let t = Instant::now();
    let mut requests = 0u64;
    stream(&a.input, false, false, spare_core(1), |reqs| {
        requests += reqs.len() as u64;
        if let Some(e) = exact.as_mut() {
            e.replay(reqs);
        }
        for r in reqs {
            if let Some(s) = shards.as_mut() {
                s.access(r.id);
            }
            if let Some(s) = fixed.as_mut() {
                s.access(r.id);
            }
        }
    })?;
    let seconds = t.elapsed().as_secs_f64();
    // Distinct objects: exact when the exact curve was computed, else the sample's estimate
    // (so sampling keeps its bounded memory).
    let objects = match (&exact, &shards, &fixed) {
        (Some(e), _, _) => e.distinct(),
        (None, Some(s), _) => s.distinct().round() as u64,
        (None, None, Some(f)) => f.distinct().round() as u64,
        (None, None, None) => 0,
    };
    let sizes = given.unwrap_or_else(|| log_sizes(objects, 40));
    let exact_curve = exact.as_ref().map(|e| e.curve(&sizes));
    let sampled_curve = shards
        .as_ref()
        .map(|s| s.curve(&sizes))
        .or_else(|| fixed.as_ref().map(|f| f.curve(&sizes)));
    let method = match (a.sample, &fixed) {
        (Some(r), _) => format!("SHARDS, rate {r}"),
        (None, Some(f)) => format!(
            "SHARDS, at most {} objects (final rate {:.4})",
            a.sample_size.unwrap_or(0),
            f.rate()
        ),
        (None, None) => "exact".into(),
    };
    let main = sampled_curve
        .clone()
        .or(exact_curve.clone())
        .unwrap_or_default();
    let error = match (&exact_curve, &sampled_curve) {
        (Some(e), Some(s)) => Some(
            e.iter()
                .zip(s)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max),
        ),
        _ => None,
    };
    if a.json {
        for (i, &c) in sizes.iter().enumerate() {
            outln!(
                "{}",
                serde_json::json!({
                    "size": c, "miss_ratio": main[i],
                    "exact_miss_ratio": exact_curve.as_ref().map(|e| e[i]),
                    "sample": a.sample, "sample_size": a.sample_size,
                    "final_rate": fixed.as_ref().map(ShardsFixed::rate),
                    "method": method, "requests": requests, "objects": objects,
                })
            );
        }
    } else if a.csv {
        outln!(
            "size,miss_ratio{}",
            if exact_curve.is_some() && sampled {
                ",exact_miss_ratio"
            } else {
                ""
            }
        );
        for (i, &c) in sizes.iter().enumerate() {
            match (&exact_curve, sampled) {
                (Some(e), true) => outln!("{c},{},{}", main[i], e[i]),
                _ => outln!("{c},{}", main[i]),
            }
        }
    } else {
        outln!(
            "trace        {} ({requests} requests, {objects} objects{})",
            a.input.trace.display(),
            if exact.is_none() { " estimated" } else { "" }
        );
        outln!(
            "method       {} ({seconds:.3} s)",
            if sampled {
                format!("{method}{}", if a.exact_too { ", and exact" } else { "" })
            } else {
                "exact stack distances".into()
            }
        );
        if let Some(e) = error {
            outln!("largest |SHARDS - exact| over the sizes: {e:.4}");
        }
        outln!("{:>12} {:>12}", "size", "miss ratio");
        for (i, &c) in sizes.iter().enumerate() {
            outln!("{c:>12} {:>12.6}", main[i]);
        }
    }
    let mut series = vec![Series {
        label: method.clone(),
        points: sizes
            .iter()
            .zip(&main)
            .map(|(&c, &m)| (c as f64, m, f64::NAN))
            .collect(),
        dash: 0,
    }];
    if let (Some(e), true) = (&exact_curve, sampled) {
        series.push(Series {
            label: "exact".into(),
            points: sizes
                .iter()
                .zip(e)
                .map(|(&c, &m)| (c as f64, m, f64::NAN))
                .collect(),
            dash: 1,
        });
    }
    let chart = Chart {
        title: "LRU miss-ratio curve".into(),
        x_label: "cache size (objects)".into(),
        y_label: "miss ratio".into(),
        log_x: true,
        y_bounds: Some((0.0, 1.0)),
        series,
        ..Chart::default()
    };
    let Some(svg_path) = svg_path else {
        return Ok(());
    };
    let files = crate::runner::write_chart(&chart, &svg_path, crate::runner::Format::Both, 2.0)?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    eprintln!("miss-ratio curve: {}", names.join(", "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_spaced_on_a_log_scale() {
        assert_eq!(log_sizes(1000, 4), [1, 10, 100, 1000]);
        assert_eq!(log_sizes(1, 40), [1]);
        assert!(
            parse_sizes("10,0")
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert_eq!(parse_sizes("5, 7").unwrap(), [5, 7]);
    }
}
