//! Consistent hashing on a ring of 2^64 positions: each live node has `vnodes` positions, and a
//! position belongs to the first node position at or after it (its successor), wrapping round.
//!
//! Lookups use a bucket index over the top bits of a position (about one node position per
//! bucket), so a lookup is one index read and, on average, one or two comparisons instead of a
//! binary search: requests make several probes each, and every probe is a lookup.
//!
//! Rules: MH-R1 and MH-R9 of docs/spec/multihash.md.

use super::hash::node_position;
use crate::Error;

/// The ring.
#[derive(Debug, Clone)]
pub struct Ring {
    /// Sorted positions of the live nodes' virtual nodes, and whose each is.
    points: Vec<u64>,
    owners: Vec<u32>,
    /// `buckets[b]`: index of the first point at or after `b << shift`.
    buckets: Vec<u32>,
    shift: u32,
    vnodes: u32,
    /// Which ring (see [`node_position`]): 0 for live deployments and ring files.
    salt: u64,
    /// Per node id ever created: whether it is up.
    alive: Vec<bool>,
    /// This layout's identity, unique in the process (clones share it: same layout), so a
    /// [`super::store::Store`] placed by it knows its replicas' owners without a lookup.
    layout: u64,
}

/// Source of [`Ring::layout`] identities.
static LAYOUTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Ring {
    /// `nodes` live nodes (ids 0..nodes) with `vnodes` positions each, on the ring of live
    /// deployments (salt 0).
    pub fn new(nodes: u32, vnodes: u32) -> Result<Self, Error> {
        Ring::salted(nodes, vnodes, 0)
    }

    /// [`Ring::new`] on the ring of `salt` ([`node_position`]).
    pub fn salted(nodes: u32, vnodes: u32, salt: u64) -> Result<Self, Error> {
        if nodes == 0 {
            return Err(Error::param("nodes", 0, "at least 1 node"));
        }
        if vnodes == 0 {
            return Err(Error::param("vnodes", 0, "at least 1 position per node"));
        }
        if u64::from(nodes) * u64::from(vnodes) > 1 << 28 {
            return Err(Error::param(
                "vnodes",
                vnodes,
                "nodes x vnodes at most 2^28 ring positions",
            ));
        }
        let mut r = Ring {
            points: Vec::new(),
            owners: Vec::new(),
            buckets: Vec::new(),
            shift: 64,
            vnodes,
            salt,
            alive: vec![true; nodes as usize],
            layout: 0,
        };
        r.rebuild();
        Ok(r)
    }

    fn rebuild(&mut self) {
        self.layout = LAYOUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let salt = self.salt;
        let mut pts: Vec<(u64, u32)> = (0..self.alive.len() as u32)
            .filter(|&n| self.alive[n as usize])
            .flat_map(|n| (0..self.vnodes).map(move |v| (node_position(n, v, salt), n)))
            .collect();
        pts.sort_unstable();
        self.points = pts.iter().map(|p| p.0).collect();
        self.owners = pts.iter().map(|p| p.1).collect();
        // About four buckets per point (up to 2^20 points; one beyond), so the walk in
        // `successor` almost always stops at once: a walk of one or two steps at random is a
        // branch mispredicted on every other lookup, and lookups are most of a multi-hash run.
        let len = self.points.len().max(1);
        let extra = if len <= 1 << 20 { 2 } else { 0 };
        let bits = (len.next_power_of_two().trailing_zeros() + extra).max(1);
        self.shift = 64 - bits;
        self.buckets = (0..1u64 << bits)
            .map(|b| self.points.partition_point(|&p| p < b << self.shift) as u32)
            .collect();
    }

    /// Index into `points` of the successor of `pos`.
    #[inline]
    fn successor(&self, pos: u64) -> usize {
        let mut i = self.buckets[(pos >> self.shift) as usize] as usize;
        while i < self.points.len() && self.points[i] < pos {
            i += 1;
        }
        if i == self.points.len() { 0 } else { i }
    }

    /// The node owning position `pos`. None when every node is down.
    #[inline]
    pub fn owner(&self, pos: u64) -> Option<u32> {
        if self.points.is_empty() {
            return None;
        }
        Some(self.owners[self.successor(pos)])
    }

    /// The position of the node position after the one owning `pos` (clockwise, wrapping):
    /// owners of successive calls walk the ring.
    #[inline]
    pub fn next_position(&self, pos: u64) -> u64 {
        self.points[(self.successor(pos) + 1) % self.points.len()]
    }

    /// The identity of this layout of positions: equal layouts (a ring and its clones until
    /// either changes) have the same one, and every crash, join or revive makes a new one.
    #[inline]
    pub fn layout(&self) -> u64 {
        self.layout
    }

    /// Ids ever created (live or not).
    pub fn nodes(&self) -> u32 {
        self.alive.len() as u32
    }

    /// Live nodes (each has `vnodes` positions; O(1), as bounded loads ask on every request).
    pub fn live(&self) -> u32 {
        (self.points.len() / self.vnodes as usize) as u32
    }

    /// The index (into the sorted positions) of the position owning `pos`; None when every node
    /// is down. Walk the ring with [`Ring::owner_at`] and index + 1 (mod [`Ring::positions`]).
    #[inline]
    pub fn owner_index(&self, pos: u64) -> Option<usize> {
        (!self.points.is_empty()).then(|| self.successor(pos))
    }

    /// The node of the position at `index` (see [`Ring::owner_index`]).
    #[inline]
    pub fn owner_at(&self, index: usize) -> u32 {
        self.owners[index]
    }

    /// Whether node `n` is up.
    pub fn is_alive(&self, n: u32) -> bool {
        self.alive.get(n as usize).copied().unwrap_or(false)
    }

    /// A new node joins with the next id; returns it.
    pub fn join(&mut self) -> u32 {
        self.alive.push(true);
        self.rebuild();
        self.alive.len() as u32 - 1
    }

    /// Fail-stop crash of node `n`: its positions pass to their successors.
    pub fn crash(&mut self, n: u32) -> Result<(), Error> {
        if !self.is_alive(n) {
            return Err(Error::param("node", n, "a live node"));
        }
        self.alive[n as usize] = false;
        self.rebuild();
        Ok(())
    }

    /// Node `n` (an id ever created) is up again, with the same positions.
    pub fn revive(&mut self, n: u32) -> Result<(), Error> {
        match self.alive.get(n as usize) {
            Some(false) => {
                self.alive[n as usize] = true;
                self.rebuild();
                Ok(())
            }
            Some(true) => Err(Error::param("node", n, "a node that is down")),
            None => Err(Error::param(
                "node",
                n,
                format!("an id below {}", self.alive.len()),
            )),
        }
    }

    /// Hops of a Chord lookup for `key` started at virtual node `from` (an index into the
    /// sorted positions): each hop goes to the farthest finger (successor of p + 2^j) that
    /// does not pass the key, until the key's predecessor, which knows its successor (the path
    /// length of the Chord paper, about 0.5 log2 N).
    pub fn chord_hops(&self, from: usize, key: u64) -> u32 {
        let n = self.points.len();
        if n <= 1 {
            return 0;
        }
        // Whether x lies in the arc (a, b] going clockwise.
        let in_arc = |x: u64, a: u64, b: u64| x.wrapping_sub(a).wrapping_sub(1) < b.wrapping_sub(a);
        let mut cur = from % n;
        let mut hops = 0;
        loop {
            let (p, next) = (self.points[cur], (cur + 1) % n);
            if p == key || in_arc(key, p, self.points[next]) {
                return hops;
            }
            // Farthest finger in (p, key): fingers are successors of p + 2^j.
            let mut moved = false;
            for j in (0..64).rev() {
                let f = self.successor(p.wrapping_add(1 << j));
                let fp = self.points[f];
                if fp != p && in_arc(fp, p, key.wrapping_sub(1)) {
                    cur = f;
                    hops += 1;
                    moved = true;
                    break;
                }
            }
            if !moved {
                return hops;
            }
        }
    }

    /// Hops of a lookup for `key` from virtual node `from` that follows successor pointers
    /// only, one position per hop, to the key's predecessor (where a Chord lookup ends too).
    /// A wrong model of routing (about N / 2 hops), for checking `mh.chord-hops`.
    pub fn successor_hops(&self, from: usize, key: u64) -> u32 {
        let n = self.points.len();
        if n <= 1 {
            return 0;
        }
        let from = from % n;
        let s = self.successor(key);
        if self.points[s] == key && s == from {
            return 0;
        }
        let pred = (s + n - 1) % n;
        ((pred + n - from) % n) as u32
    }

    /// Number of ring positions (live virtual nodes).
    pub fn positions(&self) -> usize {
        self.points.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// live() (counted from the positions) follows crashes, returns and joins; walking by index
    /// visits the same owners as walking by position.
    #[test]
    fn live_count_and_index_walk() {
        let mut r = Ring::new(30, 4).unwrap();
        let count = |r: &Ring| (0..r.nodes()).filter(|&n| r.is_alive(n)).count() as u32;
        for step in 0..12u32 {
            match step % 3 {
                0 => r.crash(step).unwrap(),
                1 => r.revive(step - 1).unwrap(),
                _ => {
                    r.join();
                }
            }
            assert_eq!(r.live(), count(&r), "step {step}");
            let start = r.owner_index(12345).unwrap();
            let mut pos = 12345u64;
            for i in 0..r.positions() {
                assert_eq!(
                    r.owner_at((start + i) % r.positions()),
                    r.owner(pos).unwrap()
                );
                pos = r.next_position(pos);
            }
        }
    }

    /// The successor by brute force.
    fn owner_naive(r: &Ring, pos: u64) -> u32 {
        let mut pts: Vec<(u64, u32)> = (0..r.nodes())
            .filter(|&n| r.is_alive(n))
            .flat_map(|n| (0..r.vnodes).map(move |v| (node_position(n, v, 0), n)))
            .collect();
        pts.sort_unstable();
        pts.iter().find(|p| p.0 >= pos).unwrap_or(&pts[0]).1
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Lookups through the bucket index agree with brute force, after crashes and joins.
        #[test]
        fn owner_matches_brute_force(nodes in 1u32..60, vnodes in 1u32..5,
                                     crashes in proptest::collection::vec(0u32..60, 0..10),
                                     joins in 0u32..4,
                                     probes in proptest::collection::vec(any::<u64>(), 50)) {
            let mut r = Ring::new(nodes, vnodes).unwrap();
            for c in crashes {
                if r.live() > 1 && r.is_alive(c) {
                    r.crash(c).unwrap();
                }
            }
            for _ in 0..joins {
                r.join();
            }
            for &p in probes.iter().chain(&[0, u64::MAX]) {
                prop_assert_eq!(r.owner(p).unwrap(), owner_naive(&r, p));
            }
        }
    }

    /// Without virtual nodes a node owns 1/N of the ring on average; with 100 of them the
    /// largest share is close to the mean (load skew the reason for virtual nodes).
    #[test]
    fn virtual_nodes_even_out_ownership() {
        let share = |vnodes: u32| {
            let r = Ring::new(100, vnodes).unwrap();
            let mut counts = vec![0u32; 100];
            for i in 0..200_000u64 {
                counts[r.owner(crate::rng::splitmix64(i)).unwrap() as usize] += 1;
            }
            f64::from(*counts.iter().max().unwrap()) / 2000.0
        };
        let (one, many) = (share(1), share(100));
        assert!(one > 2.5, "max/mean with one position per node: {one}");
        assert!(many < 1.5, "max/mean with 100 positions per node: {many}");
    }

    /// Successor routing walks every position between the start and the key's predecessor:
    /// a key just past position k is (k - from) mod n hops from position `from`.
    #[test]
    fn successor_hops_count_the_positions_walked() {
        let r = Ring::new(50, 1).unwrap();
        let n = r.positions();
        for from in [0, 7, 49] {
            for k in [0, 3, 20, 49] {
                let key = r.points[k] + 1;
                assert_eq!(
                    r.successor_hops(from, key) as usize,
                    (k + n - from) % n,
                    "from {from} to just past {k}"
                );
            }
        }
    }

    /// Chord: mean hops about 0.5 log2 N (N = 1024: 5), within 0.6.
    #[test]
    fn chord_hops_are_half_log_n() {
        let r = Ring::new(1024, 1).unwrap();
        let mut total = 0u64;
        let trials = 4000u64;
        for t in 0..trials {
            let from = (crate::rng::splitmix64(t) % 1024) as usize;
            total += u64::from(r.chord_hops(from, crate::rng::splitmix64(t + 1_000_000)));
        }
        let mean = total as f64 / trials as f64;
        assert!((mean - 5.0).abs() < 0.6, "mean hops {mean}");
    }

    #[test]
    fn bad_rings_are_refused() {
        assert!(Ring::new(0, 1).is_err());
        assert!(Ring::new(1, 0).is_err());
        let mut r = Ring::new(2, 1).unwrap();
        r.crash(1).unwrap();
        assert!(r.crash(1).is_err());
        assert!(r.crash(7).is_err());
        assert!(r.revive(0).is_err() && r.revive(7).is_err());
    }

    /// A crashed node that comes back owns exactly what it owned before.
    #[test]
    fn revive_restores_ownership() {
        let mut r = Ring::new(5, 8).unwrap();
        let keys: Vec<u64> = (0..2000).map(crate::rng::splitmix64).collect();
        let before: Vec<Option<u32>> = keys.iter().map(|&k| r.owner(k)).collect();
        r.crash(2).unwrap();
        assert!(keys.iter().all(|&k| r.owner(k) != Some(2)));
        r.revive(2).unwrap();
        let after: Vec<Option<u32>> = keys.iter().map(|&k| r.owner(k)).collect();
        assert_eq!(before, after);
    }
}
