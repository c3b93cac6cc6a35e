//! Deliberately naive reference models (vectors and linear scans, written from the papers'
//! descriptions and pseudocode) of the policies with one reading: LRU, FIFO, SIEVE, CLOCK, LFU,
//! SLRU, 2Q, ARC, W-TinyLFU, the greedy-dual family and Belady; and [`model`], the model of
//! every policy.

use super::steps::{NaiveLirs, NaiveLirsLcs, NaiveS3, NaiveS3Lcs};
use crate::cache::Policy;
use std::collections::VecDeque;

/// Naive models: each keeps (id, weight) in a VecDeque with the newest at the front.
pub(super) trait Model {
    fn access(&mut self, id: u64, w: u32) -> bool;
    /// With the request's next access (-1: never), for offline models.
    fn access_next(&mut self, id: u64, w: u32, _next: i64) -> bool {
        self.access(id, w)
    }
}

pub(super) fn total(q: &VecDeque<(u64, u32)>) -> u64 {
    q.iter().map(|e| u64::from(e.1)).sum()
}

pub(super) fn take(q: &mut VecDeque<(u64, u32)>, id: u64) -> Option<(u64, u32)> {
    q.iter().position(|e| e.0 == id).and_then(|i| q.remove(i))
}

pub(super) fn fits(q: &VecDeque<(u64, u32)>, w: u32, cap: u64) -> bool {
    q.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) <= cap
}

pub(super) struct NaiveLru(pub(super) VecDeque<(u64, u32)>, pub(super) u64);
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

pub(super) struct NaiveFifo(VecDeque<(u64, u32)>, u64);
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
pub(super) struct NaiveSieve(Vec<(u64, u32, bool)>, Option<usize>, u64);
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
pub(super) struct NaiveClock(VecDeque<(u64, u32, bool)>, u64);
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
pub(super) struct NaiveLfu(Vec<(u64, u32, u32, u64)>, u64, u64);
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

/// SLRU from its description: segments of equal share, newest at the front of each; a new
/// object goes to the lowest segment with room; a hit moves an object one segment up; a
/// segment over its share pushes its oldest one segment down, and segment 0 drops it.
pub(super) struct NaiveSlru {
    segs: Vec<VecDeque<(u64, u32)>>,
    share: Vec<u64>,
    cap: u64,
}
impl NaiveSlru {
    fn new(shares: Vec<u64>, cap: u64) -> Self {
        NaiveSlru {
            segs: vec![VecDeque::new(); shares.len()],
            share: shares,
            cap,
        }
    }
    fn used(&self) -> u64 {
        self.segs.iter().map(total).sum()
    }
    fn overflow(&mut self, i: usize) {
        while total(&self.segs[i]) > self.share[i] {
            let e = self.segs[i].pop_back().unwrap();
            if i > 0 {
                self.segs[i - 1].push_front(e);
                self.overflow(i - 1);
            }
        }
    }
    fn drop_oldest(&mut self) {
        let i = self.segs.iter().position(|q| total(q) > 0).unwrap();
        self.segs[i].pop_back();
    }
    fn hit(&mut self, id: u64) -> bool {
        let Some(i) = self.segs.iter().position(|q| q.iter().any(|e| e.0 == id)) else {
            return false;
        };
        let e = take(&mut self.segs[i], id).unwrap();
        let j = (i + 1).min(self.segs.len() - 1);
        self.segs[j].push_front(e);
        self.overflow(j);
        true
    }
    fn insert(&mut self, id: u64, w: u32) {
        let i = (0..self.segs.len())
            .find(|&i| total(&self.segs[i]) + u64::from(w) <= self.share[i])
            .unwrap_or_else(|| {
                while self.used() + u64::from(w) > self.cap {
                    self.drop_oldest();
                }
                0
            });
        self.segs[i].push_front((id, w));
    }
    fn admissible(&self, w: u32) -> bool {
        u64::from(w) <= self.cap && u64::from(w) <= self.share[0]
    }
}
impl Model for NaiveSlru {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if self.hit(id) {
            return true;
        }
        if !self.admissible(w) {
            return false;
        }
        while self.used() + u64::from(w) > self.cap {
            self.drop_oldest();
        }
        self.insert(id, w);
        false
    }
}

