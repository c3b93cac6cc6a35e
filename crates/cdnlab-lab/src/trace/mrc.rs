//! The miss-ratio curve of a trace (capacities in objects or bytes). LRU's in one pass: exact
//! by stack distances, or estimated by SHARDS sampling. Any policy's by replaying it at every
//! size: in full, or in miniature (a spatial sample of the objects, each cache scaled by its
//! rate). CSV or JSON and a plot.

use super::{TraceInput, reads_ahead, spare_core, stream_prepared};
use crate::error::{ArgStyle, Error, Result};
use crate::plot::Series;
use cdnlab::Named;
use cdnlab::cache::mrc::{
    ByteHits, ByteShards, LruWindows, Shards, ShardsFixed, SpatialSample, StackDistances,
};
use cdnlab::cache::strata::Estimator;
use cdnlab::cache::{Policy, Unit};
use cdnlab::idmap::{IdTable, Renumber};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The keys of a curve's row (`cdnlab mrc --json`, Python's `cdnlab.mrc`), in the order
/// Python's table shows them.
pub const MRC_COLUMNS: [&str; 16] = [
    "policy",
    "size",
    "size_unit",
    "miss_ratio",
    "byte_miss_ratio",
    "exact_miss_ratio",
    "sample",
    "sample_size",
    "sample_seed",
    "final_rate",
    "method",
    "requests",
    "objects",
    "seconds",
    "exact_seconds",
    "warnings",
];

/// What curve to compute.
#[derive(Debug, Clone)]
pub struct MrcPlan {
    pub input: TraceInput,
    /// The eviction policy (LRU by stack distances unless `by_replay`; any other by replay).
    pub policy: Policy,
    /// Compute LRU's curve by replays too (as any other policy's), e.g. to check miniature
    /// simulation against the exact curve.
    pub by_replay: bool,
    /// Replays: worker threads (None: one per core). Results do not depend on it.
    pub threads: Option<usize>,
    /// How errors name the arguments.
    pub style: ArgStyle,
    /// Capacities in `unit` (None: 40 sizes spaced evenly on a log scale from 1 to the trace's
    /// distinct objects, or, in bytes, from its largest object to its working set).
    pub sizes: Option<Vec<u64>>,
    /// What the capacities count: objects (every object weighs 1) or bytes.
    pub unit: Unit,
    /// Estimate by SHARDS, sampling this share of the objects, in (0, 1].
    pub sample: Option<f64>,
    /// Estimate by fixed-size SHARDS, tracking at most this many objects.
    pub sample_size: Option<usize>,
    /// Which objects a sample draws ([`cdnlab::cache::mrc::SampleKey`]; 0: the default
    /// sample). Curves from several seeds show an estimate's spread.
    pub sample_seed: u64,
    /// With a sample: compute the exact curve in the same pass too.
    pub exact_too: bool,
    /// How a miniature simulation's misses become the curve ([`Estimator`]; SHARDS takes
    /// `adj` only).
    pub estimator: Estimator,
}

