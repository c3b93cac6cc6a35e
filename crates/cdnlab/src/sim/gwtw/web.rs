//! The web service: one LRU cache of C unit items per server; user u's catalogue is the items
//! `u * N .. (u + 1) * N`, requested Zipf(alpha). Requests at a server are served in a random
//! order within a slot.
//!
//! Rules: GWTW-R6 of docs/spec/gwtw.md.

use super::{Client, Config, Latency, Model, Population, Service, SlotLoad};
use crate::Error;
use crate::cache::lru_bank::{self, LruBank};
use crate::cache::{Cache, Capacity, lru::Lru};
use crate::idmap::{prefetch, prefetch_all};
use crate::rng::{Rng, splitmix64_at};
use crate::select::Event;
use crate::select::gwtw::Probe;
use crate::select::window::HitWindow;
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

    fn contains(&self, server: usize, item: u64) -> bool {
        match self {
            Caches::Bank32(b) => b.contains(server, item as u32),
            Caches::Bank(b) => b.contains(server, item),
            Caches::Linked(v) => v[server].contains(item),
        }
    }
}

/// A request a server answers each slot until the user's targets change: the user and the
/// server's index among its candidates (`NO_CANDIDATE` for per-request selection).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    user: u32,
    cand: u32,
}

const NO_CANDIDATE: u32 = u32::MAX;

/// How many requests ahead the serving loop prefetches.
const AHEAD: usize = 16;

/// Web service state.
pub struct Web {
    caches: Caches,
    catalogue: u64,
    sampler: Sampler,
    exclude_warmup: bool,
    /// One bit per (user, candidate, item): requested there before (so a miss is not
    /// compulsory).
    seen: Vec<u64>,
    exclude_rewarm: bool,
    /// With `exclude_rewarm`, one bit per (user, candidate, item): its last request there,
    /// since the user last settled there, missed.
    missed: Vec<u64>,
    words: usize,
    k: usize,
    /// Every user's requests grouped by server; where each server's group starts. Rebuilt only
    /// when some user's targets may have changed.
    by_server: Vec<Entry>,
    starts: Vec<u32>,
    stale: bool,
    /// Targets change every slot (per-request balancing, round-robin probing): always rebuild.
    volatile: bool,
    /// Scratch for the rebuild: (server, entry) in user order, one user's targets.
    pending: Vec<(u32, Entry)>,
    targets: Vec<u32>,
    /// Visiting order of users when per-request balancers choose (see `rebuild`).
    order: Vec<u32>,
    pub(super) slot_load: SlotLoad,
    balances_load: bool,
}

impl Web {
    /// Caches of `sizes[s]` items; the population decides who requests what where.
    pub fn new(cfg: &Config, sizes: &[u32], pop: &Population<HitWindow>) -> Result<Self, Error> {
        let Model::Web {
            catalogue, alpha, ..
        } = cfg.model
        else {
            return Err(Error::param("model", "video", "web for the web service"));
        };
        let m = pop.clients.len();
        let words = (catalogue as usize).div_ceil(64);
        let k = cfg.k as usize;
        let balances_load = pop.clients.iter().any(|c| c.per_request());
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
            exclude_rewarm: cfg.exclude_rewarm,
            missed: if cfg.exclude_rewarm {
                vec![0; m * k * words]
            } else {
                Vec::new()
            },
            words,
            k,
            by_server: Vec::with_capacity(m),
            starts: vec![0; sizes.len() + 1],
            stale: true,
            volatile: balances_load || cfg.gwtw.probe == Probe::RoundRobin,
            pending: Vec::with_capacity(m),
            targets: Vec::with_capacity(k),
            order: if balances_load {
                (0..m as u32).collect()
            } else {
                Vec::new()
            },
            slot_load: SlotLoad::new(sizes.len(), Latency::MissRatio(vec![1.0; sizes.len()])),
            balances_load,
        })
    }

    /// Whether user u's request for item r at candidate j, a hit or not, counts: false for the
    /// compulsory miss of its first request there and, with `exclude_rewarm`, for a miss whose
    /// previous request there hit. Records the request.
    #[inline]
    fn counted(&mut self, u: usize, j: u32, r: u32, hit: bool) -> bool {
        if j == NO_CANDIDATE {
            return true;
        }
        let bit = (u * self.k + j as usize) * self.words * 64 + r as usize;
        let (w, b) = (bit / 64, 1u64 << (bit % 64));
        let mut counts = true;
        if self.exclude_warmup {
            counts = self.seen[w] & b != 0;
            self.seen[w] |= b;
        }
        if self.exclude_rewarm {
            let missed_before = self.missed[w] & b != 0;
            if hit {
                self.missed[w] &= !b;
            } else {
                self.missed[w] |= b;
                counts &= missed_before;
            }
        }
        counts
    }

    /// User u has just settled on `to`: with `exclude_rewarm` its misses there are judged
    /// afresh (a miss recorded before it came, while others used that cache, is no evidence).
    fn arrived(&mut self, pop: &Population<HitWindow>, u: usize, to: u32) {
        if !self.exclude_rewarm {
            return;
        }
        if let Some(j) = pop.clients[u].candidate_index(to) {
            let start = (u * self.k + j) * self.words;
            self.missed[start..start + self.words].fill(0);
        }
    }

    /// Brings in what answering `e` touches at random: the user's state, its seen-bits word.
    #[inline]
    fn prefetch(&self, pop: &Population<HitWindow>, e: Entry) {
        let u = e.user as usize;
        prefetch_all(&pop.clients[u]);
        if self.exclude_warmup && e.cand != NO_CANDIDATE {
            let bit = (u * self.k + e.cand as usize) * self.words * 64;
            prefetch(&self.seen[bit / 64]);
        }
    }

    /// Groups every user's targets by server (counting sort).
    fn rebuild(&mut self, pop: &mut Population<HitWindow>, rng: &mut Rng) {
        let m = pop.clients.len();
        self.pending.clear();
        if self.balances_load {
            // Per-request balancers choose one after another against in-slot loads: visit the
            // users in a random order so that none is always first.
            self.slot_load.requests.fill(0);
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
            self.targets.clear();
            pop.targets(u, &self.slot_load, rng, &mut self.targets);
            for &server in &self.targets {
                if self.balances_load {
                    self.slot_load.requests[server as usize] += 1;
                }
                let cand = pop.clients[u]
                    .candidate_index(server)
                    .map_or(NO_CANDIDATE, |j| j as u32);
                self.pending.push((
                    server,
                    Entry {
                        user: u as u32,
                        cand,
                    },
                ));
            }
        }
        self.starts.fill(0);
        for (s, _) in &self.pending {
            self.starts[*s as usize + 1] += 1;
        }
        for s in 1..self.starts.len() {
            self.starts[s] += self.starts[s - 1];
        }
        self.by_server.clear();
        self.by_server.resize(self.pending.len(), Entry::default());
        let mut fill = self.starts.clone();
        for (s, e) in &self.pending {
            let f = &mut fill[*s as usize];
            self.by_server[*f as usize] = *e;
            *f += 1;
        }
        self.stale = self.volatile;
    }
}

