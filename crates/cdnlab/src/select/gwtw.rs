//! Go-With-The-Winner (Liu, Sitaraman, Towsley, IFIP Networking 2016), as reconstructed in
//! `docs/gwtw.md`.
//!
//! A client has k distinct candidate servers and one window of the last tau outcomes per
//! candidate. It starts in TRIAL: each request goes to every candidate ([`Probe::All`]) or to one
//! after another ([`Probe::RoundRobin`]). When every window is full it settles on the candidate
//! with the best mean; on a tie it stays where it was if that is among the best, else picks
//! uniformly among the best. A settled client whose window falls short of the best achievable
//! value re-enters TRIAL with probability q per shortfall observation ([`Retrial::OnShortfall`];
//! the randomness breaks lock-step flip-flopping), or never ([`Retrial::Never`]). Windows are
//! cleared when a trial starts, so a trial measures the candidates afresh.
//!
//! Rules: GWTW-R1, GWTW-R3 and GWTW-R4 of docs/spec/gwtw.md.

use super::window::{ValueWindow, Window};
use super::{Event, Load, Selector};
use crate::Error;
use crate::rng::Rng;
use rand::RngExt;
use smallvec::SmallVec;

/// Two means closer than this are a tie; a window this close to the best has no shortfall.
pub const EPS: f64 = 1e-9;

crate::registry! {
    /// Where TRIAL requests go.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Probe: "probe rule" {
        /// Every request to every candidate (trial traffic loads all of them).
        All => "all",
        /// Each request to the next candidate in turn.
        RoundRobin => "round-robin",
    }
}

crate::registry! {
    /// Which candidate a finished trial settles on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Pick: "pick rule" {
        /// The winner: the best mean (GWTW-R3).
        Winner => "winner",
        /// A wrong model, not the paper's: a uniformly random candidate, whatever the windows
        /// show. It keeps every other rule (trials, re-trials), so claims about selection can be
        /// shown to fail on it through the real simulator (docs/claims.md, "Wrong models").
        Uniform => "uniform",
    }
}

crate::registry! {
    /// When a settled client measures again.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Retrial: "re-trial rule" {
        /// When its window shows less than the best value, with probability q per observation.
        OnShortfall => "on-shortfall",
        /// Never (a baseline).
        Never => "never",
        /// E9, cdnlab's variant (not the paper's): on a shortfall (with probability q per
        /// observation, as the paper's rule) the client moves to another of its candidates, picked
        /// uniformly, and measures it with a fresh window, instead of a trial that probes every
        /// candidate. Only the first trial sends probes. With c = 1 the paper's trial traffic always
        /// disturbs a resident in a component with as many users as servers, and the disturbed
        /// resident's own trial disturbs the next one (the livelock); blind moves make the clients
        /// a random walk over assignments whose only resting states are the optimal ones (a
        /// cuckoo-hashing random walk). Used with the web model's `exclude_rewarm`, so that a miss
        /// left by someone's move does not count.
        Move => "move",
    }
}

/// GWTW parameters shared by all clients of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GwtwConfig {
    /// Window length (outcomes per candidate), >= 1.
    pub tau: usize,
    pub probe: Probe,
    pub retrial: Retrial,
    pub pick: Pick,
    /// Activation probability of a re-trial, in (0, 1].
    pub q: f64,
    /// The best value a server can give (1 for hit rate, r_max for bit rate).
    pub best: f64,
}

/// The default window length and re-trial probability (see [`GwtwConfig::default`]).
pub const DEFAULT_TAU: usize = 20;
pub const DEFAULT_Q: f64 = 0.5;

impl Default for GwtwConfig {
    /// The one set of defaults, for the simulator's parameters and the live users alike:
    /// tau = 20, trial requests to every candidate, re-trial on a shortfall with q = 0.5, best
    /// value 1 (a hit rate, or a bit rate as a share of the wanted one).
    fn default() -> Self {
        GwtwConfig {
            tau: DEFAULT_TAU,
            probe: Probe::All,
            retrial: Retrial::OnShortfall,
            pick: Pick::Winner,
            q: DEFAULT_Q,
            best: 1.0,
        }
    }
}

