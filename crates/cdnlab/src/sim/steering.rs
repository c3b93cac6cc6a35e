//! `steering`: video sessions steered over pathways of unequal capacity, one of which degrades
//! mid-run, judged by what viewers experience (docs/steering.md).
//!
//! Sessions of `populations` populations arrive uniformly over the first `ramp` seconds; each
//! plays `segments` segments of 2 s from the ladder 300/750/1500/3000 kbit/s with the player
//! model of [`crate::steer::player`] (its ABR rule: `abr`). Pathway j has capacity
//! proportional to `skew`^j, in all `sessions` x 3000 kbit/s / `load`; population p's nearest
//! pathway is p J / P and pathway j is 1 + ((j - p J / P) mod J) hops from it, each hop
//! `rtt_ms` of round trip. At `degrade_at` seconds pathway 0 (the largest) keeps `degrade` of
//! its capacity. A fetch starts one round trip after its request and then shares its
//! pathway's capacity equally with the other fetches under way there (a fluid,
//! processor-sharing link). A session asks the steering policy for its pathway order when it
//! starts and then every `ttl` seconds (at its next fetch), and fetches from the first
//! pathway of the order; with `tp` a pathway whose population threshold is full is skipped
//! (the edges' admission), and a session with no pathway left waits a `ttl` (blocked). The
//! policy sees what a steering server would: the provisioned capacities (not the
//! degradation), each pathway's CMCD tally over `qoe_window` s, requests in flight and the
//! latency a probe would see now.

use crate::Error;
use crate::Named;
use crate::alloc::admission;
use crate::alloc::steering::session_point;
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use crate::steer::player::{Abr, Next, Session, Stream};
use crate::steer::policy::{self, Memory, Pathway, Policy, Steering};
use crate::steer::tally::Tally;
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The ladder, kbit/s, and the segment duration, s.
pub const LADDER: [f64; 4] = [300.0, 750.0, 1500.0, 3000.0];
pub const SEGMENT_S: f64 = 2.0;

/// The experiment.
pub struct SteeringExperiment;

const ABRS: &[&str] = &["mixed", "hlsjs", "dashjs", "shaka"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice("policy", Policy::NAMES, "the steering policy"),
    ParamSpec::choice(
        "abr",
        ABRS,
        "the players' ABR rule: mixed (session k follows hls.js, dash.js, Shaka in turn) or one of the three",
    ),
    ParamSpec::int("sessions", 1, 5000, 60, "player sessions"),
    ParamSpec::int("pathways", 2, 8, 3, "pathways (edges)"),
    ParamSpec::int(
        "populations",
        1,
        8,
        2,
        "populations the sessions belong to, in turn",
    ),
    ParamSpec::positive(
        "load",
        10.0,
        1.2,
        "offered load: sessions x top bitrate / total capacity",
    ),
    ParamSpec::range(
        "skew",
        (0.0, true),
        (1.0, false),
        0.5,
        "pathway j's capacity is proportional to skew^j",
    ),
    ParamSpec::range(
        "degrade",
        (0.0, true),
        (1.0, false),
        0.1,
        "the fraction of its capacity pathway 0 keeps after degrade_at (1: no degradation)",
    )
    .unit("share"),
    ParamSpec::float("degrade_at", 0.0, 1e6, 60.0, "when pathway 0 degrades").unit("s"),
    ParamSpec::positive(
        "ttl",
        3600.0,
        10.0,
        "seconds between a session's steering requests",
    )
    .unit("s"),
    ParamSpec::int("segments", 1, 100_000, 90, "segments of 2 s per session"),
    ParamSpec::float(
        "ramp",
        0.0,
        1e6,
        20.0,
        "sessions arrive uniformly over this time",
    )
    .unit("s"),
    ParamSpec::positive("max_buffer", 600.0, 12.0, "buffer a player keeps ahead").unit("s"),
    ParamSpec::float("rtt_ms", 0.0, 10_000.0, 20.0, "round trip per hop").unit("ms"),
    ParamSpec::positive("qoe_window", 3600.0, 10.0, "the CMCD tally's window").unit("s"),
    ParamSpec::int("k", 2, 8, 2, "gwtw: candidate pathways per session"),
    ParamSpec::int("tau", 1, 1000, 3, "gwtw: window, segments per candidate"),
    ParamSpec::choice(
        "probe",
        PROBES,
        "what a probe's latency sees: current (the pathway's capacity now); provisioned is a \
         wrong model (a probe answered from the configured capacity, blind to the \
         degradation), see docs/claims.md, \"Wrong models\"",
    ),
    ParamSpec::choice(
        "admission",
        ADMISSIONS,
        "tp: whether edges refuse sessions above their thresholds (TP-R4): enforced; ignored \
         is a wrong model (thresholds computed, never enforced), see docs/claims.md, \
         \"Wrong models\"",
    ),
];

