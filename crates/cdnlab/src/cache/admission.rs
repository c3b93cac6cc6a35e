//! Admission policies in front of any eviction policy: on a miss, the object is stored only if
//! the admission policy lets it in; hits and evictions are the eviction policy's own.
//!
//! - `all`: every miss is admitted (no admission policy; the default).
//! - `second-hit`: an object is admitted on its second miss, so one-hit wonders never take room
//!   (Maggs and Sitaraman, "Algorithmic nuggets in content delivery", SIGCOMM CCR 2015, on
//!   Akamai's cache-on-second-hit rule). The objects missed once are kept exactly, as
//!   libCacheSim's `bloomFilter` admissioner keeps them (a hash table, despite its name), so
//!   the two agree request for request; a production Bloom filter would add false positives.
//! - `size:N`: admits objects smaller than N bytes (libCacheSim's `size` admissioner: strictly
//!   smaller); N takes byte units (`size:1MiB`). Sizes are the trace's, whatever the capacity's
//!   unit.
//! - `prob:P`: admits a miss with probability P, from a seeded generator (libCacheSim's `prob`
//!   draws from its own generator, so the two agree in distribution, not request for request).
//!
//! The check happens before the eviction policy sees the miss: a declined object does not
//! touch the eviction policy at all (in libCacheSim the policy's lookup runs first, which for
//! policies with ghost lists, ARC, 2Q, S3-FIFO, LIRS, can record the miss; see docs/cache.md).

use super::{Cache, Occupancy};
use crate::idmap::KeyTable;
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
}

impl Admission {
    /// The allowed forms, for error messages and `--help`.
    pub const FORMS: &'static str = "all, second-hit, size:N (objects smaller than N bytes; \
         N may have a unit, e.g. size:1MiB) or prob:P (each miss with probability P in (0, 1])";

    /// Its name as parsed back (`size:1048576`).
    pub fn name(&self) -> String {
        match self {
            Admission::All => "all".into(),
            Admission::SecondHit => "second-hit".into(),
            Admission::Size(n) => format!("size:{n}"),
            Admission::Prob(p) => format!("prob:{p}"),
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

/// Marks an id in the second-hit set (the table's values are flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen(u8);

impl crate::idmap::Vacancy for Seen {
    const VACANT: Seen = Seen(0);
    fn is_vacant(&self) -> bool {
        self.0 == 0
    }
}

/// An eviction policy `C` behind an admission policy.
pub struct Admitted<C> {
    inner: C,
    rule: Admission,
    /// Objects missed once and not admitted yet (`second-hit`).
    seen: KeyTable<Seen>,
    rng: Rng,
    declined: u64,
}

impl<C: Cache> Admitted<C> {
    /// `inner` behind `rule`; `seed` drives `prob:P`.
    pub fn new(inner: C, rule: Admission, seed: u64) -> Self {
        Admitted {
            inner,
            rule,
            seen: KeyTable::with_capacity(if rule == Admission::SecondHit {
                1 << 10
            } else {
                0
            }),
            rng: crate::rng::from_seed(seed),
            declined: 0,
        }
    }

    /// Misses the admission policy kept out.
    pub fn declined(&self) -> u64 {
        self.declined
    }

    /// Whether a missed object of `size` bytes goes in.
    #[inline]
    fn admit(&mut self, id: u64, size: u32) -> bool {
        let yes = match self.rule {
            Admission::All => true,
            Admission::SecondHit => match self.seen.find(id) {
                Ok(_) => true,
                Err(_) => {
                    self.seen.insert(id, Seen(1));
                    false
                }
            },
            Admission::Size(n) => u64::from(size) < n,
            Admission::Prob(p) => self.rng.random::<f64>() < p,
        };
        self.declined += u64::from(!yes);
        yes
    }
}

impl<C: Cache> Cache for Admitted<C> {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if self.inner.contains(id) {
            return self.inner.access(id, size);
        }
        if self.admit(id, size) {
            self.inner.access(id, size);
        }
        false
    }
    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        if self.inner.contains(r.id) {
            return self.inner.access_req(r);
        }
        if self.admit(r.id, r.size) {
            self.inner.access_req(r);
        }
        false
    }
    fn contains(&self, id: u64) -> bool {
        self.inner.contains(id)
    }
    fn occupancy(&self) -> Occupancy {
        let o = self.inner.occupancy();
        Occupancy {
            heap_bytes: o.heap_bytes + self.seen.heap_bytes(),
            ..o
        }
    }
    fn prefetch(&self, id: u64) {
        self.inner.prefetch(id);
        // The set of objects missed once outgrows the caches' memory: its bucket is fetched
        // ahead too.
        if self.rule == Admission::SecondHit {
            self.seen.prefetch(id);
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
            ("bloom", "unknown"),
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
                Admission::SecondHit => !self.seen.insert(id),
                Admission::Size(n) => u64::from(size) < n,
                Admission::Prob(p) => self.rng.random::<f64>() < p,
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// LRU behind each admission policy gives the naive model's hit or miss on every
        /// request, in objects and in bytes.
        #[test]
        fn admitted_lru_equals_the_naive_model(
            reqs in proptest::collection::vec((0u64..30, 1u32..40), 1..600),
            cap in 1u64..120,
            bytes in any::<bool>(),
            rule in 0usize..4,
        ) {
            let rule = [
                Admission::All,
                Admission::SecondHit,
                Admission::Size(20),
                Admission::Prob(0.3),
            ][rule];
            let unit = if bytes { Unit::Bytes } else { Unit::Objects };
            let mut c = Admitted::new(Lru::new(Capacity::new(cap, unit).unwrap()), rule, 9);
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

    /// Second-hit keeps one-hit wonders out: on a trace where half the requests are for objects
    /// never seen again, LRU behind it stores none of them, and hits more at a small size.
    #[test]
    fn second_hit_keeps_one_hit_wonders_out() {
        let cap = Capacity::objects(10).unwrap();
        let mut plain = Policy::Lru.build(cap);
        let mut gated = Admitted::new(Lru::new(cap), Admission::SecondHit, 1);
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
}
