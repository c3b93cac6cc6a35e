//! Experiment `tp-paths` (docs/testbed.md#tp-paths): single- against multi-source streaming
//! (T4 of the Transportation Problem paper) over real UDP sockets in the testbed, against the
//! simulator's packet model (`sim::transport::paths`) with the same paths.
//!
//! Emulated: the users' node receives one constant-bit-rate stream of `rate` packets per ms,
//! striped over n source nodes (each sends every n-th packet's worth: rate / n, evenly spaced),
//! each over its own link to the users. On every link in use, Poisson cross traffic of `cross`
//! times the link's capacity shares the queue (from the source node, to another port). Each
//! datagram carries its send time; the receiver reads the kernel's arrival stamp.
//!
//! Simulated: the packet model with, per path, capacity = the link's rate in frames per ms
//! (frame = payload + 42 bytes of UDP, IP and Ethernet headers), buffer = the link's queue in
//! frames plus the one in service, delay = the link's delay, the same rate, cross load, payload
//! and duration.

use super::agree::Agreement;
use super::fidelity::{phase, quantile};
use super::net::Testbed;
use super::spec::{Role, Spec};
use cdnlab::stats::Summary;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// UDP, IP and Ethernet headers of a datagram's frame.
pub const HEADERS: usize = 8 + 20 + 14;

/// The `[experiment]` table with `kind = "tp-paths"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Plan {
    /// Paths the stream is striped over, one emulated run each (1: single source).
    pub sources: Vec<usize>,
    /// The stream's rate, packets per ms.
    pub rate: f64,
    /// Cross traffic on every path in use, as a share of its capacity (Poisson).
    pub cross: f64,
    /// Bytes of each datagram's payload.
    pub payload: usize,
    /// Seconds of each emulated run (and of each simulated one).
    pub seconds: f64,
    /// Simulated runs per number of sources.
    pub sim_runs: u32,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            sources: vec![1, 2, 4],
            rate: 0.3,
            cross: 0.75,
            payload: 1000,
            seconds: 20.0,
            sim_runs: 20,
        }
    }
}

/// The paths as the experiment sees them.
#[derive(Debug, Clone)]
pub struct Layout {
    pub users: usize,
    /// The source nodes, each with its path's bottleneck link.
    pub sources: Vec<(usize, usize)>,
    /// Per path (all alike): capacity in frames per ms, buffer in frames.
    pub capacity: f64,
    pub buffer: usize,
    /// Per source, its path's one-way propagation delay in ms (the links' delays summed).
    pub delays_ms: Vec<f64>,
}

impl Plan {
    /// The plan of an `[experiment]` table (its `kind` already read), checked against `spec`.
    pub fn from_table(table: &toml::Table, spec: &Spec) -> Result<(Plan, Layout), crate::Error> {
        let path = &spec.source;
        let plan: Plan = super::spec::experiment_plan(table, path)?;
        let bad = |f: &str, v: &dyn std::fmt::Display, allowed: &str| {
            super::spec::bad_experiment(path, f, v, allowed)
        };
        let (users, sources) = network(spec, "tp-paths")?;
        let first = &spec.links[sources[0].1];
        if plan.sources.is_empty() || plan.sources.iter().any(|&n| n == 0 || n > sources.len()) {
            return bad(
                "sources",
                &format!("{:?}", plan.sources),
                &format!("a list of 1 to the source edges ({})", sources.len()),
            );
        }
        if !(64..=1400).contains(&plan.payload) {
            return bad("payload", &plan.payload, "64 to 1400 bytes");
        }
        let frame = (plan.payload + HEADERS) as f64;
        let capacity = first.rate / 8.0 / frame / 1000.0;
        if !(plan.rate.is_finite() && plan.rate > 0.0 && plan.rate <= capacity) {
            return bad(
                "rate",
                &plan.rate,
                &format!("packets per ms above 0, at most the path capacity ({capacity:.3})"),
            );
        }
        if !(0.0..0.999).contains(&plan.cross) {
            return bad("cross", &plan.cross, "a share of capacity in [0, 0.999)");
        }
        if !(plan.seconds.is_finite() && (1.0..=600.0).contains(&plan.seconds)) {
            return bad("seconds", &plan.seconds, "1 to 600");
        }
        if !(1..=10_000).contains(&plan.sim_runs) {
            return bad("sim_runs", &plan.sim_runs, "1 to 10000");
        }
        let layout = Layout {
            users,
            delays_ms: layout_delays(spec, users, &sources),
            sources,
            capacity,
            // tbf's limit holds the frames that wait; one more is on the wire.
            buffer: (first.queue as f64 / frame).floor() as usize + 1,
        };
        Ok((plan, layout))
    }
}

