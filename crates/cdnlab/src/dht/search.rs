//! Finding a replica of a file among indices 1..=K: random binary search (RBS) and the variants
//! it is compared with, and the smallest unused index for replication. Each takes `present(i)`,
//! one probe of index i (a DHT lookup of h_i(f) and a question to its owner), and counts probes.

use crate::rng::Rng;
use rand::RngExt;

/// How a request looks for a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// hi := K; repeat: i uniform in [1, hi]; hit -> serve; miss -> hi := i - 1.
    Rbs,
    /// Binary search for the highest used index n (assuming a prefix), then a uniform pick in
    /// [1, n].
    BinaryThenPick,
    /// Knows n_f: a uniform pick in [1, n_f] (one probe).
    Oracle,
}

impl Strategy {
    /// Every strategy, in the order of the comparison.
    pub const ALL: [Strategy; 3] = [Strategy::Rbs, Strategy::BinaryThenPick, Strategy::Oracle];
}

/// The outcome of one lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    /// The index served from, or None (every probe missed).
    pub served: Option<u32>,
    pub probes: u32,
}

/// Random binary search over 1..=k.
#[inline]
pub fn rbs(k: u32, rng: &mut Rng, mut present: impl FnMut(u32) -> bool) -> Lookup {
    let mut hi = k;
    let mut probes = 0;
    while hi > 0 {
        let i = rng.random_range(1..=hi);
        probes += 1;
        if present(i) {
            return Lookup {
                served: Some(i),
                probes,
            };
        }
        hi = i - 1;
    }
    Lookup {
        served: None,
        probes,
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
    let mut probes = 0;
    let mut used = from;
    let mut step = 1u32;
    let unused = loop {
        let i = from.saturating_add(step).min(k);
        if i <= used {
            return (None, probes);
        }
        probes += 1;
        if !present(i) {
            break i;
        }
        used = i;
        if i == k {
            return (None, probes);
        }
        step = step.saturating_mul(2);
    };
    // used is used, unused is unused: the boundary lies in (used, unused].
    let (mut lo, mut hi) = (used, unused);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        probes += 1;
        if present(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (Some(hi), probes)
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
}
