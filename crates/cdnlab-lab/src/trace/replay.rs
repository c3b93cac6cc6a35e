//! Replays a trace through several cache policies at several sizes in one run and reports each
//! one's miss ratio and throughput, with reading and simulation timed separately; draws the
//! miss-ratio curve when there are several sizes.
//!
//! Sizes below 1 are fractions of the trace's working set (distinct objects, or the bytes of
//! distinct objects at their first request), truncated as libCacheSim's `cachesim` does; 1 or
//! more is an absolute capacity. The (policy, size) caches are shared out over worker threads;
//! each worker streams the trace once and feeds every chunk to each of its caches, so memory
//! stays constant in the trace's length and the results do not depend on the thread count.

use super::{TraceInput, spare_core, stream};
use crate::error::{ArgStyle, Error, Result};
use crate::plot::Series;
use cdnlab::Named;
use cdnlab::cache::admission::Admission;
use cdnlab::cache::mrc::{SmallestHashes, SpatialSample};
use cdnlab::cache::strata::{Estimator, ObjectCounts, Strata};
use cdnlab::cache::ttl::Ttl;
use cdnlab::cache::{Cache, Capacity, Policy, Tally, Unit};
use cdnlab::workload::Request;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The fewest objects a miniature cache should hold: below it the sample's few objects, and a
/// policy's small parts (S3-FIFO's small queue, a tenth; W-TinyLFU's window, a hundredth) make
/// the estimate unreliable. `cdnlab mrc`'s default sizes start there; smaller ones are warned of.
pub const MIN_MINIATURE: u64 = 100;

/// The seed of `prob:P` admission's generator in a replay.
pub const ADMISSION_SEED: u64 = 1;

/// What to replay: every (policy, size) pair, in this order.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    pub input: TraceInput,
    pub policies: Vec<Policy>,
    pub sizes: Vec<SizeSpec>,
    pub unit: Unit,
    /// What a miss must pass to be stored, in front of every policy.
    pub admission: Admission,
    /// Worker threads (None: one per core). Results do not depend on it.
    pub threads: Option<usize>,
    /// Miniature simulation: replay only a spatial sample of the objects, each cache scaled by
    /// the sample's rate (None: the whole trace).
    pub sample: Option<Sampling>,
    /// Which objects a sample draws ([`cdnlab::cache::mrc::SampleKey`]; 0: the default sample).
    pub sample_seed: u64,
    /// How errors name the arguments.
    pub style: ArgStyle,
    /// Objects expire by this rule ([`Ttl`]; None: never).
    pub ttl: Option<Ttl>,
    /// How a miniature's misses become the whole trace's ratios ([`Estimator`]).
    pub estimator: Estimator,
}

/// How a miniature simulation samples the objects ([`SpatialSample`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// This share of the objects, in (0, 1].
    Rate(f64),
    /// This many objects (those with the smallest hashes; every object when the trace has
    /// fewer), found in a first pass.
    Objects(usize),
    /// A sample already settled (by an earlier pass).
    Settled(SpatialSample),
}

impl Sampling {
    /// The sampling asked for by a rate or a number of objects (at most one of them); `rate`
    /// and `size` name the two arguments in errors.
    pub fn from_args(
        rate: Option<f64>,
        objects: Option<usize>,
        names: (&str, &str),
    ) -> Result<Option<Sampling>> {
        match (rate, objects) {
            (Some(_), Some(_)) => Err(Error::Usage(format!(
                "{} and {}: give one (a share of the objects, or a number of them)",
                names.0, names.1
            ))),
            (Some(r), None) if !(r > 0.0 && r <= 1.0) => Err(Error::Usage(format!(
                "{} {r}: the share of objects sampled must be above 0, at most 1",
                names.0
            ))),
            (None, Some(0)) => Err(Error::Usage(format!(
                "{} 0: sample at least 1 object",
                names.1
            ))),
            (Some(r), None) => Ok(Some(Sampling::Rate(r))),
            (None, Some(k)) => Ok(Some(Sampling::Objects(k))),
            (None, None) => Ok(None),
        }
    }
}

/// A requested size: a fraction of the working set, a capacity in the replay's unit, or a
/// capacity given with a byte unit (`64MiB`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Fraction(f64),
    Absolute(u64),
    Bytes(u64),
}

