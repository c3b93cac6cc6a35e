//! The LRU miss-ratio curve of a trace in one pass (capacities in objects):
//! exact by stack distances, or estimated by SHARDS sampling; CSV or JSON and a plot.

use super::{TraceInput, spare_core, stream};
use crate::error::{Error, Result};
use crate::plot::Series;
use cdnlab::cache::mrc::{Shards, ShardsFixed, StackDistances};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What curve to compute.
#[derive(Debug, Clone)]
pub struct MrcPlan {
    pub input: TraceInput,
    /// Capacities in objects (None: 40 sizes spaced evenly on a log scale from 1 to the trace's
    /// distinct objects).
    pub sizes: Option<Vec<u64>>,
    /// Estimate by SHARDS, sampling this share of the objects, in (0, 1].
    pub sample: Option<f64>,
    /// Estimate by fixed-size SHARDS, tracking at most this many objects.
    pub sample_size: Option<usize>,
    /// With a sample: compute the exact curve in the same pass too.
    pub exact_too: bool,
}

/// A computed curve.
#[derive(Debug, Clone)]
pub struct Mrc {
    pub sizes: Vec<u64>,
    /// The curve asked for: the sampled one when sampling, else the exact one.
    pub miss_ratio: Vec<f64>,
    /// The exact curve, when computed.
    pub exact: Option<Vec<f64>>,
    /// Whether `miss_ratio` is a SHARDS estimate.
    pub sampled: bool,
    /// How it was computed, in words ("exact", "SHARDS, rate 0.01", ...).
    pub method: String,
    /// Fixed-size SHARDS: its sampling rate at the end.
    pub final_rate: Option<f64>,
    pub requests: u64,
    /// Distinct objects: exact when the exact curve was computed, else the sample's estimate.
    pub objects: u64,
    pub seconds: f64,
    /// The largest |sampled - exact| over the sizes, when both were computed.
    pub error: Option<f64>,
}

/// Parses `--sizes`: capacities in objects, whole numbers of at least 1, one an item.
pub fn parse_sizes<S: AsRef<str>>(items: &[S]) -> Result<Vec<u64>> {
    items
        .iter()
        .map(|t| {
            let t = t.as_ref();
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|&c| c >= 1)
                .ok_or_else(|| {
                    Error::Usage(format!(
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

/// Computes the curve in one pass over the trace.
pub fn mrc(a: &MrcPlan) -> Result<Mrc> {
    let sampled = a.sample.is_some() || a.sample_size.is_some();
    if a.exact_too && !sampled {
        return Err(Error::Usage(
            "--exact-too compares a sampled curve with the exact one: give --sample or --sample-size"
                .into(),
        ));
    }
    let mut exact = (!sampled || a.exact_too).then(StackDistances::new);
    let mut shards = a
        .sample
        .map(|r| {
            Shards::new(r).map_err(|_| {
                Error::Usage(format!("--sample {r}: the rate must be above 0, at most 1"))
            })
        })
        .transpose()?;
    let mut fixed = a
        .sample_size
        .map(|n| {
            ShardsFixed::new(n)
                .map_err(|_| Error::Usage(format!("--sample-size {n}: at least 1 object")))
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
    let sizes = a.sizes.clone().unwrap_or_else(|| log_sizes(objects, 40));
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
    Ok(Mrc {
        sizes,
        miss_ratio: main,
        exact: exact_curve,
        sampled,
        method,
        final_rate: fixed.as_ref().map(ShardsFixed::rate),
        requests,
        objects,
        seconds,
        error,
    })
}

/// Draws the curve (and the exact one beside a sampled one) as an SVG at `svg_path` and the PNG
/// beside it; returns the files written.
pub fn draw(m: &Mrc, svg_path: &Path) -> Result<Vec<PathBuf>> {
    let points = |curve: &[f64]| {
        m.sizes
            .iter()
            .zip(curve)
            .map(|(&c, &y)| (c as f64, y, f64::NAN, f64::NAN))
            .collect()
    };
    let mut series = vec![Series {
        label: m.method.clone(),
        points: points(&m.miss_ratio),
        dash: 0,
    }];
    if let (Some(e), true) = (&m.exact, m.sampled) {
        series.push(Series {
            label: "exact".into(),
            points: points(e),
            dash: 1,
        });
    }
    crate::plot::write_mrc("LRU miss-ratio curve".into(), "objects", series, svg_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_spaced_on_a_log_scale() {
        assert_eq!(log_sizes(1000, 4), [1, 10, 100, 1000]);
        assert_eq!(log_sizes(1, 40), [1]);
        assert!(
            parse_sizes(&["10", "0"])
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert_eq!(parse_sizes(&["5", " 7"]).unwrap(), [5, 7]);
    }
}
