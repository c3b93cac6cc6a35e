//! `cdnlab gen-trace`: writes a synthetic independent-reference trace (Zipf or uniform
//! popularity) in oracleGeneral format, for benchmarks and tests.

use crate::error::{CliError, Result};
use crate::output;
use cdnlab::workload::Request;
use cdnlab::workload::popularity::{Law, Sampler};
use cdnlab::workload::trace;
use clap::Args;
use rand::RngExt;
use std::path::PathBuf;

/// Arguments of `cdnlab gen-trace`.
#[derive(Debug, Args)]
pub struct GenTraceArgs {
    /// Output file (oracleGeneral).
    #[arg(long)]
    pub out: PathBuf,
    /// Number of distinct objects (ids 0..N, id 0 the most popular).
    #[arg(long, default_value_t = 1_000_000)]
    pub objects: usize,
    /// Number of requests.
    #[arg(long, default_value_t = 10_000_000)]
    pub requests: usize,
    /// Zipf exponent (>= 0; 0 is uniform).
    #[arg(long, default_value_t = 0.8)]
    pub alpha: f64,
    /// Object size in bytes (all objects; the smallest with --max-size).
    #[arg(long, default_value_t = 1)]
    pub size: u32,
    /// Largest object size: sizes are then log-uniform between --size and this, drawn once per
    /// object (for byte-capacity experiments).
    #[arg(long)]
    pub max_size: Option<u32>,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs the command.
pub fn run(a: &GenTraceArgs) -> Result<()> {
    if a.requests == 0 || a.requests > u32::MAX as usize {
        return Err(CliError::Usage(format!(
            "--requests {}: allowed 1 to {} (times are u32 request indices)",
            a.requests,
            u32::MAX
        )));
    }
    if a.size == 0 {
        return Err(CliError::Usage("--size 0: sizes must be at least 1".into()));
    }
    let max = a.max_size.unwrap_or(a.size);
    if max < a.size {
        return Err(CliError::Usage(format!(
            "--max-size {max}: must be at least --size {}",
            a.size
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
            Request {
                time: i as u64,
                id: id as u64,
                size: sizes.get(id).copied().unwrap_or(a.size),
                next_access: -1,
            }
        })
        .collect();
    trace::fill_next_access(&mut reqs);
    output::write_atomic(&a.out, &trace::encode_oracle_general(&reqs))?;
    eprintln!(
        "wrote {} requests over {} objects (Zipf alpha {}) to {}",
        a.requests,
        a.objects,
        a.alpha,
        a.out.display()
    );
    Ok(())
}
