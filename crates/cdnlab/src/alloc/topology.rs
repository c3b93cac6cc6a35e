//! The streaming topology: metros joined by links, hop costs between them, the spec's reference
//! instance (invented for reproducibility, as the spec says) and random instances. Used by the
//! simulator (`sim::transport::stream`), the live steering server and its demo.
//!
//! Rules: TP-R1 of docs/spec/transport.md.

use crate::rng::Rng;
use rand::RngExt;
use std::collections::VecDeque;

/// Metros of the reference topology.
pub const METROS: [&str; 8] = ["SEA", "SFO", "LAX", "DEN", "CHI", "DAL", "ATL", "NYC"];
/// Its links (indices into [`METROS`]).
pub const LINKS: [(usize, usize); 12] = [
    (0, 1),
    (0, 3),
    (0, 4),
    (1, 2),
    (1, 3),
    (2, 5),
    (3, 4),
    (3, 5),
    (4, 7),
    (4, 6),
    (5, 6),
    (6, 7),
];
/// Where the metros are, (longitude, latitude) in degrees: the cities they are named after, so
/// that the reference instance is also a [`crate::topology::Topology`] (for the live steering
/// server and the maps); its costs stay hop counts (TP-R1).
pub const POSITIONS: [[f64; 2]; 8] = [
    [-122.33, 47.61],
    [-122.42, 37.77],
    [-118.24, 34.05],
    [-104.99, 39.74],
    [-87.63, 41.88],
    [-96.80, 32.78],
    [-84.39, 33.75],
    [-74.01, 40.71],
];

/// The reference metros and links as a network (no demands: the profiles are chosen per run).
pub fn reference_network() -> crate::topology::Topology {
    let mut b = crate::topology::Builder::new();
    b.name("reference");
    for (m, p) in METROS.iter().zip(POSITIONS) {
        b.node(m, m, Some(p), 0).expect("distinct metros");
    }
    for &(a, c) in &LINKS {
        b.link(
            crate::topology::RawLink {
                a: METROS[a].into(),
                b: METROS[c].into(),
                ..Default::default()
            },
            0,
        )
        .expect("valid links");
    }
    b.finish(crate::topology::ReadOptions::default())
        .expect("the reference network")
}

/// Server capacities in concurrent streams (total 800).
pub const CAPACITY: [i64; 8] = [80, 120, 100, 60, 120, 80, 80, 160];
/// Demand profiles (total 800): R1 moderate mismatch, R15 stronger.
pub const R1: [i64; 8] = [48, 80, 128, 32, 112, 80, 96, 224];
pub const R15: [i64; 8] = [36, 60, 152, 24, 104, 72, 104, 248];

/// Hop counts between `n` metros joined by `links` (breadth-first search from each).
pub fn hops(n: usize, links: &[(usize, usize)]) -> Vec<Vec<i64>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in links {
        adj[a].push(b);
        adj[b].push(a);
    }
    (0..n)
        .map(|s| {
            let mut row = vec![i64::MAX; n];
            row[s] = 0;
            let mut q = VecDeque::from([s]);
            while let Some(u) = q.pop_front() {
                for &v in &adj[u] {
                    if row[v] == i64::MAX {
                        row[v] = row[u] + 1;
                        q.push_back(v);
                    }
                }
            }
            row
        })
        .collect()
}

/// A random instance of `n` metros: a ring plus n / 2 random chords (connected, average degree
/// 3), capacities uniform in 40..=160 streams, and demands that are the capacities of a random
/// permutation of the metros (the same total, placed where the capacity is not).
pub fn random_instance(n: usize, rng: &mut Rng) -> (Vec<Vec<i64>>, Vec<i64>, Vec<i64>) {
    let mut links: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    for _ in 0..n / 2 {
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        if a != b {
            links.push((a, b));
        }
    }
    let capacity: Vec<i64> = (0..n).map(|_| rng.random_range(40..=160)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let demand = order.iter().map(|&j| capacity[j]).collect();
    (hops(n, &links), capacity, demand)
}

/// The spec's shifted demand (from R1).
pub const SHIFTED: [i64; 8] = [80, 128, 160, 32, 96, 64, 80, 160];

#[cfg(test)]
mod tests {
    use super::*;

    /// The network form of the reference instance has the same hops.
    #[test]
    fn the_reference_network_has_the_reference_hops() {
        let t = reference_network();
        let want = hops(8, &LINKS);
        assert_eq!(t.costs(crate::topology::Cost::Hops), want);
        // Seattle to New York over the links: at least the great circle (3,866 km).
        assert!(t.distances()[0][7] > 3_800.0);
    }
}
