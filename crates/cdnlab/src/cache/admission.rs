//! Admission policies in front of any eviction policy: on a miss, the object is stored only if
//! the admission policy lets it in; hits and evictions are the eviction policy's own.
//!
//! - `all`: every miss is admitted (no admission policy; the default).
//! - `second-hit`: an object is admitted on its second miss, so one-hit wonders never take room
//!   (Maggs and Sitaraman, "Algorithmic nuggets in content delivery", SIGCOMM CCR 2015, on
//!   Akamai's cache-on-second-hit rule). The objects missed once are kept exactly, as
//!   libCacheSim's `bloomFilter` admissioner keeps them (a hash table, despite its name), so
//!   the two agree request for request; a production Bloom filter would add false positives.
//! - `bloom[:N]`: second-hit as a production CDN keeps it, in fixed memory: the objects missed
//!   once are remembered in Bloom filters (Bloom 1970) sized for N objects at 1% false
//!   positives (blocked: 9.9 N bits, 7 bits an object in one cache line), two of them rotating: the current one takes the
//!   misses, and once it holds N it becomes the previous one and a fresh one starts, so an object
//!   is remembered for the last N to 2N objects missed once (Maggs and Sitaraman describe this
//!   rotation for Akamai's cache-on-second-hit). A false positive admits a one-hit wonder; a
//!   forgotten object waits for a third miss. N defaults to 10^6 (2.5 MB).
//! - `size:N`: admits objects smaller than N bytes (libCacheSim's `size` admissioner: strictly
//!   smaller); N takes byte units (`size:1MiB`). Sizes are the trace's, whatever the capacity's
//!   unit.
//! - `prob:P`: admits a miss with probability P, from a seeded generator (libCacheSim's `prob`
//!   draws from its own generator, so the two agree in distribution, not request for request).
//! - `adaptsize`: AdaptSize (Berger, Sitaraman and Harchol-Balter, NSDI 2017): a miss of s bytes
//!   is admitted with probability e^(-s / c), and c is tuned every 30,000 requests to the value
//!   that a Markov model of the cache predicts gives the most hits, over request counts kept
//!   per object with an exponentially weighted moving average. Written after libCacheSim's
//!   `adaptsize` admissioner (its constants, its model, its golden-section search), which
//!   draws from its own generator: the two agree in distribution.
//!
//! The check happens before the eviction policy sees the miss: a declined object does not
//! touch the eviction policy at all (in libCacheSim the policy's lookup runs first, which for
//! policies with ghost lists, ARC, 2Q, S3-FIFO, LIRS, can record the miss; see docs/cache.md).

use super::{Cache, Occupancy};
use crate::idmap::IdSet;
use crate::rng::Rng;
use crate::workload::Request;
use rand::RngExt;

/// An admission policy, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    All,
    SecondHit,
    /// Objects smaller than this many bytes.
    Size(u64),
    /// Each miss with this probability.
    Prob(f64),
    /// Second-hit with rotating Bloom filters sized for this many objects.
    Bloom(u64),
    /// AdaptSize: size-aware probabilistic admission, its parameter tuned by a model.
    AdaptSize,
}

impl Admission {
    /// The allowed forms, for error messages and `--help`.
    pub const FORMS: &'static str = "all, second-hit, bloom[:N] (second-hit in Bloom filters \
         sized for N objects, default 1000000), size:N (objects smaller than N bytes; N may have \
         a unit, e.g. size:1MiB), prob:P (each miss with probability P in (0, 1]) or adaptsize \
         (AdaptSize: a miss of s bytes with probability e^(-s/c), c tuned by a model)";

    /// N of a bare `bloom`.
    pub const BLOOM_OBJECTS: u64 = 1_000_000;

    /// Its name as parsed back (`size:1048576`).
    pub fn name(&self) -> String {
        match self {
            Admission::All => "all".into(),
            Admission::SecondHit => "second-hit".into(),
            Admission::Size(n) => format!("size:{n}"),
            Admission::Prob(p) => format!("prob:{p}"),
            Admission::Bloom(n) => format!("bloom:{n}"),
            Admission::AdaptSize => "adaptsize".into(),
        }
    }
}

