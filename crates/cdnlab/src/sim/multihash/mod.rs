//! The multi-hash DHT CDN simulated (spec `docs/spec/multihash.md`; as implemented:
//! `docs/multihash.md`).
//!
//! Discrete events at window granularity: time runs in windows of W time units; requests arrive
//! as a Poisson process (rate Lambda = load x nodes, each node serving 1 request per time unit at
//! capacity) and are served one after another in arrival order against the current replica
//! state; at each window's end come, in this order, replication and de-replication decided from
//! the window's per-replica counts, the scheduled crash, and (after the crash) one round of
//! repair. A flash crowd changes the arrival rate from one window to another. Replica state
//! changes only at window ends, so arrival times inside a window do not change any outcome and
//! are not drawn. The window-end rule is `dht::replication`'s ([`window_end`]), the repair round
//! `dht::repair`'s; `rbs.rs` holds the single-file experiment `rbs` (X1, X2, gaps).

pub mod experiment;
pub mod rbs;

use crate::Error;
use crate::dht::analysis;
use crate::dht::baselines::{self, Maglev, Placement};
use crate::dht::hash::file_key;
use crate::dht::repair;
pub use crate::dht::replication::Growth;
use crate::dht::replication::{Action, Phase, Rules, WindowEnd};
use crate::dht::ring::Ring;
use crate::dht::search::{self, Strategy};
use crate::dht::store::Store;
use crate::rng::Rng;
use crate::workload::popularity::{Law, Sampler};
use rand::RngExt;
use rand_distr::{Distribution, Poisson};
use std::collections::HashMap;

/// How many requests ahead the serving loop prefetches a file's replicas.
const AHEAD: usize = 8;
/// Requests whose files are drawn at a time (16 KiB of them: they stay in the cache until served).
const CHUNK: u64 = 4096;

/// Where a request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Replicas at h_1..h_K, found by a [`Strategy`]; replication on overload.
    MultiHash,
    /// Consistent hashing, one copy at h_1(f), no replication.
    SingleHash,
    /// Consistent hashing with bounded loads (factor `balance`).
    BoundedLoad,
    Rendezvous,
    Maglev,
}

/// How gaps are found and filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repair {
    None,
    /// Random gap removal: each replica i > 1 probes a uniform j in [1, i - 1] per round and
    /// refills it if missing.
    Rgr,
    /// Each replica i > 1 probes j = i - 1.
    Neighbour,
    /// Requests report the missing indices below the top they probe; refilled at window end.
    Request,
    /// As RGR, but the top replica moves into the gap instead of a new copy.
    Migrate,
}

crate::registry!(Policy, "DHT placement policy", [
    Policy::MultiHash => "multihash",
    Policy::SingleHash => "single-hash",
    Policy::BoundedLoad => "bounded-load",
    Policy::Rendezvous => "rendezvous",
    Policy::Maglev => "maglev",
]);
// `none` is listed last: the scenario default is RGR.
crate::registry!(Repair, "repair rule", [
    Repair::Rgr => "rgr",
    Repair::Neighbour => "neighbour",
    Repair::Request => "request",
    Repair::Migrate => "migrate",
    Repair::None => "none",
]);

/// One run's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub nodes: u32,
    pub vnodes: u32,
    pub files: u32,
    pub k: u32,
    pub alpha: f64,
    /// Offered load per node (Lambda = load x nodes requests per time unit).
    pub load: f64,
    /// Requests per time unit a replica takes before it is overloaded.
    pub c_high: f64,
    /// De-replication hysteresis: the top replica leaves when the others would stay below
    /// gamma x c_high.
    pub gamma: f64,
    pub shrink: bool,
    /// Window length W in time units.
    pub window: f64,
    pub growth: Growth,
    pub strategy: Strategy,
    pub policy: Policy,
    /// Bounded-load factor (1 + epsilon).
    pub balance: f64,
    /// Fraction of nodes that crash at the end of window `fail_at` (0: none).
    pub fail_fraction: f64,
    pub fail_at: u32,
    pub repair: Repair,
    /// The most popular file's demand is multiplied by `flash` from window `flash_start` to
    /// `flash_end` (1: no flash crowd).
    pub flash: f64,
    pub flash_start: u32,
    pub flash_end: u32,
    /// Windows simulated, and the final ones whose node loads are measured.
    pub horizon: u32,
    pub measure: u32,
}

