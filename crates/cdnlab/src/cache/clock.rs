//! CLOCK (Corbató, 1968; the second-chance FIFO), as libCacheSim's `Clock` implements it: a
//! FIFO queue with a reference counter per object (one bit by default). A hit raises the counter
//! up to its maximum; a new object enters at the head with 0. Eviction looks at the tail: an
//! object with a counter above 0 has it lowered and is moved to the head (a second chance);
//! the first with 0 is evicted.

use super::slots::{List, Slots, put};
use super::{Cache, Capacity, make_room, slot_cache};

/// CLOCK with `max_freq` levels of reference counter (1: the classic one bit).
#[derive(Debug, Clone)]
pub struct Clock {
    slots: Slots,
    list: List,
    freq: Vec<u8>,
    max_freq: u8,
    cap: Capacity,
}

impl Clock {
    /// An empty cache with a one-bit counter (libCacheSim's default, `n-bit-counter=1`).
    pub fn new(cap: Capacity) -> Self {
        Self::with_bits(cap, 1)
    }

    /// An empty cache with an n-bit counter (1 to 8 bits: counters up to 2^n - 1).
    pub fn with_bits(cap: Capacity, bits: u32) -> Self {
        let bits = bits.clamp(1, 8);
        Clock {
            slots: Slots::for_capacity(cap),
            list: List::default(),
            freq: Vec::with_capacity(cap.expected_objects()),
            max_freq: ((1u32 << bits) - 1) as u8,
            cap,
        }
    }

    fn evict(&mut self) {
        let mut t = self.list.tail;
        while self.freq[t as usize] >= 1 {
            self.freq[t as usize] -= 1;
            self.slots.unlink(&mut self.list, t);
            self.slots.push_front(&mut self.list, t);
            t = self.list.tail;
        }
        self.slots.unlink(&mut self.list, t);
        self.slots.release(t);
    }
}

impl Cache for Clock {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            let f = &mut self.freq[s as usize];
            if *f < self.max_freq {
                *f += 1;
            }
            return true;
        }
        let w = make_room!(self, size, self.list.used, self.evict());
        let s = self.slots.alloc(id, w);
        put(&mut self.freq, s, 0);
        self.slots.push_front(&mut self.list, s);
        false
    }
    slot_cache!([list], freq);
}