impl std::str::FromStr for Admission {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            crate::Error::param(
                "admission",
                s.trim(),
                format!("{why}; allowed: {}", Admission::FORMS),
            )
        };
        let t = s.trim();
        match t.split_once(':') {
            None if t == "all" => Ok(Admission::All),
            None if t == "second-hit" => Ok(Admission::SecondHit),
            None if t == "adaptsize" => Ok(Admission::AdaptSize),
            None if t == "bloom" => Ok(Admission::Bloom(Admission::BLOOM_OBJECTS)),
            Some(("bloom", v)) => match v.trim().parse::<u64>() {
                Ok(n) if (1..=1 << 40).contains(&n) => Ok(Admission::Bloom(n)),
                _ => Err(bad(
                    "N, the objects the filters are sized for, must be a whole number \
                     from 1 to 2^40",
                )),
            },
            None if t == "size" || t == "prob" => Err(bad("it needs a value after `:`")),
            None => Err(bad("unknown")),
            Some(("size", v)) => match parse_size::parse_size(v.trim()) {
                Ok(n) if n >= 1 => Ok(Admission::Size(n)),
                Ok(_) => Err(bad("the size must be at least 1 byte")),
                Err(_) => Err(bad("the size is not a number of bytes")),
            },
            Some(("prob", v)) => match v.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 1.0 => Ok(Admission::Prob(p)),
                _ => Err(bad("the probability must be above 0, at most 1")),
            },
            Some(_) => Err(bad("unknown")),
        }
    }
}

/// One filter block: a cache line of 512 bits, aligned so that it is one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Block([u64; 8]);

/// Bits per object of a blocked filter at 1% false positives with k = 7: the root of
/// sum_j Poisson(j; 512 / c) (1 - (1 - 1/512)^(7 j))^7 = 0.01 (Putze, Sanders and Singler,
/// "Cache-, hash- and space-efficient Bloom filters", 2007); a test recomputes it. A classic
/// filter needs 9.59 (ln 100 / ln(2)^2); blocking costs 3% more bits for one cache line a lookup.
const BLOOM_BITS_PER_OBJECT: f64 = 9.9036;

/// Two rotating Bloom filters of the objects missed once (`bloom:N`), blocked: an object's k
/// bits lie in one 512-bit block, so a lookup reads one cache line per filter instead of k
/// (measured: see docs/cache.md, admission cost).
#[derive(Debug, Clone)]
pub struct BloomPair {
    /// The current filter and the previous one.
    blocks: [Vec<Block>; 2],
    current: usize,
    /// Objects a filter takes before it rotates, and how many the current one holds.
    n: u64,
    held: u64,
}

impl BloomPair {
    /// Filters sized for `n` objects at 1% false positives: [`BLOOM_BITS_PER_OBJECT`] bits an
    /// object, in whole blocks, and k = 7 bits an object.
    pub fn new(n: u64) -> Self {
        let blocks = ((n.max(1) as f64) * BLOOM_BITS_PER_OBJECT / 512.0).ceil() as usize;
        BloomPair {
            blocks: [
                vec![Block::default(); blocks],
                vec![Block::default(); blocks],
            ],
            current: 0,
            n: n.max(1),
            held: 0,
        }
    }

    /// `id`'s block (by multiply-shift of one hash, Lemire 2019) and its 7 bits in it: 9 bits
    /// each of a second hash (63 of its 64).
    #[inline(always)]
    fn locate(&self, id: u64) -> (usize, u64) {
        let h1 = crate::idmap::mix64(id);
        let h2 = crate::idmap::mix64(id ^ 0x9E37_79B9_7F4A_7C15);
        let b = ((u128::from(h1) * self.blocks[0].len() as u128) >> 64) as usize;
        (b, h2)
    }

    #[inline(always)]
    fn in_filter(&self, f: usize, b: usize, h2: u64) -> bool {
        let block = &self.blocks[f][b].0;
        (0..7).all(|i| {
            let p = (h2 >> (9 * i)) & 511;
            block[(p / 64) as usize] & (1 << (p % 64)) != 0
        })
    }

    /// Whether either filter may hold `id` (never false for an id added within the last n).
    #[inline]
    pub fn contains(&self, id: u64) -> bool {
        let (b, h2) = self.locate(id);
        self.in_filter(self.current, b, h2) || self.in_filter(1 - self.current, b, h2)
    }

    /// Adds `id` to the current filter, rotating first when it holds n.
    #[inline]
    pub fn insert(&mut self, id: u64) {
        let (b, h2) = self.locate(id);
        self.insert_at(b, h2);
    }

    /// The rule `bloom` applies to a miss: whether either filter may hold `id`, adding it to the
    /// current one if not ([`Self::contains`], then [`Self::insert`], hashing once).
    #[inline(always)]
    pub fn test_and_insert(&mut self, id: u64) -> bool {
        let (b, h2) = self.locate(id);
        let held = self.in_filter(self.current, b, h2) || self.in_filter(1 - self.current, b, h2);
        if !held {
            self.insert_at(b, h2);
        }
        held
    }

