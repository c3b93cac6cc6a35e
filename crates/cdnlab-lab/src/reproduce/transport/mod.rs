//! Reproductions of optimal server allocation for streaming (spec `docs/spec/transport.md`,
//! experiments T1-T5). Every pass/fail is computed from the run's summary.

use super::{Claim, Reproduction, in_every_run, metric, num, runs, se, summary, text, twin, words};
use crate::runner::SummaryRow;
use crate::scenario::Scenario;
use serde_json::json;

fn claim(id: &str, text: &str, measured: serde_json::Value, expected: String, pass: bool) -> Claim {
    super::claim("transport", id, text, measured, expected, pass)
}

/// Half-width of the 95% interval of metric `name` in row `r`.
fn ci(sc: &Scenario, r: &SummaryRow, name: &str) -> f64 {
    summary(sc, r, name).ci95
}

/// The transport reproductions.
pub fn registry() -> Vec<Reproduction> {
    vec![
        Reproduction {
            id: "tp-t1",
            paper: "transport",
            title: "Transport T1: blocking vs load, optimal allocation vs baselines",
            quick: scenario!("tp-t1.toml"),
            full: scenario!("tp-t1-full.toml"),
            notes: "Reference instance: 8 metros, 12 links, hop costs, one server per metro \
                    (capacities 80, 120, 100, 60, 120, 80, 80, 160 streams), one population per \
                    metro, Poisson arrivals at rho D<sub>i</sub> / h, holding time h = 90 minutes. \
                    S0: thresholds T<sub>ij</sub> = x<sub>ij</sub> of the optimal Transportation \
                    Problem solution, CP-1. S1: the nearest server only. S3: north-west corner \
                    thresholds. S4: any server with room, nearest first. Complete partitioning \
                    gives every population exactly D<sub>i</sub> circuits whichever servers hold \
                    them, so S0 and S3 block alike and differ in distance (the hops plot).",
            claims: t1,
        },
        Reproduction {
            id: "tp-t1-random",
            paper: "transport",
            title: "Transport T1 on random 50-metro topologies",
            quick: scenario!("tp-t1-random.toml"),
            full: scenario!("tp-t1-random-full.toml"),
            notes: "A new random graph in every replication: a ring of 50 metros plus 25 random \
                    chords, capacities uniform in 40-160 streams, and demands that are the \
                    capacities of a random permutation of the metros (so demand sits where \
                    capacity is not). Same policies and admission as T1.",
            claims: t1_random,
        },
        Reproduction {
            id: "tp-t2",
            paper: "transport",
            title: "Transport T2: per-population blocking against Erlang-B",
            quick: scenario!("tp-t2.toml"),
            full: scenario!("tp-t2-full.toml"),
            notes: "Under the optimal allocation each population is an Erlang loss system with \
                    D<sub>i</sub> circuits: its blocking is ErlangB(rho D<sub>i</sub>, \
                    D<sub>i</sub>), whatever the holding-time distribution, and whether a stream \
                    comes from one server (CP-1) or is striped over the cluster (CP-2). Standard \
                    errors come from 20 batch means per run (blocking is correlated in time).",
            claims: t2,
        },
        Reproduction {
            id: "tp-t3",
            paper: "transport",
            title: "Transport T3: a demand shift, with and without re-allocation",
            quick: scenario!("tp-t3.toml"),
            full: scenario!("tp-t3-full.toml"),
            notes: "Demand moves from R1 to the spec's shift profile (80, 128, 160, 32, 96, 64, 80, \
                    160) at hour 100, rho = 0.9. With re-allocation, every 10 hours a population \
                    whose blocking in the window exceeded 5% triggers a re-estimate of the \
                    demands (the window's arrival counts, scaled to the total capacity), a warm \
                    re-solve from the previous basis, and new thresholds; streams in progress are \
                    not pre-empted. Without it (S2) the old thresholds stay. Each point is an \
                    independent run stopped at that hour, measuring its last 20 hours (a \
                    reconstruction: the spec's sliding window is read as tumbling 10-hour \
                    windows).",
            claims: t3,
        },
        Reproduction {
            id: "tp-net-t1",
            paper: "transport",
            title: "Transport T1 on real networks: every SNDlib network and a Topology Zoo sample",
            quick: scenario!("tp-net-t1.toml"),
            full: scenario!("tp-net-t1-full.toml"),
            notes: "Each network of the built-in catalogue (all 26 SNDlib networks with their \
                    demand matrices, 30 Topology Zoo networks with the uniform all-pairs \
                    matrix) becomes a streaming instance: a population per node with the \
                    demand that ends there, a server per node with capacity placed at the hubs \
                    (in proportion to the traffic the node carries when the matrix follows \
                    shortest paths) or by degree, the same total as the demand, hop costs over \
                    the real links; links unlimited (the spec's model) or sized to the traffic \
                    they carry. The optimal allocation (thresholds, CP-1), nearest-server-only \
                    and full sharing run on the same arrivals; the gap is nearest's blocking \
                    minus the optimal allocation's. The mismatch is the share of demand that \
                    cannot be served at its own node. One row per network and cell in \
                    summary.csv, joinable by name with other tools' tables \
                    (docs/transport.md#on-real-networks).",
            claims: net_t1,
        },
        Reproduction {
            id: "tp-net-t3",
            paper: "transport",
            title: "Transport T3 on real networks: a day of demand in each node's time zone",
            quick: scenario!("tp-net-t3.toml"),
            full: scenario!("tp-net-t3-full.toml"),
            notes: "The static demand of each population is modulated every 5 minutes by a \
                    daily cycle, 1 + 0.5 cos(2&pi;(local hour - 21) / 24), in the node's local \
                    solar time (UTC + longitude / 15): demand moves west with the evening \
                    across a continent, and rises everywhere at once in a country. After a \
                    day of warm-up, each point is a run stopped at that hour of the second day, \
                    measuring its last 4 hours, with and without re-allocation (every hour, \
                    when a population's blocking exceeded 5%: re-estimate from the window's \
                    arrivals, re-solve warm from the previous basis). Each re-solve is also \
                    solved cold, for the pivots and times (times are wall-clock and vary).",
            claims: net_t3,
        },
        Reproduction {
            id: "tp-t4",
            paper: "transport",
            title: "Transport T4: single-source vs multi-source delivery over congested links",
            quick: scenario!("tp-t4.toml"),
            full: scenario!("tp-t4-full.toml"),
            notes: "A simple packet-level model: each path is one bottleneck link (capacity 1 \
                    packet per ms, drop-tail buffer of 20 packets, 10 ms propagation) with \
                    Poisson cross traffic; the stream (0.3 packets per ms, constant bit rate) \
                    goes over one path or is striped round-robin over several, so each carries \
                    0.3 / k. Path diversity spreads the stream's load, so every path runs \
                    further from saturation.",
            claims: t4,
        },
        Reproduction {
            id: "tp-slack",
            paper: "transport",
            title: "Transport: partial sharing of slack in admission",
            quick: scenario!("tp-slack.toml"),
            full: scenario!("tp-slack-full.toml"),
            notes: "An option of the spec's admission rule, reconstructed as trunk reservation: \
                    under the optimal allocation with CP-1, a request refused by every threshold \
                    of its cluster takes a free slot at a cluster server while more than reserve \
                    x capacity slots are free there. Reserve 1 is complete partitioning; lower \
                    reserves lend more of the other populations' unused share, at the risk of \
                    taking it when they need it.",
            claims: slack,
        },
        Reproduction {
            id: "tp-balance",
            paper: "transport",
            title: "Transport: load balance within a cluster under CP-1",
            quick: scenario!("tp-balance.toml"),
            full: scenario!("tp-balance-full.toml"),
            notes: "The spec says request-handling protocols balance load within a cluster; CP-1 \
                    picks, among its cluster's servers under their threshold, the largest \
                    residual share. Read as free slots T<sub>ij</sub> - n<sub>ij</sub> (the \
                    default, which fills the big, usually nearby share first and keeps hops \
                    low) or as the free fraction (T<sub>ij</sub> - n<sub>ij</sub>) / \
                    T<sub>ij</sub> (which equalises occupancy), with nearest-first as a control. \
                    The balance measure is the spread, largest minus smallest, of the occupancies \
                    n<sub>ij</sub> / T<sub>ij</sub> across the cluster, seen by each arrival of \
                    a population with two or more cluster servers. Under complete partitioning \
                    the pick cannot change blocking (each population keeps its D<sub>i</sub> \
                    circuits).",
            claims: balance,
        },
        Reproduction {
            id: "tp-t5",
            paper: "transport",
            title: "Transport T5: solver time vs size, cold and warm, against a reference LP solver",
            quick: scenario!("tp-t5.toml"),
            full: scenario!("tp-t5-full.toml"),
            notes: "Dense random balanced instances, size x size, costs 1..1000, supplies and \
                    demands 1..100 (demands scaled to the total supply), a new instance per \
                    replication. Cold: the network simplex from the all-artificial tree. Warm: \
                    after 1% of the demands each give up to 20 units to another demand, a \
                    re-solve from the first optimum's tree (dual phase, then primal), compared \
                    with a cold solve of the changed instance. Reference: the same problem as a \
                    plain LP for good_lp + microlp (a general simplex, dense, hence the size \
                    limit), and every instance of every size as a min-cost flow for LEMON's \
                    network simplex (the mcmf crate; optima only, not timed). Times are \
                    wall-clock, each the best of 3 (the reference's too, model building \
                    included on both sides), cells run one at a time; they vary \
                    between runs, while costs and pivots are deterministic. bench/transport.sh \
                    compares with POT (LEMON) and HiGHS side by side.",
            claims: t5,
        },
    ]
}

