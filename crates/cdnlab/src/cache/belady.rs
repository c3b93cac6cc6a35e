//! Belady's offline optimal replacement (Belady, "A study of replacement algorithms for a
//! virtual-storage computer", IBM Systems Journal 1966): evict the object whose next request is
//! furthest in the future, read from each request's `next_access` (the oracleGeneral field, or
//! filled in by the CSV and text readers). Objects never requested again go first. With unit
//! sizes this is optimal; with byte sizes it is the usual heuristic (exact optimality with sizes
//! is NP-hard), as in libCacheSim's `Belady`.
//!
//! The max-heap is libCacheSim's `pqueue` (a binary heap over positions 1..n, with its sift-up
//! and sift-down rules), so ties between objects never requested again break as libCacheSim
//! breaks them; that matters with byte sizes, where which of them leaves first changes how much
//! room is made.

use super::slots::Slots;
use super::{Cache, Capacity, Occupancy, make_room, replay_dyn, slot_lookup};
use crate::workload::Request;

/// Offline optimal (MIN).
#[derive(Debug, Clone)]
pub struct Belady {
    slots: Slots,
    /// The heap of slots, 1-based (`heap[0]` unused), largest next access first.
    heap: Vec<u32>,
    /// Each slot's position in `heap`.
    pos: Vec<u32>,
    /// Each slot's next access (`i64::MAX`: never).
    next: Vec<i64>,
    used: u64,
    cap: Capacity,
}

impl Belady {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let n = cap.expected_objects();
        Belady {
            slots: Slots::for_capacity(cap),
            heap: {
                let mut h = Vec::with_capacity(n + 1);
                h.push(u32::MAX);
                h
            },
            pos: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            used: 0,
            cap,
        }
    }

    #[inline]
    fn set(&mut self, i: usize, s: u32) {
        self.heap[i] = s;
        self.pos[s as usize] = i as u32;
    }

    /// pqueue's `bubble_up`: while the parent's priority is smaller, move the parent down.
    fn bubble_up(&mut self, mut i: usize) {
        let s = self.heap[i];
        let pri = self.next[s as usize];
        while i > 1 && self.next[self.heap[i / 2] as usize] < pri {
            self.set(i, self.heap[i / 2]);
            i /= 2;
        }
        self.set(i, s);
    }

    /// pqueue's `maxchild`: the left child, or the right one if the left's priority is smaller.
    fn max_child(&self, i: usize) -> Option<usize> {
        let c = 2 * i;
        if c >= self.heap.len() {
            return None;
        }
        if c + 1 < self.heap.len()
            && self.next[self.heap[c] as usize] < self.next[self.heap[c + 1] as usize]
        {
            return Some(c + 1);
        }
        Some(c)
    }

    /// pqueue's `percolate_down`.
    fn percolate_down(&mut self, mut i: usize) {
        let s = self.heap[i];
        let pri = self.next[s as usize];
        while let Some(c) = self.max_child(i) {
            if pri >= self.next[self.heap[c] as usize] {
                break;
            }
            self.set(i, self.heap[c]);
            i = c;
        }
        self.set(i, s);
    }

    fn evict(&mut self) {
        let top = self.heap[1];
        let last = self.heap.pop().expect("heap holds the sentinel");
        if self.heap.len() > 1 {
            self.set(1, last);
            self.percolate_down(1);
        }
        self.used -= u64::from(self.slots.weight(top));
        self.slots.release(top);
    }

    /// One request with its next access (`-1`: never again).
    #[inline]
    fn request(&mut self, id: u64, size: u32, next_access: i64) -> bool {
        let next = if next_access < 0 {
            i64::MAX
        } else {
            next_access
        };
        if let Some(s) = self.slots.find(id) {
            // pqueue_change_priority: up if the old priority was smaller, else down.
            let old = std::mem::replace(&mut self.next[s as usize], next);
            let p = self.pos[s as usize] as usize;
            if old < next {
                self.bubble_up(p);
            } else {
                self.percolate_down(p);
            }
            return true;
        }
        let w = make_room!(self, size, self.used, self.evict());
        let s = self.slots.alloc(id, w);
        if s as usize == self.next.len() {
            self.next.push(next);
            self.pos.push(0);
        }
        self.next[s as usize] = next;
        self.used += u64::from(w);
        self.heap.push(s);
        self.bubble_up(self.heap.len() - 1);
        false
    }
}

impl Cache for Belady {
    /// Without a next access every object counts as never requested again; replays go
    /// through [`Cache::access_req`].
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.request(id, size, -1)
    }
    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        self.request(r.id, r.size, r.next_access)
    }
    slot_lookup!();
    fn occupancy(&self) -> Occupancy {
        Occupancy {
            objects: self.heap.len() - 1,
            used: self.used,
            heap_bytes: self.slots.heap_bytes()
                + self.heap.capacity() * 4
                + self.pos.capacity() * 4
                + self.next.capacity() * 8,
        }
    }
    replay_dyn!();
}