/// Full 2Q from the paper: A1in FIFO (25 %), A1out ghost FIFO (50 %), Am LRU (the rest).
pub(super) struct NaiveTwoQ {
    a_in: VecDeque<(u64, u32)>,
    a_out: VecDeque<(u64, u32)>,
    am: VecDeque<(u64, u32)>,
    cap: u64,
    in_cap: u64,
    out_cap: u64,
}
impl Model for NaiveTwoQ {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if self.a_in.iter().any(|e| e.0 == id) {
            return true;
        }
        if let Some(e) = take(&mut self.am, id) {
            self.am.push_front(e);
            return true;
        }
        let was_out = take(&mut self.a_out, id).is_some();
        if u64::from(w) > self.in_cap || u64::from(w) > self.cap {
            return false;
        }
        while total(&self.a_in) + total(&self.am) + u64::from(w) > self.cap {
            if !self.am.is_empty() && total(&self.a_in) <= self.in_cap {
                self.am.pop_back();
            } else {
                let e = self.a_in.pop_back().unwrap();
                if u64::from(e.1) <= self.out_cap {
                    while total(&self.a_out) + u64::from(e.1) > self.out_cap {
                        self.a_out.pop_back();
                    }
                    self.a_out.push_front(e);
                }
            }
        }
        if was_out {
            let am_cap = self.cap - self.in_cap;
            if u64::from(w) > am_cap {
                return false;
            }
            while total(&self.am) + u64::from(w) > am_cap {
                self.am.pop_back();
            }
            self.am.push_front((id, w));
        } else {
            self.a_in.push_front((id, w));
        }
        false
    }
}

/// ARC from the paper's pseudocode (cases I to IV), by weights as libCacheSim generalises it.
pub(super) struct NaiveArc {
    t1: VecDeque<(u64, u32)>,
    t2: VecDeque<(u64, u32)>,
    b1: VecDeque<(u64, u32)>,
    b2: VecDeque<(u64, u32)>,
    p: f64,
    hit_b2: bool,
    cap: u64,
}
impl NaiveArc {
    fn replace(&mut self) {
        let t1 = total(&self.t1);
        if (t1 > 0 && (t1 as f64 > self.p || (t1 as f64 == self.p && self.hit_b2)))
            || self.t2.is_empty()
        {
            let e = self.t1.pop_back().unwrap();
            self.b1.push_front(e);
        } else {
            let e = self.t2.pop_back().unwrap();
            self.b2.push_front(e);
        }
    }
}
impl Model for NaiveArc {
    fn access(&mut self, id: u64, w: u32) -> bool {
        // Case I: a hit in T1 or T2.
        if let Some(e) = take(&mut self.t1, id).or_else(|| take(&mut self.t2, id)) {
            self.hit_b2 = false;
            self.t2.push_front(e);
            return true;
        }
        let c = self.cap as f64;
        let (b1, b2) = (total(&self.b1) as f64, total(&self.b2) as f64);
        // Cases II and III: a ghost hit adapts p.
        let ghost = if take(&mut self.b1, id).is_some() {
            self.hit_b2 = false;
            self.p = (self.p + (b2 / b1).max(1.0)).min(c);
            true
        } else if take(&mut self.b2, id).is_some() {
            self.hit_b2 = true;
            self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
            true
        } else {
            false
        };
        if u64::from(w) > self.cap {
            return false;
        }
        while total(&self.t1) + total(&self.t2) + u64::from(w) > self.cap {
            if ghost {
                self.replace();
            } else if total(&self.t1) + total(&self.b1) + u64::from(w) > self.cap {
                // Case IV A: L1 is full.
                if !self.b1.is_empty() {
                    self.b1.pop_back();
                    self.replace();
                } else {
                    self.t1.pop_back();
                }
            } else {
                // Case IV B.
                let all = total(&self.t1) + total(&self.t2) + total(&self.b1) + total(&self.b2);
                if all >= 2 * self.cap && !self.b2.is_empty() {
                    self.b2.pop_back();
                }
                self.replace();
            }
        }
        if ghost {
            self.t2.push_front((id, w));
            self.hit_b2 = false;
        } else {
            self.t1.push_front((id, w));
        }
        false
    }
}

