//! Steering policies: the order of pathways a content-steering server gives one session
//! (`PATHWAY-PRIORITY`), from what it knows of each pathway and of the session. One interface,
//! each policy's rule written once here; the simulator (`sim::steering`) and the live steering
//! server drive the same [`Steering`].
//!
//! | [`Policy`] | rule |
//! |---|---|
//! | `priority` | every session the same order: the pathways' own order (an operator's static priority) |
//! | `nearest` | the nearest pathway first (hops or delay), then by distance |
//! | `tp` | the Transportation Problem's shares for the session's population: sessions spread over the pathways by the golden-ratio sequence, largest share first after that ([`crate::alloc::steering`], TP-R8); admission thresholds are enforced by the edges |
//! | `gwtw` | Go-With-The-Winner by reported throughput: k random candidate pathways per session, a window of tau segments on each, then the winner, re-trying on a shortfall (GWTW-R1, R3, R4 with the video model's value) |
//! | `cmcd-qoe` | a session stays where it is unless its pathway starves (with at least `min_sessions` sessions in the window: more than `starving` of them reported `bs`, or their median buffer `bl` is below `low_buffer_ms`; a pathway that starved stays suspect for `cooldown_s`); then it moves with probability `move_fraction` per answer (damped) to the pathway of least starvation, among those that do not starve first, then with room (sessions times their median bitrate within its provisioned capacity), then nearest |
//! | `prequal` | Prequal's hot-cold rule over the pathways: requests in flight and probed latency ([`crate::select::prequal`]) |

use super::tally::Summary;
use crate::Error;
use crate::alloc::steering::session_order;
use crate::rng::Rng;
use crate::select::gwtw::{GwtwConfig, GwtwCore, Probe, Retrial};
use crate::select::prequal;
use crate::select::window::ValueWindow;
use rand::RngExt;

crate::registry! {
    /// How a steering server orders a session's pathways.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Policy: "steering policy" {
        Priority => "priority": "the same order for every session (static priority)",
        Nearest => "nearest": "the nearest pathway first",
        Shares => "tp": "the Transportation Problem's shares, sessions spread by the golden-ratio sequence (TP-R8)",
        Winner => "gwtw": "go with the winner by reported throughput: k candidates per session",
        Qoe => "cmcd-qoe": "move sessions off pathways whose sessions starve, within capacity",
        Prequal => "prequal": "requests in flight and probed latency, hot-cold rule (Prequal)",
    }
}

/// What the steering server knows of one pathway when it answers a session.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pathway {
    /// Up and not taken out.
    pub usable: bool,
    /// Distance from the session's population (hops, or ms of delay): less is nearer.
    pub distance: f64,
    /// The Transportation Problem's share of this pathway for the session's population.
    pub share: i64,
    /// Provisioned capacity, kbit/s (0: unknown).
    pub capacity_kbps: f64,
    /// The pathway's sessions over the last window, from their CMCD reports.
    pub qoe: Summary,
    /// Requests in flight (Prequal's RIF).
    pub in_flight: f64,
    /// Probed latency, ms (None: not probed).
    pub latency_ms: Option<f64>,
}

