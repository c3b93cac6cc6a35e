//! Arrival processes: exponential gaps, by inversion (one uniform draw per gap, so a run's draws
//! are easy to follow and identical on every platform).

use crate::rng::Rng;
use rand::RngExt;

/// An exponential gap of mean `mean`: -mean ln(1 - U), U uniform in [0, 1). The gaps of a
/// Poisson process of rate 1 / mean.
#[inline]
pub fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over a horizon T the count of a Poisson process is Poisson(rate T): mean and variance
    /// both rate T. With rate T = 50 and 2000 windows, the sample mean has standard error 0.16;
    /// we allow 1.0 (6 sigma) and the variance within 15%.
    #[test]
    fn counts_are_poisson() {
        let mut rng = crate::rng::stream(3, 0, 0);
        let windows = 2000;
        let mut counts = vec![0f64; windows];
        let mut t = 0.0;
        loop {
            t += exponential(&mut rng, 0.2);
            let w = (t / 10.0) as usize;
            if w >= windows {
                break;
            }
            counts[w] += 1.0;
        }
        let mean = counts.iter().sum::<f64>() / windows as f64;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (windows - 1) as f64;
        assert!((mean - 50.0).abs() < 1.0, "{mean}");
        assert!((var / 50.0 - 1.0).abs() < 0.15, "{var}");
    }
}
