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

mod engine;
pub mod experiment;
pub mod rbs;
mod window;

use engine::Sim;
pub use window::{Scratch, WindowEndOutcome, window_end};
use window::{below_gaps, fail_probability, prefix_moments};

use crate::Error;
use crate::dht::analysis;
use crate::dht::baselines::{self, Maglev, Placement};
use crate::dht::hash::file_key;
use crate::dht::repair;
use crate::dht::replication::{Action, Phase, Rules, WindowEnd};
pub use crate::dht::replication::{Growth, Leave, Place, Search};
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

crate::registry! {
    /// Where a request goes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum PlacementPolicy: "DHT placement policy" {
        /// Replicas at h_1..h_K, found by a [`Strategy`]; replication on overload.
        MultiHash => "multihash",
        /// Consistent hashing, one copy at h_1(f), no replication.
        SingleHash => "single-hash",
        /// Consistent hashing with bounded loads (factor `balance`).
        BoundedLoad => "bounded-load",
        Rendezvous => "rendezvous",
        Maglev => "maglev",
    }
}

crate::registry! {
    /// How a DHT lookup travels to a key's node (measured as `chord_hops`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Routing: "routing" {
        /// Chord's finger tables (MH-R1's DHT): about 0.5 log2 N hops.
        Fingers => "fingers",
        /// A wrong model, not the paper's: successor pointers only, one position per hop
        /// (about N / 2 hops), for checking `mh.chord-hops` (docs/claims.md, "Wrong models").
        Successors => "successors",
    }
}

crate::registry! {
    /// Which ring a run places nodes on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum RingLayout: "ring layout" {
        /// A ring of its own per replication, its salt drawn from the run's seed: each run is
        /// a new network, so replications are independent samples of the ring too.
        PerRun => "per-run",
        /// The ring of live deployments and ring files (salt 0) in every run: one network,
        /// sampled again (what every run used before 2026-12-03).
        Fixed => "fixed",
    }
}

// `none` is listed last: the scenario default is RGR.
crate::registry! {
    /// How gaps are found and filled.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Repair: "repair rule" {
        /// Random gap removal: each replica i > 1 probes a uniform j in [1, i - 1] per round and
        /// refills it if missing.
        Rgr => "rgr",
        /// Each replica i > 1 probes j = i - 1.
        Neighbour => "neighbour",
        /// Requests report the missing indices below the top they probe; refilled at window end.
        Request => "request",
        /// As RGR, but the top replica moves into the gap instead of a new copy.
        Migrate => "migrate",
        None => "none",
    }
}

/// One run's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub nodes: u32,
    pub vnodes: u32,
    pub ring: RingLayout,
    pub routing: Routing,
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
    /// Where new replicas go and which replica may leave (a wrong model each, besides the
    /// paper's rules).
    pub place: Place,
    pub leave: Leave,
    /// How an overloaded replica finds the smallest unused index (linear: a wrong model).
    pub search: Search,
    pub strategy: Strategy,
    pub policy: PlacementPolicy,
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
    let salt = match cfg.ring {
        RingLayout::PerRun => rng.random::<u64>(),
        RingLayout::Fixed => 0,
    };
    let ring = Ring::salted(cfg.nodes, cfg.vnodes, salt)?;
    let store = Store::new(cfg.files, &ring);
    let sampler = Sampler::new(Law::Zipf { alpha: cfg.alpha }, cfg.files as usize)?;
    let pmf = Law::Zipf { alpha: cfg.alpha }.pmf(cfg.files as usize)?;
    let lambda = cfg.load * f64::from(cfg.nodes);
    let placement: Option<Box<dyn Placement>> = match cfg.policy {
        PlacementPolicy::MultiHash => None,
        PlacementPolicy::SingleHash => Some(Box::new(baselines::SingleHash)),
        PlacementPolicy::BoundedLoad => Some(Box::new(baselines::BoundedLoad::new(cfg.balance))),
        PlacementPolicy::Rendezvous => {
            Some(Box::new(baselines::Rendezvous::new(&ring, cfg.files)?))
        }
        PlacementPolicy::Maglev => Some(Box::new(Maglev::new(
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
        prefix_moments: if cfg.policy == PlacementPolicy::MultiHash && cfg.strategy == Strategy::Rbs
        {
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
            if cfg.policy == PlacementPolicy::MultiHash {
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
        if t + 1 == cfg.horizon && cfg.policy == PlacementPolicy::MultiHash {
            out.top_replica_load = sim
                .store
                .replicas(0)
                .iter()
                .map(|r| f64::from(r.count) / cfg.window)
                .fold(0.0, f64::max);
        }
        if cfg.policy == PlacementPolicy::MultiHash {
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
        if cfg.policy == PlacementPolicy::MultiHash && cfg.fail_fraction > 0.0 && t > cfg.fail_at {
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
            let key = rng.random();
            f64::from(match cfg.routing {
                Routing::Fingers => sim.ring.chord_hops(from, key),
                Routing::Successors => sim.ring.successor_hops(from, key),
            })
        })
        .sum::<f64>()
        / samples as f64;
    Ok(out)
}

#[cfg(test)]
mod tests;
