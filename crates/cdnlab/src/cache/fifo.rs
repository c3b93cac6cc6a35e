//! FIFO: objects leave in the order they came; a hit changes nothing.

use super::slots::{List, Slots};
use super::{Access, Cache, Capacity, gated_access, slot_cache};

/// First in, first out.
#[derive(Debug, Clone)]
pub struct Fifo {
    slots: Slots,
    list: List,
    cap: Capacity,
}

impl Fifo {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        Fifo {
            slots: Slots::for_capacity(cap),
            list: List::default(),
            cap,
        }
    }
}

impl Fifo {
    /// The whole access, with a say over the miss ([`Cache::access_gated`]).
    #[inline]
    fn gated(&mut self, id: u64, size: u32, admit: impl FnOnce() -> bool) -> Access {
        if let Some(s) = self.slots.find(id) {
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

impl Cache for Fifo {
    gated_access!();
    slot_cache!([list]);
}
