//! `paths`: a simple packet-level model of single-source and multi-source (striped) streaming
//! over congested links (experiment T4 of `docs/spec/transport.md`; `docs/transport.md`).
//!
//! Each path is one bottleneck link: capacity `capacity` packets per ms, a drop-tail FIFO buffer
//! of `buffer` packets, propagation delay `delay` ms, and Poisson cross traffic of load
//! `cross` (fraction of capacity). A stream is constant-bit-rate at `rate` packets per ms. A
//! single-source stream sends every packet over one path; a multi-source stream sends packet i
//! over path i mod `sources`, so each path carries rate / sources. Each link is a queue with
//! deterministic service: a packet arriving at t leaves at max(t, last departure) + 1/capacity
//! unless `buffer` packets are already waiting or in service, in which case it is dropped.

use crate::Error;
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use crate::workload::arrivals::exponential;
use std::collections::VecDeque;

/// The experiment.
pub struct PathsExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int(
        "sources",
        1,
        16,
        1,
        "paths a stream is striped over (1: single source)",
    ),
    ParamSpec::positive("rate", 1e6, 0.3, "stream rate, packets per ms"),
    ParamSpec::positive("capacity", 1e6, 1.0, "link capacity, packets per ms"),
    ParamSpec::int("buffer", 1, 1_000_000, 20, "drop-tail buffer, packets"),
    ParamSpec::float("delay", 0.0, 1e6, 10.0, "propagation delay of a path, ms"),
    ParamSpec::float(
        "cross",
        0.0,
        0.999,
        0.6,
        "cross traffic on every path, as a fraction of capacity (Poisson)",
    )
    .unit("fraction of path capacity"),
    ParamSpec::positive("duration", 1e9, 100_000.0, "simulated ms"),
    ParamSpec::choice(
        "paths",
        &["disjoint", "shared"],
        "whether the sources' paths are disjoint (each its own bottleneck and cross traffic) or \
         share one bottleneck (a wrong model: no path diversity, see docs/claims.md)",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new("loss", "fraction", "packets lost per packet sent"),
    MetricSpec::new("latency", "ms", "mean one-way latency of delivered packets"),
    MetricSpec::new("p99_latency", "ms", "99th-percentile latency"),
    MetricSpec::new("packets", "packets", "packets sent"),
];

/// One stream over its paths: the model's parameters, with a propagation delay per path (the
/// experiment's `delay` for every path; the testbed's paths differ, as a real topology's do).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub sources: usize,
    /// Packets per ms.
    pub rate: f64,
    /// Packets per ms of each path's bottleneck.
    pub capacity: f64,
    pub buffer: usize,
    /// Per source, ms (`sources` of them).
    pub delays: Vec<f64>,
    pub cross: f64,
    pub duration: f64,
    /// Every source behind one bottleneck (the wrong model of docs/claims.md).
    pub shared: bool,
}

/// A replication's measures, in the order of the experiment's metrics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub loss: f64,
    pub latency: f64,
    pub p99_latency: f64,
    pub packets: f64,
}