/// W-TinyLFU as described in wtinylfu.rs, with its own copy of the sketch's arithmetic: a
/// window LRU, a main SLRU of two segments (1:4), and a duel of estimated frequencies.
pub(super) struct NaiveWTinyLfu {
    window: VecDeque<(u64, u32)>,
    main: NaiveSlru,
    counters: Vec<u32>,
    window_cap: u64,
    cap: u64,
    main_hits: u64,
}
impl NaiveWTinyLfu {
    fn new(cap: u64) -> Self {
        let window_cap = (cap as f64 * 0.01) as u64;
        let main_cap = cap - window_cap;
        let shares = vec![
            (0.2 * main_cap as f64) as u64,
            (0.8 * main_cap as f64) as u64,
        ];
        // 10 hashes and ceil(14.377... x M) counters: -ln(0.001) / ln(2)^2 per entry.
        let per = -(0.001f64).ln() / (2f64.ln() * 2f64.ln());
        let n = (per * main_cap as f64).ceil() as usize;
        let n = if n < 10 { 20 } else { n };
        NaiveWTinyLfu {
            window: VecDeque::new(),
            main: NaiveSlru::new(shares, main_cap),
            counters: vec![0; n],
            window_cap,
            cap,
            main_hits: 0,
        }
    }
    fn positions(&self, id: u64) -> Vec<usize> {
        let h = |seed| xxhash_rust::xxh64::xxh64(&id.to_le_bytes(), seed) as u32;
        let (a, b) = (h(0x12345678), h(0x12344321));
        let n = self.counters.len() as u32;
        (0..10u32)
            .map(|i| (a.wrapping_add(i.wrapping_mul(b)) % n) as usize)
            .collect()
    }
    fn estimate(&self, id: u64) -> u32 {
        self.positions(id)
            .iter()
            .map(|&x| self.counters[x])
            .min()
            .unwrap()
    }
    fn add(&mut self, id: u64) {
        for x in self.positions(id) {
            self.counters[x] += 1;
        }
    }
}
impl Model for NaiveWTinyLfu {
    fn access(&mut self, id: u64, w: u32) -> bool {
        if let Some(e) = take(&mut self.window, id) {
            self.window.push_front(e);
            return true;
        }
        if self.main.hit(id) {
            self.add(id);
            self.main_hits += 1;
            if self.main_hits == 32 * self.main.cap {
                self.main_hits = 0;
                self.counters.iter_mut().for_each(|c| *c /= 2);
            }
            return true;
        }
        if u64::from(w) > self.window_cap || !self.main.admissible(w) {
            return false;
        }
        while total(&self.window) + self.main.used() + u64::from(w) > self.cap {
            loop {
                let Some(&(vid, vw)) = self.window.back() else {
                    self.main.drop_oldest();
                    break;
                };
                self.window.pop_back();
                if self.main.used() + u64::from(vw) <= self.main.cap {
                    self.main.insert(vid, vw);
                    self.add(vid);
                    continue;
                }
                let mid = self
                    .main
                    .segs
                    .iter()
                    .find(|q| !q.is_empty())
                    .unwrap()
                    .back()
                    .unwrap()
                    .0;
                if self.estimate(vid) > self.estimate(mid) {
                    self.main.drop_oldest();
                    self.main.insert(vid, vw);
                }
                self.add(vid);
                break;
            }
        }
        self.window.push_front((id, w));
        self.add(id);
        false
    }
}

