//! LRU: on a hit the object moves to the head; the tail is evicted.

use super::slots::{List, Slots};
use super::{Access, Cache, Capacity, gated_access, slot_cache};

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

impl Lru {
    /// The whole access, with a say over the miss ([`Cache::access_gated`]).
    #[inline]
    fn gated(&mut self, id: u64, size: u32, admit: impl FnOnce() -> bool) -> Access {
        if let Some(s) = self.slots.find(id) {
            if self.list.head != s {
                self.slots.unlink(&mut self.list, s);
                self.slots.push_front(&mut self.list, s);
            }
            return Access { hit: true, slot: s };
        }
        if !admit() {
            return Access::DECLINED;
        }
        let slot = self
            .slots
            .miss_evicting_tail(&mut self.list, id, size, &self.cap);
        Access { hit: false, slot }
    }
}

impl Cache for Lru {
    gated_access!();
    slot_cache!([list]);
}
