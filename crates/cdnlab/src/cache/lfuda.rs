//! LFUDA, LFU with Dynamic Aging (Arlitt, Cherkasova, Dilley, Friedrich and Jin, "Evaluating
//! content management techniques for Web proxy caches", 2000; Squid's `heap LFUDA`): an
//! object's key is its request count plus L, L the key of the last evicted object, so objects
//! that were popular long ago age out. The lowest key leaves first, ties to the least recently
//! requested; evictions come before the insertion, and every object that fits is admitted.
//!
//! libCacheSim's `LFUDA` differs: it adds L to the key on every hit instead of recomputing it
//! (so a hit before the first eviction does not raise the key), and it crashes once the
//! smallest key's list empties with no larger key in the cache (reproduced with PyPI libcachesim
//! 0.3.5: capacity 1, requests 1, 2, 3). This is the paper's rule; docs/cache.md gives the
//! measured difference.

use super::rank::Ranked;
use super::{Cache, Capacity, make_room, slot_cache};

/// LFU with dynamic aging.
#[derive(Debug, Clone)]
pub struct Lfuda {
    rank: Ranked,
    cap: Capacity,
}

impl Lfuda {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        Lfuda {
            rank: Ranked::new(cap),
            cap,
        }
    }
}

impl Cache for Lfuda {
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.rank.clock += 1;
        if let Some(s) = self.rank.slots.find(id) {
            let l = self.rank.inflation;
            self.rank.hit(s, |freq| l + f64::from(freq));
            return true;
        }
        let w = make_room!(self, size, self.rank.used, self.rank.evict());
        let l = self.rank.inflation;
        self.rank.insert(id, w, l + 1.0);
        false
    }
    slot_cache!(rank);
}