/// A priority cache from its definition: (id, weight, count, priority, last request).
pub(super) struct NaiveGreedyDual {
    objs: Vec<(u64, u32, u32, f64, u64)>,
    cap: u64,
    l: f64,
    now: u64,
    /// GDSF: priority L + count x 10^6 / size, inserted before evicting; LFUDA: L + count,
    /// evicting before inserting.
    gdsf: bool,
}
impl NaiveGreedyDual {
    fn pri(&self, count: u32, w: u32) -> f64 {
        if self.gdsf {
            self.l + f64::from(count) * 1.0e6 / f64::from(w)
        } else {
            self.l + f64::from(count)
        }
    }
    fn evict_lowest(&mut self) {
        let i = (0..self.objs.len())
            .min_by(|&a, &b| {
                let (x, y) = (&self.objs[a], &self.objs[b]);
                x.3.total_cmp(&y.3).then(x.4.cmp(&y.4))
            })
            .unwrap();
        self.l = self.objs.remove(i).3;
    }
    fn used(&self) -> u64 {
        self.objs.iter().map(|e| u64::from(e.1)).sum()
    }
}
impl Model for NaiveGreedyDual {
    fn access(&mut self, id: u64, w: u32) -> bool {
        self.now += 1;
        if let Some(i) = self.objs.iter().position(|e| e.0 == id) {
            let (count, w) = (self.objs[i].2 + 1, self.objs[i].1);
            let p = self.pri(count, w);
            self.objs[i].2 = count;
            self.objs[i].3 = p;
            self.objs[i].4 = self.now;
            return true;
        }
        if u64::from(w) > self.cap {
            return false;
        }
        if self.gdsf {
            let p = self.pri(1, w);
            self.objs.push((id, w, 1, p, self.now));
            while self.used() > self.cap {
                self.evict_lowest();
            }
        } else {
            while self.used() + u64::from(w) > self.cap {
                self.evict_lowest();
            }
            let p = self.pri(1, w);
            self.objs.push((id, w, 1, p, self.now));
        }
        false
    }
}

/// Belady from its definition: evict the object requested furthest in the future.
pub(super) struct NaiveBelady(Vec<(u64, u32, i64)>, u64);
impl Model for NaiveBelady {
    fn access(&mut self, _: u64, _: u32) -> bool {
        unreachable!("Belady needs the next access")
    }
    fn access_next(&mut self, id: u64, w: u32, next: i64) -> bool {
        let next = if next < 0 { i64::MAX } else { next };
        if let Some(e) = self.0.iter_mut().find(|e| e.0 == id) {
            e.2 = next;
            return true;
        }
        if u64::from(w) > self.1 {
            return false;
        }
        while self.0.iter().map(|e| u64::from(e.1)).sum::<u64>() + u64::from(w) > self.1 {
            let i = (0..self.0.len()).max_by_key(|&i| self.0[i].2).unwrap();
            self.0.remove(i);
        }
        self.0.push((id, w, next));
        false
    }
}

pub(super) fn model(p: Policy, cap: u64) -> Box<dyn Model> {
    match p {
        Policy::Lru => Box::new(NaiveLru(VecDeque::new(), cap)),
        Policy::Fifo => Box::new(NaiveFifo(VecDeque::new(), cap)),
        Policy::Lfu => Box::new(NaiveLfu(Vec::new(), cap, 0)),
        Policy::S3Fifo => Box::new(NaiveS3Lcs::new(cap)),
        Policy::S3FifoPaper => Box::new(NaiveS3::new(cap)),
        Policy::Sieve => Box::new(NaiveSieve(Vec::new(), None, cap)),
        Policy::Clock => Box::new(NaiveClock(VecDeque::new(), cap)),
        Policy::Slru => Box::new(NaiveSlru::new(vec![cap / 4; 4], cap)),
        Policy::TwoQ => Box::new(NaiveTwoQ {
            a_in: VecDeque::new(),
            a_out: VecDeque::new(),
            am: VecDeque::new(),
            cap,
            in_cap: (cap as f64 * 0.25) as u64,
            out_cap: (cap as f64 * 0.5) as u64,
        }),
        Policy::Arc => Box::new(NaiveArc {
            t1: VecDeque::new(),
            t2: VecDeque::new(),
            b1: VecDeque::new(),
            b2: VecDeque::new(),
            p: 0.0,
            hit_b2: false,
            cap,
        }),
        Policy::WTinyLfu => Box::new(NaiveWTinyLfu::new(cap)),
        Policy::Gdsf | Policy::Lfuda => Box::new(NaiveGreedyDual {
            objs: Vec::new(),
            cap,
            l: 0.0,
            now: 0,
            gdsf: p == Policy::Gdsf,
        }),
        Policy::Belady => Box::new(NaiveBelady(Vec::new(), cap)),
        Policy::Lirs => Box::new(NaiveLirsLcs::new(cap)),
        Policy::LirsPaper => Box::new(NaiveLirs::new(cap)),
    }
}
