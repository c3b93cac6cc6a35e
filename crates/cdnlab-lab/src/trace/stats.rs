//! Characterises a trace in one streaming pass (the library's
//! `workload::analysis`): a table or JSON, and plots of popularity, reuse and sizes.

use super::{TraceInput, spare_core, stream};
use crate::error::{Error, Result};
use crate::plot::{Chart, Series};
use cdnlab::workload::analysis::{Quantiles, Summary, TraceStats, ZipfFit, bucket_floor};
use serde_json::json;
use std::path::Path;

fn quantiles_json(q: &Quantiles) -> serde_json::Value {
    json!({"min": q.min, "p50": q.p50, "p90": q.p90, "p99": q.p99, "max": q.max, "mean": q.mean})
}

fn fit_json(f: &Option<ZipfFit>) -> serde_json::Value {
    f.map_or(
        serde_json::Value::Null,
        |f| json!({"alpha": f.alpha, "r2": f.r2, "ranks": f.ranks}),
    )
}

fn histogram_json(h: &[u64]) -> serde_json::Value {
    h.iter()
        .enumerate()
        .map(|(k, &c)| json!({"from": bucket_floor(k), "count": c}))
        .collect()
}

/// The value below which a share `q` of a histogram's mass lies, as the bucket's floor.
pub fn histogram_quantile(h: &[u64], q: f64) -> Option<u64> {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return None;
    }
    let target = ((q * total as f64).ceil() as u64).max(1);
    let mut acc = 0;
    h.iter().enumerate().find_map(|(k, &c)| {
        acc += c;
        (acc >= target).then(|| bucket_floor(k))
    })
}

fn plotted_ranks(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=n.min(20)).collect();
    let mut r = 20.0f64;
    while (r as usize) < n {
        r *= 10f64.powf(1.0 / 30.0);
        let k = (r as usize).min(n);
        if v.last() != Some(&k) {
            v.push(k);
        }
    }
    v
}

/// A CDF from a power-of-two histogram: the share at or below each bucket's top.
fn cdf_points(h: &[u64]) -> Vec<(f64, f64, f64, f64)> {
    let total: u64 = h.iter().sum();
    let mut acc = 0;
    h.iter()
        .enumerate()
        .skip(1)
        .map(|(k, &c)| {
            acc += c + if k == 1 { h[0] } else { 0 };
            (
                (bucket_floor(k) * 2 - 1).max(1) as f64,
                acc as f64 / total as f64,
                f64::NAN,
                f64::NAN,
            )
        })
        .collect()
}

