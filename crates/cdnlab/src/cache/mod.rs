//! Cache eviction policies behind one trait, one file each.
//!
//! | name | policy | file |
//! |---|---|---|
//! | `lru` | least recently used | [`lru`]; [`lru_bank`] holds many small LRU caches in one arena |
//! | `fifo` | first in, first out | [`fifo`] |
//! | `lfu` | least frequently used, ties to the least recent | [`lfu`] |
//! | `s3fifo` | S3-FIFO (Yang et al., SOSP 2023) as libCacheSim implements it | [`s3fifo`] |
//! | `s3fifo-paper` | S3-FIFO as the paper's Algorithm 1 writes it | [`s3fifo`] |
//! | `sieve` | SIEVE (Zhang et al., NSDI 2024) | [`sieve`] |
//! | `clock` | CLOCK, second-chance FIFO (Corbató 1968), one reference bit | [`clock`] |
//! | `arc` | ARC (Megiddo and Modha, FAST 2003) | [`arc`] |
//! | `twoq` | 2Q, full version (Johnson and Shasha, VLDB 1994) | [`twoq`] |
//! | `slru` | segmented LRU, 4 segments (Karedla et al., 1994) | [`slru`] |
//! | `wtinylfu` | W-TinyLFU (Einziger et al., ACM ToS 2017) | [`wtinylfu`] |
//! | `gdsf` | Greedy-Dual-Size-Frequency (Cherkasova 1998) | [`gdsf`] |
//! | `lfuda` | LFU with dynamic aging (Arlitt et al., 2000) | [`lfuda`] |
//! | `lirs` | LIRS (Jiang and Zhang, SIGMETRICS 2002) as libCacheSim implements it | [`lirs`] |
//! | `lirs-paper` | LIRS by the paper's three cases | [`lirs`] |
//! | `belady` | offline optimal from the next-access field (Belady 1966) | [`belady`] |
//!
//! A capacity counts objects or bytes ([`Capacity`]); an object weighs 1 or its size. An object
//! heavier than the whole capacity is never admitted (a miss that stores nothing), as in
//! libCacheSim. All policies keep their state in [`slots::Slots`]: flat arrays indexed by dense
//! slot numbers, with an open-addressing id index ([`index`]), so a request allocates nothing once
//! the cache is warm. [`che`] holds the Che approximation of LRU under independent requests;
//! [`mrc`] the one-pass LRU miss-ratio curve (stack distances, and SHARDS sampling).

pub mod arc;
pub mod belady;
pub mod che;
pub mod clock;
pub mod fifo;
pub mod gdsf;
mod ghost;
pub mod index;
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
pub mod twoq;
pub mod wtinylfu;

use crate::Error;
use crate::workload::Request;

/// What a capacity counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Objects,
    Bytes,
}

crate::registry!(Unit, "size unit", [Unit::Objects => "objects", Unit::Bytes => "bytes"]);

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

/// An eviction policy. `access` is the whole protocol: look up, and on a miss admit and evict.
pub trait Cache {
    /// The policy's registry name.
    fn name(&self) -> &'static str;
    /// The capacity it was built with.
    fn capacity(&self) -> Capacity;
    /// Requests object `id` of `size` bytes: true on a hit. On a miss the object is admitted
    /// (unless heavier than the capacity) after evicting as the policy says.
    fn access(&mut self, id: u64, size: u32) -> bool;
    /// [`Cache::access`] with the whole request: an offline policy ([`belady`]) reads
    /// `next_access` too; the others look at the id and size only.
    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        self.access(r.id, r.size)
    }
    /// Whether `id` is cached (does not count as an access).
    fn contains(&self, id: u64) -> bool;
    /// Number of cached objects.
    fn len(&self) -> usize;
    /// Whether nothing is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Capacity units in use.
    fn used(&self) -> u64;
    /// Heap bytes held by the policy's structures.
    fn heap_bytes(&self) -> usize;
    /// A hint that `id` will be accessed soon (see [`index::IdIndex::prefetch`]); no effect on
    /// results.
    fn prefetch(&self, _id: u64) {}
    /// Replays `reqs`, returning the number of hits. Implemented here once, and monomorphised per
    /// policy, so a replay through `dyn Cache` dispatches once, not per request.
    fn replay(&mut self, reqs: &[Request]) -> u64
    where
        Self: Sized,
    {
        // Prefetch distance in requests. Prefetching the object's record too (a second stage that
        // looks the id up early) was measured slower: the extra lookups cost more than the
        // misses they hide.
        const AHEAD: usize = 8;
        let mut hits = 0;
        for (i, r) in reqs.iter().enumerate() {
            if let Some(next) = reqs.get(i + AHEAD) {
                self.prefetch(next.id);
            }
            hits += u64::from(self.access_req(r));
        }
        hits
    }
    /// [`Cache::replay`] through a trait object.
    fn replay_dyn(&mut self, reqs: &[Request]) -> u64;
    /// Starts keeping the ids of evicted objects, for a caller that holds the objects
    /// themselves (the live edge); simulations leave it off. Every object that stops being
    /// resident, for whatever reason (eviction, demotion out of a queue, a stale entry
    /// dropped), is logged. The one change the log does not carry is an arrival without a
    /// request: `lirs` (libCacheSim's rules) can make an evicted object resident again through a
    /// stale entry; a holder that has not the object's bytes refetches it on its next request.
    fn log_evictions(&mut self);
    /// Moves the ids evicted since the last call into `out` (none unless logging).
    fn drain_evictions(&mut self, out: &mut Vec<u64>);
}

