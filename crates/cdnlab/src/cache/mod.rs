//! Cache eviction policies behind one trait, one file each.
//!
//! One file per policy: [`lru`] (and [`lru_bank`], many small LRU caches in one arena),
//! [`fifo`], [`lfu`], [`s3fifo`] (libCacheSim's and the paper's), [`sieve`], [`clock`], [`arc`],
//! [`twoq`], [`slru`], [`wtinylfu`], [`gdsf`], [`lfuda`], [`lirs`] (libCacheSim's and the
//! paper's), [`belady`]. Their names and one line on each are declared once, in [`Policy`]'s
//! registry (`cdnlab cache-replay --help` lists them; docs/cache.md's table is checked against
//! it).
//!
//! A capacity counts objects or bytes ([`Capacity`]); an object weighs 1 or its size. An object
//! heavier than the whole capacity is never admitted (a miss that stores nothing), as in
//! libCacheSim. All policies keep their state in [`slots::Slots`]: flat arrays indexed by dense
//! slot numbers, with an open-addressing id index ([`crate::idmap`]), so a request allocates nothing once
//! the cache is warm. [`che`] holds the Che approximation of LRU under independent requests;
//! [`mrc`] the one-pass LRU miss-ratio curve (stack distances, and SHARDS sampling).

pub mod admission;
pub mod arc;
pub mod belady;
pub mod che;
pub mod clock;
pub mod fifo;
pub mod gdsf;
mod ghost;
pub mod lfu;
pub mod lfuda;
pub mod lirs;
pub mod lru;
pub mod lru_bank;
pub mod mrc;
mod rank;
pub mod s3fifo;
pub mod sieve;
pub mod slots;
pub mod slru;
pub mod strata;
pub mod ttl;
pub mod twoq;
pub mod wtinylfu;

use crate::Error;
use crate::workload::Request;

/// Requests ahead of the one replayed whose id is prefetched: its bucket's cache miss then
/// overlaps the requests in between. Measured for each pass that uses it (a cache's replay,
/// exact LRU curves by stack distances, byte stack distances and windows); prefetching 16 ahead
/// was no faster, and a second stage that also looked the id up early was slower (the extra
/// lookups cost more than the misses they hide; docs/cache.md).
pub(crate) const AHEAD: usize = 8;

/// Visits each request of `reqs` in order with `visit`, first calling `prefetch` with the id
/// [`AHEAD`] requests on. The one replay loop of every pass over a trace chunk (`t` is handed
/// to both, so that neither holds it). Inlined, so each pass compiles to its own loop.
#[inline(always)]
pub(crate) fn replay_ahead<T: ?Sized>(
    t: &mut T,
    reqs: &[Request],
    prefetch: impl Fn(&T, u64),
    mut visit: impl FnMut(&mut T, &Request),
) {
    for (i, r) in reqs.iter().enumerate() {
        if let Some(next) = reqs.get(i + AHEAD) {
            prefetch(t, next.id);
        }
        visit(t, r);
    }
}

crate::registry! {
    /// What a capacity counts.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Unit: "size unit" {
        Objects => "objects",
        Bytes => "bytes",
    }
}

/// A cache capacity: `amount` objects or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    pub amount: u64,
    pub unit: Unit,
}

impl Capacity {
    /// A capacity, refusing zero.
    pub fn new(amount: u64, unit: Unit) -> Result<Self, Error> {
        if amount == 0 {
            return Err(Error::param("capacity", 0, "at least 1"));
        }
        Ok(Capacity { amount, unit })
    }

    /// `amount` objects.
    pub fn objects(amount: u64) -> Result<Self, Error> {
        Self::new(amount, Unit::Objects)
    }

    /// The weight of an object of `size` bytes in this capacity's unit.
    #[inline]
    pub fn weight(&self, size: u32) -> u32 {
        match self.unit {
            Unit::Objects => 1,
            Unit::Bytes => size,
        }
    }

