//! The Go-With-The-Winner model (spec: `docs/spec/gwtw.md`; as implemented: `docs/gwtw.md`).
//!
//! n servers, m = lambda n users, time in slots; each user makes one request (web) or streams one
//! slot (video) per slot. Users choose servers with a [`crate::select::Selector`]: GWTW with k
//! candidates (a fraction `partial` of users; the others k = 1), per-request power of two
//! choices, or an oracle's optimal assignment. The service model is [`web`] (an LRU cache of C
//! unit items per server, a disjoint Zipf catalogue of N items per user) or [`video`] (bandwidth
//! B per server shared equally, each stream capped at r_max).
//!
//! The engine is written once over both services: [`Population`] holds the clients and the
//! settled load of every server (so optimality — no server above its capacity c_s of users —
//! is known at every slot), and each service serves one slot of requests.
//!
//! Rules: GWTW-R1 and GWTW-R5 (driving `select::gwtw`) of docs/spec/gwtw.md.

pub mod balls;
pub mod experiment;
pub mod orient;
pub mod video;
pub mod web;

use crate::Error;
use crate::rng::Rng;
use crate::select::fixed::Fixed;
use crate::select::gwtw::{GwtwConfig, GwtwCore};
use crate::select::p2c::P2c;
use crate::select::prequal::{DEFAULT_Q_RIF, Prequal};
use crate::select::window::{HitWindow, ValueWindow, Window};
use crate::select::{Event, Load, Selector, matching};
use rand::RngExt;

crate::registry! {
    /// How users choose servers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum UserPolicy: "user policy" {
        /// GWTW with k candidates (k = 1: a random server kept forever).
        Gwtw => "gwtw",
        /// Per-request power of two choices on the servers' in-slot load.
        P2c => "p2c",
        /// Per request, Prequal's hot-cold rule over a pool of probes (requests in flight and
        /// latency: `select::prequal::Prequal`), `prequal_probes` per request.
        Prequal => "prequal",
        /// The assignment of a maximum b-matching over k random candidates (the optimum when one
        /// exists); users it cannot place keep a random candidate.
        Oracle => "oracle",
    }
}

crate::registry! {
    /// How a user's k candidate servers are drawn.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Draw: "candidate draw" {
        /// k distinct servers uniformly at random (GWTW-R1, GWTW-R8).
        Random => "random",
        /// A wrong model: user u's candidates are servers u, u + 1, ..., u + k - 1 modulo n, as
        /// a "random" server taken as a sequential id modulo n would be. It spreads users
        /// evenly, so k = 1 never overloads a server (docs/claims.md, "Wrong models").
        Striped => "striped",
    }
}

crate::registry! {
    /// What a Prequal probe reports as a server's latency.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum PrequalLatency: "prequal latency" {
        /// The service's latency (see [`Latency`]): the rule.
        Probed => "probed",
        /// A wrong model: the requests in flight again, so HCL is least load (P2C with ties to
        /// the lesser latency), blind to how fast a server is (docs/claims.md, "Wrong models").
        Load => "load",
    }
}

/// The service a server gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// LRU cache of `cache` unit items per server; each user requests Zipf(alpha) over its own
    /// `catalogue` items. The value of a request is 1 for a hit, 0 for a miss.
    Web {
        cache: u32,
        catalogue: u32,
        alpha: f64,
    },
    /// Bandwidth per server shared equally by its streams, each capped at `r_max`; with `ladder`
    /// the rate is rounded down to r_max / 2^i (i = 0..4, and 0 below the lowest rung).
    Video {
        bandwidth: f64,
        r_max: f64,
        ladder: bool,
    },
}

/// One run's configuration (validated).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub servers: u32,
    pub users: u32,
    pub k: u32,
    pub policy: UserPolicy,
    pub gwtw: GwtwConfig,
    /// Fraction of users that run GWTW with k candidates; the rest have k = 1.
    pub partial: f64,
    /// How candidates are drawn (random: the paper's rule).
    pub draw: Draw,
    /// Prequal's probes per request, and what they report as latency (policy `prequal`).
    pub prequal_probes: u32,
    pub prequal_latency: PrequalLatency,
    pub horizon: u32,
    /// Final slots over which per-user values are measured.
    pub measure: u32,
    /// Do not count compulsory misses (first request for an item at a server by that user).
    pub exclude_warmup: bool,
    /// E9, cdnlab's variant (not the paper's): count a miss only if the user's previous request
    /// for that item at that server missed too. An item evicted once by someone else's trial
    /// traffic misses once and is back (a re-warm miss, not counted); on a server shared beyond
    /// its capacity items miss again and again, and those misses count.
    pub exclude_rewarm: bool,
    /// Server capacities (C or B) drawn uniformly in base x [1 - spread, 1 + spread].
    pub capacity_spread: f64,
    pub model: Model,
    /// Stop simulating once the service says the state is absorbing (every later slot known:
    /// see [`Service::absorbed`]) and fill in the remaining slots; the outcome is identical
    /// (tested against the full simulation). On by default; off only to check that.
    pub fast_forward: bool,
}

