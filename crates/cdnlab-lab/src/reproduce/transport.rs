//! Reproductions of optimal server allocation for streaming (spec `docs/spec/transport.md`,
//! experiments T1-T5). Every pass/fail is computed from the run's summary.

use super::{Claim, Reproduction, metric, num, runs, se, summary, text, words};
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
    .says(format!("blocking: {}", said.join("; ")))]
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
                super::runs(sc, r, "vogel_gap"),
                super::runs(sc, r, "northwest_gap"),
            );
            v.iter().copied().zip(n.iter().copied()).collect::<Vec<_>>()
        })
        .collect();
    let slowest = rows
        .iter()
        .flat_map(|r| super::runs(sc, r, "reference_ratio").iter().copied())
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
    for single in rows.iter().filter(|r| num(r, "sources") == 1.0) {
        let cross = num(single, "cross");
        if let Some(multi) = rows
            .iter()
            .find(|r| num(r, "sources") == most && num(r, "cross") == cross)
        {
            let (l1, lk) = (metric(sc, single, "loss"), metric(sc, multi, "loss"));
            let (d1, dk) = (metric(sc, single, "latency"), metric(sc, multi, "latency"));
            cells.push((cross, l1, lk, d1, dk, lk <= l1 && dk < d1));
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
            "with {most} sources, latency below single-source at every cross load, and loss below it wherever single-source loses packets"
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

fn t3(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    // Every point from 40 hours after the shift on (two re-allocation windows plus the 20-hour
    // measurement).
    let settle = rows
        .first()
        .map_or(f64::INFINITY, |r| num(r, "shift_at") + 40.0);
    let is = |r: &SummaryRow, re: bool| r.params["reallocate"] == cdnlab::sim::Value::Bool(re);
    let pairs: Vec<(&SummaryRow, &SummaryRow)> = rows
        .iter()
        .filter(|r| num(r, "hours") >= settle && is(r, true))
        .filter_map(|f| {
            let s = rows
                .iter()
                .find(|s| num(s, "hours") == num(f, "hours") && is(s, false))?;
            Some((f, s))
        })
        .collect();
    let mut points = Vec::new();
    let mut said = Vec::new();
    let (mut excess, mut excess_var) = (0.0, 0.0);
    for (f, s) in &pairs {
        let target = metric(sc, f, "erlang_end");
        let df = f.metrics[0].n.saturating_sub(1).max(1);
        let (bf, bs) = (
            metric(sc, f, "blocking_tail"),
            metric(sc, s, "blocking_tail"),
        );
        let (ef, es) = (se(sc, f, "blocking_tail"), se(sc, s, "blocking_tail"));
        // Restored: below the stale allocation with 95% confidence, and at least 90% of the
        // stale allocation's excess over Erlang-B for the new demand removed (the upper end of
        // the 95% interval of the share).
        let share = (bs - bf) / (bs - target);
        let share_se = (ef.powi(2) + es.powi(2)).sqrt() / (bs - target).abs();
        let t = cdnlab::stats::t975(df);
        let ok = bs - bf > t * (ef.powi(2) + es.powi(2)).sqrt() && share + t * share_se >= 0.9;
        excess += bf - target;
        excess_var += ef.powi(2);
        said.push(format!(
            "hour {}: {} with, {} without (Erlang-B {}), {}% of the excess removed",
            num(f, "hours"),
            words::ci(summary(sc, f, "blocking_tail")),
            words::ci(summary(sc, s, "blocking_tail")),
            words::sig(target, 3),
            words::pm(100.0 * share, 100.0 * t * share_se)
        ));
        points.push(json!({"hour": num(f, "hours"), "with": bf, "without": bs,
            "erlang_for_new_demand": target, "share_of_excess_removed": share, "ok": ok}));
    }
    let k = pairs.len().max(1) as f64;
    let (excess, excess_se) = (excess / k, excess_var.sqrt() / k);
    vec![
        claim(
            "tp.reallocation",
            "Measured blocking triggers a re-allocation that restores blocking after a demand shift",
            json!(points),
            "from 40 hours after the shift on, at every point: below the stale allocation with \
             95% confidence, and at least 90% of the stale allocation's excess over Erlang-B for \
             the new demand removed (within the share's 95% interval)"
                .into(),
            pairs.len() >= 2 && points.iter().all(|p| p["ok"] == json!(true)),
        )
        .says(format!("blocking {}", said.join("; "))),
        claim(
            "tp.reallocation-excess",
            "Re-allocated blocking stays a little above Erlang-B for the new demand: thresholds \
             follow demand estimated from a window's arrivals, not the true demand",
            json!({"mean_excess_over_erlang": excess, "its_se": excess_se, "points": pairs.len()}),
            "the excess averaged over the points from 40 hours after the shift is above 0 by more \
             than 1.96 standard errors"
                .into(),
            pairs.len() >= 2 && excess > 1.96 * excess_se,
        )
        .says(format!(
            "blocking above Erlang-B for the new demand, averaged over {} points: {}",
            pairs.len(),
            words::pm(excess, 1.96 * excess_se)
        ))
        .finding(),
    ]
}

fn t1(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let at = |policy: &str, profile: &str, rho: f64| {
        rows.iter().find(|r| {
            text(r, "policy") == policy && text(r, "profile") == profile && num(r, "rho") == rho
        })
    };
    let rhos: Vec<f64> = {
        let mut v: Vec<f64> = rows.iter().map(|r| num(r, "rho")).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    // Optimal vs nearest gap per profile: its peak and where.
    let mut peaks = Vec::new();
    for profile in ["r1", "r15"] {
        let gaps: Vec<(f64, f64)> = rhos
            .iter()
            .filter_map(|&rho| {
                let (o, n) = (at("optimal", profile, rho)?, at("nearest", profile, rho)?);
                Some((rho, metric(sc, n, "blocking") - metric(sc, o, "blocking")))
            })
            .collect();
        let peak = gaps
            .iter()
            .copied()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((f64::NAN, f64::NAN));
        peaks.push((profile, peak.0, peak.1));
    }
    let r15 = peaks.iter().find(|p| p.0 == "r15").copied();
    let hops = hop_bounds(sc, rows);
    let gap_pass = r15.is_some_and(|(_, rho, gap)| (0.8..=1.2).contains(&rho) && gap >= 0.10);
    // S4 lowest everywhere (within the 95% intervals).
    let mut s4_worse = Vec::new();
    for r in rows.iter().filter(|r| text(r, "policy") == "sharing") {
        let (profile, rho) = (text(r, "profile"), num(r, "rho"));
        let b = metric(sc, r, "blocking");
        for p in ["optimal", "nearest", "northwest"] {
            if let Some(o) = at(p, profile, rho)
                && b > metric(sc, o, "blocking") + ci(sc, o, "blocking") + ci(sc, r, "blocking")
            {
                s4_worse.push((profile.to_string(), rho, p));
            }
        }
    }
    vec![
        claim(
            "tp.gap",
            "Optimal allocation blocks less than nearest-server allocation, by up to 15 points at moderate-to-high load",
            json!({"peak_gap_by_profile": peaks}),
            "the R15 gap peaks at rho in [0.8, 1.2] and reaches at least 0.10".into(),
            gap_pass,
        )
        .says(format!(
            "largest gap (nearest minus optimal blocking): {}",
            words::list(
                peaks.iter().map(|p| format!(
                    "{} {} at rho {}",
                    p.0,
                    words::sig(p.2, 2),
                    words::sig(p.1, 3)
                )),
                2
            )
        )),
        claim(
            "tp.s4-lowest",
            "Full sharing (no partitioning) blocks least of all",
            json!({"cells_where_not_lowest": s4_worse}),
            "S4 at or below every other policy in every cell (95% intervals)".into(),
            !rows.is_empty() && s4_worse.is_empty(),
        )
        .says(format!(
            "cells where full sharing blocks more than another policy: {}",
            words::list(
                s4_worse
                    .iter()
                    .map(|w| format!("{} rho {} vs {}", w.0, words::sig(w.1, 3), w.2)),
                6
            )
        )),
        hops,
    ]
}

/// The hop-cost objective: under complete partitioning n_ij <= T_ij, so with S = sum d_ij T_ij
/// and E empty threshold slots out of D, the admitted streams' mean hops (occupancy-weighted,
/// by Little's law with one mean holding time) lie in [(S - d_max E) / (D - E), S / (D - E)].
/// With a = S / D, the allocation's hops per stream, and u = (D - E) / D = rho (1 - B) the
/// carried load (sum D_i = sum C_j): [(a - d_max (1 - u)) / u, a / u], which closes on a at
/// saturation. Checked per cell on the runs' paired differences (one-sided, family-wise
/// 0.001), and the NW-corner allocation, meeting the same demand without the hop objective,
/// above S0's upper bound at every load.
fn hop_bounds(sc: &Scenario, rows: &[SummaryRow]) -> Claim {
    let opt: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| text(r, "policy") == "optimal")
        .collect();
    let crit = |n: usize| super::critical(n.saturating_sub(1), 2 * opt.len().max(1));
    let mean_se = |v: &[f64]| {
        let s = cdnlab::stats::Summary::of(v);
        (s.mean, s.sd / (v.len() as f64).sqrt())
    };
    let (mut outside, mut nw_near, mut cells) = (Vec::new(), Vec::new(), Vec::new());
    for o in &opt {
        let (profile, rho) = (text(o, "profile"), num(o, "rho"));
        let (a, dmax) = (metric(sc, o, "alloc_hops"), metric(sc, o, "alloc_dmax"));
        let (h, b) = (runs(sc, o, "hops"), runs(sc, o, "blocking"));
        let (mut above, mut below, mut upper) = (Vec::new(), Vec::new(), Vec::new());
        for (&h, &b) in h.iter().zip(b) {
            let u = rho * (1.0 - b);
            upper.push(a / u);
            above.push(h - a / u);
            below.push((a - dmax * (1.0 - u)) / u - h);
        }
        let ((ma, sa), (mb, sb), (mu, su)) = (mean_se(&above), mean_se(&below), mean_se(&upper));
        let c = crit(h.len());
        let ok = a > 0.0 && h.len() > 1 && ma <= c * sa && mb <= c * sb;
        if !ok {
            outside.push((profile.to_string(), rho, metric(sc, o, "hops"), mu));
        }
        cells.push((profile.to_string(), rho, metric(sc, o, "hops"), a, mu));
        if let Some(w) = rows.iter().find(|r| {
            text(r, "policy") == "northwest"
                && text(r, "profile") == profile
                && num(r, "rho") == rho
        }) {
            let (mw, sw) = mean_se(runs(sc, w, "hops"));
            if mw <= mu + c * (sw * sw + su * su).sqrt() {
                nw_near.push((profile.to_string(), rho, mw, mu));
            }
        } else {
            nw_near.push((profile.to_string(), rho, f64::NAN, mu));
        }
    }
    claim(
        "tp.hops",
        "The hop-cost objective keeps streams near: under the optimal allocation the admitted \
         streams travel no farther than the optimum's cost per stream allows for the load carried, \
         reaching it at saturation, while an allocation that meets the same demand without the \
         objective (NW corner) travels farther at every load",
        json!({"profile_rho_hops_optimum_per_stream_upper_bound": cells,
               "cells_outside_bounds": outside, "cells_where_northwest_is_not_farther": nw_near}),
        "in every cell, S0's mean hops within [(a - d_max (1 - u)) / u, a / u] (a = optimum hops \
         per stream, u = rho (1 - blocking), one-sided family-wise 0.001 on the runs), and the \
         NW corner's above a / u"
            .into(),
        !opt.is_empty() && outside.is_empty() && nw_near.is_empty(),
    )
    .says(format!(
        "{} cells; outside the bounds: {}; where the NW corner is not farther: {}; at the \
         highest load, {}",
        cells.len(),
        words::list(
            outside
                .iter()
                .map(|o| format!("{} rho {}", o.0, words::sig(o.1, 3))),
            6
        ),
        words::list(
            nw_near
                .iter()
                .map(|o| format!("{} rho {}", o.0, words::sig(o.1, 3))),
            6
        ),
        words::list(
            cells
                .iter()
                .filter(|c| c.1 == cells.iter().map(|c| c.1).fold(0.0, f64::max))
                .map(|c| format!(
                    "{}: {} hops against at most {}",
                    c.0,
                    words::sig(c.2, 3),
                    words::sig(c.4, 3)
                )),
            4
        )
    ))
}

fn balance(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let cell = |choice: &str, profile: &str, rho: f64| {
        rows.iter().find(|r| {
            text(r, "choice") == choice && text(r, "profile") == profile && num(r, "rho") == rho
        })
    };
    let frac: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| text(r, "choice") == "fraction")
        .collect();
    // Two comparisons of spread and two of blocking per cell.
    let tests = 4 * frac.len().max(1);
    let (mut unbalanced, mut blocking_differs, mut cells) = (Vec::new(), Vec::new(), Vec::new());
    let mut said = Vec::new();
    for f in &frac {
        let (profile, rho) = (text(f, "profile"), num(f, "rho"));
        let mut spreads = vec![metric(sc, f, "cluster_spread")];
        for other in ["residual", "nearest"] {
            let Some(o) = cell(other, profile, rho) else {
                unbalanced.push((profile.to_string(), rho, other, f64::NAN, f64::NAN));
                continue;
            };
            let df = f.metrics[0].n.min(o.metrics[0].n).saturating_sub(1);
            let c = super::critical(df, tests);
            let joint = |m: &str| (se(sc, f, m).powi(2) + se(sc, o, m).powi(2)).sqrt();
            let (sf, so) = (
                metric(sc, f, "cluster_spread"),
                metric(sc, o, "cluster_spread"),
            );
            spreads.push(so);
            let margin = so - sf - c * joint("cluster_spread");
            if margin.is_nan() || margin <= 0.0 {
                unbalanced.push((profile.to_string(), rho, other, sf, so));
            }
            let d = metric(sc, f, "blocking") - metric(sc, o, "blocking");
            if d.abs() > c * joint("blocking") + 1e-12 {
                blocking_differs.push((profile.to_string(), rho, other, d));
            }
        }
        said.push(format!(
            "{profile} rho {}: {}",
            words::sig(rho, 3),
            spreads
                .iter()
                .map(|x| words::sig(*x, 2))
                .collect::<Vec<_>>()
                .join(" / ")
        ));
        cells.push((profile.to_string(), rho, spreads));
    }
    vec![claim(
        "tp.cluster-balance",
        "Within a cluster, CP-1 balances load: picking the largest free fraction of the \
         threshold keeps the cluster's servers at nearly equal occupancy, at every load, with \
         blocking unchanged",
        json!({"profile_rho_spread_fraction_residual_nearest": cells,
               "cells_not_more_balanced": unbalanced, "cells_where_blocking_differs": blocking_differs}),
        "in every cell, the fraction pick's occupancy spread below the free-slots and \
         nearest-first picks' beyond the family-wise (0.001) interval of the difference, and its \
         blocking within that interval of theirs"
            .into(),
        !frac.is_empty() && unbalanced.is_empty() && blocking_differs.is_empty(),
    )
    .says(format!(
        "occupancy spread, fraction / free slots / nearest first: {}; cells not more balanced: \
         {}; cells where blocking differs: {}",
        words::list(said, 12),
        unbalanced.len(),
        blocking_differs.len()
    ))]
}

fn t1_random(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let at = |policy: &str, rho: f64| {
        rows.iter()
            .find(|r| text(r, "policy") == policy && num(r, "rho") == rho)
            .map(|r| metric(sc, r, "blocking"))
    };
    let mut gaps: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| text(r, "policy") == "optimal")
        .filter_map(|r| {
            let rho = num(r, "rho");
            Some((rho, at("nearest", rho)? - at("optimal", rho)?))
        })
        .collect();
    gaps.sort_by(|a, b| a.0.total_cmp(&b.0));
    let peak = gaps
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((f64::NAN, f64::NAN));
    // Sharing at or below the optimum within the two 95% intervals.
    let row = |policy: &str, rho: f64| {
        rows.iter()
            .find(|r| text(r, "policy") == policy && num(r, "rho") == rho)
    };
    let sharing_lowest = gaps.iter().all(|&(rho, _)| {
        matches!((row("sharing", rho), row("optimal", rho)), (Some(s), Some(o))
            if metric(sc, s, "blocking")
                <= metric(sc, o, "blocking") + ci(sc, s, "blocking") + ci(sc, o, "blocking") + 1e-9)
    });
    vec![claim(
        "tp.gap-random",
        "The optimal-vs-nearest blocking gap is not an artefact of one graph: it appears on random 50-metro topologies too",
        json!({"peak_rho": peak.0, "peak_gap": peak.1, "gaps": gaps, "sharing_lowest": sharing_lowest}),
        "the gap is positive at every load, peaks at rho in [0.8, 1.2] with at least 0.10, and full sharing stays lowest".into(),
        !gaps.is_empty()
            && gaps.iter().all(|g| g.1 > 0.0)
            && (0.8..=1.2).contains(&peak.0)
            && peak.1 >= 0.10
            && sharing_lowest,
    )
    .says(format!(
        "nearest minus optimal blocking: {}; the peak {} at rho {}; full sharing {}",
        words::list(
            gaps.iter()
                .map(|g| format!("rho {}: {}", words::sig(g.0, 3), words::sig(g.1, 2))),
            12
        ),
        words::sig(peak.1, 2),
        words::sig(peak.0, 3),
        if sharing_lowest {
            "lowest at every load"
        } else {
            "not lowest at some load"
        }
    ))]
}