    /// The weight of an object of `size` bytes, or None when it is heavier than the whole
    /// capacity: such an object is never admitted (a miss that stores nothing), as in
    /// libCacheSim. Every policy asks here before it evicts anything.
    #[inline]
    pub fn admissible(&self, size: u32) -> Option<u32> {
        let w = self.weight(size);
        (u64::from(w) <= self.amount).then_some(w)
    }

    /// How many slots to reserve up front: the object count, or a modest guess for bytes (the
    /// arrays grow if more objects fit).
    pub fn expected_objects(&self) -> usize {
        match self.unit {
            Unit::Objects => usize::try_from(self.amount)
                .unwrap_or(usize::MAX)
                .min(1 << 26),
            Unit::Bytes => usize::try_from(self.amount / 4096)
                .unwrap_or(usize::MAX)
                .clamp(16, 1 << 20),
        }
    }
}

/// What a cache holds: its objects, the capacity units they weigh, and the heap bytes of the
/// policy's structures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Occupancy {
    pub objects: usize,
    pub used: u64,
    pub heap_bytes: usize,
}

/// Heap bytes held by a structure (its allocated room, not only what is in use).
pub trait HeapBytes {
    fn heap_bytes(&self) -> usize;
}

impl<T> HeapBytes for Vec<T> {
    fn heap_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }
}

/// What a replay counts: hits, and the bytes they served (each hit's object size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    pub hits: u64,
    pub hit_bytes: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.hits += o.hits;
        self.hit_bytes += o.hit_bytes;
    }
}

/// What one [`Cache::access_gated`] did: whether it hit, and the slot that holds the object
/// afterwards ([`slots::NIL`] when the object is not stored, or the policy does not report
/// slots: see [`Cache::stable_slots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub hit: bool,
    pub slot: u32,
}

impl Access {
    /// A miss that stored nothing (declined, or too heavy).
    pub const DECLINED: Access = Access {
        hit: false,
        slot: slots::NIL,
    };
}

