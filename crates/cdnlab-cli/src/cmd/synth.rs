//! `cdnlab gen-trace`: the flags of a synthetic trace.

use cdnlab_lab::Result;
use cdnlab_lab::trace::synthetic::{GenTracePlan, gen_trace};
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
    gen_trace(&GenTracePlan {
        out: a.out.clone(),
        objects: a.objects,
        requests: a.requests,
        alpha: a.alpha,
        size: a.size,
        max_size: a.max_size,
        seed: a.seed,
        style: cdnlab_lab::error::ArgStyle::Cli,
    })?;
    eprintln!(
        "wrote {} requests over {} objects (Zipf alpha {}) to {}",
        a.requests,
        a.objects,
        a.alpha,
        a.out.display()
    );
    Ok(())
}
