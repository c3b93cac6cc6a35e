//! Many small LRU caches in one arena: cache i keeps its ids in `keys[start[i]..]`, most recent
//! first. A lookup scans the cache's run, a hit rotates the prefix, a miss shifts the run by one.
//! O(C) per request, but for small C the run is a few cache lines, and the runs of consecutive
//! caches are adjacent, so a pass over the caches in index order streams through memory. That is
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

/// A bank of LRU caches with capacities fixed at construction.
#[derive(Debug, Clone)]
pub struct LruBank<K> {
    keys: Vec<K>,
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
        let a = self.start[i] as usize;
        let cap = self.start[i + 1] as usize - a;
        let l = self.len[i] as usize;
        let run = &mut self.keys[a..a + l];
        if let Some(p) = find(run, key) {
            run[..=p].rotate_right(1);
            return true;
        }
        let l = if l < cap {
            self.len[i] += 1;
            l + 1
        } else {
            l
        };
        let run = &mut self.keys[a..a + l];
        // The last slot (the evicted key, or the new free one) comes round to the front.
        run.rotate_right(1);
        run[0] = key;
        false
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
            + (self.start.capacity() + self.len.capacity()) * 4
    }
}