/// Draws popularity.svg, reuse.svg and sizes.svg (and their PNGs) into `dir`; returns the files
/// written.
pub fn draw(s: &Summary, dir: &Path) -> Result<Vec<String>> {
    crate::files::ensure_dir(dir)?;
    let mut written = Vec::new();
    let mut save = |chart: Chart, name: &str| -> Result<()> {
        let files =
            crate::plot::write_chart(&chart, &dir.join(name), crate::plot::Format::Both, 2.0)?;
        written.extend(files.iter().map(|f| f.display().to_string()));
        Ok(())
    };
    let ranks = plotted_ranks(s.counts_by_rank.len());
    let mut series = vec![Series {
        label: "trace".into(),
        points: ranks
            .iter()
            .map(|&r| (r as f64, s.counts_by_rank[r - 1] as f64, f64::NAN, f64::NAN))
            .collect(),
        dash: 0,
    }];
    for (fit, label, dash) in [(s.zipf, "fit, all ranks", 1), (s.zipf_head, "fit, head", 2)] {
        let Some(f) = fit else { continue };
        // The fitted line through the points' centre of mass in log-log space.
        let n = f.ranks as usize;
        let (mx, my) = (0..n).fold((0.0, 0.0), |(x, y), i| {
            (
                x + ((i + 1) as f64).ln() / n as f64,
                y + (s.counts_by_rank[i] as f64).ln() / n as f64,
            )
        });
        series.push(Series {
            label: format!("{label}: alpha {:.3}", f.alpha),
            points: [1, n]
                .iter()
                .map(|&r| {
                    let x = (r as f64).ln();
                    (
                        (r as f64),
                        (my - f.alpha * (x - mx)).exp(),
                        f64::NAN,
                        f64::NAN,
                    )
                })
                .collect(),
            dash,
        });
    }
    save(
        Chart {
            title: "Popularity: requests by rank".into(),
            x_label: "rank".into(),
            y_label: "requests".into(),
            log_x: true,
            log_y: true,
            series,
            ..Chart::default()
        },
        "popularity.svg",
    )?;
    let mut series = Vec::new();
    for (h, label) in [
        (&s.reuse_requests, "reuse distance (requests)"),
        (&s.interarrival, "inter-arrival time"),
    ] {
        if h.iter().sum::<u64>() > 0 {
            series.push(Series {
                label: label.into(),
                points: cdf_points(h),
                dash: series.len(),
            });
        }
    }
    let (objects, requests) = (s.objects as f64, s.requests as f64);
    let (mut o, mut r) = (0, 0);
    let mut points = (Vec::new(), Vec::new());
    for (i, &(size, objs, reqs)) in s.sizes.iter().enumerate() {
        o += objs;
        r += reqs;
        // At most about 300 points: keep a size when it is 2 % above the last kept, and the last.
        let keep = points
            .0
            .last()
            .is_none_or(|p: &(f64, f64, f64, f64)| f64::from(size) > p.0 * 1.02)
            || i + 1 == s.sizes.len();
        if keep {
            points
                .0
                .push((f64::from(size), o as f64 / objects, f64::NAN, f64::NAN));
            points
                .1
                .push((f64::from(size), r as f64 / requests, f64::NAN, f64::NAN));
        }
    }
    save(
        Chart {
            title: "Sizes (CDF)".into(),
            x_label: "size (bytes)".into(),
            y_label: "share at or below".into(),
            log_x: s
                .sizes
                .last()
                .is_some_and(|l| l.0 > 10 * s.sizes[0].0.max(1)),
            y_bounds: Some((0.0, 1.0)),
            series: vec![
                Series {
                    label: "objects".into(),
                    points: points.0,
                    dash: 0,
                },
                Series {
                    label: "requests".into(),
                    points: points.1,
                    dash: 1,
                },
            ],
            ..Chart::default()
        },
        "sizes.svg",
    )?;
    if !series.is_empty() {
        save(
            Chart::shares(
                "Reuse and inter-arrival (CDF)".into(),
                "requests, or trace time units",
                "share at or below",
                series,
            ),
            "reuse.svg",
        )?;
    }
    Ok(written)
}

/// Characterises the trace in one streaming pass.
pub fn trace_stats(input: &TraceInput) -> Result<Summary> {
    let mut t = TraceStats::new();
    stream(input, true, false, spare_core(1), |reqs| {
        for r in reqs {
            t.add(r);
        }
    })?;
    t.summary()
        .ok_or_else(|| Error::file(&input.path, "no requests".to_string()))
}

/// The summary as one JSON document: every figure and histogram (`cdnlab trace-stats --json`).
pub fn to_json(input: &TraceInput, s: &Summary) -> serde_json::Value {
    json!({
        "trace": input.path.display().to_string(),
        "requests": s.requests,
        "objects": s.objects,
        "bytes_requested": s.bytes_requested,
        "working_set_bytes": s.working_set_bytes,
        "one_hit_objects": s.one_hit_objects,
        "one_hit_share_objects": s.one_hit_share_objects,
        "one_hit_share_requests": s.one_hit_share_requests,
        "request_size": quantiles_json(&s.request_size),
        "object_size": quantiles_json(&s.object_size),
        "zipf": fit_json(&s.zipf),
        "zipf_head": fit_json(&s.zipf_head),
        "first_time": s.first_time,
        "last_time": s.last_time,
        "out_of_order": s.backwards,
        "reuse_distance_requests": histogram_json(&s.reuse_requests),
        "reuse_time": histogram_json(&s.reuse_time),
        "interarrival_time": histogram_json(&s.interarrival),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_cdf() {
        assert_eq!(plotted_ranks(5), [1, 2, 3, 4, 5]);
        let r = plotted_ranks(1_000_000);
        assert_eq!(*r.last().unwrap(), 1_000_000);
        assert!(r.windows(2).all(|w| w[0] < w[1]) && r.len() < 200);
        // Buckets: 0 -> 1 value, [1,2) -> 1, [2,4) -> 2.
        let c = cdf_points(&[1, 1, 2]);
        assert_eq!(
            c.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            [(1.0, 0.5), (3.0, 1.0)]
        );
        assert_eq!(histogram_quantile(&[1, 1, 2], 0.5), Some(1));
        assert_eq!(histogram_quantile(&[0, 0], 0.5), None);
    }
}
