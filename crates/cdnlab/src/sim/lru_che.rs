//! `lru-che`: simulated LRU hit ratio under independent Zipf requests, against LRU's exact
//! stationary hit ratio and the Che approximation. A check of the cache and the workload (against
//! the exact value) and of the approximation (its distance from the exact value).

use super::params::{MetricSpec, ParamSpec, Params};
use crate::Error;
use crate::cache::{Cache, Capacity, che, fifo::Fifo, lru::Lru};
use crate::rng::Rng;
use crate::workload::Request;
use crate::workload::popularity::{Law, Sampler};

/// The experiment.
pub struct LruChe;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "objects",
        2,
        100_000_000,
        10_000,
        "catalogue size N (unit-size objects)",
    ),
    ParamSpec::int(
        "cache_size",
        1,
        100_000_000,
        100,
        "LRU capacity C in objects (below N)",
    )
    .unit("objects"),
    ParamSpec::float("alpha", 0.0, 5.0, 0.8, "Zipf exponent (0 = uniform)").unit("Zipf exponent"),
    ParamSpec::choice(
        "policy",
        &["lru", "fifo"],
        "the simulated cache (fifo: a wrong model for the Che check, which is LRU's)",
    ),
    ParamSpec::int(
        "warmup",
        0,
        10_000_000_000,
        100_000,
        "requests before measuring (fill the cache)",
    ),
    ParamSpec::int(
        "requests",
        1,
        10_000_000_000,
        1_000_000,
        "measured requests",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "hit_ratio",
        "fraction",
        "simulated LRU hit ratio over the measured requests",
    ),
    MetricSpec::new(
        "che_hit_ratio",
        "fraction",
        "the Che approximation's hit ratio for the same N, C and alpha",
    ),
    MetricSpec::new("abs_error", "fraction", "|simulated - Che|"),
    MetricSpec::new(
        "exact_hit_ratio",
        "fraction",
        "LRU's exact stationary hit ratio for the same N, C and alpha (che::lru_hit_ratio_exact; \
         NaN where computing it would take more than about a minute)",
    ),
];

/// The exact reference costs `che::exact_cost` operations (about 10^9 a second on this
/// project's 2-core machine); beyond this, about a minute, it is skipped (NaN) rather than
/// stall a run.
const EXACT_LIMIT: f64 = 6e10;

/// The exact reference of one (N, C, alpha), computed once per cell: every replication of a
/// cell has the same value, and computing it takes longer than a replication at quick scale.
/// A replication arriving while another computes it waits for that value (`OnceLock`), so the
/// result does not depend on the thread count or order.
fn exact_reference(pmf: &[f64], n: usize, c: usize, alpha: f64) -> Result<f64, Error> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    // `None`: the integral refused its input. Its only refusal is a check of `c` against `n`,
    // so the error is rebuilt below at no cost rather than stored.
    type Memo = Mutex<HashMap<(usize, usize, u64), Arc<OnceLock<Option<f64>>>>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let slot = {
        let mut memo = MEMO
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        memo.entry((n, c, alpha.to_bits())).or_default().clone()
    };
    let exact = slot.get_or_init(|| {
        if che::exact_cost(pmf, c) > EXACT_LIMIT {
            return Some(f64::NAN);
        }
        che::lru_hit_ratio_exact(pmf, c).ok()
    });
    exact.map_or_else(|| che::lru_hit_ratio_exact(pmf, c), Ok)
}

/// Checks that involve several parameters.
fn check(p: &Params) -> Result<(), Error> {
    let (n, c) = (p.int("objects"), p.int("cache_size"));
    if c >= n {
        return Err(p.refuse(
            "cache_size",
            format!("below objects ({n}): a cache holding everything always hits"),
        ));
    }
    Ok(())
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    check(p)?;
    let n = p.int("objects") as usize;
    let law = Law::Zipf {
        alpha: p.float("alpha"),
    };
    let sampler = Sampler::new(law, n)?;
    let cap = Capacity::objects(p.int("cache_size") as u64)?;
    let (warmup, requests) = (p.int("warmup") as u64, p.int("requests") as u64);
    let hits = if p.text("policy") == "fifo" {
        measure(&mut Fifo::new(cap), &sampler, warmup, requests, rng)
    } else {
        measure(&mut Lru::new(cap), &sampler, warmup, requests, rng)
    };
    let sim = hits as f64 / requests as f64;
    let pmf = law.pmf(n)?;
    let approx = che::lru_hit_ratio(&pmf, p.int("cache_size") as f64)?;
    let exact = exact_reference(&pmf, n, p.int("cache_size") as usize, p.float("alpha"))?;
    Ok(vec![sim, approx, (sim - approx).abs(), exact])
}

/// Hits of `cache` over `requests` requests drawn from `sampler`, after `warmup` unmeasured
/// ones. Requests are drawn a chunk at a time (the same draws in the same order as one by one)
/// so that the table and cache lookups of later requests can be prefetched.
fn measure<C: Cache>(
    cache: &mut C,
    sampler: &Sampler,
    warmup: u64,
    requests: u64,
    rng: &mut Rng,
) -> u64 {
    const CHUNK: usize = 4096;
    let (mut ids, mut reqs) = (vec![0u64; CHUNK], Vec::with_capacity(CHUNK));
    let mut run = |count: u64, cache: &mut C, rng: &mut Rng| -> u64 {
        let mut hits = 0;
        let mut left = count;
        while left > 0 {
            let chunk = &mut ids[..left.min(CHUNK as u64) as usize];
            sampler.fill(rng, chunk);
            left -= chunk.len() as u64;
            reqs.clear();
            reqs.extend(chunk.iter().map(|&id| Request::new(0, id, 1)));
            hits += cache.replay(&reqs).hits;
        }
        hits
    };
    run(warmup, cache, rng);
    run(requests, cache, rng)
}

crate::sim::experiment! {
    LruChe = "lru-che",
    "simulated LRU hit ratio under IRM Zipf requests vs the Che approximation",
    PARAMS, METRICS; check, run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Experiment;
    use std::collections::BTreeMap;

    /// The Che approximation is known to be accurate for Zipf IRM with N in the thousands:
    /// we require agreement within 0.01 on one cell with 400k measured requests (the sampling
    /// standard error of the hit ratio is below 0.001 here).
    #[test]
    fn simulation_agrees_with_che() {
        let mut g = BTreeMap::new();
        g.insert("objects".to_string(), super::super::Value::Int(2000));
        g.insert("cache_size".to_string(), super::super::Value::Int(200));
        g.insert("requests".to_string(), super::super::Value::Int(400_000));
        let p = Params::resolve(PARAMS, &g).unwrap();
        let m = LruChe.run(&p, &mut crate::rng::stream(1, 0, 0)).unwrap();
        assert!(m[2] < 0.01, "{m:?}");
        assert!(m[0] > 0.3 && m[0] < 0.8, "{m:?}");
        g.insert("cache_size".to_string(), super::super::Value::Int(2000));
        let p = Params::resolve(PARAMS, &g).unwrap();
        assert!(LruChe.check(&p).is_err());
    }
}