impl GwtwConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), Error> {
        if self.tau == 0 {
            return Err(Error::param("tau", 0, "a whole number >= 1"));
        }
        if !(self.q > 0.0 && self.q <= 1.0) {
            return Err(Error::param("q", self.q, "a probability in (0, 1]"));
        }
        if !(self.best.is_finite() && self.best > 0.0) {
            return Err(Error::param("best", self.best, "a finite value > 0"));
        }
        Ok(())
    }
}

/// A candidate server and its window, side by side.
#[derive(Debug, Clone)]
struct Cand<W> {
    server: u32,
    window: W,
}

/// "None" in `settled` (in TRIAL) and `current`.
const NONE: u32 = u32::MAX;

/// One client's state without its configuration: the rules of GWTW live here, with the
/// [`GwtwConfig`] passed in, so a simulator keeps one configuration for millions of clients and
/// each client's state in one small record (candidates and windows inline up to two
/// candidates). [`Gwtw`] pairs it with a configuration behind the [`Selector`] trait.
#[derive(Debug, Clone)]
pub struct GwtwCore<W = ValueWindow> {
    cands: SmallVec<[Cand<W>; 2]>,
    /// The candidate it is settled on, or NONE in TRIAL.
    settled: u32,
    /// The candidate it last settled on (the tie rule prefers it), or NONE.
    current: u32,
    /// Next candidate in round-robin probing.
    rr: u32,
}

impl<W: Window> GwtwCore<W> {
    /// Asks the CPU to bring in the candidates when they live outside the record (k > 2): a
    /// simulator prefetches the record first and this a few requests later, once the record
    /// (which holds their address) has arrived. No effect on results.
    #[inline]
    pub fn prefetch_candidates(&self) {
        if self.cands.spilled() {
            crate::idmap::prefetch_all(&self.cands[..]);
        }
    }

