//! GDSF, Greedy-Dual-Size with Frequency (Cherkasova, "Improving WWW proxies performance with
//! Greedy-Dual-Size-Frequency caching policy", HP Labs 1998; Arlitt et al., "Evaluating content
//! management techniques for Web proxy caches", 2000), as libCacheSim's `GDSF` implements it:
//! an object's priority is L + frequency x 10^6 / size, L the priority of the last evicted
//! object; the lowest leaves first, ties to the least recently requested. A miss is inserted
//! first and evictions follow until the cache fits, so a new object whose priority is the lowest
//! can be the one evicted. With the capacity in objects, every size counts as 1 (as libCacheSim
//! ignores sizes then), and GDSF ranks by frequency and L alone.

use super::rank::Ranked;
use super::{Cache, Capacity, slot_cache};

/// libCacheSim's scale of the cost per byte.
const SCALE: f64 = 1.0e6;

/// Greedy-Dual-Size-Frequency.
#[derive(Debug, Clone)]
pub struct Gdsf {
    rank: Ranked,
    cap: Capacity,
}

impl Gdsf {
    /// An empty cache.
    pub fn new(cap: Capacity) -> Self {
        Gdsf {
            rank: Ranked::new(cap),
            cap,
        }
    }
}

impl Cache for Gdsf {
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.rank.clock += 1;
        let l = self.rank.inflation;
        if let Some(s) = self.rank.slots.find(id) {
            let w = f64::from(self.rank.slots.weight(s));
            self.rank.hit(s, |freq| l + f64::from(freq) * SCALE / w);
            return true;
        }
        let Some(w) = self.cap.admissible(size) else {
            return false;
        };
        self.rank.insert(id, w, l + SCALE / f64::from(w));
        while self.rank.used > self.cap.amount {
            self.rank.evict();
        }
        false
    }
    slot_cache!(rank);
}