/// A computed curve.
#[derive(Debug, Clone)]
pub struct Mrc {
    pub sizes: Vec<u64>,
    pub unit: Unit,
    /// The curve asked for: the sampled one when sampling, else the exact one.
    pub miss_ratio: Vec<f64>,
    /// Its byte miss ratio (missed bytes over bytes requested), whatever the capacities count.
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
    /// The mean |sampled - exact| over the sizes, when both were computed.
    pub mean_error: Option<f64>,
    /// Seconds the exact curve took on its own (the full replays), beside a miniature's.
    pub exact_seconds: Option<f64>,
    pub policy: Policy,
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

/// Most capacities for which [`LruWindows`] computes the exact curve; a longer list (or none:
/// the default sizes are known only after the pass) takes [`StackDistances`]. The windows' cost
/// grows with the capacities a request hits: at 16 close sizes on a trace that hits often
/// (agree.sh's Zipf 0.9 trace, 1,000 to 15,931 objects) they took 1.04 of the distances' time,
/// at 12 0.93, at 10 0.86 (docs/cache.md).
const MAX_WINDOWS: usize = 12;

/// The exact LRU curve's pass: windows at the capacities asked for, or every stack distance,
/// over a hashed table of ids or an array of renumbered ones (one call per chunk, so a dynamic
/// one).
trait Exact {
    fn replay(&mut self, reqs: &[cdnlab::workload::Request]);
    fn distinct(&self) -> u64;
    /// Miss ratios and byte miss ratios at `sizes` (those the windows were made for).
    fn curves(&self, sizes: &[u64]) -> (Vec<f64>, Vec<f64>);
}

impl<T: IdTable> Exact for LruWindows<T> {
    fn replay(&mut self, reqs: &[cdnlab::workload::Request]) {
        LruWindows::replay(self, reqs);
    }
    fn distinct(&self) -> u64 {
        LruWindows::distinct(self)
    }
    fn curves(&self, sizes: &[u64]) -> (Vec<f64>, Vec<f64>) {
        LruWindows::curves(self, sizes).expect("the windows are made for the sizes asked for")
    }
}

impl<T: IdTable> Exact for StackDistances<T> {
    fn replay(&mut self, reqs: &[cdnlab::workload::Request]) {
        StackDistances::replay(self, reqs);
    }
    fn distinct(&self) -> u64 {
        StackDistances::distinct(self)
    }
    fn curves(&self, sizes: &[u64]) -> (Vec<f64>, Vec<f64>) {
        (self.curve(sizes), self.byte_curve(sizes))
    }
}

/// Whether the exact pass takes renumbered ids: where the renumbering runs on the reading
/// thread, beside the pass, and no sampled curve (which samples by the ids' hashes) shares the
/// stream. An array instead of a hashed table took the windows' pass from 32.1 to 28.3 ns a
/// request on agree.sh's Zipf 0.9 trace and from 38.3 to 28.6 on the 10^7-request trace
/// (`bench/floor`'s `windows`); on the pass's own thread the renumbering would cost about as
/// much (8.6 and 17.1 ns a request), so it is not done there (docs/cache.md, "Renumbered
/// ids"). `read_ahead`: a core is spare.
fn renumbering(a: &MrcPlan, sampled: bool, read_ahead: bool) -> bool {
    !sampled && reads_ahead(&a.input, read_ahead)
}

/// Computes the curve in one pass over the trace.
pub fn mrc(a: &MrcPlan) -> Result<Mrc> {
    let sampled = a.sample.is_some() || a.sample_size.is_some();
    if a.exact_too && !sampled {
        let n = |f| a.style.arg(f);
        return Err(Error::Usage(format!(
            "{} compares a sampled curve with the exact one: give {} or {}",
            n("--exact-too"),
            n("--sample"),
            n("--sample-size")
        )));
    }
    if a.estimator != Estimator::Adj && !sampled {
        let n = |f| a.style.arg(f);
        return Err(Error::Usage(format!(
            "{} {} weighs a miniature simulation's misses: give {} or {}",
            n("--estimator"),
            a.estimator.name(),
            n("--sample"),
            n("--sample-size")
        )));
    }
    if a.by_replay || a.policy != Policy::Lru {
        return mrc_replay(a);
    }
    if a.estimator != Estimator::Adj {
        let n = |f| a.style.arg(f);
        return Err(Error::Usage(format!(
            "{} {}: LRU's curve comes from SHARDS, which weighs nothing by class; the estimator \
             is for miniature simulations (another policy, or {})",
            n("--estimator"),
            a.estimator.name(),
            n("--replay")
        )));
    }
    if a.unit == Unit::Bytes {
        return mrc_bytes(a);
    }
    // Asked once: each call reads the cgroup's CPU quota.
    let read_ahead = spare_core(1);
    let renumber = renumbering(a, sampled, read_ahead);
    let mut exact = (!sampled || a.exact_too).then(|| -> Box<dyn Exact> {
        match (&a.sizes, renumber) {
            (Some(s), true) if s.len() <= MAX_WINDOWS => Box::new(LruWindows::renumbered(s)),
            (Some(s), false) if s.len() <= MAX_WINDOWS => Box::new(LruWindows::new(s)),
            (_, true) => Box::new(StackDistances::renumbered()),
            (_, false) => Box::new(StackDistances::new()),
        }
    });
    let mut numbers = renumber.then(Renumber::new);
    let mut shards = a
        .sample
        .map(|r| {
            Shards::new(r)
                .map(|s| s.seeded(a.sample_seed))
                .map_err(|_| {
                    Error::Usage(format!(
                        "{} {r}: the rate must be above 0, at most 1",
                        a.style.arg("--sample")
                    ))
                })
        })
        .transpose()?;
    let mut fixed = a
        .sample_size
        .map(|n| {
            ShardsFixed::new(n)
                .map(|s| s.seeded(a.sample_seed))
                .map_err(|_| {
                    Error::Usage(format!(
                        "{} {n}: at least 1 object",
                        a.style.arg("--sample-size")
                    ))
                })
        })
        .transpose()?;
    let t = Instant::now();
    let mut requests = 0u64;
    let prepare = |reqs: &mut [cdnlab::workload::Request]| {
        if let Some(n) = numbers.as_mut() {
            n.apply(reqs);
        }
    };
    stream_prepared(&a.input, false, false, read_ahead, prepare, |reqs| {
        requests += reqs.len() as u64;
        if let Some(e) = exact.as_mut() {
            e.replay(reqs);
        }
        for r in reqs {
            if let Some(s) = shards.as_mut() {
                s.access(r.id, r.size);
            }
            if let Some(s) = fixed.as_mut() {
                s.access(r.id, r.size);
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
    let (exact_curve, exact_bytes) = exact.as_ref().map(|e| e.curves(&sizes)).unzip();
    let sampled_curve = shards
        .as_ref()
        .map(|s| s.curve(&sizes))
        .or_else(|| fixed.as_ref().map(|f| f.curve(&sizes)));
    // Item 1's byte miss ratio beside the request one: of the sample when sampling.
    let byte_curve = shards
        .as_ref()
        .map(|s| s.byte_curve(&sizes))
        .or_else(|| fixed.as_ref().map(|f| f.byte_curve(&sizes)))
        .or(exact_bytes);
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
    let mean_error = mean_gap(exact_curve.as_deref(), sampled_curve.as_deref());
    Ok(Mrc {
        sizes,
        unit: Unit::Objects,
        miss_ratio: main,
        byte_miss_ratio: byte_curve,
        warnings: Vec::new(),
        exact: exact_curve,
        sampled,
        method,
        final_rate: fixed.as_ref().map(ShardsFixed::rate),
        requests,
        objects,
        seconds,
        error,
        mean_error,
        exact_seconds: None,
        policy: Policy::Lru,
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

/// The mean |sampled - exact| over the sizes where both are numbers, when both curves were
/// computed.
fn mean_gap(exact: Option<&[f64]>, sampled: Option<&[f64]>) -> Option<f64> {
    let (e, s) = (exact?, sampled?);
    let gaps: Vec<f64> = e
        .iter()
        .zip(s)
        .map(|(a, b)| (a - b).abs())
        .filter(|g| g.is_finite())
        .collect();
    Some(gaps.iter().sum::<f64>() / gaps.len().max(1) as f64)
}

/// Any policy's curve by replaying it at each size (and LRU's, when asked): in full, or in
/// miniature with a sample; with `exact_too`, the full replays as well, each timed on its own.
fn mrc_replay(a: &MrcPlan) -> Result<Mrc> {
    use super::replay::{self, ReplayPlan, Sampling, SizeSpec};
    use cdnlab::cache::admission::Admission;
    let n = |f| a.style.arg(f);
    let sampling = Sampling::from_args(
        a.sample,
        a.sample_size,
        (&n("--sample"), &n("--sample-size")),
    )?;
    if a.exact_too && sampling.is_none() {
        return Err(Error::Usage(format!(
            "{} compares a miniature curve with the full replays: give {} or {}",
            n("--exact-too"),
            n("--sample"),
            n("--sample-size")
        )));
    }
    let sized = a.unit == Unit::Bytes;
    let t = Instant::now();
    let plan_for = |sample, sizes: Vec<SizeSpec>| ReplayPlan {
        input: a.input.clone(),
        policies: vec![a.policy],
        sizes,
        unit: a.unit,
        admission: Admission::All,
        threads: a.threads,
        sample,
        sample_seed: a.sample_seed,
        style: a.style,
        ttl: None,
        estimator: if sample.is_some() {
            a.estimator
        } else {
            Estimator::Adj
        },
    };
    // Without sizes, a first pass finds the working set and the largest object (and a
    // fixed-size sample), so that the default sizes reach the working set and each stands for
    // a miniature cache of at least 1. With the strata estimator at a rate, that pass is the
    // estimator's own, made here once and handed to the replays.
    let k = match sampling {
        Some(Sampling::Objects(k)) => Some(k),
        _ => None,
    };
    let ahead = match (&a.sizes, a.estimator, sampling) {
        (None, Estimator::Strata, Some(Sampling::Rate(_))) => {
            Some(replay::count_ahead(&plan_for(sampling, Vec::new()))?)
        }
        _ => None,
    };
    let first = if ahead.is_none() && (a.sizes.is_none() || k.is_some()) {
        Some(replay::first_pass(
            &a.input,
            sized,
            a.sizes.is_none(),
            k,
            a.sample_seed,
        )?)
    } else {
        None
    };
    let (wss, settled) = match (&ahead, first) {
        (Some(c), _) => (Some(c.working_set()), None),
        (None, first) => first.map_or((None, None), |(w, s)| (w, s)),
    };
    let sampling = match (sampling, settled) {
        (Some(Sampling::Objects(_)), Some(s)) => Some(Sampling::Settled(s)),
        (s, _) => s,
    };
    let rate = match sampling {
        Some(Sampling::Rate(r)) => r,
        Some(Sampling::Settled(s)) => s.rate(),
        _ => 1.0,
    };
    let sizes = match (&a.sizes, wss) {
        (Some(s), _) => s.clone(),
        (None, Some(w)) => {
            // The smallest size whose miniature holds MIN_MINIATURE objects (of the mean size,
            // in bytes).
            let mean = if sized {
                w.bytes as f64 / w.objects.max(1) as f64
            } else {
                1.0
            };
            let lo = if sampling.is_some() {
                (replay::MIN_MINIATURE as f64 * mean / rate).ceil() as u64
            } else {
                1
            };
            if sized {
                thin(&byte_grid(), lo.max(w.largest), w.bytes.max(lo), 40)
            } else {
                log_sizes(w.objects, 40)
                    .into_iter()
                    .filter(|&c| c >= lo)
                    .collect()
            }
        }
        (None, None) => unreachable!("the first pass counts the working set without sizes"),
    };
    if sizes.is_empty() {
        return Err(Error::Usage(format!(
            "sampling {rate:.6} of the objects leaves no size with a miniature cache of at least \
             1: sample more"
        )));
    }
    // Each size asked for must stand for a miniature cache of at least 1 (refused here, so
    // that the message names this command's argument).
    if let Some(s) = match sampling {
        Some(Sampling::Rate(r)) => Some(SpatialSample::at_rate(r)?),
        Some(Sampling::Settled(s)) => Some(s),
        _ => None,
    } {
        for &c in &sizes {
            replay::miniature(s, c, a.unit, &n("--sizes"))?;
        }
    }
    let specs: Vec<SizeSpec> = sizes
        .iter()
        .map(|&c| {
            if sized {
                SizeSpec::Bytes(c)
            } else {
                SizeSpec::Absolute(c)
            }
        })
        .collect();
    let plan = |sample| plan_for(sample, specs.clone());
    let main = replay::replay_counted(&plan(sampling), ahead)?;
    let seconds = t.elapsed().as_secs_f64();
    let (exact, exact_seconds) = if a.exact_too {
        let t = Instant::now();
        let r = replay::replay(&plan(None))?;
        (Some(r), Some(t.elapsed().as_secs_f64()))
    } else {
        (None, None)
    };
    let col = |r: &replay::Replayed, f: fn(&replay::ReplayRow) -> f64| {
        r.rows.iter().map(f).collect::<Vec<f64>>()
    };
    let miss_ratio = col(&main, |r| r.miss_ratio);
    let exact_curve = exact.as_ref().map(|e| col(e, |r| r.miss_ratio));
    let sampled = sampling.is_some();
    let sampled_curve = sampled.then(|| miss_ratio.clone());
    let mut warnings: Vec<String> = main.rows.iter().flat_map(|r| r.warnings.clone()).collect();
    warnings.dedup();
    let by = match a.estimator {
        Estimator::Adj => "",
        Estimator::Strata => ", strata",
    };
    let method = match sampling {
        Some(Sampling::Rate(r)) => format!("miniature simulation, rate {r}{by}"),
        Some(_) => format!(
            "miniature simulation, {} objects (rate {rate:.6}){by}",
            a.sample_size.unwrap_or(0)
        ),
        None => "full replays".into(),
    };
    Ok(Mrc {
        unit: a.unit,
        byte_miss_ratio: Some(col(&main, |r| r.byte_miss_ratio)),
        miss_ratio,
        warnings,
        error: largest_gap(exact_curve.as_deref(), sampled_curve.as_deref()),
        mean_error: mean_gap(exact_curve.as_deref(), sampled_curve.as_deref()),
        exact: exact_curve,
        sampled,
        method,
        final_rate: sampled.then_some(rate),
        requests: exact
            .as_ref()
            .unwrap_or(&main)
            .rows
            .first()
            .map_or(0, |r| r.requests),
        objects: wss.map_or(0, |w| w.objects),
        sizes,
        seconds,
        exact_seconds,
        policy: a.policy,
    })
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

/// The byte-weighted curve: exact by [`ByteHits`] (windows at a few sizes, else stack
/// distances), or by [`ByteShards`] at a fixed rate (fixed-size SHARDS counts objects only).
fn mrc_bytes(a: &MrcPlan) -> Result<Mrc> {
    if a.sample_size.is_some() {
        return Err(Error::Usage(format!(
            "{}: fixed-size SHARDS counts objects; with capacities in bytes give a rate ({})",
            a.style.arg("--sample-size"),
            a.style.arg("--sample")
        )));
    }
    // Without sizes, the candidates are a fine log grid, thinned to 40 after the pass.
    let caps = a.sizes.clone().unwrap_or_else(byte_grid);
    let read_ahead = spare_core(1);
    match renumbering(a, a.sample.is_some(), read_ahead) {
        true => {
            let exact = ByteHits::renumbered(&caps);
            mrc_bytes_by(a, caps, Some(exact), Some(Renumber::new()), read_ahead)
        }
        false => {
            let exact = (a.sample.is_none() || a.exact_too).then(|| ByteHits::new(&caps));
            mrc_bytes_by(a, caps, exact, None, read_ahead)
        }
    }
}

/// [`mrc_bytes`] with its exact pass (if any) made, over renumbered ids when `numbers` is
/// given.
fn mrc_bytes_by<T: IdTable + Clone>(
    a: &MrcPlan,
    caps: Vec<u64>,
    mut exact: Option<ByteHits<T>>,
    mut numbers: Option<Renumber>,
    read_ahead: bool,
) -> Result<Mrc> {
    let asked = a.sizes.clone();
    let mut shards = a
        .sample
        .map(|r| {
            ByteShards::new(r, &caps)
                .map(|s| s.seeded(a.sample_seed))
                .map_err(|_| {
                    Error::Usage(format!(
                        "{} {r}: the rate must be above 0, at most 1",
                        a.style.arg("--sample")
                    ))
                })
        })
        .transpose()?;
    let t = Instant::now();
    let mut requests = 0u64;
    // The largest object: the exact pass keeps it; without one, the sampling loop does.
    let mut largest = 0u32;
    let prepare = |reqs: &mut [cdnlab::workload::Request]| {
        if let Some(n) = numbers.as_mut() {
            n.apply(reqs);
        }
    };
    stream_prepared(&a.input, true, false, read_ahead, prepare, |reqs| {
        requests += reqs.len() as u64;
        if let Some(e) = exact.as_mut() {
            e.replay(reqs);
        }
        if let Some(s) = shards.as_mut() {
            for r in reqs {
                largest = largest.max(r.size);
                s.access(r.id, r.size);
            }
        }
    })?;
    let seconds = t.elapsed().as_secs_f64();
    let largest = exact.as_ref().map_or(largest, |e| e.largest());
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
    let (e, s) = (
        exact_curve.as_ref().map(misses),
        sampled_curve.as_ref().map(misses),
    );
    let (error, mean_error) = (
        largest_gap(e.as_deref(), s.as_deref()),
        mean_gap(e.as_deref(), s.as_deref()),
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
        mean_error,
        exact_seconds: None,
        policy: Policy::Lru,
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
        format!("{} miss-ratio curve", m.policy.name()),
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
