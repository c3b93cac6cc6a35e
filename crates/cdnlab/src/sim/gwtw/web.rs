//! The web service: one LRU cache of C unit items per server; user u's catalogue is the items
//! `u * N .. (u + 1) * N`, requested Zipf(alpha). Requests at a server are served in a random
//! order within a slot.

use super::{Client, Config, Model, Population, Service, SlotLoad};
use crate::Error;
use crate::cache::lru_bank::{self, LruBank};
use crate::cache::{Cache, Capacity, lru::Lru};
use crate::rng::Rng;
use crate::workload::popularity::{Law, Sampler};
use rand::RngExt;

/// The servers' LRU caches: a bank (one arena, streamed in server order) when every capacity is
/// small, linked LRUs otherwise.
enum Caches {
    /// Item ids below 2^32 (users x catalogue): half the memory to scan.
    Bank32(LruBank<u32>),
    Bank(LruBank<u64>),
    Linked(Vec<Lru>),
}

impl Caches {
    fn new(sizes: &[u32], items: u64) -> Result<Self, Error> {
        let small = sizes.iter().all(|&c| c <= lru_bank::MAX_OBJECTS);
        Ok(if small && items <= 1 << 32 {
            Caches::Bank32(LruBank::new(sizes)?)
        } else if small {
            Caches::Bank(LruBank::new(sizes)?)
        } else {
            Caches::Linked(
                sizes
                    .iter()
                    .map(|&c| Capacity::objects(u64::from(c)).map(Lru::new))
                    .collect::<Result<_, _>>()?,
            )
        })
    }

    #[inline]
    fn access(&mut self, server: usize, item: u64) -> bool {
        match self {
            Caches::Bank32(b) => b.access(server, item as u32),
            Caches::Bank(b) => b.access(server, item),
            Caches::Linked(v) => v[server].access(item, 1),
        }
    }
}

/// One request of a slot: who asks whom for what, and (once served) whether it hit.
#[derive(Debug, Clone, Copy, Default)]
struct Req {
    user: u32,
    server: u32,
    item: u32,
    hit: bool,
}

/// Web service state.
pub struct Web {
    caches: Caches,
    catalogue: u64,
    sampler: Sampler,
    exclude_warmup: bool,
    /// One bit per (user, candidate, item): requested there before (so a miss is not
    /// compulsory).
    seen: Vec<u64>,
    words: usize,
    k: usize,
    /// This slot's requests in user order; the same grouped by server (with their index in
    /// `reqs`); where each server's group starts.
    reqs: Vec<Req>,
    by_server: Vec<(Req, u32)>,
    starts: Vec<u32>,
    targets: Vec<u32>,
    /// Visiting order of users when per-request balancers choose (see `slot`).
    order: Vec<u32>,
    slot_load: SlotLoad,
    balances_load: bool,
}

impl Web {
    /// Caches of `sizes[s]` items; the population decides who requests what where.
    pub fn new(cfg: &Config, sizes: &[u32], pop: &Population) -> Result<Self, Error> {
        let Model::Web {
            catalogue, alpha, ..
        } = cfg.model
        else {
            return Err(Error::param("model", "video", "web for the web service"));
        };
        let m = pop.clients.len();
        let words = (catalogue as usize).div_ceil(64);
        let k = cfg.k as usize;
        let balances_load = pop.clients.iter().any(|c| matches!(c, Client::P2c(_)));
        Ok(Web {
            caches: Caches::new(sizes, m as u64 * u64::from(catalogue))?,
            catalogue: u64::from(catalogue),
            sampler: Sampler::new(Law::Zipf { alpha }, catalogue as usize)?,
            exclude_warmup: cfg.exclude_warmup,
            seen: if cfg.exclude_warmup {
                vec![0; m * k * words]
            } else {
                Vec::new()
            },
            words,
            k,
            reqs: Vec::with_capacity(m * k),
            by_server: Vec::with_capacity(m * k),
            starts: vec![0; sizes.len() + 1],
            targets: Vec::with_capacity(k),
            order: if balances_load {
                (0..m as u32).collect()
            } else {
                Vec::new()
            },
            slot_load: SlotLoad(vec![0; sizes.len()]),
            balances_load,
        })
    }