impl Config {
    /// Checks ranges; errors name the parameter and what is allowed.
    pub fn validate(&self) -> Result<(), Error> {
        if self.nodes == 0 {
            return Err(Error::param("nodes", 0, "at least 1 node (N >= 1)"));
        }
        if self.files == 0 {
            return Err(Error::param("files", 0, "at least 1 file"));
        }
        if self.k == 0 {
            return Err(Error::param("k", 0, "at least 1 hash function (K >= 1)"));
        }
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(Error::param("alpha", self.alpha, "a finite number >= 0"));
        }
        if !(self.c_high.is_finite() && self.c_high > 0.0) {
            return Err(Error::param("c_high", self.c_high, "a finite number > 0"));
        }
        if !(0.0..=1.0).contains(&self.fail_fraction) {
            return Err(Error::param(
                "fail_fraction",
                self.fail_fraction,
                "a fraction in [0, 1]",
            ));
        }
        if !(self.gamma > 0.0 && self.gamma < 1.0) {
            return Err(Error::param("gamma", self.gamma, "a number in (0, 1)"));
        }
        if !(self.window.is_finite() && self.window > 0.0) {
            return Err(Error::param("window", self.window, "a duration > 0"));
        }
        if !(self.load.is_finite() && self.load > 0.0) {
            return Err(Error::param("load", self.load, "a number > 0"));
        }
        if self.balance < 1.0 {
            return Err(Error::param("balance", self.balance, "a factor >= 1"));
        }
        if self.measure == 0 || self.measure > self.horizon {
            return Err(Error::param(
                "measure",
                self.measure,
                format!("from 1 to horizon ({})", self.horizon),
            ));
        }
        Ok(())
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub requests: u64,
    /// Probes (ring lookups) per request.
    pub probes_per_request: f64,
    /// Requests that found no replica, per request.
    pub failure_rate: f64,
    /// Node load over the measured windows: max / mean, 99th percentile / mean, and the share
    /// of nodes above capacity.
    pub max_mean: f64,
    pub p99_mean: f64,
    pub over_capacity: f64,
    pub replicas: u64,
    /// Replicas of the most popular file at the end, and the steady-state count for its rate.
    pub top_replicas: u32,
    pub top_steady: u32,
    /// Fraction of files whose replica count equals max(1, ceil(lambda_f / c_high)) at the end.
    pub steady_match: f64,
    /// Mean |n_f - steady| / steady over files.
    pub steady_error: f64,
    /// Fraction of files inside the hysteresis band: ceil(lambda_f / c_high) <= n_f <=
    /// max(1, ceil(lambda_f / (gamma c_high))), both ends capped at K (noise in the windows
    /// moves counts inside it).
    pub in_band: f64,
    /// (window, file) pairs, before any crash, where a file's indices were not a prefix, and
    /// where its home copy (index 1) was missing: both 0 when replication, de-replication and
    /// CREATE_IF_ABSENT keep the spec's invariant.
    pub prefix_breaks: u64,
    pub home_missing: u64,
    /// Fraction of the 10 most popular files inside their band (the band's ends capped at K).
    pub hot_in_band: f64,
    /// Highest per-replica load of the top file in the final window, per time unit.
    pub top_replica_load: f64,
    /// Right after the crash: gaps, files with no replica left (the origin restores a home copy
    /// at the end of the window in which a request misses), and the request failure rate of the
    /// next window, measured and predicted by the exact recursion.
    pub gaps_after_failure: u64,
    pub lost_files: u64,
    pub failure_rate_after: f64,
    pub predicted_failure_after: f64,
    /// In the window after the crash, over files with a gap: requests served by replicas below
    /// the lowest gap, what the recursion expects, and what a uniform pick would give.
    pub below_gap_served: f64,
    pub below_gap_expected: f64,
    pub below_gap_uniform: f64,
    /// Windows after the crash until no gap is left (horizon - fail_at if never).
    pub repair_rounds: u32,
    /// Messages: per request (probes), per replica created (search probes + create), per
    /// repair round per replica.
    pub messages_per_replication: f64,
    pub repair_messages_per_round: f64,
    /// X6's references, computed from the replica state by the spec's formulas rather than by
    /// counting: the mean of 1 + H_K - H_n (or the recursion's mean where a file has gaps) over
    /// the requests and the standard error of the measured mean (RBS with multi-hash only, else
    /// 0); the messages per replica created with each search's closed form (gallop and bisect:
    /// 2 floor(log2(n - i)) + 2 probes from replica i of a prefix 1..n); and the messages per
    /// repair round as one probe per replica above the home plus one per refill.
    pub probes_expected: f64,
    pub probes_se: f64,
    pub replication_formula: f64,
    pub repair_formula: f64,
    /// CREATE_IF_ABSENT: attempts the arbiter refused because the replica existed (concurrent
    /// attempts at one index), and (window, file, index) triples held twice at a window's end.
    pub create_refused: u64,
    pub duplicate_replicas: u64,
    /// Mean Chord hops of a lookup on this ring (sampled).
    pub chord_hops: f64,
}

