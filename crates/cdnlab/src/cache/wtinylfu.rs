//! W-TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A highly efficient cache admission
//! policy", ACM Transactions on Storage 2017; the design Caffeine ships), as libCacheSim's
//! `WTinyLFU` implements it with its defaults: a window LRU of 1 % of the capacity takes every
//! new object; a main SLRU (segments 1:4) takes the window's victims while it has room, and
//! after that a window victim enters only if a frequency sketch estimates it more popular than
//! the main cache's victim (which is then evicted); otherwise the window victim is evicted.
//!
//! The sketch is libCacheSim's counting Bloom filter, reproduced so results match it request
//! for request: 32-bit counters, ceil(-ln(0.001) / ln(2)^2 x M) of them and
//! ceil(ln 2 x that per-entry count) = 10 hash positions (a + i b) mod counters, a and b the low
//! 32 bits of XXH64 of the id with two fixed seeds, M the main cache's capacity. It counts
//! insertions, hits in the main cache and each window victim considered, and halves every
//! counter after 32 M main-cache hits. As in libCacheSim, an object heavier than the window is
//! not admitted, so a capacity below 100 objects caches nothing.

use super::slots::{List, Slots, put};
use super::slru::Segments;
use super::{Cache, Capacity, slot_cache};

/// The window's share of the capacity.
pub const WINDOW_SHARE: f64 = 0.01;
/// Marks a slot in the window in `seg_of`.
const WINDOW: u8 = u8::MAX;

/// libCacheSim's `HASH_SEED0` and `HASH_SEED1`.
const SEEDS: [u64; 2] = [0x1234_5678, 0x1234_4321];

/// libCacheSim's `minimalIncrementCBF` (which, despite its name, increments every position).
#[derive(Debug, Clone)]
struct Sketch {
    counters: Vec<u32>,
    hashes: u32,
}

impl Sketch {
    // libCacheSim's literals for ln(2)^2 and ln(2), kept as written so sizes match exactly.
    #[allow(clippy::approx_constant)]
    fn new(entries: u64, error: f64) -> Self {
        let per_entry = -error.ln() / 0.480453013918201;
        let hashes = (0.693147180559945 * per_entry).ceil() as u32;
        let mut n = (per_entry * entries as i32 as f64)
            .ceil()
            .min(f64::from(i32::MAX)) as u32;
        if n < hashes {
            n = hashes * 2;
        }
        Sketch {
            counters: vec![0; n as usize],
            hashes,
        }
    }

    #[inline]
    fn positions(&self, id: u64) -> impl Iterator<Item = usize> + use<> {
        let key = id.to_le_bytes();
        let a = xxhash_rust::xxh64::xxh64(&key, SEEDS[0]) as u32;
        let b = xxhash_rust::xxh64::xxh64(&key, SEEDS[1]) as u32;
        let n = self.counters.len() as u32;
        (0..self.hashes).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % n) as usize)
    }

    fn estimate(&self, id: u64) -> u32 {
        self.positions(id)
            .map(|x| self.counters[x])
            .min()
            .unwrap_or(u32::MAX)
    }

    fn add(&mut self, id: u64) {
        if self.estimate(id) < u32::MAX {
            for x in self.positions(id) {
                self.counters[x] = self.counters[x].wrapping_add(1);
            }
        }
    }

    fn halve(&mut self) {
        for c in &mut self.counters {
            *c >>= 1;
        }
    }
}

/// Window TinyLFU.
#[derive(Debug, Clone)]
pub struct WTinyLfu {
    slots: Slots,
    window: List,
    main: Segments,
    /// Segment of each slot in `main`, or [`WINDOW`].
    seg_of: Vec<u8>,
    window_cap: u64,
    main_cap: u64,
    sketch: Sketch,
    /// Main-cache hits between halvings, and the count since the last one.
    halve_every: u64,
    since_halving: u64,
    cap: Capacity,
}

impl WTinyLfu {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let window_cap = (cap.amount as f64 * WINDOW_SHARE) as u64;
        let main_cap = cap.amount - window_cap;
        WTinyLfu {
            slots: Slots::for_capacity(cap),
            window: List::default(),
            main: Segments::ratio(&[1, 4], main_cap),
            seg_of: Vec::with_capacity(cap.expected_objects()),
            window_cap,
            main_cap,
            sketch: Sketch::new(main_cap, 0.001),
            halve_every: 32 * main_cap,
            since_halving: 0,
            cap,
        }
    }

    /// Makes room (`WTinyLFU_evict`): window victims move to the main cache while it has room;
    /// then one duel between the window's and the main cache's victims evicts the loser.
    fn evict(&mut self) {
        loop {
            if self.window.used == 0 {
                self.main.evict(&mut self.slots);
                return;
            }
            let v = self.window.tail;
            let (vid, vw) = (self.slots.key(v), self.slots.weight(v));
            let mut done = false;
            if self.main.used() + u64::from(vw) <= self.main_cap {
                self.slots.unlink(&mut self.window, v);
                self.main.insert(&mut self.slots, &mut self.seg_of, v, vw);
            } else {
                let mv = self.main.victim().expect("a main cache victim");
                let mid = self.slots.key(mv);
                if self.sketch.estimate(vid) > self.sketch.estimate(mid) {
                    self.main.evict(&mut self.slots);
                    self.slots.unlink(&mut self.window, v);
                    self.main.insert(&mut self.slots, &mut self.seg_of, v, vw);
                } else {
                    self.slots.unlink(&mut self.window, v);
                    self.slots.release(v);
                }
                done = true;
            }
            self.sketch.add(vid);
            if done {
                return;
            }
        }
    }
}

impl Cache for WTinyLfu {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            if self.seg_of[s as usize] == WINDOW {
                if self.window.head != s {
                    self.slots.unlink(&mut self.window, s);
                    self.slots.push_front(&mut self.window, s);
                }
            } else {
                self.main.hit(&mut self.slots, &mut self.seg_of, s);
                self.sketch.add(id);
                self.since_halving += 1;
                if self.since_halving >= self.halve_every {
                    self.since_halving = 0;
                    self.sketch.halve();
                }
            }
            return true;
        }
        let Some(w) = self.cap.admissible(size) else {
            return false;
        };
        if u64::from(w) > self.window_cap || !self.main.can_insert(w) {
            return false;
        }
        while self.window.used + self.main.used() + u64::from(w) > self.cap.amount {
            self.evict();
        }
        let s = self.slots.alloc(id, w);
        put(&mut self.seg_of, s, WINDOW);
        self.slots.push_front(&mut self.window, s);
        self.sketch.add(id);
        false
    }
    slot_cache!([window, main], seg_of, sketch.counters);
}
