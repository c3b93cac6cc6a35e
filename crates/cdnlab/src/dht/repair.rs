//! Random gap removal (RGR) and its neighbour-check variant: which index a replica probes in a
//! round, and one round over a file's replicas. Written once and used by the simulator
//! (`sim::multihash`), the single-gap trials of the `rbs` experiment and the live DHT edges.
//!
//! Spec: every period each replica i > 1 probes one uniform index j in [1, i - 1] and refills
//! it if missing; a single gap g among n replicas survives a round with probability
//! (g - 1) / (n - 1) ([`super::analysis::rgr_mean_rounds`]).
//!
//! Rules: MH-R8 of docs/spec/multihash.md.

use crate::rng::Rng;
use rand::RngExt;

/// Which index a replica probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Uniform in [1, i - 1] (the paper's random gap removal).
    Random,
    /// i - 1 (the neighbour check).
    Neighbour,
}

/// The index replica `i` (at least 2) probes this round.
#[inline]
pub fn target(probe: Probe, i: u32, rng: &mut Rng) -> u32 {
    debug_assert!(i >= 2, "index 1 has nothing below it");
    match probe {
        Probe::Random => rng.random_range(1..i),
        Probe::Neighbour => i - 1,
    }
}

/// One round of random gap removal over one file's replicas `held` (ascending), one probe at a
/// time, for the simulator's synchronous probes ([`round`]) and the live edges' HTTP probes:
/// each held index i > 1 probes its [`target`]; the missing indices found are to be refilled.
#[derive(Debug, Clone)]
pub struct Round<'a> {
    held: &'a [u32],
    probe: Probe,
    next: usize,
    pending: u32,
    missing: Vec<u32>,
}

impl<'a> Round<'a> {
    pub fn new(held: &'a [u32], probe: Probe) -> Self {
        Round {
            held,
            probe,
            next: 0,
            pending: 0,
            missing: Vec::new(),
        }
    }

    /// The index to probe next (drawn from `rng`), or None when every replica has probed.
    pub fn next(&mut self, rng: &mut Rng) -> Option<u32> {
        while let Some(&i) = self.held.get(self.next) {
            self.next += 1;
            if i > 1 {
                self.pending = target(self.probe, i, rng);
                return Some(self.pending);
            }
        }
        None
    }

    /// Whether the index of the last [`Round::next`] is used.
    pub fn answer(&mut self, present: bool) {
        if !present {
            self.missing.push(self.pending);
        }
    }

    /// The missing indices found, sorted and without repeats.
    pub fn missing(mut self) -> Vec<u32> {
        self.missing.sort_unstable();
        self.missing.dedup();
        self.missing
    }
}

/// One round over a file whose replicas hold `held` (ascending) against the state at the
/// round's start (`present`), driving [`Round`]. Appends the missing indices found to
/// `missing`, sorted and without repeats, and returns the probes made.
pub fn round(
    held: &[u32],
    probe: Probe,
    rng: &mut Rng,
    mut present: impl FnMut(u32) -> bool,
    missing: &mut Vec<u32>,
) -> u64 {
    let mut r = Round::new(held, probe);
    let mut probes = 0;
    while let Some(j) = r.next(rng) {
        probes += 1;
        r.answer(present(j));
    }
    missing.extend(r.missing());
    probes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dht::analysis;
    use crate::rng::from_seed;

    #[test]
    fn targets_stay_below() {
        let mut rng = from_seed(3);
        for i in 2..50 {
            for _ in 0..20 {
                let j = target(Probe::Random, i, &mut rng);
                assert!((1..i).contains(&j));
            }
            assert_eq!(target(Probe::Neighbour, i, &mut rng), i - 1);
        }
    }

    #[test]
    fn a_round_reports_each_missing_index_once() {
        let mut rng = from_seed(1);
        let held: Vec<u32> = (1..=40).filter(|&i| i != 2 && i != 5).collect();
        let mut missing = vec![99];
        let probes = round(
            &held,
            Probe::Neighbour,
            &mut rng,
            |j| j != 2 && j != 5,
            &mut missing,
        );
        assert_eq!(probes, 37); // every held index above 1
        assert_eq!(missing, vec![99, 2, 5]); // 3 probes 2 and 6 probes 5, both absent
        missing.clear();
        round(&held, Probe::Neighbour, &mut rng, |_| false, &mut missing);
        let mut want: Vec<u32> = held.iter().filter(|&&i| i > 1).map(|i| i - 1).collect();
        want.dedup();
        assert_eq!(missing, want);
    }

    /// A single gap g among n replicas is found after (n - 1) / (n - g) rounds on average
    /// (geometric, so the standard error is known).
    #[test]
    fn single_gap_rounds_match_the_formula() {
        let mut rng = from_seed(11);
        for (n, g) in [(8u32, 1u32), (8, 4), (16, 15), (32, 2)] {
            let held: Vec<u32> = (1..=n).filter(|&i| i != g).collect();
            let trials = 20_000;
            let mut total = 0u64;
            let mut missing = Vec::new();
            for _ in 0..trials {
                let mut t = 0;
                loop {
                    t += 1;
                    missing.clear();
                    round(&held, Probe::Random, &mut rng, |j| j != g, &mut missing);
                    if !missing.is_empty() {
                        break;
                    }
                }
                total += t;
            }
            let p = f64::from(n - g) / f64::from(n - 1);
            let se = ((1.0 - p) / (p * p) / f64::from(trials)).sqrt();
            let mean = total as f64 / f64::from(trials);
            assert!(
                (mean - analysis::rgr_mean_rounds(n, g)).abs() <= 4.0 * se + 1e-12,
                "n {n} g {g}: {mean}"
            );
        }
    }
}
