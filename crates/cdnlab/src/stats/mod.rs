//! Statistics over replications: mean, standard deviation and 95% confidence intervals that fit
//! the data (Student-t, clipped to [0, 1] for fractions, Wilson for yes/no outcomes).

/// What values a metric takes per run, which decides the shape of its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Any number: mean +- the Student-t half-width.
    Free,
    /// A fraction in [0, 1] (a share of users, a hit ratio): the t interval clipped to [0, 1].
    Share,
    /// A yes/no outcome, 1 or 0 (converged, feasible): the Wilson interval of the share of
    /// yeses, which stays in [0, 1] and is not empty when every run says the same.
    YesNo,
}

/// Mean, spread and 95% confidence interval of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
    /// Half-width of the 95% Student-t interval for the mean; NaN for fewer than two values.
    /// Precision targets and t tests use it; the interval shown is [`Summary::lo`] to `hi`.
    pub ci95: f64,
    /// The 95% interval for the mean, of the shape the sample's [`Scale`] calls for: mean +-
    /// `ci95`, clipped to [0, 1] for a share, Wilson's for yes/no outcomes. NaN when there is
    /// none (fewer than two values, except yes/no outcomes, whose interval exists from one).
    pub lo: f64,
    pub hi: f64,
}

impl Summary {
    /// The standard error of the mean, sd / sqrt(n) (0 for one value, NaN for none).
    pub fn se(&self) -> f64 {
        self.sd / (self.n as f64).sqrt()
    }

    /// Summarises `xs` as free numbers (see [`Summary::on`]).
    pub fn of(xs: &[f64]) -> Summary {
        Summary::on(xs, Scale::Free)
    }

    /// Summarises `xs`, values on `scale` (empty gives n = 0 and NaNs). NaN values are kept, so
    /// they show. Yes/no outcomes that are not all 0 or 1 get the clipped t interval.
    pub fn on(xs: &[f64], scale: Scale) -> Summary {
        let mut s = Summary::t(xs);
        let yes_no = xs.iter().all(|x| *x == 0.0 || *x == 1.0);
        match scale {
            Scale::YesNo if yes_no && !xs.is_empty() => {
                let yes = xs.iter().filter(|x| **x == 1.0).count() as u64;
                (s.lo, s.hi) = wilson(yes, xs.len() as u64, Z975);
            }
            Scale::YesNo | Scale::Share => {
                (s.lo, s.hi) = (s.lo.clamp(0.0, 1.0), s.hi.clamp(0.0, 1.0));
            }
            Scale::Free => {}
        }
        s
    }

    /// The Student-t summary.
    fn t(xs: &[f64]) -> Summary {
        let n = xs.len();
        if n == 0 {
            return Summary {
                n,
                mean: f64::NAN,
                sd: f64::NAN,
                ci95: f64::NAN,
                lo: f64::NAN,
                hi: f64::NAN,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Summary {
                n,
                mean,
                sd: 0.0,
                ci95: f64::NAN,
                lo: f64::NAN,
                hi: f64::NAN,
            };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        let ci95 = t975(n - 1) * sd / (n as f64).sqrt();
        Summary {
            n,
            mean,
            sd,
            ci95,
            lo: mean - ci95,
            hi: mean + ci95,
        }
    }
}

/// The two-sided 95% quantile of the standard normal.
pub const Z975: f64 = 1.959_963_984_540_054;

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided 95%).
///
/// Exact table values for df <= 30; above, the Cornish-Fisher expansion around the normal
/// quantile, accurate to better than 1e-4 there.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706_204, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
        2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
        2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
        2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => {
            let z: f64 = 1.959_963_984_540_054;
            let d = df as f64;
            let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
            z + (z3 + z) / (4.0 * d)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * d * d)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * d * d * d)
        }
    }
}

/// A precision target for one metric: the 95% confidence half-width of its mean at most this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HalfWidth {
    /// At most this, in the metric's unit.
    Absolute(f64),
    /// At most this fraction of |mean| (a mean of 0 needs a half-width of 0).
    Relative(f64),
}

