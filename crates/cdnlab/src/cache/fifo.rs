//! FIFO: objects leave in the order they came; a hit changes nothing.

use super::slots::{List, Slots};
use super::{Cache, Capacity, replay_dyn, slot_lookup};

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
    fn capacity(&self) -> Capacity {
        self.cap
    }
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if self.slots.find(id).is_some() {
            return true;
        }
        let w = self.cap.weight(size);
        if u64::from(w) > self.cap.amount {
            return false;
        }
        self.slots
            .admit_evicting_tail(&mut self.list, id, w, self.cap.amount);
        false
    }
    slot_lookup!();
    fn len(&self) -> usize {
        self.list.len
    }
    fn used(&self) -> u64 {
        self.list.used
    }
    fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes()
    }
    replay_dyn!();
}