/// The `probe` choices: the rule first.
const PROBES: &[&str] = &["current", "provisioned"];

/// The `admission` choices: the rule first.
const ADMISSIONS: &[&str] = &["enforced", "ignored"];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "rebuffering",
        "share",
        "mean over sessions of stalled / (stalled + played) time after startup",
    ),
    MetricSpec::new("stalls", "stalls", "mean stalls per session after startup"),
    MetricSpec::new(
        "startup_s",
        "s",
        "mean time from a session's start to its first frame (blocked time included)",
    ),
    MetricSpec::new(
        "bitrate_kbps",
        "kbit/s",
        "mean over sessions of the mean bitrate played",
    ),
    MetricSpec::new("switches", "switches", "mean bitrate switches per session"),
    MetricSpec::new(
        "fairness",
        "index",
        "Jain's index of the sessions' mean bitrates (1: all equal)",
    ),
    MetricSpec::new(
        "population_gap_kbps",
        "kbit/s",
        "largest minus smallest population's mean bitrate",
    ),
    MetricSpec::new(
        "degraded_share",
        "share",
        "of the bytes fetched after the degradation, the share pathway 0 served",
    ),
    MetricSpec::new(
        "reaction_s",
        "s",
        "from the degradation until pathway 0's share of the sessions is at most its share of the capacity (the time left if never)",
    ),
    MetricSpec::new(
        "blocked",
        "answers",
        "steering answers with no pathway under its threshold (tp)",
    ),
    MetricSpec::new(
        "unfinished",
        "sessions",
        "sessions not ended by the time limit",
    ),
];

crate::sim::experiment!(
    SteeringExperiment = "steering",
    "video sessions steered over pathways of unequal capacity, one degrading: rebuffering, startup, bitrate, switches, fairness per policy",
    PARAMS,
    METRICS;
    crate::sim::no_check,
    run
);

/// Events, by (time, sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The session asks what to do next.
    Wake(usize),
    /// The session's requested fetch reaches its pathway and starts.
    Start(usize),
}

struct Flow {
    session: usize,
    pathway: usize,
    remaining: f64,
    bytes: u64,
    requested: f64,
}

struct S {
    player: Session,
    mem: Memory,
    pop: usize,
    pathway: Option<usize>,
    next_steer: f64,
    pending: Option<(usize, u64)>,
    ended: bool,
}

