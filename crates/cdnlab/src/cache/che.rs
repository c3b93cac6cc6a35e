//! The Che approximation of an LRU cache under independent requests (Che, Tung, Wang 2002;
//! Fricker, Robert, Roberts 2012).
//!
//! With request probabilities `p_i` and a cache of `C` unit-size objects, the characteristic time
//! `T` solves `sum_i (1 - exp(-p_i T)) = C` (Newton's method), and object `i` is cached with
//! probability `1 - exp(-p_i T)`. The hit ratio is `sum_i p_i (1 - exp(-p_i T))`.

use crate::Error;

/// The characteristic time `T` for `pmf` and capacity `c` (objects), `0 < c < pmf.len()`.
pub fn characteristic_time(pmf: &[f64], c: f64) -> Result<f64, Error> {
    let n = pmf.len() as f64;
    if !(c > 0.0 && c < n) {
        return Err(Error::param(
            "cache_size",
            c,
            format!("above 0 and below the number of objects {n}"),
        ));
    }
    // f(T) = sum(1 - exp(-p T)) - c is increasing and concave, so Newton's method started left
    // of the root (T = 0, f = -c) climbs to it monotonically: each tangent lies above f and
    // meets zero before the root. One pass over the pmf gives f and f'.
    let mut t = 0.0f64;
    for _ in 0..200 {
        let (mut f, mut df) = (-c, 0.0);
        for &p in pmf {
            // exp_m1 keeps 1 - exp(-pT) accurate when pT is tiny (rare objects).
            let em = (-p * t).exp_m1();
            f -= em;
            df += p * (1.0 + em);
        }
        let next = t - f / df;
        if !next.is_finite() || next <= t * (1.0 + 1e-14) {
            return Ok(next.max(t));
        }
        t = next;
    }
    Ok(t)
}

/// The Che hit ratio of LRU with `c` objects under request probabilities `pmf`. A cache that holds
/// the whole catalogue hits always (after compulsory misses).
pub fn lru_hit_ratio(pmf: &[f64], c: f64) -> Result<f64, Error> {
    if c >= pmf.len() as f64 {
        return Ok(1.0);
    }
    let t = characteristic_time(pmf, c)?;
    Ok(pmf.iter().map(|&p| p * -(-p * t).exp_m1()).sum())
}

/// The exact stationary hit ratio of LRU with `c` unit-size objects under independent requests
/// with probabilities `pmf`: the reference that bounds Che's own error.
///
/// In Poisson time of rate 1 (which leaves the request sequence, so LRU's behaviour, unchanged)
/// object `i` hits when fewer than `c` other objects were requested since its previous request
/// (Flajolet, Gardy, Thimonier 1992; Fricker, Robert, Roberts 2012, section 2):
///
/// `h = sum_i p_i * integral_0^inf p_i exp(-p_i t) P[N_i(t) <= c - 1] dt`,
///
/// where `N_i(t)`, the number of other objects requested within `t`, is a sum of independent
/// Bernoulli(`1 - exp(-p_j t)`), `j != i`. Che replaces `P[N_i(t) <= c - 1]` by the step
/// `1{t < T}`; here it is computed exactly, as a Poisson-binomial distribution, at the nodes of
/// a Gauss-Legendre rule over the window of `t` where it is neither 0 nor 1 to within 1e-13.
/// The error of the result is below 1e-9 (unit tests: King's closed form on small catalogues,
/// and the rule's convergence).
///
/// Cost: about `NODES x (N x w + N)` operations, `w` the width of the distribution's window
/// (about 15 standard deviations of `N(t)`, at most `c`); well under a second for N = 10^4, and
/// [`exact_cost`] tells a caller what a catalogue would take before it commits to it.
pub fn lru_hit_ratio_exact(pmf: &[f64], c: usize) -> Result<f64, Error> {
    exact_in_panels(pmf, c, PANELS)
}

