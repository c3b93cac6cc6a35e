//! ARC (Megiddo and Modha, "ARC: A self-tuning, low overhead replacement cache", FAST 2003), as
//! libCacheSim's `ARC` implements it, in objects or bytes: T1 (seen once recently) and T2 (seen
//! at least twice) hold the data, the ghost lists B1 and B2 the ids they evicted, and the target
//! size p of T1 moves up on a hit in B1 (by max(|B2| / |B1|, 1)) and down on a hit in B2. A hit
//! in T1 or T2 moves the object to T2's head; a ghost hit enters T2. Eviction is the paper's
//! REPLACE, with libCacheSim's byte-size generalisation of the cases that trim the ghosts
//! (sizes are sums of weights, and p is a double).

use super::ghost::Ghost;
use super::slots::{List, Slots};
use super::{Cache, Capacity, slot_cache};

/// Adaptive replacement cache.
#[derive(Debug, Clone)]
pub struct Arc {
    slots: Slots,
    t1: List,
    t2: List,
    /// Whether slot s is in T2 (else in T1).
    in_t2: Vec<bool>,
    b1: Ghost,
    b2: Ghost,
    /// Target weight of T1.
    p: f64,
    /// The last ghost hit was in B2 (libCacheSim's `curr_obj_in_L2_ghost`, which the REPLACE
    /// tie rule reads; it is cleared when a request finds its object, data or ghost, and after a
    /// ghost hit's insertion).
    last_ghost_b2: bool,
    cap: Capacity,
}

impl Arc {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let n = cap.expected_objects();
        Arc {
            slots: Slots::for_capacity(cap),
            t1: List::default(),
            t2: List::default(),
            in_t2: Vec::with_capacity(n),
            b1: Ghost::new(u64::MAX, n),
            b2: Ghost::new(u64::MAX, n),
            p: 0.0,
            last_ghost_b2: false,
            cap,
        }
    }

    /// REPLACE: T1's tail to B1 if T1 is over its target (or at it after a B2 hit, or T2 is
    /// empty), else T2's tail to B2.
    fn replace(&mut self) {
        let t1 = self.t1.used as f64;
        let from_t1 = (self.t1.used > 0 && (t1 > self.p || (t1 == self.p && self.last_ghost_b2)))
            || self.t2.used == 0;
        let (list, ghost) = if from_t1 {
            (&mut self.t1, &mut self.b1)
        } else {
            (&mut self.t2, &mut self.b2)
        };
        let t = list.tail;
        ghost.push(self.slots.key(t), self.slots.weight(t));
        self.slots.unlink(list, t);
        self.slots.release(t);
    }

    /// One eviction for an incoming object of weight `w` that missed everywhere (the paper's
    /// case IV, by weights).
    fn evict_miss(&mut self, w: u64) {
        let c = self.cap.amount;
        if self.t1.used + self.b1.used() + w > c {
            if self.b1.used() > 0 {
                self.b1.pop_oldest();
                self.replace();
            } else {
                let t = self.t1.tail;
                self.slots.unlink(&mut self.t1, t);
                self.slots.release(t);
            }
        } else {
            let total = self.t1.used + self.b1.used() + self.t2.used + self.b2.used();
            if total >= 2 * c && self.b2.used() > 0 {
                self.b2.pop_oldest();
            }
            self.replace();
        }
    }
}

impl Cache for Arc {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            self.last_ghost_b2 = false;
            if self.in_t2[s as usize] {
                if self.t2.head != s {
                    self.slots.unlink(&mut self.t2, s);
                    self.slots.push_front(&mut self.t2, s);
                }
            } else {
                self.slots.unlink(&mut self.t1, s);
                self.slots.push_front(&mut self.t2, s);
                self.in_t2[s as usize] = true;
            }
            return true;
        }
        let c = self.cap.amount as f64;
        let (b1, b2) = (self.b1.used() as f64, self.b2.used() as f64);
        let ghost_hit = if self.b1.take(id) {
            self.last_ghost_b2 = false;
            self.p = (self.p + (b2 / b1).max(1.0)).min(c);
            true
        } else if self.b2.take(id) {
            self.last_ghost_b2 = true;
            self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
            true
        } else {
            false
        };
        let Some(w) = self.cap.admissible(size) else {
            return false;
        };
        while self.t1.used + self.t2.used + u64::from(w) > self.cap.amount {
            if ghost_hit {
                self.replace();
            } else {
                self.evict_miss(u64::from(w));
            }
        }
        let s = self.slots.alloc(id, w);
        if s as usize == self.in_t2.len() {
            self.in_t2.push(false);
        }
        self.in_t2[s as usize] = ghost_hit;
        if ghost_hit {
            self.slots.push_front(&mut self.t2, s);
            self.last_ghost_b2 = false;
        } else {
            self.slots.push_front(&mut self.t1, s);
        }
        false
    }
    slot_cache!([t1, t2], in_t2, b1, b2);
}
