//! Lower bounds for an exact LRU/FIFO replay on this machine, with the trace already in memory
//! (no reading, no decoding, unit sizes, nothing but the cache): a lookup-only pass, LRU and FIFO
//! built three ways, and both without evictions (evicted objects' entries left stale in the
//! table and purged in bulk). It backs the analysis of the speed targets in docs/cache.md; it is
//! not part of cdnlab and is not built by CI.
//!
//!     cargo run --release --manifest-path bench/floor/Cargo.toml -- bench/data/zipf0.8_1000000_10000000.oracleGeneral
#![allow(clippy::all)]

use std::time::Instant;

// The hash and the prefetch of cdnlab's own id map, so that the floors hash as it does.
use cdnlab::idmap::{mix64 as fmix, prefetch};

const NIL: u32 = u32::MAX;
const VACANT: u32 = u32::MAX - 1;

#[derive(Clone, Copy)]
struct E { key: u64, a: u32, b: u32 } // FIFO: a = ring pos, b = unused/VACANT mark; LRU: a=prev, b=next

/// Table of exactly 2 buckets per object (load 1/2, 32 B/object) instead of the next power of two.
static EXACT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct Table { t: Vec<E>, mask: usize }
#[inline] fn nx(i: usize, n: usize) -> usize { if i + 1 == n { 0 } else { i + 1 } }
#[inline] fn dist(a: usize, b: usize, n: usize) -> usize { if b >= a { b - a } else { b + n - a } }
impl Table {
    fn new(cap: usize) -> Self {
        let n = if EXACT.load(std::sync::atomic::Ordering::Relaxed) { cap * 2 } else { (cap * 2).next_power_of_two() }.max(8);
        Table { t: vec![E { key: 0, a: VACANT, b: VACANT }; n], mask: n }
    }
    #[inline] fn home(&self, k: u64) -> usize { ((fmix(k) as u128 * self.mask as u128) >> 64) as usize }
    #[inline] fn prefetch(&self, k: u64) { prefetch(&self.t[self.home(k)]); }
    /// Ok(bucket) if found, Err(first vacant bucket)
    #[inline]
    fn find(&self, k: u64) -> Result<usize, usize> {
        let mut i = self.home(k);
        loop {
            let e = &self.t[i];
            if e.b == VACANT { return Err(i); }
            if e.key == k { return Ok(i); }
            i = nx(i, self.mask);
        }
    }
}

fn fifo(ids: &[u64], cap: usize) -> u64 {
    let mut tb = Table::new(cap);
    let mut ring: Vec<u32> = vec![NIL; cap];
    let mut head = 0usize; // next position to write (oldest when full)
    let mut len = 0usize;
    let mut hits = 0u64;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&n) = ids.get(i + 8) { tb.prefetch(n); }
        match tb.find(id) {
            Ok(_) => hits += 1,
            Err(_) => {
                if len == cap {
                    // remove ring[head]
                    let mut hole = ring[head] as usize;
                    let mask = tb.mask;
                    let mut j = nx(hole, mask);
                    loop {
                        let e = tb.t[j];
                        if e.b == VACANT { break; }
                        let home = tb.home(e.key);
                        if dist(home, j, mask) >= dist(hole, j, mask) {
                            tb.t[hole] = e;
                            ring[e.a as usize] = hole as u32;
                            hole = j;
                        }
                        j = nx(j, mask);
                    }
                    tb.t[hole].b = VACANT;
                    len -= 1;
                }
                let slot = match tb.find(id) { Err(s) => s, Ok(_) => unreachable!() };
                tb.t[slot] = E { key: id, a: head as u32, b: 0 };
                ring[head] = slot as u32;
                head += 1; if head == cap { head = 0; }
                len += 1;
                // prefetch next victim
                prefetch(&tb.t[(ring[head] as usize).min(tb.mask - 1)]);
            }
        }
    }
    hits
}