/// Run state.
struct Sim<'a> {
    cfg: &'a Config,
    ring: Ring,
    store: Store,
    /// The baseline's placement (`None` for multi-hash).
    placement: Option<Box<dyn Placement>>,
    /// Files requested this window (each once), for the end-of-window pass.
    touched: Vec<u32>,
    /// Scratch of that pass.
    scratch: Scratch,
    /// Requests per node this window and over the measured windows.
    node_load: Vec<u32>,
    measured_load: Vec<u64>,
    window_requests: u64,
    /// Reported gaps (file, index) for request-driven repair.
    reported: Vec<(u32, u32)>,
    /// Files a request found no replica of this window: the origin restores their home copy
    /// at the window's end.
    from_origin: Vec<u32>,
    probes: u64,
    failures: u64,
    replication_messages: u64,
    created: u64,
    repair_messages: u64,
    repair_rounds: u64,
    /// X6's references (see [`Outcome::probes_expected`]): RBS's probe mean and variance for a
    /// prefix 1..n (element n; 0 acts as 1), the recursion's for files with gaps this window,
    /// and the sums over requests, replications and repair rounds.
    prefix_moments: Vec<(f64, f64)>,
    gapped_moments: HashMap<u32, (f64, f64)>,
    probe_moments: (f64, f64),
    replication_formula: u64,
    repair_formula: u64,
    create_refused: u64,
}

