//! A miniature simulation's estimate post-stratified by popularity (the `strata` estimator).
//!
//! A miniature simulation ([`super::mrc::SpatialSample`]) replays the requests of a share R of
//! the objects through a cache of R x C. Its error is mostly which objects the hash happens to
//! draw: a hot object in or out of the sample moves the sample's mix of hot and cold objects,
//! and hot objects mostly hit while cold ones mostly miss. SHARDS' correction (misses over R
//! times all requests, the `adj` estimator) fixes the request count but not the mix.
//!
//! Post-stratification (Cochran, *Sampling Techniques*, 3rd ed., 1977, section 5A.9) fixes the
//! mix: objects fall into classes by their request count over the whole trace (1, 2-3, 4-7, ...:
//! powers of two), counted in a first pass. Each class's misses in the miniature are weighed by
//! the class's requests in the whole trace over its requests in the sample, so every class
//! counts with its true share:
//!
//! miss ratio = sum over classes k of misses_k x (requests_k / sampled requests_k) / requests
//!
//! (in bytes the same with bytes). The first pass also gives the share of objects the sample
//! actually drew (n sampled of N, or their bytes of the working set's), and each miniature cache
//! is scaled by it instead of by R, so that the miniature holds the same share of the sampled
//! objects as the whole cache does of all of them: near a cliff of a curve (a loop that just fits)
//! the draw's deviation from R otherwise moves the estimate a lot. At a rate of 1 both are exact.
//!
//! Classes with no sampled object join the next colder class that has one (from the hottest
//! down, a group closes once it holds a sampled object; any colder rest joins the last group),
//! so no class's requests are lost.

use super::Unit;
use super::mrc::SpatialSample;
use crate::idmap::{KeyTable, Vacancy};

crate::registry! {
    /// How a miniature simulation turns its misses into the whole trace's ratios.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum Estimator: "estimator" {
        /// SHARDS' correction: misses over R times the whole trace's requests; caches scaled
        /// by R. One pass.
        #[default]
        Adj => "adj": "misses over R x the whole trace's requests, caches scaled by R (one pass)",
        /// Post-stratified by popularity class, caches scaled by the share drawn ([`Strata`]).
        Strata => "strata": "misses weighed by popularity class, caches scaled by the share \
            of objects drawn (a first pass counts every object)",
    }
}

/// Popularity classes: request counts 1, 2-3, 4-7, ..., up to 2^32 - 1 (a count saturates there).
pub const CLASSES: usize = 32;

/// The class of an object requested `count` (at least 1) times: floor(log2(count)).
#[inline]
pub fn class_of(count: u64) -> usize {
    (63 - count.max(1).leading_zeros() as usize).min(CLASSES - 1)
}

/// An object's request count and its size at its first request, in one word (count high).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen(u64);

impl Seen {
    fn new(size: u32) -> Self {
        Seen((1 << 32) | u64::from(size))
    }
    fn count(self) -> u64 {
        self.0 >> 32
    }
    fn size(self) -> u64 {
        self.0 & 0xFFFF_FFFF
    }
    /// One more request; the count stops at 2^32 - 2, so the word never reads as vacant.
    fn bump(&mut self) {
        if self.count() < (1 << 32) - 2 {
            self.0 += 1 << 32;
        }
    }
}

impl Vacancy for Seen {
    const VACANT: Seen = Seen(u64::MAX);
    #[inline]
    fn is_vacant(&self) -> bool {
        self.0 == u64::MAX
    }
}

/// Every object's request count and first size, counted over a whole trace (the first pass).
#[derive(Debug, Clone)]
pub struct ObjectCounts {
    table: KeyTable<Seen>,
}

impl Default for ObjectCounts {
    fn default() -> Self {
        ObjectCounts {
            table: KeyTable::with_capacity(1 << 12),
        }
    }
}

impl ObjectCounts {
    /// Counts the requests of `reqs`.
    pub fn add(&mut self, reqs: &[crate::workload::Request]) {
        super::replay_ahead(
            self,
            reqs,
            |s, id| s.table.prefetch(id),
            |s, r| match s.table.find(r.id) {
                Ok(i) => s.table.value_mut(i).bump(),
                Err(i) => s.table.insert_vacant(i, r.id, Seen::new(r.size)),
            },
        );
    }

    /// Distinct objects.
    pub fn objects(&self) -> u64 {
        self.table.len() as u64
    }

