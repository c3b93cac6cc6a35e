//! Time to live in front of any cache: an object stored at time t is fresh while the clock is
//! below t + TTL (RFC 9111 section 4.2: fresh while its age is below its freshness lifetime);
//! a request that finds it stale is a miss, counted apart as a revalidation, and the stored
//! copy is refreshed in place (RFC 9111 section 4.3: the cache revalidates with the origin and
//! updates what it holds; we count the object's bytes as fetched again, the upper bound, since
//! a trace does not say whether the object changed). The eviction policy sees every request as
//! it would without TTLs: a stale copy is still in the cache, so to the policy it is a hit.
//! A fresh hit does not extend the lifetime; the copy stored (or refreshed) at time t expires at
//! t + TTL.
//!
//! libCacheSim, built with TTL support, instead removes an expired object and inserts it
//! again on the miss (`cache_find_base`); for LRU the two are the same, for FIFO-like policies
//! the refreshed object keeps its place here and moves to the tail there. Its PyPI build has no
//! TTL support (`default_ttl` has no effect), so there is nothing to compare with; the tests
//! check a naive model.
//!
//! TTLs are in the trace's time unit (seconds in oracleGeneral and twr).

use super::{Cache, Occupancy};
use crate::idmap::KeyTable;
use crate::workload::Request;

/// The expiry of an object that never expires (u64::MAX marks a vacant bucket).
const NEVER: u64 = u64::MAX - 1;

/// Where an object's TTL comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Ttl {
    /// Each request's own TTL field (twr's, or a CSV column); 0 there means none.
    Trace,
    /// The same TTL for every object.
    Fixed(u64),
    /// By size class: the TTL of the first class whose upper bound (bytes, inclusive) is at
    /// least the object's size, else `rest`.
    BySize { classes: Vec<(u64, u64)>, rest: u64 },
}

impl Ttl {
    /// The allowed forms, for error messages and `--help`.
    pub const FORMS: &'static str = "trace (each request's TTL field), a duration for every \
         object (3600, 3600s, 30m, 1h, 1d), or size classes SIZE:DURATION,...,DURATION (e.g. \
         64KiB:1h,1GiB:6h,1d: objects up to 64 KiB 1 hour, up to 1 GiB 6 hours, others 1 day)";

    /// The TTL of a request (None: it never expires).
    #[inline]
    pub fn of(&self, r: &Request) -> Option<u64> {
        match self {
            Ttl::Trace => (r.ttl > 0).then_some(u64::from(r.ttl)),
            Ttl::Fixed(t) => Some(*t),
            Ttl::BySize { classes, rest } => Some(
                classes
                    .iter()
                    .find(|(upper, _)| u64::from(r.size) <= *upper)
                    .map_or(*rest, |(_, t)| *t),
            ),
        }
    }

    /// Its name as parsed back (durations in seconds).
    pub fn name(&self) -> String {
        match self {
            Ttl::Trace => "trace".into(),
            Ttl::Fixed(t) => t.to_string(),
            Ttl::BySize { classes, rest } => {
                let mut v: Vec<String> = classes.iter().map(|(u, t)| format!("{u}:{t}")).collect();
                v.push(rest.to_string());
                v.join(",")
            }
        }
    }
}

/// A duration in seconds: a whole number, or with a unit (`30m`, `1h`, `1d`; humantime's forms).
fn seconds(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.parse::<u64>() {
        Ok(n) => Some(n),
        Err(_) => humantime::parse_duration(s)
            .ok()
            .filter(|d| d.subsec_nanos() == 0)
            .map(|d| d.as_secs()),
    }
}