/// Parses the sizes asked for, one item each: a number above 0 (below 1 a fraction of the
/// working set, else a whole capacity in the replay's unit) or a byte size with its unit (`KB`,
/// `MB`, `GB` are powers of 1000, `KiB`, `MiB`, `GiB` of 1024; any case, a space allowed).
/// `what` names the argument in errors (`--size` on the command line, `sizes` in Python).
pub fn parse_sizes<S: AsRef<str>>(items: &[S], what: &str) -> Result<Vec<SizeSpec>> {
    let bad = |t: &str, why: &str| {
        Error::Usage(format!(
            "{what} `{t}`: {why} (sizes: below 1 a fraction of the working set, e.g. 0.01; 1 or \
             more a whole capacity, e.g. 1000; or bytes with a unit, e.g. 512KiB, 64MB, 1.5GiB)"
        ))
    };
    let mut out = Vec::new();
    for t in items.iter().map(|t| t.as_ref().trim()) {
        let spec = match t.parse::<f64>() {
            Ok(x) if !(x > 0.0 && x.is_finite()) => return Err(bad(t, "a size must be above 0")),
            Ok(x) if x < 1.0 => SizeSpec::Fraction(x),
            Ok(x) if x.fract() == 0.0 && x <= u64::MAX as f64 => SizeSpec::Absolute(x as u64),
            Ok(_) => return Err(bad(t, "a capacity of 1 or more must be a whole number")),
            Err(_) if t.is_empty() => return Err(bad(t, "not a number")),
            Err(_) => match parse_size::parse_size(t) {
                Ok(0) => return Err(bad(t, "a size must be at least 1 byte")),
                Ok(b) => SizeSpec::Bytes(b),
                Err(_) => return Err(bad(t, "not a number, nor a byte size")),
            },
        };
        if out.contains(&spec) {
            return Err(bad(t, "given twice"));
        }
        out.push(spec);
    }
    Ok(out)
}

/// The replay's unit: the one asked for, or bytes when a size has a byte unit, else objects.
/// A byte size with capacities in objects is refused. `what` names the argument in errors.
pub fn size_unit(sizes: &[SizeSpec], asked: Option<Unit>, what: &str) -> Result<Unit> {
    let in_bytes = sizes.iter().any(|s| matches!(s, SizeSpec::Bytes(_)));
    match asked {
        Some(Unit::Objects) if in_bytes => Err(Error::Usage(format!(
            "{what}: a size with a byte unit (KiB, MB, ...) needs capacities in bytes, not \
             objects: leave the unit out, or ask for bytes"
        ))),
        Some(u) => Ok(u),
        None if in_bytes => Ok(Unit::Bytes),
        None => Ok(Unit::Objects),
    }
}

/// Parses the policies asked for, one name an item, or the one item `all`.
pub fn parse_policies<S: AsRef<str>>(items: &[S]) -> Result<Vec<Policy>> {
    if let [one] = items
        && one.as_ref().trim() == "all"
    {
        return Ok(Policy::ALL.to_vec());
    }
    let mut out = Vec::new();
    for t in items.iter().map(|t| t.as_ref().trim()) {
        let p: Policy = t.parse()?;
        if out.contains(&p) {
            return Err(Error::Usage(format!("--policy {t}: given twice")));
        }
        out.push(p);
    }
    Ok(out)
}

/// Peak resident memory of this process (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What a first pass over the trace finds: the working set (distinct objects, and their bytes
/// at each one's first request: libCacheSim's `cal_working_set_size`, without its sampling of
/// traces above 1 GiB), and the `k` objects of a fixed-size sample.
pub(crate) fn first_pass(
    a: &TraceInput,
    sized: bool,
    wss: bool,
    k: Option<usize>,
    seed: u64,
) -> Result<(Option<WorkingSet>, Option<SpatialSample>)> {
    let mut seen = cdnlab::idmap::IdSet::with_capacity(1 << 12);
    let mut bytes = 0u64;
    let mut largest = 0u32;
    let mut smallest = k
        .map(SmallestHashes::new)
        .transpose()
        .map_err(|e| Error::Usage(e.to_string()))?
        .map(|s| s.seeded(seed));
    stream(a, sized, false, spare_core(1), |reqs| {
        for r in reqs {
            if wss && seen.insert(r.id) {
                bytes += u64::from(r.size);
                largest = largest.max(r.size);
            }
            if let Some(s) = smallest.as_mut() {
                s.access(r.id);
            }
        }
    })?;
    Ok((
        wss.then_some(WorkingSet {
            objects: seen.len() as u64,
            bytes,
            largest: u64::from(largest),
        }),
        smallest.map(|s| s.sample()),
    ))
}

/// Records a worker takes at a time from [`Presampled`] requests.
const PRESAMPLED_CHUNK: usize = 1 << 14;

/// The sampled requests the `strata` estimator's first pass kept, and the whole trace's
/// requests, bytes and requests with a TTL, so that the replays need not read the trace again.
struct Presampled {
    requests: Vec<Request>,
    whole: (u64, u64, u64),
    /// Seconds of reading in that pass.
    read_s: f64,
}

/// The `strata` estimator's first pass: every object's request count and first size (which
/// give the working set and a fixed-size sample's objects as well) and, given a sample known
/// in advance, its requests (32 bytes each, R x the trace's requests in memory).
fn count_pass(
    a: &TraceInput,
    sized: bool,
    keep: Option<SpatialSample>,
) -> Result<(ObjectCounts, Option<Presampled>)> {
    let mut counts = ObjectCounts::default();
    let mut kept = keep.map(|_| Presampled {
        requests: Vec::new(),
        whole: (0, 0, 0),
        read_s: 0.0,
    });
    let read_s = stream(a, sized, false, spare_core(1), |reqs| {
        counts.add(reqs);
        if let (Some(s), Some(p)) = (keep, kept.as_mut()) {
            p.requests
                .extend(reqs.iter().filter(|r| s.keeps(r.id)).copied());
            p.whole.0 += reqs.len() as u64;
            p.whole.1 += reqs.iter().map(|r| u64::from(r.size)).sum::<u64>();
            p.whole.2 += reqs.iter().filter(|r| r.ttl > 0).count() as u64;
        }
    })?;
    if let Some(p) = kept.as_mut() {
        p.read_s = read_s;
    }
    Ok((counts, kept))
}

