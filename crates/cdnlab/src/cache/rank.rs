//! Objects ordered by a priority, the lowest evicted first, ties to the least recently
//! requested: the store under GDSF and LFUDA (libCacheSim's `abstractRank`). Evicting sets the
//! inflation value L to the evicted priority.

use std::collections::BTreeSet;

use super::Capacity;
use super::slots::{Slots, put};

/// Per object: its priority, the request count when it was last requested, its request count.
#[derive(Debug, Clone, Copy)]
struct Meta {
    pri: f64,
    vtime: u64,
    freq: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Ranked {
    pub(crate) slots: Slots,
    /// (priority bits, vtime, slot); priorities are non-negative, so their bits sort as they do.
    order: BTreeSet<(u64, u64, u32)>,
    meta: Vec<Meta>,
    pub(crate) used: u64,
    /// Requests so far (libCacheSim's `n_req`).
    pub(crate) clock: u64,
    /// The priority of the last evicted object (L).
    pub(crate) inflation: f64,
}

impl Ranked {
    pub(crate) fn new(cap: Capacity) -> Self {
        Ranked {
            slots: Slots::for_capacity(cap),
            order: BTreeSet::new(),
            meta: Vec::with_capacity(cap.expected_objects()),
            used: 0,
            clock: 0,
            inflation: 0.0,
        }
    }

    fn key(&self, s: u32) -> (u64, u64, u32) {
        let m = self.meta[s as usize];
        (m.pri.to_bits(), m.vtime, s)
    }

    /// A hit on slot `s`: counts it, and re-ranks it with `pri(count)`.
    pub(crate) fn hit(&mut self, s: u32, pri: impl Fn(u32) -> f64) {
        let removed = self.order.remove(&self.key(s));
        debug_assert!(removed);
        let m = &mut self.meta[s as usize];
        m.freq += 1;
        m.pri = pri(m.freq);
        m.vtime = self.clock;
        let k = self.key(s);
        self.order.insert(k);
    }

    /// Stores `id` of weight `w` with count 1 and priority `pri`.
    pub(crate) fn insert(&mut self, id: u64, w: u32, pri: f64) {
        debug_assert!(pri >= 0.0);
        let s = self.slots.alloc(id, w);
        let m = Meta {
            pri,
            vtime: self.clock,
            freq: 1,
        };
        put(&mut self.meta, s, m);
        self.used += u64::from(w);
        let k = self.key(s);
        self.order.insert(k);
    }

    /// Evicts the lowest-priority object, raising the inflation value to its priority.
    pub(crate) fn evict(&mut self) {
        let (_, _, s) = self.order.pop_first().expect("an object to evict");
        self.inflation = self.meta[s as usize].pri;
        self.used -= u64::from(self.slots.weight(s));
        self.slots.release(s);
    }

    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    pub(crate) fn occupancy(&self) -> super::Occupancy {
        super::Occupancy {
            objects: self.len(),
            used: self.used,
            heap_bytes: self.heap_bytes(),
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        // An estimate: 28 bytes per ordered entry, its 24-byte key and a share of the B-tree
        // nodes' headers, not their unused room (so low when nodes are part full).
        self.slots.heap_bytes() + self.meta.capacity() * 24 + self.order.len() * 28
    }
}
