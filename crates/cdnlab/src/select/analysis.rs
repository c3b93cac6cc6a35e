//! Balls into bins: the exact and asymptotic facts behind GWTW's claims for one random server
//! per user (k = 1), used by the reproduction's claims as the expected values.
//!
//! m users each pick one of n servers uniformly; a server takes c users at the best value.

use crate::stats::{binomial_cdf, poisson_cdf};

/// The orientability (cuckoo) threshold of lambda / c for k random candidates and capacity c:
/// below it an assignment of every user within capacities exists with high probability, above
/// it none does. The values of the spec (known ones only; None for others).
pub fn orientability_threshold(k: u32, c: u32) -> Option<f64> {
    match (k, c) {
        (2, 1) => Some(0.5),
        (3, 1) => Some(0.918),
        (4, 1) => Some(0.977),
        (2, 2) => Some(0.897),
        (2, 3) => Some(0.959),
        _ => None,
    }
}

/// Expected fraction of users that share their server with at most c - 1 others:
/// P[Binomial(m - 1, 1/n) <= c - 1] (exact).
pub fn k1_satisfied(m: u64, n: u64, c: u64) -> f64 {
    if m == 0 || c == 0 {
        return if m == 0 { 1.0 } else { 0.0 };
    }
    binomial_cdf(m - 1, 1.0 / n as f64, c - 1)
}

/// P[no server holds more than c users]: the probability that k = 1 is in the optimal state.
///
/// Poissonization: with independent Poisson(m / n) counts per server, the event given a total
/// of m has probability F_c^n P[S = m] / P[Poisson(m) = m], where F_c = P[Poisson(m/n) <= c] and
/// S is the sum of n counts truncated to at most c; P[S = m] comes from the local central limit
/// theorem (checked against an exact count and a brute force in the tests).
///
/// Below 2 x 10^6 steps it counts exactly ([`k1_max_at_most_exact`]); above, the local limit
/// theorem's relative error (O(1/n): 1.4% at n = 50) is about 0.1% or less.
pub fn k1_max_at_most(m: u64, n: u64, c: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    if m > n * c {
        return 0.0;
    }
    if m.saturating_mul(n).saturating_mul(c + 1) <= 2_000_000 {
        return k1_max_at_most_exact(m as usize, n as usize, c as usize);
    }
    k1_max_at_most_clt(m, n, c)
}

fn k1_max_at_most_clt(m: u64, n: u64, c: u64) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let mu = mf / nf;
    let fc = poisson_cdf(mu, c);
    // Mean and variance of a Poisson(mu) truncated to 0..=c.
    let (mut p, mut e1, mut e2) = ((-mu).exp(), 0.0, 0.0);
    for i in 0..=c {
        if i > 0 {
            p *= mu / i as f64;
        }
        e1 += i as f64 * p;
        e2 += (i * i) as f64 * p;
    }
    let (mean, var) = (e1 / fc, e2 / fc - (e1 / fc).powi(2));
    let (sm, sv) = (nf * mean, nf * var);
    let log_s = if sv <= 1e-12 {
        if (sm - mf).abs() < 0.5 {
            0.0
        } else {
            return 0.0;
        }
    } else {
        -0.5 * (mf - sm).powi(2) / sv - 0.5 * (std::f64::consts::TAU * sv).ln()
    };
    // ln P[Poisson(m) = m] = -m + m ln m - ln m!
    let log_pm = -mf + mf * mf.ln() - ln_factorial(m);
    (nf * fc.ln() + log_s - log_pm).exp().min(1.0)
}

