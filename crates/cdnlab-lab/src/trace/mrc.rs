//! The LRU miss-ratio curve of a trace in one pass (capacities in objects or bytes):
//! exact by stack distances, or estimated by SHARDS sampling; CSV or JSON and a plot.

use super::{TraceInput, spare_core, stream};
use crate::error::{Error, Result};
use crate::plot::Series;
use cdnlab::Named;
use cdnlab::cache::Unit;
use cdnlab::cache::mrc::{ByteShards, ByteStackDistances, Shards, ShardsFixed, StackDistances};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What curve to compute.
#[derive(Debug, Clone)]
pub struct MrcPlan {
    pub input: TraceInput,
    /// Capacities in `unit` (None: 40 sizes spaced evenly on a log scale from 1 to the trace's
    /// distinct objects, or, in bytes, from its largest object to its working set).
    pub sizes: Option<Vec<u64>>,
    /// What the capacities count: objects (every object weighs 1) or bytes.
    pub unit: Unit,
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
    pub unit: Unit,
    /// The curve asked for: the sampled one when sampling, else the exact one.
    pub miss_ratio: Vec<f64>,
    /// Its byte miss ratio (missed bytes over bytes requested), with capacities in bytes.
    pub byte_miss_ratio: Option<Vec<f64>>,
    /// What the numbers may not say on their own.
    pub warnings: Vec<String>,
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

/// Parses `--sizes` (`what` names it in errors) and settles the unit: capacities, whole
/// numbers of at least 1 in the unit asked for, or byte sizes with a unit (`64MiB`: then the
/// unit is bytes), as [`super::replay::parse_sizes`] reads them; no fractions.
pub fn parse_sizes<S: AsRef<str>>(
    items: &[S],
    asked: Option<Unit>,
    what: &str,
) -> Result<(Vec<u64>, Unit)> {
    use super::replay::SizeSpec;
    let specs = super::replay::parse_sizes(items, what)?;
    let unit = super::replay::size_unit(&specs, asked, what)?;
    let sizes = specs
        .iter()
        .map(|s| match *s {
            SizeSpec::Absolute(c) | SizeSpec::Bytes(c) => Ok(c),
            SizeSpec::Fraction(f) => Err(Error::Usage(format!(
                "{what} `{f}`: a curve's capacities are whole numbers of at least 1 (or bytes \
                 with a unit, e.g. 64MiB), not fractions"
            ))),
        })
        .collect::<Result<Vec<u64>>>()?;
    Ok((sizes, unit))
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
    if a.unit == Unit::Bytes {
        return mrc_bytes(a);
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
    let error = largest_gap(exact_curve.as_deref(), sampled_curve.as_deref());
    Ok(Mrc {
        sizes,
        unit: Unit::Objects,
        miss_ratio: main,
        byte_miss_ratio: None,
        warnings: Vec::new(),
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

/// The largest |sampled - exact| over the sizes, when both curves were computed.
fn largest_gap(exact: Option<&[f64]>, sampled: Option<&[f64]>) -> Option<f64> {
    let (e, s) = (exact?, sampled?);
    Some(
        e.iter()
            .zip(s)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max),
    )
}

/// Candidate default capacities in bytes: 2^(k/4) bytes, four a doubling, up to 2^52.
fn byte_grid() -> Vec<u64> {
    let mut v: Vec<u64> = (0..=4 * 52)
        .map(|k| 2f64.powf(k as f64 / 4.0).round() as u64)
        .collect();
    v.dedup();
    v
}

/// At most `n` of the grid's points from `lo` to the first at least `hi`, evenly spread.
fn thin(grid: &[u64], lo: u64, hi: u64, n: usize) -> Vec<u64> {
    let end = grid.partition_point(|&c| c < hi).min(grid.len() - 1);
    let start = grid.partition_point(|&c| c < lo).min(end);
    let span = &grid[start..=end];
    let step = span.len().div_ceil(n).max(1);
    let mut v: Vec<u64> = span.iter().step_by(step).copied().collect();
    if v.last() != span.last() {
        v.extend(span.last());
    }
    v
}

/// The byte-weighted curve: exact by [`ByteStackDistances`], or by [`ByteShards`] at a fixed
/// rate (fixed-size SHARDS counts objects only).
fn mrc_bytes(a: &MrcPlan) -> Result<Mrc> {
    if a.sample_size.is_some() {
        return Err(Error::Usage(
            "--sample-size: fixed-size SHARDS counts objects; with capacities in bytes give a \
             rate (--sample)"
                .into(),
        ));
    }
    // Without sizes, the candidates are a fine log grid, thinned to 40 after the pass.
    let asked = a.sizes.clone();
    let caps = asked.clone().unwrap_or_else(byte_grid);
    let mut exact = (a.sample.is_none() || a.exact_too).then(|| ByteStackDistances::new(&caps));
    let mut shards = a
        .sample
        .map(|r| {
            ByteShards::new(r, &caps).map_err(|_| {
                Error::Usage(format!("--sample {r}: the rate must be above 0, at most 1"))
            })
        })
        .transpose()?;
    let t = Instant::now();
    let mut requests = 0u64;
    let mut largest = 0u32;
    stream(&a.input, true, false, spare_core(1), |reqs| {
        requests += reqs.len() as u64;
        if let Some(e) = exact.as_mut() {
            e.replay(reqs);
        }
        for r in reqs {
            largest = largest.max(r.size);
            if let Some(s) = shards.as_mut() {
                s.access(r.id, r.size);
            }
        }
    })?;
    let seconds = t.elapsed().as_secs_f64();
    let (objects, wss_bytes) = match (&exact, &shards) {
        (Some(e), _) => (e.distinct(), e.distinct_bytes()),
        (None, Some(s)) => {
            let (o, b) = s.distinct();
            (o.round() as u64, b.round() as u64)
        }
        (None, None) => (0, 0),
    };
    let sizes = asked.unwrap_or_else(|| thin(&caps, u64::from(largest).max(1), wss_bytes, 40));
    // Each curve at `sizes`: (miss ratio, byte miss ratio).
    let exact_curve = exact.as_ref().map(|e| {
        let n = e.requests().max(1) as f64;
        let b = e.bytes().max(1) as f64;
        let at: Vec<(u64, (u64, u64))> = e.capacities().iter().copied().zip(e.hits()).collect();
        sizes
            .iter()
            .map(|c| {
                let (h, hb) = at.iter().find(|(x, _)| x == c).map_or((0, 0), |(_, v)| *v);
                ((n - h as f64) / n, (b - hb as f64) / b)
            })
            .collect::<Vec<(f64, f64)>>()
    });
    let sampled_curve = shards.as_ref().map(|s| {
        let all = s.curve();
        sizes
            .iter()
            .map(|c| {
                all.iter()
                    .find(|(x, _, _)| x == c)
                    .map_or((f64::NAN, f64::NAN), |&(_, m, b)| (m, b))
            })
            .collect::<Vec<(f64, f64)>>()
    });
    let main = sampled_curve
        .clone()
        .or(exact_curve.clone())
        .unwrap_or_default();
    let misses = |c: &Vec<(f64, f64)>| c.iter().map(|x| x.0).collect::<Vec<f64>>();
    let error = largest_gap(
        exact_curve.as_ref().map(misses).as_deref(),
        sampled_curve.as_ref().map(misses).as_deref(),
    );
    let mut warnings = Vec::new();
    if let Some(&below) = sizes.first().filter(|&&c| c < u64::from(largest)) {
        warnings.push(format!(
            "capacities below the largest object ({largest} bytes), from {below} bytes, are \
             upper bounds on the misses: LRU never admits an object heavier than its capacity, \
             and the stack counts it"
        ));
    }
    Ok(Mrc {
        sizes,
        unit: Unit::Bytes,
        miss_ratio: main.iter().map(|x| x.0).collect(),
        byte_miss_ratio: Some(main.iter().map(|x| x.1).collect()),
        warnings,
        exact: exact_curve.map(|c| c.iter().map(|x| x.0).collect()),
        sampled: shards.is_some(),
        method: match a.sample {
            Some(r) => format!("SHARDS in bytes, rate {r}"),
            None => "exact".into(),
        },
        final_rate: None,
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
    crate::plot::write_mrc(
        "LRU miss-ratio curve".into(),
        m.unit.name(),
        series,
        svg_path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_spaced_on_a_log_scale() {
        assert_eq!(log_sizes(1000, 4), [1, 10, 100, 1000]);
        assert_eq!(log_sizes(1, 40), [1]);
        let e = parse_sizes(&["10", "0"], None, "--sizes").unwrap_err();
        assert!(e.to_string().contains("above 0"), "{e}");
        let e = parse_sizes(&["10", "0.5"], None, "--sizes").unwrap_err();
        assert!(e.to_string().contains("not fractions"), "{e}");
        assert_eq!(
            parse_sizes(&["5", " 7"], None, "--sizes").unwrap(),
            (vec![5, 7], Unit::Objects)
        );
        assert_eq!(
            parse_sizes(&["5", "1KiB"], None, "--sizes").unwrap(),
            (vec![5, 1024], Unit::Bytes)
        );
    }
}
