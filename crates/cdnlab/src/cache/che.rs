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
}
