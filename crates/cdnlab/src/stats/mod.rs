//! Statistics over replications: mean, standard deviation and Student-t confidence intervals.

/// Mean, spread and 95% confidence half-width of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
    /// Half-width of the 95% Student-t interval for the mean; NaN for fewer than two values.
    pub ci95: f64,
}

impl Summary {
    /// Summarises `xs` (empty gives n = 0 and NaNs). NaN values are kept, so they show.
    pub fn of(xs: &[f64]) -> Summary {
        let n = xs.len();
        if n == 0 {
            return Summary {
                n,
                mean: f64::NAN,
                sd: f64::NAN,
                ci95: f64::NAN,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Summary {
                n,
                mean,
                sd: 0.0,
                ci95: f64::NAN,
            };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        Summary {
            n,
            mean,
            sd,
            ci95: t975(n - 1) * sd / (n as f64).sqrt(),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
