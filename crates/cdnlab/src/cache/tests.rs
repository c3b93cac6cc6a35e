//! Cross-checks of every policy against an independent implementation: the `lru` crate for LRU,
//! and deliberately naive reference models (vectors and linear scans, written from the papers'
//! pseudocode) for the others, on random request sequences with object and byte capacities.

use super::*;
use crate::Named;
use proptest::prelude::*;
use std::collections::VecDeque;

/// Naive models: each keeps (id, weight) in a VecDeque with the newest at the front.
trait Model {
    fn access(&mut self, id: u64, w: u32) -> bool;
}

fn fits(q: &VecDeque<(u64, u32)>, w: u32, cap: u64) -> bool {
    q.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) <= cap
}

struct NaiveLru(VecDeque<(u64, u32)>, u64);
impl Model for NaiveLru {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(i) = self.0.iter().position(|e| e.0 == id) {
            let e = self.0.remove(i).unwrap();
            self.0.push_front(e);
            return true;
        }
        if u64::from(w) > self.1 {
            return false;
        }
        while !fits(&self.0, w, self.1) {
            self.0.pop_back();
        }
        self.0.push_front((id, w));
        false
    }
}

struct NaiveFifo(VecDeque<(u64, u32)>, u64);
impl Model for NaiveFifo {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if self.0.iter().any(|e| e.0 == id) {
            return true;
        }
        if u64::from(w) > self.1 {
            return false;
        }
        while !fits(&self.0, w, self.1) {
            self.0.pop_back();
        }
        self.0.push_front((id, w));
        false
    }
}

/// SIEVE: queue of (id, w, visited); `hand` is an index from the front, None = start at the tail.
struct NaiveSieve(Vec<(u64, u32, bool)>, Option<usize>, u64);
impl Model for NaiveSieve {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == id) {
            e.2 = true;
            return true;
        }
        if u64::from(w) > self.2 {
            return false;
        }
        while self.0.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.2 {
            let mut h = self.1.unwrap_or(self.0.len() - 1);
            while self.0[h].2 {
                self.0[h].2 = false;
                h = if h == 0 { self.0.len() - 1 } else { h - 1 };
            }
            self.0.remove(h);
            self.1 = if h == 0 { None } else { Some(h - 1) };
        }
        self.0.insert(0, (id, w, false));
        if let Some(h) = self.1.as_mut() {
            *h += 1;
        }
        false
    }
}

/// CLOCK from its description (second-chance FIFO, one reference bit): queue of (id, w, bit),
/// newest at the front; evict from the back, giving a set bit a second chance at the front.
struct NaiveClock(VecDeque<(u64, u32, bool)>, u64);
impl Model for NaiveClock {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == id) {
            e.2 = true;
            return true;
        }
        if u64::from(w) > self.1 {
            return false;
        }
        while self.0.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.1 {
            let mut t = self.0.pop_back().unwrap();
            if t.2 {
                t.2 = false;
                self.0.push_front(t);
            }
        }
        self.0.push_front((id, w, false));
        false
    }
}

/// LFU: (id, w, freq, last tick); evict min (freq, last).
struct NaiveLfu(Vec<(u64, u32, u32, u64)>, u64, u64);
impl Model for NaiveLfu {
    fn access(&mut self, id: u64, w: u32) -> bool {
        self.2 += 1;
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == id) {
            e.2 += 1;
            e.3 = self.2;
            return true;
        }
        if u64::from(w) > self.1 {
            return false;
        }
        while self.0.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.1 {
            let i = (0..self.0.len())
                .min_by_key(|&i| (self.0[i].2, self.0[i].3))
                .unwrap();
            self.0.remove(i);
        }
        self.0.push((id, w, 1, self.2));
        false
    }
}