    #[inline]
    fn insert_at(&mut self, b: usize, h2: u64) {
        if self.held == self.n {
            self.rotate();
        }
        let block = &mut self.blocks[self.current][b].0;
        for i in 0..7 {
            let p = (h2 >> (9 * i)) & 511;
            block[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.held += 1;
    }

    #[cold]
    fn rotate(&mut self) {
        self.current = 1 - self.current;
        self.blocks[self.current].fill(Block::default());
        self.held = 0;
    }

    /// Hints the CPU to fetch `id`'s block in both filters.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        let (b, _) = self.locate(id);
        crate::idmap::prefetch(&self.blocks[0][b]);
        crate::idmap::prefetch(&self.blocks[1][b]);
    }

    pub fn heap_bytes(&self) -> usize {
        2 * self.blocks[0].len() * std::mem::size_of::<Block>()
    }
}

/// AdaptSize's constants, as libCacheSim's admissioner has them (its defaults
/// `max-iteration=15,reconf-interval=30000`; the EWMA decay and the search's tolerance of the
/// original implementation).
const ADAPT_INTERVAL: u64 = 30_000;
const ADAPT_ITERATIONS: u32 = 15;
const EWMA_DECAY: f64 = 0.3;
const GSS_R: f64 = 0.618_033_99;
const GSS_TOL: f64 = 3.0e-8;

/// An object's request count (decayed) and size, in AdaptSize's statistics.
#[derive(Debug, Clone, Copy)]
struct Counted {
    times: f64,
    size: f64,
}

/// AdaptSize's state (`adaptsize`): the statistics of the current interval and the long-term
/// ones, and the parameter c.
#[derive(Debug, Clone)]
pub struct AdaptSize {
    /// The cache's capacity, in its unit.
    capacity: f64,
    next_reconf: u64,
    /// The sizes of the objects in the statistics.
    stat_size: f64,
    c: f64,
    interval: crate::idmap::IdMap<Counted>,
    longterm: crate::idmap::IdMap<Counted>,
    /// The long-term statistics as arrays (the model's input), refilled at each tuning.
    times: Vec<f64>,
    sizes: Vec<f64>,
}

impl AdaptSize {
    /// In front of a cache of `capacity` (its unit's amount: objects weigh 1, or their bytes).
    pub fn new(capacity: u64) -> Self {
        AdaptSize {
            capacity: capacity as f64,
            next_reconf: ADAPT_INTERVAL,
            stat_size: 0.0,
            c: f64::from(1u32 << 15),
            interval: Default::default(),
            longterm: Default::default(),
            times: Vec::new(),
            sizes: Vec::new(),
        }
    }

    /// The current parameter c (a miss of weight w goes in with probability e^(-w / c)).
    pub fn c(&self) -> f64 {
        self.c
    }

    /// Every request, hit or miss, before the admission decision: counts it, tuning c first
    /// when an interval has passed.
    pub fn update(&mut self, id: u64, w: f64) {
        self.reconfigure();
        let known = (self.interval.get(&id), self.longterm.get(&id));
        if known.0.is_none() && known.1.is_none() {
            self.stat_size += w;
        } else {
            // An object whose size changed is counted at its new size.
            for old in [known.0, known.1].into_iter().flatten() {
                if old.size != w {
                    self.stat_size += w - old.size;
                }
            }
        }
        let e = self.interval.entry(id).or_insert(Counted {
            times: 0.0,
            size: w,
        });
        e.times += 1.0;
        e.size = w;
    }

    /// Whether a miss of weight `w` goes in, drawing from `rng`.
    pub fn admit(&self, w: f64, rng: &mut Rng) -> bool {
        rng.random::<f64>() < (-w / self.c).exp()
    }

    fn reconfigure(&mut self) {
        self.next_reconf -= 1;
        if self.next_reconf > 0 {
            return;
        }
        // Too little seen to model the cache: look again in 1,000 requests.
        if self.stat_size <= self.capacity * 3.0 {
            self.next_reconf += 1000;
            return;
        }
        self.next_reconf = ADAPT_INTERVAL;
        for o in self.longterm.values_mut() {
            o.times *= EWMA_DECAY;
        }
        for (id, o) in self.interval.drain() {
            match self.longterm.get_mut(&id) {
                None => {
                    self.longterm.insert(id, o);
                }
                Some(l) => {
                    l.times += (1.0 - EWMA_DECAY) * o.times;
                    l.size = o.size;
                }
            }
        }
        let stat_size = &mut self.stat_size;
        self.longterm.retain(|_, o| {
            let keep = o.times >= 0.1;
            if !keep {
                *stat_size -= o.size;
            }
            keep
        });
        (self.times, self.sizes) = self.longterm.values().map(|o| (o.times, o.size)).unzip();
        // The log2 c with the best modelled hit rate: a coarse scan, then golden sections.
        let (mut x0, mut x1) = (0.0, self.capacity.log2());
        let mut x3 = x1;
        let mut best = 0.0;
        let mut i = 2.0;
        while i < x3 {
            let h = self.model_hits(i);
            if h > best {
                best = h;
                x1 = i;
            }
            i += 4.0;
        }
        let gss_v = 1.0 - GSS_R;
        let (mut h1, mut x2, mut h2) = (best, x1, best);
        if x3 - x1 > x1 - x0 {
            x2 = x1 + gss_v * (x3 - x1);
            h2 = self.model_hits(x2);
        } else {
            x1 = x0 + gss_v * (x1 - x0);
            h1 = self.model_hits(x1);
        }
        let mut n = 0;
        while n < ADAPT_ITERATIONS && (x3 - x0).abs() > GSS_TOL * (x1.abs() + x2.abs()) {
            n += 1;
            if h1.is_nan() || h2.is_nan() {
                break;
            }
            if h2 > h1 {
                x0 = x1;
                x1 = x2;
                x2 = GSS_R * x1 + gss_v * x3;
                h1 = h2;
                h2 = self.model_hits(x2);
            } else {
                x3 = x2;
                x2 = x1;
                x1 = GSS_R * x2 + gss_v * x0;
                h2 = h1;
                h1 = self.model_hits(x1);
            }
        }
        if !(h1.is_nan() || h2.is_nan()) {
            self.c = 2f64.powf(if h1 > h2 { x1 } else { x2 });
        }
    }