/// Tunables of the policies, each with a documented default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// `gwtw`: candidates per session (k >= 2, GWTW-R1) and window in segments (tau).
    pub k: usize,
    pub tau: usize,
    /// `gwtw`: re-trial probability on a shortfall.
    pub q: f64,
    /// `cmcd-qoe`: starvation rate above which a pathway starves, and the sessions it needs.
    pub starving: f64,
    /// `cmcd-qoe`: a pathway whose sessions' median buffer is below this also starves (the
    /// warning before the stalls: players drain their buffers first), ms.
    pub low_buffer_ms: u32,
    pub min_sessions: u32,
    /// `cmcd-qoe`: the probability that a session on a starving pathway moves, per answer
    /// (damping: moving all at once would carry the starvation along).
    pub move_fraction: f64,
    /// `cmcd-qoe`: the fraction of capacity a pathway may be loaded to.
    pub headroom: f64,
    /// `cmcd-qoe`: seconds a pathway stays suspect after it starved. Its sessions gone, it
    /// would look healthy again (no reports, room by its provisioned capacity) and draw them
    /// back while it is still short.
    pub cooldown_s: f64,
    /// `prequal`: the RIF quantile above which a pathway is hot.
    pub q_rif: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k: 2,
            tau: 3,
            q: crate::select::gwtw::DEFAULT_Q,
            starving: 0.1,
            low_buffer_ms: 4000,
            min_sessions: 5,
            move_fraction: 0.5,
            headroom: 0.9,
            cooldown_s: 30.0,
            q_rif: prequal::DEFAULT_Q_RIF,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), Error> {
        if self.k < 2 {
            return Err(Error::param(
                "k",
                self.k,
                "at least 2 candidates (GWTW-R1: k = 1 fails)",
            ));
        }
        if self.tau == 0 {
            return Err(Error::param("tau", 0, "a whole number >= 1"));
        }
        if !(self.cooldown_s >= 0.0 && self.cooldown_s.is_finite()) {
            return Err(Error::param("cooldown_s", self.cooldown_s, "seconds >= 0"));
        }
        for (name, v) in [
            ("q", self.q),
            ("starving", self.starving),
            ("move_fraction", self.move_fraction),
            ("headroom", self.headroom),
            ("q_rif", self.q_rif),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(Error::param(name, v, "a number in (0, 1]"));
            }
        }
        Ok(())
    }
}

/// What a policy remembers of one session.
#[derive(Debug, Clone)]
pub struct Memory {
    /// The session's point in [0, 1) (TP-R8's golden-ratio sequence, or a hash of its id).
    pub point: f64,
    /// The pathway it was last sent to first.
    pub current: Option<usize>,
    winner: Option<GwtwCore<ValueWindow>>,
}

impl Memory {
    pub fn new(point: f64) -> Memory {
        Memory {
            point,
            current: None,
            winner: None,
        }
    }
}

/// A policy with its parameters, and what it remembers of the pathways (`cmcd-qoe`: until
/// when each is suspect).
#[derive(Debug, Clone)]
pub struct Steering {
    pub policy: Policy,
    pub params: Params,
    gwtw: GwtwConfig,
    suspect_until: Vec<f64>,
    suspect_rate: Vec<f64>,
}

impl Steering {
    pub fn new(policy: Policy, params: Params) -> Result<Steering, Error> {
        params.validate()?;
        let gwtw = GwtwConfig {
            tau: params.tau,
            probe: Probe::RoundRobin,
            retrial: Retrial::OnShortfall,
            q: params.q,
            best: 1.0,
            ..GwtwConfig::default()
        };
        gwtw.validate()?;
        Ok(Steering {
            policy,
            params,
            gwtw,
            suspect_until: Vec::new(),
            suspect_rate: Vec::new(),
        })
    }

    /// The pathways (indices into `paths`) in the order the session should try them at time
    /// `now_s`; unusable ones are left out.
    pub fn order(
        &mut self,
        now_s: f64,
        paths: &[Pathway],
        mem: &mut Memory,
        rng: &mut Rng,
    ) -> Vec<usize> {
        let usable: Vec<usize> = (0..paths.len()).filter(|&j| paths[j].usable).collect();
        let by_distance = |v: &mut Vec<usize>| {
            v.sort_by(|&a, &b| {
                paths[a]
                    .distance
                    .total_cmp(&paths[b].distance)
                    .then(a.cmp(&b))
            })
        };
        let order = match self.policy {
            Policy::Priority => usable,
            Policy::Nearest => {
                let mut v = usable;
                by_distance(&mut v);
                v
            }
            Policy::Shares => {
                let shares: Vec<i64> = paths.iter().map(|p| p.share).collect();
                // Ties by distance: TP-R8 breaks them by hops; distances rank the same way.
                let mut rank: Vec<usize> = (0..paths.len()).collect();
                by_distance(&mut rank);
                let mut hops = vec![0i64; paths.len()];
                for (r, &j) in rank.iter().enumerate() {
                    hops[j] = r as i64;
                }
                let ok: Vec<bool> = paths.iter().map(|p| p.usable).collect();
                session_order(&shares, &hops, &ok, mem.point)
            }
            Policy::Winner => self.winner_order(paths, &usable, mem, rng),
            Policy::Qoe => self.qoe_order(now_s, paths, usable, mem, rng),
            Policy::Prequal => {
                let pool: Vec<prequal::Probe> = usable
                    .iter()
                    .map(|&j| prequal::Probe {
                        rif: paths[j].in_flight,
                        latency: paths[j].latency_ms.unwrap_or(0.0),
                    })
                    .collect();
                prequal::order(&pool, self.params.q_rif)
                    .into_iter()
                    .map(|i| usable[i])
                    .collect()
            }
        };
        mem.current = order.first().copied();
        order
    }