fn lru(ids: &[u64], cap: usize) -> u64 {
    let mut tb = Table::new(cap);
    let (mut head, mut tail) = (NIL, NIL);
    let mut len = 0usize;
    let mut hits = 0u64;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&n) = ids.get(i + 8) { tb.prefetch(n); }
        match tb.find(id) {
            Ok(s) => {
                hits += 1;
                let s = s as u32;
                if head != s {
                    let E { a: p, b: n, .. } = tb.t[s as usize];
                    // unlink (p != NIL since not head)
                    tb.t[p as usize].b = n;
                    if n != NIL { tb.t[n as usize].a = p; } else { tail = p; }
                    tb.t[s as usize].a = NIL;
                    tb.t[s as usize].b = head;
                    tb.t[head as usize].a = s;
                    head = s;
                }
            }
            Err(_) => {
                if len == cap {
                    let t = tail;
                    let p = tb.t[t as usize].a;
                    tail = p;
                    if p != NIL { tb.t[p as usize].b = NIL; } else { head = NIL; }
                    let mut hole = t as usize;
                    let mask = tb.mask;
                    let mut j = nx(hole, mask);
                    loop {
                        let e = tb.t[j];
                        if e.b == VACANT { break; }
                        let home = tb.home(e.key);
                        if dist(home, j, mask) >= dist(hole, j, mask) {
                            tb.t[hole] = e;
                            let h = hole as u32;
                            if e.a != NIL { tb.t[e.a as usize].b = h; } else { head = h; }
                            if e.b != NIL { tb.t[e.b as usize].a = h; } else { tail = h; }
                            hole = j;
                        }
                        j = nx(j, mask);
                    }
                    tb.t[hole].b = VACANT;
                    len -= 1;
                }
                let slot = match tb.find(id) { Err(s) => s as u32, Ok(_) => unreachable!() };
                tb.t[slot as usize] = E { key: id, a: NIL, b: head };
                if head != NIL { tb.t[head as usize].a = slot; } else { tail = slot; }
                head = slot;
                len += 1;
                if tail != NIL { prefetch(&tb.t[tb.t[tail as usize].a.min(tb.mask as u32 - 1) as usize]); }
            }
        }
    }
    hits
}

fn lookups(ids: &[u64], cap: usize) -> u64 {
    let mut tb = Table::new(cap);
    let mut n = 0;
    for &id in ids { if n == cap { break; } if let Err(s) = tb.find(id) { tb.t[s] = E { key: id, a: 0, b: 0 }; n += 1; } }
    let mut hits = 0u64;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&n) = ids.get(i + 8) { tb.prefetch(n); }
        if tb.find(id).is_ok() { hits += 1; }
    }
    hits
}
#[allow(dead_code)]
fn lookups_branchless(ids: &[u64], cap: usize) -> u64 {
    let mut tb = Table::new(cap);
    let mut n = 0;
    for &id in ids { if n == cap { break; } if let Err(s) = tb.find(id) { tb.t[s] = E { key: id, a: 0, b: 0 }; n += 1; } }
    let mut hits = 0u64;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&n) = ids.get(i + 8) { tb.prefetch(n); }
        hits += tb.find(id).is_ok() as u64;
    }
    hits
}

fn hb_lookups(ids: &[u64], cap: usize) -> u64 {
    let mut t: hashbrown::HashTable<(u64, u32)> = hashbrown::HashTable::with_capacity(cap);
    for &id in ids { if t.len() == cap { break; } let h = fmix(id); if t.find(h, |e| e.0 == id).is_none() { t.insert_unique(h, (id, 0), |e| fmix(e.0)); } }
    let mut hits = 0u64;
    for &id in ids.iter() {
        let h = fmix(id);
        hits += t.find(h, |e| e.0 == id).is_some() as u64;
    }
    hits
}
#[allow(dead_code)]
fn hb_fifo(ids: &[u64], cap: usize) -> u64 {
    let mut t: hashbrown::HashTable<(u64, u32)> = hashbrown::HashTable::with_capacity(cap);
    let mut ring: Vec<u64> = vec![0; cap];
    let mut head = 0; let mut len = 0;
    let mut hits = 0u64;
    for &id in ids.iter() {
        let h = fmix(id);
        if t.find(h, |e| e.0 == id).is_some() { hits += 1; continue; }
        if len == cap {
            let old = ring[head];
            if let Ok(e) = t.find_entry(fmix(old), |e| e.0 == old) { e.remove(); }
            len -= 1;
        }
        t.insert_unique(h, (id, head as u32), |e| fmix(e.0));
        ring[head] = id; head += 1; if head == cap { head = 0; } len += 1;
    }
    hits
}

