//! Arrival processes.

use crate::Error;
use crate::rng::Rng;
use rand_distr::{Distribution, Exp};

/// A Poisson process of rate `rate` (arrivals per unit time): exponential gaps with mean 1/rate.
#[derive(Debug, Clone)]
pub struct Poisson {
    gap: Exp<f64>,
    now: f64,
}

impl Poisson {
    /// A process starting at time 0.
    pub fn new(rate: f64) -> Result<Self, Error> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(Error::param("rate", rate, "a finite number > 0"));
        }
        let gap = Exp::new(rate).map_err(|e| Error::param("rate", rate, e.to_string()))?;
        Ok(Poisson { gap, now: 0.0 })
    }

    /// The time of the next arrival.
    #[inline]
    pub fn next_time(&mut self, rng: &mut Rng) -> f64 {
        self.now += self.gap.sample(rng);
        self.now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over a horizon T the count is Poisson(rate T): mean and variance both rate T. With
    /// rate T = 50 and 2000 windows, the sample mean has standard error 0.16; we allow 1.0
    /// (6 sigma) and the variance within 15%.
    #[test]
    fn counts_are_poisson() {
        let mut rng = crate::rng::stream(3, 0, 0);
        let mut p = Poisson::new(5.0).unwrap();
        let windows = 2000;
        let mut counts = vec![0f64; windows];
        loop {
            let t = p.next_time(&mut rng);
            let w = (t / 10.0) as usize;
            if w >= windows {
                break;
            }
            counts[w] += 1.0;
        }
        let mean = counts.iter().sum::<f64>() / windows as f64;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (windows - 1) as f64;
        assert!((mean - 50.0).abs() < 1.0, "mean {mean}");
        assert!((var / 50.0 - 1.0).abs() < 0.15, "var {var}");
        assert!(Poisson::new(0.0).is_err());
        assert!(Poisson::new(f64::INFINITY).is_err());
    }
}
