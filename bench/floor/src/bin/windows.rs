//! The exact LRU curve's window pass (`cdnlab::cache::mrc::LruWindows`) alone, with the trace
//! already in memory: no start-up, reading or output, best of 20 in one process, beside the
//! floor of its object table and bitmap without any window. Also the same pass over ids
//! renumbered 0, 1, 2, ... (`LruWindows::renumbered`, an array instead of a hashed table), and
//! the renumbering itself (`cdnlab::idmap::Renumber`, which `cdnlab mrc` runs on the reading
//! thread). It backs the per-request figures of docs/cache.md ("Tried in the session of the
//! fourth run", "Renumbered ids"); not part of cdnlab, not built by CI.
//!
//!     cargo run --release --manifest-path bench/floor/Cargo.toml --bin windows -- \
//!         TRACE.oracleGeneral 1000,1361,1852,2520,3429,4666,6350,8640,11758,16000
//!
//! An empty size list (`""`) times the pass with no window.
#![allow(clippy::all)]

use cdnlab::cache::mrc::LruWindows;
use cdnlab::idmap::{KeyTable, Renumber};
use cdnlab::workload::trace;
use std::time::Instant;

const RUNS: usize = 20;

fn best(mut f: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(sizes)) = (args.next(), args.next()) else {
        eprintln!("usage: windows TRACE.oracleGeneral SIZE,SIZE,... (\"\" for none)");
        std::process::exit(2);
    };
    let reqs = trace::parse_oracle_general(&std::fs::read(&path).expect("read the trace"), false)
        .expect("an oracleGeneral trace");
    let caps: Vec<u64> = sizes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim()
                .parse()
                .expect("sizes are whole numbers of objects")
        })
        .collect();
    let n = reqs.len() as f64;
    let mut hits = Vec::new();
    let pass = best(|| {
        let mut w = LruWindows::new(&caps);
        for c in reqs.chunks(1 << 14) {
            w.replay(c);
        }
        hits = caps.iter().map(|&c| w.hits(c).unwrap().0).collect();
    });
    let mut renumbered = reqs.clone();
    Renumber::new().apply(&mut renumbered);
    let mut dense_hits = Vec::new();
    let dense = best(|| {
        let mut w = LruWindows::renumbered(&caps);
        for c in renumbered.chunks(1 << 14) {
            w.replay(c);
        }
        dense_hits = caps.iter().map(|&c| w.hits(c).unwrap().0).collect();
    });
    assert_eq!(dense_hits, hits, "the same hits over renumbered ids");
    // The renumbering of a fresh copy, chunk by chunk (the copy is timed too: a memcpy).
    let mut copy = reqs.clone();
    let renumber = best(|| {
        copy.copy_from_slice(&reqs);
        let mut r = Renumber::new();
        for c in copy.chunks_mut(1 << 14) {
            r.apply(c);
        }
    });
    // The table and the bitmap a pass keeps, nothing else: each request finds its object's
    // previous position, clears its bit and sets its own (positions wrap in a fixed bitmap).
    let mut sum = 0u64;
    let floor = best(|| {
        let mut last: KeyTable<u64> = KeyTable::with_capacity(1 << 10);
        let mut words = vec![0u64; 1 << 14];
        for (i, r) in reqs.iter().enumerate() {
            let now = i % (1 << 20);
            match last.find(r.id) {
                Ok(b) => {
                    let p = std::mem::replace(last.value_mut(b), now as u64) as usize;
                    sum += p as u64 & 1;
                    words[(p / 64) & 0x3fff] &= !(1 << (p % 64));
                }
                Err(_) => last.insert(r.id, now as u64),
            }
            words[(now / 64) & 0x3fff] |= 1 << (now % 64);
        }
    });
    println!("{} requests, {} sizes", reqs.len(), caps.len());
    println!(
        "windows pass        {:8.3} ms  {:6.1} ns/request  hits {:?}",
        pass * 1e3,
        pass * 1e9 / n,
        hits
    );
    println!(
        "table + bitmap only {:8.3} ms  {:6.1} ns/request  ({sum})",
        floor * 1e3,
        floor * 1e9 / n
    );
    println!(
        "renumbered pass     {:8.3} ms  {:6.1} ns/request",
        dense * 1e3,
        dense * 1e9 / n
    );
    println!(
        "renumbering + copy  {:8.3} ms  {:6.1} ns/request",
        renumber * 1e3,
        renumber * 1e9 / n
    );
}