#[derive(Clone, Copy)]
struct Node { key: u64, prev: u32, next: u32 }
/// hashbrown table of slots (key in nodes) + doubly linked nodes; lru=true moves on hit.
fn hb_list(ids: &[u64], cap: usize, lru: bool, inline_key: bool) -> u64 {
    let mut t: hashbrown::HashTable<(u64, u32)> = hashbrown::HashTable::with_capacity(cap);
    let mut ts: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(cap);
    let mut nodes: Vec<Node> = Vec::with_capacity(cap);
    let (mut head, mut tail) = (NIL, NIL);
    let mut hits = 0u64;
    for &id in ids.iter() {
        let h = fmix(id);
        let found = if inline_key { t.find(h, |e| e.0 == id).map(|e| e.1) } else { ts.find(h, |&s| nodes[s as usize].key == id).copied() };
        if let Some(s) = found {
            hits += 1;
            if lru && head != s {
                let Node { prev: p, next: n, .. } = nodes[s as usize];
                nodes[p as usize].next = n;
                if n != NIL { nodes[n as usize].prev = p; } else { tail = p; }
                nodes[s as usize].prev = NIL; nodes[s as usize].next = head;
                nodes[head as usize].prev = s; head = s;
            }
            continue;
        }
        let s = if nodes.len() == cap {
            let s = tail;
            let p = nodes[s as usize].prev;
            tail = p;
            if p != NIL { nodes[p as usize].next = NIL; } else { head = NIL; }
            let old = nodes[s as usize].key;
            if inline_key {
                if let Ok(e) = t.find_entry(fmix(old), |e| e.0 == old) { e.remove(); }
            } else {
                if let Ok(e) = ts.find_entry(fmix(old), |&x| x == s) { e.remove(); }
            }
            s
        } else { nodes.push(Node { key: 0, prev: NIL, next: NIL }); (nodes.len() - 1) as u32 };
        nodes[s as usize] = Node { key: id, prev: NIL, next: head };
        if head != NIL { nodes[head as usize].prev = s; } else { tail = s; }
        head = s;
        if inline_key { t.insert_unique(h, (id, s), |e| fmix(e.0)); } else { let n = &nodes; ts.insert_unique(h, s, |&x| fmix(n[x as usize].key)); }
    }
    hits
}

/// A table whose entries are never removed on eviction: (id, value), value u64::MAX vacant.
/// Evicted objects' entries stay, recognised as stale by their value, until the table reaches
/// 1/2 load and is rebuilt with the live ones (`purge`). At least `factor` buckets per cached
/// object (a power of two in all).
struct Lazy { t: Vec<(u64, u64)>, mask: usize, len: usize }
impl Lazy {
    fn new(buckets: usize) -> Self { let n = buckets.next_power_of_two(); Lazy { t: vec![(0, u64::MAX); n], mask: n - 1, len: 0 } }
    #[inline] fn home(&self, k: u64) -> usize { fmix(k) as usize & self.mask }
    #[inline] fn prefetch(&self, k: u64) { prefetch(&self.t[self.home(k)]); }
    #[inline] fn find(&self, k: u64) -> Result<usize, usize> {
        let mut i = self.home(k);
        loop {
            let e = &self.t[i];
            if e.1 == u64::MAX { return Err(i); }
            if e.0 == k { return Ok(i); }
            i = (i + 1) & self.mask;
        }
    }
    #[cold] #[inline(never)]
    fn purge(&mut self, keep: impl Fn(u64) -> bool) {
        let old = std::mem::replace(&mut self.t, vec![(0, u64::MAX); self.mask + 1]);
        self.len = 0;
        for (k, v) in old { if v != u64::MAX && keep(v) { let Err(i) = self.find(k) else { unreachable!() }; self.t[i] = (k, v); self.len += 1; } }
    }
}

/// FIFO without evictions: an object's value is the number of misses before its insertion; it
/// is cached while fewer than `cap` insertions came after it.
fn fifo_lazy(ids: &[u64], cap: usize, factor: usize) -> u64 {
    let mut tb = Lazy::new(cap * factor);
    let limit = (tb.mask + 1) / 2;
    let c = cap as u64;
    let mut misses = 0u64;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&n) = ids.get(i + 8) { tb.prefetch(n); }
        match tb.find(id) {
            Ok(b) => {
                let v = tb.t[b].1;
                if v + c < misses { tb.t[b].1 = misses; misses += 1; }
            }
            Err(b) => {
                tb.t[b] = (id, misses); misses += 1; tb.len += 1;
                if tb.len >= limit { let m = misses; tb.purge(|v| v + c >= m); }
            }
        }
    }
    ids.len() as u64 - misses
}