fn slack(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let mut rhos: Vec<f64> = rows.iter().map(|r| num(r, "rho")).collect();
    rhos.sort_by(f64::total_cmp);
    rhos.dedup();
    // Per load: blocking from the largest reserve to the smallest; each step may not rise
    // beyond the two intervals, and no reserve must beat complete partitioning clearly.
    let mut per_rho = Vec::new();
    let mut said = Vec::new();
    for rho in rhos {
        let mut by: Vec<&SummaryRow> = rows.iter().filter(|r| num(r, "rho") == rho).collect();
        by.sort_by(|a, b| num(b, "reserve").total_cmp(&num(a, "reserve")));
        let b = |r: &SummaryRow| metric(sc, r, "blocking");
        let monotone = by
            .windows(2)
            .all(|w| b(w[1]) <= b(w[0]) + ci(sc, w[0], "blocking") + ci(sc, w[1], "blocking"));
        let (Some(&full), Some(&none)) = (by.first(), by.last()) else {
            continue;
        };
        let gain = b(full) - b(none);
        let clear = gain > ci(sc, full, "blocking") + ci(sc, none, "blocking");
        per_rho.push((rho, b(full), b(none), monotone && clear));
        said.push(format!(
            "rho {}: {} partitioned, {} with no reserve{}",
            words::sig(rho, 3),
            words::ci(summary(sc, full, "blocking")),
            words::ci(summary(sc, none, "blocking")),
            if monotone {
                ""
            } else {
                " (rises somewhere as the reserve shrinks)"
            }
        ));
    }
    vec![claim(
        "tp.slack",
        "Sharing slack lowers blocking below complete partitioning, the more the smaller the reserve (a finding of the reconstruction)",
        json!({"rho_partitioned_noreserve_ok": per_rho}),
        "at every load, blocking does not rise as the reserve shrinks (95% intervals) and is clearly lower with no reserve than with complete partitioning".into(),
        !per_rho.is_empty() && per_rho.iter().all(|x| x.3),
    )
    .says(format!("blocking: {}", said.join("; ")))
    // Slack sharing is an option of the spec (TP-S5), not a statement of the paper.
    .finding()]
}