/// S3-FIFO from the paper's Algorithm 1, with queues of (id, w, freq), newest at the front.
struct NaiveS3 {
    s: VecDeque<(u64, u32, u8)>,
    m: VecDeque<(u64, u32, u8)>,
    g: VecDeque<(u64, u32)>,
    cap: u64,
    s_cap: u64,
    m_cap: u64,
}
fn used3(q: &VecDeque<(u64, u32, u8)>) -> u64 {
    q.iter().map(|e| u64::from(e.1)).sum()
}
impl NaiveS3 {
    fn new(cap: u64) -> Self {
        let s_cap = ((cap as f64 * s3fifo::SMALL_SHARE) as u64).max(1);
        NaiveS3 {
            s: VecDeque::new(),
            m: VecDeque::new(),
            g: VecDeque::new(),
            cap,
            s_cap,
            m_cap: cap.saturating_sub(s_cap).max(1),
        }
    }
    fn evict_m(&mut self) {
        while let Some(mut t) = self.m.pop_back() {
            if t.2 > 0 {
                t.2 -= 1;
                self.m.push_front(t);
            } else {
                return;
            }
        }
    }
    fn evict_s(&mut self) {
        while let Some(t) = self.s.pop_back() {
            if t.2 >= s3fifo::MOVE_TO_MAIN {
                self.m.push_front(t);
                if used3(&self.m) > self.m_cap {
                    self.evict_m();
                }
            } else {
                self.g.push_front((t.0, t.1));
                while self.g.iter().map(|e| u64::from(e.1)).sum::<u64>() > self.m_cap {
                    self.g.pop_back();
                }
                return;
            }
        }
    }
}
impl Model for NaiveS3 {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self
            .s
            .iter_mut()
            .chain(self.m.iter_mut())
            .find(|e| e.0 == id)
        {
            e.2 = (e.2 + 1).min(3);
            return true;
        }
        if u64::from(w) > self.cap {
            return false;
        }
        let ghost = self
            .g
            .iter()
            .position(|e| e.0 == id)
            .map(|i| self.g.remove(i));
        while used3(&self.s) + used3(&self.m) + u64::from(w) > self.cap {
            if used3(&self.s) >= self.s_cap || self.m.is_empty() {
                self.evict_s();
            } else {
                self.evict_m();
            }
        }
        if ghost.is_some() {
            self.m.push_front((id, w, 0));
        } else {
            self.s.push_front((id, w, 0));
        }
        false
    }
}

/// S3-FIFO as libCacheSim's `S3FIFO.c` runs it, step by step: queues of (id, w, freq), newest
/// at the front; S of floor(0.1 C), M of the rest, a ghost FIFO of floor(0.9 C).
struct NaiveS3Lcs {
    s: VecDeque<(u64, u32, u8)>,
    m: VecDeque<(u64, u32, u8)>,
    g: VecDeque<(u64, u32)>,
    cap: u64,
    s_cap: u64,
    m_cap: u64,
    g_cap: u64,
    has_evicted: bool,
}
impl NaiveS3Lcs {
    fn new(cap: u64) -> Self {
        let s_cap = (cap as f64 * 0.1) as u64;
        NaiveS3Lcs {
            s: VecDeque::new(),
            m: VecDeque::new(),
            g: VecDeque::new(),
            cap,
            s_cap,
            m_cap: cap - s_cap,
            g_cap: (cap as f64 * 0.9) as u64,
            has_evicted: false,
        }
    }
    fn ghost_get(&mut self, id: u64, w: u32) {
        if self.g.iter().any(|e| e.0 == id) || u64::from(w) > self.g_cap {
            return;
        }
        while self.g.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.g_cap {
            self.g.pop_back();
        }
        self.g.push_front((id, w));
    }
    fn evict(&mut self) {
        self.has_evicted = true;
        if used3(&self.m) > self.m_cap || self.s.is_empty() {
            // S3FIFO_evict_main
            while let Some(t) = self.m.pop_back() {
                if t.2 >= 1 {
                    self.m.push_front((t.0, t.1, t.2.min(3) - 1));
                } else {
                    return;
                }
            }
        } else {
            // S3FIFO_evict_fifo
            while let Some(t) = self.s.pop_back() {
                if t.2 >= 2 {
                    self.m.push_front((t.0, t.1, 0));
                } else {
                    self.ghost_get(t.0, t.1);
                    return;
                }
            }
        }
    }
}
impl Model for NaiveS3Lcs {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = self.s.iter_mut().find(|e| e.0 == id) {
            e.2 = e.2.saturating_add(1);
            return true;
        }
        let ghost_hit = match self.g.iter().position(|e| e.0 == id) {
            Some(i) => {
                self.g.remove(i);
                true
            }
            None => false,
        };
        if let Some(e) = self.m.iter_mut().find(|e| e.0 == id) {
            e.2 = e.2.saturating_add(1);
            return true;
        }
        if u64::from(w) > self.s_cap {
            return false;
        }
        while used3(&self.s) + used3(&self.m) + u64::from(w) > self.cap {
            self.evict();
        }
        if ghost_hit {
            self.m.push_front((id, w, 0));
        } else if u64::from(w) < self.s_cap {
            if !self.has_evicted && used3(&self.s) >= self.s_cap {
                self.m.push_front((id, w, 0));
            } else {
                self.s.push_front((id, w, 0));
            }
        }
        false
    }
}

