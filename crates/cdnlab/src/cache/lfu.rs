//! LFU: evicts the object with the fewest hits since it was admitted; ties go to the one
//! accessed least recently. An indexed binary min-heap on (frequency, last access) gives
//! O(log n) per request.

use super::slots::Slots;
use super::{Cache, Capacity, Occupancy, make_room, replay_dyn, slot_lookup};

/// Least frequently used.
#[derive(Debug, Clone)]
pub struct Lfu {
    slots: Slots,
    /// Per slot: access count, last access tick, position in `heap`.
    freq: Vec<u32>,
    last: Vec<u64>,
    pos: Vec<u32>,
    heap: Vec<u32>,
    used: u64,
    tick: u64,
    cap: Capacity,
}

impl Lfu {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let n = cap.expected_objects();
        Lfu {
            slots: Slots::for_capacity(cap),
            freq: Vec::with_capacity(n),
            last: Vec::with_capacity(n),
            pos: Vec::with_capacity(n),
            heap: Vec::with_capacity(n),
            used: 0,
            tick: 0,
            cap,
        }
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        (self.freq[a], self.last[a]) < (self.freq[b], self.last[b])
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i] as usize] = i as u32;
        self.pos[self.heap[j] as usize] = j as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if !self.less(self.heap[i], self.heap[p]) {
                break;
            }
            self.swap(i, p);
            i = p;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.heap.len() && self.less(self.heap[l], self.heap[m]) {
                m = l;
            }
            if r < self.heap.len() && self.less(self.heap[r], self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }

    fn evict_min(&mut self) {
        let s = self.heap[0];
        let last = self.heap.len() - 1;
        self.swap(0, last);
        self.heap.pop();
        self.sift_down(0);
        self.used -= u64::from(self.slots.weight(s));
        self.slots.release(s);
    }
}

impl Cache for Lfu {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.tick += 1;
        if let Some(s) = self.slots.find(id) {
            let i = s as usize;
            self.freq[i] = self.freq[i].saturating_add(1);
            self.last[i] = self.tick;
            self.sift_down(self.pos[i] as usize);
            return true;
        }
        let w = make_room!(self, size, self.used, self.evict_min());
        let s = self.slots.alloc(id, w);
        let i = s as usize;
        if i == self.freq.len() {
            self.freq.push(0);
            self.last.push(0);
            self.pos.push(0);
        }
        self.freq[i] = 1;
        self.last[i] = self.tick;
        self.pos[i] = self.heap.len() as u32;
        self.heap.push(s);
        self.sift_up(self.heap.len() - 1);
        self.used += u64::from(w);
        false
    }
    slot_lookup!();
    fn occupancy(&self) -> Occupancy {
        Occupancy {
            objects: self.heap.len(),
            used: self.used,
            heap_bytes: self.slots.heap_bytes()
                + (self.freq.capacity() + self.pos.capacity() + self.heap.capacity()) * 4
                + self.last.capacity() * 8,
        }
    }
    replay_dyn!();
}