fn t5(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let checked: Vec<(f64, f64, f64)> = rows
        .iter()
        .filter(|r| metric(sc, r, "reference_agrees").is_finite())
        .map(|r| {
            (
                num(r, "size"),
                metric(sc, r, "reference_agrees"),
                metric(sc, r, "reference_ratio"),
            )
        })
        .collect();
    // LEMON checks every instance of every size (NaN where it could not: that fails the claim).
    let lemon: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (num(r, "size"), metric(sc, r, "lemon_agrees")))
        .collect();
    let vogel: Vec<(f64, f64)> = rows
        .iter()
        .flat_map(|r| {
            let (v, n) = (
                crate::reproduce::runs(sc, r, "vogel_gap"),
                crate::reproduce::runs(sc, r, "northwest_gap"),
            );
            v.iter().copied().zip(n.iter().copied()).collect::<Vec<_>>()
        })
        .collect();
    let slowest = rows
        .iter()
        .flat_map(|r| {
            crate::reproduce::runs(sc, r, "reference_ratio")
                .iter()
                .copied()
        })
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let largest = rows
        .iter()
        .max_by(|a, b| num(a, "size").total_cmp(&num(b, "size")));
    let warm = largest.map(|r| (num(r, "size"), metric(sc, r, "warm_ratio")));
    let ratios: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (num(r, "size"), metric(sc, r, "warm_ratio")))
        .collect();
    vec![
        claim(
            "tp.solver-exact",
            "The network simplex finds the optimum of two independent solvers on every instance: \
             a general LP solver, and LEMON's network simplex",
            json!({"size_agreement_time_ratio": checked, "size_lemon_agreement": lemon}),
            "agreement with the LP solver on every instance where it ran, and with LEMON on \
             every instance of every size"
                .into(),
            !checked.is_empty()
                && checked.iter().all(|c| c.1 == 1.0)
                && !lemon.is_empty()
                && lemon.iter().all(|c| c.1 == 1.0),
        )
        .says(format!(
            "share of instances where the optimum agreed, LP solver: {}; LEMON: {}",
            words::list(
                checked
                    .iter()
                    .map(|c| format!("size {}: {}", c.0, words::sig(c.1, 3))),
                8
            ),
            words::list(
                lemon
                    .iter()
                    .map(|c| format!("size {}: {}", c.0, words::sig(c.1, 3))),
                8
            )
        )),
        claim(
            "tp.solver-faster",
            "The network simplex solves faster than the general LP solver at every size (a \
             comparison cdnlab adds)",
            json!({"size_agreement_time_ratio": checked, "largest_ratio_of_any_run": slowest}),
            "cold time / reference time (each the best of 3) below 1 in every run where the \
             reference ran"
                .into(),
            !checked.is_empty() && slowest < 1.0,
        )
        .says(format!(
            "time / reference time (mean): {}; the largest of any run {}",
            words::list(
                checked
                    .iter()
                    .map(|c| format!("size {}: {}", c.0, words::sig(c.2, 2))),
                8
            ),
            words::sig(slowest, 2)
        ))
        .addition(),
        claim(
            "tp.vogel",
            "Vogel's approximation method, which looks at costs, is a better stand-alone \
             allocation than the north-west corner, which does not (a comparison cdnlab adds)",
            json!({"runs": vogel.len(), "largest_vogel_gap": vogel.iter().map(|v| v.0).fold(0.0, f64::max),
                   "smallest_northwest_gap": vogel.iter().map(|v| v.1).fold(f64::INFINITY, f64::min)}),
            "in every run Vogel's cost is below the north-west corner's (both are reported as \
             their relative cost above the optimum)"
                .into(),
            !vogel.is_empty() && vogel.iter().all(|v| v.0 < v.1),
        )
        .says(format!(
            "{} runs; Vogel's cost above the optimum at most {}, the north-west corner's at \
             least {} (relative)",
            vogel.len(),
            words::sig(vogel.iter().map(|v| v.0).fold(0.0, f64::max), 2),
            words::sig(vogel.iter().map(|v| v.1).fold(f64::INFINITY, f64::min), 2)
        ))
        .addition(),
        claim(
            "tp.solver-warm",
            "A warm re-solve after 1% of the demands change takes at most 10% of a cold solve on the largest instances (the project's target)",
            json!({"largest_size_ratio": warm, "by_size": ratios}),
            "warm / cold at most 0.10 at the largest size (mean of the instances)".into(),
            warm.is_some_and(|w| w.1 <= 0.10),
        )
        .says(format!(
            "warm / cold: {}",
            words::list(
                rows.iter().map(|r| format!(
                    "size {}: {}",
                    num(r, "size"),
                    words::ci(summary(sc, r, "warm_ratio"))
                )),
                8
            )
        ))
        .addition(),
    ]
}