fn exact_in_panels(pmf: &[f64], c: usize, panels: usize) -> Result<f64, Error> {
    let n = pmf.len();
    if c == 0 || c >= n {
        return Err(Error::param(
            "cache_size",
            c,
            format!("above 0 and below the number of objects {n}"),
        ));
    }
    // Descending order makes the early partial sums nearly deterministic (q close to 1), so the
    // window of the Poisson-binomial recursion stays narrow until the uncertain objects arrive.
    let mut p: Vec<f64> = pmf.iter().copied().filter(|&x| x > 0.0).collect();
    p.sort_by(|a, b| b.total_cmp(a));
    if c >= p.len() {
        return Ok(1.0);
    }
    let mut dist = PoissonBinomial::default();
    let (lo, hi) = exact_window(&p, c, &mut dist);
    // The integral runs in u = ln t: each object's weight p e^(-p t) dt = p t e^(-p t) du is a
    // bump about one unit of u wide wherever it lies, so panels of fixed width in u resolve
    // popular and rare objects alike (panels in t could not when the window spans from 1/p_1 to
    // 1/p_N). Below `start` the weight is under p^2 start <= 1e-14 and counts as a hit.
    let start = lo.max(1e-14 / p[0]);
    let (u0, u1) = (start.ln(), hi.max(start).ln());
    let panels = panels.max((4.0 * (u1 - u0)).ceil() as usize);
    let rule = gauss_legendre(16);
    let mut h: Vec<f64> = p.iter().map(|&x| -(-x * start).exp_m1()).collect();
    let width = (u1 - u0) / panels as f64;
    for panel in 0..panels {
        let a = u0 + width * panel as f64;
        for &(x, w) in &rule {
            let t = (a + 0.5 * width * (x + 1.0)).exp();
            let w = 0.5 * width * w * t;
            dist.build(&p, t);
            let below = dist.cdf(c as i64 - 1);
            for (hi_, &pi) in h.iter_mut().zip(&p) {
                let weight = w * pi * (-pi * t).exp();
                if weight < 1e-300 {
                    continue;
                }
                let q = -(-pi * t).exp_m1();
                *hi_ += weight * (below + q * dist.without_at(q, c as i64 - 1));
            }
        }
    }
    Ok(p.iter().zip(&h).map(|(&pi, &hi_)| pi * hi_).sum())
}

/// Gauss-Legendre panels (16 nodes each) over the window in `ln t`: at least this many, and
/// four per unit of `ln t` when the window is wide (small `c` or `N - c`). Doubling them moves
/// no result by 1e-10 (unit tests).
const PANELS: usize = 2;

/// Each tail of `N(t)` left outside the window.
const TAIL: f64 = 1e-13;

/// The operations [`lru_hit_ratio_exact`] takes for `pmf` and `c`, roughly: lets a caller skip a
/// reference that would take minutes (10^9 operations take about a second).
pub fn exact_cost(pmf: &[f64], c: usize) -> f64 {
    let t = characteristic_time(pmf, c as f64).unwrap_or(0.0);
    let var: f64 = pmf
        .iter()
        .map(|&x| {
            let q = -(-x * t).exp_m1();
            q * (1.0 - q)
        })
        .sum();
    let width = (15.0 * var.sqrt()).clamp(1.0, c as f64 + 1.0);
    // The rule's nodes and the window's bisections each build one distribution.
    (PANELS * 16 + 30) as f64 * pmf.len() as f64 * (width + 4.0)
}