fn t2(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let worst_z = rows
        .iter()
        .map(|r| metric(sc, r, "max_z"))
        .fold(0.0, f64::max);
    let off: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| {
            (metric(sc, r, "blocking") - metric(sc, r, "erlang")).abs()
                > 2.0 * ci(sc, r, "blocking") + 1e-4
        })
        .map(|r| {
            (
                text(r, "protocol").to_string(),
                text(r, "holding").to_string(),
                num(r, "rho"),
            )
        })
        .collect();
    vec![
        claim(
            "tp.erlang",
            "Simulated blocking matches Erlang-B per population, with exponential and deterministic holding times",
            json!({"largest_mean_max_z": worst_z, "cells_off": off}),
            "overall blocking within 2 x its 95% interval of Erlang-B in every cell; the largest per-population deviation, averaged over runs, below 3.5 standard errors".into(),
            !rows.is_empty() && off.is_empty() && worst_z < 3.5,
        )
        .says(format!(
            "{} cells; off Erlang-B: {}; the largest per-population deviation, averaged over \
             runs, {} standard errors",
            rows.len(),
            words::list(
                off.iter()
                    .map(|o| format!("{} {} rho {}", o.0, o.1, words::sig(o.2, 3))),
                6
            ),
            words::sig(worst_z, 2)
        )),
    ]
}

