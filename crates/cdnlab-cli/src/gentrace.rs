//! `cdnlab gen-trace`: writes a synthetic independent-reference trace (Zipf or uniform
//! popularity) in oracleGeneral format, for benchmarks and tests.

use crate::error::{CliError, Result};
use crate::output;
use cdnlab::workload::Request;
use cdnlab::workload::popularity::{Law, Sampler};
use cdnlab::workload::trace;
use clap::Args;
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
    /// Object size in bytes (all objects).
    #[arg(long, default_value_t = 1)]
    pub size: u32,
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
    let sampler = Sampler::new(Law::Zipf { alpha: a.alpha }, a.objects)?;
    let mut rng = cdnlab::rng::stream(a.seed, 0, 0);
    let mut reqs: Vec<Request> = (0..a.requests)
        .map(|i| Request {
            time: i as u64,
            id: sampler.sample(&mut rng) as u64,
            size: a.size,
            next_access: -1,
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
