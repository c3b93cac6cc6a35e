//! FIFO: objects leave in the order they came; a hit changes nothing.

use super::slots::{List, Slots};
use super::{Cache, Capacity, slot_cache};

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

impl Cache for Fifo {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if self.slots.find(id).is_some() {
            return true;
        }
        self.slots
            .miss_evicting_tail(&mut self.list, id, size, &self.cap);
        false
    }
    slot_cache!([list]);
}
