//! Finding a replica of a file among indices 1..=K: random binary search (RBS) and the variants
//! it is compared with, and the smallest unused index for replication. Each takes `present(i)`,
//! one probe of index i (a DHT lookup of h_i(f) and a question to its owner), and counts probes.
//!
//! Rules: MH-R3 of docs/spec/multihash.md.

use crate::rng::Rng;
use rand::RngExt;

crate::registry! {
    /// How a request looks for a replica.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Strategy: "search strategy" {
        /// hi := K; repeat: i uniform in [1, hi]; hit -> serve; miss -> hi := i - 1.
        Rbs => "rbs",
        /// Binary search for the highest used index n (assuming a prefix), then a uniform pick in
        /// [1, n].
        BinaryThenPick => "binary",
        /// Knows n_f: a uniform pick in [1, n_f] (one probe).
        Oracle => "oracle",
    }
}

/// The outcome of one lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    /// The index served from, or None (every probe missed).
    pub served: Option<u32>,
    pub probes: u32,
}

/// Random binary search one probe at a time, for callers whose probes are asynchronous (the
/// live edges): [`RbsSearch::next`] names the index to probe, [`RbsSearch::missed`] reports a
/// miss. [`rbs`] is this loop with a synchronous probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RbsSearch {
    hi: u32,
    probes: u32,
}

impl RbsSearch {
    /// A search over 1..=k.
    pub fn new(k: u32) -> Self {
        RbsSearch { hi: k, probes: 0 }
    }

    /// The next index to probe (uniform in 1..=hi), or None when every index has missed.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Option<u32> {
        if self.hi == 0 {
            return None;
        }
        self.probes += 1;
        Some(rng.random_range(1..=self.hi))
    }

    /// Index `i` (the last one named) was not there: search below it.
    #[inline]
    pub fn missed(&mut self, i: u32) {
        self.hi = i - 1;
    }

    /// Probes named so far.
    pub fn probes(&self) -> u32 {
        self.probes
    }
}

/// Random binary search over 1..=k.
#[inline]
pub fn rbs(k: u32, rng: &mut Rng, mut present: impl FnMut(u32) -> bool) -> Lookup {
    let mut s = RbsSearch::new(k);
    while let Some(i) = s.next(rng) {
        if present(i) {
            return Lookup {
                served: Some(i),
                probes: s.probes,
            };
        }
        s.missed(i);
    }
    Lookup {
        served: None,
        probes: s.probes,
    }
}

/// The highest index in 1..=k for which `present` holds, by binary search, assuming the present
/// indices are a prefix (0 if none): (index, probes).
pub fn highest_used(k: u32, mut present: impl FnMut(u32) -> bool) -> (u32, u32) {
    // Invariant: lo is used (or 0), hi + 1 is unused (or k + 1).
    let (mut lo, mut hi, mut probes) = (0u32, k, 0u32);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        probes += 1;
        if present(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo, probes)
}

/// One lookup with `strategy`; `n_f` is what the oracle knows.
pub fn lookup(
    strategy: Strategy,
    k: u32,
    n_f: u32,
    rng: &mut Rng,
    mut present: impl FnMut(u32) -> bool,
) -> Lookup {
    let pick = |n: u32, probes: u32, rng: &mut Rng, present: &mut dyn FnMut(u32) -> bool| {
        if n == 0 {
            return Lookup {
                served: None,
                probes,
            };
        }
        let j = rng.random_range(1..=n);
        Lookup {
            served: present(j).then_some(j),
            probes: probes + 1,
        }
    };
    match strategy {
        Strategy::Rbs => rbs(k, rng, present),
        Strategy::BinaryThenPick => {
            let (n, probes) = highest_used(k, &mut present);
            pick(n, probes, rng, &mut present)
        }
        Strategy::Oracle => pick(n_f.min(k), 0, rng, &mut present),
    }
}

/// What an [`UnusedSearch`] wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Probe this index and report with [`UnusedSearch::answer`].
    Probe(u32),
    /// The answer: the smallest unused index found, or None if every index up to k is used.
    Done(Option<u32>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Gallop,
    /// The boundary lies in (lo, hi]: lo is used, hi unused.
    Bisect {
        lo: u32,
        hi: u32,
    },
    Finished(Option<u32>),
}

