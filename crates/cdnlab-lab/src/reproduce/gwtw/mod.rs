//! Reproductions of Go-With-The-Winner (spec `docs/spec/gwtw.md`, experiments E1-E8, claims
//! C1-C5). Every pass/fail is computed from the run's summary; a claim the reconstruction does
//! not reproduce is reported as failing, with the mechanism in the notes.

use super::{
    Claim, Reproduction, critical, fit_json, in_every_run, metric, monotone, monotone_json, num,
    runs, se, summary, text, trend, twin, values_of, words,
};
use crate::runner::SummaryRow;
use crate::scenario::Scenario;
use cdnlab::select::analysis;
use serde_json::json;

fn claim(id: &str, text: &str, measured: serde_json::Value, expected: String, pass: bool) -> Claim {
    super::claim("gwtw", id, text, measured, expected, pass)
}

/// The rows of `rows` that satisfy `keep`.
fn only(rows: &[SummaryRow], keep: impl Fn(&SummaryRow) -> bool) -> Vec<&SummaryRow> {
    rows.iter().filter(|r| keep(r)).collect()
}

/// Users of a cell: round(load x servers).
fn users(r: &SummaryRow) -> u64 {
    (num(r, "load") * num(r, "servers")).round() as u64
}

/// Capacity c of a cell: floor(C / N) (web) or floor(B / r_max) (video).
fn capacity(r: &SummaryRow) -> u64 {
    if text(r, "model") == "video" {
        (num(r, "bandwidth") / num(r, "r_max")).floor() as u64
    } else {
        (num(r, "cache_size") / num(r, "catalogue")).floor() as u64
    }
}

/// Runs of `rows` where `metric` is not 1: (cell parameters named by `keys`, replication).
fn runs_below_one(
    sc: &Scenario,
    rows: &[&SummaryRow],
    name: &str,
    keys: &[&str],
) -> Vec<serde_json::Value> {
    let mut bad = Vec::new();
    for r in rows {
        for (rep, v) in runs(sc, r, name).iter().enumerate() {
            if *v < 1.0 {
                let mut o = serde_json::Map::new();
                for k in keys {
                    o.insert((*k).into(), r.params[*k].to_string().into());
                }
                o.insert("replication".into(), rep.into());
                o.insert(name.into(), (*v).into());
                bad.push(serde_json::Value::Object(o));
            }
        }
    }
    bad
}