/// A trace's distinct objects, their bytes (each at its first request), and the largest of
/// those sizes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WorkingSet {
    pub objects: u64,
    pub bytes: u64,
    pub largest: u64,
}

/// One (policy, size) replay's outcome.
struct Outcome {
    policy: Policy,
    spec: SizeSpec,
    /// The size asked for, and the cache replayed (smaller in a miniature simulation).
    size: u64,
    capacity: u64,
    requests: u64,
    bytes: u64,
    /// The whole trace's requests and bytes (more than the above in a miniature), and its
    /// requests that carry a TTL (counted with `--ttl trace` only).
    whole: Whole,
    tally: Tally,
    sim_s: f64,
    cached_objects: usize,
    used: u64,
    heap_bytes: usize,
    /// The largest object requested, in the capacity's unit.
    largest: u64,
    /// Requests that found their object stale, and their bytes.
    expired: (u64, u64),
    /// Misses and missed bytes by strata group (the strata estimator; else empty).
    by_group: Vec<(u64, u64)>,
}

/// A cache being replayed, with its counters.
struct Job {
    policy: Policy,
    spec: SizeSpec,
    size: u64,
    capacity: u64,
    cache: Box<dyn Cache + Send>,
    requests: u64,
    bytes: u64,
    whole: Whole,
    tally: Tally,
    sim_s: f64,
    largest: u64,
    /// Misses and missed bytes by strata group (the strata estimator; else empty).
    by_group: Vec<(u64, u64)>,
}

/// Requests and bytes counted, summed chunk by chunk.
#[derive(Debug, Clone, Copy, Default)]
struct Whole(u64, u64, u64);

impl std::ops::AddAssign<(u64, u64, u64)> for Whole {
    fn add_assign(&mut self, (n, b, t): (u64, u64, u64)) {
        self.0 += n;
        self.1 += b;
        self.2 += t;
    }
}

/// A worker's jobs (with their order numbers) after the replay, and its reading time.
type WorkerDone = (Vec<(usize, Job)>, f64);

/// Replays the jobs: worker w takes jobs w, w + W, ... and streams the trace once for them.
/// Returns the outcomes in job order and the largest reading time of a worker.
fn replay_all(
    a: &ReplayPlan,
    sized: bool,
    sample: Option<SpatialSample>,
    strata: Option<&Strata>,
    presampled: Option<&Presampled>,
    jobs: Vec<Job>,
    threads: usize,
) -> Result<(Vec<Outcome>, f64)> {
    let workers = threads.clamp(1, jobs.len().max(1));
    let read_ahead = spare_core(workers);
    let mut shares: Vec<Vec<(usize, Job)>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, j) in jobs.into_iter().enumerate() {
        shares[i % workers].push((i, j));
    }
    let results: Vec<Result<WorkerDone>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|mut share| {
                s.spawn(move || {
                    let offline = share.iter().any(|(_, j)| j.policy.offline());
                    let mut kept = Vec::new();
                    let (mut groups, mut hits) = (Vec::new(), Vec::new());
                    let mut feed = |all: &[Request], presampled: bool| {
                        // A miniature simulation sees only the sampled objects' requests.
                        let reqs = match sample {
                            Some(_) if presampled => all,
                            Some(s) => {
                                kept.clear();
                                kept.extend(all.iter().filter(|r| s.keeps(r.id)).copied());
                                &kept[..]
                            }
                            None => all,
                        };
                        // Once a chunk for all the worker's caches: the bytes requested, and
                        // the largest object (for the warning that a cache never filled).
                        let (bytes, largest) = reqs.iter().fold((0u64, 0u32), |(b, m), r| {
                            (b + u64::from(r.size), m.max(r.size))
                        });
                        // The whole trace's, which a miniature's ratios are taken over.
                        let all_bytes = if sample.is_some() {
                            all.iter().map(|r| u64::from(r.size)).sum()
                        } else {
                            bytes
                        };
                        let with_ttl = if a.ttl == Some(Ttl::Trace) {
                            all.iter().filter(|r| r.ttl > 0).count() as u64
                        } else {
                            0
                        };
                        // Each sampled request's strata group, once for all the caches.
                        if let Some(st) = strata {
                            groups.clear();
                            groups.extend(reqs.iter().map(|r| {
                                st.group(r.id)
                                    .expect("the strata hold every object of the sample")
                            }));
                        }
                        for (_, j) in share.iter_mut() {
                            if !presampled {
                                j.whole += (all.len() as u64, all_bytes, with_ttl);
                            }
                            let t = Instant::now();
                            if strata.is_some() {
                                j.tally += j.cache.replay_hits_dyn(reqs, &mut hits);
                                for ((r, &g), &hit) in reqs.iter().zip(&groups).zip(&hits) {
                                    let miss = u64::from(!hit);
                                    j.by_group[g].0 += miss;
                                    j.by_group[g].1 += miss * u64::from(r.size);
                                }
                            } else {
                                j.tally += j.cache.replay_dyn(reqs);
                            }
                            j.sim_s += t.elapsed().as_secs_f64();
                            j.requests += reqs.len() as u64;
                            j.bytes += bytes;
                            j.largest = j.largest.max(if sized { u64::from(largest) } else { 1 });
                        }
                    };
                    let read_s = match presampled {
                        // The strata pass kept the sampled requests: no second reading.
                        Some(p) => {
                            p.requests
                                .chunks(PRESAMPLED_CHUNK)
                                .for_each(|c| feed(c, true));
                            for (_, j) in share.iter_mut() {
                                j.whole += p.whole;
                            }
                            p.read_s
                        }
                        None => {
                            stream(&a.input, sized, offline, read_ahead, |all| feed(all, false))?
                        }
                    };
                    Ok((share, read_s))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("replay worker panicked"))
            .collect()
    });
    let mut done = Vec::new();
    let mut read_s: f64 = 0.0;
    for r in results {
        let (share, t) = r?;
        read_s = read_s.max(t);
        done.extend(share);
    }
    done.sort_by_key(|(i, _)| *i);
    let outcomes = done
        .into_iter()
        .map(|(_, j)| (j.cache.occupancy(), j))
        .map(|(occupancy, j)| Outcome {
            policy: j.policy,
            spec: j.spec,
            size: j.size,
            capacity: j.capacity,
            requests: j.requests,
            bytes: j.bytes,
            whole: j.whole,
            tally: j.tally,
            sim_s: j.sim_s,
            cached_objects: occupancy.objects,
            used: occupancy.used,
            heap_bytes: occupancy.heap_bytes,
            largest: j.largest,
            expired: j.cache.expired(),
            by_group: j.by_group,
        })
        .collect();
    Ok((outcomes, read_s))
}