impl HalfWidth {
    /// Whether `s` meets the target; never with fewer than two values (no interval yet).
    pub fn met(&self, s: &Summary) -> bool {
        if s.n < 2 || !s.ci95.is_finite() {
            return false;
        }
        match *self {
            HalfWidth::Absolute(h) => s.ci95 <= h,
            HalfWidth::Relative(r) => s.ci95 <= r * s.mean.abs(),
        }
    }
}

/// Sequential stopping with a minimum sample (Law, *Simulation Modeling and Analysis*, §9.4.1):
/// run `min` replications, then `batch` more at a time until every target is met or `max` are
/// done. The decision looks only at replications 0..n, taken in order at batch boundaries, so the
/// count a cell ends with is a function of its values alone (not of how they were computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sequential {
    /// Replications before the first check (at least 2: an interval needs two values).
    pub min: u64,
    /// Replications added per step.
    pub batch: u64,
    /// Most replications, met or not.
    pub max: u64,
}

impl Sequential {
    /// The replication count to reach next, after `done` (None: stop at `max`).
    pub fn next(&self, done: u64) -> Option<u64> {
        if done >= self.max {
            None
        } else if done < self.min {
            Some(self.min.min(self.max))
        } else {
            Some((done + self.batch.max(1)).min(self.max))
        }
    }

    /// Runs the rule: `grow(n)` extends the sample to replications 0..n (n increasing: min,
    /// min + batch, ..., max) and returns the summary of each target's metric over them. Returns
    /// the replications used and whether every target was met.
    pub fn run<E>(
        &self,
        targets: &[HalfWidth],
        mut grow: impl FnMut(u64) -> Result<Vec<Summary>, E>,
    ) -> Result<(u64, bool), E> {
        let mut n = 0;
        while let Some(next) = self.next(n) {
            n = next;
            let s = grow(n)?;
            if targets.iter().zip(&s).all(|(t, s)| t.met(s)) {
                return Ok((n, true));
            }
        }
        Ok((n, false))
    }
}

/// Pearson's chi-square statistic of observed counts against expected counts.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .filter(|(_, e)| **e > 0.0)
        .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
        .sum()
}

/// The upper 10^-4 quantile of chi-square with `df` degrees of freedom (exact for df <= 2, else
/// Wilson-Hilferty: at most 4% above the exact value from df = 3 on, never below it in the
/// tested range): a uniformity check that fails by chance at most once in 10000 seeds.
pub fn chi_square_1e4(df: usize) -> f64 {
    const Z: f64 = 3.719_016; // upper 1e-4 normal quantile
    match df {
        0 => 0.0,
        1 => 15.137,
        2 => 18.421,
        _ => {
            let d = df as f64;
            let a = 2.0 / (9.0 * d);
            d * (1.0 - a + Z * a.sqrt()).powi(3)
        }
    }
}

/// A straight line y = a + b x fitted by weighted least squares to points with standard errors.
///
/// Each point weighs 1 / se^2. The slope's standard error is the textbook one, inflated by
/// sqrt(chi^2 / dof) when the points scatter more about the line than their errors say (lack of
/// fit), so a curved trend does not get a falsely narrow interval; the 95% interval uses
/// Student's t with n - 2 degrees of freedom. Standard errors of 0 (every replication equal)
/// are raised to a floor of 1e-9 of the largest |y| (or 1e-9), so such points weigh most but
/// the fit stays defined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineFit {
    pub intercept: f64,
    pub slope: f64,
    pub slope_se: f64,
    /// Half-width of the slope's 95% interval (NaN with fewer than three points).
    pub slope_ci95: f64,
    /// Weighted sum of squared residuals.
    pub chi2: f64,
    /// Points minus two.
    pub dof: usize,
}