/// [`k1_max_at_most`] without approximation: the Poissonization identity with the truncated
/// total's distribution by convolution over servers (n m (c + 1) steps).
pub fn k1_max_at_most_exact(m: usize, n: usize, c: usize) -> f64 {
    if m > n * c {
        return 0.0;
    }
    let mu = m as f64 / n as f64;
    let mut w = vec![0.0; c + 1];
    let mut p = (-mu).exp();
    for (i, wi) in w.iter_mut().enumerate() {
        if i > 0 {
            p *= mu / i as f64;
        }
        *wi = p;
    }
    // Normalised per server so that the mass stays at 1 (no overflow or underflow at large n);
    // the factor comes back in log space.
    let wsum: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= wsum);
    let mut dist = vec![0.0; m + 1];
    let mut next = vec![0.0; m + 1];
    dist[0] = 1.0;
    for _ in 0..n {
        next.iter_mut().for_each(|x| *x = 0.0);
        for (s, &d) in dist.iter().enumerate() {
            if d == 0.0 {
                continue;
            }
            for (j, &wj) in w.iter().enumerate() {
                if s + j <= m {
                    next[s + j] += d * wj;
                }
            }
        }
        std::mem::swap(&mut dist, &mut next);
    }
    // P[S = m, all <= c] = wsum^n dist[m]; divide by P[Poisson(m) = m].
    let log_pm = -(m as f64) + m as f64 * (m as f64).ln() - ln_factorial(m as u64);
    (n as f64 * wsum.ln() + dist[m].ln() - log_pm)
        .exp()
        .min(1.0)
}

/// Expected busiest server's load, sum over t >= 0 of P\[max > t\].
pub fn k1_expected_max(m: u64, n: u64) -> f64 {
    let mut e = 0.0;
    for t in 0..=m {
        let tail = 1.0 - k1_max_at_most(m, n, t);
        if tail < 1e-12 && t as f64 > m as f64 / n as f64 {
            break;
        }
        e += tail;
    }
    e
}

