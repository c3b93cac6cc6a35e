//! The Che approximation of an LRU cache under independent requests (Che, Tung, Wang 2002;
//! Fricker, Robert, Roberts 2012).
//!
//! With request probabilities `p_i` and a cache of `C` unit-size objects, the characteristic time
//! `T` solves `sum_i (1 - exp(-p_i T)) = C`, and object `i` is cached with probability
//! `1 - exp(-p_i T)`. The hit ratio is `sum_i p_i (1 - exp(-p_i T))`.

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
    let occupancy = |t: f64| pmf.iter().map(|&p| -(-p * t).exp_m1()).sum::<f64>();
    let mut hi = 1.0;
    while occupancy(hi) < c {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    // Bisection to relative precision 1e-12; occupancy is increasing in T.
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if occupancy(mid) < c {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Ok(0.5 * (lo + hi))
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
        assert!(lru_hit_ratio(&p, 0.0).is_err());
        assert_eq!(lru_hit_ratio(&p, 10_000.0).unwrap(), 1.0);
    }
}
