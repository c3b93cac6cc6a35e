//! Segmented LRU (Karedla, Love and Wherry, "Caching strategies to improve disk system
//! performance", IEEE Computer 1994), as libCacheSim's `SLRU` implements it: n LRU segments
//! (4 of C/4 each by default), a new object enters the lowest segment with room, a hit
//! promotes an object one segment up (to the head of the top one when already there), and a
//! segment over its share demotes its tail one segment down ("cooling"); segment 0's tail is
//! evicted. An object heavier than a segment is not admitted. W-TinyLFU's main cache is an
//! SLRU of two segments (1:4), built from the same `Segments`.

use super::slots::{List, Slots};
use super::{Cache, Capacity, slot_cache};

/// The segments of an SLRU, over slots owned by the caller (so W-TinyLFU can hold its window
/// in the same slots). `seg_of[s]` is the segment of slot `s`.
#[derive(Debug, Clone)]
pub(crate) struct Segments {
    segs: Vec<List>,
    seg_cap: Vec<u64>,
    /// The whole SLRU's capacity.
    cap: u64,
}

impl super::Resident for Segments {
    fn objects(&self) -> usize {
        self.len()
    }
    fn units(&self) -> u64 {
        self.used()
    }
}

impl Segments {
    /// `n` segments of floor(cap / n) each (libCacheSim's default, `n-seg=4`).
    pub(crate) fn equal(n: usize, cap: u64) -> Self {
        Segments {
            segs: vec![List::default(); n],
            seg_cap: vec![cap / n as u64; n],
            cap,
        }
    }

    /// Segments in the given proportions (libCacheSim's `seg-size=a:b:...`): segment i holds
    /// floor(ratio_i / sum * cap), computed in doubles as libCacheSim does.
    pub(crate) fn ratio(ratios: &[u64], cap: u64) -> Self {
        let sum: u64 = ratios.iter().sum();
        Segments {
            segs: vec![List::default(); ratios.len()],
            seg_cap: ratios
                .iter()
                .map(|&r| (r as f64 / sum as f64 * cap as f64) as u64)
                .collect(),
            cap,
        }
    }

    pub(crate) fn used(&self) -> u64 {
        self.segs.iter().map(|l| l.used).sum()
    }

    pub(crate) fn len(&self) -> usize {
        self.segs.iter().map(|l| l.len).sum()
    }

    /// Whether an object of weight `w` may enter (`SLRU_can_insert`).
    pub(crate) fn can_insert(&self, w: u32) -> bool {
        u64::from(w) <= self.cap && u64::from(w) <= self.seg_cap[0]
    }

    /// A hit on slot `s`: promote it one segment up and cool the segments it overfills.
    pub(crate) fn hit(&mut self, slots: &mut Slots, seg_of: &mut [u8], s: u32) {
        let top = self.segs.len() - 1;
        let i = seg_of[s as usize] as usize;
        if i == top {
            if self.segs[i].head != s {
                slots.unlink(&mut self.segs[i], s);
                slots.push_front(&mut self.segs[i], s);
            }
            return;
        }
        slots.unlink(&mut self.segs[i], s);
        slots.push_front(&mut self.segs[i + 1], s);
        seg_of[s as usize] = (i + 1) as u8;
        while self.segs[i + 1].used > self.seg_cap[i + 1] {
            self.cool(slots, seg_of, i + 1);
        }
    }

    /// Moves segment `i`'s tail one segment down (evicts it from segment 0), cascading.
    fn cool(&mut self, slots: &mut Slots, seg_of: &mut [u8], i: usize) {
        if i == 0 {
            self.evict(slots);
            return;
        }
        let t = self.segs[i].tail;
        slots.unlink(&mut self.segs[i], t);
        slots.push_front(&mut self.segs[i - 1], t);
        seg_of[t as usize] = (i - 1) as u8;
        while self.segs[i - 1].used > self.seg_cap[i - 1] {
            self.cool(slots, seg_of, i - 1);
        }
    }

    /// The next victim: the tail of the lowest non-empty segment.
    pub(crate) fn victim(&self) -> Option<u32> {
        self.segs.iter().find(|l| l.used > 0).map(|l| l.tail)
    }

    /// Evicts the victim (there must be one).
    pub(crate) fn evict(&mut self, slots: &mut Slots) {
        let i = self
            .segs
            .iter()
            .position(|l| l.used > 0)
            .expect("an object to evict");
        let t = self.segs[i].tail;
        slots.unlink(&mut self.segs[i], t);
        slots.release(t);
    }

    /// Inserts the freshly allocated slot `s` of weight `w` (`SLRU_insert`): into the lowest
    /// segment with room; if none has room, evicts until the whole fits, into segment 0.
    pub(crate) fn insert(&mut self, slots: &mut Slots, seg_of: &mut [u8], s: u32, w: u32) {
        let w = u64::from(w);
        let i = match (0..self.segs.len()).find(|&i| self.segs[i].used + w <= self.seg_cap[i]) {
            Some(i) => i,
            None => {
                while self.used() + w > self.cap {
                    self.evict(slots);
                }
                0
            }
        };
        slots.push_front(&mut self.segs[i], s);
        seg_of[s as usize] = i as u8;
    }
}

/// Default number of segments, as in libCacheSim.
pub const SEGMENTS: usize = 4;

/// Segmented LRU.
#[derive(Debug, Clone)]
pub struct Slru {
    slots: Slots,
    segs: Segments,
    seg_of: Vec<u8>,
    cap: Capacity,
}

impl Slru {
    /// An empty cache of [`SEGMENTS`] equal segments.
    pub fn new(cap: Capacity) -> Self {
        Slru {
            slots: Slots::for_capacity(cap),
            segs: Segments::equal(SEGMENTS, cap.amount),
            seg_of: Vec::with_capacity(cap.expected_objects()),
            cap,
        }
    }
}

impl Cache for Slru {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            self.segs.hit(&mut self.slots, &mut self.seg_of, s);
            return true;
        }
        let w = self.cap.weight(size);
        if !self.segs.can_insert(w) {
            return false;
        }
        while self.segs.used() + u64::from(w) > self.cap.amount {
            self.segs.evict(&mut self.slots);
        }
        let s = self.slots.alloc(id, w);
        if s as usize == self.seg_of.len() {
            self.seg_of.push(0);
        }
        self.segs.insert(&mut self.slots, &mut self.seg_of, s, w);
        false
    }
    slot_cache!([segs], seg_of);
}
