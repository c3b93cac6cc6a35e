//! Which replica of which file is on which node. A replica (f, i) lives on the node that owned
//! h_i(f) when it was created (or handed over); a probe of (f, i) asks the node that owns h_i(f)
//! now, so a replica lost in a crash, or not handed over after a join, is a gap.
//!
//! Rules: MH-R2 and MH-R9 of docs/spec/multihash.md.

use super::hash::{file_key, position_of};
use super::ring::Ring;
use smallvec::SmallVec;

/// One replica of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    /// Its hash function index (1-based).
    pub index: u32,
    pub node: u32,
    /// Requests it served in the current window.
    pub count: u32,
}

/// Every file's replicas, sorted by index (most files have one, inline).
#[derive(Debug, Clone)]
pub struct Store {
    files: Vec<SmallVec<[Replica; 2]>>,
    /// The [`Ring::layout`] that placed every replica, if one did: on that layout a held
    /// replica's node is the owner of its position, so a probe needs no ring lookup (a
    /// multi-hash run without crashes probes several times per request).
    placed_by: Option<u64>,
}

impl Store {
    /// `files` files with their home copy (index 1) on the owner of h_1(f). Files whose
    /// position has no owner (no live node) get none.
    pub fn new(files: u32, ring: &Ring) -> Self {
        let files = (0..files)
            .map(|f| {
                let mut v = SmallVec::new();
                if let Some(node) = ring.owner(position_of(file_key(u64::from(f)), 1)) {
                    v.push(Replica {
                        index: 1,
                        node,
                        count: 0,
                    });
                }
                v
            })
            .collect();
        Store {
            files,
            placed_by: Some(ring.layout()),
        }
    }

    /// Number of files.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// The replicas of file `f`, by index.
    #[inline]
    pub fn replicas(&self, f: u32) -> &[Replica] {
        &self.files[f as usize]
    }

    /// The count of the replica in `slot` of file `f` (a position in [`Store::replicas`]).
    /// Counts are all that callers change: nodes are the store's, which [`Store::probe`]
    /// relies on.
    #[inline]
    pub fn count_mut(&mut self, f: u32, slot: usize) -> &mut u32 {
        &mut self.files[f as usize][slot].count
    }

    /// Sets every count of file `f` to 0 (a window's end).
    pub fn reset_counts(&mut self, f: u32) {
        self.files[f as usize].iter_mut().for_each(|r| r.count = 0);
    }

    /// Hints the CPU to fetch file `f`'s replica list (requests call this a few ahead).
    #[inline]
    pub fn prefetch(&self, f: u32) {
        if let Some(v) = self.files.get(f as usize) {
            crate::idmap::prefetch(v);
        }
    }

    /// Position of index `i` among file `f`'s replicas.
    #[inline]
    fn find(&self, f: u32, i: u32) -> Result<usize, usize> {
        let v = &self.files[f as usize];
        // Indices are distinct, at least 1 and sorted, so replica i can only be at i - 1 or
        // before it; it is at i - 1 exactly when indices 1..=i are all held, as replication to
        // the smallest unused index keeps them: a hot file's lookup then costs one read, not a
        // binary search over hundreds of replicas.
        match v.get((i as usize).wrapping_sub(1)) {
            Some(r) if r.index == i => Ok(i as usize - 1),
            // Beyond the top replica (random binary search probes there half the time).
            _ if v.last().is_none_or(|r| r.index < i) => Err(v.len()),
            _ => v.binary_search_by_key(&i, |r| r.index),
        }
    }

    /// Whether `node` holds replica `i` of `f` (the answer to a probe at `node`).
    #[inline]
    pub fn holds(&self, f: u32, i: u32, node: u32) -> bool {
        self.find(f, i)
            .is_ok_and(|p| self.files[f as usize][p].node == node)
    }

    /// The slot of replica `i` of `f` if `node` holds it.
    #[inline]
    pub fn slot(&self, f: u32, i: u32, node: u32) -> Option<usize> {
        self.find(f, i)
            .ok()
            .filter(|&p| self.files[f as usize][p].node == node)
    }