/// The window `[lo, hi]` of time outside which `P[N_i(t) <= c - 1]` is within `TAIL` of 1
/// (below) or of 0 (above), for every `i`, checked on the exact distribution of `N(t)`, the
/// count over all objects (`N_i <= N <= N_i + 1`): below `lo`, `P[N(t) >= c] <= TAIL`; above
/// `hi`, `P[N(t) <= c] <= TAIL`. Both are monotone in `t` (`N(t)` grows stochastically), so
/// bisection keeps each end valid. (Bernstein's inequality would be cheaper but cannot reach
/// `TAIL` when `c` or `N - c` is small.)
fn exact_window(p: &[f64], c: usize, dist: &mut PoissonBinomial) -> (f64, f64) {
    // Each end only needs to be valid, not tight: 14 halvings leave it within T / 16384 of the
    // tightest, and each costs one distribution.
    const BISECT: usize = 14;
    let c = c as i64;
    let t_che = characteristic_time(p, c as f64)
        .unwrap_or(1.0)
        .max(f64::MIN_POSITIVE);
    let mut below_ok = |t: f64| {
        dist.build(p, t);
        dist.cdf(c - 1) >= 1.0 - TAIL
    };
    let (mut a, mut b) = (0.0, t_che);
    for _ in 0..BISECT {
        let mid = 0.5 * (a + b);
        if below_ok(mid) { a = mid } else { b = mid }
    }
    let lo = a;
    let mut above_ok = |t: f64| {
        dist.build(p, t);
        dist.cdf(c) <= TAIL
    };
    let mut b = 2.0 * t_che;
    while !above_ok(b) && b < 1e300 {
        b *= 2.0;
    }
    let mut a = t_che;
    for _ in 0..BISECT {
        let mid = 0.5 * (a + b);
        if above_ok(mid) { b = mid } else { a = mid }
    }
    (lo, b)
}

/// The distribution of a sum of independent Bernoulli variables, kept on the window of values
/// whose probability is above 1e-30 (what is dropped cannot move a result by 1e-20).
#[derive(Default)]
struct PoissonBinomial {
    /// The smallest value on the window.
    start: i64,
    /// `pmf[k]` = P[sum = start + k].
    pmf: Vec<f64>,
    /// Prefix sums of `pmf`.
    cdf: Vec<f64>,
}

impl PoissonBinomial {
    const DROP: f64 = 1e-30;

    /// The distribution of `sum_j Bernoulli(1 - exp(-p_j t))`.
    fn build(&mut self, p: &[f64], t: f64) {
        self.start = 0;
        self.pmf.clear();
        self.pmf.push(1.0);
        let mut front = 0;
        for &x in p {
            let q = -(-x * t).exp_m1();
            if q < 1e-20 {
                // The rest are rarer still (descending order): together below N x 1e-20.
                break;
            }
            if q >= 1.0 {
                self.start += 1;
                continue;
            }
            // pmf'(k) = (1 - q) pmf(k) + q pmf(k - 1), updated from the top down in place.
            let r = 1.0 - q;
            let v = &mut self.pmf;
            v.push(0.0);
            for k in (front + 1..v.len()).rev() {
                v[k] = r * v[k] + q * v[k - 1];
            }
            v[front] *= r;
            while v.last().is_some_and(|&x| x < Self::DROP) && v.len() > front + 1 {
                v.pop();
            }
            while front + 1 < v.len() && v[front] < Self::DROP {
                front += 1;
            }
            if front > 1024 && front * 2 > v.len() {
                v.drain(..front);
                self.start += front as i64;
                front = 0;
            }
        }
        self.pmf.drain(..front);
        self.start += front as i64;
        self.cdf.clear();
        let mut acc = 0.0;
        for &x in &self.pmf {
            acc += x;
            self.cdf.push(acc);
        }
    }

    fn at(&self, k: i64) -> f64 {
        usize::try_from(k - self.start)
            .ok()
            .and_then(|i| self.pmf.get(i).copied())
            .unwrap_or(0.0)
    }

    fn cdf(&self, k: i64) -> f64 {
        match usize::try_from(k - self.start) {
            Err(_) => 0.0,
            Ok(i) => self.cdf.get(i).or(self.cdf.last()).copied().unwrap_or(0.0),
        }
    }