fn model(p: Policy, cap: u64) -> Box<dyn Model> {
    match p {
        Policy::Lru => Box::new(NaiveLru(VecDeque::new(), cap)),
        Policy::Fifo => Box::new(NaiveFifo(VecDeque::new(), cap)),
        Policy::Lfu => Box::new(NaiveLfu(Vec::new(), cap, 0)),
        Policy::S3Fifo => Box::new(NaiveS3Lcs::new(cap)),
        Policy::S3FifoPaper => Box::new(NaiveS3::new(cap)),
        Policy::Sieve => Box::new(NaiveSieve(Vec::new(), None, cap)),
        Policy::Clock => Box::new(NaiveClock(VecDeque::new(), cap)),
    }
}

fn requests() -> impl Strategy<Value = Vec<(u64, u32)>> {
    // Skewed ids (squares of uniform draws favour small ids) so hits and evictions both happen.
    proptest::collection::vec((0u64..40, 1u32..9), 1..600)
        .prop_map(|v| v.into_iter().map(|(x, s)| (x * x / 40, s)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// LRU against the `lru` crate (an independent, widely used implementation), capacity in
    /// objects.
    #[test]
    fn lru_matches_lru_crate(reqs in requests(), cap in 1usize..30) {
        let mut ours = lru::Lru::new(Capacity::objects(cap as u64).unwrap());
        let mut oracle = ::lru::LruCache::new(std::num::NonZeroUsize::new(cap).unwrap());
        for (id, _) in reqs {
            let hit = oracle.get(&id).is_some();
            if !hit {
                oracle.put(id, ());
            }
            prop_assert_eq!(ours.access(id, 1), hit);
            prop_assert_eq!(ours.len(), oracle.len());
        }
        for (id, _) in oracle.iter() {
            prop_assert!(ours.contains(*id));
        }
    }

    /// Every policy, in both units, against its naive model: the same hit/miss sequence, and
    /// the capacity never exceeded.
    #[test]
    fn policies_match_naive_models(reqs in requests(), cap in 1u64..40, bytes in any::<bool>()) {
        let unit = if bytes { Unit::Bytes } else { Unit::Objects };
        let capacity = Capacity::new(cap, unit).unwrap();
        for &p in Policy::ALL {
            let mut ours = p.build(capacity);
            let mut naive = model(p, cap);
            for (i, &(id, size)) in reqs.iter().enumerate() {
                let w = capacity.weight(size);
                prop_assert_eq!(ours.access(id, size), naive.access(id, w),
                    "{} differs at request {} (id {}, size {})", p.name(), i, id, size);
                prop_assert!(ours.used() <= cap);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The eviction log is exact for every policy: what was admitted and not reported evicted
    /// is what the cache holds, and nothing is reported twice without coming back.
    #[test]
    fn eviction_logs_account_for_every_object(reqs in requests(), cap in 1u64..40,
                                              bytes in any::<bool>()) {
        let unit = if bytes { Unit::Bytes } else { Unit::Objects };
        let capacity = Capacity::new(cap, unit).unwrap();
        for &p in Policy::ALL {
            let mut c = p.build(capacity);
            c.log_evictions();
            let mut held = std::collections::BTreeSet::new();
            let mut out = Vec::new();
            for &(id, size) in &reqs {
                if !c.access(id, size) && c.contains(id) {
                    held.insert(id);
                }
                out.clear();
                c.drain_evictions(&mut out);
                for e in &out {
                    prop_assert!(held.remove(e), "{} reported {} evicted twice", p.name(), e);
                }
                prop_assert_eq!(held.len(), c.len(), "{}", p.name());
                prop_assert!(held.iter().all(|&x| c.contains(x)), "{}", p.name());
            }
        }
    }

    /// Every cache of a bank answers exactly as the naive LRU of its capacity and holds the
    /// same keys in the same recency order, for 64- and 32-bit keys, capacities across
    /// several lookup blocks.
    #[test]
    fn lru_bank_matches_lru(reqs in proptest::collection::vec((0usize..3, 0u64..80), 1..2000),
                            caps in proptest::collection::vec(1u32..50, 3)) {
        let mut bank = lru_bank::LruBank::new(&caps).unwrap();
        let mut bank32 = lru_bank::LruBank::<u32>::new(&caps).unwrap();
        let mut naive: Vec<NaiveLru> =
            caps.iter().map(|&c| NaiveLru(VecDeque::new(), u64::from(c))).collect();
        for (i, id) in reqs {
            let hit = naive[i].access(id, 1);
            prop_assert_eq!(bank.access(i, id), hit);
            prop_assert_eq!(bank32.access(i, id as u32), hit);
            prop_assert_eq!(bank.len(i), naive[i].0.len());
            prop_assert!(bank.contains(i, id));
        }
        for (i, n) in naive.iter().enumerate() {
            let order: Vec<u64> = n.0.iter().map(|&(id, _)| id).collect();
            prop_assert_eq!(&bank.keys(i), &order);
            let order32: Vec<u32> = order.iter().map(|&id| id as u32).collect();
            prop_assert_eq!(bank32.keys(i), order32);
        }
    }
}

#[test]
fn lru_bank_refuses_bad_capacities() {
    assert!(lru_bank::LruBank::<u64>::new(&[0]).is_err());
    assert!(lru_bank::LruBank::<u64>::new(&[lru_bank::MAX_OBJECTS + 1]).is_err());
    assert!(lru_bank::LruBank::<u64>::new(&[1, lru_bank::MAX_OBJECTS]).is_ok());
}

#[test]
fn oversized_objects_are_not_admitted() {
    // libCacheSim's S3-FIFO admits only objects lighter than its small queue (10%).
    let mut c = Policy::S3Fifo.build(Capacity::new(100, Unit::Bytes).unwrap());
    assert!(
        !c.access(1, 10) && !c.contains(1),
        "as heavy as S: evicted for, not inserted"
    );
    assert!(!c.access(2, 9) && c.access(2, 9));
    for &p in Policy::ALL.iter().filter(|&&p| p != Policy::S3Fifo) {
        let mut c = p.build(Capacity::new(10, Unit::Bytes).unwrap());
        assert!(!c.access(1, 11));
        assert!(!c.contains(1), "{}", p.name());
        assert!(!c.access(2, 10));
        assert!(c.access(2, 10), "{}", p.name());
        assert_eq!(c.used(), 10);
    }
}

#[test]
fn registry_names_roundtrip_and_refuse_unknown() {
    for &p in Policy::ALL {
        assert_eq!(p.name().parse::<Policy>().unwrap(), p);
    }
    let e = "arc".parse::<Policy>().unwrap_err().to_string();
    assert!(
        e.contains("arc") && e.contains("lru, fifo, lfu, s3fifo, sieve, clock, s3fifo-paper"),
        "{e}"
    );
    assert!(Capacity::objects(0).is_err());
}

/// A 2-bit CLOCK gives an object hit twice two second chances; the 1-bit one gives one.
#[test]
fn clock_counter_bits() {
    let run = |mut c: clock::Clock| {
        for id in [1, 1, 1, 2, 3, 4] {
            c.access(id, 1);
        }
        c.access(1, 1)
    };
    let cap = Capacity::objects(2).unwrap();
    assert!(run(clock::Clock::with_bits(cap, 2)));
    assert!(!run(clock::Clock::new(cap)));
}

#[test]
fn replay_counts_hits() {
    let reqs: Vec<crate::workload::Request> = [1u64, 2, 1, 3, 1, 2]
        .iter()
        .map(|&id| crate::workload::Request {
            time: 0,
            id,
            size: 1,
            next_access: -1,
        })
        .collect();
    // LRU of 2: 1m 2m 1h 3m(evicts 2) 1h 2m.
    let mut c = Policy::Lru.build(Capacity::objects(2).unwrap());
    assert_eq!(c.replay_dyn(&reqs), 2);
    // FIFO of 2: 1m 2m 1h 3m(evicts 1) 1m(evicts 2) 2m.
    let mut c = Policy::Fifo.build(Capacity::objects(2).unwrap());
    assert_eq!(c.replay_dyn(&reqs), 1);
}