    /// GWTW: the session's current target first (a candidate under trial, or the winner),
    /// then its other candidates, then the rest by distance.
    fn winner_order(
        &self,
        paths: &[Pathway],
        usable: &[usize],
        mem: &mut Memory,
        rng: &mut Rng,
    ) -> Vec<usize> {
        if mem.winner.is_none() && usable.len() >= 2 {
            // k distinct usable pathways uniformly at random (GWTW-R1).
            let mut pool = usable.to_vec();
            let k = self.params.k.min(pool.len());
            for i in 0..k {
                let j = rng.random_range(i..pool.len());
                pool.swap(i, j);
            }
            let cands: Vec<u32> = pool[..k].iter().map(|&j| j as u32).collect();
            mem.winner = GwtwCore::new(&cands, &self.gwtw).ok();
        }
        let mut first = Vec::new();
        if let Some(g) = &mem.winner {
            let mut t = Vec::new();
            g.targets(&self.gwtw, &mut t);
            t.extend(g.candidates());
            for j in t.into_iter().map(|s| s as usize) {
                if paths[j].usable && !first.contains(&j) {
                    first.push(j);
                }
            }
        }
        let mut rest: Vec<usize> = usable
            .iter()
            .copied()
            .filter(|j| !first.contains(j))
            .collect();
        rest.sort_by(|&a, &b| {
            paths[a]
                .distance
                .total_cmp(&paths[b].distance)
                .then(a.cmp(&b))
        });
        first.extend(rest);
        first
    }

    /// CMCD-QoE: stay unless the current pathway starves; movers go to the least starving
    /// pathway with room, nearest first.
    fn qoe_order(
        &mut self,
        now_s: f64,
        paths: &[Pathway],
        usable: Vec<usize>,
        mem: &Memory,
        rng: &mut Rng,
    ) -> Vec<usize> {
        let p = self.params;
        self.suspect_until.resize(paths.len(), f64::NEG_INFINITY);
        self.suspect_rate.resize(paths.len(), 0.0);
        for (j, path) in paths.iter().enumerate() {
            let q = &path.qoe;
            if q.sessions >= p.min_sessions
                && (q.starvation() > p.starving
                    || (q.buffer_ms.n > 0 && q.buffer_ms.p50 < p.low_buffer_ms))
            {
                if now_s >= self.suspect_until[j] {
                    self.suspect_rate[j] = 0.0;
                }
                self.suspect_until[j] = now_s + p.cooldown_s;
                self.suspect_rate[j] = self.suspect_rate[j].max(q.starvation());
            }
        }
        let (until, remembered) = (&self.suspect_until, &self.suspect_rate);
        let starving = |j: usize| now_s < until[j];
        // A suspect pathway's starvation is the worst seen while suspect: emptied of its
        // sessions it reports none, and must not draw them back.
        let rate = |j: usize| {
            let now = paths[j].qoe.starvation();
            if starving(j) {
                now.max(remembered[j])
            } else {
                now
            }
        };
        let room = |j: usize| {
            let path = &paths[j];
            if path.capacity_kbps <= 0.0 {
                return true;
            }
            let per = f64::from(path.qoe.bitrate_kbps.p50.max(1));
            f64::from(path.qoe.sessions + 1) * per <= p.headroom * path.capacity_kbps
        };
        let mut v = usable;
        v.sort_by(|&a, &b| {
            starving(a)
                .cmp(&starving(b))
                .then(rate(a).total_cmp(&rate(b)))
                .then(room(b).cmp(&room(a)))
                .then(paths[a].distance.total_cmp(&paths[b].distance))
                .then(a.cmp(&b))
        });
        if let Some(cur) = mem.current
            && let Some(at) = v.iter().position(|&j| j == cur)
        {
            // Stay, unless the pathway starves; then move with probability `move_fraction`
            // per answer (damping: all at once would carry the starvation along).
            let moved = starving(cur) && v[0] != cur && rng.random::<f64>() < p.move_fraction;
            if !moved {
                v.remove(at);
                v.insert(0, cur);
            }
        }
        v
    }