    /// Whether user u's request for item r at candidate j counts (false for the compulsory
    /// miss of its first request there), recording the request.
    #[inline]
    fn counted(&mut self, u: usize, j: Option<usize>, r: u32) -> bool {
        match j {
            Some(j) if self.exclude_warmup => {
                let bit = (u * self.k + j) * self.words * 64 + r as usize;
                let (w, b) = (bit / 64, bit % 64);
                let first = self.seen[w] & (1 << b) == 0;
                self.seen[w] |= 1 << b;
                !first
            }
            _ => true,
        }
    }
}

impl Service for Web {
    fn best(&self) -> f64 {
        1.0
    }

    /// Three passes, equivalent to serving users one by one in a random order (each server's
    /// requests arrive in a uniformly random order, and a user's own state changes only through
    /// its own outcomes) but streaming through memory: (1) every user picks its item and targets;
    /// (2) the requests are grouped by server (counting sort), each group is shuffled, and the
    /// servers serve their groups in server order; (3) outcomes are fed back in user order.
    fn slot(&mut self, pop: &mut Population, rng: &mut Rng, served: &mut [f64]) -> u64 {
        let m = pop.clients.len();
        self.reqs.clear();
        if self.balances_load {
            // Per-request balancers choose one after another against in-slot loads: visit the
            // users in a random order so that none is always first.
            self.slot_load.0.fill(0);
            for i in (1..m).rev() {
                let j = rng.random_range(0..=i);
                self.order.swap(i, j);
            }
        }
        for idx in 0..m {
            let u = if self.balances_load {
                self.order[idx] as usize
            } else {
                idx
            };
            let item = self.sampler.sample(rng) as u32;
            self.targets.clear();
            pop.clients[u].targets(&self.slot_load, rng, &mut self.targets);
            for &server in &self.targets {
                if self.balances_load {
                    self.slot_load.0[server as usize] += 1;
                }
                self.reqs.push(Req {
                    user: u as u32,
                    server,
                    item,
                    hit: false,
                });
            }
        }
        self.starts.fill(0);
        for q in &self.reqs {
            self.starts[q.server as usize + 1] += 1;
        }
        for s in 1..self.starts.len() {
            self.starts[s] += self.starts[s - 1];
        }
        self.by_server.clear();
        self.by_server.resize(self.reqs.len(), (Req::default(), 0));
        let mut fill = self.starts.clone();
        for (i, q) in self.reqs.iter().enumerate() {
            let f = &mut fill[q.server as usize];
            self.by_server[*f as usize] = (*q, i as u32);
            *f += 1;
        }
        for s in 0..self.starts.len() - 1 {
            let group = &mut self.by_server[self.starts[s] as usize..self.starts[s + 1] as usize];
            for i in (1..group.len()).rev() {
                let j = rng.random_range(0..=i);
                group.swap(i, j);
            }
            for (q, i) in group.iter() {
                let item = u64::from(q.user) * self.catalogue + u64::from(q.item);
                self.reqs[*i as usize].hit = self.caches.access(s, item);
            }
        }
        served[..m].fill(0.0);
        for i in 0..self.reqs.len() {
            let q = self.reqs[i];
            let u = q.user as usize;
            let j = pop.clients[u].candidate_index(q.server);
            let counted = self.counted(u, j, q.item);
            if q.hit {
                served[u] = 1.0;
            }
            let value = f64::from(u8::from(q.hit));
            pop.observe(u, q.server, j, counted.then_some(value), rng);
        }
        self.reqs.len() as u64
    }
}
