//! Writes a synthetic independent-reference trace (Zipf or uniform
//! popularity) in oracleGeneral format, for benchmarks and tests.

use crate::error::{Error, Result};
use crate::files;
use cdnlab::workload::Request;
use cdnlab::workload::popularity::{Law, Sampler};
use cdnlab::workload::trace;
use rand::RngExt;
use std::path::PathBuf;

/// A synthetic trace to write.
#[derive(Debug, Clone)]
pub struct GenTracePlan {
    /// Output file (oracleGeneral).
    pub out: PathBuf,
    /// Distinct objects (ids 0..N, id 0 the most popular).
    pub objects: usize,
    pub requests: usize,
    /// Zipf exponent (>= 0; 0 is uniform).
    pub alpha: f64,
    /// Object size in bytes (all objects; the smallest with `max_size`).
    pub size: u32,
    /// Largest object size: sizes are then log-uniform between `size` and this, drawn once per
    /// object.
    pub max_size: Option<u32>,
    pub seed: u64,
    /// How errors name the arguments.
    pub style: crate::error::ArgStyle,
}

/// Writes the trace (whole, or not at all).
pub fn gen_trace(a: &GenTracePlan) -> Result<()> {
    let n = |f| a.style.plain(f);
    if a.requests == 0 || a.requests > u32::MAX as usize {
        return Err(Error::Usage(format!(
            "{} {}: allowed 1 to {} (times are u32 request indices)",
            n("--requests"),
            a.requests,
            u32::MAX
        )));
    }
    if a.size == 0 {
        return Err(Error::Usage(format!(
            "{} 0: sizes must be at least 1",
            n("--size")
        )));
    }
    let max = a.max_size.unwrap_or(a.size);
    if max < a.size {
        return Err(Error::Usage(format!(
            "{} {max}: must be at least {} {}",
            n("--max-size"),
            n("--size"),
            a.size
        )));
    }
    if a.objects == 0 {
        return Err(Error::Usage(format!(
            "{} 0: at least 1 object",
            n("--objects")
        )));
    }
    if !(a.alpha.is_finite() && a.alpha >= 0.0) {
        return Err(Error::Usage(format!(
            "{} {}: a Zipf exponent of at least 0 (0 is uniform)",
            n("--alpha"),
            a.alpha
        )));
    }
    let sampler = Sampler::new(Law::Zipf { alpha: a.alpha }, a.objects)?;
    let sizes: Vec<u32> = if max == a.size {
        Vec::new()
    } else {
        // A stream of its own, so the ids drawn do not depend on whether sizes vary.
        let mut rng = cdnlab::rng::stream(a.seed, 1, 0);
        let (lo, hi) = (f64::from(a.size).ln(), (f64::from(max) + 1.0).ln());
        (0..a.objects)
            .map(|_| (rng.random_range(lo..hi).exp() as u32).clamp(a.size, max))
            .collect()
    };
    let mut rng = cdnlab::rng::stream(a.seed, 0, 0);
    let mut reqs: Vec<Request> = (0..a.requests)
        .map(|i| {
            let id = sampler.sample(&mut rng);
            Request::new(
                i as u64,
                id as u64,
                sizes.get(id).copied().unwrap_or(a.size),
            )
        })
        .collect();
    trace::fill_next_access(&mut reqs);
    files::write_atomic(&a.out, &trace::encode_oracle_general(&reqs))?;
    Ok(())
}