    /// One probe: the owner of h_i(f) now, and whether it holds the replica.
    #[inline]
    pub fn probe(&self, ring: &Ring, key: u64, f: u32, i: u32) -> Option<(u32, usize)> {
        // The file's own list first: most random-binary-search probes land above the top
        // replica (K = 1024 against a handful held), and those need no hash or ring lookup.
        let slot = self.find(f, i).ok()?;
        let held = self.files[f as usize][slot].node;
        if self.placed_by == Some(ring.layout()) {
            // Placed on this very layout: the holder owns the position.
            return Some((held, slot));
        }
        let node = ring.owner(position_of(key, i))?;
        (held == node).then_some((node, slot))
    }

    /// CREATE_IF_ABSENT(f, i), decided by the arbiter (the owner of h_i(f)): creates the
    /// replica there unless it already holds it; true if created. Concurrent attempts are
    /// applied one after another at their arbiter, so only the first creates.
    pub fn create_if_absent(&mut self, ring: &Ring, f: u32, i: u32) -> bool {
        let Some(node) = ring.owner(position_of(file_key(u64::from(f)), i)) else {
            return false;
        };
        if self.placed_by != Some(ring.layout()) {
            self.placed_by = None;
        }
        let v = &mut self.files[f as usize];
        match v.binary_search_by_key(&i, |r| r.index) {
            Ok(p) if v[p].node == node => false,
            Ok(p) => {
                // A stale copy on a node that no longer owns the position: replaced.
                v[p] = Replica {
                    index: i,
                    node,
                    count: 0,
                };
                true
            }
            Err(p) => {
                v.insert(
                    p,
                    Replica {
                        index: i,
                        node,
                        count: 0,
                    },
                );
                true
            }
        }
    }

    /// Deletes replica `i` of `f` (if any).
    pub fn remove(&mut self, f: u32, i: u32) {
        if let Ok(p) = self.find(f, i) {
            self.files[f as usize].remove(p);
        }
    }

    /// Node `n` crashed: every replica it held is lost. Returns how many.
    pub fn crash(&mut self, n: u32) -> u64 {
        let mut lost = 0;
        for v in &mut self.files {
            let before = v.len();
            v.retain(|r| r.node != n);
            lost += (before - v.len()) as u64;
        }
        lost
    }

    /// After a join: replicas whose position now belongs to another node move there (the
    /// hand-over that keeps joins from making false gaps). Returns how many moved.
    pub fn hand_over(&mut self, ring: &Ring) -> u64 {
        // With no live node nothing moves, and nothing is owned.
        self.placed_by = (ring.live() > 0).then(|| ring.layout());
        let mut moved = 0;
        for (f, v) in self.files.iter_mut().enumerate() {
            let key = file_key(f as u64);
            for r in v.iter_mut() {
                if let Some(node) = ring.owner(position_of(key, r.index))
                    && node != r.node
                {
                    r.node = node;
                    moved += 1;
                }
            }
        }
        moved
    }

    /// The highest index present for `f` (0 if none).
    #[inline]
    pub fn top(&self, f: u32) -> u32 {
        self.files[f as usize].last().map_or(0, |r| r.index)
    }

    /// Indices below the top that are missing (gaps) for `f`.
    pub fn gaps(&self, f: u32) -> u32 {
        let v = &self.files[f as usize];
        v.last().map_or(0, |r| r.index - v.len() as u32)
    }

