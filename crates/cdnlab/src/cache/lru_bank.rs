//! Many small LRU caches in one arena: cache i keeps its ids in `keys[start[i]..]`, in no order,
//! with the time of each one's last access beside it in `stamps`. A lookup scans the cache's run;
//! a hit only rewrites its stamp; a miss in a full cache replaces the key with the oldest stamp.
//! O(C) per request, but for small C the run is a few cache lines that the scans read as vectors
//! (no moving of keys), and the runs of consecutive caches are adjacent, so a pass over the
//! caches in index order streams through memory. That is
//! the access pattern of the GWTW web model, where thousands of caches each see about one request
//! per slot. Same policy and answers as [`super::lru::Lru`] (capacity in objects).

use crate::Error;

/// Largest capacity a cache of the bank may have (beyond it the linear scan loses).
pub const MAX_OBJECTS: u32 = 256;

/// The position of `key` in `run`. Compares 16 keys at a time without an early exit inside a
/// block, which the compiler turns into vector compares (a plain `position` compiles to one
/// compare and branch per key).
#[inline]
fn find<K: Copy + Eq>(run: &[K], key: K) -> Option<usize> {
    const BLOCK: usize = 16;
    let mut blocks = run.chunks_exact(BLOCK);
    let mut base = 0;
    for b in blocks.by_ref() {
        let mut mask = 0u32;
        for (i, &k) in b.iter().enumerate() {
            mask |= u32::from(k == key) << i;
        }
        if mask != 0 {
            return Some(base + mask.trailing_zeros() as usize);
        }
        base += BLOCK;
    }
    blocks
        .remainder()
        .iter()
        .position(|&k| k == key)
        .map(|p| base + p)
}

/// The position of the smallest stamp (the least recently used key): the minimum by a fold the
/// compiler vectorises, then its position.
#[inline]
fn oldest(stamps: &[u32]) -> usize {
    let min = stamps.iter().copied().fold(u32::MAX, u32::min);
    stamps
        .iter()
        .position(|&s| s == min)
        .expect("a full cache has a least recently used key")
}

/// A bank of LRU caches with capacities fixed at construction.
#[derive(Debug, Clone)]
pub struct LruBank<K> {
    keys: Vec<K>,
    /// Last access time of each key (a bank-wide clock; unique, so LRU order is exact).
    stamps: Vec<u32>,
    clock: u32,
    start: Vec<u32>,
    len: Vec<u32>,
}

impl<K: Copy + Eq + Default> LruBank<K> {
    /// Caches of the given capacities (1 to [`MAX_OBJECTS`] objects each).
    pub fn new(capacities: &[u32]) -> Result<Self, Error> {
        if let Some(&c) = capacities.iter().find(|&&c| c == 0 || c > MAX_OBJECTS) {
            return Err(Error::param(
                "capacity",
                c,
                format!("1 to {MAX_OBJECTS} objects per cache of an LRU bank"),
            ));
        }
        let mut start = Vec::with_capacity(capacities.len() + 1);
        let mut total = 0u32;
        start.push(0);
        for &c in capacities {
            total = total
                .checked_add(c)
                .ok_or_else(|| Error::param("capacity", total, "a bank of at most 2^32 objects"))?;
            start.push(total);
        }
        Ok(LruBank {
            keys: vec![K::default(); total as usize],
            stamps: vec![0; total as usize],
            clock: 0,
            start,
            len: vec![0; capacities.len()],
        })
    }

    /// Number of caches.
    pub fn caches(&self) -> usize {
        self.len.len()
    }

    /// Requests `key` from cache `i`: true on a hit; on a miss it is stored, evicting the least
    /// recently used key if the cache is full.
    #[inline]
    pub fn access(&mut self, i: usize, key: K) -> bool {
        if self.clock == u32::MAX {
            self.renumber();
        }
        self.clock += 1;
        let a = self.start[i] as usize;
        let cap = self.start[i + 1] as usize - a;
        let l = self.len[i] as usize;
        if let Some(p) = find(&self.keys[a..a + l], key) {
            self.stamps[a + p] = self.clock;
            return true;
        }
        let slot = if l < cap {
            self.len[i] += 1;
            l
        } else {
            oldest(&self.stamps[a..a + l])
        };
        self.keys[a + slot] = key;
        self.stamps[a + slot] = self.clock;
        false
    }

    /// Before the clock wraps, renumbers every cache's stamps 1..=len in the same order (a cache
    /// only compares its own stamps, so the order within each cache is all that matters).
    fn renumber(&mut self) {
        let mut order: Vec<usize> = Vec::new();
        let mut top = 0;
        for i in 0..self.len.len() {
            let a = self.start[i] as usize;
            let l = self.len[i] as usize;
            order.clear();
            order.extend(0..l);
            order.sort_unstable_by_key(|&j| self.stamps[a + j]);
            for (rank, &j) in order.iter().enumerate() {
                self.stamps[a + j] = rank as u32 + 1;
            }
            top = top.max(l as u32);
        }
        self.clock = top;
    }

    /// Whether cache `i` holds `key` (not an access).
    pub fn contains(&self, i: usize, key: K) -> bool {
        let a = self.start[i] as usize;
        self.keys[a..a + self.len[i] as usize].contains(&key)
    }

    /// Number of keys in cache `i`.
    pub fn len(&self, i: usize) -> usize {
        self.len[i] as usize
    }

    /// Whether cache `i` is empty.
    pub fn is_empty(&self, i: usize) -> bool {
        self.len[i] == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<K>()
            + (self.stamps.capacity() + self.start.capacity() + self.len.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{Cache, Capacity, lru::Lru};

    /// Across the clock's wrap (stamps renumbered) the bank still answers as a linked LRU.
    #[test]
    fn clock_wrap_keeps_lru_order() {
        let mut bank = LruBank::<u64>::new(&[5, 3]).unwrap();
        bank.clock = u32::MAX - 20;
        let mut lrus = [5u64, 3].map(|c| Lru::new(Capacity::objects(c).unwrap()));
        let mut x = 7u64;
        for step in 0..200 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (i, id) = ((x >> 60) as usize % 2, (x >> 33) % 9);
            assert_eq!(bank.access(i, id), lrus[i].access(id, 1), "step {step}");
        }
        assert!(bank.clock < 1000, "renumbered");
    }
}
