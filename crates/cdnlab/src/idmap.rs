//! An open-addressing index from object id (u64) to a dense slot (u32), shared by all policies.
//!
//! Each table entry is one u64: the low 32 bits of the id's hash (a fingerprint that also gives
//! the home bucket) and the slot. The key itself lives in the caller's slot arrays, reached
//! through `key_of`, so the table costs 8 bytes per bucket. Linear probing with backward-shift
//! deletion (no tombstones); the table doubles above 1/2 load (measured: at 3/4 load a 10^4-object
//! LRU ran 1.5x slower), rehashing from fingerprints alone.

const EMPTY: u64 = u64::MAX;

/// murmur3's fmix64: cheap, and every input bit reaches every output bit.
#[inline]
pub fn mix64(id: u64) -> u64 {
    let mut h = id;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

#[inline]
fn fingerprint(id: u64) -> u32 {
    mix64(id) as u32
}

/// Asks the CPU to bring `x`'s cache line in; no effect on results.
#[inline]
pub fn prefetch<T>(x: &T) {
    prefetch_addr((x as *const T).cast());
}

/// Asks the CPU to bring in every cache line `x` spans (a record may straddle two).
#[inline]
pub fn prefetch_all<T: ?Sized>(x: &T) {
    let start = (x as *const T).cast::<u8>();
    let end = start.wrapping_add(std::mem::size_of_val(x).max(1) - 1);
    let mut line = start;
    while (line as usize) <= (end as usize) | 63 {
        prefetch_addr(line);
        line = line.wrapping_add(64);
    }
}

/// `n` copies of `fill`, in memory the kernel is asked to back by 2 MiB pages first (Linux's
/// `MADV_HUGEPAGE`, honoured when transparent huge pages are set to `madvise` or `always`), for
/// tables of megabytes read at random. With 4 KiB pages a prefetch into such a table waits for
/// a page walk, which the prefetch was meant to hide (measured: docs/cache.md, admission cost).
/// Only whole 2 MiB pages inside the allocation are marked, and only in tables of 4 MiB or
/// more; no effect on results.
pub fn huge_vec<T: Clone>(n: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(&v);
    v.resize(n, fill);
    v
}

/// [`huge_vec`] of zeros, left for the allocator to zero: a large one comes straight from the
/// kernel, whose pages are zero until written, so it is not written twice.
pub fn huge_zeroed(n: usize) -> Vec<u64> {
    let v = vec![0; n];
    advise_huge_pages(&v);
    v
}

/// Asks for 2 MiB pages under `v`'s allocation (see [`huge_vec`]); pages already written keep
/// theirs.
fn advise_huge_pages<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes >= 2 * HUGE {
        let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (v.as_ptr() as usize + bytes) & !(HUGE - 1);
        #[cfg(target_os = "linux")]
        // SAFETY: the range lies inside `v`'s own allocation, and `MADV_HUGEPAGE` changes only
        // how its pages are backed, never their contents. A refusal (the kernel has no huge
        // pages) is harmless and ignored.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, end);
    }
}

#[inline]
fn prefetch_addr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it cannot fault, whatever the address.
    #[allow(unsafe_code)]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[inline]
fn pack(fp: u32, slot: u32) -> u64 {
    (u64::from(fp) << 32) | u64::from(slot)
}

#[inline]
fn fp_of(e: u64) -> u32 {
    (e >> 32) as u32
}

#[inline]
fn slot_of(e: u64) -> u32 {
    e as u32
}

/// Id -> slot map. Slot `u32::MAX` is reserved.
#[derive(Debug, Clone)]
pub struct IdIndex {
    /// Length a power of two; `mask()` is derived from it so the compiler sees every masked
    /// index is in bounds.
    table: Vec<u64>,
    len: usize,
}

impl IdIndex {
    /// An index sized so that `expected` entries stay at or under 1/2 load.
    pub fn with_capacity(expected: usize) -> Self {
        let buckets = expected.saturating_mul(2).next_power_of_two().max(8);
        IdIndex {
            table: huge_vec(buckets, EMPTY),
            len: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.table.len() * 8
    }

    /// Hints the CPU to fetch the bucket where a lookup of `id` starts. A replay calls this a
    /// few requests ahead, so the table's cache misses overlap instead of queueing.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        prefetch(&self.table[fingerprint(id) as usize & self.mask()]);
    }