/// Implements [`Cache::replay_dyn`] by forwarding to the monomorphised default, and the
/// eviction log by forwarding to the policy's slots (`self.slots`, or the path given).
macro_rules! replay_dyn {
    () => {
        $crate::cache::replay_dyn!(slots);
    };
    ($($field:ident).+) => {
        fn replay_dyn(&mut self, reqs: &[$crate::workload::Request]) -> u64 {
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

/// The policies, as named in scenarios and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Lru,
    Fifo,
    Lfu,
    S3Fifo,
    Sieve,
    Clock,
    S3FifoPaper,
    Arc,
    TwoQ,
    Slru,
    WTinyLfu,
    Gdsf,
    Lfuda,
    Belady,
    Lirs,
    LirsPaper,
}

impl Policy {
    /// Builds an empty cache of this policy.
    pub fn build(self, cap: Capacity) -> Box<dyn Cache + Send> {
        match self {
            Policy::Lru => Box::new(lru::Lru::new(cap)),
            Policy::Fifo => Box::new(fifo::Fifo::new(cap)),
            Policy::Lfu => Box::new(lfu::Lfu::new(cap)),
            Policy::S3Fifo => Box::new(s3fifo::S3Fifo::new(cap)),
            Policy::Sieve => Box::new(sieve::Sieve::new(cap)),
            Policy::Clock => Box::new(clock::Clock::new(cap)),
            Policy::S3FifoPaper => {
                Box::new(s3fifo::S3Fifo::with_variant(cap, s3fifo::Variant::Paper))
            }
            Policy::Arc => Box::new(arc::Arc::new(cap)),
            Policy::TwoQ => Box::new(twoq::TwoQ::new(cap)),
            Policy::Slru => Box::new(slru::Slru::new(cap)),
            Policy::WTinyLfu => Box::new(wtinylfu::WTinyLfu::new(cap)),
            Policy::Gdsf => Box::new(gdsf::Gdsf::new(cap)),
            Policy::Lfuda => Box::new(lfuda::Lfuda::new(cap)),
            Policy::Belady => Box::new(belady::Belady::new(cap)),
            Policy::Lirs => Box::new(lirs::Lirs::new(cap)),
            Policy::LirsPaper => Box::new(lirs::LirsPaper::new(cap)),
        }
    }

    /// Whether the policy reads the future (each request's next access): usable on a trace,
    /// not on a live server.
    pub fn offline(self) -> bool {
        self == Policy::Belady
    }
}

crate::registry!(Policy, "cache policy", [
    Policy::Lru => "lru",
    Policy::Fifo => "fifo",
    Policy::Lfu => "lfu",
    Policy::S3Fifo => "s3fifo",
    Policy::Sieve => "sieve",
    Policy::Clock => "clock",
    Policy::S3FifoPaper => "s3fifo-paper",
    Policy::Arc => "arc",
    Policy::TwoQ => "twoq",
    Policy::Slru => "slru",
    Policy::WTinyLfu => "wtinylfu",
    Policy::Gdsf => "gdsf",
    Policy::Lfuda => "lfuda",
    Policy::Belady => "belady",
    Policy::Lirs => "lirs",
    Policy::LirsPaper => "lirs-paper",
]);

#[cfg(test)]
mod tests;
