//! S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023).
//!
//! Three FIFO queues: a small queue S (10% of the capacity), a main queue M (the rest) and a
//! ghost queue G of ids only (as many capacity units as M). A hit increments the object's 2-bit
//! frequency (capped at 3). A miss admits to M if the id is in G, else to S. Eviction from S
//! moves an object with frequency >= 2 to M and sends the others to G; eviction from M reinserts
//! objects with frequency > 0 (decrementing it) and evicts the first with frequency 0. This
//! follows the paper's pseudocode (Algorithm 1).

use super::index::IdIndex;
use super::slots::{List, Slots};
use super::{Cache, Capacity, replay_dyn};

/// Share of the capacity given to the small queue (the paper's 10%).
pub const SMALL_SHARE: f64 = 0.1;
/// Frequency at which an object leaves S for M instead of G.
pub const MOVE_TO_MAIN: u8 = 2;
const MAX_FREQ: u8 = 3;

/// A FIFO of recently evicted ids, bounded by the sum of their weights.
#[derive(Debug, Clone)]
struct Ghost {
    ring: Vec<(u64, u32)>,
    head: u64,
    tail: u64,
    index: IdIndex,
    used: u64,
    limit: u64,
}

impl Ghost {
    fn new(limit: u64, expected: usize) -> Self {
        let n = expected.next_power_of_two().max(16);
        Ghost {
            ring: vec![(0, 0); n],
            head: 0,
            tail: 0,
            index: IdIndex::with_capacity(expected),
            used: 0,
            limit,
        }
    }

    #[inline]
    fn mask(&self) -> u64 {
        self.ring.len() as u64 - 1
    }

    /// Removes `id` if present; true if it was there.
    #[inline]
    fn take(&mut self, id: u64) -> bool {
        let ring = &self.ring;
        match self.index.remove(id, |p| ring[p as usize].0) {
            Some(p) => {
                // The ring entry stays as a stale record, skipped when it reaches the tail.
                self.used -= u64::from(self.ring[p as usize].1);
                true
            }
            None => false,
        }
    }

    fn push(&mut self, id: u64, w: u32) {
        if self.head - self.tail == self.ring.len() as u64 {
            self.rebuild();
        }
        let p = (self.head & self.mask()) as u32;
        self.ring[p as usize] = (id, w);
        self.index.insert(id, p);
        self.head += 1;
        self.used += u64::from(w);
        while self.used > self.limit {
            self.pop();
        }
    }

    fn pop(&mut self) {
        let p = (self.tail & self.mask()) as u32;
        self.tail += 1;
        let (id, w) = self.ring[p as usize];
        // A stale record (its id left the ghost, or came back at a later position) is not in
        // the index under this position, so nothing is removed.
        if self.index.remove_entry(id, p) {
            self.used -= u64::from(w);
        }
    }

    /// The ring is full of live and stale records: keep the live ones, in order, in a ring
    /// twice the live count.
    fn rebuild(&mut self) {
        let live: Vec<(u64, u32)> = (self.tail..self.head)
            .map(|s| (s & self.mask()) as u32)
            .filter(|&p| {
                let ring = &self.ring;
                self.index.find(ring[p as usize].0, |q| ring[q as usize].0) == Some(p)
            })
            .map(|p| self.ring[p as usize])
            .collect();
        let n = (live.len() * 2).next_power_of_two().max(16);
        self.ring = vec![(0, 0); n];
        self.index = IdIndex::with_capacity(live.len().max(16));
        self.head = 0;
        self.tail = 0;
        self.used = 0;
        for (id, w) in live {
            let p = self.head as u32;
            self.ring[p as usize] = (id, w);
            self.index.insert(id, p);
            self.head += 1;
            self.used += u64::from(w);
        }
    }

    fn heap_bytes(&self) -> usize {
        self.ring.capacity() * 16 + self.index.heap_bytes()
    }
}

/// S3-FIFO.
#[derive(Debug, Clone)]
pub struct S3Fifo {
    slots: Slots,
    small: List,
    main: List,
    freq: Vec<u8>,
    ghost: Ghost,
    small_cap: u64,
    main_cap: u64,
    cap: Capacity,
}

impl S3Fifo {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let n = cap.expected_objects();
        let small_cap = ((cap.amount as f64 * SMALL_SHARE) as u64).max(1);
        let main_cap = cap.amount.saturating_sub(small_cap).max(1);
        S3Fifo {
            slots: Slots::for_capacity(cap),
            small: List::default(),
            main: List::default(),
            freq: Vec::with_capacity(n),
            ghost: Ghost::new(main_cap, n),
            small_cap,
            main_cap,
            cap,
        }
    }

    fn evict(&mut self) {
        if self.small.used >= self.small_cap || self.main.len == 0 {
            self.evict_small();
        } else {
            self.evict_main();
        }
    }

    fn evict_small(&mut self) {
        while self.small.len > 0 {
            let t = self.small.tail;
            self.slots.unlink(&mut self.small, t);
            if self.freq[t as usize] >= MOVE_TO_MAIN {
                self.slots.push_front(&mut self.main, t);
                if self.main.used > self.main_cap {
                    self.evict_main();
                }
            } else {
                let (id, w) = (self.slots.key(t), self.slots.weight(t));
                self.slots.release(t);
                self.ghost.push(id, w);
                return;
            }
        }
    }

    fn evict_main(&mut self) {
        while self.main.len > 0 {
            let t = self.main.tail;
            self.slots.unlink(&mut self.main, t);
            let f = &mut self.freq[t as usize];
            if *f > 0 {
                *f -= 1;
                self.slots.push_front(&mut self.main, t);
            } else {
                self.slots.release(t);
                return;
            }
        }
    }
}

impl Cache for S3Fifo {
    fn name(&self) -> &'static str {
        "s3fifo"
    }
    fn capacity(&self) -> Capacity {
        self.cap
    }
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            let f = &mut self.freq[s as usize];
            *f = (*f + 1).min(MAX_FREQ);
            return true;
        }
        let w = self.cap.weight(size);
        if u64::from(w) > self.cap.amount {
            return false;
        }
        let ghost_hit = self.ghost.take(id);
        while self.small.used + self.main.used + u64::from(w) > self.cap.amount {
            self.evict();
        }
        let s = self.slots.alloc(id, w);
        if s as usize == self.freq.len() {
            self.freq.push(0);
        }
        self.freq[s as usize] = 0;
        if ghost_hit {
            self.slots.push_front(&mut self.main, s);
        } else {
            self.slots.push_front(&mut self.small, s);
        }
        false
    }
    fn prefetch(&self, id: u64) {
        self.slots.prefetch(id);
    }
    fn contains(&self, id: u64) -> bool {
        self.slots.find(id).is_some()
    }
    fn len(&self) -> usize {
        self.small.len + self.main.len
    }
    fn used(&self) -> u64 {
        self.small.used + self.main.used
    }
    fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes() + self.freq.capacity() + self.ghost.heap_bytes()
    }
    replay_dyn!();
}