    /// The working set's bytes (each object at its first request) and its largest object.
    pub fn bytes_and_largest(&self) -> (u64, u64) {
        self.table
            .iter()
            .fold((0, 0), |(b, m), (_, s)| (b + s.size(), m.max(s.size())))
    }

    /// The distinct ids.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.table.iter().map(|(id, _)| id)
    }

    /// The strata of `sample` over these counts.
    pub fn strata(&self, sample: &SpatialSample) -> Strata {
        let mut all = [(0u64, 0u64); CLASSES];
        let mut drawn = [(0u64, 0u64, 0u64); CLASSES];
        let (mut n_all, mut b_all, mut n_drawn, mut b_drawn) = (0u64, 0u64, 0u64, 0u64);
        let mut members = Vec::new();
        for (id, s) in self.table.iter() {
            let k = class_of(s.count());
            let (reqs, bytes) = (s.count(), s.count() * s.size());
            all[k].0 += reqs;
            all[k].1 += bytes;
            n_all += 1;
            b_all += s.size();
            if sample.keeps(id) {
                drawn[k].0 += reqs;
                drawn[k].1 += bytes;
                drawn[k].2 += 1;
                n_drawn += 1;
                b_drawn += s.size();
                members.push((id, k));
            }
        }
        // From the hottest class down, a group closes once it holds a sampled object.
        let mut group_of = [0u8; CLASSES];
        let mut groups: Vec<Group> = Vec::new();
        let mut open = Group::default();
        let mut open_has = false;
        for k in (0..CLASSES).rev() {
            group_of[k] = groups.len() as u8;
            open.add(all[k], drawn[k]);
            open_has |= drawn[k].2 > 0;
            if open_has {
                groups.push(std::mem::take(&mut open));
                open_has = false;
            }
        }
        // A colder rest with no sampled object joins the last group.
        match groups.last_mut() {
            Some(last) => {
                last.add((open.all_requests, open.all_bytes), (0, 0, 0));
                let n = groups.len() as u8;
                for g in group_of.iter_mut() {
                    *g = (*g).min(n - 1);
                }
            }
            None => groups.push(open),
        }
        let mut table = KeyTable::with_capacity(members.len());
        for (id, k) in members {
            table.insert(id, u64::from(group_of[k]));
        }
        let share = |part: u64, whole: u64| {
            if whole == 0 {
                sample.rate()
            } else {
                part as f64 / whole as f64
            }
        };
        Strata {
            groups,
            members: table,
            requests: all.iter().map(|a| a.0).sum(),
            bytes: all.iter().map(|a| a.1).sum(),
            share_objects: share(n_drawn, n_all),
            share_bytes: share(b_drawn, b_all),
        }
    }
}

/// One group of classes: its requests and bytes in the whole trace and in the sample.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Group {
    pub all_requests: u64,
    pub all_bytes: u64,
    pub sampled_requests: u64,
    pub sampled_bytes: u64,
}

impl Group {
    fn add(&mut self, all: (u64, u64), drawn: (u64, u64, u64)) {
        self.all_requests += all.0;
        self.all_bytes += all.1;
        self.sampled_requests += drawn.0;
        self.sampled_bytes += drawn.1;
    }
}

/// The strata of one sample: each sampled object's group, each group's weights, and the share
/// of the objects (and of the working set's bytes) the sample drew.
#[derive(Debug, Clone)]
pub struct Strata {
    groups: Vec<Group>,
    members: KeyTable<u64>,
    requests: u64,
    bytes: u64,
    share_objects: f64,
    share_bytes: f64,
}

impl Strata {
    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The groups, hottest first.
    pub fn group_list(&self) -> &[Group] {
        &self.groups
    }

    /// The group of sampled object `id` (None: not in the sample).
    #[inline]
    pub fn group(&self, id: u64) -> Option<usize> {
        self.members
            .find(id)
            .ok()
            .map(|i| self.members.value(i) as usize)
    }

    /// The share of the objects the sample drew, counted in `unit` (objects, or the working
    /// set's bytes).
    pub fn share(&self, unit: Unit) -> f64 {
        match unit {
            Unit::Objects => self.share_objects,
            Unit::Bytes => self.share_bytes,
        }
    }

    /// The miniature cache standing for `capacity`: capacity x the share drawn, rounded.
    pub fn scaled(&self, capacity: u64, unit: Unit) -> u64 {
        (capacity as f64 * self.share(unit)).round() as u64
    }