    /// Feeds the throughput a session measured on `pathway` over one segment, relative to
    /// what it needs (`top_kbps`: its ladder's highest rendition): the value GWTW's windows
    /// compare (GWTW-R7's bit rate as a share of the wanted one, capped at 1).
    pub fn observe(
        &self,
        mem: &mut Memory,
        pathway: usize,
        throughput_kbps: f64,
        top_kbps: f64,
        rng: &mut Rng,
    ) {
        if let Some(g) = &mut mem.winner
            && let Some(j) = g.candidate_index(pathway as u32)
        {
            let value = (throughput_kbps / top_kbps.max(1e-9)).min(1.0);
            g.observe_at(&self.gwtw, j, Some(value), rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Named;
    use crate::steer::tally::Spread;

    fn path(distance: f64) -> Pathway {
        Pathway {
            usable: true,
            distance,
            ..Pathway::default()
        }
    }

    fn steer(policy: Policy) -> Steering {
        Steering::new(policy, Params::default()).unwrap()
    }

    #[test]
    fn static_nearest_and_unusable() {
        let mut paths = vec![path(5.0), path(1.0), path(3.0)];
        let mut rng = crate::rng::stream(1, 0, 0);
        let mut m = Memory::new(0.5);
        assert_eq!(
            steer(Policy::Priority).order(0.0, &paths, &mut m, &mut rng),
            [0, 1, 2]
        );
        assert_eq!(
            steer(Policy::Nearest).order(0.0, &paths, &mut m, &mut rng),
            [1, 2, 0]
        );
        paths[1].usable = false;
        for &p in Policy::ALL {
            let o = steer(p).order(0.0, &paths, &mut Memory::new(0.3), &mut rng);
            assert!(!o.contains(&1), "{p:?} {o:?}");
            assert_eq!(o.len(), 2, "{p:?} {o:?}");
        }
    }

    /// `tp` is TP-R8's rule: 100 sessions at the golden-ratio points over shares 3:1 put 75
    /// and 25 first (within TP-R8's bound of 2.25).
    #[test]
    fn shares_follow_the_allocation() {
        let mut paths = vec![path(1.0), path(2.0)];
        paths[0].share = 3;
        paths[1].share = 1;
        let mut rng = crate::rng::stream(1, 0, 0);
        let mut s = steer(Policy::Shares);
        let first0 = (0..100)
            .filter(|&k| {
                let mut m = Memory::new(crate::alloc::steering::session_point(k));
                s.order(0.0, &paths, &mut m, &mut rng)[0] == 0
            })
            .count() as f64;
        assert!((first0 - 75.0).abs() <= 2.25, "{first0}");
    }

    /// GWTW tries its k candidates, tau segments each, and settles on the one that delivered
    /// more; with k = 2 of 3 pathways it never sends a session first to a non-candidate.
    #[test]
    fn winner_settles_on_the_faster_candidate() {
        let paths = vec![path(1.0), path(1.0), path(1.0)];
        let speed = [500.0, 3000.0, 1500.0];
        let mut s = steer(Policy::Winner);
        let mut settled_on_best = 0;
        for seed in 0..50 {
            let mut rng = crate::rng::stream(7, seed, 0);
            let mut m = Memory::new(0.0);
            let mut last = 0;
            for _ in 0..40 {
                let j = s.order(0.0, &paths, &mut m, &mut rng)[0];
                s.observe(&mut m, j, speed[j], 3000.0, &mut rng);
                last = j;
            }
            let cands: Vec<usize> = m
                .winner
                .as_ref()
                .unwrap()
                .candidates()
                .map(|c| c as usize)
                .collect();
            let best = *cands
                .iter()
                .max_by(|&&a, &&b| speed[a].total_cmp(&speed[b]))
                .unwrap();
            assert!(cands.contains(&last));
            // The best candidate delivers 1 (3000 of 3000) or at least more than the other.
            if last == best {
                settled_on_best += 1;
            }
        }
        // Candidate pairs without pathway 1 settle on 2 and may re-trial on its shortfall
        // (q = 0.5 per segment), so a few runs end mid-trial; most end on their best.
        assert!(settled_on_best >= 40, "{settled_on_best} of 50");
    }

    /// CMCD-QoE keeps sessions where they are until their pathway starves; then each moves,
    /// with the move probability, to the pathway with room and no starvation.
    #[test]
    fn qoe_moves_sessions_off_a_starving_pathway() {
        let mut paths = vec![path(1.0), path(2.0), path(3.0)];
        for p in &mut paths {
            p.capacity_kbps = 10_000.0;
            p.qoe.sessions = 5;
            p.qoe.bitrate_kbps = Spread {
                n: 4,
                p10: 1000,
                p50: 1000,
                p90: 1000,
            };
        }
        paths[2].qoe.sessions = 9; // full: 10 x 1000 > 0.9 x 10,000
        let mut s = steer(Policy::Qoe);
        let mut rng = crate::rng::stream(1, 0, 0);
        let on0 = || {
            let mut m = Memory::new(0.5);
            m.current = Some(0);
            m
        };
        assert_eq!(s.order(0.0, &paths, &mut on0(), &mut rng)[0], 0, "stays");
        paths[0].qoe.starving = 2; // 40% > 10%
        // Each session on the starving pathway moves with probability 0.5 per answer: of
        // 2000, 1000 move, within 4 standard errors (sqrt(2000 / 4) = 22.4).
        let mut moved = 0;
        for _ in 0..2000 {
            let o = s.order(0.0, &paths, &mut on0(), &mut rng);
            if o[0] != 0 {
                assert_eq!(
                    o,
                    [1, 2, 0],
                    "to the pathway with room, the starving one last"
                );
                moved += 1;
            }
        }
        assert!((moved as f64 - 1000.0).abs() < 4.0 * 22.4, "{moved}");
        // A new session goes to the nearest pathway that does not starve and has room.
        assert_eq!(s.order(0.0, &paths, &mut Memory::new(0.5), &mut rng)[0], 1);
        // Its sessions gone, pathway 0 reports nothing; it stays suspect for the cooldown
        // (30 s), then it is the nearest again.
        paths[0].qoe = Summary::default();
        assert_eq!(s.order(29.0, &paths, &mut Memory::new(0.5), &mut rng)[0], 1);
        assert_eq!(s.order(31.0, &paths, &mut Memory::new(0.5), &mut rng)[0], 0);
    }

    #[test]
    fn prequal_prefers_cold_and_fast() {
        let mut paths: Vec<Pathway> = (0..7).map(|j| path(j as f64)).collect();
        let rif = [0.0, 3.0, 4.0, 5.0, 6.0, 7.0, 20.0];
        let lat = [400.0, 10.0, 12.0, 15.0, 11.0, 13.0, 8.0];
        for j in 0..7 {
            paths[j].in_flight = rif[j];
            paths[j].latency_ms = Some(lat[j]);
        }
        let mut rng = crate::rng::stream(1, 0, 0);
        let o = steer(Policy::Prequal).order(0.0, &paths, &mut Memory::new(0.0), &mut rng);
        assert_eq!(o[0], 1);
        assert_eq!(*o.last().unwrap(), 6, "the hot pathway last");
    }

    #[test]
    fn params_are_checked() {
        let bad = |f: fn(&mut Params)| {
            let mut p = Params::default();
            f(&mut p);
            Steering::new(Policy::Winner, p).is_err()
        };
        assert!(bad(|p| p.k = 1));
        assert!(bad(|p| p.tau = 0));
        assert!(bad(|p| p.starving = 0.0));
        assert!(bad(|p| p.q_rif = 1.5));
    }
}