    /// P[sum without one of its terms, Bernoulli(q), = k]: `g` solves
    /// `pmf(k) = (1 - q) g(k) + q g(k - 1)`. Unrolled upward, `g(k) = sum_{j <= k} pmf(j)
    /// (-r)^(k - j) / (1 - q)` with `r = q / (1 - q)`; downward, `g(k) = sum_{j > k} pmf(j)
    /// (-s)^(j - k - 1) / q` with `s = 1 / r`. Taking the one whose ratio is at most 1 keeps the
    /// alternating sum stable; it stops once the ratio's power is below 1e-20.
    fn without_at(&self, q: f64, k: i64) -> f64 {
        if q <= 0.5 {
            let r = q / (1.0 - q);
            let (mut sum, mut pow, mut j) = (0.0, 1.0f64, k);
            while j >= self.start && pow.abs() > 1e-20 {
                sum += pow * self.at(j);
                pow *= -r;
                j -= 1;
            }
            sum / (1.0 - q)
        } else {
            let s = (1.0 - q) / q;
            let end = self.start + self.pmf.len() as i64;
            let (mut sum, mut pow, mut j) = (0.0, 1.0f64, k + 1);
            while j < end && pow.abs() > 1e-20 {
                sum += pow * self.at(j);
                pow *= -s;
                j += 1;
            }
            sum / q
        }
    }
}

