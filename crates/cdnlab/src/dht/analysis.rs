//! The spec's formulas for random binary search and random gap removal, computed exactly, for
//! tests and for the claims' reference curves.

/// H_n = 1 + 1/2 + ... + 1/n (H_0 = 0).
pub fn harmonic(n: u32) -> f64 {
    (1..=n).map(|j| 1.0 / f64::from(j)).sum()
}

/// E\[probes\] of RBS over 1..=k with the prefix 1..=n used (k >= n >= 1): 1 + H_k - H_n. Index
/// j in (n, k] is probed with probability exactly 1/j.
pub fn expected_probes(k: u32, n: u32) -> f64 {
    1.0 + (n + 1..=k).map(|j| 1.0 / f64::from(j)).sum::<f64>()
}

/// Var\[probes\] of RBS with the prefix 1..=n used: sum over j in (n, k] of 1/j - 1/j^2 (the
/// probes of those indices are independent Bernoulli(1/j)).
pub fn probe_variance(k: u32, n: u32) -> f64 {
    (n + 1..=k)
        .map(|j| {
            let p = 1.0 / f64::from(j);
            p - p * p
        })
        .sum()
}

/// Fourth cumulant of the RBS probe count with the prefix 1..=n used: the sum of independent
/// Bernoulli(1/j) cumulants p(1 - p)(1 - 6p(1 - p)) over j in (n, k]. With the variance it gives
/// the standard error of a sample variance: Var[s^2] ~ (kappa_4 + 2 sigma^4) / N.
pub fn probe_fourth_cumulant(k: u32, n: u32) -> f64 {
    (n + 1..=k)
        .map(|j| {
            let p = 1.0 / f64::from(j);
            let v = p * (1.0 - p);
            v * (1.0 - 6.0 * v)
        })
        .sum()
}

/// Exact serve distribution of RBS when `used[i - 1]` says whether index i (1..=k) is present:
/// element j (1..=k) is P(serve from j), element 0 is P(fail). The recursion
/// P_hi(j) = (1/hi) [1{j <= hi, j used} + sum over unused i <= hi of P_{i-1}(j)], P_0 = fail.
pub fn serve_distribution(used: &[bool]) -> Vec<f64> {
    let k = used.len();
    // p[hi] is the distribution starting from hi; sum accumulates, over unused i <= hi,
    // the distributions p[i - 1].
    let mut prev = vec![0.0; k + 1];
    prev[0] = 1.0; // P_0: fail for sure
    let mut sum = vec![0.0; k + 1];
    for hi in 1..=k {
        if !used[hi - 1] {
            sum.iter_mut().zip(&prev).for_each(|(s, p)| *s += p);
        }
        let mut cur: Vec<f64> = sum.iter().map(|s| s / hi as f64).collect();
        for j in 1..=hi {
            if used[j - 1] {
                cur[j] += 1.0 / hi as f64;
            }
        }
        prev = cur;
    }
    prev
}

/// Expected probes of RBS for any set of used indices: E_hi = 1 + (1/hi) sum over unused
/// i <= hi of E_{i-1}, E_0 = 0.
pub fn expected_probes_with(used: &[bool]) -> f64 {
    let mut e = 0.0; // E_hi
    let mut acc = 0.0; // sum over unused i <= hi of E_{i-1}
    for hi in 1..=used.len() {
        if !used[hi - 1] {
            acc += e;
        }
        e = 1.0 + acc / hi as f64;
    }
    e
}

/// Mean and variance of RBS's probe count for any set of used indices, by the recursion of
/// [`expected_probes_with`] on the first two moments: a request from hi picks i uniform in
/// 1..=hi; a used i ends it after one probe, an unused one goes on from i - 1, so
/// S_hi = E[P_hi^2] = 1 + (1/hi) sum over unused i <= hi of (2 E_{i-1} + S_{i-1}).
pub fn probe_moments_with(used: &[bool]) -> (f64, f64) {
    let (mut e, mut s) = (0.0, 0.0); // E_hi, S_hi
    let (mut acc_e, mut acc_s) = (0.0, 0.0);
    for hi in 1..=used.len() {
        if !used[hi - 1] {
            acc_e += e;
            acc_s += 2.0 * e + s;
        }
        e = 1.0 + acc_e / hi as f64;
        s = 1.0 + acc_s / hi as f64;
    }
    (e, (s - e * e).max(0.0))
}

/// Probes of the gallop-then-bisect search for the smallest unused index, started by replica
/// `from` of a file whose used indices are the prefix 1..=n (1 <= from <= n), when no probe
/// reaches k: the gallop probes from + 1, from + 2, ..., from + 2^s, of which the s with
/// 2^j <= n - from are used, then bisects an interval of 2^(s-1) in s - 1 probes: 2s probes,
/// or 1 when from = n. None when the gallop would reach past k (the search is capped there).
pub fn unused_search_probes(from: u32, n: u32, k: u32) -> Option<u32> {
    if from == 0 || from > n {
        return None;
    }
    let d = n - from;
    let s = if d == 0 { 0 } else { d.ilog2() + 1 };
    let reach = u64::from(from) + (1u64 << s);
    (reach <= u64::from(k)).then_some(if s == 0 { 1 } else { 2 * s })
}

