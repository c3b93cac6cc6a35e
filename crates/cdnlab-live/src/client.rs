//! Users on real HTTP: each runs the library's Go-With-The-Winner state machine
//! ([`cdnlab::select::gwtw::Gwtw`]) over k candidate edges drawn at random, with the request
//! pattern of the simulator's web model (user u owns objects u N .. u N + N - 1 and asks for
//! them Zipf(alpha)). What a request is worth:
//!
//! - web: 1 for a hit (`Cache-Status: cdnlab; hit`), 0 for a miss; the first request of an
//!   object at a candidate is a compulsory miss and does not count (as in the simulator);
//! - video: the delivered throughput as a share of the wanted rate (1 at or above
//!   (1 - tolerance) x rate: loopback timing has jitter that the model's bit rate does not);
//! - a failed request (error status, refused connection, timeout) is worth 0, so users of a
//!   dead edge see a shortfall, re-trial and settle elsewhere.
//!
//! A user is at the best value when it is settled and its window there is full of best values.

use crate::Error;
use cdnlab::rng::Rng;
use cdnlab::select::gwtw::{EPS, Gwtw, GwtwConfig};
use cdnlab::select::window::{ValueWindow, Window};
use cdnlab::select::{Event, NoLoad, Selector};
use cdnlab::workload::popularity::{Law, Sampler};
use rand::RngExt;
use serde::Serialize;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// What users measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// Hit or miss, from `Cache-Status`.
    Web,
    /// Delivered throughput against `rate` bytes per second.
    Video { rate: f64, tolerance: f64 },
}

impl Measure {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        if let Measure::Video { rate, tolerance } = *self {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(cdnlab::Error::param("rate", rate, "bytes per second > 0"));
            }
            if !(0.0..1.0).contains(&tolerance) {
                return Err(cdnlab::Error::param(
                    "tolerance",
                    tolerance,
                    "a share in [0, 1)",
                ));
            }
        }
        Ok(())
    }
}

/// A population of users.
#[derive(Debug, Clone, PartialEq)]
pub struct UsersConfig {
    /// The edges users draw their candidates from.
    pub edges: Vec<SocketAddr>,
    pub users: usize,
    /// Candidates per user (1 <= k <= edges).
    pub k: usize,
    /// The GWTW rule's settings, as the simulator's (its `best` is ignored: the live measures
    /// are shares of the best, so it is 1).
    pub gwtw: GwtwConfig,
    /// Objects per user's catalogue (N), and their popularity exponent.
    pub objects_per_user: u64,
    pub alpha: f64,
    pub measure: Measure,
    /// Pause between a user's requests.
    pub interval: Duration,
    /// Longest wait for one answer.
    pub timeout: Duration,
    pub seed: u64,
}

impl UsersConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), cdnlab::Error> {
        use cdnlab::Error as E;
        if self.edges.is_empty() {
            return Err(E::param("edges", 0, "at least 1 edge address"));
        }
        if self.users == 0 {
            return Err(E::param("users", 0, "at least 1"));
        }
        if self.k == 0 || self.k > self.edges.len() {
            return Err(E::param(
                "k",
                self.k,
                format!("1 to the number of edges ({})", self.edges.len()),
            ));
        }
        if self.objects_per_user == 0 {
            return Err(E::param("objects-per-user", 0, "at least 1"));
        }
        if (self.users as u64)
            .checked_mul(self.objects_per_user)
            .is_none()
        {
            return Err(E::param(
                "objects-per-user",
                self.objects_per_user,
                "users x objects within u64",
            ));
        }
        if self.interval.is_zero() || self.timeout.is_zero() {
            return Err(E::param("interval/timeout", "0", "durations > 0"));
        }
        self.measure.validate()?;
        self.gwtw().validate()?;
        Law::Zipf { alpha: self.alpha }.pmf(1).map(|_| ())
    }

    fn gwtw(&self) -> GwtwConfig {
        GwtwConfig {
            best: 1.0,
            ..self.gwtw
        }
    }

    /// User u's k distinct candidates (indices into `edges`), as its run will draw them.
    pub fn candidates(&self, user: usize) -> Vec<u32> {
        draw_candidates(&mut user_rng(self.seed, user), self.edges.len(), self.k)
    }
}