/// Each source's routed path's one-way delay to the users, ms.
fn layout_delays(spec: &Spec, users: usize, sources: &[(usize, usize)]) -> Vec<f64> {
    sources
        .iter()
        .map(|&(i, _)| spec.path_delay(i, users).as_secs_f64() * 1e3)
        .collect()
}

/// A bottleneck's rate against every other link's on the paths: at most a tenth, so that the
/// other links' queues stay short (the packet model has one queue per path, its bottleneck).
const FAST: f64 = 10.0;

/// The paths of a network for `kind` (tp-paths and tp-segments): its one clients node, and
/// every edge (a source, in the file's order) with its routed path to it. Each path's
/// bottleneck (its slowest link) is its own, all bottlenecks are alike (one rate and queue),
/// every other link of a path is at least ten times as fast, and no link of a path has loss or
/// jitter, as the packet model's paths; their propagation delays may differ (a real topology's
/// great-circle ones): (the users, [(a source, its bottleneck link)]).
pub fn network(spec: &Spec, kind: &str) -> Result<(usize, Vec<(usize, usize)>), crate::Error> {
    let bad =
        |v: &str, allowed: &str| super::spec::bad_experiment(&spec.source, "kind", v, allowed);
    let &[users] = spec.nodes_of(Role::Clients).as_slice() else {
        return bad(kind, "a network with one clients node");
    };
    let paths: Vec<(usize, Vec<usize>)> = spec
        .nodes_of(Role::Edge)
        .into_iter()
        .map(|i| (i, spec.path(i, users)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let Some((_, first_path)) = paths.first() else {
        return bad(kind, "edges (the sources) with a path to the clients node");
    };
    let slowest = |p: &[usize]| {
        p.iter()
            .copied()
            .min_by(|&x, &y| spec.links[x].rate.total_cmp(&spec.links[y].rate))
            .expect("a path has a link")
    };
    let first = &spec.links[slowest(first_path)];
    let mut sources = Vec::new();
    for (i, p) in &paths {
        let b = slowest(p);
        let k = &spec.links[b];
        let alike = k.rate == first.rate && k.queue == first.queue;
        let own = sources.iter().all(|&(_, c)| c != b);
        let clean = p.iter().all(|&l| {
            let m = &spec.links[l];
            m.loss == 0.0 && m.jitter.is_zero() && (l == b || m.rate >= FAST * k.rate)
        });
        if !(alike && own && clean) {
            return bad(
                kind,
                "paths as the packet model's: each with a bottleneck of its own, all of one rate and queue, every other link at least 10 times as fast, no loss or jitter",
            );
        }
        sources.push((*i, b));
    }
    Ok((users, sources))
}

/// Loss and latency of one stream, emulated or simulated.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stream {
    pub sources: usize,
    pub sent: u64,
    pub loss: f64,
    /// Its standard error (binomial for the emulated run; across runs for the simulated).
    pub loss_se: f64,
    pub latency_ms: f64,
    pub latency_se: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// The simulated runs' spread of their p99 (a standard deviation: what one run's p99 may
    /// differ by); NaN for the emulated run.
    #[serde(default)]
    pub p99_sd: f64,
    /// Per source path: its packets' smallest one-way delay, ms (emulated), or the model's
    /// (the path's delay and one service time).
    #[serde(default)]
    pub path_min_ms: Vec<f64>,
}

const STREAM_PORT: u16 = 5301;
const CROSS_PORT: u16 = 5401;

/// Runs the stream over each number of sources in the testbed.
pub fn emulate(
    tb: &Testbed,
    plan: &Plan,
    layout: &Layout,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Stream>, crate::Error> {
    let users = tb.spec.nodes[layout.users].address;
    let mut out = Vec::new();
    for &n in &plan.sources {
        progress(&format!(
            "{n} source{}: {} packets/s each, {:.0} cross packets/s on each path, {} s",
            if n == 1 { "" } else { "s" },
            plan.rate * 1e3 / n as f64,
            plan.cross * layout.capacity * 1e3,
            plan.seconds
        ));
        let per_stream = (plan.seconds * plan.rate * 1e3 / n as f64).round() as u64;
        let per_cross = (plan.seconds * plan.cross * layout.capacity * 1e3).round() as u64;
        // 0..n: the stream's parts; n..2n: the cross traffic of the same paths.
        let group: Vec<usize> = (0..2 * n).collect();
        let port = |g: usize| {
            if g < n {
                STREAM_PORT + g as u16
            } else {
                CROSS_PORT + (g - n) as u16
            }
        };
        let to = |g: usize| format!("{users}:{}", port(g));
        let farthest = layout.delays_ms.iter().copied().fold(0.0, f64::max);
        let limit = plan.seconds + farthest / 1e3 + 5.0;
        let got: Vec<super::probe::Datagrams> = phase(
            &group,
            "stream",
            |g| {
                let mut c = tb.cdnlab_realtime(layout.users);
                c.args(["testbed", "probe", "udp-recv", "--listen", &to(g)])
                    .args([
                        "--count",
                        &(if g < n { per_stream } else { per_cross }).to_string(),
                    ])
                    .args(["--limit-s", &limit.to_string()]);
                c
            },
            |g| {
                let (node, _) = layout.sources[g % n];
                let mut c = tb.cdnlab_realtime(node);
                c.args(["testbed", "probe", "udp-send", "--to", &to(g)])
                    .args(["--bytes", &plan.payload.to_string()]);
                if g < n {
                    c.args(["--count", &per_stream.to_string()])
                        .args(["--rate", &(plan.rate * 1e3 / n as f64).to_string()]);
                } else {
                    c.args(["--count", &per_cross.to_string()])
                        .args(["--rate", &(plan.cross * layout.capacity * 1e3).to_string()])
                        .args(["--poisson", &(tb.spec.seed + g as u64).to_string()]);
                }
                c
            },
        )?;
        let parts = &got[..n];
        let path_min_ms = parts
            .iter()
            .map(|d| {
                d.delays_us
                    .iter()
                    .min()
                    .map_or(f64::NAN, |&u| u as f64 / 1e3)
            })
            .collect();
        let sent: u64 = parts.iter().map(|d| d.sent.max(per_stream)).sum();
        let received: u64 = parts.iter().map(|d| d.received).sum();
        let mut delays: Vec<f64> = parts
            .iter()
            .flat_map(|d| d.delays_us.iter().map(|&u| u as f64 / 1e3))
            .collect();
        delays.sort_by(f64::total_cmp);
        let loss = 1.0 - received as f64 / sent.max(1) as f64;
        let mean = delays.iter().sum::<f64>() / delays.len().max(1) as f64;
        let var = delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>()
            / (delays.len().max(2) - 1) as f64;
        out.push(Stream {
            sources: n,
            sent,
            loss,
            loss_se: (loss * (1.0 - loss) / sent.max(1) as f64).sqrt(),
            latency_ms: mean,
            latency_se: (var / delays.len().max(1) as f64).sqrt(),
            p50_ms: quantile(&delays, 0.5),
            p99_ms: quantile(&delays, 0.99),
            p99_sd: f64::NAN,
            path_min_ms,
        });
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(out)
}

/// The packet model over the same paths, `plan.sim_runs` runs per number of sources.
pub fn simulate(spec: &Spec, plan: &Plan, layout: &Layout) -> Result<Vec<Stream>, crate::Error> {
    simulate_paths(spec, plan, layout, false)
}

/// [`simulate`], or with every source behind one bottleneck (`shared`: a wrong model, no path
/// diversity; the tests judge the committed run against it, and against other delays).
pub fn simulate_paths(
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    shared: bool,
) -> Result<Vec<Stream>, crate::Error> {
    use cdnlab::sim::transport::paths::{Config, simulate};
    let mut out = Vec::new();
    for &n in &plan.sources {
        let cfg = Config {
            sources: n,
            rate: plan.rate,
            capacity: layout.capacity,
            buffer: layout.buffer,
            delays: layout.delays_ms[..n].to_vec(),
            cross: plan.cross,
            duration: plan.seconds * 1e3,
            shared,
        };
        let runs: Vec<[f64; 4]> = (0..plan.sim_runs)
            .map(|r| {
                simulate(
                    &cfg,
                    &mut cdnlab::rng::stream(spec.seed, u64::from(r), n as u64),
                )
                .map(|o| [o.loss, o.latency, o.p99_latency, o.packets])
            })
            .collect::<Result<_, _>>()?;
        let of = |i: usize| Summary::of(&runs.iter().map(|r| r[i]).collect::<Vec<_>>());
        let (loss, latency, p99, packets) = (of(0), of(1), of(2), of(3));
        out.push(Stream {
            sources: n,
            sent: packets.mean as u64,
            loss: loss.mean,
            loss_se: loss.se(),
            latency_ms: latency.mean,
            latency_se: latency.se(),
            p50_ms: f64::NAN,
            p99_ms: p99.mean,
            p99_sd: p99.sd,
            path_min_ms: cfg
                .delays
                .iter()
                .map(|d| d + 1.0 / layout.capacity)
                .collect(),
        });
    }
    Ok(out)
}

/// The tolerances (docs/testbed.md#tp-paths), written before the first run:
/// - EMU-TP-1, loss per number of sources: |emulated - simulated| at most half the simulated
///   loss plus 0.2 percentage points plus 3 combined standard errors. The half is for what the
///   model leaves out: tbf lets a burst of up to two frames through at once when its bucket is
///   full and meters by tokens rather than by a packet time; the 0.2 points for a loss near 0.
/// - EMU-TP-2, mean one-way latency per number of sources: within 1 ms plus 10% of the
///   simulated (the link element's own delay error is under 0.3 ms at the 99th percentile; the
///   rest for tbf's token timing against the model's packet times).
/// - EMU-TP-3, T4's claim in the emulation: with more sources, loss and mean latency are never
///   worse (each at most its value with fewer sources plus 3 combined standard errors).
///
/// Written on 2026-12-04, before any run they judge (the paths of a real topology's distances,
/// `scenarios/testbed-tp-distance.toml`, and the next runs of the others):
/// - EMU-TP-9, the latency tail (jitter) per number of sources: the emulated p99 one-way
///   latency within 3 standard deviations of the simulated runs' p99 (one run's p99 has that
///   spread, from the same number of packets) plus 1 ms plus 10% of the simulated, EMU-TP-2's
///   allowance for what the model leaves out.
/// - EMU-TP-10, distance per source path in every run: the path's smallest emulated one-way
///   delay within 1.3 ms of the model's (its routed propagation delay, the links' great-circle
///   delays summed, plus one service time). A packet that finds every queue empty leaves tbf at
///   once or after one frame time (0 to 1 ms against the model's 1), and the link element's own
///   error is under 0.3 ms.
///
/// Written on 2026-12-04 after the first run of `testbed-tp-distance` (in which EMU-TP-2
/// disagreed at 2 and 4 sources by the model's 2 ms of serialization and burst, see
/// docs/testbed.md#tp-distance, and EMU-TP-3 failed as the model predicts), before the runs it
/// judges:
/// - EMU-TP-11, what more sources change: the emulated change of the mean latency from one
///   number of sources to the next within 1 ms plus 10% of the simulated change plus 3
///   standard errors of the two changes combined. The model's systematic offset (a service time the
///   testbed's tbf does not serialize, and its two-frame burst) is common to both numbers of
///   sources and cancels in the difference, except for the part that grows with the queue's
///   wait: the 1 ms.
pub fn judge(emulated: &[Stream], simulated: &[Stream]) -> Vec<Agreement> {
    let row = |claim: &str, case: String, emulated: String, simulated: String, tol: &str, agree| {
        Agreement {
            experiment: "tp-paths".into(),
            claim: claim.into(),
            case,
            emulated,
            simulated,
            tolerance: tol.into(),
            agree,
        }
    };
    let mut rows = Vec::new();
    for (e, s) in emulated.iter().zip(simulated) {
        let case = format!("sources={}", e.sources);
        let allowed = 0.5 * s.loss + 0.002 + 3.0 * (e.loss_se.powi(2) + s.loss_se.powi(2)).sqrt();
        rows.push(row(
            "EMU-TP-1",
            case.clone(),
            format!("loss {:.3}% of {} packets", 100.0 * e.loss, e.sent),
            format!("loss {:.3}% ± {:.3}", 100.0 * s.loss, 100.0 * s.loss_se),
            "half the simulated + 0.2 points + 3 se",
            (e.loss - s.loss).abs() <= allowed,
        ));
        let tail = 3.0 * s.p99_sd + 1.0 + 0.1 * s.p99_ms;
        rows.push(row(
            "EMU-TP-9",
            case.clone(),
            format!("p99 {:.2} ms", e.p99_ms),
            format!("p99 {:.2} ms (sd {:.2})", s.p99_ms, s.p99_sd),
            "3 sd + 1 ms + 10%",
            (e.p99_ms - s.p99_ms).abs() <= tail,
        ));
        for (p, (em, sm)) in e.path_min_ms.iter().zip(&s.path_min_ms).enumerate() {
            rows.push(row(
                "EMU-TP-10",
                format!("{case} path={}", p + 1),
                format!("shortest {em:.2} ms"),
                format!("{sm:.2} ms (delay + service)"),
                "1.3 ms",
                (em - sm).abs() <= 1.3,
            ));
        }
        rows.push(row(
            "EMU-TP-2",
            case,
            format!("latency {:.2} ms (p99 {:.2})", e.latency_ms, e.p99_ms),
            format!("{:.2} ms (p99 {:.2})", s.latency_ms, s.p99_ms),
            "1 ms + 10%",
            (e.latency_ms - s.latency_ms).abs() <= 1.0 + 0.1 * s.latency_ms,
        ));
    }
    for w in emulated.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if b.sources <= a.sources {
            continue;
        }
        let loss_ok = b.loss <= a.loss + 3.0 * (a.loss_se.powi(2) + b.loss_se.powi(2)).sqrt();
        let lat_ok = b.latency_ms
            <= a.latency_ms + 3.0 * (a.latency_se.powi(2) + b.latency_se.powi(2)).sqrt();
        rows.push(row(
            "EMU-TP-3",
            format!("sources={} vs {}", b.sources, a.sources),
            format!(
                "loss {:.3}% vs {:.3}%, latency {:.2} vs {:.2} ms",
                100.0 * b.loss,
                100.0 * a.loss,
                b.latency_ms,
                a.latency_ms
            ),
            "never worse with more sources (tp.multisource)".into(),
            "3 combined se",
            loss_ok && lat_ok,
        ));
    }
    let se = |x: &Stream, y: &Stream| (x.latency_se.powi(2) + y.latency_se.powi(2)).sqrt();
    for (we, ws) in emulated.windows(2).zip(simulated.windows(2)) {
        let ((a, b), (sa, sb)) = ((&we[0], &we[1]), (&ws[0], &ws[1]));
        if b.sources <= a.sources {
            continue;
        }
        let (de, ds) = (b.latency_ms - a.latency_ms, sb.latency_ms - sa.latency_ms);
        let allowed = 1.0 + 0.1 * ds.abs() + 3.0 * (se(a, b).powi(2) + se(sa, sb).powi(2)).sqrt();
        rows.push(row(
            "EMU-TP-11",
            format!("sources={} vs {}", b.sources, a.sources),
            format!("latency {de:+.2} ms"),
            format!("{ds:+.2} ms"),
            "1 ms + 10% + 3 se",
            (de - ds).abs() <= allowed,
        ));
    }
    rows
}

/// `streams.csv`: emulated and simulated, per number of sources (`path_min_ms`: per source
/// path, separated by `;`).
pub fn table(emulated: &[Stream], simulated: &[Stream]) -> Vec<u8> {
    let mut t = String::from(
        "side,sources,sent,loss,loss_se,latency_ms,latency_se,p50_ms,p99_ms,p99_sd,path_min_ms\n",
    );
    for (side, v) in [("emulated", emulated), ("simulated", simulated)] {
        for s in v {
            let mins: Vec<String> = s.path_min_ms.iter().map(|m| m.to_string()).collect();
            t.push_str(&format!(
                "{side},{},{},{},{},{},{},{},{},{},{}\n",
                s.sources,
                s.sent,
                s.loss,
                s.loss_se,
                s.latency_ms,
                s.latency_se,
                s.p50_ms,
                s.p99_ms,
                s.p99_sd,
                mins.join(";")
            ));
        }
    }
    t.into_bytes()
}

/// Reads [`table`]'s rows of one side back (the tests judge a committed run again).
pub fn read_table(text: &str, side: &str) -> Vec<Stream> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.strip_prefix(side)?.strip_prefix(','))
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let x = |i: usize| f.get(i)?.parse::<f64>().ok();
            Some(Stream {
                sources: f.first()?.parse().ok()?,
                sent: f.get(1)?.parse().ok()?,
                loss: x(2)?,
                loss_se: x(3)?,
                latency_ms: x(4)?,
                latency_se: x(5)?,
                p50_ms: x(6)?,
                p99_ms: x(7)?,
                p99_sd: x(8)?,
                path_min_ms: f
                    .get(9)?
                    .split(';')
                    .map(|m| m.parse().ok())
                    .collect::<Option<_>>()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed emulated run (bench/results/testbed/NAME/streams.csv, made by
    /// `bench/emulation.sh`) with its scenario's plan and layout.
    fn committed(name: &str) -> (Spec, Plan, Layout, Vec<Stream>) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let spec =
            super::super::spec::load(&root.join(format!("scenarios/testbed-{name}.toml"))).unwrap();
        let (plan, layout) = Plan::from_table(spec.experiment.as_ref().unwrap(), &spec).unwrap();
        let file = format!("bench/results/testbed/{name}/streams.csv");
        let text = std::fs::read_to_string(root.join(&file))
            .unwrap_or_else(|e| panic!("{file}: {e}: run sudo bench/emulation.sh {name}"));
        let emulated = read_table(&text, "emulated");
        assert_eq!(emulated.len(), plan.sources.len());
        (spec, plan, layout, emulated)
    }

    /// The committed run of four alike paths judged again: against the packet model as built
    /// every case agrees; against the wrong model of one shared bottleneck (no path diversity),
    /// run through the same simulator and judge, the multi-source losses disagree.
    #[test]
    fn the_committed_run_agrees_and_a_shared_bottleneck_does_not() {
        let (spec, plan, layout, emulated) = committed("tp-paths");
        let right = judge(&emulated, &simulate(&spec, &plan, &layout).unwrap());
        assert!(right.iter().all(|r| r.agree), "{right:#?}");
        let shared = judge(
            &emulated,
            &simulate_paths(&spec, &plan, &layout, true).unwrap(),
        );
        for case in ["sources=2", "sources=4"] {
            let r = shared
                .iter()
                .find(|r| r.claim == "EMU-TP-1" && r.case == case)
                .unwrap();
            assert!(!r.agree, "{r:?}");
        }
    }

    /// The committed run over a real topology's distances judged again: against the packet
    /// model with the routed great-circle delays every case agrees but the recorded three
    /// (docs/testbed.md#tp-distance: EMU-TP-2 at 2 and 4 sources, the model's serialization;
    /// EMU-TP-3 at 4 against 2, which the model predicts); with plausible wrong delays run
    /// through the same simulator and judge, the distance claim disagrees: no propagation
    /// delay (the loopback's world), and one delay for every path (their mean, as a model of
    /// alike paths would take).
    #[test]
    fn the_committed_distance_run_agrees_and_wrong_delays_do_not() {
        let (spec, plan, layout, emulated) = committed("tp-distance");
        let right = judge(&emulated, &simulate(&spec, &plan, &layout).unwrap());
        let disagree: Vec<(&str, &str)> = right
            .iter()
            .filter(|r| !r.agree)
            .map(|r| (r.claim.as_str(), r.case.as_str()))
            .collect();
        assert_eq!(
            disagree,
            [
                ("EMU-TP-2", "sources=2"),
                ("EMU-TP-2", "sources=4"),
                ("EMU-TP-3", "sources=4 vs 2")
            ],
            "{right:#?}"
        );
        let mean = layout.delays_ms.iter().sum::<f64>() / layout.delays_ms.len() as f64;
        for (what, delays) in [
            ("no propagation", vec![0.0; layout.delays_ms.len()]),
            ("one delay", vec![mean; layout.delays_ms.len()]),
        ] {
            let wrong = Layout {
                delays_ms: delays,
                ..layout.clone()
            };
            let rows = judge(&emulated, &simulate(&spec, &plan, &wrong).unwrap());
            assert!(
                rows.iter().any(|r| r.claim == "EMU-TP-10" && !r.agree),
                "{what}: {rows:#?}"
            );
        }
    }

    /// The network check: a path whose slowest link is shared, or a second link as slow as
    /// the bottleneck, is refused; paths of different delays are taken, each its own.
    #[test]
    fn paths_must_be_the_packet_models() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let file = root.join("scenarios/testbed-tp-distance.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        let spec = super::super::spec::parse(&text, &file).unwrap();
        let (_, layout) = Plan::from_table(spec.experiment.as_ref().unwrap(), &spec).unwrap();
        assert!(
            layout.delays_ms.windows(2).all(|w| w[0] < w[1]),
            "{:?}",
            layout.delays_ms
        );
        // The users' own link as slow as the bottlenecks: every path shares it.
        let slow = text.replacen("rate = \"100Mbit\"", "rate = 8336000", 1);
        let spec = super::super::spec::parse(&slow, &file).unwrap();
        let got = Plan::from_table(spec.experiment.as_ref().unwrap(), &spec)
            .unwrap_err()
            .to_string();
        assert!(got.contains("each with a bottleneck of its own"), "{got}");
    }
}
