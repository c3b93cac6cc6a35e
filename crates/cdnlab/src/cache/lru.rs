//! LRU: on a hit the object moves to the head; the tail is evicted.

use super::slots::{List, Slots};
use super::{Cache, Capacity, slot_cache};

/// Least recently used.
#[derive(Debug, Clone)]
pub struct Lru {
    slots: Slots,
    list: List,
    cap: Capacity,
}

impl Lru {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        Lru {
            slots: Slots::for_capacity(cap),
            list: List::default(),
            cap,
        }
    }
}

impl Cache for Lru {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            if self.list.head != s {
                self.slots.unlink(&mut self.list, s);
                self.slots.push_front(&mut self.list, s);
            }
            return true;
        }
        self.slots
            .miss_evicting_tail(&mut self.list, id, size, &self.cap);
        false
    }
    slot_cache!([list]);
}