impl LineFit {
    /// Fits `(x, y, se)` points; None with fewer than two distinct x or a non-finite value.
    pub fn fit(points: &[(f64, f64, f64)]) -> Option<LineFit> {
        if points
            .iter()
            .any(|p| !(p.0.is_finite() && p.1.is_finite()) || p.2.is_nan())
        {
            return None;
        }
        let scale = points
            .iter()
            .map(|p| p.1.abs())
            .fold(0.0, f64::max)
            .max(1.0);
        let w: Vec<f64> = points
            .iter()
            .map(|p| 1.0 / p.2.max(1e-9 * scale).powi(2))
            .collect();
        let sw: f64 = w.iter().sum();
        let xm = points.iter().zip(&w).map(|(p, w)| w * p.0).sum::<f64>() / sw;
        let ym = points.iter().zip(&w).map(|(p, w)| w * p.1).sum::<f64>() / sw;
        let sxx: f64 = points
            .iter()
            .zip(&w)
            .map(|(p, w)| w * (p.0 - xm).powi(2))
            .sum();
        if sxx.is_nan() || sxx <= 0.0 {
            return None;
        }
        let sxy: f64 = points
            .iter()
            .zip(&w)
            .map(|(p, w)| w * (p.0 - xm) * (p.1 - ym))
            .sum();
        let slope = sxy / sxx;
        let intercept = ym - slope * xm;
        let chi2: f64 = points
            .iter()
            .zip(&w)
            .map(|(p, w)| w * (p.1 - intercept - slope * p.0).powi(2))
            .sum();
        let dof = points.len() - 2;
        let inflate = if dof > 0 {
            (chi2 / dof as f64).max(1.0)
        } else {
            1.0
        };
        let slope_se = (inflate / sxx).sqrt();
        Some(LineFit {
            intercept,
            slope,
            slope_se,
            slope_ci95: t975(dof) * slope_se,
            chi2,
            dof,
        })
    }

    /// The slope's 95% interval lies below 0.
    pub fn falls(&self) -> bool {
        self.slope + self.slope_ci95 < 0.0
    }

    /// The slope's 95% interval lies above 0.
    pub fn rises(&self) -> bool {
        self.slope - self.slope_ci95 > 0.0
    }

    /// The slope's 95% interval contains `b`.
    pub fn slope_admits(&self, b: f64) -> bool {
        (self.slope - b).abs() <= self.slope_ci95
    }
}

/// Exact binomial probability P[X <= k] for X ~ Binomial(n, p), summed in log space.
pub fn binomial_cdf(n: u64, p: f64, k: u64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_c = 0.0; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            log_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (log_c + i as f64 * lp + (n - i) as f64 * lq).exp();
    }
    sum.min(1.0)
}

/// The Wilson score interval for a proportion: `successes` of `n` yes/no outcomes at the normal
/// quantile `z` (1.96 for 95%). Unlike mean +- t se it stays within [0, 1] and is not empty at
/// 0 or n successes (Wilson 1927; Brown, Cai and DasGupta 2001 recommend it for small n).
/// `(NaN, NaN)` for n = 0.
pub fn wilson(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (n, p) = (n as f64, successes as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 or n successes the bound is exactly 0 or 1; rounding would leave 1 - 1e-16.
    let lo = if successes == 0 { 0.0 } else { centre - half };
    let hi = if p == 1.0 { 1.0 } else { centre + half };
    (lo.max(0.0), hi.min(1.0))
}

/// P[X <= k] for X ~ Poisson(mean).
pub fn poisson_cdf(mean: f64, k: u64) -> f64 {
    // Terms in log space: e^-mean underflows for means above about 745.
    let ln_mean = mean.ln();
    let mut log_term = -mean; // ln P[X = 0]
    let mut sum = 0.0;
    for i in 0..=k {
        if i > 0 {
            log_term += ln_mean - (i as f64).ln();
        }
        sum += log_term.exp();
    }
    sum.min(1.0)
}

/// Ranks of `xs` from 1, ties sharing their mean rank.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean;
        }
        i = j + 1;
    }
    r
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    sxy / (sxx * syy).sqrt()
}