fn t4(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let most = rows.iter().map(|r| num(r, "sources")).fold(0.0, f64::max);
    let mut cells = Vec::new();
    let mut said = Vec::new();
    let tests = rows.iter().filter(|r| num(r, "sources") == 1.0).count();
    for single in rows.iter().filter(|r| num(r, "sources") == 1.0) {
        let cross = num(single, "cross");
        if let Some(multi) = rows
            .iter()
            .find(|r| num(r, "sources") == most && num(r, "cross") == cross)
        {
            let (l1, lk) = (metric(sc, single, "loss"), metric(sc, multi, "loss"));
            let (d1, dk) = (metric(sc, single, "latency"), metric(sc, multi, "latency"));
            // Lower beyond noise: the difference exceeds the house's critical t (0.001
            // family-wise over the cross loads; df of the smaller sample) times its standard
            // error, so that paths that share one bottleneck cannot pass by chance.
            let df = summary(sc, single, "latency")
                .n
                .min(summary(sc, multi, "latency").n)
                .saturating_sub(1);
            let margin = super::critical(df, tests)
                * se(sc, single, "latency").hypot(se(sc, multi, "latency"));
            cells.push((cross, l1, lk, d1, dk, lk <= l1 && d1 - dk > margin));
            said.push(format!(
                "cross {}: loss {} vs {}, latency {} vs {}",
                words::sig(cross, 3),
                words::ci(summary(sc, single, "loss")),
                words::ci(summary(sc, multi, "loss")),
                words::ci(summary(sc, single, "latency")),
                words::ci(summary(sc, multi, "latency"))
            ));
        }
    }
    vec![claim(
        "tp.multisource",
        "Multi-source delivery has lower packet loss and latency than single-source over congested paths",
        json!({"sources": most, "cross_loss1_lossk_latency1_latencyk_ok": cells}),
        format!(
            "with {most} sources, latency below single-source at every cross load by more than the critical t (0.001 family-wise) times the standard error of the difference, and loss below it wherever single-source loses packets"
        ),
        !cells.is_empty()
            && cells.iter().all(|c| c.5)
            && cells.iter().filter(|c| c.1 > 0.0).all(|c| c.2 < c.1)
            && cells.iter().any(|c| c.1 > 0.0),
    )
    .says(format!(
        "single source vs {most} sources: {}",
        said.join("; ")
    ))]
}

mod blocking;
mod networks;

use blocking::*;
use networks::*;

#[cfg(test)]
mod falsify;
#[cfg(test)]
pub(super) use falsify::falsifiers;
