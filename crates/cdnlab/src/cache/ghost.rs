//! A FIFO of ids without data (a ghost queue), bounded by the sum of their weights: S3-FIFO's
//! ghost, 2Q's A1out and ARC's B1 and B2. An entry can leave from the middle (a ghost hit) in
//! O(1): its ring record goes stale and is skipped when it reaches the tail.

use crate::idmap::IdIndex;

/// A FIFO of recently evicted ids, bounded by the sum of their weights.
#[derive(Debug, Clone)]
pub(crate) struct Ghost {
    ring: Vec<(u64, u32)>,
    head: u64,
    tail: u64,
    index: IdIndex,
    used: u64,
    limit: u64,
}

impl Ghost {
    pub(crate) fn new(limit: u64, expected: usize) -> Self {
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
    pub(crate) fn take(&mut self, id: u64) -> bool {
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

    /// Adds `id` as libCacheSim's FIFO ghost cache does: one heavier than the whole ghost is
    /// not kept; otherwise the oldest leave until it fits.
    pub(crate) fn push_fitting(&mut self, id: u64, w: u32) {
        if u64::from(w) > self.limit {
            return;
        }
        while self.used + u64::from(w) > self.limit {
            self.pop();
        }
        self.push(id, w);
    }

    pub(crate) fn push(&mut self, id: u64, w: u32) {
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

    /// Sum of the live entries' weights.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// Removes the oldest live entry (stale records before it are skipped) and returns its id.
    pub(crate) fn pop_oldest(&mut self) -> Option<u64> {
        while self.tail < self.head {
            let id = self.ring[(self.tail & self.mask()) as usize].0;
            if self.pop() {
                return Some(id);
            }
        }
        None
    }

    /// Drops the oldest record; true if it was live.
    fn pop(&mut self) -> bool {
        let p = (self.tail & self.mask()) as u32;
        self.tail += 1;
        let (id, w) = self.ring[p as usize];
        // A stale record (its id left the ghost, or came back at a later position) is not in
        // the index under this position, so nothing is removed.
        let live = self.index.remove_entry(id, p);
        if live {
            self.used -= u64::from(w);
        }
        live
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

    pub(crate) fn heap_bytes(&self) -> usize {
        self.ring.capacity() * 16 + self.index.heap_bytes()
    }
}

impl super::HeapBytes for Ghost {
    fn heap_bytes(&self) -> usize {
        Ghost::heap_bytes(self)
    }
}