/// One (policy, size) replay's outcome: the columns of `cdnlab cache-replay --csv` (and the
/// keys of `--json`), in order.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayRow {
    pub trace: String,
    pub format: &'static str,
    #[serde(serialize_with = "by_name")]
    pub policy: Policy,
    pub size: u64,
    pub size_fraction: Option<f64>,
    pub size_unit: &'static str,
    pub admission: String,
    /// The TTL rule (`none`, `trace`, seconds, or size classes).
    pub ttl: String,
    /// Miniature simulation: the share of the objects sampled, and the cache replayed for
    /// `size` (the counts below are then the sample's).
    pub sample_rate: Option<f64>,
    /// The sample's seed ([`ReplayPlan::sample_seed`]), when sampling.
    pub sample_seed: Option<u64>,
    pub miniature_size: Option<u64>,
    pub requests: u64,
    pub hits: u64,
    pub misses: u64,
    /// Misses that found their object stale (revalidations: in `misses` too), and their bytes
    /// (in `miss_bytes` too).
    pub expired: u64,
    pub expired_bytes: u64,
    pub miss_ratio: f64,
    pub hit_ratio: f64,
    /// Bytes requested (each request's object size), served from the cache, and not.
    pub bytes: u64,
    pub hit_bytes: u64,
    pub miss_bytes: u64,
    /// Miss bytes over bytes requested: what the origin's egress and the backbone carry.
    pub byte_miss_ratio: f64,
    pub byte_hit_ratio: f64,
    pub read_seconds: f64,
    pub sim_seconds: f64,
    pub mreq_per_s: f64,
    pub cached_objects: usize,
    pub cache_heap_bytes: usize,
    pub heap_bytes_per_cached_object: f64,
    pub working_set_objects: Option<u64>,
    pub working_set_bytes: Option<u64>,
    pub peak_rss_bytes: Option<u64>,
    /// What the numbers may not say on their own ([`warnings`]); empty when nothing is odd.
    pub warnings: Vec<String>,
}

/// The column names of [`ReplayRow`], in order.
pub const REPLAY_COLUMNS: [&str; 33] = [
    "trace",
    "format",
    "policy",
    "size",
    "size_fraction",
    "size_unit",
    "admission",
    "ttl",
    "sample_rate",
    "sample_seed",
    "miniature_size",
    "requests",
    "hits",
    "misses",
    "expired",
    "expired_bytes",
    "miss_ratio",
    "hit_ratio",
    "bytes",
    "hit_bytes",
    "miss_bytes",
    "byte_miss_ratio",
    "byte_hit_ratio",
    "read_seconds",
    "sim_seconds",
    "mreq_per_s",
    "cached_objects",
    "cache_heap_bytes",
    "heap_bytes_per_cached_object",
    "working_set_objects",
    "working_set_bytes",
    "peak_rss_bytes",
    "warnings",
];

fn by_name<S: serde::Serializer, T: Named>(v: &T, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(v.name())
}

/// A finished replay: one row per (policy, size), in the order asked, and what the text table
/// and the plot need besides.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub rows: Vec<ReplayRow>,
    pub policies: Vec<Policy>,
    /// The working set (objects, bytes), when a size was a fraction of it.
    pub wss: Option<(u64, u64)>,
    pub unit: Unit,
    /// Seconds of reading (the slowest worker's pass).
    pub read_s: f64,
    /// Seconds to count the working set.
    pub wss_s: f64,
    pub threads: usize,
}