/// An event time as a heap key: the bits of a non-negative f64 order as the numbers do, and
/// give the time back exactly (a rounded key once woke a session before its own time).
fn key(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

pub fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    let policy: Policy = p.text("policy").parse()?;
    let n = p.int("sessions") as usize;
    let jn = p.int("pathways") as usize;
    let pn = p.int("populations") as usize;
    let (load, skew, degrade) = (p.float("load"), p.float("skew"), p.float("degrade"));
    let degrade_at = p.float("degrade_at");
    let ttl = p.float("ttl");
    let rtt = p.float("rtt_ms") / 1000.0;
    let window_ms = (p.float("qoe_window") * 1000.0) as u64;
    let probe_sees_now = p.text("probe") == "current";
    let admission_enforced = p.text("admission") == "enforced";
    let mut steering = Steering::new(
        policy,
        policy::Params {
            k: p.int("k") as usize,
            tau: p.int("tau") as usize,
            ..policy::Params::default()
        },
    )?;
    let stream = Stream {
        ladder_kbps: LADDER.to_vec(),
        segment_s: SEGMENT_S,
        segments: p.int("segments") as u32,
        max_buffer_s: p.float("max_buffer").max(SEGMENT_S),
    };
    let top = LADDER[LADDER.len() - 1];
    // Capacities (kbit/s), provisioned and actual.
    let weights: Vec<f64> = (0..jn).map(|j| skew.powi(j as i32)).collect();
    let wsum: f64 = weights.iter().sum();
    let total = n as f64 * top / load;
    let provisioned: Vec<f64> = weights.iter().map(|w| total * w / wsum).collect();
    let mut cap = provisioned.clone();
    let home = |pop: usize| pop * jn / pn;
    let hops = |pop: usize, j: usize| 1 + (j + jn - home(pop)) % jn;
    // TP-R2: thresholds in streams of the top bitrate, demand = each population's sessions.
    let streams: Vec<i64> = provisioned
        .iter()
        .map(|c| (c / top).floor() as i64)
        .collect();
    let demand: Vec<i64> = (0..pn).map(|q| ((n + pn - 1 - q) / pn) as i64).collect();
    let costs: Vec<Vec<i64>> = (0..pn)
        .map(|q| (0..jn).map(|j| hops(q, j) as i64).collect())
        .collect();
    let (thresholds, _, _) = admission::thresholds(&streams, &demand, costs, 0.5, &[], None)?;

    let abr = p.text("abr");
    let mut heap: BinaryHeap<Reverse<(u64, u64, Kind)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, t: f64, k: Kind| {
        seq += 1;
        heap.push(Reverse((key(t), seq, k)));
    };
    let mut arrivals: Vec<f64> = (0..n)
        .map(|_| rng.random::<f64>() * p.float("ramp"))
        .collect();
    arrivals.sort_by(f64::total_cmp);
    let mut per_pop = vec![0u64; pn];
    let mut sessions: Vec<S> = Vec::with_capacity(n);
    for (k, &t0) in arrivals.iter().enumerate() {
        let a = match abr {
            "mixed" => Abr::ALL[k % 3],
            name => name.parse()?,
        };
        let pop = k % pn;
        let point = session_point(per_pop[pop]);
        per_pop[pop] += 1;
        sessions.push(S {
            player: Session::new(stream.clone(), a, t0),
            mem: Memory::new(point),
            pop,
            pathway: None,
            next_steer: t0,
            pending: None,
            ended: false,
        });
        push(&mut heap, t0, Kind::Wake(k));
    }
    let names: Vec<String> = (0..n).map(|k| k.to_string()).collect();
    let mut tallies: Vec<Tally> = (0..jn).map(|_| Tally::new(window_ms, n + 1)).collect();
    let mut in_flight = vec![0u32; jn];
    let mut on_path = vec![vec![0i64; jn]; pn]; // sessions of population q steered to j
    let mut flows: Vec<Flow> = Vec::new();
    let mut per_path = vec![0usize; jn];
    let (mut blocked, mut bytes_after, mut bytes_after_0) = (0u64, 0.0f64, 0.0f64);
    let mut reaction: Option<f64> = None;
    let mut degraded = degrade >= 1.0;
    let limit = p.float("ramp") + stream.segments as f64 * SEGMENT_S * 20.0 + 60.0;
    let mut t = 0.0f64;
    let mut live = n;

    while live > 0 {
        // The next event: a flow's end, a scheduled event, or the degradation.
        per_path.iter_mut().for_each(|c| *c = 0);
        for f in &flows {
            per_path[f.pathway] += 1;
        }
        let rate = |f: &Flow, cap: &[f64]| cap[f.pathway] * 125.0 / per_path[f.pathway] as f64; // bytes/s
        let mut t_next = f64::INFINITY;
        for f in &flows {
            t_next = t_next.min(t + f.remaining / rate(f, &cap));
        }
        if let Some(Reverse((at, _, _))) = heap.peek() {
            t_next = t_next.min(f64::from_bits(*at));
        }
        if !degraded {
            t_next = t_next.min(degrade_at);
        }
        if !t_next.is_finite() || t_next > limit {
            break;
        }
        let dt = (t_next - t).max(0.0);
        for f in &mut flows {
            f.remaining -= rate(f, &cap) * dt;
        }
        t = t_next;
        if !degraded && t >= degrade_at {
            degraded = true;
            cap[0] *= degrade;
            continue;
        }
        // Flows that ended (within a byte).
        let mut i = 0;
        let mut done_any = false;
        while i < flows.len() {
            if flows[i].remaining <= 0.5 {
                let f = flows.swap_remove(i);
                done_any = true;
                in_flight[f.pathway] -= 1;
                let s = &mut sessions[f.session];
                let elapsed = t - f.requested;
                s.player.fetched(t, f.bytes, elapsed);
                let kbps = f.bytes as f64 * 8.0 / 1000.0 / elapsed.max(1e-9);
                steering.observe(&mut s.mem, f.pathway, kbps, top, rng);
                if t >= degrade_at {
                    bytes_after += f.bytes as f64;
                    if f.pathway == 0 {
                        bytes_after_0 += f.bytes as f64;
                    }
                }
                push(&mut heap, t, Kind::Wake(f.session));
            } else {
                i += 1;
            }
        }
        if done_any {
            continue;
        }
        let Some(Reverse((_, _, kind))) = heap.pop() else {
            continue;
        };
        match kind {
            Kind::Start(k) => {
                if let Some((j, bytes)) = sessions[k].pending.take() {
                    let s = &sessions[k];
                    flows.push(Flow {
                        session: k,
                        pathway: j,
                        remaining: bytes as f64,
                        bytes,
                        requested: t - rtt * hops(s.pop, j) as f64,
                    });
                }
            }
            Kind::Wake(k) => {
                if sessions[k].ended {
                    continue;
                }
                sessions[k].player.advance(t);
                if t >= sessions[k].next_steer {
                    // Ask the steering policy (what a steering server knows now).
                    let pop = sessions[k].pop;
                    let views: Vec<Pathway> = (0..jn)
                        .map(|j| {
                            let on = per_path[j] as f64;
                            Pathway {
                                usable: true,
                                distance: hops(pop, j) as f64,
                                share: thresholds[pop * jn + j],
                                capacity_kbps: provisioned[j],
                                // Only cmcd-qoe reads the tallies: summing them up
                                // (a sort per pathway) for the others is wasted.
                                qoe: if policy == Policy::Qoe {
                                    tallies[j].summary((t * 1000.0) as u64)
                                } else {
                                    Default::default()
                                },
                                in_flight: f64::from(in_flight[j]),
                                // A probe: one round trip plus a 750 kbit/s segment at the
                                // share a new fetch would get now.
                                latency_ms: Some(
                                    1000.0
                                        * (rtt * hops(pop, j) as f64
                                            + LADDER[1] * SEGMENT_S
                                                / (if probe_sees_now {
                                                    cap[j]
                                                } else {
                                                    provisioned[j]
                                                } / (on + 1.0))),
                                ),
                            }
                        })
                        .collect();
                    let s = &mut sessions[k];
                    let order = steering.order(t, &views, &mut s.mem, rng);
                    let mut chosen = None;
                    for j in order {
                        if policy == Policy::Shares
                            && admission_enforced
                            && s.pathway != Some(j)
                            && on_path[pop][j] >= thresholds[pop * jn + j]
                        {
                            continue; // the edge's admission refuses: try the next pathway
                        }
                        chosen = Some(j);
                        break;
                    }
                    if let Some(old) = s.pathway {
                        on_path[pop][old] -= 1;
                    }
                    s.pathway = chosen;
                    s.next_steer = t + ttl;
                    match chosen {
                        Some(j) => on_path[pop][j] += 1,
                        None => {
                            // Blocked: a session not yet started counts the wait in its
                            // startup time (it started when it arrived).
                            blocked += 1;
                            push(&mut heap, t + ttl, Kind::Wake(k));
                            continue;
                        }
                    }
                }
                let s = &mut sessions[k];
                let Some(j) = s.pathway else {
                    push(&mut heap, s.next_steer, Kind::Wake(k));
                    continue;
                };
                match s.player.next(t) {
                    Next::Fetch { rendition, .. } => {
                        let report = s.player.report(rendition);
                        tallies[j].record(&names[k], (t * 1000.0) as u64, &report);
                        let bytes = s.player.stream().segment_bytes(rendition);
                        s.pending = Some((j, bytes));
                        in_flight[j] += 1;
                        push(&mut heap, t + rtt * hops(s.pop, j) as f64, Kind::Start(k));
                    }
                    Next::Wait(u) => push(&mut heap, u, Kind::Wake(k)),
                    Next::Busy => {}
                    Next::Done => {
                        s.ended = true;
                        live -= 1;
                        on_path[s.pop][j] -= 1;
                    }
                }
            }
        }
        // Reaction: pathway 0's share of the sessions is no more than its share of the
        // capacity (whatever bitrate they fall back to: ABR alone does not count).
        if degraded && degrade < 1.0 && reaction.is_none() && t >= degrade_at {
            // The counts kept per event, not a pass over every session per event.
            let on0: i64 = on_path.iter().map(|row| row[0]).sum();
            let active = live;
            if active > 0 && on0 as f64 / active as f64 <= cap[0] / cap.iter().sum::<f64>() {
                reaction = Some(t - degrade_at);
            }
        }
    }
    let end = t + stream.max_buffer_s + SEGMENT_S;
    let unfinished = sessions.iter().filter(|s| !s.ended).count();
    let mut xs = Vec::with_capacity(n);
    let mut pop_rate = vec![(0.0f64, 0usize); pn];
    for s in &mut sessions {
        s.player.advance(end);
        let x = s.player.experience();
        xs.push(x);
        pop_rate[s.pop].0 += x.mean_kbps;
        pop_rate[s.pop].1 += 1;
    }
    let mean = |f: &dyn Fn(&crate::steer::player::Experience) -> f64| {
        xs.iter().map(f).sum::<f64>() / n as f64
    };
    let rates: Vec<f64> = xs.iter().map(|x| x.mean_kbps).collect();
    let (s1, s2) = rates
        .iter()
        .fold((0.0, 0.0), |(a, b), r| (a + r, b + r * r));
    let jain = if s2 > 0.0 {
        s1 * s1 / (n as f64 * s2)
    } else {
        1.0
    };
    let pops: Vec<f64> = pop_rate
        .iter()
        .filter(|(_, c)| *c > 0)
        .map(|(s, c)| s / *c as f64)
        .collect();
    let gap = pops.iter().cloned().fold(f64::MIN, f64::max)
        - pops.iter().cloned().fold(f64::MAX, f64::min);
    Ok(vec![
        mean(&|x| x.rebuffering()),
        mean(&|x| f64::from(x.stalls)),
        mean(&|x| x.startup_s.unwrap_or(0.0)),
        mean(&|x| x.mean_kbps),
        mean(&|x| f64::from(x.switches)),
        jain,
        gap,
        if bytes_after > 0.0 {
            bytes_after_0 / bytes_after
        } else {
            0.0
        },
        reaction.unwrap_or(if degrade < 1.0 {
            (t - degrade_at).max(0.0)
        } else {
            0.0
        }),
        blocked as f64,
        unfinished as f64,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Experiment;

    fn params(set: &[(&str, crate::sim::Value)]) -> Params {
        let e = SteeringExperiment;
        let mut m = std::collections::BTreeMap::new();
        for (k, v) in set {
            m.insert(k.to_string(), v.clone());
        }
        Params::resolve(e.params(), &m).unwrap()
    }

    use crate::sim::Value::{Float, Int, Text};

    fn metric(v: &[f64], name: &str) -> f64 {
        v[METRICS.iter().position(|m| m.name == name).unwrap()]
    }

    fn go(set: &[(&str, crate::sim::Value)], seed: u64) -> Vec<f64> {
        run(&params(set), &mut crate::rng::stream(seed, 0, 0)).unwrap()
    }

    /// The fluid link's exact value: a session alone on pathway 0 (4000 kbit/s: load 0.5 of
    /// one session's 3000 with skew 0.5 gives 2/3 of 6000), no round trip, starts with
    /// hls.js's first pick (300 kbit/s, 75,000 bytes) in 0.15 s. Ten sessions starting at once
    /// on a pathway ten times as large share it equally: each first segment also takes 0.15 s.
    #[test]
    fn processor_sharing_exact() {
        for (n, startup) in [(1, 0.15), (10, 0.15)] {
            let v = go(
                &[
                    ("policy", Text("priority".into())),
                    ("abr", Text("hlsjs".into())),
                    ("sessions", Int(n)),
                    ("pathways", Int(2)),
                    ("populations", Int(1)),
                    ("load", Float(0.5)),
                    ("ramp", Float(0.0)),
                    ("rtt_ms", Float(0.0)),
                    ("degrade", Float(1.0)),
                ],
                1,
            );
            assert!(
                (metric(&v, "startup_s") - startup).abs() < 1e-9,
                "{n}: {v:?}"
            );
            assert_eq!(metric(&v, "rebuffering"), 0.0);
            assert_eq!(metric(&v, "unfinished"), 0.0);
            assert!(
                (metric(&v, "fairness") - 1.0).abs() < 1e-9,
                "alike sessions"
            );
        }
        // A round trip of 20 ms per hop adds one (pathway 0 is one hop from population 0).
        let v = go(
            &[
                ("policy", Text("priority".into())),
                ("abr", Text("hlsjs".into())),
                ("sessions", Int(1)),
                ("pathways", Int(2)),
                ("populations", Int(1)),
                ("load", Float(0.5)),
                ("ramp", Float(0.0)),
                ("degrade", Float(1.0)),
            ],
            1,
        );
        assert!((metric(&v, "startup_s") - 0.17).abs() < 1e-9, "{v:?}");
    }

    /// Static priority sends everyone to pathway 0, so after the degradation it serves every
    /// byte; with 10% left for 60 sessions (114 kbit/s each, below the lowest rendition) they
    /// stall. A replication is a function of its seed.
    #[test]
    fn static_priority_stays_on_the_degraded_pathway() {
        let set = [
            ("policy", Text("priority".into())),
            ("abr", Text("mixed".into())),
            ("load", Float(1.5)),
            ("degrade", Float(0.1)),
        ];
        let v = go(&set, 3);
        assert_eq!(metric(&v, "degraded_share"), 1.0);
        assert!(metric(&v, "rebuffering") > 0.05, "{v:?}");
        assert_eq!(v, go(&set, 3));
        assert_ne!(v, go(&set, 4));
    }
}
