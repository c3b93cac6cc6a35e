//! Replay a trace through cache policies with the library: an oracleGeneral file if one is
//! given, else a synthetic Zipf workload.
//!
//!     cargo run --release -p cdnlab --example replay_trace [-- TRACE.oracleGeneral]
//!
//! (`cdnlab cache-replay` does this with many sizes at once, zstd, CSV and plots.)

use cdnlab::Named;
use cdnlab::cache::{Capacity, Policy};
use cdnlab::workload::Request;
use cdnlab::workload::popularity::{Law, Sampler};
use cdnlab::workload::trace;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reqs: Vec<Request> = match std::env::args().nth(1) {
        Some(path) => trace::parse_oracle_general(&std::fs::read(&path)?, false)?,
        None => {
            // 10^6 requests over 10^5 objects, Zipf(0.8); next accesses filled in for Belady.
            let sampler = Sampler::new(Law::Zipf { alpha: 0.8 }, 100_000)?;
            let mut rng = cdnlab::rng::stream(42, 0, 0);
            let mut reqs: Vec<Request> = (0..1_000_000)
                .map(|t| Request::new(t, sampler.sample(&mut rng) as u64, 1))
                .collect();
            trace::fill_next_access(&mut reqs);
            reqs
        }
    };
    let capacity = Capacity::objects(1_000)?;
    println!(
        "{} requests, capacity {} objects",
        reqs.len(),
        capacity.amount
    );
    for policy in [
        Policy::Lru,
        Policy::Fifo,
        Policy::S3Fifo,
        Policy::Arc,
        Policy::Belady,
    ] {
        let mut cache = policy.build(capacity);
        // `replay_dyn` runs the monomorphised loop; `access_req` per request works as well.
        let hits = cache.replay_dyn(&reqs).hits;
        println!(
            "{:<8} miss ratio {:.4}",
            policy.name(),
            1.0 - hits as f64 / reqs.len() as f64
        );
    }
    // Request by request, with your own ids and sizes:
    let mut lru = Policy::Lru.build(Capacity::objects(2)?);
    let hits: Vec<bool> = [1, 2, 1, 3, 2]
        .iter()
        .map(|&id| lru.access(id, 1))
        .collect();
    assert_eq!(hits, [false, false, true, false, false]);
    Ok(())
}