impl std::str::FromStr for Ttl {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            crate::Error::param("ttl", s.trim(), format!("{why}; allowed: {}", Ttl::FORMS))
        };
        let t = s.trim();
        if t == "trace" {
            return Ok(Ttl::Trace);
        }
        let items: Vec<&str> = t.split(',').map(str::trim).collect();
        let (last, first) = items.split_last().expect("split gives one item at least");
        let rest = seconds(last).ok_or_else(|| {
            bad(&format!(
                "`{last}` is not a duration in whole seconds (the last item is the TTL of every \
                 object not in a class before it)"
            ))
        })?;
        if first.is_empty() {
            return Ok(Ttl::Fixed(rest));
        }
        let mut classes = Vec::new();
        for item in first {
            let (size, ttl) = item
                .split_once(':')
                .ok_or_else(|| bad(&format!("`{item}` is not SIZE:DURATION")))?;
            let upper = parse_size::parse_size(size.trim())
                .map_err(|_| bad(&format!("`{size}` is not a size in bytes")))?;
            let ttl = seconds(ttl)
                .ok_or_else(|| bad(&format!("`{ttl}` is not a duration in whole seconds")))?;
            if classes.last().is_some_and(|&(u, _)| upper <= u) {
                return Err(bad("the size classes must grow from left to right"));
            }
            classes.push((upper, ttl));
        }
        Ok(Ttl::BySize { classes, rest })
    }
}

/// A cache whose objects expire: see the module's rules.
#[derive(Debug)]
pub struct Expiring<C> {
    inner: C,
    ttl: Ttl,
    /// When each cached object expires ([`NEVER`]: never), by its slot, for a policy whose
    /// slots are stable ([`Cache::stable_slots`], LRU and FIFO): one array read per request, and
    /// nothing to do on eviction (the next object stored in the slot overwrites its entry).
    /// Measured on the 10^7-request trace: see docs/cache.md, TTL cost.
    by_slot: Option<Vec<u64>>,
    /// The same by id, for the other policies. Entries leave with their objects (the inner
    /// cache's eviction log), so the table stays the cache's size and in the CPU's cache; an
    /// entry a policy forgets to log is harmless: storing the object again overwrites it.
    expiry: KeyTable<u64>,
    evicted: Vec<u64>,
    expired: u64,
    expired_bytes: u64,
}

impl<C: Cache> Expiring<C> {
    pub fn new(inner: C, ttl: Ttl) -> Self {
        let slotted = inner.stable_slots();
        Self::with_table(inner, ttl, !slotted)
    }

    /// With the table by id even where slots would do (`table`), so tests can hold the two
    /// ways against each other.
    fn with_table(mut inner: C, ttl: Ttl, table: bool) -> Self {
        if table {
            inner.log_evictions();
        }
        Expiring {
            inner,
            ttl,
            by_slot: (!table).then(Vec::new),
            expiry: KeyTable::with_capacity(if table { 1024 } else { 0 }),
            evicted: Vec::new(),
            expired: 0,
            expired_bytes: 0,
        }
    }

    /// Sets `id`'s expiry, adding it if absent.
    #[inline]
    fn set(&mut self, id: u64, until: u64) {
        match self.expiry.find(id) {
            Ok(i) => *self.expiry.value_mut(i) = until,
            Err(vacant) => self.expiry.insert_vacant(vacant, id, until),
        }
    }
}

impl<C: Cache> Cache for Expiring<C> {
    /// Without a time the clock is 0: nothing expires before its TTL of 0.
    fn access(&mut self, id: u64, size: u32) -> bool {
        self.access_req(&Request::new(0, id, size))
    }

    #[inline]
    fn access_req(&mut self, r: &Request) -> bool {
        let until = self
            .ttl
            .of(r)
            .map_or(NEVER, |t| r.time.saturating_add(t).min(NEVER));
        if let Some(by_slot) = self.by_slot.as_mut() {
            let a = self.inner.access_gated(r, || true);
            if a.slot == super::slots::NIL {
                // Not stored: too heavy, or declined by admission.
                return false;
            }
            let s = a.slot as usize;
            if s >= by_slot.len() {
                by_slot.resize(s + 1, NEVER);
            }
            if !a.hit {
                by_slot[s] = until;
                return false;
            }
            if r.time >= by_slot[s] {
                // Stale: revalidated, refreshed in place.
                by_slot[s] = until;
                self.expired += 1;
                self.expired_bytes += u64::from(r.size);
                return false;
            }
            return true;
        }
        let hit = self.inner.access_req(r);
        self.inner.drain_evictions(&mut self.evicted);
        for id in self.evicted.drain(..) {
            if let Ok(i) = self.expiry.find(id) {
                self.expiry.remove_at(i);
            }
        }
        if hit {
            match self.expiry.find(r.id) {
                // Stale (the clock has reached its expiry): revalidated, refreshed in place.
                Ok(i) if r.time >= self.expiry.value(i) => {
                    *self.expiry.value_mut(i) = until;
                    self.expired += 1;
                    self.expired_bytes += u64::from(r.size);
                    false
                }
                Ok(_) => true,
                // Made resident without a request of its own (LIRS's stale entries): fresh
                // from now.
                Err(_) => {
                    self.expiry.insert(r.id, until);
                    true
                }
            }
        } else {
            // Stored now, unless declined (too heavy, or by admission).
            if self.inner.contains(r.id) {
                self.set(r.id, until);
            }
            false
        }
    }