#[cfg(test)]
pub(super) fn falsifiers() -> Vec<super::fixture::Falsifier> {
    use super::fixture::{falsifier as f, normal, set, tweak};
    use cdnlab::rng::Rng;

    type V = Vec<(&'static str, f64)>;
    // Blocking curves: optimal a logistic in rho, nearest above it by a bump peaking at 1.0.
    fn t1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let rho = num(r, "rho");
        // At least the blocking that keeps the carried load rho (1 - B) below 1.
        let opt = (0.3 / (1.0 + (-(rho - 1.1) * 8.0).exp())).max(1.0 - 0.99 / rho);
        let b = match text(r, "policy") {
            "optimal" | "northwest" => opt,
            "nearest" => opt + 0.15 * (-(rho - 1.0).powi(2) / 0.08).exp() + 0.02,
            _ => opt * 0.8,
        };
        let b = normal(rng, b, 0.003).max(0.0);
        let u = num(r, "rho") * (1.0 - b);
        let (a, hops) = match text(r, "policy") {
            "optimal" => (0.24, normal(rng, 0.95 * 0.24 / u.max(0.24), 0.001)),
            "northwest" => (0.7, normal(rng, 0.7, 0.001)),
            _ => (0.0, 0.1),
        };
        vec![
            ("blocking", b),
            ("hops", hops),
            ("alloc_hops", a),
            ("alloc_dmax", if a > 0.0 { 3.0 } else { 0.0 }),
        ]
    }
    fn t2_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let e = 0.02 * num(r, "rho");
        vec![
            ("blocking", normal(rng, e, 0.001)),
            ("erlang", e),
            ("max_z", 1.5),
        ]
    }
    fn t3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let re = r.params["reallocate"] == cdnlab::sim::Value::Bool(true);
        let target = 0.026;
        let b = if re { target + 0.003 } else { 0.12 };
        vec![
            ("blocking_tail", normal(rng, b, 0.004)),
            ("erlang_end", target),
            ("reallocations", 30.0),
        ]
    }
    fn t4_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let (x, k) = (num(r, "cross"), num(r, "sources"));
        let util = x + 0.3 / k;
        let loss = ((util - 0.8) * 0.3).max(0.0);
        vec![
            ("loss", loss),
            ("latency", 10.0 + 1.0 / (1.0 - util.min(0.99))),
        ]
    }
    fn slack_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let b = 0.05 * num(r, "rho") * (0.7 + 0.3 * num(r, "reserve"));
        vec![("blocking", normal(rng, b, 0.001))]
    }
    fn balance_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let rho = num(r, "rho");
        let spread = match text(r, "choice") {
            "fraction" => 0.06 - 0.02 * (rho - 0.5),
            "residual" => 0.6 / (1.0 + (4.0 * (rho - 0.9)).exp()) + 0.06,
            _ => 0.8 / (1.0 + (4.0 * (rho - 0.9)).exp()) + 0.03,
        };
        vec![
            ("cluster_spread", normal(rng, spread, 0.001)),
            ("blocking", normal(rng, 0.02 * rho, 0.002)),
        ]
    }
    fn t5_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let size = num(r, "size");
        let checked = if size <= 300.0 { 1.0 } else { f64::NAN };
        vec![
            ("reference_agrees", checked),
            ("reference_ratio", 0.03 * checked),
            ("lemon_agrees", 1.0),
            ("warm_ratio", 0.5 / size.sqrt()),
            ("vogel_gap", 0.05),
            ("northwest_gap", 3.0),
        ]
    }
    vec![
        f(
            "tp-t1",
            "tp.gap",
            t1_right,
            vec![(
                "an allocation that ignores the TP (optimal = nearest)",
                |r, rep, rng| {
                    let mut v = t1_right(r, rep, rng);
                    if text(r, "policy") == "optimal" {
                        let mut n = r.clone();
                        n.params
                            .insert("policy".into(), cdnlab::sim::Value::Text("nearest".into()));
                        v = t1_right(&n, rep, rng);
                    }
                    v
                },
            )],
        ),
        f(
            "tp-balance",
            "tp.cluster-balance",
            balance_right,
            vec![
                (
                    "the fraction pick reversed (smallest free fraction)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, balance_right, "cluster_spread", |r, x| {
                            if text(r, "choice") == "fraction" {
                                0.9
                            } else {
                                x
                            }
                        })
                    },
                ),
                (
                    "the pick costs blocking (a server refused early)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, balance_right, "blocking", |r, x| {
                            if text(r, "choice") == "fraction" {
                                x + 0.02
                            } else {
                                x
                            }
                        })
                    },
                ),
            ],
        ),
        f(
            "tp-t1",
            "tp.hops",
            t1_right,
            vec![
                ("S0's streams placed as the NW corner's", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "optimal" {
                            0.7
                        } else {
                            x
                        }
                    })
                }),
                ("hops counted to the nearest server", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "optimal" {
                            0.0
                        } else {
                            x
                        }
                    })
                }),
                ("a NW corner as near as the optimum", |r, rep, rng| {
                    tweak(r, rep, rng, t1_right, "hops", |r, x| {
                        if text(r, "policy") == "northwest" {
                            0.2
                        } else {
                            x
                        }
                    })
                }),
            ],
        ),
        f(
            "tp-t1",
            "tp.s4-lowest",
            t1_right,
            vec![("full sharing blocks more at high load", |r, rep, rng| {
                tweak(r, rep, rng, t1_right, "blocking", |r, x| {
                    if text(r, "policy") == "sharing" && num(r, "rho") >= 1.2 {
                        x + 0.2
                    } else {
                        x
                    }
                })
            })],
        ),
        f(
            "tp-t1-random",
            "tp.gap-random",
            t1_right,
            vec![("no gap on random graphs", |r, rep, rng| {
                let mut n = r.clone();
                if text(r, "policy") == "nearest" {
                    n.params
                        .insert("policy".into(), cdnlab::sim::Value::Text("optimal".into()));
                }
                t1_right(&n, rep, rng)
            })],
        ),
        f(
            "tp-t2",
            "tp.erlang",
            t2_right,
            vec![("blocking 20% above Erlang-B", |r, rep, rng| {
                tweak(r, rep, rng, t2_right, "blocking", |_, x| x * 1.2)
            })],
        ),
        f(
            "tp-t3",
            "tp.reallocation",
            t3_right,
            vec![
                ("re-allocation does not help", |r, rep, rng| {
                    tweak(r, rep, rng, t3_right, "blocking_tail", |_, x| x.max(0.1))
                }),
                (
                    "re-allocation removes only half the excess",
                    |r, rep, rng| tweak(r, rep, rng, t3_right, "blocking_tail", |_, x| x.max(0.07)),
                ),
            ],
        ),
        f(
            "tp-t3",
            "tp.reallocation-excess",
            t3_right,
            vec![(
                "thresholds from the true demand (no excess)",
                |r, rep, rng| {
                    tweak(r, rep, rng, t3_right, "blocking_tail", |r, x| {
                        if r.params["reallocate"] == cdnlab::sim::Value::Bool(true) {
                            x - 0.003
                        } else {
                            x
                        }
                    })
                },
            )],
        ),
        f(
            "tp-t4",
            "tp.multisource",
            t4_right,
            vec![("striping does not spread load", |r, rep, rng| {
                let mut n = r.clone();
                n.params
                    .insert("sources".into(), cdnlab::sim::Value::Int(1));
                t4_right(&n, rep, rng)
            })],
        ),
        f(
            "tp-slack",
            "tp.slack",
            slack_right,
            vec![("sharing slack raises blocking", |r, rep, rng| {
                tweak(r, rep, rng, slack_right, "blocking", |r, x| {
                    x + 0.03 * (1.0 - num(r, "reserve"))
                })
            })],
        ),
        f(
            "tp-t5",
            "tp.solver-exact",
            t5_right,
            vec![
                ("one instance off the reference", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if rep == 0 && num(r, "size") == 30.0 {
                        set(&mut v, "reference_agrees", 0.0);
                    }
                    v
                }),
                ("one large instance off LEMON", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if rep == 2 && num(r, "size") == 1000.0 {
                        set(&mut v, "lemon_agrees", 0.0);
                    }
                    v
                }),
                ("one size LEMON could not check", |r, rep, rng| {
                    let mut v = t5_right(r, rep, rng);
                    if num(r, "size") == 1000.0 {
                        set(&mut v, "lemon_agrees", f64::NAN);
                    }
                    v
                }),
            ],
        ),
        f(
            "tp-t5",
            "tp.solver-faster",
            t5_right,
            vec![("slower than the reference in one run", |r, rep, rng| {
                let mut v = t5_right(r, rep, rng);
                if rep == 1 && num(r, "size") == 100.0 {
                    set(&mut v, "reference_ratio", 1.5);
                }
                v
            })],
        ),
        f(
            "tp-t5",
            "tp.vogel",
            t5_right,
            vec![(
                "Vogel ignoring costs (as the north-west corner)",
                |r, rep, rng| tweak(r, rep, rng, t5_right, "vogel_gap", |_, _| 3.0),
            )],
        ),
        f(
            "tp-t5",
            "tp.solver-warm",
            t5_right,
            vec![("warm re-solve no faster than cold", |r, rep, rng| {
                tweak(r, rep, rng, t5_right, "warm_ratio", |_, _| 0.9)
            })],
        ),
    ]
}