fn user_rng(seed: u64, user: usize) -> Rng {
    cdnlab::rng::stream(seed, user as u64, 0)
}

/// k distinct values of 0..n (a partial Fisher-Yates shuffle); all n if k > n (configurations
/// are validated before, this only keeps a bad one from panicking).
fn draw_candidates(rng: &mut Rng, n: usize, k: usize) -> Vec<u32> {
    let k = k.min(n);
    let mut pool: Vec<u32> = (0..n as u32).collect();
    for i in 0..k {
        let j = rng.random_range(i..n);
        pool.swap(i, j);
    }
    pool.truncate(k);
    pool
}

/// One user's state, as reported.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct UserState {
    pub user: usize,
    /// Candidate edges (indices into the edge list).
    pub candidates: Vec<u32>,
    pub settled: Option<u32>,
    /// Settled, with a full window of best values there.
    pub at_best: bool,
    pub requests: u64,
    pub failures: u64,
    pub settles: u64,
    pub retrials: u64,
    /// Video: the delivered rate, bytes per second, over the user's last `tau` rounds: their
    /// bytes over their seconds (of a round, the fastest of its downloads: the stream the user
    /// would play, as the simulator's per-slot value is the best of its targets). None for web.
    pub rate: Option<f64>,
}

/// Running users.
pub struct Users {
    states: Arc<Vec<Mutex<UserState>>>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl Users {
    /// Starts every user.
    pub fn start(cfg: UsersConfig) -> Result<Users, Error> {
        cfg.validate()?;
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(cfg.timeout)
            .pool_max_idle_per_host(cfg.users.min(256))
            .build()
            .map_err(|e| Error::Client(e.to_string()))?;
        let sampler = Arc::new(Sampler::new(
            Law::Zipf { alpha: cfg.alpha },
            cfg.objects_per_user as usize,
        )?);
        let states: Arc<Vec<Mutex<UserState>>> = Arc::new(
            (0..cfg.users)
                .map(|u| {
                    Mutex::new(UserState {
                        user: u,
                        candidates: cfg.candidates(u),
                        ..UserState::default()
                    })
                })
                .collect(),
        );
        let (stop, stopped) = watch::channel(false);
        let cfg = Arc::new(cfg);
        let mut tasks = JoinSet::new();
        for u in 0..cfg.users {
            let (cfg, client, sampler, states, stopped) = (
                cfg.clone(),
                client.clone(),
                sampler.clone(),
                states.clone(),
                stopped.clone(),
            );
            tasks.spawn(
                async move { user_loop(u, &cfg, &client, &sampler, &states[u], stopped).await },
            );
        }
        Ok(Users {
            states,
            stop,
            tasks,
        })
    }

    /// Every user's state now.
    pub fn snapshot(&self) -> Vec<UserState> {
        self.states
            .iter()
            .map(|s| s.lock().expect("state lock").clone())
            .collect()
    }

    /// Stops every user (a request in progress is abandoned).
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn user_loop(
    u: usize,
    cfg: &UsersConfig,
    client: &reqwest::Client,
    sampler: &Sampler,
    state: &Mutex<UserState>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut rng = user_rng(cfg.seed, u);
    let candidates = draw_candidates(&mut rng, cfg.edges.len(), cfg.k);
    let Ok(mut g) = Gwtw::<ValueWindow>::new(candidates.clone(), cfg.gwtw()) else {
        return; // validated: cannot happen
    };
    // (edge, object) pairs asked for once already: later misses there count.
    let mut seen: HashSet<(u32, u64)> = HashSet::new();
    let mut targets = Vec::new();
    // The last tau rounds' (bytes, seconds) of their fastest download (video).
    let mut rates = std::collections::VecDeque::with_capacity(cfg.gwtw.tau);
    // Stagger the start so users do not move in lock step.
    let start = Duration::from_secs_f64(rng.random::<f64>() * cfg.interval.as_secs_f64());
    if sleep_or_stop(start, &mut stopped).await {
        return;
    }
    loop {
        targets.clear();
        g.targets(&NoLoad, &mut rng, &mut targets);
        let id = u as u64 * cfg.objects_per_user + sampler.sample(&mut rng) as u64;
        let outcomes = futures_util::future::join_all(
            targets
                .iter()
                .map(|&t| request(client, cfg.edges[t as usize], id, cfg.measure)),
        );
        let outcomes = tokio::select! {
            o = outcomes => o,
            _ = stopped.changed() => return,
        };
        let (mut failures, mut settles, mut retrials) = (0, 0, 0);
        let mut round: Option<(f64, f64)> = None;
        for (&t, outcome) in targets.iter().zip(outcomes) {
            let first = cfg.measure == Measure::Web && seen.insert((t, id));
            let value = match outcome {
                None => {
                    failures += 1;
                    Some(0.0)
                }
                Some(_) if first => None,
                Some((v, bytes, secs)) => {
                    if round.is_none_or(|(b, s)| bytes / secs > b / s) {
                        round = Some((bytes, secs));
                    }
                    Some(v)
                }
            };
            match g.observe(t, value, &mut rng) {
                Event::Settled(_) => settles += 1,
                Event::Retrial(_) => retrials += 1,
                Event::Moved(..) => {
                    retrials += 1;
                    settles += 1;
                }
                Event::None => {}
            }
        }
        if let (Measure::Video { .. }, Some(r)) = (cfg.measure, round) {
            if rates.len() == cfg.gwtw.tau {
                rates.pop_front();
            }
            rates.push_back(r);
        }
        {
            let mut s = state.lock().expect("state lock");
            s.rate = (!rates.is_empty()).then(|| {
                let (b, t) = rates
                    .iter()
                    .fold((0.0, 0.0), |(b, t), r| (b + r.0, t + r.1));
                b / t
            });
            s.requests += targets.len() as u64;
            s.failures += failures;
            s.settles += settles;
            s.retrials += retrials;
            s.settled = g.settled();
            s.at_best = g.settled().is_some_and(|e| {
                let j = candidates
                    .iter()
                    .position(|&c| c == e)
                    .expect("a candidate");
                let w = g.window(j);
                w.is_full() && w.mean() >= 1.0 - EPS
            });
        }
        if sleep_or_stop(cfg.interval, &mut stopped).await {
            return;
        }
    }
}

/// Sleeps; true if told to stop meanwhile.
async fn sleep_or_stop(d: Duration, stopped: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => *stopped.borrow(),
        _ = stopped.changed() => true,
    }
}

/// One request: its value (see the module notes), its bytes and its seconds, or None if it
/// failed.
async fn request(
    client: &reqwest::Client,
    edge: SocketAddr,
    id: u64,
    m: Measure,
) -> Option<(f64, f64, f64)> {
    let t = Instant::now();
    let r = client
        .get(format!("http://{edge}/content/{id}"))
        .send()
        .await
        .ok()?;
    if r.status() != reqwest::StatusCode::OK {
        return None;
    }
    let hit = r
        .headers()
        .get("cache-status")
        .is_some_and(|v| v.as_bytes().starts_with(b"cdnlab; hit"));
    let body = r.bytes().await.ok()?;
    let secs = t.elapsed().as_secs_f64().max(1e-6);
    let bytes_per_s = body.len() as f64 / secs;
    Some((
        match m {
            Measure::Web => f64::from(u8::from(hit)),
            Measure::Video { rate, tolerance } => {
                let got = bytes_per_s / rate;
                if got >= 1.0 - tolerance { 1.0 } else { got }
            }
        },
        body.len() as f64,
        secs,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_distinct_and_reproducible() {
        for k in 1..=5 {
            let a = draw_candidates(&mut user_rng(1, 3), 5, k);
            let b = draw_candidates(&mut user_rng(1, 3), 5, k);
            assert_eq!(a, b);
            let set: HashSet<u32> = a.iter().copied().collect();
            assert_eq!(set.len(), k);
            assert!(a.iter().all(|&x| x < 5));
        }
    }
}
