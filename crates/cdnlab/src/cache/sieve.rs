//! SIEVE (Zhang et al., NSDI 2024): a FIFO queue with a visited bit and a moving hand. A hit sets
//! the bit; eviction walks the hand from the tail towards the head, clearing set bits, and evicts
//! the first unvisited object. New objects enter at the head.

use super::slots::{List, NIL, Slots, put};
use super::{Cache, Capacity, make_room, slot_cache};

/// SIEVE.
#[derive(Debug, Clone)]
pub struct Sieve {
    slots: Slots,
    list: List,
    visited: Vec<bool>,
    hand: u32,
    cap: Capacity,
}

impl Sieve {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        let n = cap.expected_objects();
        Sieve {
            slots: Slots::for_capacity(cap),
            list: List::default(),
            visited: Vec::with_capacity(n),
            hand: NIL,
            cap,
        }
    }

    fn evict(&mut self) {
        let mut h = if self.hand != NIL {
            self.hand
        } else {
            self.list.tail
        };
        while self.visited[h as usize] {
            self.visited[h as usize] = false;
            h = self.slots.prev(h);
            if h == NIL {
                h = self.list.tail;
            }
        }
        self.hand = self.slots.prev(h);
        self.slots.unlink(&mut self.list, h);
        self.slots.release(h);
    }
}

impl Cache for Sieve {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            self.visited[s as usize] = true;
            return true;
        }
        let w = make_room!(self, size, self.list.used, self.evict());
        let s = self.slots.alloc(id, w);
        put(&mut self.visited, s, false);
        self.slots.push_front(&mut self.list, s);
        false
    }
    slot_cache!([list], visited);
}