    /// A client in TRIAL over `candidates` (distinct, at least one).
    pub fn new(candidates: &[u32], cfg: &GwtwConfig) -> Result<Self, Error> {
        cfg.validate()?;
        if candidates.is_empty() {
            return Err(Error::param("k", 0, "at least 1 candidate"));
        }
        let mut sorted = candidates.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::param(
                "candidates",
                format!("{candidates:?}"),
                "distinct servers",
            ));
        }
        Ok(GwtwCore {
            cands: candidates
                .iter()
                .map(|&server| Cand {
                    server,
                    window: W::new(cfg.tau),
                })
                .collect(),
            settled: NONE,
            current: NONE,
            rr: 0,
        })
    }

    /// The candidate servers, in order.
    pub fn candidates(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.cands.iter().map(|c| c.server)
    }

    /// The index of `server` among the candidates.
    #[inline]
    pub fn candidate_index(&self, server: u32) -> Option<usize> {
        self.cands.iter().position(|c| c.server == server)
    }

    /// Whether the client is measuring its candidates.
    pub fn in_trial(&self) -> bool {
        self.settled == NONE
    }

    /// The window of candidate `j`.
    pub fn window(&self, j: usize) -> &W {
        &self.cands[j].window
    }

    /// The server it is settled on (None in TRIAL).
    #[inline]
    pub fn settled(&self) -> Option<u32> {
        (self.settled != NONE).then(|| self.cands[self.settled as usize].server)
    }

    /// Where the next request goes: the settled server, or in TRIAL every candidate or the
    /// next in turn.
    #[inline]
    pub fn targets(&self, cfg: &GwtwConfig, out: &mut Vec<u32>) {
        if self.settled != NONE {
            out.push(self.cands[self.settled as usize].server);
        } else if cfg.probe == Probe::All {
            out.extend(self.cands.iter().map(|c| c.server));
        } else {
            out.push(self.cands[self.rr as usize].server);
        }
    }

    /// Whether outcomes of the best value alone can never change this client: it is settled,
    /// and retrials are off or its settled window holds no shortfall (a full window with a miss
    /// in it may retrial on the next hit). The simulator stops simulating a population of such
    /// clients that will only see the best (`sim::gwtw::simulate`).
    pub fn steady(&self, cfg: &GwtwConfig) -> bool {
        let Some(c) = self.cands.get(self.settled as usize) else {
            return false;
        };
        cfg.retrial == Retrial::Never || c.window.is_empty() || c.window.mean() >= cfg.best - EPS
    }

    /// The candidate to settle on: the best mean; on a tie the current one if it is among the
    /// best, else a uniform pick among the best.
    fn settle(&mut self, cfg: &GwtwConfig, rng: &mut Rng) -> u32 {
        if cfg.pick == Pick::Uniform {
            return rng.random_range(0..self.cands.len()) as u32;
        }
        let top = self
            .cands
            .iter()
            .map(|c| c.window.mean())
            .fold(f64::NEG_INFINITY, f64::max);
        let is_best = |c: &Cand<W>| c.window.mean() >= top - EPS;
        if let Some(c) = self.cands.get(self.current as usize)
            && is_best(c)
        {
            return self.current;
        }
        let n = self.cands.iter().filter(|c| is_best(c)).count();
        let pick = rng.random_range(0..n);
        self.cands
            .iter()
            .enumerate()
            .filter(|(_, c)| is_best(c))
            .nth(pick)
            .map(|(j, _)| j as u32)
            .expect("the maximum is among the candidates")
    }

    /// [`Selector::observe`] for candidate `j` (its index in [`GwtwCore::candidates`]).
    #[inline]
    pub fn observe_at(
        &mut self,
        cfg: &GwtwConfig,
        j: usize,
        value: Option<f64>,
        rng: &mut Rng,
    ) -> Event {
        if let Some(v) = value {
            self.cands[j].window.push(v);
        }
        if self.settled == NONE {
            if cfg.probe == Probe::RoundRobin && j == self.rr as usize {
                self.rr = ((j + 1) % self.cands.len()) as u32;
            }
            if self.cands.iter().all(|c| c.window.is_full()) {
                let c = self.settle(cfg, rng);
                self.settled = c;
                self.current = c;
                return Event::Settled(self.cands[c as usize].server);
            }
            return Event::None;
        }
        let c = self.settled as usize;
        let w = &self.cands[c].window;
        let short = cfg.retrial != Retrial::Never
            && j == c
            && value.is_some()
            && w.is_full()
            && w.mean() < cfg.best - EPS;
        // E9 reacts only to a shortfall observation itself: a window that still holds the
        // misses of a contention that has ended must not move a client that now sees the best.
        let trigger = cfg.retrial != Retrial::Move || value.is_some_and(|v| v < cfg.best - EPS);
        if short && trigger && rng.random::<f64>() < cfg.q {
            if cfg.retrial == Retrial::Move && self.cands.len() > 1 {
                let mut to = rng.random_range(0..self.cands.len() - 1);
                if to >= c {
                    to += 1;
                }
                self.cands[to].window.clear();
                self.settled = to as u32;
                self.current = to as u32;
                return Event::Moved(self.cands[c].server, self.cands[to].server);
            }
            self.settled = NONE;
            self.rr = 0;
            self.cands.iter_mut().for_each(|c| c.window.clear());
            return Event::Retrial(self.cands[c].server);
        }
        Event::None
    }
}

/// One GWTW client with its configuration: the [`Selector`] a live client drives. `W` is the
/// window, i.e. the metric: [`super::window::HitWindow`] for hit rates, [`ValueWindow`] (the
/// default) for bit rates or any value.
#[derive(Debug, Clone)]
pub struct Gwtw<W = ValueWindow> {
    cfg: GwtwConfig,
    core: GwtwCore<W>,
}

impl<W: Window> Gwtw<W> {
    /// A client in TRIAL over `candidates` (distinct, at least one).
    pub fn new(candidates: Vec<u32>, cfg: GwtwConfig) -> Result<Self, Error> {
        Ok(Gwtw {
            core: GwtwCore::new(&candidates, &cfg)?,
            cfg,
        })
    }

    /// See [`GwtwCore::candidates`].
    pub fn candidates(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.core.candidates()
    }

    /// See [`GwtwCore::in_trial`].
    pub fn in_trial(&self) -> bool {
        self.core.in_trial()
    }

    /// See [`GwtwCore::window`].
    pub fn window(&self, j: usize) -> &W {
        self.core.window(j)
    }

    /// See [`GwtwCore::observe_at`].
    #[inline]
    pub fn observe_at(&mut self, j: usize, value: Option<f64>, rng: &mut Rng) -> Event {
        self.core.observe_at(&self.cfg, j, value, rng)
    }
}