    fn contains(&self, id: u64) -> bool {
        self.inner.contains(id)
    }

    fn occupancy(&self) -> Occupancy {
        let mut o = self.inner.occupancy();
        o.heap_bytes +=
            self.expiry.heap_bytes() + self.by_slot.as_ref().map_or(0, |v| v.capacity() * 8);
        o
    }

    fn prefetch(&self, id: u64) {
        self.inner.prefetch(id);
        if self.by_slot.is_none() {
            self.expiry.prefetch(id);
        }
    }

    fn replay_dyn(&mut self, reqs: &[Request]) -> super::Tally {
        Cache::replay(self, reqs)
    }

    /// The inner cache always logs (this table needs it); the log is drained on every
    /// request, so a holder of the objects cannot read it through this wrapper.
    fn log_evictions(&mut self) {}

    fn drain_evictions(&mut self, _out: &mut Vec<u64>) {}

    fn expired(&self) -> (u64, u64) {
        (self.expired, self.expired_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Named;
    use crate::cache::{Capacity, Policy, fifo::Fifo, lru::Lru};
    use proptest::prelude::*;

    #[test]
    fn ttl_rules_parse_and_apply() {
        let t: Ttl = "64KiB:1h,1GiB:6h,1d".parse().unwrap();
        let r = |size| Request::new(0, 1, size);
        assert_eq!(t.of(&r(65536)), Some(3600));
        assert_eq!(t.of(&r(65537)), Some(6 * 3600));
        assert_eq!(t.of(&r(u32::MAX)), Some(86400));
        assert_eq!(t.name(), "65536:3600,1073741824:21600,86400");
        assert_eq!("3600".parse::<Ttl>().unwrap(), Ttl::Fixed(3600));
        assert_eq!("30m".parse::<Ttl>().unwrap(), Ttl::Fixed(1800));
        let mut with = Request::new(0, 1, 1);
        assert_eq!(Ttl::Trace.of(&with), None);
        with.ttl = 9;
        assert_eq!(Ttl::Trace.of(&with), Some(9));
        for bad in [
            "",
            "1.5s",
            "soon",
            "64KiB:1h",
            "1GiB:1h,64KiB:1h,1d",
            "x:1h,1d",
            "64KiB:x,1d",
        ] {
            let e = bad.parse::<Ttl>().unwrap_err().to_string();
            assert!(e.contains("allowed"), "{bad}: {e}");
        }
    }

    /// A fresh hit, a stale one refreshed in place, then fresh again; a TTL of 0 makes every
    /// later request stale; counted by hand.
    #[test]
    fn expiry_by_hand() {
        let mut c = Expiring::new(Lru::new(Capacity::objects(10).unwrap()), Ttl::Fixed(10));
        let at = |t| Request::new(t, 7, 100);
        let got: Vec<bool> = [0, 9, 10, 15, 19, 20]
            .iter()
            .map(|&t| c.access_req(&at(t)))
            .collect();
        // Stored at 0 (expires at 10): hit at 9; stale at 10, refreshed to 20; hits at 15, 19;
        // stale at 20.
        assert_eq!(got, [false, true, false, true, true, false]);
        assert_eq!(c.expired(), (2, 200));
        let mut z = Expiring::new(Lru::new(Capacity::objects(10).unwrap()), Ttl::Fixed(0));
        assert_eq!([z.access_req(&at(5)), z.access_req(&at(5))], [false, false]);
        assert_eq!(z.expired(), (1, 100));
    }

    /// The naive model: a cache of at most C objects (LRU: a recency list; FIFO: an insertion
    /// queue) whose entries carry their expiry; a stale entry is a miss, refreshed in place
    /// (for LRU moved to the front as a hit would be).
    fn naive(lru: bool, cap: usize, ttl: u64, reqs: &[Request]) -> (Vec<bool>, u64) {
        let mut list: Vec<(u64, u64)> = Vec::new(); // (id, expiry), front = next to evict
        let mut out = Vec::new();
        let mut expired = 0;
        for r in reqs {
            match list.iter().position(|&(id, _)| id == r.id) {
                Some(i) => {
                    let stale = r.time >= list[i].1;
                    if stale {
                        list[i].1 = r.time + ttl;
                        expired += 1;
                    }
                    if lru {
                        let e = list.remove(i);
                        list.push(e);
                    }
                    out.push(!stale);
                }
                None => {
                    if list.len() == cap {
                        list.remove(0);
                    }
                    list.push((r.id, r.time + ttl));
                    out.push(false);
                }
            }
        }
        (out, expired)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// LRU and FIFO with a TTL equal the naive model request for request, whatever the
        /// capacity, TTL and arrival times.
        #[test]
        fn lru_and_fifo_with_ttls_equal_the_naive_model(
            ids in proptest::collection::vec(0u64..12, 1..400),
            gaps in proptest::collection::vec(0u64..4, 400),
            cap in 1usize..8,
            ttl in 0u64..20,
        ) {
            let mut t = 0;
            let reqs: Vec<Request> = ids.iter().zip(&gaps).map(|(&id, &g)| {
                t += g;
                Request::new(t, id, 1)
            }).collect();
            let c = Capacity::objects(cap as u64).unwrap();
            for lru in [true, false] {
                let (want, expired) = naive(lru, cap, ttl, &reqs);
                // Both ways of keeping expiries: by slot (what LRU and FIFO use) and by id
                // (the other policies').
                for table in [false, true] {
                    let got: (Vec<bool>, (u64, u64)) = if lru {
                        let mut e = Expiring::with_table(Lru::new(c), Ttl::Fixed(ttl), table);
                        let v = reqs.iter().map(|r| e.access_req(r)).collect();
                        // The expiry table holds the cached objects only (evictions leave it).
                        prop_assert_eq!(e.expiry.len(), if table { e.len() } else { 0 });
                        (v, e.expired())
                    } else {
                        let mut e = Expiring::with_table(Fifo::new(c), Ttl::Fixed(ttl), table);
                        let v = reqs.iter().map(|r| e.access_req(r)).collect();
                        prop_assert_eq!(e.expiry.len(), if table { e.len() } else { 0 });
                        (v, e.expired())
                    };
                    prop_assert_eq!(&got.0, &want, "lru {} table {}", lru, table);
                    prop_assert_eq!(got.1, (expired, expired));
                }
            }
        }
    }

    /// A TTL longer than the trace changes nothing, for every policy.
    #[test]
    fn a_ttl_beyond_the_trace_changes_nothing() {
        let reqs: Vec<Request> = (0..5000u64)
            .map(|i| Request::new(i, (i * 7919) % 300 % (1 + i % 97), 1))
            .collect();
        for p in Policy::ALL.iter().filter(|p| !p.offline()) {
            let c = Capacity::objects(50).unwrap();
            let mut plain = p.build(c);
            let mut timed = p.build_full(
                c,
                crate::cache::admission::Admission::All,
                1,
                Some(Ttl::Fixed(1 << 40)),
            );
            assert_eq!(
                plain.replay_dyn(&reqs),
                timed.replay_dyn(&reqs),
                "{}",
                p.name()
            );
            assert_eq!(timed.expired(), (0, 0));
        }
    }
}