/// Spearman's rank correlation of paired samples (Pearson's on the ranks, ties at their mean
/// rank); NaN if either sample is constant or there are fewer than 3 pairs.
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    if x.len() != y.len() || x.len() < 3 {
        return f64::NAN;
    }
    pearson(&ranks(x), &ranks(y))
}

/// One-sided permutation p-value of a positive Spearman correlation: the share of `rounds`
/// random pairings of `y` with `x` whose correlation is at least the observed one (with the
/// observed pairing counted, so never 0).
pub fn spearman_p_greater(x: &[f64], y: &[f64], rounds: usize, rng: &mut crate::rng::Rng) -> f64 {
    use rand::seq::SliceRandom;
    let observed = spearman(x, y);
    if !observed.is_finite() {
        return 1.0;
    }
    let (rx, mut ry) = (ranks(x), ranks(y));
    let mut at_least = 1usize;
    for _ in 0..rounds {
        ry.shuffle(rng);
        if pearson(&rx, &ry) >= observed - 1e-12 {
            at_least += 1;
        }
    }
    at_least as f64 / (rounds + 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_take_the_shape_of_the_scale() {
        // 2 of 10 runs converged: the t interval (0.2 +- 0.30) would go below 0.
        let runs = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let free = Summary::of(&runs);
        assert!(free.lo < 0.0 && (free.hi - free.mean - free.ci95).abs() < 1e-12);
        let yes_no = Summary::on(&runs, Scale::YesNo);
        assert_eq!((yes_no.lo, yes_no.hi), wilson(2, 10, Z975));
        assert_eq!(
            yes_no.ci95, free.ci95,
            "precision targets keep the t half-width"
        );
        let share = Summary::on(&[0.99, 1.0, 0.97, 1.0], Scale::Share);
        assert!(share.hi == 1.0 && share.lo > 0.9 && share.lo < share.mean);
        // Every run alike: Wilson still gives an interval, t gives a point.
        let all = Summary::on(&[1.0; 10], Scale::YesNo);
        assert!((all.lo - 0.7225).abs() < 1e-4 && all.hi == 1.0);
        // Not yes/no after all: the clipped t interval.
        let odd = Summary::on(&[0.5, 1.0, 0.0], Scale::YesNo);
        assert!(odd.lo == 0.0 && odd.hi <= 1.0);
        assert!(Summary::on(&[], Scale::YesNo).lo.is_nan());
    }

    #[test]
    fn wilson_matches_published_values_and_stays_in_0_1() {
        // Newcombe (1998), Table I: 81 of 263 -> 0.2553 to 0.3662; 0 of 10 -> 0 to 0.2775.
        let (lo, hi) = wilson(81, 263, Z975);
        assert!(
            (lo - 0.2553).abs() < 1e-4 && (hi - 0.3662).abs() < 1e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(0, 10, Z975);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4, "{lo} {hi}");
        let (lo, hi) = wilson(10, 10, Z975);
        assert!((lo - 0.7225).abs() < 1e-4 && hi == 1.0, "{lo} {hi}");
        assert!(wilson(0, 0, 1.96).0.is_nan());
    }

    #[test]
    fn sequential_boundaries() {
        let q = Sequential {
            min: 5,
            batch: 3,
            max: 12,
        };
        let mut seen = Vec::new();
        let mut n = 0;
        while let Some(m) = q.next(n) {
            seen.push(m);
            n = m;
        }
        assert_eq!(seen, [5, 8, 11, 12]);
        // A maximum below the minimum caps it.
        assert_eq!(
            Sequential {
                min: 10,
                batch: 5,
                max: 4
            }
            .next(0),
            Some(4)
        );
        assert_eq!(
            Sequential {
                min: 10,
                batch: 5,
                max: 4
            }
            .next(4),
            None
        );
    }

    #[test]
    fn half_width_targets() {
        // [1, 3]: mean 2, sd sqrt(2), half-width t975(1) * sqrt(2) / sqrt(2) = 12.706204.
        let s = Summary::of(&[1.0, 3.0]);
        assert!((s.ci95 - 12.706_204).abs() < 1e-6);
        assert!(HalfWidth::Absolute(12.71).met(&s));
        assert!(!HalfWidth::Absolute(12.70).met(&s));
        assert!(HalfWidth::Relative(6.36).met(&s)); // 6.36 * 2 = 12.72
        assert!(!HalfWidth::Relative(6.35).met(&s));
        // One value has no interval; a constant sample meets any target, relative to 0 too.
        assert!(!HalfWidth::Absolute(1e9).met(&Summary::of(&[1.0])));
        assert!(HalfWidth::Relative(0.0).met(&Summary::of(&[0.0, 0.0])));
    }

    /// The rule stops at the first batch boundary where every target holds (a brute force over
    /// the boundaries agrees), and reports a miss at the maximum.
    #[test]
    fn sequential_stops_at_the_first_boundary_that_meets_every_target() {
        // Values alternating 0, 1: the half-width shrinks like 1 / sqrt(n).
        let xs: Vec<f64> = (0..200).map(|i| (i % 2) as f64).collect();
        let ys: Vec<f64> = (0..200).map(|i| 10.0 + ((i * 7) % 5) as f64).collect();
        for (hx, ry) in [(0.3, 0.1), (0.2, 0.05), (0.1, 0.02), (0.05, 0.2)] {
            let targets = [HalfWidth::Absolute(hx), HalfWidth::Relative(ry)];
            let q = Sequential {
                min: 4,
                batch: 6,
                max: 200,
            };
            let summaries = |n: u64| {
                vec![
                    Summary::of(&xs[..n as usize]),
                    Summary::of(&ys[..n as usize]),
                ]
            };
            let mut calls = Vec::new();
            let got = q
                .run(&targets, |n| {
                    calls.push(n);
                    Ok::<_, ()>(summaries(n))
                })
                .unwrap();
            let brute = (0..)
                .map(|k| (4 + 6 * k).min(200))
                .take_while(|&n| n < 200)
                .chain([200])
                .find(|&n| targets.iter().zip(summaries(n)).all(|(t, s)| t.met(&s)));
            match brute {
                Some(n) => assert_eq!(got, (n, true), "{hx} {ry}"),
                None => assert_eq!(got, (200, false), "{hx} {ry}"),
            }
            assert_eq!(*calls.last().unwrap(), got.0);
            assert!(calls.windows(2).all(|w| w[1] > w[0]));
        }
        // 0.05 absolute on the 0/1 values needs n near (1.96 * 0.5 / 0.05)^2 = 384: not reached.
        let q = Sequential {
            min: 4,
            batch: 6,
            max: 200,
        };
        let got = q
            .run(&[HalfWidth::Absolute(0.05)], |n| {
                Ok::<_, ()>(vec![Summary::of(&xs[..n as usize])])
            })
            .unwrap();
        assert_eq!(got, (200, false));
    }

    #[test]
    fn chi_square_quantiles() {
        // Exact quantiles (regularized incomplete gamma, bisection): df 3, 10, 63, 1000.
        for (df, exact) in [(3, 21.108), (10, 35.564), (63, 113.505), (1000, 1174.933)] {
            let q = chi_square_1e4(df);
            assert!(q >= exact && q <= exact * 1.04, "df {df}: {q} vs {exact}");
        }
        assert_eq!(chi_square(&[10, 10], &[10.0, 10.0]), 0.0);
        assert!((chi_square(&[12, 8], &[10.0, 10.0]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert!((t975(1) - 12.7062).abs() < 1e-4);
        assert!((t975(10) - 2.2281).abs() < 1e-4);
        // Reference values from R's qt(0.975, df).
        assert!((t975(40) - 2.021_075).abs() < 1e-4);
        assert!((t975(100) - 1.983_972).abs() < 1e-4);
        assert!((t975(1000) - 1.962_339).abs() < 1e-4);
        assert!(t975(0).is_nan());
    }

    #[test]
    fn line_fit_exact_and_noisy() {
        // Exact line: slope and intercept recovered, chi2 0, interval collapses.
        let pts: Vec<(f64, f64, f64)> = (0..5)
            .map(|i| (i as f64, 2.0 + 3.0 * i as f64, 0.5))
            .collect();
        let f = LineFit::fit(&pts).unwrap();
        assert!((f.slope - 3.0).abs() < 1e-12 && (f.intercept - 2.0).abs() < 1e-12);
        assert!(f.chi2 < 1e-18 && f.rises() && !f.falls());
        // Known textbook value: unweighted slope SE = sqrt(sigma^2 / Sxx) with sigma = se.
        assert!((f.slope_se - (0.25f64 / 10.0).sqrt()).abs() < 1e-12);
        assert!((f.slope_ci95 - 3.182_446 * f.slope_se).abs() < 1e-9);
        // A flat sample with scatter: the interval holds 0.
        let flat = [
            (0.0, 1.0, 0.1),
            (1.0, 1.1, 0.1),
            (2.0, 0.9, 0.1),
            (3.0, 1.05, 0.1),
        ];
        let f = LineFit::fit(&flat).unwrap();
        assert!(!f.rises() && !f.falls() && f.slope_admits(0.0));
        // Scatter beyond the stated errors widens the interval.
        let tight = [
            (0.0, 1.0, 0.001),
            (1.0, 1.1, 0.001),
            (2.0, 0.9, 0.001),
            (3.0, 1.05, 0.001),
        ];
        assert!(LineFit::fit(&tight).unwrap().slope_ci95 >= f.slope_ci95 * 0.99);
        assert!(LineFit::fit(&[(1.0, 1.0, 0.1), (1.0, 2.0, 0.1)]).is_none());
        assert!(LineFit::fit(&[(1.0, f64::NAN, 0.1), (2.0, 2.0, 0.1)]).is_none());
    }

    #[test]
    fn binomial_and_poisson() {
        // (1 - 1/200)^199 + 199 (1/200) (1 - 1/200)^198, by hand.
        let q: f64 = 199.0 / 200.0;
        let exact = q.powi(199) + 199.0 / 200.0 * q.powi(198);
        assert!((binomial_cdf(199, 1.0 / 200.0, 1) - exact).abs() < 1e-12);
        assert!((binomial_cdf(10, 0.5, 10) - 1.0).abs() < 1e-12);
        assert!((poisson_cdf(1.0, 1) - 2.0 / std::f64::consts::E).abs() < 1e-12);
        assert_eq!(binomial_cdf(5, 0.0, 0), 1.0);
    }

    #[test]
    fn summary_of_known_sample() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.sd - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((s.ci95 - 3.182_446 * s.sd / 2.0).abs() < 1e-9);
        assert!(Summary::of(&[5.0]).ci95.is_nan());
        assert_eq!(Summary::of(&[]).n, 0);
    }

    /// SciPy's example: spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) = 0.8207826816681233; ties
    /// take their mean rank.
    #[test]
    fn spearman_agrees_with_scipy_and_its_permutation_test_with_chance() {
        let (x, y) = ([1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 6.0, 7.0, 8.0, 7.0]);
        assert!((spearman(&x, &y) - 0.820_782_681_668_123_3).abs() < 1e-12);
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        assert!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_nan());
        let mut rng = crate::rng::stream(1, 0, 0);
        // A perfect order of 10: p = 1 / 10! exactly, so the test gives (1 + hits) / 10001.
        let a: Vec<f64> = (0..10).map(f64::from).collect();
        assert!(spearman_p_greater(&a, &a, 10_000, &mut rng) < 0.001);
        // Unrelated samples: p far from 0.
        let b = [3.0, 9.0, 1.0, 7.0, 5.0, 0.0, 8.0, 2.0, 6.0, 4.0];
        let r = spearman(&a, &b);
        let p = spearman_p_greater(&a, &b, 10_000, &mut rng);
        assert!(r.abs() < 0.3 && p > 0.2, "{r} {p}");
    }
}