/// An eviction policy. `access` is the whole protocol: look up, and on a miss admit and evict;
/// [`Cache::occupancy`] is the accounting. The policies share the rest: the too-heavy guard
/// ([`Capacity::admissible`]), and for those whose objects are their slots, lookup, the
/// eviction log and the accounting from their resident lists ([`slot_cache!`]).
pub trait Cache {
    /// Requests object `id` of `size` bytes: true on a hit. On a miss the object is admitted
    /// (unless heavier than the capacity) after evicting as the policy says.
    fn access(&mut self, id: u64, size: u32) -> bool;
    /// [`Cache::access`] with the whole request: an offline policy ([`belady`]) reads
    /// `next_access` too; the others look at the id and size only.
    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        self.access(r.id, r.size)
    }
    /// An access in which `admit` decides whether a missed object is stored: it is asked at
    /// most once, on a miss only, and a declined object leaves the policy untouched (admission
    /// policies, [`admission::Admitted`]). The default looks the object up twice (`contains`,
    /// then `access_req`); LRU and FIFO, the policies the admission and TTL overheads are
    /// measured on, do it in one lookup and report the object's slot (docs/cache.md,
    /// admission cost).
    #[inline]
    fn access_gated(&mut self, r: &Request, admit: impl FnOnce() -> bool) -> Access
    where
        Self: Sized,
    {
        if self.contains(r.id) {
            return Access {
                hit: self.access_req(r),
                slot: slots::NIL,
            };
        }
        if admit() {
            self.access_req(r);
        }
        Access::DECLINED
    }
    /// Whether [`Cache::access_gated`] reports slots: each resident object keeps one slot
    /// number while it stays, slots are numbered densely from 0, and an object becomes
    /// resident only through a miss of its own request. A wrapper can then keep per-object
    /// state in an array by slot ([`ttl::Expiring`]) instead of a table by id.
    fn stable_slots(&self) -> bool {
        false
    }
    /// Whether `id` is cached (does not count as an access).
    fn contains(&self, id: u64) -> bool;
    /// What it holds now.
    fn occupancy(&self) -> Occupancy;
    /// Number of cached objects.
    fn len(&self) -> usize {
        self.occupancy().objects
    }
    /// Whether nothing is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Capacity units in use.
    fn used(&self) -> u64 {
        self.occupancy().used
    }
    /// Heap bytes held by the policy's structures.
    fn heap_bytes(&self) -> usize {
        self.occupancy().heap_bytes
    }
    /// A hint that `id` will be accessed soon (see [`crate::idmap::IdIndex::prefetch`]); no effect on
    /// results.
    fn prefetch(&self, _id: u64) {}
    /// Replays `reqs`, returning its hits and the bytes they served. Implemented here once, and
    /// monomorphised per policy, so a replay through `dyn Cache` dispatches once, not per
    /// request.
    fn replay(&mut self, reqs: &[Request]) -> Tally
    where
        Self: Sized,
    {
        let mut t = Tally::default();
        replay_ahead(self, reqs, Self::prefetch, |c, r| {
            // Branch-free: the hit's bytes are added as 0 on a miss.
            let hit = u64::from(c.access_req(r));
            t.hits += hit;
            t.hit_bytes += hit * u64::from(r.size);
        });
        t
    }
    /// [`Cache::replay`] through a trait object.
    fn replay_dyn(&mut self, reqs: &[Request]) -> Tally;
    /// [`Cache::replay_dyn`] that also writes each request's outcome (true: a hit) to `hits`,
    /// one per request, replacing what it held: for estimates that weigh requests apart
    /// ([`strata`]). Compiled per policy like [`Cache::replay`] (a default method is), and
    /// prefetching as it does.
    fn replay_hits_dyn(&mut self, reqs: &[Request], hits: &mut Vec<bool>) -> Tally {
        hits.clear();
        let mut t = Tally::default();
        replay_ahead(
            self,
            reqs,
            |c, id| c.prefetch(id),
            |c, r| {
                let hit = c.access_req(r);
                t.hits += u64::from(hit);
                t.hit_bytes += u64::from(hit) * u64::from(r.size);
                hits.push(hit);
            },
        );
        t
    }
    /// Starts keeping the ids of evicted objects, for a caller that holds the objects
    /// themselves (the live edge); simulations leave it off. Every object that stops being
    /// resident, for whatever reason (eviction, demotion out of a queue, a stale entry
    /// dropped), is logged. The one change the log does not carry is an arrival without a
    /// request: `lirs` (libCacheSim's rules) can make an evicted object resident again through a
    /// stale entry; a holder that has not the object's bytes refetches it on its next request.
    fn log_evictions(&mut self);
    /// Moves the ids evicted since the last call into `out` (none unless logging).
    fn drain_evictions(&mut self, out: &mut Vec<u64>);
    /// Requests that found their object stale, and their bytes ([`ttl::Expiring`]; none
    /// without TTLs).
    fn expired(&self) -> (u64, u64) {
        (0, 0)
    }
}

/// Implements [`Cache::replay_dyn`] by forwarding to the monomorphised default, and the
/// eviction log by forwarding to the policy's slots (`self.slots`, or the path given).
macro_rules! replay_dyn {
    () => {
        $crate::cache::replay_dyn!(slots);
    };
    ($($field:ident).+) => {
        fn replay_dyn(&mut self, reqs: &[$crate::workload::Request]) -> $crate::cache::Tally {
            $crate::cache::Cache::replay(self, reqs)
        }
        fn log_evictions(&mut self) {
            self.$($field).+.log_evictions();
        }
        fn drain_evictions(&mut self, out: &mut Vec<u64>) {
            self.$($field).+.drain_evictions(out);
        }
    };
}
pub(crate) use replay_dyn;