/// Upper bounds on a file's replica count under a sustained demand of `lambda_w` requests per
/// window, with overload at more than `threshold` requests per replica per window (c_high W),
/// for doubling and jump growth; `alpha` is the chance, over every window and run checked,
/// that a bound is wrongly exceeded (union bound). Each replica of n sees Poisson(lambda_w / n)
/// requests (RBS picks uniformly over the prefix). From n* on, the smallest n at which some
/// replica is overloaded with probability at most alpha, growth stops; below it:
/// - doubling goes from n to 2n, so the count stays at most 2 (n* - 1);
/// - jump goes to ceil(c n / threshold) for the busiest replica's count c, at most its
///   (1 - alpha) quantile q_n of the maximum of n such counts: max over n < n* of that.
///
/// Returns (n*, doubling's bound, jump's bound).
pub fn growth_bounds(lambda_w: f64, threshold: f64, alpha: f64) -> (u32, u32, u32) {
    use crate::stats::poisson_cdf;
    // P[max of n Poisson(mu) <= q] = cdf^n.
    let quiet = |n: u32| poisson_cdf(lambda_w / f64::from(n), threshold.floor() as u64);
    let mut n_star = 1;
    while 1.0 - quiet(n_star).powf(f64::from(n_star)) > alpha {
        n_star += 1;
    }
    let mut jump = 0;
    for n in 1..n_star {
        let mu = lambda_w / f64::from(n);
        // The (1 - alpha) quantile of the maximum: the smallest q with cdf(q)^n >= 1 - alpha,
        // one pass over the pmf in log space.
        let want = (1.0 - alpha).powf(1.0 / f64::from(n));
        let (ln_mu, mut log_term, mut cdf, mut q) = (mu.ln(), -mu, (-mu).exp(), 0u64);
        while cdf < want && q < 1 << 40 {
            q += 1;
            log_term += ln_mu - (q as f64).ln();
            cdf += log_term.exp();
        }
        jump = jump.max((q as f64 * f64::from(n) / threshold).ceil() as u32);
    }
    (n_star, 2 * (n_star - 1).max(1), jump.max(n_star))
}

/// The closed form with one gap g among 1..=n (1 <= g <= n, n >= 2): element j as in
/// [`serve_distribution`] for j <= n.
pub fn single_gap(n: u32, g: u32) -> Vec<f64> {
    let nf = f64::from(n);
    let mut p = vec![0.0; n as usize + 1];
    if g == 1 {
        p[0] = 1.0 / nf;
    }
    for j in 1..=n {
        p[j as usize] = if j == g {
            0.0
        } else if j < g {
            (1.0 + 1.0 / f64::from(g - 1)) / nf
        } else {
            1.0 / nf
        };
    }
    p
}

/// Mean rounds of random gap removal until a single gap g among n replicas is filled:
/// (n - 1) / (n - g); a round leaves it with probability (g - 1) / (n - 1).
pub fn rgr_mean_rounds(n: u32, g: u32) -> f64 {
    f64::from(n - 1) / f64::from(n - g)
}

