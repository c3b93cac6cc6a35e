//! Drive the Go-With-The-Winner selector against your own servers: here 40 clients, 40 small
//! LRU caches, each client with its own 5 objects and k = 2 random candidate servers. Clients
//! that share a cache evict each other's objects; GWTW moves each to a candidate where it
//! hits. Compare with k = 1 (a fixed random server).
//!
//!     cargo run --release -p cdnlab --example gwtw_selector

use cdnlab::cache::{Cache, Capacity, Policy};
use cdnlab::select::gwtw::{Gwtw, GwtwConfig};
use cdnlab::select::{NoLoad, Selector};
use rand::RngExt;

const CLIENTS: u32 = 40;
const SERVERS: u32 = 40;
const OBJECTS: u64 = 5; // per client; a cache holds one client's objects
const ROUNDS: usize = 400;

fn run(k: usize, seed: u64) -> Result<f64, cdnlab::Error> {
    let mut rng = cdnlab::rng::stream(seed, 0, 0);
    let mut servers: Vec<Box<dyn Cache + Send>> = (0..SERVERS)
        .map(|_| Ok(Policy::Lru.build(Capacity::objects(OBJECTS)?)))
        .collect::<Result<_, cdnlab::Error>>()?;
    // k distinct random candidates per client; hit rate is the value GWTW compares (best 1).
    let mut clients: Vec<Gwtw> = (0..CLIENTS)
        .map(|_| {
            let mut c: Vec<u32> = Vec::new();
            while c.len() < k {
                let s = rng.random_range(0..SERVERS);
                if !c.contains(&s) {
                    c.push(s);
                }
            }
            Gwtw::new(c, GwtwConfig::default())
        })
        .collect::<Result<_, _>>()?;
    let (mut hits, mut total) = (0u64, 0u64);
    let mut targets = Vec::new();
    for round in 0..ROUNDS {
        for (i, client) in clients.iter_mut().enumerate() {
            let object = i as u64 * OBJECTS + rng.random_range(0..OBJECTS);
            targets.clear();
            client.targets(&NoLoad, &mut rng, &mut targets);
            for &s in &targets {
                let hit = servers[s as usize].access(object, 1);
                client.observe(s, Some(if hit { 1.0 } else { 0.0 }), &mut rng);
                if round >= ROUNDS / 2 && targets.len() == 1 {
                    hits += u64::from(hit);
                    total += 1;
                }
            }
        }
    }
    Ok(hits as f64 / total.max(1) as f64)
}

fn main() -> Result<(), cdnlab::Error> {
    // k = 1 is GWTW with one candidate: it can only stay where it is.
    for k in [1, 2, 3] {
        let rates: Vec<f64> = (0..5).map(|seed| run(k, seed)).collect::<Result<_, _>>()?;
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        println!("k = {k}: hit rate in the second half {mean:.3} (5 seeds)");
    }
    Ok(())
}