/// The `n`-node Gauss-Legendre rule on [-1, 1] as (node, weight) pairs: Newton's iteration on
/// the Legendre polynomial from Tricomi's first guess (a crate for this would bring a linear
/// algebra library into the build for sixteen numbers).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (1..=n)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 - 0.25) / (n as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                // P_n(x) and P_n'(x) by the three-term recurrence.
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let k = k as f64;
                    (p0, p1) = (p1, ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k);
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let step = p1 / dp;
                x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::popularity::Law;

    #[test]
    fn uniform_popularity_gives_c_over_n() {
        // Under a uniform law every object has the same occupancy C/N, so the hit ratio is C/N.
        let p = Law::Uniform.pmf(1000).unwrap();
        for c in [1.0, 10.0, 250.0, 999.0] {
            let h = lru_hit_ratio(&p, c).unwrap();
            assert!((h - c / 1000.0).abs() < 1e-9, "c={c}: {h}");
        }
    }

    #[test]
    fn occupancy_sums_to_capacity_and_is_monotone() {
        let p = Law::Zipf { alpha: 0.8 }.pmf(10_000).unwrap();
        let t = characteristic_time(&p, 500.0).unwrap();
        let occ: f64 = p.iter().map(|&x| 1.0 - (-x * t).exp()).sum();
        assert!((occ - 500.0).abs() < 1e-6);
        let h: Vec<f64> = [10.0, 100.0, 1000.0, 5000.0]
            .iter()
            .map(|&c| lru_hit_ratio(&p, c).unwrap())
            .collect();
        assert!(h.windows(2).all(|w| w[0] < w[1]), "{h:?}");
        // Edge capacities and a steep law still solve to the capacity.
        for (alpha, c) in [(1.2, 1.0), (1.2, 9_999.0), (0.0, 9_999.5), (2.5, 3.0)] {
            let p = Law::Zipf { alpha }.pmf(10_000).unwrap();
            let t = characteristic_time(&p, c).unwrap();
            let occ: f64 = p.iter().map(|&x| -(-x * t).exp_m1()).sum();
            assert!(
                (occ - c).abs() < 1e-6 * c.max(1.0),
                "alpha {alpha} c {c}: {occ}"
            );
        }
        assert!(lru_hit_ratio(&p, 0.0).is_err());
        assert_eq!(lru_hit_ratio(&p, 10_000.0).unwrap(), 1.0);
    }

    /// King's closed form (1971) of LRU's stationary state: the cache in recency order
    /// `(i_1, ..., i_c)` has probability `prod_k p_{i_k} / (1 - p_{i_1} - ... - p_{i_{k-1}})`;
    /// the hit ratio sums the cached objects' probabilities over the states.
    fn king(p: &[f64], c: usize) -> f64 {
        fn walk(p: &[f64], c: usize, used: &mut Vec<usize>, prob: f64, out: &mut f64) {
            if used.len() == c {
                *out += prob * used.iter().map(|&i| p[i]).sum::<f64>();
                return;
            }
            let taken: f64 = used.iter().map(|&i| p[i]).sum();
            for i in 0..p.len() {
                if !used.contains(&i) {
                    used.push(i);
                    walk(p, c, used, prob * p[i] / (1.0 - taken), out);
                    used.pop();
                }
            }
        }
        let mut out = 0.0;
        walk(p, c, &mut Vec::new(), 1.0, &mut out);
        out
    }

    #[test]
    fn exact_matches_kings_closed_form() {
        // Small catalogues where King's formula enumerates every state, from uniform to steep,
        // and C from 1 to N - 1: the integral is exact, so only its numerics may differ.
        for (n, alpha) in [(5, 0.0), (6, 0.8), (8, 1.2), (9, 2.0), (7, 0.5)] {
            let p = Law::Zipf { alpha }.pmf(n).unwrap();
            for c in 1..n {
                let (exact, closed) = (lru_hit_ratio_exact(&p, c).unwrap(), king(&p, c));
                assert!(
                    (exact - closed).abs() < 1e-9,
                    "n {n} alpha {alpha} c {c}: {exact} vs {closed}"
                );
            }
        }
        // An uneven law that is not a Zipf.
        let p = [0.4, 0.25, 0.15, 0.1, 0.05, 0.03, 0.02];
        for c in 1..7 {
            let (exact, closed) = (lru_hit_ratio_exact(&p, c).unwrap(), king(&p, c));
            assert!((exact - closed).abs() < 1e-9, "c {c}: {exact} vs {closed}");
        }
    }

    #[test]
    fn exact_is_converged_and_che_is_close() {
        // Doubling the rule's panels moves nothing beyond 1e-10, and Che stays within a few
        // tenths of a percent of the exact value at N = 10^4 (Fricker, Robert, Roberts 2012).
        let p = Law::Zipf { alpha: 0.8 }.pmf(10_000).unwrap();
        for c in [10, 100, 1000, 9000] {
            let exact = lru_hit_ratio_exact(&p, c).unwrap();
            let finer = exact_in_panels(&p, c, 2 * PANELS).unwrap();
            assert!((exact - finer).abs() < 1e-10, "c {c}: {exact} vs {finer}");
            let che = lru_hit_ratio(&p, c as f64).unwrap();
            assert!(
                (exact - che).abs() < 0.01 * exact,
                "c {c}: {exact} vs Che {che}"
            );
        }
        // Uniform: every state is equally likely, so the hit ratio is C / N exactly.
        let p = Law::Uniform.pmf(2000).unwrap();
        for c in [1, 50, 1999] {
            let exact = lru_hit_ratio_exact(&p, c).unwrap();
            assert!((exact - c as f64 / 2000.0).abs() < 1e-9, "c {c}: {exact}");
        }
        assert!(lru_hit_ratio_exact(&p, 0).is_err());
        assert!(lru_hit_ratio_exact(&p, 2000).is_err());
    }

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        // A 16-node rule is exact up to degree 31.
        let rule = gauss_legendre(16);
        for d in [0, 1, 2, 7, 30, 31] {
            let got: f64 = rule.iter().map(|&(x, w)| w * x.powi(d)).sum();
            let want = if d % 2 == 1 {
                0.0
            } else {
                2.0 / (d as f64 + 1.0)
            };
            assert!((got - want).abs() < 1e-14, "degree {d}: {got} vs {want}");
        }
    }
}