impl Service<HitWindow> for Web {
    fn best(&self) -> f64 {
        1.0
    }

    /// Equivalent to serving users one by one in a random order (each server's requests arrive
    /// in a uniformly random order, and a user's state changes only through its own outcomes),
    /// but streaming through the caches in server order: every user draws its item, then each
    /// server shuffles its group of requests, answers them and feeds each outcome back to its
    /// user at once. The grouping is kept from slot to slot while no user's targets change.
    fn slot(&mut self, pop: &mut Population<HitWindow>, rng: &mut Rng, served: &mut [f64]) -> u64 {
        let m = pop.clients.len();
        if self.stale {
            self.rebuild(pop, rng);
        }
        // User u's item this slot is output u of a fresh SplitMix64 stream: the same at each
        // of its targets, with nothing stored.
        let key: u64 = rng.random();
        served[..m].fill(0.0);
        for s in 0..self.starts.len() - 1 {
            let (a, b) = (self.starts[s] as usize, self.starts[s + 1] as usize);
            let group = &mut self.by_server[a..b];
            for i in (1..group.len()).rev() {
                let j = rng.random_range(0..=i);
                group.swap(i, j);
            }
            let mut hits = 0u64;
            for idx in a..b {
                if let Some(e) = self.by_server.get(idx + AHEAD) {
                    self.prefetch(pop, *e);
                }
                // Second stage: candidates kept outside the user's record (k > 2), whose
                // address the record prefetched above holds.
                if let Some(e) = self.by_server.get(idx + AHEAD / 2) {
                    pop.clients[e.user as usize].prefetch_candidates();
                }
                let Entry { user, cand } = self.by_server[idx];
                let u = user as usize;
                let r = self.sampler.pick(splitmix64_at(key, u64::from(user))) as u32;
                let hit = self
                    .caches
                    .access(s, u64::from(user) * self.catalogue + u64::from(r));
                let counted = self.counted(u, cand, r, hit);
                if hit {
                    served[u] = 1.0;
                    hits += 1;
                }
                let j = (cand != NO_CANDIDATE).then_some(cand as usize);
                let value = f64::from(u8::from(hit));
                let event = pop.observe(u, s as u32, j, counted.then_some(value), rng);
                if event != Event::None {
                    self.stale = true;
                    if let Event::Settled(to) | Event::Moved(_, to) = event {
                        self.arrived(pop, u, to);
                    }
                }
            }
            // What a Prequal probe of this server reports next slot (see `Latency`).
            if let Latency::MissRatio(miss) = &mut self.slot_load.latency
                && b > a
            {
                miss[s] = 1.0 - hits as f64 / (b - a) as f64;
            }
        }
        self.by_server.len() as u64
    }

    /// Absorbing when the state is optimal, every user is a GWTW client that only the best
    /// cannot move (`GwtwCore::steady`), and each user's whole catalogue is in its server's
    /// cache: then every later request hits (a hit evicts nothing), so every later slot serves
    /// 1 to each user, one request each, and changes no client.
    fn absorbed(&self, pop: &Population<HitWindow>) -> Option<u64> {
        // A hit (1) must be no shortfall for the clients.
        if !pop.optimal() || self.best() < pop.gwtw.best - crate::select::gwtw::EPS {
            return None;
        }
        for (u, c) in pop.clients.iter().enumerate() {
            let Client::Gwtw(g) = c else {
                return None;
            };
            let s = g.settled()? as usize;
            let first = u as u64 * self.catalogue;
            if !g.steady(&pop.gwtw)
                || !(first..first + self.catalogue).all(|i| self.caches.contains(s, i))
            {
                return None;
            }
        }
        Some(pop.clients.len() as u64)
    }
}