impl<W: Window> Selector for Gwtw<W> {
    #[inline]
    fn targets(&mut self, _load: &dyn Load, _rng: &mut Rng, out: &mut Vec<u32>) {
        self.core.targets(&self.cfg, out);
    }

    fn observe(&mut self, server: u32, value: Option<f64>, rng: &mut Rng) -> Event {
        match self.core.candidate_index(server) {
            Some(j) => self.observe_at(j, value, rng),
            None => Event::None,
        }
    }

    fn settled(&self) -> Option<u32> {
        self.core.settled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::NoLoad;

    fn cfg(probe: Probe, retrial: Retrial) -> GwtwConfig {
        GwtwConfig {
            tau: 3,
            probe,
            retrial,
            pick: Pick::Winner,
            q: 1.0,
            best: 1.0,
        }
    }

    fn targets(g: &mut Gwtw<ValueWindow>, rng: &mut Rng) -> Vec<u32> {
        let mut out = Vec::new();
        g.targets(&NoLoad, rng, &mut out);
        out
    }

    #[test]
    fn probes_all_then_settles_on_the_winner() {
        let mut rng = crate::rng::stream(1, 0, 0);
        let mut g =
            Gwtw::<ValueWindow>::new(vec![7, 9], cfg(Probe::All, Retrial::OnShortfall)).unwrap();
        for t in 0..3 {
            assert_eq!(targets(&mut g, &mut rng), vec![7, 9]);
            assert_eq!(g.observe(7, Some(0.0), &mut rng), Event::None);
            let e = g.observe(9, Some(1.0), &mut rng);
            assert_eq!(
                e,
                if t == 2 {
                    Event::Settled(9)
                } else {
                    Event::None
                }
            );
        }
        assert_eq!(g.settled(), Some(9));
        assert_eq!(targets(&mut g, &mut rng), vec![9]);
        // Uncounted outcomes never fill a window or trigger anything.
        assert_eq!(g.observe(9, None, &mut rng), Event::None);
        // A miss in the full window of the chosen server is a shortfall: with q = 1, re-trial.
        assert_eq!(g.observe(9, Some(0.0), &mut rng), Event::Retrial(9));
        assert!(g.in_trial() && g.window(0).is_empty() && g.window(1).is_empty());
    }

    /// The wrong model `Pick::Uniform` ignores the windows: over 200 clients whose trial shows
    /// candidate 9 winning outright, about half settle on the loser 7 (binomial(200, 1/2):
    /// 100 +- 10, so 60..140 is +-4 standard deviations), where the winner rule settles on 9
    /// every time.
    #[test]
    fn uniform_pick_ignores_the_winner() {
        let mut rng = crate::rng::stream(4, 0, 0);
        let losers = |pick: Pick, rng: &mut Rng| {
            (0..200)
                .filter(|_| {
                    let c = GwtwConfig {
                        pick,
                        ..cfg(Probe::All, Retrial::Never)
                    };
                    let mut g = Gwtw::<ValueWindow>::new(vec![7, 9], c).unwrap();
                    for _ in 0..3 {
                        g.observe(7, Some(0.0), rng);
                        g.observe(9, Some(1.0), rng);
                    }
                    g.settled() == Some(7)
                })
                .count()
        };
        assert_eq!(losers(Pick::Winner, &mut rng), 0);
        let n = losers(Pick::Uniform, &mut rng);
        assert!((60..=140).contains(&n), "{n} of 200 settled on the loser");
    }

    #[test]
    fn round_robin_alternates_and_never_retrial_stays() {
        let mut rng = crate::rng::stream(2, 0, 0);
        let mut g = Gwtw::<ValueWindow>::new(vec![1, 2, 3], cfg(Probe::RoundRobin, Retrial::Never))
            .unwrap();
        let mut seen = Vec::new();
        for _ in 0..9 {
            let t = targets(&mut g, &mut rng);
            assert_eq!(t.len(), 1);
            seen.push(t[0]);
            let v = if t[0] == 2 { 0.5 } else { 0.25 };
            g.observe(t[0], Some(v), &mut rng);
        }
        assert_eq!(seen, [1, 2, 3, 1, 2, 3, 1, 2, 3]);
        assert_eq!(g.settled(), Some(2));
        for _ in 0..10 {
            assert_eq!(g.observe(2, Some(0.0), &mut rng), Event::None);
        }
        assert_eq!(g.settled(), Some(2));
    }

    #[test]
    fn ties_stay_on_the_current_server_else_pick_uniformly() {
        // First settle: both perfect, so a uniform pick; over many clients both servers appear.
        let mut firsts = [0; 2];
        for seed in 0..200 {
            let mut rng = crate::rng::stream(seed, 0, 0);
            let mut g = Gwtw::<ValueWindow>::new(vec![0, 1], cfg(Probe::All, Retrial::OnShortfall))
                .unwrap();
            for _ in 0..3 {
                g.observe(0, Some(1.0), &mut rng);
                g.observe(1, Some(1.0), &mut rng);
            }
            let s = g.settled().unwrap();
            firsts[s as usize] += 1;
            // Force a re-trial, then tie again: it must stay on s.
            g.observe(s, Some(0.0), &mut rng);
            for _ in 0..3 {
                g.observe(0, Some(1.0), &mut rng);
                g.observe(1, Some(1.0), &mut rng);
            }
            assert_eq!(g.settled(), Some(s));
        }
        // Binomial(200, 1/2): outside 70..130 has probability below 1e-5.
        assert!((70..=130).contains(&firsts[0]), "{firsts:?}");
    }

    #[test]
    fn activation_probability_q() {
        // With q = 0.3, the number of shortfall observations before a re-trial is geometric
        // with mean 1/0.3; over 2000 clients the mean is within 0.3 of 3.33 (sd of the mean 0.06).
        let mut total = 0u64;
        let clients = 2000;
        for seed in 0..clients {
            let mut rng = crate::rng::stream(9, seed, 0);
            let mut c = cfg(Probe::All, Retrial::OnShortfall);
            c.q = 0.3;
            let mut g = Gwtw::<ValueWindow>::new(vec![4], c).unwrap();
            for _ in 0..3 {
                g.observe(4, Some(0.5), &mut rng);
            }
            assert_eq!(g.settled(), Some(4));
            let mut n = 0;
            loop {
                n += 1;
                if g.observe(4, Some(0.5), &mut rng) == Event::Retrial(4) {
                    break;
                }
            }
            total += n;
        }
        let mean = total as f64 / clients as f64;
        assert!((mean - 1.0 / 0.3).abs() < 0.3, "{mean}");
    }

    /// E9: a settled client with a full window short of the best moves to its other
    /// candidate on a shortfall observation (q = 1 here), with a fresh window there, and does
    /// not move on a hit however short its window is.
    #[test]
    fn move_goes_to_the_other_candidate_on_a_miss_only() {
        let mut rng = crate::rng::stream(4, 0, 0);
        let mut g = Gwtw::<ValueWindow>::new(vec![7, 9], cfg(Probe::All, Retrial::Move)).unwrap();
        for v in [1.0, 0.0, 1.0] {
            g.observe(7, Some(v), &mut rng);
            g.observe(9, Some(0.0), &mut rng);
        }
        assert_eq!(g.settled(), Some(7));
        // Window at 7: [1, 0, 1] is short; a hit does not move it.
        assert_eq!(g.observe(7, Some(1.0), &mut rng), Event::None);
        assert_eq!(g.observe(7, Some(0.0), &mut rng), Event::Moved(7, 9));
        assert_eq!(g.settled(), Some(9));
        assert!(!g.window(1).is_full() && !g.in_trial());
        // The fresh window must fill before anything is judged.
        assert_eq!(g.observe(9, Some(0.0), &mut rng), Event::None);
    }

    #[test]
    fn bad_configuration_is_refused() {
        let good = cfg(Probe::All, Retrial::OnShortfall);
        assert!(Gwtw::<ValueWindow>::new(vec![], good).is_err());
        assert!(Gwtw::<ValueWindow>::new(vec![1, 1], good).is_err());
        assert!(Gwtw::<ValueWindow>::new(vec![1], GwtwConfig { tau: 0, ..good }).is_err());
        assert!(Gwtw::<ValueWindow>::new(vec![1], GwtwConfig { q: 0.0, ..good }).is_err());
        assert!(Gwtw::<ValueWindow>::new(vec![1], GwtwConfig { q: 1.5, ..good }).is_err());
        assert!(Gwtw::<ValueWindow>::new(vec![1], GwtwConfig { best: 0.0, ..good }).is_err());
    }
}