impl Sim<'_> {
    /// Serves one request for file `f`.
    fn request(&mut self, f: u32, rng: &mut Rng) -> bool {
        let cfg = self.cfg;
        let node = match self.placement.as_mut() {
            None => {
                let key = file_key(u64::from(f));
                let top = self.store.top(f);
                let report = cfg.repair == Repair::Request;
                let mut hit = None;
                let (store, ring, reported) = (&self.store, &self.ring, &mut self.reported);
                let l = search::lookup(cfg.strategy, cfg.k, top, rng, |i| {
                    // Nothing is held above the top replica, where most of RBS's probes land
                    // (K = 1024 against a handful held): a miss without a lookup.
                    if i > top {
                        return false;
                    }
                    match store.probe(ring, key, f, i) {
                        Some(h) => {
                            hit = Some(h);
                            true
                        }
                        None => {
                            if report && i < top {
                                reported.push((f, i));
                            }
                            false
                        }
                    }
                });
                self.probes += u64::from(l.probes);
                if cfg.strategy == Strategy::Rbs {
                    let (m, v) = self.moments(f);
                    self.probe_moments.0 += m;
                    self.probe_moments.1 += v;
                }
                match (l.served, hit) {
                    (Some(_), Some((node, slot))) => {
                        // The file's first request this window (all counts still 0; they sit
                        // in the line just read, where a separate flag array would miss).
                        if self.store.replicas(f).iter().all(|r| r.count == 0) {
                            self.touched.push(f);
                        }
                        *self.store.count_mut(f, slot) += 1;
                        Some(node)
                    }
                    _ => {
                        self.from_origin.push(f);
                        None
                    }
                }
            }
            Some(place) => {
                self.probes += 1;
                let node = place.node(
                    &self.ring,
                    u64::from(f),
                    &self.node_load,
                    self.window_requests,
                );
                if place.stores_home() {
                    node.filter(|&n| self.store.holds(f, 1, n))
                } else {
                    node
                }
            }
        };
        self.window_requests += 1;
        match node {
            Some(n) => {
                self.node_load[n as usize] += 1;
                true
            }
            None => {
                self.failures += 1;
                false
            }
        }
    }

    /// RBS's probe mean and variance for a request of `f` in the current state.
    fn moments(&mut self, f: u32) -> (f64, f64) {
        if self.store.gaps(f) == 0 {
            return self.prefix_moments[self.store.top(f) as usize];
        }
        let (store, k) = (&self.store, self.cfg.k as usize);
        *self.gapped_moments.entry(f).or_insert_with(|| {
            let mut used = vec![false; k];
            store
                .replicas(f)
                .iter()
                .for_each(|r| used[r.index as usize - 1] = true);
            analysis::probe_moments_with(&used)
        })
    }

    /// Replication and de-replication from this window's counts (see [`window_end`]).
    fn adapt(&mut self) {
        let cfg = self.cfg;
        let rules = Rules {
            c_high: cfg.c_high,
            window: cfg.window,
            gamma: cfg.gamma,
            k: cfg.k,
            growth: cfg.growth,
        };
        let mut touched = std::mem::take(&mut self.touched);
        let mut scratch = std::mem::take(&mut self.scratch);
        touched.sort_unstable();
        for &f in &touched {
            let w = window_end(
                &mut self.store,
                &self.ring,
                rules,
                cfg.shrink,
                f,
                &mut scratch,
            );
            self.replication_messages += w.messages;
            self.replication_formula += w.formula;
            self.created += w.created;
            self.create_refused += w.refused;
        }
        self.touched = touched;
        self.touched.clear();
        self.scratch = scratch;
    }

    /// The origin restores the home copy of every file a request could not find.
    fn origin_fill(&mut self) {
        let mut files = std::mem::take(&mut self.from_origin);
        files.sort_unstable();
        files.dedup();
        for &f in &files {
            self.store.create_if_absent(&self.ring, f, 1);
        }
        self.from_origin = files;
        self.from_origin.clear();
    }

    /// One round of repair.
    fn repair(&mut self, rng: &mut Rng) {
        let cfg = self.cfg;
        match cfg.repair {
            Repair::None => {}
            Repair::Request => {
                let mut r = std::mem::take(&mut self.reported);
                r.sort_unstable();
                r.dedup();
                for &(f, i) in &r {
                    if i < self.store.top(f) {
                        self.repair_messages += 1;
                        self.repair_formula += 1;
                        self.store.create_if_absent(&self.ring, f, i);
                    }
                }
                self.repair_rounds += 1;
                self.reported = r;
                self.reported.clear();
            }
            Repair::Rgr | Repair::Neighbour | Repair::Migrate => {
                // The spec's cost: one probe per replica above the home, counted from the
                // store's totals, plus one message per refill (added below).
                let homes = (0..self.store.files() as u32)
                    .filter(|&f| self.store.replicas(f).first().is_some_and(|r| r.index == 1))
                    .count() as u64;
                self.repair_formula += self.store.total() - homes;
                for f in 0..self.store.files() as u32 {
                    if self.store.gaps(f) == 0 {
                        // Probes still cost messages, but find nothing to do.
                        let n = self
                            .store
                            .replicas(f)
                            .iter()
                            .filter(|r| r.index > 1)
                            .count();
                        self.repair_messages += n as u64;
                        continue;
                    }
                    let key = file_key(u64::from(f));
                    let holders: Vec<u32> =
                        self.store.replicas(f).iter().map(|r| r.index).collect();
                    let probe = if cfg.repair == Repair::Neighbour {
                        repair::Probe::Neighbour
                    } else {
                        repair::Probe::Random
                    };
                    // Probes against the state at the round's start.
                    let mut missing: Vec<u32> = Vec::new();
                    let (store, ring) = (&self.store, &self.ring);
                    self.repair_messages += repair::round(
                        &holders,
                        probe,
                        rng,
                        |j| store.probe(ring, key, f, j).is_some(),
                        &mut missing,
                    );
                    for j in missing {
                        self.repair_messages += 1;
                        self.repair_formula += 1;
                        if cfg.repair == Repair::Migrate && self.store.top(f) > j {
                            let top = self.store.top(f);
                            self.store.remove(f, top);
                        }
                        self.store.create_if_absent(&self.ring, f, j);
                    }
                }
                self.repair_rounds += 1;
            }
        }
    }

    fn total_gaps(&self) -> u64 {
        (0..self.store.files() as u32)
            .map(|f| u64::from(self.store.gaps(f)))
            .sum()
    }
}