    /// The hits per unit time that the model predicts with c = 2^log2c: each object's
    /// probability of being in the cache under admission e^(-size / c), with the cache's
    /// characteristic time found by fixed-point iteration (AdaptSize's section 4 model, as
    /// libCacheSim computes it).
    fn model_hits(&self, log2c: f64) -> f64 {
        let c = 2f64.powf(log2c);
        let admit: Vec<f64> = self.sizes.iter().map(|s| (-s / c).exp()).collect();
        let sum: f64 = (0..self.times.len())
            .map(|i| self.times[i] * admit[i] * self.sizes[i])
            .sum();
        if sum <= 0.0 {
            return 0.0;
        }
        let mut t = self.capacity / sum;
        for _ in 0..20 {
            if t > 1e70 {
                break;
            }
            let mut used = 0.0;
            for ((&l, &s), &p) in self.times.iter().zip(&self.sizes).zip(&admit) {
                let rt = l * t;
                used += if rt > 150.0 {
                    s
                } else {
                    let e = p * (rt.exp() - 1.0);
                    s * e / (1.0 + e)
                };
            }
            t = self.capacity * t / used;
        }
        let mut hits = 0.0;
        for (&l, &p) in self.times.iter().zip(&admit) {
            let a =
                l * p * t * (840.0 + 60.0 * l * t + 20.0 * l * l * t * t + l.powi(3) * t.powi(3));
            let b = 840.0
                + 120.0 * l * (-3.0 + 7.0 * p) * t
                + 60.0 * l * l * (1.0 + p) * t * t
                + 4.0 * l.powi(3) * (-1.0 + 5.0 * p) * t.powi(3)
                + l.powi(4) * p * t.powi(4);
            let h = if a != 0.0 && b == 0.0 { 0.0 } else { a / b };
            hits += l * h.clamp(0.0, 1.0);
        }
        hits
    }

    fn heap_bytes(&self) -> usize {
        let per = std::mem::size_of::<(u64, Counted)>() + 1;
        (self.interval.capacity() + self.longterm.capacity()) * per
            + (self.times.capacity() + self.sizes.capacity()) * 8
    }
}

/// An eviction policy `C` behind an admission policy.
pub struct Admitted<C> {
    inner: C,
    gate: Gate,
}

/// The admission policy's state, apart from the cache it guards (so a decision can run inside
/// the cache's own miss path, [`Cache::access_gated`]).
struct Gate {
    rule: Admission,
    /// Objects missed once and not admitted yet (`second-hit`).
    seen: IdSet,
    /// Objects missed once, in Bloom filters (`bloom:N`).
    bloom: Option<BloomPair>,
    /// AdaptSize's state (`adaptsize`), and whether objects weigh their bytes.
    adapt: Option<Box<AdaptSize>>,
    bytes: bool,
    rng: Rng,
    declined: u64,
}

impl<C: Cache> Admitted<C> {
    /// `inner`, of capacity `cap`, behind `rule`; `seed` drives `prob:P` and `adaptsize`.
    pub fn new(inner: C, rule: Admission, seed: u64, cap: super::Capacity) -> Self {
        Admitted {
            inner,
            gate: Gate {
                rule,
                seen: IdSet::with_capacity(if rule == Admission::SecondHit {
                    1 << 10
                } else {
                    0
                }),
                bloom: match rule {
                    Admission::Bloom(n) => Some(BloomPair::new(n)),
                    _ => None,
                },
                adapt: (rule == Admission::AdaptSize).then(|| Box::new(AdaptSize::new(cap.amount))),
                bytes: cap.unit == super::Unit::Bytes,
                rng: crate::rng::from_seed(seed),
                declined: 0,
            },
        }
    }