    /// The estimated miss ratio and byte miss ratio of the whole trace from a miniature's
    /// misses and missed bytes per group (as [`Strata::group`] numbers them).
    pub fn estimate(&self, misses: &[u64], miss_bytes: &[u64]) -> (f64, f64) {
        let weigh = |counts: &[u64], all: fn(&Group) -> u64, drawn: fn(&Group) -> u64, whole| {
            let sum: f64 = self
                .groups
                .iter()
                .zip(counts)
                .filter(|(g, _)| drawn(g) > 0)
                .map(|(g, &m)| m as f64 * all(g) as f64 / drawn(g) as f64)
                .sum();
            (sum / (whole as f64).max(1.0)).min(1.0)
        };
        (
            weigh(
                misses,
                |g| g.all_requests,
                |g| g.sampled_requests,
                self.requests,
            ),
            weigh(miss_bytes, |g| g.all_bytes, |g| g.sampled_bytes, self.bytes),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Request;

    fn reqs(ids: &[(u64, u32)]) -> Vec<Request> {
        ids.iter().map(|&(id, s)| Request::new(0, id, s)).collect()
    }

    #[test]
    fn classes_are_powers_of_two() {
        let want = [
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (7, 2),
            (8, 3),
            (1 << 20, 20),
        ];
        for (count, class) in want {
            assert_eq!(class_of(count), class, "count {count}");
        }
        assert_eq!(class_of(u64::MAX), CLASSES - 1);
    }

    /// At rate 1 every class is whole, so the estimate is the miniature's own ratio: exact.
    #[test]
    fn at_rate_one_the_estimate_is_the_ratio_itself() {
        let t = reqs(&[(1, 10), (2, 20), (1, 10), (3, 5), (1, 10), (2, 20), (4, 1)]);
        let mut c = ObjectCounts::default();
        c.add(&t);
        let s = c.strata(&SpatialSample::at_rate(1.0).unwrap());
        assert_eq!(s.share(Unit::Objects), 1.0);
        // Object 1 (3 requests, class 1), 2 (2, class 1), 3 and 4 (1, class 0): two groups.
        assert_eq!(s.groups(), 2);
        let (g_hot, g_cold) = (s.group(1).unwrap(), s.group(3).unwrap());
        assert_eq!(s.group(2), Some(g_hot));
        assert_eq!(s.group(4), Some(g_cold));
        let mut m = vec![0; 2];
        let mut mb = vec![0; 2];
        // Misses: object 1's first, 2's first, 3 and 4: 4 of 7 requests, 36 of 76 bytes.
        m[g_hot] = 2;
        mb[g_hot] = 30;
        m[g_cold] = 2;
        mb[g_cold] = 6;
        let (r, b) = s.estimate(&m, &mb);
        assert!((r - 4.0 / 7.0).abs() < 1e-15, "{r}");
        assert!((b - 36.0 / 76.0).abs() < 1e-15, "{b}");
    }

    /// Weights by hand: a sample of two of three objects (the two of smallest hash), one hot
    /// and two cold.
    #[test]
    fn each_group_is_weighed_by_its_share() {
        // Object 10: 4 requests (class 2); 20 and 30: 1 request each (class 0).
        let t = reqs(&[(10, 1), (20, 1), (10, 1), (30, 1), (10, 1), (10, 1)]);
        let mut c = ObjectCounts::default();
        c.add(&t);
        let mut two = crate::cache::mrc::SmallestHashes::new(2).unwrap();
        for id in [10, 20, 30] {
            two.access(id);
        }
        let sample = two.sample();
        let s = c.strata(&sample);
        assert!((s.share(Unit::Objects) - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(s.scaled(300, Unit::Objects), 200);
        let cold: Vec<u64> = [20, 30].into_iter().filter(|&x| sample.keeps(x)).collect();
        if sample.keeps(10) {
            // Two groups: the hot (4 requests in all, 4 sampled), the cold (2 and 1).
            assert_eq!(s.groups(), 2);
            let (gh, gc) = (s.group(10).unwrap(), s.group(cold[0]).unwrap());
            let mut m = vec![0; 2];
            m[gh] = 1;
            m[gc] = 1;
            // (1 x 4/4 + 1 x 2/1) / 6
            let (r, _) = s.estimate(&m, &m);
            assert!((r - 0.5).abs() < 1e-15, "{r}");
        } else {
            // The hot class has no sampled object: it joins the cold, one group (6 requests in
            // all, 2 sampled); both cold requests missed: 2 x 6/2 / 6.
            assert_eq!(s.groups(), 1);
            let (r, _) = s.estimate(&[2], &[2]);
            assert!((r - 1.0).abs() < 1e-15, "{r}");
        }
    }
}