/// Scratch vectors of [`window_end`], reused across files (no allocation per file and
/// window).
#[derive(Debug, Default)]
pub struct Scratch {
    lived: Vec<(u32, u32)>,
    indices: Vec<u32>,
}

/// What [`window_end`] did to one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowEndOutcome {
    /// Messages of replication (search probes and CREATE_IF_ABSENT), and the same with each
    /// search's closed form where the file is a prefix (X6's reference).
    pub messages: u64,
    pub formula: u64,
    /// Replicas created, attempts refused as existing, replicas that left.
    pub created: u64,
    pub refused: u64,
    pub left: u64,
}

/// The end of a window for file `f`, from its replicas' counts in `store`, by the window-end
/// rule of `dht::replication` that the live edges run too: first every overloaded replica's
/// search and growth against the window's state (concurrent attempts, applied one after
/// another at their arbiters), then, with `shrink`, the leave decisions of the others against
/// the state after those creations (decided concurrently, then applied). Counts are reset.
/// Replicas created here take no decision until they have lived through a window.
pub fn window_end(
    store: &mut Store,
    ring: &Ring,
    rules: Rules,
    shrink: bool,
    f: u32,
    scratch: &mut Scratch,
) -> WindowEndOutcome {
    let key = file_key(u64::from(f));
    let mut out = WindowEndOutcome::default();
    let Scratch { lived, indices } = scratch;
    lived.clear();
    lived.extend(store.replicas(f).iter().map(|r| (r.index, r.count)));
    for phase in Phase::ORDER {
        if phase == Phase::Shrink && !shrink {
            continue;
        }
        // Every replica of this phase decides first; what they decided is done after.
        indices.clear();
        for &(i, c) in lived.iter() {
            let end = WindowEnd::new(rules, i, f64::from(c));
            if !phase.decides(&end) {
                continue;
            }
            let (action, probes) = end.run(|j| store.probe(ring, key, f, j).is_some());
            match phase {
                Phase::Grow => {
                    out.messages += u64::from(probes);
                    let prefix = store.gaps(f) == 0;
                    out.formula += u64::from(
                        analysis::unused_search_probes(i, store.top(f), rules.k)
                            .filter(|_| prefix)
                            .unwrap_or(probes),
                    );
                    if let Action::Create(range) = action {
                        indices.extend(range);
                    }
                }
                Phase::Shrink => {
                    if action == Action::Leave {
                        indices.push(i);
                    }
                }
            }
        }
        for &t in indices.iter() {
            match phase {
                Phase::Grow => {
                    out.messages += 1;
                    out.formula += 1;
                    if store.create_if_absent(ring, f, t) {
                        out.created += 1;
                    } else {
                        out.refused += 1;
                    }
                }
                Phase::Shrink => {
                    store.remove(f, t);
                    out.left += 1;
                }
            }
        }
    }
    store.reset_counts(f);
    out
}

/// RBS's probe mean and variance with the prefix 1..=n used, for n in 0..=k (no replica at
/// all probes like n = 1: every index down to 1, then fail): 1 + sum over j in (n, k] of 1/j
/// and of 1/j - 1/j^2, summed from the top.
fn prefix_moments(k: u32) -> Vec<(f64, f64)> {
    let mut t = vec![(1.0, 0.0); k as usize + 1];
    for n in (1..k).rev() {
        let p = 1.0 / f64::from(n + 1);
        let (m, v) = t[n as usize + 1];
        t[n as usize] = (m + p, v + p - p * p);
    }
    t[0] = t[1.min(k as usize)];
    t
}

/// The load skew below gaps in the window after a crash (before any repair): over the files
/// with a gap, the requests their replicas below the lowest gap served, what the exact
/// recursion expects of the requests served, and what a uniform pick over the surviving
/// replicas would give. Counts are the window's per-replica counts.
fn below_gaps(store: &Store) -> (f64, f64, f64) {
    let (mut served_below, mut expected, mut uniform) = (0.0, 0.0, 0.0);
    for f in 0..store.files() as u32 {
        let reps = store.replicas(f);
        if store.gaps(f) == 0 || reps.is_empty() {
            continue;
        }
        let top = store.top(f) as usize;
        let mut used = vec![false; top];
        reps.iter().for_each(|r| used[r.index as usize - 1] = true);
        let gap = used.iter().position(|u| !u).expect("a gap") + 1; // lowest missing index
        let served: f64 = reps.iter().map(|r| f64::from(r.count)).sum();
        if served == 0.0 {
            continue;
        }
        let dist = analysis::serve_distribution(&used);
        let ok = 1.0 - dist[0];
        let below = reps.iter().filter(|r| (r.index as usize) < gap);
        served_below += below.clone().map(|r| f64::from(r.count)).sum::<f64>();
        expected += served * (1..gap).map(|j| dist[j]).sum::<f64>() / ok;
        uniform += served * below.count() as f64 / reps.len() as f64;
    }
    (served_below, expected, uniform)
}