/// The GWTW reproductions.
pub fn registry() -> Vec<Reproduction> {
    vec![
        Reproduction {
            id: "gwtw-e1",
            paper: "gwtw",
            title: "GWTW E1: users at the best value over time, k = 1, 2, 3",
            quick: scenario!("gwtw-e1.toml"),
            full: scenario!("gwtw-e1-full.toml"),
            notes: "Web model in the main regime (n servers, lambda = 1, C = 40, N = 20 so c = 2, \
                    alpha = 0.8, tau = 20, PROBE_ALL, q = 0.5). Each point is an independent run \
                    stopped at that slot. <i>Satisfied</i>: settled on a server holding at most c \
                    users; <i>at best</i>: hit rate 1 over the last 20 slots. k = 1 stays near \
                    2/e = 0.74 (P[Poisson(1) &le; 1]); k = 2 and 3 reach 1.",
            claims: e1,
        },
        Reproduction {
            id: "gwtw-e2",
            paper: "gwtw",
            title: "GWTW E2: convergence time vs n (C1)",
            quick: scenario!("gwtw-e2.toml"),
            full: scenario!("gwtw-e2-full.toml"),
            notes: "Convergence time is the first slot of the final stretch in the optimal state \
                    (every user settled, no server above c users); runs that do not end optimal \
                    count as the horizon. The optimal state is not absorbing in this model: a \
                    window can still hold a miss from the trial phase, and stale items in an LRU \
                    can push out a settled user's item, so a user may briefly leave.",
            claims: e2,
        },
        Reproduction {
            id: "gwtw-e3",
            paper: "gwtw",
            title: "GWTW E3: failure and convergence vs the history window tau (C3)",
            quick: scenario!("gwtw-e3.toml"),
            full: scenario!("gwtw-e3-full.toml"),
            notes: "Two definitions of failure: a run that does not end optimal (all runs converge \
                    here), and a <i>wrong settle</i> (a decision onto a server that is then above \
                    capacity) per settle decision. Short windows are fooled by a few lucky hits.",
            claims: e3,
        },
        Reproduction {
            id: "gwtw-e3-c1",
            paper: "gwtw",
            title: "GWTW E3 at c = 1: runs that never converge vs tau (C3, failure reading)",
            quick: scenario!("gwtw-e3-c1.toml"),
            full: scenario!("gwtw-e3-c1-full.toml"),
            notes: "The other reading of C3's failure rate: the share of runs that never reach \
                    the optimal state. With c = 1 and lambda = 0.3 an optimum exists in every \
                    run, yet some runs livelock (E5); a longer window should make that rarer.",
            claims: e3_c1,
        },
        Reproduction {
            id: "gwtw-e4",
            paper: "gwtw",
            title: "GWTW E4: convergence vs popularity alpha (C4)",
            quick: scenario!("gwtw-e4.toml"),
            full: scenario!("gwtw-e4-full.toml"),
            notes: "C4 holds for warm-up (slots until the aggregate hit rate first reaches 0.9: \
                    concentrated popularity fills caches with what is asked). It is reversed for \
                    strict convergence: a user can only tell an overloaded server from a good one \
                    by a miss on an item that was evicted, and with larger alpha the rare items \
                    that get evicted are asked for more rarely, so misses, and hence moves, come \
                    later. The reconstruction does not reproduce C4 in the strict sense, and \
                    <code>gwtw.C4-strict</code> reports that honestly. k = 1 is the control: \
                    its warm-up falls with alpha just as much, so the warm-up trend is the \
                    caches', not server selection's.",
            claims: e4,
        },
        Reproduction {
            id: "gwtw-e5",
            paper: "gwtw",
            title: "GWTW E5: convergence vs load lambda and capacity c",
            quick: scenario!("gwtw-e5.toml"),
            full: scenario!("gwtw-e5-full.toml"),
            notes: "<i>Feasible</i>: an optimal assignment exists for the drawn candidate sets \
                    (a b-matching places every user). That no run converges without an optimum \
                    holds by construction (convergence is a valid assignment), so it is a unit \
                    test of the simulator, not a claim. Above the orientability threshold (c = 1: \
                    lambda 0.5 at k = 2, about 0.92 at k = 3) nothing can converge. Two costs of \
                    the model show: with c = 1 and k = 2 some feasible runs livelock (two users \
                    whose candidates are all full keep evicting each other's items with trial \
                    traffic); and with c = 2, k = 3 near lambda / c = 0.8 the trial traffic of \
                    PROBE_ALL alone overloads caches although an optimum exists.",
            claims: e5,
        },
        Reproduction {
            id: "gwtw-load-c2",
            paper: "gwtw",
            title: "GWTW C1 across load, c = 2: where every run converges",
            quick: scenario!("gwtw-load-c2.toml"),
            full: scenario!("gwtw-load-c2-full.toml"),
            notes: "The paper's rule (PROBE_ALL trials, re-trial on any counted miss with \
                    probability q) from lambda / c = 0.3 to just below the k = 2 threshold \
                    0.897, at one n. Runs that do not converge count as the horizon in the \
                    slot plot; claims.json gives each cell's runs censored at the horizon and \
                    its Kaplan-Meier median. Every run converges up to 0.7; from 0.8 runs with \
                    an optimum stall, and at 0.85 almost none converges although an optimum \
                    exists (see <code>gwtw-load-n</code> for why, and how that changes with \
                    n).",
            claims: load_c2,
        },
        Reproduction {
            id: "gwtw-load-c1",
            paper: "gwtw",
            title: "GWTW C1 across load, c = 1: where every run converges",
            quick: scenario!("gwtw-load-c1.toml"),
            full: scenario!("gwtw-load-c1-full.toml"),
            notes: "As <code>gwtw-load-c2</code> with c = 1 (an LRU of 20 items, catalogues \
                    of 20). k = 2 (threshold 0.5) livelocks at every load, as E5 shows; k = 3 \
                    (threshold 0.918) converges in every run up to 0.7 and stalls from 0.8.",
            claims: load_c1,
        },
        Reproduction {
            id: "gwtw-load-n",
            paper: "gwtw",
            title: "GWTW C1 near the threshold against n: with high probability, and where it breaks",
            quick: scenario!("gwtw-load-n.toml"),
            full: scenario!("gwtw-load-n-full.toml"),
            notes: "c = 2, k = 2 at lambda / c = 0.8 and 0.85 (threshold 0.897), with the \
                    paper's rule and with E9's <code>exclude_rewarm</code>. The paper's \
                    \"w.h.p.\" is read as at least 90% of the runs with an optimum. At 0.8 the \
                    stalls become rarer as n grows: w.h.p. holds asymptotically. At 0.85 they \
                    do not: the paper's rule livelocks at every n. The re-trials that keep it \
                    there are false shortfalls: 99% are made by users whose server holds no \
                    more than c users, whose items were evicted by other users' trial probes \
                    (each trial requests at every candidate and inserts into caches that are \
                    full near the threshold) or who then miss while re-warming. Each re-trial \
                    starts a trial that disturbs more residents: a feedback that settles \
                    into a steady state of trials above a load between 0.8 and 0.85. \
                    Round-robin probing stalls too (docs/gwtw.md), so it is not PROBE_ALL's \
                    doing alone; counting only repeated misses (<code>exclude_rewarm</code>) \
                    damps the feedback and most runs converge.",
            claims: load_n,
        },
        Reproduction {
            id: "gwtw-orient",
            paper: "gwtw",
            title: "GWTW: where an optimal state exists (orientability thresholds)",
            quick: scenario!("gwtw-orient.toml"),
            full: scenario!("gwtw-orient-full.toml"),
            notes: "Each of m = lambda n users draws k distinct random servers of capacity c; a \
                    maximum b-matching says whether all fit. The spec's thresholds of lambda / c: \
                    0.5, 0.918, 0.977 at c = 1 and k = 2, 3, 4; 0.897 and 0.959 at k = 2 and \
                    c = 2, 3. Loads are given relative to the threshold. With k = 2 and c = 1 \
                    (cuckoo hashing) the transition is soft at these sizes: the optimum is lost \
                    only through a few users in an over-full component, so some runs above the \
                    threshold still place everyone and some below do not.",
            claims: orient,
        },
        Reproduction {
            id: "gwtw-balls",
            paper: "gwtw",
            title: "GWTW: the power of two choices behind the analysis (C6)",
            quick: scenario!("gwtw-balls.toml"),
            full: scenario!("gwtw-balls-full.toml"),
            notes: "m = n users arrive one at a time; each draws d servers uniformly and joins \
                    the least loaded. The shares of servers with at least i users are compared \
                    with the process's fluid limit, ds<sub>i</sub>/dt = s<sub>i-1</sub><sup>d</sup> \
                    - s<sub>i</sub><sup>d</sup> (Mitzenmacher 1996): Poisson tails for d = 1, \
                    0.762, 0.230, 0.0089, 6.0e-6 for d = 2. The busiest server with two choices \
                    is compared with one choice's exact expectation.",
            claims: balls,
        },
        Reproduction {
            id: "gwtw-e6",
            paper: "gwtw",
            title: "GWTW E6: partial deployment (C5)",
            quick: scenario!("gwtw-e6.toml"),
            full: scenario!("gwtw-e6-full.toml"),
            notes: "A fraction p of users runs GWTW with k = 2, the rest keep one random server. \
                    k = 1 users can be satisfied only if at most c - 1 other k = 1 users share \
                    their server, so at most p + (1 - p) P[Poisson((1 - p) lambda) &le; c - 1] of \
                    users can be. C5 (about 95% at p = 0.7) therefore needs c &ge; 2 or \
                    lambda &le; 0.5 with c = 1: the report checks it at c = 2, lambda = 1.2 and \
                    at c = 1, lambda = 0.3, and shows it failing at c = 1, lambda = 1.2.",
            claims: e6,
        },
        Reproduction {
            id: "gwtw-e7",
            paper: "gwtw",
            title: "GWTW E7: k = 1, worst user vs n (C2)",
            quick: scenario!("gwtw-e7.toml"),
            full: scenario!("gwtw-e7-full.toml"),
            notes: "One random server per user: the busiest server holds about ln n / ln ln n \
                    users, so the worst user's hit rate (web) and bit rate (video, B = 2, \
                    r_max = 1) fall as n grows, while the satisfied fraction stays near 0.74.",
            claims: e7,
        },
        Reproduction {
            id: "gwtw-maxload",
            paper: "gwtw",
            title: "GWTW: k = 1 as balls into bins (busiest server, satisfied users)",
            quick: scenario!("gwtw-maxload.toml"),
            full: scenario!("gwtw-maxload-full.toml"),
            notes: "One random server per user at lambda = 1: the busiest server holds about \
                    ln n / ln ln n users (expected 4.2, 5.5, 6.6, 7.7 at n = 10<sup>2</sup> to \
                    10<sup>5</sup>), and a user is satisfied with probability \
                    P[Binomial(m - 1, 1/n) &le; c - 1]. Both are exact expectations \
                    (<code>cdnlab::select::analysis</code>).",
            claims: maxload,
        },
        Reproduction {
            id: "gwtw-e8",
            paper: "gwtw",
            title: "GWTW E8: the video model",
            quick: scenario!("gwtw-e8.toml"),
            full: scenario!("gwtw-e8-full.toml"),
            notes: "Bit rate model: bandwidth B = 2 per server shared equally, each stream capped \
                    at r_max = 1 (c = 2), lambda = 1, tau = 20. Trial streams load every \
                    candidate.",
            claims: e8,
        },
        Reproduction {
            id: "gwtw-e9-livelock",
            paper: "gwtw",
            title: "GWTW E9 (cdnlab's own): ending the c = 1 livelock",
            quick: scenario!("gwtw-e9-livelock.toml"),
            full: scenario!("gwtw-e9-livelock-full.toml"),
            notes: "Not the paper's: a variant of its re-trial rule that cdnlab adds. Why the \
                    paper's rule livelocks with c = 1: a settled user re-trials on a miss \
                    that someone else caused (trial traffic that evicted its items, or the \
                    re-warm misses after), its own trial probes every candidate and evicts the \
                    next resident, and so on round a component with as many users as servers. \
                    E9 has two parts: <code>exclude_rewarm</code> counts a miss only if the \
                    user's previous request for that item, since it settled there, missed too \
                    (one eviction leaves one miss; sharing beyond capacity leaves repeated \
                    ones), and <code>retrial = move</code> answers a counted miss in a short \
                    window by moving to another candidate with a fresh window, without a \
                    trial (a cuckoo random walk whose only resting states are optimal). \
                    Ignoring re-warm misses alone ends the livelock here; the moves make it \
                    faster.",
            claims: e9_livelock,
        },
        Reproduction {
            id: "gwtw-e9-main",
            paper: "gwtw",
            title: "GWTW E9 (cdnlab's own) in the main regime",
            quick: scenario!("gwtw-e9-main.toml"),
            full: scenario!("gwtw-e9-main-full.toml"),
            notes: "E9 against the paper's rule where both converge (c = 2, lambda = 1, k = 2, \
                    as E2): convergence in every run and its time.",
            claims: e9_main,
        },
        Reproduction {
            id: "gwtw-winner",
            paper: "gwtw",
            title: "GWTW: the winner against a uniform pick",
            quick: scenario!("gwtw-winner.toml"),
            full: scenario!("gwtw-winner-full.toml"),
            notes: "What settling on the winner (GWTW-R3) contributes: the same trials and \
                    re-trials with a uniformly random candidate instead (<code>pick = \
                    uniform</code>, a wrong model) still converge at lambda / c = 0.5, later. \
                    The paper's convergence claims (C1) hold for both, so this claim is the one \
                    that rejects the uniform pick (docs/claims.md, \"Wrong models\").",
            claims: winner,
        },
        Reproduction {
            id: "gwtw-baselines",
            paper: "gwtw",
            title: "GWTW against per-request power of two choices and an oracle",
            quick: scenario!("gwtw-baselines.toml"),
            full: scenario!("gwtw-baselines-full.toml"),
            notes: "What production balancers do per request (Envoy LEAST_REQUEST, NGINX \
                    <code>random two least_conn</code>: the less loaded of two random servers) \
                    balances load but keeps no affinity: in the web model a user's items spread \
                    over every cache and hardly ever hit, while in the video model, where only \
                    the number of streams matters, it does well. The oracle is the assignment of \
                    a maximum b-matching over the same kind of candidate sets (the optimum). \
                    Not a claim of the paper: the comparison cdnlab adds. That P2C's web hit \
                    rate is low holds by construction (no affinity), so it is shown, not \
                    claimed; the claim is that GWTW matches the oracle in every run.",
            claims: baselines,
        },
        Reproduction {
            id: "gwtw-baselines-load",
            paper: "gwtw",
            title: "GWTW, P2C and Prequal across load, with equal and unequal servers",
            quick: scenario!("gwtw-baselines-load.toml"),
            full: scenario!("gwtw-baselines-load-full.toml"),
            notes: "The video model across the loads E5 spans, with equal server bandwidths \
                    and with bandwidths uniform in B x [0.5, 1.5]. P2C and Prequal both choose \
                    per request between two random servers: P2C the one with fewer streams, \
                    Prequal by its hot-cold rule on requests in flight and the time a unit of \
                    video would take there, which knows a server's speed. GWTW (k = 2) and the \
                    oracle keep each user on one server. Not a claim of the paper: the \
                    comparison cdnlab adds (docs/gwtw.md, \"Baselines\").",
            claims: baselines_load,
        },
    ]
}

mod convergence;
mod load;
mod robustness;

use convergence::*;
use load::*;
use robustness::*;

#[cfg(test)]
mod falsify;
#[cfg(test)]
pub(super) use falsify::falsifiers;