/// The search of [`smallest_unused_above`] one probe at a time, for asynchronous probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnusedSearch {
    from: u32,
    k: u32,
    used: u32,
    step: u32,
    phase: Phase,
    pending: u32,
    probes: u32,
    /// Probe from + 1, from + 2, ... one by one (a wrong model, see [`UnusedSearch::linear`]).
    linear: bool,
}

impl UnusedSearch {
    /// A search above `from` (a used index) within 1..=k.
    pub fn new(from: u32, k: u32) -> Self {
        UnusedSearch {
            from,
            k,
            used: from,
            step: 1,
            phase: Phase::Gallop,
            pending: 0,
            probes: 0,
            linear: false,
        }
    }

    /// A wrong model, not the paper's: the same search by a linear scan up from `from`, one
    /// index per probe, so it costs the distance to the unused index rather than MH-R5's
    /// 2 floor(log2(n_f - i)) + 2 (docs/claims.md, "Wrong models").
    pub fn linear(from: u32, k: u32) -> Self {
        UnusedSearch {
            linear: true,
            ..Self::new(from, k)
        }
    }

    /// The next probe, or the answer.
    pub fn step(&mut self) -> Step {
        let i = match self.phase {
            Phase::Finished(r) => return Step::Done(r),
            Phase::Gallop => {
                let i = self.from.saturating_add(self.step).min(self.k);
                if i <= self.used {
                    self.phase = Phase::Finished(None);
                    return Step::Done(None);
                }
                i
            }
            Phase::Bisect { lo, hi } => {
                if hi - lo <= 1 {
                    self.phase = Phase::Finished(Some(hi));
                    return Step::Done(Some(hi));
                }
                lo + (hi - lo) / 2
            }
        };
        self.pending = i;
        self.probes += 1;
        Step::Probe(i)
    }

    /// Whether the index of the last [`Step::Probe`] is used.
    pub fn answer(&mut self, present: bool) {
        let i = self.pending;
        self.phase = match self.phase {
            Phase::Gallop if !present && self.linear => Phase::Finished(Some(i)),
            Phase::Gallop if !present => Phase::Bisect {
                lo: self.used,
                hi: i,
            },
            Phase::Gallop => {
                self.used = i;
                if i == self.k {
                    Phase::Finished(None)
                } else {
                    self.step = if self.linear {
                        self.step.saturating_add(1)
                    } else {
                        self.step.saturating_mul(2)
                    };
                    Phase::Gallop
                }
            }
            Phase::Bisect { hi, .. } if present => Phase::Bisect { lo: i, hi },
            Phase::Bisect { lo, .. } => Phase::Bisect { lo, hi: i },
            done => done,
        };
    }

    /// Probes named so far.
    pub fn probes(&self) -> u32 {
        self.probes
    }
}

/// The smallest unused index above `from` (a used index), found by galloping up (from + 1,
/// from + 2, from + 4, ...) to an unused index, then binary search between the last used one
/// and it: (index, probes). With a prefix of used indices it is n_f + 1; with gaps below the
/// gallop's reach it may be above a gap (gaps are random gap removal's job). None if every
/// index up to `k` is used.
pub fn smallest_unused_above(
    from: u32,
    k: u32,
    mut present: impl FnMut(u32) -> bool,
) -> (Option<u32>, u32) {
    let mut s = UnusedSearch::new(from, k);
    loop {
        match s.step() {
            Step::Probe(i) => s.answer(present(i)),
            Step::Done(r) => return (r, s.probes),
        }
    }
}

/// Whether a replica that saw `count` requests in a window is overloaded (`threshold`: the
/// requests a replica takes per window, c_high x W).
#[inline]
pub fn overloaded(count: f64, threshold: f64) -> bool {
    count > threshold
}

/// Whether the top replica of a file with `replicas` replicas, having seen `count` requests in
/// a window, may delete itself: its load spread over the others would keep them below gamma x
/// threshold (hysteresis; the home copy, a file's only replica, never leaves).
#[inline]
pub fn top_may_leave(count: f64, replicas: u32, gamma: f64, threshold: f64) -> bool {
    replicas > 1 && count * f64::from(replicas) / f64::from(replicas - 1) < gamma * threshold
}

#[cfg(test)]
mod tests {
    use super::super::analysis;
    use super::*;
    use crate::stats;

