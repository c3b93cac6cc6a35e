//! Assignment of users to candidate servers within server capacities: a bipartite b-matching by
//! augmenting paths (Kuhn's algorithm with capacities). It finds a maximum assignment, so an
//! optimal state (every user on a candidate, no server over capacity) exists exactly when it
//! assigns everyone.
//!
//! Rules: GWTW-R8 (the optimum, when one exists) of docs/spec/gwtw.md.

use std::collections::VecDeque;

/// A maximum assignment: `assigned[u]` is user u's server, or None if it could not be placed.
/// `candidates[u]` lists user u's servers; `capacity[s]` how many users server s takes.
pub fn assign(candidates: &[Vec<u32>], capacity: &[u32]) -> Vec<Option<u32>> {
    search(candidates, capacity, true)
}

/// [`assign`], with or without skipping the servers of failed searches (without: the plain
/// algorithm, kept to test that skipping changes nothing).
fn search(candidates: &[Vec<u32>], capacity: &[u32], skip_dead: bool) -> Vec<Option<u32>> {
    let m = candidates.len();
    let n = capacity.len();
    let mut assigned: Vec<Option<u32>> = vec![None; m];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
    // Greedy first: most users find a free candidate directly.
    for (u, cands) in candidates.iter().enumerate() {
        if let Some(&s) = cands
            .iter()
            .find(|&&s| (members[s as usize].len() as u32) < capacity[s as usize])
        {
            members[s as usize].push(u as u32);
            assigned[u] = Some(s);
        }
    }
    // Then one breadth-first augmenting-path search per unplaced user. A search that fails
    // has reached a closed set of full servers (every member's candidates are in it), and no
    // later augmentation can enter a closed set; those servers are skipped from then on, which
    // changes no path found (skipped servers only ever lead to each other) but keeps a run
    // above the threshold from searching the same giant component once per unplaced user.
    let mut dead = vec![false; n];
    let mut visited: Vec<u32> = Vec::new();
    let mut seen_server = vec![u32::MAX; n];
    let mut parent: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX); m]; // (previous user, server)
    let mut queue = VecDeque::new();
    for start in 0..m {
        if assigned[start].is_some() {
            continue;
        }
        let stamp = start as u32;
        queue.clear();
        queue.push_back(start as u32);
        parent[start] = (u32::MAX, u32::MAX);
        visited.clear();
        let mut end: Option<(u32, u32)> = None; // (user, free server)
        'bfs: while let Some(u) = queue.pop_front() {
            for &s in &candidates[u as usize] {
                if seen_server[s as usize] == stamp || dead[s as usize] {
                    continue;
                }
                seen_server[s as usize] = stamp;
                visited.push(s);
                if (members[s as usize].len() as u32) < capacity[s as usize] {
                    end = Some((u, s));
                    break 'bfs;
                }
                for &w in &members[s as usize] {
                    parent[w as usize] = (u, s);
                    queue.push_back(w);
                }
            }
        }
        let Some((mut u, mut s)) = end else {
            if skip_dead {
                visited.iter().for_each(|&s| dead[s as usize] = true);
            }
            continue;
        };
        // Augment: u takes s; each user up the path moves to the server its parent left it.
        loop {
            let old = assigned[u as usize];
            if let Some(o) = old {
                let m = &mut members[o as usize];
                let i = m.iter().position(|&x| x == u).expect("member");
                m.swap_remove(i);
            }
            members[s as usize].push(u);
            assigned[u as usize] = Some(s);
            let (pu, ps) = parent[u as usize];
            if pu == u32::MAX {
                break;
            }
            debug_assert_eq!(old, Some(ps));
            u = pu;
            s = ps;
        }
    }
    assigned
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The largest number of users placeable, by trying every choice (tiny instances only).
    fn brute_force(candidates: &[Vec<u32>], capacity: &[u32]) -> usize {
        fn go(u: usize, c: &[Vec<u32>], cap: &mut [u32]) -> usize {
            if u == c.len() {
                return 0;
            }
            let mut best = go(u + 1, c, cap); // leave u out
            for &s in &c[u] {
                if cap[s as usize] > 0 {
                    cap[s as usize] -= 1;
                    best = best.max(1 + go(u + 1, c, cap));
                    cap[s as usize] += 1;
                }
            }
            best
        }
        go(0, candidates, &mut capacity.to_vec())
    }

    fn check(candidates: &[Vec<u32>], capacity: &[u32]) -> Result<(), TestCaseError> {
        let a = assign(candidates, capacity);
        let mut load = vec![0u32; capacity.len()];
        for (u, s) in a.iter().enumerate() {
            if let Some(s) = s {
                prop_assert!(candidates[u].contains(s));
                load[*s as usize] += 1;
            }
        }
        prop_assert!(load.iter().zip(capacity).all(|(l, c)| l <= c));
        let placed = a.iter().filter(|s| s.is_some()).count();
        prop_assert_eq!(placed, brute_force(candidates, capacity));
        Ok(())
    }

    proptest! {
        /// Against exhaustive search: the assignment is valid and as large as possible.
        #[test]
        fn maximum_against_brute_force(
            n in 1usize..5,
            cap in 0u32..3,
            users in proptest::collection::vec(proptest::collection::vec(0u32..5, 1..3), 0..7),
        ) {
            let candidates: Vec<Vec<u32>> = users.into_iter().map(|mut c| {
                c.iter_mut().for_each(|s| *s %= n as u32);
                c.sort_unstable();
                c.dedup();
                c
            }).collect();
            check(&candidates, &vec![cap; n])?;
        }
    }

    proptest! {
        /// Skipping the servers of failed searches gives the very same assignment as the plain
        /// search, on instances around the orientability thresholds (where searches fail).
        #[test]
        fn skipping_dead_servers_changes_nothing(
            seed in 0u64..1_000_000,
            k in 2u32..4,
            cap in 1u32..4,
            load in 0.6f64..1.3,
        ) {
            let mut rng = crate::rng::from_seed(seed);
            let n = 300u32;
            let m = (load * f64::from(cap * n)) as usize;
            let candidates: Vec<Vec<u32>> = (0..m)
                .map(|_| crate::sim::gwtw::draw_candidates(n, k, &mut rng))
                .collect();
            let capacity = vec![cap; n as usize];
            prop_assert_eq!(search(&candidates, &capacity, true), search(&candidates, &capacity, false));
        }
    }

    #[test]
    fn greedy_alone_would_fail_here() {
        // User 0 grabs server 0 greedily; user 1 can only use server 0: an augmenting path moves
        // user 0 to server 1.
        let a = assign(&[vec![0, 1], vec![0]], &[1, 1]);
        assert_eq!(a, vec![Some(1), Some(0)]);
    }
}