/// Implements [`Cache::prefetch`] and [`Cache::contains`] by the policy's slots (`self.slots`,
/// or the path given): every policy whose cached objects are exactly its slots.
macro_rules! slot_lookup {
    () => {
        $crate::cache::slot_lookup!(slots);
    };
    ($($field:ident).+) => {
        fn prefetch(&self, id: u64) {
            self.$($field).+.prefetch(id);
        }
        fn contains(&self, id: u64) -> bool {
            self.$($field).+.find(id).is_some()
        }
    };
}
pub(crate) use slot_lookup;

/// Implements [`Cache::access`], [`Cache::access_gated`] and [`Cache::stable_slots`] by the
/// policy's inherent `gated(id, size, admit) -> Access` (LRU, FIFO: one lookup, stable slots).
macro_rules! gated_access {
    () => {
        #[inline]
        fn access(&mut self, id: u64, size: u32) -> bool {
            self.gated(id, size, || true).hit
        }
        #[inline]
        fn access_gated(
            &mut self,
            r: &$crate::workload::Request,
            admit: impl FnOnce() -> bool,
        ) -> $crate::cache::Access {
            self.gated(r.id, r.size, admit)
        }
        fn stable_slots(&self) -> bool {
            true
        }
    };
}
pub(crate) use gated_access;

/// A group of resident objects: a list of slots ([`slots::List`]) or SLRU's segments.
pub(crate) trait Resident {
    fn objects(&self) -> usize;
    fn units(&self) -> u64;
}

impl Resident for slots::List {
    fn objects(&self) -> usize {
        self.len
    }
    fn units(&self) -> u64 {
        self.used
    }
}

/// The start of a miss: returns false (a miss, nothing stored) from `access` when `size` is
/// heavier than the whole capacity, else evicts with `$evict` while the `$used` units and the
/// new object's would pass the capacity, and evaluates to the object's weight.
macro_rules! make_room {
    ($self:ident, $size:expr, $used:expr, $evict:expr) => {{
        let Some(w) = $self.cap.admissible($size) else {
            return false;
        };
        while $used + u64::from(w) > $self.cap.amount {
            $evict;
        }
        w
    }};
}
pub(crate) use make_room;

/// Everything but `access` for a policy whose cached objects are exactly its slots, kept in the
/// resident groups named ([`Resident`]; the slots are `self.slots`): the accounting
/// ([`Cache::occupancy`], with the heap bytes of the slots and of the other fields named),
/// lookup and the eviction log.
macro_rules! slot_cache {
    ([$($list:ident),+] $(, $($($extra:ident).+),+)?) => {
        fn occupancy(&self) -> $crate::cache::Occupancy {
            $crate::cache::Occupancy {
                objects: 0 $(+ $crate::cache::Resident::objects(&self.$list))+,
                used: 0 $(+ $crate::cache::Resident::units(&self.$list))+,
                heap_bytes: $crate::cache::HeapBytes::heap_bytes(&self.slots)
                    $($(+ $crate::cache::HeapBytes::heap_bytes(&self.$($extra).+))+)?,
            }
        }
        $crate::cache::slot_lookup!();
        $crate::cache::replay_dyn!();
    };
    // A policy ranked by priority over `self.rank` ([`rank::Rank`]).
    (rank) => {
        fn occupancy(&self) -> $crate::cache::Occupancy {
            self.rank.occupancy()
        }
        $crate::cache::slot_lookup!(rank.slots);
        $crate::cache::replay_dyn!(rank.slots);
    };
}
pub(crate) use slot_cache;