impl Config {
    /// Checks ranges and combinations; errors name the parameter, the value and what is allowed.
    pub fn validate(&self) -> Result<(), Error> {
        if self.servers == 0 {
            return Err(Error::param("servers", 0, "at least 1"));
        }
        if self.users == 0 {
            return Err(Error::param(
                "users",
                0,
                "at least 1 (raise load or servers)",
            ));
        }
        if self.k == 0 || self.k > self.servers {
            return Err(Error::param(
                "k",
                self.k,
                format!("from 1 to the number of servers ({})", self.servers),
            ));
        }
        if self.policy == UserPolicy::P2c && self.servers < 2 {
            return Err(Error::param("servers", self.servers, "at least 2 for p2c"));
        }
        if self.policy == UserPolicy::Prequal {
            Prequal::new(self.servers, self.prequal_probes, DEFAULT_Q_RIF)?;
        }
        if !(0.0..=1.0).contains(&self.partial) {
            return Err(Error::param(
                "partial",
                self.partial,
                "a fraction in [0, 1]",
            ));
        }
        if self.horizon == 0 {
            return Err(Error::param("horizon", 0, "at least 1 slot"));
        }
        if self.measure == 0 || self.measure > self.horizon {
            return Err(Error::param(
                "measure",
                self.measure,
                format!("from 1 to horizon ({})", self.horizon),
            ));
        }
        if !(0.0..1.0).contains(&self.capacity_spread) {
            return Err(Error::param(
                "capacity_spread",
                self.capacity_spread,
                "a fraction in [0, 1)",
            ));
        }
        self.gwtw.validate()?;
        match self.model {
            Model::Web {
                cache,
                catalogue,
                alpha,
            } => {
                if cache == 0 {
                    return Err(Error::param("cache_size", 0, "at least 1 item"));
                }
                if catalogue == 0 {
                    return Err(Error::param("catalogue", 0, "at least 1 item"));
                }
                if !(alpha.is_finite() && alpha >= 0.0) {
                    return Err(Error::param("alpha", alpha, "a finite number >= 0"));
                }
                let bits = u64::from(self.users) * u64::from(self.k) * u64::from(catalogue);
                if (self.exclude_warmup || self.exclude_rewarm) && bits > 1 << 33 {
                    return Err(Error::param(
                        "catalogue",
                        catalogue,
                        "users x k x catalogue at most 2^33 while exclude_warmup or \
                         exclude_rewarm holds (one bit per user, candidate and item)",
                    ));
                }
            }
            Model::Video {
                bandwidth, r_max, ..
            } => {
                if !(bandwidth.is_finite() && bandwidth > 0.0) {
                    return Err(Error::param("bandwidth", bandwidth, "a finite number > 0"));
                }
                if !(r_max.is_finite() && r_max > 0.0) {
                    return Err(Error::param("r_max", r_max, "a finite number > 0"));
                }
                if self.exclude_rewarm {
                    return Err(Error::param(
                        "exclude_rewarm",
                        true,
                        "false with the video model (re-warm misses are a cache's)",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A user's selector (an enum, so the engine dispatches statically). `W` is the GWTW window,
/// i.e. the metric of the service: hit rate (web) or value (video).
#[derive(Debug, Clone)]
pub enum Client<W> {
    /// GWTW; its configuration is the population's.
    Gwtw(GwtwCore<W>),
    Fixed(Fixed),
    P2c(P2c),
    Prequal(Prequal),
}

impl<W: Window> Client<W> {
    fn settled(&self) -> Option<u32> {
        match self {
            Client::Gwtw(g) => g.settled(),
            Client::Fixed(f) => f.settled(),
            Client::P2c(p) => p.settled(),
            Client::Prequal(p) => p.settled(),
        }
    }

    /// Whether the client chooses afresh for every request, against the servers' loads.
    pub fn per_request(&self) -> bool {
        matches!(self, Client::P2c(_) | Client::Prequal(_))
    }

    /// The user's candidate servers (none for per-request selection).
    fn candidates(&self) -> Vec<u32> {
        match self {
            Client::Gwtw(g) => g.candidates().collect(),
            Client::Fixed(f) => vec![f.server],
            Client::P2c(_) | Client::Prequal(_) => Vec::new(),
        }
    }

    /// See [`GwtwCore::prefetch_candidates`].
    #[inline]
    pub fn prefetch_candidates(&self) {
        if let Client::Gwtw(g) = self {
            g.prefetch_candidates();
        }
    }

    /// Index of `server` among the user's candidates (for per-candidate warm-up bookkeeping).
    #[inline]
    pub fn candidate_index(&self, server: u32) -> Option<usize> {
        match self {
            Client::Gwtw(g) => g.candidate_index(server),
            Client::Fixed(f) => (f.server == server).then_some(0),
            Client::P2c(_) | Client::Prequal(_) => None,
        }
    }
}

/// Requests sent to each server in the current slot (the load P2C balances, and the
/// requests in flight a Prequal probe reports), and the latency a probe reports: the web
/// service's recent miss ratio of the server, the video service's time for a unit of video at
/// the rate one more stream would get.
pub struct SlotLoad {
    pub requests: Vec<u64>,
    pub latency: Latency,
}

/// What a probe reports as a server's latency (see [`SlotLoad`]).
pub enum Latency {
    /// Per server, the miss ratio of the last slot in which it had requests (1 before any:
    /// its cache is cold). A miss goes to the origin, so it is the latency that counts.
    MissRatio(Vec<f64>),
    /// Per server, its bandwidth; each stream is capped at `r_max`: max(1 / r_max,
    /// (streams + 1) / bandwidth).
    Share { bandwidth: Vec<f64>, r_max: f64 },
    /// The requests in flight (the wrong model [`PrequalLatency::Load`]).
    Load,
}

impl SlotLoad {
    /// No requests yet on `n` servers.
    pub fn new(n: usize, latency: Latency) -> Self {
        SlotLoad {
            requests: vec![0; n],
            latency,
        }
    }
}

impl Load for SlotLoad {
    #[inline]
    fn load(&self, server: u32) -> u64 {
        self.requests[server as usize]
    }
    #[inline]
    fn latency(&self, server: u32) -> f64 {
        let s = server as usize;
        match &self.latency {
            Latency::MissRatio(m) => m[s],
            Latency::Share { bandwidth, r_max } => {
                (1.0 / r_max).max((self.requests[s] + 1) as f64 / bandwidth[s])
            }
            Latency::Load => self.requests[s] as f64,
        }
    }
}

/// Clients and the settled load of every server.
pub struct Population<W> {
    /// The configuration every GWTW client shares.
    pub gwtw: GwtwConfig,
    pub clients: Vec<Client<W>>,
    /// Settled users per server.
    pub load: Vec<u32>,
    /// How many users each server serves at the best value (c_s).
    pub capacity: Vec<u32>,
    overloaded: u32,
    settled: u32,
    /// Settle decisions, those onto an overloaded server, and re-trials.
    pub settles: u64,
    pub wrong_settles: u64,
    pub retrials: u64,
    /// Re-trials (and E9 moves) of users whose server held no more settled users than its
    /// capacity: the shortfall came from other traffic there (trial probes, re-warm misses),
    /// not from sharing it beyond capacity.
    pub retrials_within_capacity: u64,
    /// Of those, the re-trials made while some user in a trial had the server among its
    /// candidates: a trial's requests go there and can evict the resident's items.
    pub retrials_probed: u64,
    /// Users in a trial with server s among their candidates, per server.
    probing: Vec<u32>,
    /// Whether every user can ever be settled (false with P2C users).
    settleable: bool,
}

impl<W: Window> Population<W> {
    fn new(gwtw: GwtwConfig, clients: Vec<Client<W>>, capacity: Vec<u32>) -> Self {
        let n = capacity.len();
        let mut p = Population {
            gwtw,
            load: vec![0; capacity.len()],
            capacity,
            overloaded: 0,
            settled: 0,
            settles: 0,
            wrong_settles: 0,
            retrials: 0,
            retrials_within_capacity: 0,
            retrials_probed: 0,
            probing: vec![0; n],
            settleable: !clients.iter().any(Client::per_request),
            clients,
        };
        for u in 0..p.clients.len() {
            if let Some(s) = p.clients[u].settled() {
                p.add(s);
            }
            p.trial(u, true);
        }
        p
    }

    /// User u has entered (`true`) or left a trial: its candidates gain or lose a prober.
    /// Nothing for users not in a trial (k = 1, P2C, settled GWTW users).
    fn trial(&mut self, u: usize, entered: bool) {
        if let Client::Gwtw(g) = &self.clients[u]
            && (g.in_trial() || !entered)
        {
            for s in g.candidates() {
                let n = &mut self.probing[s as usize];
                *n = if entered { *n + 1 } else { *n - 1 };
            }
        }
    }

    /// Users in a trial now.
    pub fn in_trial(&self) -> usize {
        self.clients
            .iter()
            .filter(|c| matches!(c, Client::Gwtw(g) if g.in_trial()))
            .count()
    }

    fn add(&mut self, s: u32) {
        let i = s as usize;
        self.load[i] += 1;
        self.settled += 1;
        if self.load[i] == self.capacity[i] + 1 {
            self.overloaded += 1;
        }
    }

    fn remove(&mut self, s: u32) {
        let i = s as usize;
        if self.load[i] == self.capacity[i] + 1 {
            self.overloaded -= 1;
        }
        self.load[i] -= 1;
        self.settled -= 1;
    }

    /// Whether every user is settled and no server holds more than its capacity.
    pub fn optimal(&self) -> bool {
        self.settleable && self.settled as usize == self.clients.len() && self.overloaded == 0
    }

    /// Where user u's next request goes (see [`Selector::targets`]).
    #[inline]
    pub fn targets(&mut self, u: usize, load: &dyn Load, rng: &mut Rng, out: &mut Vec<u32>) {
        match &mut self.clients[u] {
            Client::Gwtw(g) => g.targets(&self.gwtw, out),
            Client::Fixed(f) => f.targets(load, rng, out),
            Client::P2c(p) => p.targets(load, rng, out),
            Client::Prequal(p) => p.targets(load, rng, out),
        }
    }

    /// Feeds an outcome to user u and keeps the loads current. `j` is the server's index among
    /// the user's candidates when known. Returns the user's event (its targets change with it).
    #[inline]
    pub fn observe(
        &mut self,
        u: usize,
        server: u32,
        j: Option<usize>,
        value: Option<f64>,
        rng: &mut Rng,
    ) -> Event {
        let event = match &mut self.clients[u] {
            Client::Gwtw(g) => match j.or_else(|| g.candidate_index(server)) {
                Some(j) => g.observe_at(&self.gwtw, j, value, rng),
                None => Event::None,
            },
            Client::Fixed(f) => f.observe(server, value, rng),
            Client::P2c(p) => p.observe(server, value, rng),
            Client::Prequal(p) => p.observe(server, value, rng),
        };
        match event {
            Event::None => {}
            Event::Settled(s) => {
                self.trial(u, false);
                self.add(s);
                self.settles += 1;
                if self.load[s as usize] > self.capacity[s as usize] {
                    self.wrong_settles += 1;
                }
            }
            Event::Retrial(s) => {
                self.count_retrial(s);
                self.remove(s);
                self.trial(u, true);
            }
            Event::Moved(from, to) => {
                self.count_retrial(from);
                self.remove(from);
                self.add(to);
                self.settles += 1;
                if self.load[to as usize] > self.capacity[to as usize] {
                    self.wrong_settles += 1;
                }
            }
        }
        event
    }

    /// Counts a re-trial (or move) away from `s`, before the user leaves it.
    fn count_retrial(&mut self, s: u32) {
        self.retrials += 1;
        if self.load[s as usize] <= self.capacity[s as usize] {
            self.retrials_within_capacity += 1;
            if self.probing[s as usize] > 0 {
                self.retrials_probed += 1;
            }
        }
    }

    /// Whether user u is settled on a server within its capacity.
    pub fn satisfied(&self, u: usize) -> bool {
        self.clients[u]
            .settled()
            .is_some_and(|s| self.load[s as usize] <= self.capacity[s as usize])
    }
}

/// k distinct random servers out of n.
pub fn draw_candidates(n: u32, k: u32, rng: &mut Rng) -> Vec<u32> {
    let mut c = Vec::with_capacity(k as usize);
    while c.len() < k as usize {
        let s = rng.random_range(0..n);
        if !c.contains(&s) {
            c.push(s);
        }
    }
    c
}

/// User `u`'s k candidates out of n, drawn as `draw` says (k <= n).
pub fn candidates_of(draw: Draw, u: usize, n: u32, k: u32, rng: &mut Rng) -> Vec<u32> {
    match draw {
        Draw::Random => draw_candidates(n, k, rng),
        Draw::Striped => (0..k)
            .map(|j| ((u as u64 + u64::from(j)) % u64::from(n)) as u32)
            .collect(),
    }
}

/// Builds the clients of a run (the RNG draws candidates in user order, so a run is a function
/// of its seed).
pub fn clients<W: Window>(
    cfg: &Config,
    capacity: &[u32],
    rng: &mut Rng,
) -> Result<Vec<Client<W>>, Error> {
    let (n, m) = (cfg.servers, cfg.users as usize);
    Ok(match cfg.policy {
        UserPolicy::P2c => vec![Client::P2c(P2c { n }); m],
        UserPolicy::Prequal => {
            vec![Client::Prequal(Prequal::new(n, cfg.prequal_probes, DEFAULT_Q_RIF)?); m]
        }
        UserPolicy::Gwtw => {
            let mut out = Vec::with_capacity(m);
            for u in 0..m {
                let k = if rng.random::<f64>() < cfg.partial {
                    cfg.k
                } else {
                    1
                };
                let cands = candidates_of(cfg.draw, u, n, k, rng);
                out.push(if k == 1 {
                    Client::Fixed(Fixed { server: cands[0] })
                } else {
                    Client::Gwtw(GwtwCore::new(&cands, &cfg.gwtw)?)
                });
            }
            out
        }
        UserPolicy::Oracle => {
            let cands: Vec<Vec<u32>> = (0..m)
                .map(|u| candidates_of(cfg.draw, u, n, cfg.k, rng))
                .collect();
            let assigned = matching::assign(&cands, capacity);
            cands
                .iter()
                .zip(assigned)
                .map(|(c, a)| {
                    Client::Fixed(Fixed {
                        server: a.unwrap_or(c[0]),
                    })
                })
                .collect()
        }
    })
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Whether an optimal state exists for these candidate sets (a b-matching places every
    /// user); always false with per-request selection, which has no candidate sets.
    pub feasible: bool,
    /// Whether the run ended in the optimal state.
    pub converged: bool,
    /// The slot from which the run stayed optimal to the end (the horizon if it did not end
    /// optimal).
    pub convergence_slot: u32,
    /// Fraction of users settled on a server within its capacity at the end.
    pub satisfied: f64,
    /// Fraction of users whose value over the final `measure` slots was the best.
    pub at_best: f64,
    /// Lowest and mean per-user value over the final `measure` slots.
    pub worst_value: f64,
    pub mean_value: f64,
    /// Wrong settles (onto an overloaded server) per settle decision (NaN with none).
    pub wrong_settle_rate: f64,
    pub retrials_per_user: f64,
    /// Of the re-trials, the share whose server was within its capacity (NaN with none): see
    /// [`Population::retrials_within_capacity`].
    pub retrials_within_capacity: f64,
    /// Of the re-trials within capacity, the share made while a user in a trial had that
    /// server among its candidates (NaN with none): see [`Population::retrials_probed`].
    pub retrials_probed: f64,
    /// Share of users in a trial at the end: a livelock keeps a steady share of them.
    pub in_trial: f64,
    /// First slot whose mean served value reached 90% of the best (horizon if never).
    pub warmup_slot: u32,
    /// Most settled users on one server at the end.
    pub max_load: u32,
    /// Requests answered by servers over the run (trial probes included).
    pub requests: u64,
    /// Slots the engine simulated: the horizon, or fewer when the rest was filled in from an
    /// absorbing state (`Config::fast_forward`). Not a metric: it never changes a result.
    pub simulated: u32,
}

/// Per-slot hooks the engine needs from a service; `W` is the clients' window.
pub trait Service<W> {
    /// The best value a server can give.
    fn best(&self) -> f64;
    /// Serves one slot: every user's request goes to its targets; writes, per user, the value
    /// it received to `served`, and returns the number of requests servers answered (probes
    /// included).
    fn slot(&mut self, pop: &mut Population<W>, rng: &mut Rng, served: &mut [f64]) -> u64;

    /// Whether every later slot is known: each user will be served the best at its settled
    /// server and no user's state can change. Returns the requests servers answer per slot
    /// from then on. The default never says so.
    fn absorbed(&self, _pop: &Population<W>) -> Option<u64> {
        None
    }
}

/// Slots between two absorption checks once the state is optimal (a check costs about one slot
/// of the web service per catalogue item).
const ABSORB_CHECK: u32 = 64;

/// Runs `service` over a population for the configured horizon.
pub fn simulate<W: Window>(
    cfg: &Config,
    pop: &mut Population<W>,
    service: &mut dyn Service<W>,
    rng: &mut Rng,
) -> Outcome {
    let m = pop.clients.len();
    let best = service.best();
    let mut served = vec![0.0; m];
    let mut sum = vec![0.0; m];
    let mut optimal_since: Option<u32> = None;
    let mut warmup: Option<u32> = None;
    let mut requests = 0u64;
    let start_measure = cfg.horizon - cfg.measure;
    let mut simulated = cfg.horizon;
    for t in 0..cfg.horizon {
        requests += service.slot(pop, rng, &mut served);
        if warmup.is_none() && served.iter().sum::<f64>() >= 0.9 * best * m as f64 {
            warmup = Some(t);
        }
        if t >= start_measure {
            sum.iter_mut().zip(&served).for_each(|(a, v)| *a += v);
        }
        match (pop.optimal(), optimal_since) {
            (true, None) => optimal_since = Some(t),
            (false, Some(_)) => optimal_since = None,
            _ => {}
        }
        if cfg.fast_forward
            && optimal_since.is_some()
            && (t + 1) % ABSORB_CHECK == 0
            && let Some(per_slot) = service.absorbed(pop)
        {
            // The rest of the horizon as the loop above would run it: every user served
            // the best, nothing else changing (the same float sums, slot by slot).
            served.fill(best);
            let total = served.iter().sum::<f64>();
            for t in t + 1..cfg.horizon {
                requests += per_slot;
                if warmup.is_none() && total >= 0.9 * best * m as f64 {
                    warmup = Some(t);
                }
                if t >= start_measure {
                    sum.iter_mut().for_each(|a| *a += best);
                }
            }
            simulated = t + 1;
            break;
        }
    }
    let per_user: Vec<f64> = sum.iter().map(|s| s / f64::from(cfg.measure)).collect();
    Outcome {
        feasible: false,
        converged: optimal_since.is_some(),
        convergence_slot: optimal_since.unwrap_or(cfg.horizon),
        satisfied: (0..m).filter(|&u| pop.satisfied(u)).count() as f64 / m as f64,
        at_best: per_user.iter().filter(|&&v| v >= best - 1e-9).count() as f64 / m as f64,
        worst_value: per_user.iter().copied().fold(f64::INFINITY, f64::min),
        mean_value: per_user.iter().sum::<f64>() / m as f64,
        wrong_settle_rate: pop.wrong_settles as f64 / pop.settles as f64,
        retrials_per_user: pop.retrials as f64 / m as f64,
        retrials_within_capacity: pop.retrials_within_capacity as f64 / pop.retrials as f64,
        retrials_probed: pop.retrials_probed as f64 / pop.retrials_within_capacity as f64,
        in_trial: pop.in_trial() as f64 / m as f64,
        warmup_slot: warmup.unwrap_or(cfg.horizon),
        max_load: pop.load.iter().copied().max().unwrap_or(0),
        requests,
        simulated,
    }
}

/// Whether every user can be placed on one of its candidates within capacities.
pub fn feasible<W: Window>(pop: &Population<W>) -> bool {
    if !pop.settleable {
        return false;
    }
    let cands: Vec<Vec<u32>> = pop.clients.iter().map(Client::candidates).collect();
    matching::assign(&cands, &pop.capacity)
        .iter()
        .all(Option::is_some)
}

/// Per-server base capacities with the configured spread.
fn spread(base: f64, n: u32, spread: f64, rng: &mut Rng) -> Vec<f64> {
    (0..n)
        .map(|_| {
            if spread == 0.0 {
                base
            } else {
                base * rng.random_range(1.0 - spread..=1.0 + spread)
            }
        })
        .collect()
}

/// One run: builds servers, clients and the service from the seed, then simulates.
pub fn run(cfg: &Config, rng: &mut Rng) -> Result<Outcome, Error> {
    cfg.validate()?;
    match cfg.model {
        Model::Web {
            cache, catalogue, ..
        } => {
            let sizes: Vec<u32> = spread(f64::from(cache), cfg.servers, cfg.capacity_spread, rng)
                .into_iter()
                .map(|c| (c.round() as u32).max(1))
                .collect();
            let capacity: Vec<u32> = sizes.iter().map(|c| c / catalogue).collect();
            let clients = clients(cfg, &capacity, rng)?;
            let mut pop = Population::<HitWindow>::new(cfg.gwtw, clients, capacity);
            let feasible = feasible(&pop);
            let mut service = web::Web::new(cfg, &sizes, &pop)?;
            if cfg.prequal_latency == PrequalLatency::Load {
                service.slot_load.latency = Latency::Load;
            }
            Ok(Outcome {
                feasible,
                ..simulate(cfg, &mut pop, &mut service, rng)
            })
        }
        Model::Video {
            bandwidth,
            r_max,
            ladder,
        } => {
            let bw = spread(bandwidth, cfg.servers, cfg.capacity_spread, rng);
            let capacity: Vec<u32> = bw
                .iter()
                .map(|b| (b / r_max + 1e-9).floor() as u32)
                .collect();
            let clients = clients(cfg, &capacity, rng)?;
            let mut pop = Population::<ValueWindow>::new(cfg.gwtw, clients, capacity);
            let feasible = feasible(&pop);
            let mut service = video::Video::new(bw, r_max, ladder);
            if cfg.prequal_latency == PrequalLatency::Load {
                service.streams.latency = Latency::Load;
            }
            Ok(Outcome {
                feasible,
                ..simulate(cfg, &mut pop, &mut service, rng)
            })
        }
    }
}

/// A video run on given servers and users, for a run that must match another exactly (the
/// testbed's emulated run, docs/testbed.md): server s has bandwidth `bandwidth[s]` (in units of
/// r_max = 1), user u the candidates `candidates[u]` (one: a fixed server, k = 1; more: GWTW).
/// `cfg.servers`, `cfg.users`, `cfg.k`, `cfg.partial`, `cfg.draw` and `cfg.capacity_spread` are
/// not used: the two lists say it all. Returns the outcome and where each user is settled at the
/// end.
pub fn run_video_on(
    cfg: &Config,
    bandwidth: &[f64],
    candidates: &[Vec<u32>],
    rng: &mut Rng,
) -> Result<(Outcome, Vec<Option<u32>>), Error> {
    let n = bandwidth.len() as u32;
    if n == 0 || bandwidth.iter().any(|b| !(b.is_finite() && *b > 0.0)) {
        return Err(Error::param(
            "bandwidth",
            format!("{bandwidth:?}"),
            "at least one server, each a finite number > 0",
        ));
    }
    if candidates.is_empty()
        || candidates
            .iter()
            .any(|c| c.is_empty() || c.iter().any(|&s| s >= n))
    {
        return Err(Error::param(
            "candidates",
            format!("{} users", candidates.len()),
            format!("at least one user, each with servers below {n}"),
        ));
    }
    let cfg = Config {
        servers: n,
        users: candidates.len() as u32,
        k: 1,
        model: Model::Video {
            bandwidth: 1.0,
            r_max: 1.0,
            ladder: false,
        },
        ..*cfg
    };
    cfg.validate()?;
    let capacity: Vec<u32> = bandwidth
        .iter()
        .map(|b| (b + 1e-9).floor() as u32)
        .collect();
    let clients = candidates
        .iter()
        .map(|c| {
            Ok(if c.len() == 1 {
                Client::Fixed(Fixed { server: c[0] })
            } else {
                Client::Gwtw(GwtwCore::new(c, &cfg.gwtw)?)
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut pop = Population::<ValueWindow>::new(cfg.gwtw, clients, capacity);
    let feasible = feasible(&pop);
    let mut service = video::Video::new(bandwidth.to_vec(), 1.0, false);
    let outcome = simulate(&cfg, &mut pop, &mut service, rng);
    let settled = pop.clients.iter().map(Client::settled).collect();
    Ok((
        Outcome {
            feasible,
            ..outcome
        },
        settled,
    ))
}

#[cfg(test)]
mod tests;