/// Failure probability of a request for a file with these used indices, by the recursion.
fn fail_probability(used_top: u32, indices: &[u32]) -> f64 {
    if indices.is_empty() {
        return 1.0;
    }
    let mut used = vec![false; used_top as usize];
    for &i in indices {
        used[i as usize - 1] = true;
    }
    analysis::serve_distribution(&used)[0]
}

/// One run.
pub fn run(cfg: &Config, rng: &mut Rng) -> Result<Outcome, Error> {
    run_with(cfg, rng, &mut |_, _| {})
}

/// One run, showing `inspect` the replica state after every window (for tests of invariants).
pub fn run_with(
    cfg: &Config,
    rng: &mut Rng,
    inspect: &mut dyn FnMut(u32, &Store),
) -> Result<Outcome, Error> {
    run_chunked(cfg, rng, inspect, CHUNK)
}

/// [`run_with`], drawing `chunk` requests' files at a time (the outcome does not depend on it).
fn run_chunked(
    cfg: &Config,
    rng: &mut Rng,
    inspect: &mut dyn FnMut(u32, &Store),
    chunk: u64,
) -> Result<Outcome, Error> {
    cfg.validate()?;
    let ring = Ring::new(cfg.nodes, cfg.vnodes)?;
    let store = Store::new(cfg.files, &ring);
    let sampler = Sampler::new(Law::Zipf { alpha: cfg.alpha }, cfg.files as usize)?;
    let pmf = Law::Zipf { alpha: cfg.alpha }.pmf(cfg.files as usize)?;
    let lambda = cfg.load * f64::from(cfg.nodes);
    let placement: Option<Box<dyn Placement>> = match cfg.policy {
        Policy::MultiHash => None,
        Policy::SingleHash => Some(Box::new(baselines::SingleHash)),
        Policy::BoundedLoad => Some(Box::new(baselines::BoundedLoad::new(cfg.balance))),
        Policy::Rendezvous => Some(Box::new(baselines::Rendezvous::new(&ring, cfg.files)?)),
        Policy::Maglev => Some(Box::new(Maglev::new(
            &ring,
            baselines::prime_at_least(100 * u64::from(cfg.nodes)),
        )?)),
    };
    let mut sim = Sim {
        cfg,
        placement,
        ring,
        store,
        touched: Vec::new(),
        scratch: Scratch::default(),
        node_load: vec![0; cfg.nodes as usize],
        measured_load: vec![0; cfg.nodes as usize],
        window_requests: 0,
        reported: Vec::new(),
        from_origin: Vec::new(),
        probes: 0,
        failures: 0,
        replication_messages: 0,
        created: 0,
        repair_messages: 0,
        repair_rounds: 0,
        prefix_moments: if cfg.policy == Policy::MultiHash && cfg.strategy == Strategy::Rbs {
            prefix_moments(cfg.k)
        } else {
            Vec::new()
        },
        gapped_moments: HashMap::new(),
        probe_moments: (0.0, 0.0),
        replication_formula: 0,
        repair_formula: 0,
        create_refused: 0,
    };
    let mut out = Outcome::default();
    let mut requests = 0u64;
    let mut batch: Vec<u32> = Vec::new();
    let mut after = (0u64, 0u64); // requests and failures in the window after the crash
    let mut repaired_at: Option<u32> = None;
    for t in 0..cfg.horizon {
        let flash = cfg.flash > 1.0 && (cfg.flash_start..cfg.flash_end).contains(&t);
        let extra = if flash {
            (cfg.flash - 1.0) * pmf[0] * lambda
        } else {
            0.0
        };
        let mean = (lambda + extra) * cfg.window;
        let count = Poisson::new(mean)
            .map_err(|e| Error::param("load", cfg.load, format!("a Poisson mean ({e})")))?
            .sample(rng) as u64;
        let p_flash = extra / (lambda + extra);
        sim.node_load.fill(0);
        sim.window_requests = 0;
        if let Some(p) = sim.placement.as_mut() {
            p.new_window();
        }
        sim.gapped_moments.clear();
        let failures_before = sim.failures;
        // The stream draws the window's files first, then the requests' searches. The files
        // are drawn from a copy of the generator a chunk at a time (independent draws, whose
        // cache misses overlap), and the generator skips past them, so the searches read the
        // same numbers as if every file had been drawn first, without a window of files (up
        // to millions) streaming through the cache between a file's draw and its request.
        // Each request prefetches the replica list of one a few places ahead.
        // A file is the flash crowd's (a coin) or an alias pick, a pure function of one draw:
        // the skip takes the same draws without picking.
        let flash_coin = |rng: &mut Rng| flash && rng.random::<f64>() < p_flash;
        let draw = |rng: &mut Rng| {
            if flash_coin(rng) {
                0
            } else {
                sampler.pick(rng.random()) as u32
            }
        };
        let mut files = rng.clone();
        for _ in 0..count {
            if !flash_coin(rng) {
                rng.random::<u64>();
            }
        }
        let skipped_to = rng.clone();
        let mut left = count;
        while left > 0 {
            let n = left.min(chunk);
            left -= n;
            batch.clear();
            batch.extend((0..n).map(|_| draw(&mut files)));
            for i in 0..batch.len() {
                if let Some(&g) = batch.get(i + AHEAD) {
                    sim.store.prefetch(g);
                }
                sim.request(batch[i], rng);
            }
        }
        // The skip drew exactly what the chunks did (checked: a mismatch shifts every search).
        assert!(files == skipped_to, "file draws and their skip disagree");
        requests += count;
        if cfg.fail_fraction > 0.0 && t == cfg.fail_at + 1 {
            after = (count, sim.failures - failures_before);
            if cfg.policy == Policy::MultiHash {
                (
                    out.below_gap_served,
                    out.below_gap_expected,
                    out.below_gap_uniform,
                ) = below_gaps(&sim.store);
            }
        }
        if t + cfg.measure >= cfg.horizon {
            sim.measured_load
                .iter_mut()
                .zip(&sim.node_load)
                .for_each(|(m, &l)| *m += u64::from(l));
        }
        if t + 1 == cfg.horizon && cfg.policy == Policy::MultiHash {
            out.top_replica_load = sim
                .store
                .replicas(0)
                .iter()
                .map(|r| f64::from(r.count) / cfg.window)
                .fold(0.0, f64::max);
        }
        if cfg.policy == Policy::MultiHash {
            sim.adapt();
            sim.origin_fill();
            // The invariants of replication without failures: every file's indices a prefix
            // 1..n_f, the home copy (index 1) always there.
            for f in 0..cfg.files {
                let v = sim.store.replicas(f);
                out.duplicate_replicas +=
                    v.windows(2).filter(|w| w[0].index == w[1].index).count() as u64;
            }
            if cfg.fail_fraction == 0.0 || t < cfg.fail_at {
                for f in 0..cfg.files {
                    let v = sim.store.replicas(f);
                    out.prefix_breaks += u64::from(sim.store.gaps(f) > 0);
                    out.home_missing += u64::from(v.first().is_none_or(|r| r.index != 1));
                }
            }
        }
        // Scheduled events: the crash.
        if cfg.fail_fraction > 0.0 && t == cfg.fail_at {
            let live: Vec<u32> = (0..sim.ring.nodes())
                .filter(|&n| sim.ring.is_alive(n))
                .collect();
            let kill =
                ((cfg.fail_fraction * live.len() as f64).round() as usize).min(live.len() - 1);
            let mut pool = live;
            for i in 0..kill {
                let j = rng.random_range(i..pool.len());
                pool.swap(i, j);
                sim.ring.crash(pool[i])?;
                sim.store.crash(pool[i]);
            }
            if let Some(p) = sim.placement.as_mut() {
                p.rebuild(&sim.ring)?;
            }
            out.gaps_after_failure = sim.total_gaps();
            out.lost_files = (0..cfg.files)
                .filter(|&f| sim.store.replicas(f).is_empty())
                .count() as u64;
            out.predicted_failure_after = (0..cfg.files)
                .map(|f| {
                    let idx: Vec<u32> = sim.store.replicas(f).iter().map(|r| r.index).collect();
                    pmf[f as usize] * fail_probability(cfg.k.min(sim.store.top(f).max(1)), &idx)
                })
                .sum();
            // RBS over K > top: indices above the top are unused, which the recursion over
            // 1..=top already accounts for (they only add probes).
        }
        if cfg.policy == Policy::MultiHash && cfg.fail_fraction > 0.0 && t > cfg.fail_at {
            sim.repair(rng);
            if repaired_at.is_none() && sim.total_gaps() == 0 {
                repaired_at = Some(t - cfg.fail_at);
            }
        }
        inspect(t, &sim.store);
    }
    let files = cfg.files as usize;
    let (mut matched, mut band, mut err, mut hot) = (0usize, 0usize, 0.0, 0usize);
    const HOT: usize = 10;
    for (f, &share) in pmf.iter().enumerate() {
        let steady = analysis::steady_replicas(share * lambda, cfg.c_high);
        let upper = analysis::steady_replicas(share * lambda, cfg.gamma * cfg.c_high);
        let n = sim.store.replicas(f as u32).len() as u32;
        matched += usize::from(n == steady);
        let inside = (steady.min(cfg.k)..=upper.min(cfg.k)).contains(&n);
        band += usize::from(inside);
        // Files are numbered by popularity rank (file 0 the most popular).
        if f < HOT {
            hot += usize::from(inside);
        }
        err += (f64::from(n) - f64::from(steady)).abs() / f64::from(steady);
    }
    // Loads of the nodes still up, sorted.
    let mut loads: Vec<u64> = (0..cfg.nodes)
        .filter(|&n| sim.ring.is_alive(n))
        .map(|n| sim.measured_load[n as usize])
        .collect();
    loads.sort_unstable();
    let mean = loads.iter().sum::<u64>() as f64 / loads.len().max(1) as f64;
    let cap = f64::from(cfg.measure) * cfg.window;
    out.requests = requests;
    out.probes_per_request = sim.probes as f64 / requests.max(1) as f64;
    out.failure_rate = sim.failures as f64 / requests.max(1) as f64;
    out.max_mean = *loads.last().unwrap_or(&0) as f64 / mean;
    out.p99_mean = loads[((loads.len() as f64 * 0.99).ceil() as usize).clamp(1, loads.len()) - 1]
        as f64
        / mean;
    out.over_capacity =
        loads.iter().filter(|&&l| l as f64 > cap).count() as f64 / loads.len() as f64;
    out.replicas = sim.store.total();
    out.top_replicas = sim.store.replicas(0).len() as u32;
    out.top_steady = analysis::steady_replicas(pmf[0] * lambda, cfg.c_high);
    out.steady_match = matched as f64 / files as f64;
    out.steady_error = err / files as f64;
    out.in_band = band as f64 / files as f64;
    out.hot_in_band = hot as f64 / files.min(HOT) as f64;
    out.failure_rate_after = if after.0 > 0 {
        after.1 as f64 / after.0 as f64
    } else {
        0.0
    };
    out.repair_rounds = repaired_at.unwrap_or(cfg.horizon.saturating_sub(cfg.fail_at));
    // Messages per replica created and per repair round (0 when there were none).
    let per = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
    out.messages_per_replication = per(sim.replication_messages, sim.created);
    out.repair_messages_per_round = per(sim.repair_messages, sim.repair_rounds);
    out.replication_formula = per(sim.replication_formula, sim.created);
    out.repair_formula = per(sim.repair_formula, sim.repair_rounds);
    if !sim.prefix_moments.is_empty() {
        out.probes_expected = sim.probe_moments.0 / requests.max(1) as f64;
        out.probes_se = sim.probe_moments.1.sqrt() / requests.max(1) as f64;
    }
    out.create_refused = sim.create_refused;
    let samples = 500u64;
    out.chord_hops = (0..samples)
        .map(|_| {
            let from = rng.random_range(0..sim.ring.positions());
            f64::from(sim.ring.chord_hops(from, rng.random()))
        })
        .sum::<f64>()
        / samples as f64;
    Ok(out)
}

#[cfg(test)]
mod tests;
