//! 2Q (Johnson and Shasha, "2Q: A low overhead high performance buffer management replacement
//! algorithm", VLDB 1994), the full version, as libCacheSim's `TwoQ` implements it: a FIFO A1in
//! of a quarter of the capacity for first-time objects, a ghost FIFO A1out (ids only, half the
//! capacity) of what A1in evicted, and an LRU Am for objects requested again while in A1out. A
//! hit in A1in changes nothing; Am is evicted from while A1in is within its share. An object
//! heavier than A1in is not admitted.

use super::ghost::Ghost;
use super::slots::{List, Slots, put};
use super::{Cache, Capacity, slot_cache};

/// A1in's share of the capacity (`Ain-size-ratio`).
pub const IN_SHARE: f64 = 0.25;
/// A1out's share of the capacity (`Aout-size-ratio`).
pub const OUT_SHARE: f64 = 0.5;

/// Full 2Q.
#[derive(Debug, Clone)]
pub struct TwoQ {
    slots: Slots,
    a_in: List,
    am: List,
    /// Whether slot s is in Am (else in A1in).
    in_am: Vec<bool>,
    a_out: Ghost,
    in_cap: u64,
    am_cap: u64,
    cap: Capacity,
}

impl TwoQ {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        // int64 casts of double products, as in TwoQ_init.
        let in_cap = (cap.amount as f64 * IN_SHARE) as u64;
        let out_cap = (cap.amount as f64 * OUT_SHARE) as u64;
        TwoQ {
            slots: Slots::for_capacity(cap),
            a_in: List::default(),
            am: List::default(),
            in_am: Vec::with_capacity(cap.expected_objects()),
            a_out: Ghost::new(out_cap, cap.expected_objects() / 2),
            in_cap,
            am_cap: cap.amount - in_cap,
            cap,
        }
    }

    fn evict(&mut self) {
        if self.am.used > 0 && self.a_in.used <= self.in_cap {
            let t = self.am.tail;
            self.slots.unlink(&mut self.am, t);
            self.slots.release(t);
        } else {
            let t = self.a_in.tail;
            let (id, w) = (self.slots.key(t), self.slots.weight(t));
            self.a_out.push_fitting(id, w);
            self.slots.unlink(&mut self.a_in, t);
            self.slots.release(t);
        }
    }

    fn alloc(&mut self, id: u64, w: u32, am: bool) -> u32 {
        let s = self.slots.alloc(id, w);
        put(&mut self.in_am, s, am);
        s
    }
}

impl Cache for TwoQ {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            if self.in_am[s as usize] && self.am.head != s {
                self.slots.unlink(&mut self.am, s);
                self.slots.push_front(&mut self.am, s);
            }
            return true;
        }
        let ghost_hit = self.a_out.take(id);
        let Some(w) = self.cap.admissible(size) else {
            return false;
        };
        if u64::from(w) > self.in_cap {
            return false;
        }
        while self.a_in.used + self.am.used + u64::from(w) > self.cap.amount {
            self.evict();
        }
        if ghost_hit {
            // Am->get: Am is an LRU of its own share, and evicts within it.
            if u64::from(w) > self.am_cap {
                return false;
            }
            while self.am.used + u64::from(w) > self.am_cap {
                let t = self.am.tail;
                self.slots.unlink(&mut self.am, t);
                self.slots.release(t);
            }
            let s = self.alloc(id, w, true);
            self.slots.push_front(&mut self.am, s);
        } else {
            let s = self.alloc(id, w, false);
            self.slots.push_front(&mut self.a_in, s);
        }
        false
    }
    slot_cache!([a_in, am], in_am, a_out);
}