    /// Misses the admission policy kept out.
    pub fn declined(&self) -> u64 {
        self.gate.declined
    }
}

impl Gate {
    /// Whether a missed object of `size` bytes goes in.
    #[inline(always)]
    fn admit(&mut self, id: u64, size: u32) -> bool {
        let yes = match self.rule {
            Admission::All => true,
            Admission::SecondHit => !self.seen.insert(id),
            Admission::Bloom(_) => self
                .bloom
                .as_mut()
                .expect("made for bloom")
                .test_and_insert(id),
            Admission::Size(n) => u64::from(size) < n,
            Admission::Prob(_) | Admission::AdaptSize => self.admit_drawn(size),
        };
        self.declined += u64::from(!yes);
        yes
    }

    /// The rules that draw from the generator, out of the miss path's line.
    #[inline(never)]
    fn admit_drawn(&mut self, size: u32) -> bool {
        if let Admission::Prob(p) = self.rule {
            return self.rng.random::<f64>() < p;
        }
        let w = self.weight(size);
        let a = self.adapt.as_ref().expect("made for adaptsize");
        a.admit(w, &mut self.rng)
    }

    /// An object's weight in AdaptSize's model: its bytes, or 1 in a cache counting objects.
    fn weight(&self, size: u32) -> f64 {
        if self.bytes { f64::from(size) } else { 1.0 }
    }