/// Steady-state replica count of a file of request rate `lambda` with per-replica capacity
/// `c_high`: max(1, ceil(lambda / c_high)).
pub fn steady_replicas(lambda: f64, c_high: f64) -> u32 {
    ((lambda / c_high).ceil() as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bernoulli(1/2) has fourth cumulant -1/8; Bernoulli(1/3): (2/9)(1 - 4/3) = -2/27; and
    /// the cumulants of independent terms add.
    #[test]
    fn fourth_cumulant_of_the_probe_count() {
        assert!((probe_fourth_cumulant(2, 1) + 0.125).abs() < 1e-15);
        assert!((probe_fourth_cumulant(3, 2) + 2.0 / 27.0).abs() < 1e-15);
        assert!((probe_fourth_cumulant(3, 1) + 0.125 + 2.0 / 27.0).abs() < 1e-15);
        assert_eq!(probe_fourth_cumulant(5, 5), 0.0);
    }

    #[test]
    fn harmonic_numbers() {
        assert_eq!(harmonic(0), 0.0);
        assert!((harmonic(4) - 25.0 / 12.0).abs() < 1e-12);
        assert!((expected_probes(4, 1) - (1.0 + 25.0 / 12.0 - 1.0)).abs() < 1e-12);
        assert_eq!(expected_probes(7, 7), 1.0);
        assert_eq!(probe_variance(7, 7), 0.0);
    }

    /// With a prefix the recursion gives the uniform distribution and the harmonic probes.
    #[test]
    fn recursion_reduces_to_the_prefix_case() {
        for (k, n) in [(16usize, 1usize), (16, 5), (100, 100), (1024, 37)] {
            let used: Vec<bool> = (1..=k).map(|i| i <= n).collect();
            let p = serve_distribution(&used);
            assert!(p[0].abs() < 1e-12);
            for (j, &pj) in p.iter().enumerate().skip(1) {
                let e = if j <= n { 1.0 / n as f64 } else { 0.0 };
                assert!((pj - e).abs() < 1e-12, "k {k} n {n} j {j}: {pj}");
            }
            let e = expected_probes_with(&used);
            assert!((e - expected_probes(k as u32, n as u32)).abs() < 1e-9);
        }
    }

    /// The single-gap closed form is the recursion's answer, for every gap position.
    #[test]
    fn single_gap_matches_the_recursion() {
        for k in [12usize, 40] {
            for n in 2..=12usize {
                for g in 1..=n {
                    let used: Vec<bool> = (1..=k).map(|i| i <= n && i != g).collect();
                    let p = serve_distribution(&used);
                    let c = single_gap(n as u32, g as u32);
                    for j in 0..=n {
                        assert!(
                            (p[j] - c[j]).abs() < 1e-12,
                            "n {n} g {g} j {j}: {} vs {}",
                            p[j],
                            c[j]
                        );
                    }
                    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn rgr_and_steady_state() {
        assert_eq!(rgr_mean_rounds(10, 1), 1.0);
        assert!((rgr_mean_rounds(10, 9) - 9.0).abs() < 1e-12);
        assert_eq!(steady_replicas(0.1, 1.0), 1);
        assert_eq!(steady_replicas(3.0, 1.0), 3);
        assert_eq!(steady_replicas(3.5, 1.0), 4);
    }

    /// The moments' recursion agrees with the prefix formulas, and with brute-force enumeration
    /// of every RBS path on a set with gaps.
    #[test]
    fn probe_moments_match_the_formulas_and_enumeration() {
        for (k, n) in [(16u32, 1u32), (16, 5), (64, 64), (100, 37)] {
            let used: Vec<bool> = (1..=k).map(|i| i <= n).collect();
            let (m, v) = probe_moments_with(&used);
            assert!((m - expected_probes(k, n)).abs() < 1e-12);
            assert!((v - probe_variance(k, n)).abs() < 1e-12, "{k} {n}: {v}");
        }
        // Enumerate: from hi, each i in 1..=hi with weight 1/hi.
        fn paths(used: &[bool], hi: usize, w: f64, probes: f64, out: &mut (f64, f64)) {
            for i in 1..=hi {
                let w = w / hi as f64;
                if used[i - 1] || i == 1 {
                    let p = probes + 1.0;
                    out.0 += w * p;
                    out.1 += w * p * p;
                } else {
                    paths(used, i - 1, w, probes + 1.0, out);
                }
            }
        }
        let used = [true, false, true, true, false, true, false, false];
        let mut o = (0.0, 0.0);
        paths(&used, used.len(), 1.0, 0.0, &mut o);
        let (m, v) = probe_moments_with(&used);
        assert!((m - o.0).abs() < 1e-12 && (v - (o.1 - o.0 * o.0)).abs() < 1e-12);
        assert_eq!(probe_moments_with(&[false]), (1.0, 0.0)); // one probe, then fail
    }

    /// The gallop-then-bisect count against the search itself on every start of small prefixes.
    #[test]
    fn unused_search_probes_match_the_search() {
        for n in 1..70u32 {
            for from in 1..=n {
                let (found, probes) =
                    super::super::search::smallest_unused_above(from, 1024, |j| j <= n);
                assert_eq!(found, Some(n + 1));
                assert_eq!(
                    unused_search_probes(from, n, 1024),
                    Some(probes),
                    "{from} {n}"
                );
            }
        }
        assert_eq!(unused_search_probes(1, 1, 1024), Some(1));
        assert_eq!(unused_search_probes(1, 2, 1024), Some(2)); // 2 used, 3 free, bisect 0
        assert_eq!(unused_search_probes(1, 6, 4), None); // the gallop is capped at k
    }

    /// The growth bounds: n* is where overload becomes rare; with a deterministic check of the
    /// pieces on a small case, and the bounds at least the steady count.
    #[test]
    fn growth_bounds_are_where_overload_stops() {
        let (lw, thr, alpha) = (12_200.0, 100.0, 1e-4);
        let (n_star, double, jump) = growth_bounds(lw, thr, alpha);
        let over =
            |n: u32| 1.0 - crate::stats::poisson_cdf(lw / f64::from(n), 100).powf(f64::from(n));
        assert!(
            over(n_star) <= alpha && over(n_star - 1) > alpha,
            "{n_star}"
        );
        let steady = steady_replicas(lw, thr);
        assert_eq!(steady, 122);
        assert!(n_star > steady && double == 2 * (n_star - 1));
        assert!(jump > steady && jump < double, "{jump} {double}");
        // A smaller alpha can only widen the bounds.
        let (n2, d2, j2) = growth_bounds(lw, thr, 1e-8);
        assert!(n2 >= n_star && d2 >= double && j2 >= jump);
    }
}
