//! Reproductions of multi-hash replication in a DHT-based CDN (spec `docs/spec/multihash.md`,
//! experiments X1-X6). Every pass/fail is computed from the run's summary against the spec's
//! formulas, with the tolerance stated in the claim.

use super::{Claim, Reproduction, in_every_run, metric, num, runs, se, text, twin, words};
use crate::runner::SummaryRow;
use crate::scenario::Scenario;
use cdnlab::dht::analysis;
use cdnlab::workload::popularity::Law;
use serde_json::json;

fn claim(id: &str, text: &str, measured: serde_json::Value, expected: String, pass: bool) -> Claim {
    super::claim("multihash", id, text, measured, expected, pass)
}

/// Replications behind a summary row.
fn reps(r: &SummaryRow) -> f64 {
    r.metrics.first().map_or(1.0, |m| m.n as f64)
}

/// The multi-hash reproductions.
pub fn registry() -> Vec<Reproduction> {
    vec![
        Reproduction {
            id: "mh-x1",
            paper: "multihash",
            title: "Multi-hash X1: random binary search, probes and uniformity",
            quick: scenario!("mh-x1.toml"),
            full: scenario!("mh-x1-full.toml"),
            notes: "One file whose replicas are the prefix 1..n of K hash functions. RBS: hi = K; \
                    pick i uniform in [1, hi]; a hit serves, a miss sets hi = i - 1. The served \
                    index is uniform on 1..n (chi-square against the 10<sup>-4</sup> bound) and \
                    the probes per request are 1 + H<sub>K</sub> - H<sub>n</sub>, with variance \
                    the sum over j in (n, K] of 1/j - 1/j<sup>2</sup>.",
            claims: x1,
        },
        Reproduction {
            id: "mh-x2",
            paper: "multihash",
            title: "Multi-hash X2: RBS against binary search and an oracle",
            quick: scenario!("mh-x2.toml"),
            full: scenario!("mh-x2-full.toml"),
            notes: "Binary search finds the highest used index (assuming a prefix, about \
                    log<sub>2</sub> K probes) and then fetches a uniform pick (one more); the \
                    oracle knows n<sub>f</sub> and fetches once. RBS needs no knowledge of \
                    n<sub>f</sub> and fewer probes than binary search at every n.",
            claims: x2,
        },
        Reproduction {
            id: "mh-gaps",
            paper: "multihash",
            title: "Multi-hash: one gap, serve probabilities and random gap removal",
            quick: scenario!("mh-gaps.toml"),
            full: scenario!("mh-gaps-full.toml"),
            notes: "Replicas 1..n with index g missing. Requests serve from j &lt; g with \
                    probability (1/n)(1 + 1/(g - 1)) and from j &gt; g with 1/n; with g = 1 a \
                    request fails with probability 1/n. Random gap removal (each replica i &gt; 1 \
                    probes a uniform j in [1, i - 1] per round) fills the gap after (n - 1)/(n - g) \
                    rounds on average.",
            claims: gaps,
        },
        Reproduction {
            id: "mh-multigap",
            paper: "multihash",
            title: "Multi-hash: several gaps, against the exact recursion",
            quick: scenario!("mh-multigap.toml"),
            full: scenario!("mh-multigap-full.toml"),
            notes: "Random indices below the top replica are missing. The served index and the \
                    failures follow P<sub>hi</sub>(j) = (1/hi) [1{j &le; hi, j used} + the sum \
                    over unused i &le; hi of P<sub>i-1</sub>(j)], P<sub>0</sub> = fail.",
            claims: multigap,
        },
        Reproduction {
            id: "mh-x3",
            paper: "multihash",
            title: "Multi-hash X3: load balance with and without replication, against production hashing",
            quick: scenario!("mh-x3.toml"),
            full: scenario!("mh-x3-full.toml"),
            notes: "N = 1000 nodes, M = 10<sup>4</sup> Zipf files, load 0.5 of capacity, \
                    c<sub>high</sub> = 0.1 (a replica takes at most a fifth of a node's mean \
                    load), windows of 1000 time units, growth by jump. Without replication the \
                    node holding the most popular file carries its whole demand; bounded loads \
                    caps every node at 1.25 x the mean by sending requests past their hash \
                    position (giving up affinity); rendezvous and Maglev balance files, not \
                    demand. Replica counts are checked in mh-steady.",
            claims: x3,
        },
        Reproduction {
            id: "mh-steady",
            paper: "multihash",
            title: "Multi-hash: steady-state replicas of the hottest files, short and long windows",
            quick: scenario!("mh-steady.toml"),
            full: scenario!("mh-steady-full.toml"),
            notes: "Replica counts at the end against the band [ceil(lambda_f / c_high), \
                    ceil(lambda_f / (gamma c_high))] (ends capped at K), for the 10 most popular \
                    files and for all files. Overload is detected per replica from its count in \
                    one window; a hot file has many replicas, and the busiest of them sees the \
                    largest upward noise, so with the default window (200 time units, about 20 \
                    requests per replica) hot files keep replicating past their steady count \
                    (the top file 58-68 replicas against a steady 33 at alpha 0.8). With a \
                    window 50 times longer the noise is small and every hot file sits in its \
                    band.",
            claims: steady,
        },
        Reproduction {
            id: "mh-x4",
            paper: "multihash",
            title: "Multi-hash X4: a flash crowd, growth variants and de-replication",
            quick: scenario!("mh-x4.toml"),
            full: scenario!("mh-x4-full.toml"),
            notes: "The most popular file's demand is multiplied by 5 from window 10 to window 30. \
                    One replica per window follows slowly; doubling and jump reach the new \
                    replica count within a few windows (jump overshoots: every overloaded replica \
                    estimates the demand from its own noisy count, and the largest estimate wins \
                    at the arbiters). After the drop the top replica removes itself one window at \
                    a time while the others would stay below gamma c<sub>high</sub>.",
            claims: x4,
        },
        Reproduction {
            id: "mh-x5",
            paper: "multihash",
            title: "Multi-hash X5: node crashes, gaps and their repair",
            quick: scenario!("mh-x5.toml"),
            full: scenario!("mh-x5-full.toml"),
            notes: "A fraction of the nodes crashes after window 20. Replicas on them are lost; \
                    their positions pass to successors that do not hold them, so a lost index \
                    below a surviving one is a gap. The failure rate of the next window is \
                    predicted per file by the exact recursion on its surviving indices and \
                    weighted by popularity. Files left with no replica are restored from the \
                    origin at the end of the window in which a request misses. The runs go on \
                    100 windows after the crash: a gap just below the top of the hottest file \
                    (about 150 replicas) is found with probability (n - g) / (n - 1) per round, \
                    so a run's last gap can take tens of rounds (the slowest quick run took \
                    29); the repair claim is checked per run.",
            claims: x5,
        },
        Reproduction {
            id: "mh-x6",
            paper: "multihash",
            title: "Multi-hash X6: overhead and DHT hops",
            quick: scenario!("mh-x6.toml"),
            full: scenario!("mh-x6-full.toml"),
            notes: "Probes per request (each a DHT lookup), messages per replica created (the \
                    gallop and binary search of every concurrent attempt, and the \
                    CREATE_IF_ABSENT messages), messages per repair round, and the hops of a \
                    Chord lookup on the same ring (greedy fingers to the key's predecessor).",
            claims: x6,
        },
    ]
}

mod balance;
mod lookup;
mod repair;

use balance::*;
use lookup::*;
use repair::*;

#[cfg(test)]
mod falsify;
#[cfg(test)]
pub(super) use falsify::falsifiers;