/// The `strata` estimator's first pass made ahead of the replays ([`count_ahead`]), for a
/// caller that needs the working set before it can settle its sizes.
pub(crate) struct Counted {
    counts: ObjectCounts,
    presampled: Option<Presampled>,
}

impl Counted {
    /// The working set the pass counted.
    pub(crate) fn working_set(&self) -> WorkingSet {
        let (bytes, largest) = self.counts.bytes_and_largest();
        WorkingSet {
            objects: self.counts.objects(),
            bytes,
            largest,
        }
    }
}

/// The sample `a` asks for when it is known before any pass (a rate, or one already settled),
/// and the one whose requests the `strata` estimator's first pass keeps in memory (the same,
/// unless an offline policy needs the next accesses that only a reading of the trace fills in).
fn known_sample(a: &ReplayPlan) -> Result<(Option<SpatialSample>, Option<SpatialSample>)> {
    let known = match a.sample {
        Some(Sampling::Rate(r)) => Some(
            SpatialSample::at_rate(r)
                .map_err(|e| Error::Usage(e.to_string()))?
                .seeded(a.sample_seed),
        ),
        Some(Sampling::Settled(s)) => Some(s),
        Some(Sampling::Objects(_)) | None => None,
    };
    let keep = known.filter(|_| !a.policies.iter().any(|p| p.offline()));
    Ok((known, keep))
}

/// The `strata` estimator's first pass over `a`'s trace, made ahead so that its working set can
/// settle the sizes of the plan then given to [`replay_counted`] (`cdnlab mrc` without sizes
/// reads the trace once instead of twice).
pub(crate) fn count_ahead(a: &ReplayPlan) -> Result<Counted> {
    let (_, keep) = known_sample(a)?;
    let (counts, presampled) = count_pass(&a.input, a.unit == Unit::Bytes, keep)?;
    Ok(Counted { counts, presampled })
}

/// Replays the trace through every (policy, size) of `a`: what `cdnlab cache-replay` prints,
/// as data.
pub fn replay(a: &ReplayPlan) -> Result<Replayed> {
    replay_counted(a, None)
}

