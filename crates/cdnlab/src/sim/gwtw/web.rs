//! The web service: one LRU cache of C unit items per server; user u's catalogue is the items
//! `u * N .. (u + 1) * N`, requested Zipf(alpha). Requests at a server are served in a random
//! order within a slot (the user order is shuffled every slot).

use super::{Config, Model, Population, Service, SlotLoad};
use crate::Error;
use crate::cache::{Cache, Capacity, lru::Lru};
use crate::rng::Rng;
use crate::workload::popularity::{Law, Sampler};
use rand::RngExt;

/// Web service state.
pub struct Web {
    caches: Vec<Lru>,
    catalogue: u64,
    sampler: Sampler,
    exclude_warmup: bool,
    /// One bit per (user, candidate, item): requested there before (so a miss is not
    /// compulsory).
    seen: Vec<u64>,
    words: usize,
    k: usize,
    order: Vec<u32>,
    targets: Vec<u32>,
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
        Ok(Web {
            caches: sizes
                .iter()
                .map(|&c| Capacity::objects(u64::from(c)).map(Lru::new))
                .collect::<Result<_, _>>()?,
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
            order: (0..m as u32).collect(),
            targets: Vec::with_capacity(k),
            slot_load: SlotLoad(vec![0; sizes.len()]),
            balances_load: pop
                .clients
                .iter()
                .any(|c| matches!(c, super::Client::P2c(_))),
        })
    }
}

impl Service for Web {
    fn best(&self) -> f64 {
        1.0
    }

    fn slot(&mut self, pop: &mut Population, rng: &mut Rng, served: &mut [f64]) {
        // Fisher-Yates: a uniformly random service order for this slot.
        for i in (1..self.order.len()).rev() {
            let j = rng.random_range(0..=i);
            self.order.swap(i, j);
        }
        if self.balances_load {
            self.slot_load.0.fill(0);
        }
        for idx in 0..self.order.len() {
            let u = self.order[idx] as usize;
            let r = self.sampler.sample(rng) as u64;
            let item = u as u64 * self.catalogue + r;
            self.targets.clear();
            pop.clients[u]
                .sel()
                .targets(&self.slot_load, rng, &mut self.targets);
            let mut hit_any = false;
            for i in 0..self.targets.len() {
                let s = self.targets[i];
                if self.balances_load {
                    self.slot_load.0[s as usize] += 1;
                }
                let hit = self.caches[s as usize].access(item, 1);
                hit_any |= hit;
                // Items are the user's own, so its first request for one at a server is always
                // a (compulsory) miss.
                let counted = match pop.clients[u].candidate_index(s) {
                    Some(j) if self.exclude_warmup => {
                        let bit = (u * self.k + j) * self.words * 64 + r as usize;
                        let (w, b) = (bit / 64, bit % 64);
                        let first = self.seen[w] & (1 << b) == 0;
                        self.seen[w] |= 1 << b;
                        !first
                    }
                    _ => true,
                };
                pop.observe(u, s, counted.then_some(f64::from(u8::from(hit))), rng);
            }
            served[u] = f64::from(u8::from(hit_any));
        }
    }
}