/// Declares the policies once: each one's variant, name, one line on it and constructor. The
/// enum, [`Policy::build`], `FromStr`, the error messages, `--help` and the docs table all come
/// from this list.
macro_rules! policies {
    ($($variant:ident => $name:literal: $about:literal, $build:expr;)+) => {
        /// The policies, as named in scenarios and on the command line.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Policy {
            $($variant),+
        }

        impl Policy {
            /// Builds an empty cache of this policy.
            pub fn build(self, cap: Capacity) -> Box<dyn Cache + Send> {
                match self {
                    $(Policy::$variant => Box::new(($build)(cap))),+
                }
            }

            /// Builds an empty cache of this policy behind an admission policy (`seed` drives
            /// `prob:P`), monomorphised per policy like [`Policy::build`].
            pub fn build_admitted(
                self,
                cap: Capacity,
                rule: admission::Admission,
                seed: u64,
            ) -> Box<dyn Cache + Send> {
                if rule == admission::Admission::All {
                    return self.build(cap);
                }
                match self {
                    $(Policy::$variant => {
                        Box::new(admission::Admitted::new(($build)(cap), rule, seed, cap))
                    }),+
                }
            }

            /// Builds an empty cache of this policy behind an admission policy and, with a
            /// TTL rule, with expiring objects ([`ttl::Expiring`]); monomorphised per policy.
            pub fn build_full(
                self,
                cap: Capacity,
                rule: admission::Admission,
                seed: u64,
                ttl: Option<ttl::Ttl>,
            ) -> Box<dyn Cache + Send> {
                let Some(ttl) = ttl else {
                    return self.build_admitted(cap, rule, seed);
                };
                match self {
                    $(Policy::$variant => {
                        let c = ($build)(cap);
                        if rule == admission::Admission::All {
                            Box::new(ttl::Expiring::new(c, ttl))
                        } else {
                            Box::new(ttl::Expiring::new(
                                admission::Admitted::new(c, rule, seed, cap),
                                ttl,
                            ))
                        }
                    }),+
                }
            }
        }

        crate::registry!(Policy, "cache policy", [$(Policy::$variant => $name: $about),+]);
    };
}

policies! {
    Lru => "lru": "least recently used", lru::Lru::new;
    Fifo => "fifo": "first in, first out", fifo::Fifo::new;
    Lfu => "lfu": "in-cache LFU, ties to the least recent", lfu::Lfu::new;
    S3Fifo => "s3fifo": "S3-FIFO (Yang et al., SOSP 2023), libCacheSim's `S3FIFO.c`",
        s3fifo::S3Fifo::new;
    Sieve => "sieve": "SIEVE (Zhang et al., NSDI 2024)", sieve::Sieve::new;
    Clock => "clock": "CLOCK / second chance (Corbató 1968), one bit",
        clock::Clock::new;
    S3FifoPaper => "s3fifo-paper": "S3-FIFO, the paper's Algorithm 1",
        |cap| s3fifo::S3Fifo::with_variant(cap, s3fifo::Variant::Paper);
    Arc => "arc": "ARC (Megiddo and Modha, FAST 2003)", arc::Arc::new;
    TwoQ => "twoq": "full 2Q (Johnson and Shasha, VLDB 1994)", twoq::TwoQ::new;
    Slru => "slru": "segmented LRU, 4 segments (Karedla et al., IEEE Computer 1994)", slru::Slru::new;
    WTinyLfu => "wtinylfu": "W-TinyLFU (Einziger et al., ACM ToS 2017)",
        wtinylfu::WTinyLfu::new;
    Gdsf => "gdsf": "Greedy-Dual-Size-Frequency (Cherkasova 1998)", gdsf::Gdsf::new;
    Lfuda => "lfuda": "LFU with dynamic aging (Arlitt et al. 2000)", lfuda::Lfuda::new;
    Belady => "belady": "offline optimal, MIN (Belady 1966)",
        belady::Belady::new;
    Lirs => "lirs": "LIRS (Jiang and Zhang, SIGMETRICS 2002), libCacheSim's `LIRS.c`",
        lirs::Lirs::new;
    LirsPaper => "lirs-paper": "LIRS by the paper's three cases", lirs::LirsPaper::new;
}

impl Policy {
    /// Whether the policy reads the future (each request's next access): usable on a trace,
    /// not on a live server.
    pub fn offline(self) -> bool {
        self == Policy::Belady
    }
}

#[cfg(test)]
mod tests;
