//! Many small LRU caches in one arena. Cache i keeps its keys in `keys[start[i]..start[i + 1]]`
//! in no particular order, and its recency order in a circular doubly linked list of one-byte
//! slot indices (a sentinel slot closes the ring). A lookup compares every held key, a block of
//! 16 at a time with no early exit; a hit relinks its slot at the front; a miss takes a free
//! slot or the one at the back. No step's cost depends on where the key is, so nothing
//! mispredicts on it (a move-to-front array shifting keys ran 30% slower), and the runs of
//! consecutive caches are adjacent, so a pass over the caches in index order streams through
//! memory. That is the access pattern of the GWTW web model, where thousands of caches each see
//! about one request per slot. Same policy and answers as [`super::lru::Lru`] (capacity in
//! objects).

use crate::Error;

/// Largest capacity a cache of the bank may have (slot indices and the sentinel fit a byte;
/// beyond it the linear scan loses anyway).
pub const MAX_OBJECTS: u32 = 255;

/// Keys compared together.
const BLOCK: usize = 16;

/// A key type of the bank: how a block of keys is compared with one key.
pub trait Key: Copy + Eq + Default {
    /// Bit j set where `block[j] == key`.
    #[inline]
    fn matches(block: &[Self; BLOCK], key: Self) -> u32 {
        let mut mask = 0u32;
        for (j, &k) in block.iter().enumerate() {
            mask |= u32::from(k == key) << j;
        }
        mask
    }
}

impl Key for u64 {}

impl Key for u32 {
    /// SSE2 (part of every x86-64): four compares and four mask extractions. The portable
    /// loop compiles to about twice the instructions, and this is the hot loop of the web model.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn matches(block: &[u32; BLOCK], key: u32) -> u32 {
        use std::arch::x86_64::{
            __m128i, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps,
            _mm_set1_epi32,
        };
        let mut mask = 0u32;
        // SAFETY: SSE2 is in the x86-64 baseline; each load reads 4 of the block's 16 keys.
        #[allow(unsafe_code)]
        unsafe {
            let k = _mm_set1_epi32(key as i32);
            for q in 0..BLOCK / 4 {
                let v = _mm_loadu_si128(block.as_ptr().add(4 * q).cast::<__m128i>());
                let m = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, k)));
                mask |= (m as u32) << (4 * q);
            }
        }
        mask
    }
}

/// The slot of `key` among the first `len` of `run` (which reaches at least to the end of the
/// last block), or `usize::MAX`.
#[inline]
fn find<K: Key>(run: &[K], len: usize, key: K) -> usize {
    let mut pos = usize::MAX;
    for b in 0..len.div_ceil(BLOCK) {
        let block: &[K; BLOCK] = run[b * BLOCK..(b + 1) * BLOCK]
            .try_into()
            .expect("a block is BLOCK keys");
        let mut mask = K::matches(block, key);
        // Slots past `len` hold stale keys or the next cache's.
        let valid = (len - b * BLOCK).min(BLOCK);
        mask &= (1u32 << valid) - 1;
        // A key is held at most once, so at most one block matches.
        if mask != 0 {
            pos = b * BLOCK + mask.trailing_zeros() as usize;
        }
    }
    pos
}

/// A bank of LRU caches with capacities fixed at construction.
#[derive(Debug, Clone)]
pub struct LruBank<K> {
    keys: Vec<K>,
    start: Vec<u32>,
    len: Vec<u32>,
    /// Recency ring of cache i at `start[i] + i ..`, capacity + 1 entries, the last the
    /// sentinel: `next` goes from the most recent toward the least.
    next: Vec<u8>,
    prev: Vec<u8>,
}

impl<K: Key> LruBank<K> {
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
                .checked_add(c + 1)
                .ok_or_else(|| Error::param("capacity", total, "a bank of at most 2^32 objects"))?
                - 1;
            start.push(total);
        }
        let links = total as usize + capacities.len();
        let mut next = vec![0u8; links];
        for (i, &c) in capacities.iter().enumerate() {
            // An empty ring: the sentinel points at itself.
            next[start[i] as usize + i + c as usize] = c as u8;
        }
        Ok(LruBank {
            // The last block of a lookup may run past the last cache.
            keys: vec![K::default(); total as usize + BLOCK],
            start,
            len: vec![0; capacities.len()],
            prev: next.clone(),
            next,
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
        let pos = find(&self.keys[a..], l, key);
        let hit = pos < l;
        let ring = a + i;
        let next = &mut self.next[ring..ring + cap + 1];
        let prev = &mut self.prev[ring..ring + cap + 1];
        let p = if hit {
            pos
        } else if l < cap {
            // A fresh slot, linked to itself so that unlinking it below changes nothing.
            self.len[i] += 1;
            next[l] = l as u8;
            prev[l] = l as u8;
            l
        } else {
            prev[cap] as usize
        };
        let (before, after) = (prev[p] as usize, next[p] as usize);
        next[before] = after as u8;
        prev[after] = before as u8;
        let first = next[cap] as usize;
        next[p] = first as u8;
        prev[p] = cap as u8;
        prev[first] = p as u8;
        next[cap] = p as u8;
        if !hit {
            self.keys[a + p] = key;
        }
        hit
    }

    /// Whether cache `i` holds `key` (not an access).
    pub fn contains(&self, i: usize, key: K) -> bool {
        let a = self.start[i] as usize;
        self.keys[a..a + self.len[i] as usize].contains(&key)
    }

    /// The keys of cache `i`, most recent first.
    pub fn keys(&self, i: usize) -> Vec<K> {
        let (a, cap) = (
            self.start[i] as usize,
            (self.start[i + 1] - self.start[i]) as usize,
        );
        let ring = a + i;
        let mut out = Vec::with_capacity(self.len[i] as usize);
        let mut s = self.next[ring + cap] as usize;
        while s != cap {
            out.push(self.keys[a + s]);
            s = self.next[ring + s] as usize;
        }
        out
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
            + self.next.capacity()
            + self.prev.capacity()
    }
}