    /// The bucket holding `id`, if present. `key_of(slot)` gives the id stored in a slot.
    #[inline]
    fn locate(&self, id: u64, key_of: impl Fn(u32) -> u64) -> Option<usize> {
        let fp = fingerprint(id);
        let mut i = fp as usize & self.mask();
        loop {
            let e = self.table[i];
            if e == EMPTY {
                return None;
            }
            if fp_of(e) == fp && key_of(slot_of(e)) == id {
                return Some(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// The slot of `id`, if present. `key_of(slot)` gives the id stored in a slot.
    #[inline]
    pub fn find(&self, id: u64, key_of: impl Fn(u32) -> u64) -> Option<u32> {
        self.locate(id, key_of).map(|i| slot_of(self.table[i]))
    }

    /// Adds `id -> slot`; `id` must be absent.
    #[inline]
    pub fn insert(&mut self, id: u64, slot: u32) {
        debug_assert!(slot != u32::MAX);
        if (self.len + 1) * 2 > self.table.len() {
            self.grow();
        }
        self.place(pack(fingerprint(id), slot));
        self.len += 1;
    }

    #[inline]
    fn place(&mut self, e: u64) {
        let mut i = fp_of(e) as usize & self.mask();
        while self.table[i] != EMPTY {
            i = (i + 1) & self.mask();
        }
        self.table[i] = e;
    }

    fn grow(&mut self) {
        let doubled = huge_vec(self.table.len() * 2, EMPTY);
        let old = std::mem::replace(&mut self.table, doubled);
        for e in old.into_iter().filter(|&e| e != EMPTY) {
            self.place(e);
        }
    }

    /// Removes `id`, returning its slot.
    #[inline]
    pub fn remove(&mut self, id: u64, key_of: impl Fn(u32) -> u64) -> Option<u32> {
        let i = self.locate(id, key_of)?;
        let found = slot_of(self.table[i]);
        self.remove_at(i);
        Some(found)
    }

    /// Removes the entry `id -> slot` if present, comparing whole entries: no key lookup, which
    /// is what an eviction needs (it knows both). True if it was there.
    #[inline]
    pub fn remove_entry(&mut self, id: u64, slot: u32) -> bool {
        let want = pack(fingerprint(id), slot);
        let mut i = fp_of(want) as usize & self.mask();
        loop {
            let e = self.table[i];
            if e == EMPTY {
                return false;
            }
            if e == want {
                self.remove_at(i);
                return true;
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Empties bucket `i` with backward shift: later entries of the probe run move into the hole
    /// when their home bucket does not lie cyclically in (hole, j].
    #[inline]
    fn remove_at(&mut self, i: usize) {
        let mask = self.mask();
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let e = self.table[j];
            if e == EMPTY {
                break;
            }
            let home = fp_of(e) as usize & mask;
            let dist_home = j.wrapping_sub(home) & mask;
            let dist_hole = j.wrapping_sub(hole) & mask;
            if dist_home >= dist_hole {
                self.table[hole] = e;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.table[hole] = EMPTY;
        self.len -= 1;
    }
}

/// A value kept inline next to its key in a [`KeyTable`], with one value reserved to mark a
/// vacant bucket (ids are arbitrary u64, so the key cannot mark it).
pub trait Vacancy: Copy {
    /// The reserved value.
    const VACANT: Self;
    /// Whether this is the reserved value.
    fn is_vacant(&self) -> bool;
}

impl Vacancy for u64 {
    const VACANT: u64 = u64::MAX;
    #[inline]
    fn is_vacant(&self) -> bool {
        *self == u64::MAX
    }
}

/// An open-addressing map from id to a small value stored beside the key: a lookup touches one
/// bucket (no second access to a key array, unlike [`IdIndex`]), which is what a structure
/// probed once per request of a large trace wants. Linear probing, at most 1/2 load, backward-
/// shift deletion (so a bucket number is good until the next insertion or removal).
#[derive(Debug, Clone)]
pub struct KeyTable<V> {
    buckets: Vec<(u64, V)>,
    len: usize,
}

impl<V: Vacancy> KeyTable<V> {
    /// A table sized so that `expected` entries stay at or under 1/2 load.
    pub fn with_capacity(expected: usize) -> Self {
        let n = expected.saturating_mul(2).next_power_of_two().max(8);
        KeyTable {
            buckets: huge_vec(n, (0, V::VACANT)),
            len: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    #[inline]
    fn home(&self, id: u64) -> usize {
        mix64(id) as usize & self.mask()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<(u64, V)>()
    }

    /// Hints the CPU to fetch the bucket where a lookup of `id` starts (see
    /// [`IdIndex::prefetch`]).
    #[inline]
    pub fn prefetch(&self, id: u64) {
        prefetch(&self.buckets[self.home(id)]);
    }

    /// `Ok(bucket)` holding `id`, or `Err(bucket)`: the vacant bucket where `id` would go.
    #[inline]
    pub fn find(&self, id: u64) -> Result<usize, usize> {
        let mut i = self.home(id);
        loop {
            let (k, v) = &self.buckets[i];
            if v.is_vacant() {
                return Err(i);
            }
            if *k == id {
                return Ok(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// The value in occupied bucket `i`.
    #[inline]
    pub fn value(&self, i: usize) -> V {
        self.buckets[i].1
    }

    /// The value in occupied bucket `i`, to change (never to [`Vacancy::VACANT`]).
    #[inline]
    pub fn value_mut(&mut self, i: usize) -> &mut V {
        &mut self.buckets[i].1
    }

    /// Adds `id -> v`; `id` must be absent. Grows the table first if it would pass 1/2 load.
    pub fn insert(&mut self, id: u64, v: V) {
        debug_assert!(!v.is_vacant());
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        let Err(i) = self.find(id) else {
            panic!("KeyTable::insert: id {id} is present")
        };
        self.buckets[i] = (id, v);
        self.len += 1;
    }

    /// Adds absent `id -> v` into `vacant`, the bucket [`KeyTable::find`] just returned for it
    /// (no second probe); the table must not have changed since. Grows and probes again when it
    /// would pass 1/2 load.
    #[inline]
    pub fn insert_vacant(&mut self, vacant: usize, id: u64, v: V) {
        if (self.len + 1) * 2 > self.buckets.len() {
            return self.insert(id, v);
        }
        debug_assert!(self.buckets[vacant].1.is_vacant() && self.find(id) == Err(vacant));
        self.buckets[vacant] = (id, v);
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let doubled = huge_vec(self.buckets.len() * 2, (0, V::VACANT));
        let old = std::mem::replace(&mut self.buckets, doubled);
        for (k, v) in old.into_iter().filter(|(_, v)| !v.is_vacant()) {
            let Err(i) = self.find(k) else {
                unreachable!("keys are distinct")
            };
            self.buckets[i] = (k, v);
        }
    }

    /// Empties occupied bucket `i` with backward shift: later entries of the probe run move
    /// into the hole when their home bucket does not lie cyclically in (hole, j].
    #[inline]
    pub fn remove_at(&mut self, i: usize) {
        let mask = self.mask();
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let (k, v) = self.buckets[j];
            if v.is_vacant() {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.buckets[hole] = (k, v);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.buckets[hole].1 = V::VACANT;
        self.len -= 1;
    }

    /// The occupied entries.
    pub fn iter(&self) -> impl Iterator<Item = (u64, V)> + '_ {
        self.buckets
            .iter()
            .filter(|(_, v)| !v.is_vacant())
            .map(|&(k, v)| (k, v))
    }

    /// The occupied entries, to change their values (never to [`Vacancy::VACANT`]).
    pub fn values_mut(&mut self) -> impl Iterator<Item = (u64, &mut V)> {
        self.buckets
            .iter_mut()
            .filter(|(_, v)| !v.is_vacant())
            .map(|(k, v)| (*k, v))
    }
}

/// A map from id to a u64 value, as a one-pass LRU curve keeps each object's latest position
/// (`cache::mrc`): hashed for any ids ([`KeyTable`]), or an array for ids renumbered 0, 1, 2,
/// ... in order of first request ([`DenseTable`], after [`Renumber`]).
pub trait IdTable {
    /// Hints that `id` is looked up soon (no effect on results).
    fn prefetch(&self, id: u64);
    /// `Ok(entry)` holding `id`, or `Err(vacant)`: where [`IdTable::insert_vacant`] puts it.
    fn find(&self, id: u64) -> Result<usize, usize>;
    /// The value of entry `i` (found, never to be set to `u64::MAX`).
    fn value_mut(&mut self, i: usize) -> &mut u64;
    /// Adds absent `id -> v` at `vacant`, just returned by [`IdTable::find`].
    fn insert_vacant(&mut self, vacant: usize, id: u64, v: u64);
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Visits every entry's value, to change it.
    fn for_each_value(&mut self, f: impl FnMut(&mut u64));
}

impl IdTable for KeyTable<u64> {
    #[inline]
    fn prefetch(&self, id: u64) {
        KeyTable::prefetch(self, id);
    }
    #[inline]
    fn find(&self, id: u64) -> Result<usize, usize> {
        KeyTable::find(self, id)
    }
    #[inline]
    fn value_mut(&mut self, i: usize) -> &mut u64 {
        KeyTable::value_mut(self, i)
    }
    #[inline]
    fn insert_vacant(&mut self, vacant: usize, id: u64, v: u64) {
        KeyTable::insert_vacant(self, vacant, id, v);
    }
    fn len(&self) -> usize {
        KeyTable::len(self)
    }
    fn for_each_value(&mut self, mut f: impl FnMut(&mut u64)) {
        for (_, v) in self.values_mut() {
            f(v);
        }
    }
}

/// An [`IdTable`] for small ids, one array entry per id: a lookup reads one entry at a known
/// place, with no hash, no probe and no key to compare. For ids that [`Renumber`] made dense:
/// any other id costs an entry per id up to it, so an id near 2^64 (a trace's own) cannot be
/// held; only the renumbered passes of `cache::mrc` use it.
#[derive(Debug, Clone, Default)]
pub struct DenseTable {
    values: Vec<u64>,
    len: usize,
}

impl DenseTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }
}

impl IdTable for DenseTable {
    #[inline]
    fn prefetch(&self, id: u64) {
        if let Some(v) = self.values.get(id as usize) {
            prefetch(v);
        }
    }
    #[inline]
    fn find(&self, id: u64) -> Result<usize, usize> {
        let i = usize::try_from(id).unwrap_or(usize::MAX);
        match self.values.get(i) {
            Some(v) if !v.is_vacant() => Ok(i),
            _ => Err(i),
        }
    }
    #[inline]
    fn value_mut(&mut self, i: usize) -> &mut u64 {
        &mut self.values[i]
    }
    #[inline]
    fn insert_vacant(&mut self, vacant: usize, _id: u64, v: u64) {
        debug_assert!(!v.is_vacant());
        if vacant == self.values.len() {
            self.values.push(v);
        } else {
            if vacant > self.values.len() {
                self.values.resize(vacant + 1, u64::VACANT);
            }
            self.values[vacant] = v;
        }
        self.len += 1;
    }
    fn len(&self) -> usize {
        self.len
    }
    fn for_each_value(&mut self, mut f: impl FnMut(&mut u64)) {
        for v in self.values.iter_mut().filter(|v| !v.is_vacant()) {
            f(v);
        }
    }
}

/// Gives each id the number of distinct ids seen before its first request: 0, 1, 2, ... . A
/// pass that only compares ids (LRU's exact curve) gives the same result on the renumbered
/// requests, and can keep its table as an array ([`DenseTable`]); the renumbering itself can
/// run on the thread that reads the trace, beside the pass (`cdnlab-lab`'s `trace::stream_prepared`).
#[derive(Debug, Clone)]
pub struct Renumber {
    table: KeyTable<u64>,
}

impl Default for Renumber {
    fn default() -> Self {
        Renumber {
            table: KeyTable::with_capacity(1 << 10),
        }
    }
}

impl Renumber {
    /// No id seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Distinct ids seen.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no id was seen.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// `id`'s number.
    #[inline]
    pub fn number(&mut self, id: u64) -> u64 {
        match self.table.find(id) {
            Ok(b) => self.table.value(b),
            Err(vacant) => {
                let n = self.table.len() as u64;
                self.table.insert_vacant(vacant, id, n);
                n
            }
        }
    }

    /// Replaces each request's id by its number, in order, fetching buckets a few requests
    /// ahead.
    pub fn apply(&mut self, reqs: &mut [crate::workload::Request]) {
        for i in 0..reqs.len() {
            if let Some(next) = reqs.get(i + crate::cache::AHEAD) {
                self.table.prefetch(next.id);
            }
            reqs[i].id = self.number(reqs[i].id);
        }
    }
}

/// A set of ids that only grows. While the ids are small (as renumbered ones are, and those of
/// many generated traces), a bitmap indexed by id: a test reads one bit, and the set of a
/// trace's 10^6 objects takes 125 kB, which stays in the CPU's cache. Once an id would make the
/// bitmap larger than the hashed form would be (16 bytes an id, with 128 kB to spare), the ids
/// move to a hash table of 8 bytes a bucket (a [`KeyTable`] would take 16): linear probing at
/// most 1/2 load, id 0 marking a vacant bucket and kept apart. The set of objects missed once
/// (second-hit admission) reaches every object of a trace, so its size is what a lookup pays
/// for (measured on 10^6 objects: see docs/cache.md, admission cost).
#[derive(Debug, Clone)]
pub struct IdSet {
    /// The bitmap, while it is in use (else empty).
    bits: Vec<u64>,
    hashed: bool,
    buckets: Vec<u64>,
    len: usize,
    has_zero: bool,
}

/// Bits a bitmap [`IdSet`] may hold beyond 128 per id.
const SPARE_BITS: u64 = 1 << 20;

impl IdSet {
    /// A set sized so that `expected` ids stay at or under 1/2 load once hashed.
    pub fn with_capacity(expected: usize) -> Self {
        IdSet {
            bits: Vec::new(),
            hashed: false,
            buckets: huge_zeroed(expected.saturating_mul(2).next_power_of_two().max(8)),
            len: 0,
            has_zero: false,
        }
    }

    #[inline]
    fn home(&self, id: u64) -> usize {
        mix64(id) as usize & (self.buckets.len() - 1)
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.len + usize::from(self.has_zero)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.bits.len() + self.buckets.len()) * 8
    }

    /// Hints the CPU to fetch the word or bucket where a lookup of `id` starts.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        if self.hashed {
            prefetch(&self.buckets[self.home(id)]);
        } else if let Some(w) = self.bits.get((id / 64) as usize) {
            prefetch(w);
        }
    }

    /// Adds `id`: true if it was absent.
    #[inline(always)]
    pub fn insert(&mut self, id: u64) -> bool {
        if self.hashed {
            self.insert_hashed(id)
        } else {
            self.insert_bit(id)
        }
    }

    #[inline(always)]
    fn insert_bit(&mut self, id: u64) -> bool {
        if let Some(w) = self.bits.get_mut((id / 64) as usize) {
            let bit = 1 << (id % 64);
            let absent = *w & bit == 0;
            *w |= bit;
            self.len += usize::from(absent);
            return absent;
        }
        self.widen(id);
        self.insert(id)
    }

    #[inline(always)]
    fn insert_hashed(&mut self, id: u64) -> bool {
        if id == 0 {
            return !std::mem::replace(&mut self.has_zero, true);
        }
        let mask = self.buckets.len() - 1;
        let mut i = self.home(id);
        loop {
            let k = self.buckets[i];
            if k == id {
                return false;
            }
            if k == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
            return self.insert_hashed(id);
        }
        self.buckets[i] = id;
        self.len += 1;
        true
    }

    /// Makes room for `id` beyond the bitmap: a bitmap twice as large (or up to `id`), within
    /// 128 bits an id plus [`SPARE_BITS`]; when `id` lies beyond that, every id moves to the
    /// hash table.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, id: u64) {
        let limit = (128 * (self.len as u64 + 1) + SPARE_BITS) / 64;
        let need = id / 64 + 1;
        if need <= limit {
            // Doubled for fewer copies, but not past the limit.
            let want = need.max((2 * self.bits.len() as u64).max(1024).min(limit));
            self.bits.resize(want as usize, 0);
            return;
        }
        let bits = std::mem::take(&mut self.bits);
        self.hashed = true;
        self.len = 0;
        let need = bits.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        if need * 2 > self.buckets.len() {
            self.buckets = huge_zeroed(need.saturating_mul(2).next_power_of_two().max(8));
        }
        for (i, &w) in bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                self.insert(i as u64 * 64 + u64::from(w.trailing_zeros()));
                w &= w - 1;
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let doubled = huge_zeroed(self.buckets.len() * 2);
        let old = std::mem::replace(&mut self.buckets, doubled);
        let mask = self.buckets.len() - 1;
        for k in old.into_iter().filter(|&k| k != 0) {
            let mut i = self.home(k);
            while self.buckets[i] != 0 {
                i = (i + 1) & mask;
            }
            self.buckets[i] = k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn huge_vec_holds_n_copies_whatever_its_pages() {
        // Below the 4 MiB threshold, at it, and across 2 MiB pages not aligned with the start.
        for n in [0, 1, 1000, (4 << 20) / 8, (5 << 20) / 8 + 3] {
            let v = huge_vec(n, u64::MAX);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == u64::MAX), "n = {n}");
        }
        let v = huge_vec(3 << 20, (7u64, 9u32));
        assert!(v.iter().all(|&x| x == (7, 9)));
        let v = huge_zeroed((5 << 20) / 8 + 3);
        assert!(v.len() == (5 << 20) / 8 + 3 && v.iter().all(|&x| x == 0));
    }

    proptest! {
        /// Renumber against a map filled in order of first request, through growths; `apply`
        /// over chunks equals `number` one request at a time.
        #[test]
        fn renumber_counts_ids_in_order_of_first_request(
            ids in proptest::collection::vec(0u64..400, 1..3000),
        ) {
            let ids: Vec<u64> = ids.iter().map(|&i| mix64(i)).collect();
            let mut model: HashMap<u64, u64> = HashMap::new();
            let mut r = Renumber::new();
            let mut reqs: Vec<crate::workload::Request> =
                ids.iter().map(|&id| crate::workload::Request::new(0, id, 1)).collect();
            for &id in &ids {
                let next = model.len() as u64;
                let want = *model.entry(id).or_insert(next);
                prop_assert_eq!(r.number(id), want);
            }
            prop_assert_eq!(r.len(), model.len());
            let mut again = Renumber::new();
            for chunk in reqs.chunks_mut(37) {
                again.apply(chunk);
            }
            for (q, id) in reqs.iter().zip(&ids) {
                prop_assert_eq!(q.id, model[id]);
            }
        }

        /// DenseTable against a HashMap, for ids in any order (gaps left vacant), and its
        /// values visited once each.
        #[test]
        fn dense_table_matches_hashmap(ops in proptest::collection::vec(0u64..300, 1..2000)) {
            let mut t = DenseTable::new();
            let mut model: HashMap<u64, u64> = HashMap::new();
            for (n, id) in ops.into_iter().enumerate() {
                match IdTable::find(&t, id) {
                    Ok(i) => {
                        prop_assert!(model.contains_key(&id));
                        *IdTable::value_mut(&mut t, i) = n as u64;
                    }
                    Err(i) => {
                        prop_assert!(!model.contains_key(&id));
                        IdTable::insert_vacant(&mut t, i, id, n as u64);
                    }
                }
                model.insert(id, n as u64);
                prop_assert_eq!(IdTable::len(&t), model.len());
            }
            let mut seen = Vec::new();
            t.for_each_value(|v| seen.push(*v));
            let mut want: Vec<u64> = model.values().copied().collect();
            seen.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(seen, want);
        }

        /// IdSet against std's HashSet while its ids are small (a bitmap, widened as ids
        /// grow), and after an id too large for it moves them all to the hash table: the same
        /// answers throughout, and the hash table exactly when the bitmap would pass its limit.
        #[test]
        fn id_set_bitmap_then_hashed_matches_hashset(
            ids in proptest::collection::vec(0u64..SPARE_BITS, 1..2000),
            large in proptest::option::of(any::<u64>()),
            at in 0usize..2000,
        ) {
            let mut s = IdSet::with_capacity(1);
            let mut model = std::collections::HashSet::new();
            for (i, &id) in ids.iter().enumerate() {
                let id = match large {
                    Some(l) if i == at % ids.len() => l,
                    _ => id,
                };
                prop_assert_eq!(s.insert(id), model.insert(id));
                prop_assert_eq!(s.len(), model.len());
            }
            // Ids below SPARE_BITS keep the bitmap, however it doubled on the way; one of 2^40
            // or more, which no bitmap of these few ids may reach, moves them.
            match large {
                None => prop_assert!(!s.hashed),
                Some(l) if l >= 1 << 40 => prop_assert!(s.hashed),
                Some(_) => {}
            }
        }

        /// IdSet against std's HashSet, id 0 included, through growths from 8 buckets.
        #[test]
        fn id_set_matches_hashset(ids in proptest::collection::vec(0u64..500, 1..3000)) {
            let mut s = IdSet::with_capacity(1);
            let mut model = std::collections::HashSet::new();
            for id in ids {
                let id = id.wrapping_mul(0x1_0000_0001);
                prop_assert_eq!(s.insert(id), model.insert(id));
                prop_assert_eq!(s.len(), model.len());
            }
        }
    }

    proptest! {
        /// KeyTable against std's HashMap, through removals and growths from 8 buckets.
        #[test]
        fn key_table_matches_hashmap(ops in proptest::collection::vec((any::<bool>(), 0u64..300), 1..2000)) {
            let mut t: KeyTable<u64> = KeyTable::with_capacity(1);
            let mut model: HashMap<u64, u64> = HashMap::new();
            for (n, (ins, id)) in ops.into_iter().enumerate() {
                let id = id.wrapping_mul(0x1_0000_0001);
                match (ins, t.find(id)) {
                    (true, Ok(b)) => {
                        *t.value_mut(b) = n as u64;
                        model.insert(id, n as u64);
                    }
                    (true, Err(b)) => {
                        prop_assert!(!model.contains_key(&id));
                        // Both ways of adding, into the bucket found and probing again.
                        if n % 2 == 0 {
                            t.insert(id, n as u64);
                        } else {
                            t.insert_vacant(b, id, n as u64);
                        }
                        model.insert(id, n as u64);
                    }
                    (false, Ok(b)) => {
                        prop_assert!(model.contains_key(&id));
                        t.remove_at(b);
                        model.remove(&id);
                    }
                    (false, Err(_)) => prop_assert!(!model.contains_key(&id)),
                }
                prop_assert_eq!(t.len(), model.len());
            }
            for (&id, &v) in &model {
                let b = t.find(id);
                prop_assert!(b.is_ok(), "{} lost", id);
                prop_assert_eq!(t.value(b.unwrap()), v);
            }
            prop_assert_eq!(t.values_mut().count(), model.len());
        }
    }

    proptest! {
        /// Against std's HashMap: random inserts and removes over a small key space (so probe runs
        /// collide and wrap) give the same answers, through several growths.
        #[test]
        fn matches_hashmap(ops in proptest::collection::vec((any::<bool>(), 0u64..300), 1..2000)) {
            let mut keys: Vec<u64> = Vec::new();
            let mut idx = IdIndex::with_capacity(4);
            let mut model: HashMap<u64, u32> = HashMap::new();
            for (ins, id) in ops {
                let id = id.wrapping_mul(0x1_0000_0001); // spread over high bits too
                if ins {
                    if let std::collections::hash_map::Entry::Vacant(e) = model.entry(id) {
                        keys.push(id);
                        let slot = (keys.len() - 1) as u32;
                        idx.insert(id, slot);
                        e.insert(slot);
                    }
                } else if id % 2 == 0 {
                    prop_assert_eq!(idx.remove(id, |s| keys[s as usize]), model.remove(&id));
                } else {
                    let slot = model.get(&id).copied();
                    // A wrong slot never removes; the right one does.
                    prop_assert!(!idx.remove_entry(id, slot.map_or(7, |s| s + 1)));
                    if let Some(s) = slot {
                        prop_assert!(idx.remove_entry(id, s));
                        model.remove(&id);
                    }
                }
                prop_assert_eq!(idx.len(), model.len());
            }
            for (&id, &slot) in &model {
                prop_assert_eq!(idx.find(id, |s| keys[s as usize]), Some(slot));
            }
        }
    }
}

/// A hasher for u64 ids: one multiply by an odd constant and a fold of the high half (SipHash,
/// the default, made the one-pass curve 1.6x slower; measured on a 10^7-request trace).
#[derive(Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// A `HashMap` keyed by object id, with [`IdHasher`].
pub type IdMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<IdHasher>>;
