//! The end of a counting window, driven from the store (MH-R4 to MH-R7), and the exact formulas
//! the run checks its counts against (probe moments, serving below gaps, failures).

use super::*;

/// Scratch vectors of [`window_end`], reused across files (no allocation per file and
/// window).
#[derive(Debug, Default)]
pub struct Scratch {
    lived: Vec<(u32, u32)>,
    indices: Vec<u32>,
}

/// What [`window_end`] did to one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowEndOutcome {
    /// Messages of replication (search probes and CREATE_IF_ABSENT), and the same with each
    /// search's closed form where the file is a prefix (X6's reference).
    pub messages: u64,
    pub formula: u64,
    /// Replicas created, attempts refused as existing, replicas that left.
    pub created: u64,
    pub refused: u64,
    pub left: u64,
}

/// The end of a window for file `f`, from its replicas' counts in `store`, by the window-end
/// rule of `dht::replication` that the live edges run too: first every overloaded replica's
/// search and growth against the window's state (concurrent attempts, applied one after
/// another at their arbiters), then, with `shrink`, the leave decisions of the others against
/// the state after those creations (decided concurrently, then applied). Counts are reset.
/// Replicas created here take no decision until they have lived through a window.
pub fn window_end(
    store: &mut Store,
    ring: &Ring,
    rules: Rules,
    shrink: bool,
    f: u32,
    scratch: &mut Scratch,
) -> WindowEndOutcome {
    let key = file_key(u64::from(f));
    let mut out = WindowEndOutcome::default();
    let Scratch { lived, indices } = scratch;
    lived.clear();
    lived.extend(store.replicas(f).iter().map(|r| (r.index, r.count)));
    for phase in Phase::ORDER {
        if phase == Phase::Shrink && !shrink {
            continue;
        }
        // Every replica of this phase decides first; what they decided is done after.
        indices.clear();
        for &(i, c) in lived.iter() {
            let end = WindowEnd::new(rules, i, f64::from(c));
            if !phase.decides(&end) {
                continue;
            }
            let (action, probes) = end.run(|j| store.probe(ring, key, f, j).is_some());
            match phase {
                Phase::Grow => {
                    out.messages += u64::from(probes);
                    let prefix = store.gaps(f) == 0;
                    out.formula += u64::from(
                        analysis::unused_search_probes(i, store.top(f), rules.k)
                            .filter(|_| prefix)
                            .unwrap_or(probes),
                    );
                    if let Action::Create(range) = action {
                        indices.extend(range);
                    }
                }
                Phase::Shrink => {
                    if action == Action::Leave {
                        indices.push(i);
                    }
                }
            }
        }
        for &t in indices.iter() {
            match phase {
                Phase::Grow => {
                    out.messages += 1;
                    out.formula += 1;
                    if store.create_if_absent(ring, f, t) {
                        out.created += 1;
                    } else {
                        out.refused += 1;
                    }
                }
                Phase::Shrink => {
                    store.remove(f, t);
                    out.left += 1;
                }
            }
        }
    }
    store.reset_counts(f);
    out
}

/// RBS's probe mean and variance with the prefix 1..=n used, for n in 0..=k (no replica at
/// all probes like n = 1: every index down to 1, then fail): 1 + sum over j in (n, k] of 1/j
/// and of 1/j - 1/j^2, summed from the top.
pub(super) fn prefix_moments(k: u32) -> Vec<(f64, f64)> {
    let mut t = vec![(1.0, 0.0); k as usize + 1];
    for n in (1..k).rev() {
        let p = 1.0 / f64::from(n + 1);
        let (m, v) = t[n as usize + 1];
        t[n as usize] = (m + p, v + p - p * p);
    }
    t[0] = t[1.min(k as usize)];
    t
}

/// The load skew below gaps in the window after a crash (before any repair): over the files
/// with a gap, the requests their replicas below the lowest gap served, what the exact
/// recursion expects of the requests served, and what a uniform pick over the surviving
/// replicas would give. Counts are the window's per-replica counts.
pub(super) fn below_gaps(store: &Store) -> (f64, f64, f64) {
    let (mut served_below, mut expected, mut uniform) = (0.0, 0.0, 0.0);
    for f in 0..store.files() as u32 {
        let reps = store.replicas(f);
        if store.gaps(f) == 0 || reps.is_empty() {
            continue;
        }
        let top = store.top(f) as usize;
        let mut used = vec![false; top];
        reps.iter().for_each(|r| used[r.index as usize - 1] = true);
        let gap = used.iter().position(|u| !u).expect("a gap") + 1; // lowest missing index
        let served: f64 = reps.iter().map(|r| f64::from(r.count)).sum();
        if served == 0.0 {
            continue;
        }
        let dist = analysis::serve_distribution(&used);
        let ok = 1.0 - dist[0];
        let below = reps.iter().filter(|r| (r.index as usize) < gap);
        served_below += below.clone().map(|r| f64::from(r.count)).sum::<f64>();
        expected += served * (1..gap).map(|j| dist[j]).sum::<f64>() / ok;
        uniform += served * below.count() as f64 / reps.len() as f64;
    }
    (served_below, expected, uniform)
}

/// Failure probability of a request for a file with these used indices, by the recursion.
pub(super) fn fail_probability(used_top: u32, indices: &[u32]) -> f64 {
    if indices.is_empty() {
        return 1.0;
    }
    let mut used = vec![false; used_top as usize];
    for &i in indices {
        used[i as usize - 1] = true;
    }
    analysis::serve_distribution(&used)[0]
}