/// LRU without evictions: an object's value is its latest request's position; a bitmap marks
/// every object's latest position, and `boundary` is the oldest cached one's: an object is
/// cached when its position is at or above it; a miss moves it past the next mark.
fn lru_lazy(ids: &[u64], cap: usize, factor: usize) -> u64 {
    let mut tb = Lazy::new(cap * factor);
    let limit = (tb.mask + 1) / 2;
    let mut bits = vec![0u64; ids.len() / 64 + 2];
    let mut boundary = 0u64;
    let mut live = 0usize;
    let mut hits = 0u64;
    for (t, &id) in ids.iter().enumerate() {
        let t = t as u64;
        if let Some(&n) = ids.get(t as usize + 8) { tb.prefetch(n); }
        let r = tb.find(id);
        let b = match r { Ok(b) | Err(b) => b };
        let v = if r.is_ok() { tb.t[b].1 } else { 0 };
        if r.is_ok() && v >= boundary {
            hits += 1;
            bits[(v >> 6) as usize] &= !(1u64 << (v & 63));
        } else {
            live += 1;
            if live > cap {
                let mut w = (boundary >> 6) as usize;
                let mut word = bits[w] & (!0u64 << (boundary & 63));
                while word == 0 { w += 1; word = bits[w]; }
                let e = (w as u64) * 64 + word.trailing_zeros() as u64;
                bits[w] &= !(1u64 << (e & 63));
                boundary = e + 1;
                live -= 1;
            }
        }
        bits[(t >> 6) as usize] |= 1u64 << (t & 63);
        if r.is_ok() { tb.t[b].1 = t; } else {
            tb.t[b] = (id, t); tb.len += 1;
            if tb.len >= limit { let bd = boundary; tb.purge(|v| v >= bd); }
        }
    }
    hits
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("usage: floor TRACE.oracleGeneral");
    let ids: Vec<u64> = bytes.chunks_exact(24).map(|r| u64::from_le_bytes(r[4..12].try_into().unwrap())).collect();
    let time = |f: &dyn Fn() -> u64| {
        let mut best = f64::MAX;
        let mut hits = 0;
        for _ in 0..3 {
            let t = Instant::now();
            hits = f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        (best, 1.0 - hits as f64 / ids.len() as f64)
    };
    println!("{} requests; seconds for the whole trace in memory (best of 3), miss ratio", ids.len());
    for cap in [10000usize, 100000] {
        let row = |name: &str, (t, m): (f64, f64)| println!("{cap:>7} {name:<44} {t:.3} s {:>5.1} ns/req  miss {m:.7}", t * 1e9 / ids.len() as f64);
        row("hash only (fmix64 of every id)", time(&|| ids.iter().map(|&i| std::hint::black_box(fmix(i)) & 1).sum()));
        for exact in [false, true] {
            EXACT.store(exact, std::sync::atomic::Ordering::Relaxed);
            let tag = if exact { "2 buckets/object" } else { "power-of-two buckets" };
            row(&format!("lookups only, inline keys, {tag}"), time(&|| lookups(&ids, cap)));
            row(&format!("FIFO ring, inline keys, {tag}"), time(&|| fifo(&ids, cap)));
            row(&format!("LRU links in buckets, {tag}"), time(&|| lru(&ids, cap)));
        }
        row("lookups only, hashbrown", time(&|| hb_lookups(&ids, cap)));
        for f in [4usize, 8] {
            // 16-byte buckets, f per cached object rounded up to a power of two: 16 x f bytes
            // per object or more (the LRU's bitmap is one bit per request here, a ring in a real
            // replay).
            row(&format!("FIFO, no evictions, {f} buckets/object"), time(&|| fifo_lazy(&ids, cap, f)));
            row(&format!("LRU, no evictions, {f} buckets/object"), time(&|| lru_lazy(&ids, cap, f)));
        }
        row("FIFO, hashbrown + slot array", time(&|| hb_list(&ids, cap, false, false)));
        row("LRU, hashbrown + slot array", time(&|| hb_list(&ids, cap, true, false)));
    }
}