    /// AdaptSize counts every request, hit or miss, before the decision (libCacheSim's
    /// `update` runs on every lookup).
    #[inline]
    fn observe(&mut self, id: u64, size: u32) {
        let w = self.weight(size);
        if let Some(a) = self.adapt.as_mut() {
            a.update(id, w);
        }
    }
}

impl<C: Cache> Cache for Admitted<C> {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.access_req(&Request::new(0, id, size))
    }
    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        self.access_gated(r, || true).hit
    }
    #[inline]
    fn access_gated(&mut self, r: &Request, admit: impl FnOnce() -> bool) -> super::Access {
        self.gate.observe(r.id, r.size);
        let gate = &mut self.gate;
        self.inner
            .access_gated(r, || admit() && gate.admit(r.id, r.size))
    }
    fn stable_slots(&self) -> bool {
        self.inner.stable_slots()
    }
    fn contains(&self, id: u64) -> bool {
        self.inner.contains(id)
    }
    fn occupancy(&self) -> Occupancy {
        let o = self.inner.occupancy();
        let g = &self.gate;
        Occupancy {
            heap_bytes: o.heap_bytes
                + g.seen.heap_bytes()
                + g.bloom.as_ref().map_or(0, BloomPair::heap_bytes)
                + g.adapt.as_ref().map_or(0, |a| a.heap_bytes()),
            ..o
        }
    }
    fn prefetch(&self, id: u64) {
        self.inner.prefetch(id);
        // The set (or filters) of objects missed once outgrows the caches' memory: its bucket
        // is fetched ahead too.
        match self.gate.rule {
            Admission::SecondHit => self.gate.seen.prefetch(id),
            Admission::Bloom(_) => {
                if let Some(b) = &self.gate.bloom {
                    b.prefetch(id);
                }
            }
            _ => {}
        }
    }
    fn replay_dyn(&mut self, reqs: &[Request]) -> super::Tally {
        Cache::replay(self, reqs)
    }
    fn log_evictions(&mut self) {
        self.inner.log_evictions();
    }
    fn drain_evictions(&mut self, out: &mut Vec<u64>) {
        self.inner.drain_evictions(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Named;
    use crate::cache::{Capacity, Policy, Unit, lru::Lru};
    use proptest::prelude::*;
    use std::collections::{HashSet, VecDeque};

    #[test]
    fn admission_names_parse_and_refuse() {
        for (s, want) in [
            ("all", Admission::All),
            ("second-hit", Admission::SecondHit),
            ("size:1MiB", Admission::Size(1 << 20)),
            ("size:5000", Admission::Size(5000)),
            ("prob:0.25", Admission::Prob(0.25)),
            (" prob:1 ", Admission::Prob(1.0)),
        ] {
            let got: Admission = s.parse().unwrap();
            assert_eq!(got, want, "{s}");
            assert_eq!(got.name().parse::<Admission>().unwrap(), want);
        }
        for (s, why) in [
            ("bloom:0", "from 1 to 2^40"),
            ("size", "needs a value"),
            ("size:0", "at least 1 byte"),
            ("size:lots", "not a number"),
            ("prob:0", "above 0"),
            ("prob:1.5", "above 0"),
            ("prob:x", "above 0"),
            ("ttl:5", "unknown"),
        ] {
            let e = s.parse::<Admission>().unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("second-hit"), "{s}: {e}");
        }
    }

    /// One of each rule, for the random-trace tests (AdaptSize last).
    const RULES: [Admission; 6] = [
        Admission::All,
        Admission::SecondHit,
        Admission::Size(20),
        Admission::Prob(0.3),
        Admission::Bloom(1000),
        Admission::AdaptSize,
    ];

    /// The naive model: an LRU list of (id, size) and the admission rule written out again,
    /// with a `HashSet` of ids missed once and the same generator, drawn on the same misses.
    struct Naive {
        q: VecDeque<(u64, u32)>,
        cap: u64,
        bytes: bool,
        rule: Admission,
        seen: HashSet<u64>,
        rng: crate::rng::Rng,
    }

    impl Naive {
        fn access(&mut self, id: u64, size: u32) -> bool {
            if let Some(i) = self.q.iter().position(|e| e.0 == id) {
                let e = self.q.remove(i).unwrap();
                self.q.push_front(e);
                return true;
            }
            let admit = match self.rule {
                Admission::All => true,
                // With n far above the keys, the filters neither rotate nor (at 2x10^-12 per
                // lookup) err: second-hit exactly.
                Admission::SecondHit | Admission::Bloom(_) => !self.seen.insert(id),
                Admission::Size(n) => u64::from(size) < n,
                Admission::Prob(p) => self.rng.random::<f64>() < p,
                // Its model is not re-derived here: its own tests and libCacheSim check it.
                Admission::AdaptSize => unreachable!("adaptsize is not in the naive model"),
            };
            let w = if self.bytes { size } else { 1 };
            if admit && u64::from(w) <= self.cap {
                while self.q.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.cap {
                    self.q.pop_back();
                }
                self.q.push_front((id, w));
            }
            false
        }
    }

    /// The blocked filter's false positive rate at c bits an object, k = 7, 512-bit blocks
    /// (Putze et al. 2007): a block holds Poisson(512 / c) objects.
    fn blocked_fp(c: f64) -> f64 {
        let lambda = 512.0 / c;
        let mut p = (-lambda).exp();
        let mut fp = 0.0;
        for j in 0..1000 {
            if j > 0 {
                p *= lambda / f64::from(j);
            }
            fp += p * (1.0 - (1.0 - 1.0 / 512.0f64).powi(7 * j)).powi(7);
        }
        fp
    }

    /// The filters: the bits an object give 1% in theory; no false negatives among the last n
    /// objects; at n objects the false positive rate is 1% within 5 standard errors
    /// (sqrt(0.01 x 0.99 / 10^5) = 0.0003, so 0.0085 to 0.0115; a classic filter's 9.59 bits
    /// blocked would give 1.16%); an object is remembered while it is in the current or the
    /// previous filter (n to 2n later insertions) and forgotten after, but for false positives.
    #[test]
    fn bloom_filters_remember_and_forget_as_designed() {
        assert!((blocked_fp(BLOOM_BITS_PER_OBJECT) - 0.01).abs() < 1e-5);
        assert!((blocked_fp(9.59) - 0.0116).abs() < 1e-4);
        let n = 10_000u64;
        let mut b = BloomPair::new(n);
        (0..n).for_each(|id| b.insert(id));
        assert!((0..n).all(|id| b.contains(id)), "a false negative");
        let fp = (1u64 << 40..(1 << 40) + 100_000)
            .filter(|&id| b.contains(id))
            .count() as f64
            / 100_000.0;
        assert!((fp - 0.01).abs() < 0.0015, "false positives {fp}");
        // n more: the first n are in the previous filter, still remembered.
        (n..2 * n).for_each(|id| b.insert(id));
        assert!((0..2 * n).all(|id| b.contains(id)));
        // n more: the first n are gone, but for about 2% (false positives of two filters).
        (2 * n..3 * n).for_each(|id| b.insert(id));
        let kept = (0..n).filter(|&id| b.contains(id)).count() as f64 / n as f64;
        assert!(kept < 0.03, "{kept} of the forgotten objects still seen");
        assert!((n..3 * n).all(|id| b.contains(id)));
        // 10^4 x 9.9036 / 512 = 193.4 blocks, so 194 of 64 bytes, two filters.
        assert_eq!(b.heap_bytes(), 2 * 64 * 194);
        assert_eq!(
            "bloom".parse::<Admission>().unwrap(),
            Admission::Bloom(1_000_000)
        );
        assert_eq!(
            "bloom:5000".parse::<Admission>().unwrap().name(),
            "bloom:5000"
        );
        for bad in ["bloom:0", "bloom:x", "bloom:-1"] {
            assert!(bad.parse::<Admission>().is_err(), "{bad}");
        }
    }

    /// On a trace of 5,000 objects, filters sized for 10^6 neither rotate nor (at about 10^-12
    /// per lookup) err, so LRU behind `bloom` is LRU behind the exact `second-hit`, for every
    /// policy; sized for 500, the filters rotate and the two differ.
    #[test]
    fn bloom_is_second_hit_until_it_forgets() {
        let reqs: Vec<Request> = (0..60_000u64)
            .map(|i| Request::new(i, crate::idmap::mix64(i) % 5000 % (1 + i % 4999), 1))
            .collect();
        for p in Policy::ALL.iter().filter(|p| !p.offline()) {
            let cap = Capacity::objects(300).unwrap();
            let mut exact = p.build_admitted(cap, Admission::SecondHit, 1);
            let mut bloom = p.build_admitted(cap, Admission::Bloom(1_000_000), 1);
            assert_eq!(
                exact.replay_dyn(&reqs),
                bloom.replay_dyn(&reqs),
                "{}",
                p.name()
            );
        }
        let cap = Capacity::objects(300).unwrap();
        let mut exact = Policy::Lru.build_admitted(cap, Admission::SecondHit, 1);
        let mut small = Policy::Lru.build_admitted(cap, Admission::Bloom(500), 1);
        assert_ne!(exact.replay_dyn(&reqs), small.replay_dyn(&reqs));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// LRU behind each admission policy gives the naive model's hit or miss on every
        /// request, in objects and in bytes.
        #[test]
        fn admitted_lru_equals_the_naive_model(
            reqs in proptest::collection::vec((0u64..30, 1u32..40), 1..600),
            cap in 1u64..120,
            bytes in any::<bool>(),
            rule in 0usize..RULES.len() - 1,
        ) {
            // Every rule but AdaptSize (last), which the naive model leaves out.
            let rule = RULES[rule];
            let unit = if bytes { Unit::Bytes } else { Unit::Objects };
            let mut c = Admitted::new(Lru::new(Capacity::new(cap, unit).unwrap()), rule, 9, Capacity::new(cap, unit).unwrap());
            let mut n = Naive {
                q: VecDeque::new(),
                cap,
                bytes,
                rule,
                seen: HashSet::new(),
                rng: crate::rng::from_seed(9),
            };
            for (i, &(id, size)) in reqs.iter().enumerate() {
                prop_assert_eq!(c.access(id, size), n.access(id, size), "request {}", i);
            }
        }
    }

    /// A policy as [`Cache`]'s defaults see it: the two-lookup `access_gated`, no slots.
    struct Defaults<C>(C);

    impl<C: Cache> Cache for Defaults<C> {
        fn access(&mut self, id: u64, size: u32) -> bool {
            self.0.access(id, size)
        }
        fn contains(&self, id: u64) -> bool {
            self.0.contains(id)
        }
        fn occupancy(&self) -> Occupancy {
            self.0.occupancy()
        }
        fn replay_dyn(&mut self, reqs: &[Request]) -> crate::cache::Tally {
            Cache::replay(self, reqs)
        }
        fn log_evictions(&mut self) {}
        fn drain_evictions(&mut self, _out: &mut Vec<u64>) {}
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// LRU's and FIFO's one-lookup admission path (and the slots it reports: the object's
        /// own, NIL when not stored) equals the default's contains-then-access, for every rule.
        #[test]
        fn one_lookup_admission_equals_the_default(
            reqs in proptest::collection::vec((0u64..40, 1u32..40), 1..600),
            cap in 1u64..60,
            bytes in any::<bool>(),
            rule in 0usize..RULES.len(),
        ) {
            let rule = RULES[rule];
            let cap = Capacity::new(cap, if bytes { Unit::Bytes } else { Unit::Objects }).unwrap();
            let reqs: Vec<Request> = reqs.iter().map(|&(id, size)| Request::new(0, id, size)).collect();
            let mut lru = Admitted::new(Lru::new(cap), rule, 9, cap);
            let mut lru0 = Admitted::new(Defaults(Lru::new(cap)), rule, 9, cap);
            let mut fifo = Admitted::new(crate::cache::fifo::Fifo::new(cap), rule, 9, cap);
            let mut fifo0 = Admitted::new(Defaults(crate::cache::fifo::Fifo::new(cap)), rule, 9, cap);
            prop_assert!(lru.stable_slots() && !lru0.stable_slots());
            for (i, r) in reqs.iter().enumerate() {
                let (a, b) = (lru.access_gated(r, || true), lru0.access_gated(r, || true));
                prop_assert_eq!(a.hit, b.hit, "lru, request {}", i);
                prop_assert_eq!(a.slot != crate::cache::slots::NIL, lru.contains(r.id));
                let (a, b) = (fifo.access_gated(r, || true), fifo0.access_gated(r, || true));
                prop_assert_eq!(a.hit, b.hit, "fifo, request {}", i);
                prop_assert_eq!(a.slot != crate::cache::slots::NIL, fifo.contains(r.id));
            }
            prop_assert_eq!(lru.declined(), lru0.declined());
            prop_assert_eq!(fifo.declined(), fifo0.declined());
        }
    }

    /// Second-hit keeps one-hit wonders out: on a trace where half the requests are for objects
    /// never seen again, LRU behind it stores none of them, and hits more at a small size.
    #[test]
    fn second_hit_keeps_one_hit_wonders_out() {
        let cap = Capacity::objects(10).unwrap();
        let mut plain = Policy::Lru.build(cap);
        let mut gated = Admitted::new(Lru::new(cap), Admission::SecondHit, 1, cap);
        let (mut h0, mut h1) = (0, 0);
        for i in 0..10_000u64 {
            // A hot set of 8 objects, and a new object every other request.
            let id = if i % 2 == 0 {
                i % 16 / 2
            } else {
                1_000_000 + i
            };
            h0 += u64::from(plain.access(id, 1));
            h1 += u64::from(gated.access(id, 1));
        }
        // Plain LRU: between two requests for a hot object come 7 other hot objects and 8 new
        // ones, 15 > 10, so it never hits. Behind second-hit: each hot object (625 requests)
        // misses twice (declined, then stored) and hits 623 times.
        assert_eq!((h0, h1), (0, 8 * 623));
        assert_eq!(gated.declined(), 5000 + 8);
    }

    /// Before its first tuning AdaptSize admits a miss of s bytes with probability e^(-s / c),
    /// c = 2^15: for 20,000 distinct objects of 2^15 bytes, e^-1 = 0.368 of them, within 5
    /// standard errors (sqrt(0.368 x 0.632 / 20,000) = 0.0034, so 0.017); objects of 1 byte all
    /// but never declined (e^(-2^-15)). A cache of 10^15 bytes never sees 3 times its size, so c
    /// is never tuned here; the statistics count each object once.
    #[test]
    fn adaptsize_admits_by_size_before_tuning() {
        let cap = Capacity::new(1 << 50, Unit::Bytes).unwrap();
        let mut c = Admitted::new(Lru::new(cap), Admission::AdaptSize, 3, cap);
        for id in 0..20_000u64 {
            assert!(!c.access(id, 1 << 15));
        }
        let admitted = (20_000 - c.declined()) as f64 / 20_000.0;
        assert!((admitted - (-1f64).exp()).abs() < 0.017, "{admitted}");
        let before = c.declined();
        for id in 100_000..120_000u64 {
            c.access(id, 1);
        }
        assert!(c.declined() - before <= 5, "{}", c.declined() - before);
        let a = c.gate.adapt.as_ref().unwrap();
        assert_eq!((a.c(), a.interval.len()), (f64::from(1u32 << 15), 40_000));
    }

    /// AdaptSize's claim (Berger et al., NSDI 2017): in a small cache, keeping large objects
    /// out raises the object hit ratio well above LRU's. Zipf(0.8) over 20,000 objects of 100
    /// bytes to 1 MB (log-uniform, drawn per object), 4x10^5 requests, a cache of 1% of the
    /// working set's bytes. Written before the first run: LRU behind AdaptSize misses at least
    /// 0.1 less than LRU alone (the command on a 10^7-request trace of the same kind: 0.80 and
    /// 0.49), and c has been tuned below its starting 2^15 (large objects out). A model that
    /// admitted everything would be LRU and fail the first; one that never tuned c, the second.
    #[test]
    fn adaptsize_raises_the_object_hit_ratio_of_a_small_cache() {
        use crate::workload::popularity::{Law, Sampler};
        let n = 20_000;
        let table = Sampler::new(Law::Zipf { alpha: 0.8 }, n).unwrap();
        let mut rng = crate::rng::stream(11, 0, 0);
        let sizes: Vec<u32> = (0..n)
            .map(|_| rng.random_range(100f64.ln()..1e6f64.ln()).exp() as u32)
            .collect();
        let wss: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
        let cap = Capacity::new(wss / 100, Unit::Bytes).unwrap();
        let mut plain = Policy::Lru.build(cap);
        let mut adapt = Admitted::new(Lru::new(cap), Admission::AdaptSize, 1, cap);
        let (mut m0, mut m1) = (0u64, 0u64);
        let reqs = 400_000;
        for _ in 0..reqs {
            let id = table.sample(&mut rng);
            let size = sizes[id];
            m0 += u64::from(!plain.access(id as u64, size));
            m1 += u64::from(!adapt.access(id as u64, size));
        }
        let (r0, r1) = (m0 as f64 / reqs as f64, m1 as f64 / reqs as f64);
        let c = adapt.gate.adapt.as_ref().unwrap().c();
        // The figures docs/cache.md quotes (`-- --nocapture` shows them).
        eprintln!("LRU misses {r0:.4}, behind AdaptSize {r1:.4} (c = {c:.0})");
        assert!(
            r1 < r0 - 0.1,
            "LRU {r0:.4}, behind AdaptSize {r1:.4}, c {c}"
        );
        assert!(c < f64::from(1u32 << 15), "c {c}");
    }
}
