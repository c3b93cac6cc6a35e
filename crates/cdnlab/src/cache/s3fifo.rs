//! S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023).
//!
//! Three FIFO queues: a small queue S (10% of the capacity), a main queue M (the rest) and a
//! ghost queue G of ids only (as many capacity units as M). A hit increments the object's 2-bit
//! frequency (capped at 3). A miss admits to M if the id is in G, else to S. Eviction from S
//! moves an object with frequency >= 2 to M and sends the others to G; eviction from M reinserts
//! objects with frequency > 0 (decrementing it) and evicts the first with frequency 0.
//!
//! Two variants ([`Variant`]): `s3fifo` is libCacheSim's implementation by the paper's authors
//! (`S3FIFO.c`), matched miss for miss; `s3fifo-paper` follows the paper's pseudocode
//! (Algorithm 1). They differ in when S or M is evicted from, in the ghost's size, in what a
//! promotion to M carries, and in libCacheSim's admission rules (see [`Variant`]).

use super::ghost::Ghost;
use super::slots::{List, Slots, put};
use super::{Cache, Capacity, slot_cache};

/// Share of the capacity given to the small queue (the paper's 10%).
pub const SMALL_SHARE: f64 = 0.1;
/// Frequency at which an object leaves S for M instead of G.
pub const MOVE_TO_MAIN: u8 = 2;
const MAX_FREQ: u8 = 3;

/// Which S3-FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// libCacheSim's `S3FIFO.c` (as in PyPI libcachesim 0.3.5): S holds floor(0.1 C) units and
    /// M the rest, the ghost floor(0.9 C); until the cache first evicts, a miss that finds S
    /// full enters M; a miss is evicted from M when M is over its share or S is empty, else from
    /// S; an object promoted from S enters M with frequency 0, and M is not evicted at once; an
    /// object heavier than S is not admitted (after its ghost entry is dropped), and one as
    /// heavy as S is evicted for but not inserted (so with fewer than 20 unit objects of
    /// capacity nothing is ever cached); a ghost entry heavier than the ghost is not kept.
    LibCacheSim,
    /// The paper's Algorithm 1: S holds max(1, floor(0.1 C)), the ghost as many units as M;
    /// S is evicted from when it holds its share or M is empty; a promoted object keeps its
    /// frequency and M is evicted at once if over its share.
    Paper,
}

/// S3-FIFO.
#[derive(Debug, Clone)]
pub struct S3Fifo {
    slots: Slots,
    small: List,
    main: List,
    freq: Vec<u8>,
    ghost: Ghost,
    small_cap: u64,
    main_cap: u64,
    cap: Capacity,
    variant: Variant,
    /// Whether anything was ever evicted (libCacheSim's variant fills M directly until then).
    has_evicted: bool,
}

impl S3Fifo {
    /// An empty cache, libCacheSim's variant.
    pub fn new(cap: Capacity) -> Self {
        Self::with_variant(cap, Variant::LibCacheSim)
    }

    /// An empty cache of the given variant.
    pub fn with_variant(cap: Capacity, variant: Variant) -> Self {
        let n = cap.expected_objects();
        let (small_cap, main_cap, ghost_cap) = match variant {
            Variant::LibCacheSim => {
                // int64 casts of double products, as in S3FIFO_init.
                let small = (cap.amount as f64 * SMALL_SHARE) as u64;
                let ghost = (cap.amount as f64 * (1.0 - SMALL_SHARE)) as u64;
                (small, cap.amount - small, ghost)
            }
            Variant::Paper => {
                let small = ((cap.amount as f64 * SMALL_SHARE) as u64).max(1);
                let main = cap.amount.saturating_sub(small).max(1);
                (small, main, main)
            }
        };
        S3Fifo {
            slots: Slots::for_capacity(cap),
            small: List::default(),
            main: List::default(),
            freq: Vec::with_capacity(n),
            ghost: Ghost::new(ghost_cap, n),
            small_cap,
            main_cap,
            cap,
            variant,
            has_evicted: false,
        }
    }

    fn evict(&mut self) {
        self.has_evicted = true;
        let from_small = match self.variant {
            Variant::LibCacheSim => !(self.main.used > self.main_cap || self.small.len == 0),
            Variant::Paper => self.small.used >= self.small_cap || self.main.len == 0,
        };
        if from_small {
            self.evict_small();
        } else {
            self.evict_main();
        }
    }

    fn evict_small(&mut self) {
        while self.small.len > 0 {
            let t = self.small.tail;
            self.slots.unlink(&mut self.small, t);
            if self.freq[t as usize] >= MOVE_TO_MAIN {
                self.slots.push_front(&mut self.main, t);
                match self.variant {
                    Variant::LibCacheSim => self.freq[t as usize] = 0,
                    Variant::Paper => {
                        if self.main.used > self.main_cap {
                            self.evict_main();
                        }
                    }
                }
            } else {
                let (id, w) = (self.slots.key(t), self.slots.weight(t));
                self.slots.release(t);
                match self.variant {
                    Variant::LibCacheSim => self.ghost.push_fitting(id, w),
                    Variant::Paper => self.ghost.push(id, w),
                }
                return;
            }
        }
    }

    fn evict_main(&mut self) {
        while self.main.len > 0 {
            let t = self.main.tail;
            self.slots.unlink(&mut self.main, t);
            let f = &mut self.freq[t as usize];
            if *f > 0 {
                *f -= 1;
                self.slots.push_front(&mut self.main, t);
            } else {
                self.slots.release(t);
                return;
            }
        }
    }
}

impl Cache for S3Fifo {
    #[inline]
    fn access(&mut self, id: u64, size: u32) -> bool {
        if let Some(s) = self.slots.find(id) {
            let f = &mut self.freq[s as usize];
            *f = (*f + 1).min(MAX_FREQ);
            return true;
        }
        let w = self.cap.weight(size);
        let lcs = self.variant == Variant::LibCacheSim;
        if !lcs && u64::from(w) > self.cap.amount {
            return false;
        }
        let ghost_hit = self.ghost.take(id);
        if lcs && u64::from(w) > self.small_cap {
            return false; // S3FIFO_can_insert
        }
        while self.small.used + self.main.used + u64::from(w) > self.cap.amount {
            self.evict();
        }
        if lcs && !ghost_hit && u64::from(w) >= self.small_cap {
            return false; // S3FIFO_insert refuses after the evictions
        }
        let s = self.slots.alloc(id, w);
        put(&mut self.freq, s, 0);
        // libCacheSim: until the first eviction, a miss that finds S full goes to M.
        let to_main = ghost_hit || (lcs && !self.has_evicted && self.small.used >= self.small_cap);
        if to_main {
            self.slots.push_front(&mut self.main, s);
        } else {
            self.slots.push_front(&mut self.small, s);
        }
        false
    }
    slot_cache!([small, main], freq, ghost);
}