/// One replication of `cfg`: each path's queue in turn (they are independent), the stream's
/// packet i on path i mod `sources`, its latency the queue's sojourn plus its path's delay.
pub fn simulate(cfg: &Config, rng: &mut Rng) -> Result<Outcome, Error> {
    if cfg.delays.len() != cfg.sources || cfg.sources == 0 {
        return Err(Error::param(
            "delays",
            cfg.delays.len(),
            "one propagation delay per source",
        ));
    }
    let (rate, capacity, buffer, cross, duration) =
        (cfg.rate, cfg.capacity, cfg.buffer, cfg.cross, cfg.duration);
    let service = 1.0 / capacity;
    let mut latencies: Vec<f64> = Vec::new();
    let (mut sent, mut lost) = (0u64, 0u64);
    // Shared paths: every source's packets join one queue, so the link sees the whole stream.
    let lanes = if cfg.shared { 1 } else { cfg.sources };
    for path in 0..lanes {
        // The stream's packets on this path: every lanes-th of a CBR stream.
        let gap = lanes as f64 / rate;
        let mut next_stream = path as f64 / rate;
        // Which source the next stream packet comes from (its path's delay).
        let mut index = path;
        let cross_rate = cross * capacity;
        let exp = |rng: &mut Rng| exponential(rng, 1.0 / cross_rate);
        let mut next_cross = if cross_rate > 0.0 {
            exp(rng)
        } else {
            f64::INFINITY
        };
        let mut queue: VecDeque<f64> = VecDeque::new(); // departure times in the system
        let mut last = 0.0f64;
        loop {
            let (t, ours) = if next_stream <= next_cross {
                (next_stream, true)
            } else {
                (next_cross, false)
            };
            if t > duration {
                break;
            }
            let delay = cfg.delays[index % cfg.sources];
            if ours {
                next_stream += gap;
                index += lanes;
            } else {
                next_cross += exp(rng);
            }
            while queue.front().is_some_and(|&d| d <= t) {
                queue.pop_front();
            }
            if ours {
                sent += 1;
            }
            if queue.len() >= buffer {
                if ours {
                    lost += 1;
                }
                continue;
            }
            let depart = last.max(t) + service;
            last = depart;
            queue.push_back(depart);
            if ours {
                latencies.push(depart - t + delay);
            }
        }
    }
    let delivered = latencies.len();
    let mean = latencies.iter().sum::<f64>() / delivered.max(1) as f64;
    latencies.sort_by(f64::total_cmp);
    let p99 = latencies
        .get(((delivered as f64 * 0.99) as usize).min(delivered.saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN);
    Ok(Outcome {
        loss: lost as f64 / sent.max(1) as f64,
        latency: mean,
        p99_latency: p99,
        packets: sent as f64,
    })
}

/// One replication of the experiment: every path with the same delay.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    let sources = p.int("sources") as usize;
    let cfg = Config {
        sources,
        rate: p.float("rate"),
        capacity: p.float("capacity"),
        buffer: p.int("buffer") as usize,
        delays: vec![p.float("delay"); sources],
        cross: p.float("cross"),
        duration: p.float("duration"),
        shared: p.text("paths") == "shared",
    };
    let o = simulate(&cfg, rng)?;
    Ok(vec![o.loss, o.latency, o.p99_latency, o.packets])
}

crate::sim::experiment! {
    PathsExperiment = "paths",
    "packet loss and latency of single- vs multi-source streaming over congested drop-tail links",
    PARAMS, METRICS; crate::sim::no_check, run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Experiment;
    use crate::sim::params::Params;
    use std::collections::BTreeMap;

    fn run(sources: i64, cross: f64, buffer: i64) -> Vec<f64> {
        let mut given = BTreeMap::new();
        given.insert("sources".to_string(), crate::sim::Value::Int(sources));
        given.insert("cross".to_string(), crate::sim::Value::Float(cross));
        given.insert("buffer".to_string(), crate::sim::Value::Int(buffer));
        let p = Params::resolve(PARAMS, &given).unwrap();
        PathsExperiment
            .run(&p, &mut crate::rng::stream(3, 0, 0))
            .unwrap()
    }

    /// Without cross traffic and with the stream below capacity nothing is lost and a packet
    /// takes exactly its service time plus the propagation delay.
    #[test]
    fn idle_links_are_exact() {
        let r = run(1, 0.0, 20);
        assert_eq!(r[0], 0.0);
        assert!((r[1] - 11.0).abs() < 1e-9, "{r:?}");
    }

    /// Striping over three paths with the same cross traffic lowers each path's load (0.6 +
    /// 0.3 against 0.6 + 0.1 of capacity): loss and mean latency both fall.
    #[test]
    fn striping_lowers_loss_and_latency_on_congested_paths() {
        let (one, three) = (run(1, 0.6, 20), run(3, 0.6, 20));
        assert!(three[0] < one[0], "{one:?} {three:?}");
        assert!(three[1] < one[1], "{one:?} {three:?}");
    }

    /// Paths of different delays on idle links: the stream's packets alternate over them, so
    /// the mean latency is the service time plus the delays' mean, and the 99th percentile the
    /// service time plus the largest; a packet from source s always takes path s's delay, also
    /// when the sources share one bottleneck.
    #[test]
    fn each_packet_takes_its_own_paths_delay() {
        for shared in [false, true] {
            let cfg = Config {
                sources: 4,
                rate: 0.2,
                capacity: 1.0,
                buffer: 20,
                delays: vec![0.0, 2.0, 6.0, 8.0],
                cross: 0.0,
                duration: 10_000.0,
                shared,
            };
            let o = simulate(&cfg, &mut crate::rng::stream(3, 0, 0)).unwrap();
            assert_eq!(o.loss, 0.0);
            assert!((o.latency - 5.0).abs() < 1e-2, "{shared} {o:?}");
            assert!((o.p99_latency - 9.0).abs() < 1e-9, "{shared} {o:?}");
        }
        let bad = Config {
            sources: 2,
            rate: 0.2,
            capacity: 1.0,
            buffer: 20,
            delays: vec![1.0],
            cross: 0.0,
            duration: 10.0,
            shared: false,
        };
        assert!(simulate(&bad, &mut crate::rng::stream(3, 0, 0)).is_err());
    }
}