/// The fluid limit of greedy d-choice balls into bins (Mitzenmacher, "The power of two choices
/// in randomized load balancing", 1996): with `load` x n balls placed one at a time, each into
/// the least loaded of d servers drawn uniformly (with replacement), the share s_i of servers
/// holding at least i balls follows ds_i/dt = s_{i-1}^d - s_i^d, s_0 = 1, from s_i(0) = 0 to
/// t = load, as n grows (Kurtz's theorem). Returns s_1..=s_levels. Its tail falls doubly
/// exponentially for d >= 2 (s_{i+1} ~ s_i^d), which puts the busiest server at
/// ln ln n / ln d + O(1) (GWTW C6); d = 1 gives the Poisson tail P[Poisson(load) >= i].
/// Classical fourth-order Runge-Kutta, 20,000 steps per unit of load (error far below 1e-9).
pub fn d_choice_shares(d: u32, load: f64, levels: usize) -> Vec<f64> {
    let steps = ((load * 20_000.0).ceil() as usize).max(1);
    let h = load / steps as f64;
    let f = |s: &[f64]| -> Vec<f64> {
        (0..s.len())
            .map(|i| {
                let below = if i == 0 { 1.0 } else { s[i - 1] };
                below.powi(d as i32) - s[i].powi(d as i32)
            })
            .collect()
    };
    let mut s = vec![0.0; levels];
    for _ in 0..steps {
        let k1 = f(&s);
        let at =
            |k: &[f64], w: f64| -> Vec<f64> { s.iter().zip(k).map(|(x, y)| x + w * y).collect() };
        let k2 = f(&at(&k1, h / 2.0));
        let k3 = f(&at(&k2, h / 2.0));
        let k4 = f(&at(&k3, h));
        for i in 0..levels {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    s
}

fn ln_factorial(m: u64) -> f64 {
    if m < 256 {
        (1..=m).map(|i| (i as f64).ln()).sum()
    } else {
        // Stirling with two correction terms: error below 1e-10 here.
        let x = m as f64;
        x * x.ln() - x + 0.5 * (std::f64::consts::TAU * x).ln() + 1.0 / (12.0 * x)
            - 1.0 / (360.0 * x.powi(3))
    }
}

#[cfg(test)]
mod tests {
    /// One choice is Poisson exactly: s_i = P[Poisson(load) >= i]. For any d the shares sum to
    /// the mean load (every ball adds one to exactly one level: d/dt sum s_i = s_0^d = 1), and
    /// two choices thin the tail: s_3 below one choice's by far at load 1.
    #[test]
    fn d_choice_shares_are_poisson_for_one_choice_and_conserve_balls() {
        for load in [0.5, 1.0, 2.0] {
            let one = super::d_choice_shares(1, load, 12);
            for (i, s) in one.iter().enumerate() {
                let want = 1.0 - super::poisson_cdf(load, i as u64);
                assert!(
                    (s - want).abs() < 1e-9,
                    "load {load} i {} {s} {want}",
                    i + 1
                );
            }
            for d in [2, 3] {
                let sh = super::d_choice_shares(d, load, 12);
                let total: f64 = sh.iter().sum();
                assert!((total - load).abs() < 1e-9, "d {d} load {load}: {total}");
                assert!(sh.windows(2).all(|w| w[0] >= w[1]), "{sh:?}");
            }
        }
        let (one, two) = (
            super::d_choice_shares(1, 1.0, 4),
            super::d_choice_shares(2, 1.0, 4),
        );
        assert!(two[2] < one[2] / 5.0, "{one:?} {two:?}");
        assert!(two[3] < 1e-4, "{two:?}");
    }

    use super::*;
    use crate::rng::from_seed;
    use rand::RngExt;

    #[test]
    fn poissonized_probability_matches_exact_counting() {
        for (m, n, c) in [
            (1000, 1000, 2),
            (3000, 3000, 2),
            (2000, 1000, 3),
            (4000, 4000, 4),
        ] {
            let exact = k1_max_at_most_exact(m, n, c);
            let approx = k1_max_at_most_clt(m as u64, n as u64, c as u64);
            assert!(
                (exact - approx).abs() <= 0.002 * exact.max(1e-6) + 1e-12,
                "m {m} n {n} c {c}: {approx} vs {exact}"
            );
        }
        assert_eq!(k1_max_at_most(10, 2, 4), 0.0);
        assert_eq!(k1_max_at_most(0, 2, 0), 1.0);
    }

    #[test]
    fn brute_force_agrees() {
        let (m, n, c) = (50usize, 50usize, 2u64);
        let mut rng = from_seed(7);
        let trials = 40_000;
        let (mut ok, mut sat) = (0u32, 0u64);
        let mut load = vec![0u64; n];
        for _ in 0..trials {
            load.iter_mut().for_each(|l| *l = 0);
            let picks: Vec<usize> = (0..m).map(|_| rng.random_range(0..n)).collect();
            picks.iter().for_each(|&s| load[s] += 1);
            ok += u32::from(load.iter().all(|&l| l <= c));
            sat += picks.iter().filter(|&&s| load[s] <= c).count() as u64;
        }
        let p = k1_max_at_most(m as u64, n as u64, c);
        let se = (p * (1.0 - p) / trials as f64).sqrt();
        assert!(
            (f64::from(ok) / trials as f64 - p).abs() < 4.0 * se + 1e-3,
            "{ok} {p}"
        );
        let s = k1_satisfied(m as u64, n as u64, c);
        let got = sat as f64 / (trials * m) as f64;
        assert!((got - s).abs() < 0.003, "{got} vs {s}");
    }

    /// The spec's figures for m = n: about 4.2, 5.5, 6.6, 7.7 at n = 10^2..10^5.
    #[test]
    fn expected_max_matches_the_spec() {
        for (n, want) in [(100, 4.2), (1000, 5.5), (10_000, 6.6), (100_000, 7.7)] {
            let e = k1_expected_max(n, n);
            assert!((e - want).abs() < 0.1, "n {n}: {e} vs {want}");
        }
    }
}