/// [`replay`], with the `strata` estimator's first pass already made for the same trace,
/// unit, sample and policies ([`count_ahead`]; None: made here when needed).
pub(crate) fn replay_counted(a: &ReplayPlan, counted: Option<Counted>) -> Result<Replayed> {
    let policies = a.policies.clone();
    let specs = &a.sizes;
    let unit = a.unit;
    let sized = unit == Unit::Bytes;
    let t0 = Instant::now();
    let need_wss = specs.iter().any(|s| matches!(s, SizeSpec::Fraction(_)));
    let k = match a.sample {
        Some(Sampling::Objects(k)) => Some(k),
        _ => None,
    };
    let stratified = a.estimator == Estimator::Strata;
    if stratified && a.sample.is_none() {
        return Err(Error::Usage(format!(
            "{} strata weighs a miniature simulation's misses: give {} or {}",
            a.style.arg("--estimator"),
            a.style.arg("--sample"),
            a.style.arg("--sample-size")
        )));
    }
    // The strata estimator counts every object first; that pass gives the working set and a
    // fixed-size sample too. A sample at a rate is known before the pass, which then keeps its
    // requests (unless an offline policy needs the next accesses that only a reading of the
    // trace fills in).
    let (known, keep) = known_sample(a)?;
    let (counts, presampled) = match (stratified, counted) {
        (true, Some(c)) => (Some(c.counts), c.presampled),
        (true, None) => {
            let (c, p) = count_pass(&a.input, sized, keep)?;
            (Some(c), p)
        }
        (false, _) => (None, None),
    };
    let (wss, bottom_k) = match &counts {
        Some(c) => {
            let (bytes, largest) = c.bytes_and_largest();
            let bottom = k
                .map(|k| -> Result<SpatialSample> {
                    let mut s = SmallestHashes::new(k)
                        .map_err(|e| Error::Usage(e.to_string()))?
                        .seeded(a.sample_seed);
                    c.ids().for_each(|id| s.access(id));
                    Ok(s.sample())
                })
                .transpose()?;
            let w = WorkingSet {
                objects: c.objects(),
                bytes,
                largest,
            };
            (need_wss.then_some(w), bottom)
        }
        None if need_wss || k.is_some() => first_pass(&a.input, sized, need_wss, k, a.sample_seed)?,
        None => (None, None),
    };
    let wss = wss.map(|w| (w.objects, w.bytes));
    let sample = match a.sample {
        Some(Sampling::Objects(_)) => bottom_k,
        _ => known,
    };
    let strata: Option<Strata> = match (&counts, sample) {
        (Some(c), Some(s)) => Some(c.strata(&s)),
        _ => None,
    };
    drop(counts);
    let wss_s = t0.elapsed().as_secs_f64();
    let mut jobs = Vec::new();
    for &policy in &policies {
        for &spec in specs {
            let amount = match spec {
                SizeSpec::Absolute(n) => n,
                SizeSpec::Bytes(n) if sized => n,
                SizeSpec::Bytes(n) => {
                    return Err(Error::Usage(format!(
                        "size {n} bytes: a size with a byte unit needs capacities in bytes, not \
                         objects"
                    )));
                }
                SizeSpec::Fraction(f) => {
                    let (objects, bytes) = wss.expect("computed for fractions");
                    let whole = if sized { bytes } else { objects };
                    // Truncated, as libCacheSim does.
                    (whole as f64 * f) as u64
                }
            };
            // Checked before it is scaled.
            Capacity::new(amount, unit).map_err(|_| {
                Error::Usage(match spec {
                    SizeSpec::Fraction(f) => format!(
                        "{} {f}: {f} of the working set ({} {}) is less than 1; give a \
                         larger fraction",
                        a.style.arg("--size"),
                        wss.map_or(0, |w| if sized { w.1 } else { w.0 }),
                        unit.name()
                    ),
                    SizeSpec::Absolute(_) | SizeSpec::Bytes(_) => {
                        format!("{}: the capacity must be at least 1", a.style.arg("--size"))
                    }
                })
            })?;
            let capacity = match (sample, &strata) {
                // Scaled by the share of the objects drawn (the strata estimator).
                (Some(s), Some(st)) => {
                    miniature(s, amount, unit, &a.style.arg("--size"))?;
                    st.scaled(amount, unit).max(1)
                }
                (Some(s), None) => miniature(s, amount, unit, &a.style.arg("--size"))?,
                (None, _) => amount,
            };
            let cap = Capacity::new(capacity, unit).expect("at least 1");
            jobs.push(Job {
                policy,
                spec,
                size: amount,
                capacity,
                // One seed for every cache: `prob:P` draws the same numbers in each.
                cache: policy.build_full(cap, a.admission, ADMISSION_SEED, a.ttl.clone()),
                requests: 0,
                bytes: 0,
                whole: Whole::default(),
                tally: Tally::default(),
                sim_s: 0.0,
                largest: 0,
                by_group: vec![(0, 0); strata.as_ref().map_or(0, Strata::groups)],
            });
        }
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (outs, read_s) = replay_all(
        a,
        sized,
        sample,
        strata.as_ref(),
        presampled.as_ref(),
        jobs,
        threads,
    )?;
    let rss = peak_rss();
    let rows: Vec<ReplayRow> = outs
        .iter()
        .map(|o| {
            let n = o.requests;
            let hits = o.tally.hits;
            let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
            // A miniature's misses over the requests a share R of the whole trace's makes
            // (SHARDS_adj, Waldspurger et al. FAST'15 section 4.3, applied to the miniature):
            // hot objects sampled more or less often than their share are what makes the
            // sample's count differ, and their requests are mostly hits.
            let s_rate = sample.map_or(1.0, |s| s.rate());
            let misses = |m: u64, all: u64| (m as f64 / (s_rate * all as f64).max(1.0)).min(1.0);
            let miss_bytes = o.bytes - o.tally.hit_bytes;
            let (miss_ratio, hit_ratio, byte_miss_ratio, byte_hit_ratio) = match sample {
                Some(_) if strata.is_some() => {
                    let st = strata.as_ref().expect("checked");
                    let (m, b): (Vec<u64>, Vec<u64>) = o.by_group.iter().copied().unzip();
                    let (m, b) = st.estimate(&m, &b);
                    (m, 1.0 - m, b, 1.0 - b)
                }
                Some(_) => {
                    let (m, b) = (misses(n - hits, o.whole.0), misses(miss_bytes, o.whole.1));
                    (m, 1.0 - m, b, 1.0 - b)
                }
                None => (
                    ratio(n - hits, n),
                    ratio(hits, n),
                    ratio(miss_bytes, o.bytes),
                    ratio(o.tally.hit_bytes, o.bytes),
                ),
            };
            ReplayRow {
                trace: a.input.path.display().to_string(),
                format: a.input.format.name(),
                policy: o.policy,
                size: o.size,
                size_fraction: match o.spec {
                    SizeSpec::Fraction(f) => Some(f),
                    SizeSpec::Absolute(_) | SizeSpec::Bytes(_) => None,
                },
                size_unit: unit.name(),
                admission: a.admission.name(),
                ttl: a.ttl.as_ref().map_or_else(|| "none".into(), Ttl::name),
                sample_rate: sample.map(|s| s.rate()),
                sample_seed: sample.map(|_| a.sample_seed),
                miniature_size: sample.map(|_| o.capacity),
                requests: n,
                hits,
                misses: n - hits,
                expired: o.expired.0,
                expired_bytes: o.expired.1,
                miss_ratio,
                hit_ratio,
                bytes: o.bytes,
                hit_bytes: o.tally.hit_bytes,
                miss_bytes: o.bytes - o.tally.hit_bytes,
                byte_miss_ratio,
                byte_hit_ratio,
                read_seconds: read_s,
                sim_seconds: o.sim_s,
                mreq_per_s: n as f64 / o.sim_s.max(1e-9) / 1e6,
                cached_objects: o.cached_objects,
                cache_heap_bytes: o.heap_bytes,
                heap_bytes_per_cached_object: o.heap_bytes as f64 / o.cached_objects.max(1) as f64,
                working_set_objects: wss.map(|w| w.0),
                working_set_bytes: wss.map(|w| w.1),
                peak_rss_bytes: rss,
                warnings: warnings(o, unit, a.admission, a.ttl.as_ref()),
            }
        })
        .collect();
    Ok(Replayed {
        rows,
        policies,
        wss,
        unit,
        read_s,
        wss_s,
        threads,
    })
}

/// `--ttl`'s text as a rule (None: no TTLs); errors name the argument in `style`.
pub fn parse_ttl(text: Option<&str>, style: ArgStyle) -> Result<Option<Ttl>> {
    text.map(|t| {
        t.parse::<Ttl>()
            .map_err(|e| Error::Usage(format!("{}: {e}", style.arg("--ttl"))))
    })
    .transpose()
}

/// The miniature cache standing for `amount` at the sample's rate: refused, naming `flag`,
/// when it would hold nothing.
pub(super) fn miniature(s: SpatialSample, amount: u64, unit: Unit, flag: &str) -> Result<u64> {
    match s.scaled(amount) {
        0 => Err(Error::Usage(format!(
            "{flag} {amount} {}: sampling {:.4} of the objects, it stands for a miniature cache \
             of less than 1 {}; give sizes of at least {} {}, or sample more",
            unit.name(),
            s.rate(),
            match unit {
                Unit::Objects => "object",
                Unit::Bytes => "byte",
            },
            (0.5 / s.rate()).ceil() as u64,
            unit.name()
        ))),
        c => Ok(c),
    }
}

/// The warnings of one replay (also printed to stderr by the command):
/// - a cache that ended the trace empty with no hit cached nothing at its size (S3-FIFO's small
///   queue is a tenth of the capacity, so under 10 objects it has no room; W-TinyLFU's window is
///   a hundredth, so under 100 objects);
/// - a cache that ended with room for the trace's largest object besides what it holds never
///   had to evict: the size is above the trace's working set, and a larger one changes nothing.
fn warnings(o: &Outcome, unit: Unit, admission: Admission, ttl: Option<&Ttl>) -> Vec<String> {
    let mut w = Vec::new();
    if ttl == Some(&Ttl::Trace) && o.whole.0 > 0 && o.whole.2 == 0 {
        w.push(
            "TTLs from the trace: no request of the trace carries one (oracleGeneral and vscsi \
             have none; twr has its field, a CSV a TTL column), so nothing expired: give a rule \
             instead (e.g. 1h)"
                .to_string(),
        );
    }
    if o.size != o.capacity {
        let held = match unit {
            Unit::Objects => o.capacity as f64,
            // Objects of the mean size requested.
            Unit::Bytes => o.capacity as f64 * o.requests as f64 / o.bytes.max(1) as f64,
        };
        if held < MIN_MINIATURE as f64 {
            w.push(format!(
                "{} at {} {}: its miniature holds about {held:.0} objects, fewer than \
                 {MIN_MINIATURE}; the estimate is unreliable: give a larger size or sample more",
                o.policy.name(),
                o.size,
                unit.name()
            ));
        }
    }
    let at = if o.size == o.capacity {
        format!("{} at {} {}", o.policy.name(), o.capacity, unit.name())
    } else {
        format!(
            "{} at {} {} (miniature {})",
            o.policy.name(),
            o.size,
            unit.name(),
            o.capacity
        )
    };
    if o.requests > 0 && o.tally.hits == 0 && o.cached_objects == 0 {
        let share = match o.policy {
            Policy::S3Fifo | Policy::S3FifoPaper => Some(("small queue", "tenth", 10)),
            Policy::WTinyLfu => Some(("window", "hundredth", 100)),
            _ => None,
        };
        let why = if o.largest > o.capacity {
            format!(
                " (the largest object weighs {} {}: one heavier than the capacity is never \
                 admitted)",
                o.largest,
                unit.name()
            )
        } else if let Some((part, frac, k)) = share {
            let room = match unit {
                Unit::Objects => format!("{k} objects"),
                Unit::Bytes => format!("{k} times an object's size"),
            };
            format!(
                " (its {part} is a {frac} of the capacity, and takes every new object: give it \
                 room for at least {room})"
            )
        } else {
            String::new()
        };
        w.push(format!("{at} cached nothing: every request missed{why}"));
    } else if o.requests > 0 && o.used + o.largest <= o.capacity {
        let why = if admission == Admission::All {
            "the size is above the trace's working set".to_string()
        } else {
            format!(
                "the size is above what admission {} lets in",
                admission.name()
            )
        };
        w.push(format!(
            "{at} never filled ({} {} in use at the end): {why}, and a larger one changes nothing",
            o.used,
            unit.name()
        ));
    }
    w
}

/// Draws the miss-ratio curve of a replay: one line per policy, miss ratio against the capacity
/// (log axis), as an SVG at `svg_path` and the PNG beside it; returns the files written.
pub fn draw_mrc(a: &ReplayPlan, r: &Replayed, svg_path: &Path) -> Result<Vec<PathBuf>> {
    let name = a.input.path.file_name().map_or_else(
        || a.input.path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let series = r
        .policies
        .iter()
        .map(|p| Series {
            label: p.name().into(),
            points: r
                .rows
                .iter()
                .filter(|o| o.policy == *p)
                .map(|o| (o.size as f64, o.miss_ratio, f64::NAN, f64::NAN))
                .collect(),
            dash: 0,
        })
        .collect();
    crate::plot::write_mrc(
        format!("Miss-ratio curve: {name}"),
        r.unit.name(),
        series,
        svg_path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// REPLAY_COLUMNS names ReplayRow's fields in their order (the CSV header and the JSON
    /// keys come from the two).
    #[test]
    fn the_columns_are_the_row_fields_in_order() {
        let row = ReplayRow {
            trace: "t".into(),
            format: "csv",
            policy: Policy::Lru,
            size: 1,
            size_fraction: None,
            size_unit: "objects",
            admission: "all".into(),
            ttl: "none".into(),
            sample_rate: None,
            sample_seed: None,
            miniature_size: None,
            requests: 1,
            hits: 0,
            misses: 1,
            expired: 0,
            expired_bytes: 0,
            miss_ratio: 1.0,
            hit_ratio: 0.0,
            bytes: 1,
            hit_bytes: 0,
            miss_bytes: 1,
            byte_miss_ratio: 1.0,
            byte_hit_ratio: 0.0,
            read_seconds: 0.0,
            sim_seconds: 0.0,
            mreq_per_s: 0.0,
            cached_objects: 0,
            cache_heap_bytes: 0,
            heap_bytes_per_cached_object: 0.0,
            working_set_objects: None,
            working_set_bytes: None,
            peak_rss_bytes: None,
            warnings: vec![],
        };
        let text = serde_json::to_string(&row).unwrap();
        let at: Vec<usize> = REPLAY_COLUMNS
            .iter()
            .map(|c| {
                text.find(&format!("\"{c}\":"))
                    .unwrap_or_else(|| panic!("{c}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(text.matches("\":").count(), REPLAY_COLUMNS.len(), "{text}");
    }

    #[test]
    fn sizes_are_fractions_below_one_and_whole_capacities_above() {
        assert_eq!(
            parse_sizes(&["0.001", " 0.5", "1000"], "--size").unwrap(),
            [
                SizeSpec::Fraction(0.001),
                SizeSpec::Fraction(0.5),
                SizeSpec::Absolute(1000)
            ]
        );
        assert_eq!(
            parse_sizes(&["1"], "--size").unwrap(),
            [SizeSpec::Absolute(1)]
        );
        for (bad, why) in [
            ("0", "above 0"),
            ("-0.1", "above 0"),
            ("1.5", "whole number"),
            ("x", "not a number, nor a byte size"),
            ("1 XB", "not a number, nor a byte size"),
            ("0KiB", "at least 1 byte"),
            ("0.1,0.1", "twice"),
            ("1KiB,1024B", "twice"),
            ("", "not a number"),
            ("nan", "above 0"),
        ] {
            let items: Vec<&str> = bad.split(',').collect();
            for what in ["--size", "sizes"] {
                let e = parse_sizes(&items, what).unwrap_err().to_string();
                assert!(e.contains(why) && e.starts_with(what), "{bad}: {e}");
            }
        }
    }

    /// Byte units: KB, MB, GB in powers of 1000, KiB, MiB, GiB in powers of 1024, any case.
    #[test]
    fn sizes_take_byte_units() {
        let specs = parse_sizes(
            &["512KiB", "64 MB", "1.5GiB", "2kb", "1 mib", "10GB", "100B"],
            "--size",
        )
        .unwrap();
        assert_eq!(
            specs,
            [
                SizeSpec::Bytes(512 * 1024),
                SizeSpec::Bytes(64_000_000),
                SizeSpec::Bytes(3 << 29),
                SizeSpec::Bytes(2000),
                SizeSpec::Bytes(1 << 20),
                SizeSpec::Bytes(10_000_000_000),
                SizeSpec::Bytes(100),
            ]
        );
        // The unit follows: bytes when a size has a byte unit, unless objects were asked for.
        let w = |s: &[&str]| parse_sizes(s, "--size").unwrap();
        assert_eq!(
            size_unit(&w(&["1MiB", "0.1"]), None, "--size").unwrap(),
            Unit::Bytes
        );
        assert_eq!(
            size_unit(&w(&["100", "0.1"]), None, "--size").unwrap(),
            Unit::Objects
        );
        assert_eq!(
            size_unit(&w(&["100"]), Some(Unit::Bytes), "--size").unwrap(),
            Unit::Bytes
        );
        let e = size_unit(&w(&["1MiB"]), Some(Unit::Objects), "sizes").unwrap_err();
        assert!(e.to_string().contains("byte unit"), "{e}");
    }

    #[test]
    fn policies_by_name_or_all() {
        assert_eq!(
            parse_policies(&["lru", "sieve"]).unwrap(),
            [Policy::Lru, Policy::Sieve]
        );
        assert_eq!(parse_policies(&["all"]).unwrap(), Policy::ALL);
        let e = parse_policies(&["lru", "nope"]).unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("cache policy"), "{e}");
        assert!(
            parse_policies(&["lru", "lru"])
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
    }
}
