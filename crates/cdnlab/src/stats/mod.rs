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
    fn summary_of_known_sample() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.sd - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((s.ci95 - 3.182_446 * s.sd / 2.0).abs() < 1e-9);
        assert!(Summary::of(&[5.0]).ci95.is_nan());
        assert_eq!(Summary::of(&[]).n, 0);
    }
}