    /// Total replicas.
    pub fn total(&self) -> u64 {
        self.files.iter().map(|v| v.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Finding replica i (read at i - 1 when indices 1..=i are held, else by binary search)
        /// agrees with a scan, for index sets with and without gaps.
        #[test]
        fn find_agrees_with_a_scan(
            held in proptest::collection::btree_set(1u32..40, 0..30),
            probes in proptest::collection::vec(0u32..45, 20),
        ) {
            let ring = Ring::new(20, 1).unwrap();
            let mut s = Store::new(3, &ring);
            for &i in &held {
                s.create_if_absent(&ring, 2, i);
            }
            if !held.contains(&1) {
                s.remove(2, 1);
            }
            for &i in &probes {
                let scan = s.replicas(2).iter().position(|r| r.index == i);
                prop_assert_eq!(s.find(2, i).ok(), scan);
            }
        }
    }

    /// One change to a ring and its store, for the probe property below.
    #[derive(Debug, Clone)]
    enum Op {
        Create(u32),
        /// A creation placed by the clone (its arbiter on a layout the store's ring lacks).
        CreateByClone(u32),
        Remove(u32),
        Crash(u32),
        Join,
        HandOver,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1u32..40).prop_map(Op::Create),
            1 => (1u32..40).prop_map(Op::CreateByClone),
            1 => (1u32..40).prop_map(Op::Remove),
            2 => (0u32..24).prop_map(Op::Crash),
            1 => Just(Op::Join),
            1 => Just(Op::HandOver),
        ]
    }

    /// Probe answers as its definition says (the owner of h_i(f) now, and the slot of replica
    /// i if that owner holds it), by a scan of every index after every change.
    fn check_probes(s: &Store, ring: &Ring) -> Result<(), TestCaseError> {
        let key = file_key(2);
        for i in 0..45 {
            let owner = ring.owner(position_of(key, i));
            let by_scan = owner.and_then(|o| {
                s.replicas(2)
                    .iter()
                    .position(|r| r.index == i && r.node == o)
                    .map(|p| (o, p))
            });
            prop_assert_eq!(s.probe(ring, key, 2, i), by_scan, "index {}", i);
        }
        Ok(())
    }

    proptest! {
        /// Probes agree with their definition through any sequence of creations, removals,
        /// crashes, joins and hand-overs: above the top replica, with replicas left on nodes
        /// that no longer own their position, with some created on a later layout than others,
        /// and on a clone of the ring that changed apart from the store's.
        #[test]
        fn probe_agrees_with_its_definition(
            held in proptest::collection::btree_set(1u32..40, 1..30),
            ops in proptest::collection::vec(op(), 0..12),
        ) {
            let mut ring = Ring::new(20, 1).unwrap();
            let mut s = Store::new(3, &ring);
            for &i in &held {
                s.create_if_absent(&ring, 2, i);
            }
            // A clone that changes on its own (twice the nodes, so about half the positions
            // change owner): the same layout identity only while the two are equal.
            let mut other = ring.clone();
            for _ in 0..20 {
                other.join();
            }
            check_probes(&s, &other)?;
            for op in &ops {
                match *op {
                    Op::Create(i) => {
                        s.create_if_absent(&ring, 2, i);
                    }
                    Op::CreateByClone(i) => {
                        s.create_if_absent(&other, 2, i);
                    }
                    Op::Remove(i) => s.remove(2, i),
                    Op::Crash(n) => {
                        if ring.is_alive(n) && ring.live() > 1 {
                            ring.crash(n).unwrap();
                            if n % 2 == 0 {
                                s.crash(n);
                            }
                        }
                    }
                    Op::Join => {
                        ring.join();
                    }
                    Op::HandOver => {
                        s.hand_over(&ring);
                    }
                }
                check_probes(&s, &ring)?;
                check_probes(&s, &other)?;
            }
        }
    }

    /// CREATE_IF_ABSENT: of several attempts at one index only the first creates; a crash
    /// makes gaps that probes see; a join with hand-over keeps every replica findable.
    #[test]
    fn create_if_absent_crash_and_hand_over() {
        let mut ring = Ring::new(50, 1).unwrap();
        let mut s = Store::new(200, &ring);
        let created = (0..5).filter(|_| s.create_if_absent(&ring, 7, 2)).count();
        assert_eq!(created, 1);
        for i in 3..=20 {
            s.create_if_absent(&ring, 7, i);
        }
        assert_eq!(s.top(7), 20);
        assert_eq!(s.gaps(7), 0);
        let key = file_key(7);
        for i in 1..=20 {
            assert!(s.probe(&ring, key, 7, i).is_some());
        }
        // Crash the holder of replica 5: a gap at 5, seen by a probe.
        let victim = s.replicas(7)[4].node;
        ring.crash(victim).unwrap();
        let lost = s.crash(victim);
        assert!(lost >= 1);
        assert!(s.probe(&ring, key, 7, 5).is_none());
        assert!(s.gaps(7) >= 1 || s.top(7) < 20);
        // Joins: without hand-over some replicas become unreachable; with it none do.
        let mut r2 = ring.clone();
        let s_before = s.clone();
        for _ in 0..20 {
            r2.join();
        }
        let reachable = |st: &Store, r: &Ring| {
            (0..200u32)
                .flat_map(|f| st.replicas(f).iter().map(move |x| (f, x.index)))
                .filter(|&(f, i)| st.probe(r, file_key(u64::from(f)), f, i).is_some())
                .count()
        };
        let total = s_before.total() as usize;
        assert!(reachable(&s_before, &r2) < total);
        let mut s2 = s_before.clone();
        assert!(s2.hand_over(&r2) > 0);
        assert_eq!(reachable(&s2, &r2), total);
    }
}