    /// RBS with a prefix 1..=n: the served index is uniform (chi-square over n cells at the
    /// 1e-4 level) and the mean number of probes is 1 + H_K - H_n (within 4 standard errors from
    /// the exact variance).
    #[test]
    fn rbs_is_uniform_with_the_stated_probe_count() {
        for (k, n) in [(1024u32, 1u32), (1024, 10), (64, 64), (100, 37)] {
            let mut rng = crate::rng::stream(5, u64::from(k), u64::from(n));
            let trials = 200_000;
            let mut counts = vec![0u64; n as usize + 1];
            let mut probes = 0u64;
            for _ in 0..trials {
                let l = rbs(k, &mut rng, |i| i <= n);
                counts[l.served.unwrap() as usize] += 1;
                probes += u64::from(l.probes);
            }
            let e = vec![f64::from(trials) / f64::from(n); n as usize];
            let chi2 = stats::chi_square(&counts[1..], &e);
            let bound = stats::chi_square_1e4(n as usize - 1);
            assert!(chi2 <= bound, "k {k} n {n}: chi2 {chi2} > {bound}");
            let mean = probes as f64 / f64::from(trials);
            let expect = analysis::expected_probes(k, n);
            let se = (analysis::probe_variance(k, n) / f64::from(trials)).sqrt();
            assert!(
                (mean - expect).abs() < 4.0 * se + 1e-9,
                "k {k} n {n}: {mean} vs {expect}"
            );
        }
    }

    /// The variance of the probe count matches the formula within 5% (200000 trials; the
    /// sample variance's relative sd is below 1% here).
    #[test]
    fn rbs_probe_variance() {
        let (k, n) = (1024u32, 4u32);
        let mut rng = crate::rng::stream(6, 0, 0);
        let trials = 200_000;
        let xs: Vec<f64> = (0..trials)
            .map(|_| f64::from(rbs(k, &mut rng, |i| i <= n).probes))
            .collect();
        let mean = xs.iter().sum::<f64>() / trials as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (trials - 1) as f64;
        let expect = analysis::probe_variance(k, n);
        assert!((var / expect - 1.0).abs() < 0.05, "{var} vs {expect}");
    }

    #[test]
    fn binary_search_and_oracle() {
        let mut rng = crate::rng::stream(7, 0, 0);
        for n in [0u32, 1, 5, 1023, 1024] {
            let (h, probes) = highest_used(1024, |i| i <= n);
            assert_eq!(h, n);
            assert!(probes <= 11);
            let l = lookup(Strategy::BinaryThenPick, 1024, n, &mut rng, |i| i <= n);
            assert_eq!(l.served.is_some(), n > 0);
            let o = lookup(Strategy::Oracle, 1024, n, &mut rng, |i| i <= n);
            assert_eq!(o.probes, u32::from(n > 0));
        }
    }

    /// Against a linear scan: the smallest unused index above `from` when used indices form a
    /// prefix, for every (n, from).
    #[test]
    fn smallest_unused_by_gallop_and_binary_search() {
        for k in [1u32, 2, 7, 64, 100] {
            for n in 1..=k {
                for from in 1..=n {
                    let (u, probes) = smallest_unused_above(from, k, |i| i <= n);
                    assert_eq!(u, (n < k).then_some(n + 1), "k {k} n {n} from {from}");
                    // Gallop and binary search: O(log(n - from + 2)) probes.
                    let bound = 2 * (32 - (n - from + 2).leading_zeros()) + 2;
                    assert!(probes <= bound, "k {k} n {n} from {from}: {probes} probes");
                }
            }
        }
    }

    /// The wrong model's linear scan finds the same index, one probe per index it passes:
    /// n - from + 1 probes below k, n - from at k (nothing above k to probe).
    #[test]
    fn linear_scan_finds_the_same_index_at_the_distance() {
        for k in [1u32, 2, 7, 64] {
            for n in 1..=k {
                for from in 1..=n {
                    let mut s = UnusedSearch::linear(from, k);
                    let u = loop {
                        match s.step() {
                            Step::Probe(i) => s.answer(i <= n),
                            Step::Done(r) => break r,
                        }
                    };
                    assert_eq!(u, (n < k).then_some(n + 1), "k {k} n {n} from {from}");
                    let expected = if n < k { n - from + 1 } else { n - from };
                    assert_eq!(s.probes(), expected, "k {k} n {n} from {from}");
                }
            }
        }
    }
}
