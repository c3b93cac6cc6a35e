//! C1 across load (issue 37): the loads at which the paper's rule converges in every run with an
//! optimum, where "with high probability" holds only as n grows, and where it breaks below the
//! orientability threshold. The thresholds and their derivations, written before these runs:
//! docs/claims.md, "C1 across load"; the mechanism: docs/gwtw.md, "C1 across load".

use super::*;
use crate::reproduce::{FAMILY_ALPHA, censored_median, converged_of_feasible, fisher_greater};
use cdnlab::stats::{binomial_cdf, wilson};

/// "With high probability" at a finite n: at least this share of the runs with an optimum
/// converge.
const WHP: f64 = 0.9;
/// A rise with n, or E9's gain, is shown at this one-sided level (Fisher exact).
const RISE: f64 = 0.01;
/// The highest lambda / c at which C1 is claimed in every run.
const RANGE: f64 = 0.7;
/// lambda / c of the n sweep: where w.h.p. holds as n grows, and where it breaks.
const NEAR: f64 = 0.8;
const BREAK: f64 = 0.85;
/// Of the re-trials in a broken cell, at least this share must be false shortfalls (made by
/// users within their server's capacity): genuine overload would put it below 0.5.
const FALSE_SHORTFALLS: f64 = 0.9;

/// lambda / c of a cell.
fn per_capacity(r: &SummaryRow) -> f64 {
    num(r, "load") / capacity(r) as f64
}

fn at(r: &SummaryRow, x: f64) -> bool {
    (per_capacity(r) - x).abs() < 1e-9
}

/// Whether the cell runs E9's `exclude_rewarm` (false where the grid does not set it).
fn rewarm(r: &SummaryRow) -> bool {
    r.params.get("exclude_rewarm") == Some(&cdnlab::sim::Value::Bool(true))
}

fn by_servers(mut v: Vec<&SummaryRow>) -> Vec<&SummaryRow> {
    v.sort_by(|a, b| num(a, "servers").total_cmp(&num(b, "servers")));
    v
}

/// The mean of a metric over the runs where it is defined (a run with no re-trial has no share
/// of them).
fn defined_mean(sc: &Scenario, r: &SummaryRow, name: &str) -> f64 {
    let v: Vec<f64> = runs(sc, r, name)
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// One cell as claims.json lists it: runs, those with an optimum and those of them converged
/// (with the share's Wilson 95% interval), the runs censored at the horizon and the
/// Kaplan-Meier median slot (null when more than half are censored).
fn cell(sc: &Scenario, r: &SummaryRow) -> serde_json::Value {
    let (done, with) = converged_of_feasible(sc, r);
    let (lo, hi) = wilson(done, with, 1.959964);
    let censored = runs(sc, r, "converged")
        .iter()
        .filter(|c| **c != 1.0)
        .count();
    json!({
        "k": num(r, "k"), "load_per_capacity": per_capacity(r), "servers": num(r, "servers"),
        "exclude_rewarm": rewarm(r), "runs": r.metrics[0].n, "with_optimum": with,
        "converged": done, "converged_share_wilson95": [lo, hi],
        "censored_at_horizon": censored, "median_slot": censored_median(sc, r),
        "retrials_within_capacity": defined_mean(sc, r, "retrials_within_capacity"),
        "retrials_probed": defined_mean(sc, r, "retrials_probed"),
        "in_trial_at_end": defined_mean(sc, r, "in_trial"),
    })
}

/// A cell in words: "0.8: 6 of 10 (median slot 2400)".
fn cell_words(sc: &Scenario, r: &SummaryRow, key: &str) -> String {
    let (done, with) = converged_of_feasible(sc, r);
    let x = if key == "servers" {
        format!("n = {}", num(r, "servers"))
    } else {
        words::sig(per_capacity(r), 3)
    };
    let median = censored_median(sc, r).map_or("beyond the horizon".into(), |m| {
        format!("median slot {}", words::sig(m, 3))
    });
    format!("{x}: {done} of {with} ({median})")
}

/// C1 in every run with an optimum up to lambda / c = RANGE, for the cells `keep` selects; the
/// other cells are listed, to show where it stops.
fn every_run_in_range(
    sc: &Scenario,
    rows: &[SummaryRow],
    (id, text): (&str, &str),
    keep: impl Fn(&SummaryRow) -> bool,
) -> Claim {
    let chosen = only(rows, |r| keep(r));
    let (mut with, mut bad) = (0, Vec::new());
    for r in chosen.iter().filter(|r| per_capacity(r) <= RANGE + 1e-9) {
        let pairs = runs(sc, r, "feasible").iter().zip(runs(sc, r, "converged"));
        for (rep, (f, c)) in pairs.enumerate() {
            if *f == 1.0 {
                with += 1;
                if *c != 1.0 {
                    bad.push(
                        json!({"k": num(r, "k"), "load_per_capacity": per_capacity(r),
                                    "replication": rep}),
                    );
                }
            }
        }
    }
    let ks: Vec<String> = {
        let mut k: Vec<f64> = chosen.iter().map(|r| num(r, "k")).collect();
        k.dedup();
        k.iter().map(|k| words::sig(*k, 2)).collect()
    };
    let beyond = ks.iter().map(|k| {
        let cells = chosen
            .iter()
            .filter(|r| words::sig(num(r, "k"), 2) == *k && per_capacity(r) > RANGE + 1e-9)
            .map(|r| cell_words(sc, r, "load"))
            .collect::<Vec<_>>();
        format!("k = {k}: {}", cells.join(", "))
    });
    claim(
        id,
        text,
        json!({"runs_with_optimum": with, "runs_not_converged": bad,
               "cells": chosen.iter().map(|r| cell(sc, r)).collect::<Vec<_>>()}),
        format!(
            "every run with an optimum converges in every cell with lambda / c <= {RANGE} \
             (cells beyond are shown, not judged)"
        ),
        with > 0 && bad.is_empty(),
    )
    .says(format!(
        "up to lambda / c = {RANGE}: {} of {with} runs with an optimum converged. Beyond \
         (converged of those with an optimum): {}",
        with - bad.len(),
        beyond.collect::<Vec<_>>().join("; ")
    ))
}

pub(super) fn load_c1(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    vec![every_run_in_range(
        sc,
        rows,
        (
            "gwtw.C1-load-c1",
            "With c = 1 and k = 3 the system converges to the optimal state in every run with \
             an optimum, at every load up to lambda / c = 0.7 (the threshold is 0.918; k = 2, \
             threshold 0.5, livelocks at every load: gwtw.F2-livelock)",
        ),
        |r| num(r, "k") == 3.0,
    )]
}

pub(super) fn load_c2(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    vec![every_run_in_range(
        sc,
        rows,
        (
            "gwtw.C1-load",
            "With c = 2 and k = 2 or 3 the system converges to the optimal state in every run \
             with an optimum, at every load up to lambda / c = 0.7 (the k = 2 threshold is \
             0.897)",
        ),
        |r| num(r, "k") >= 2.0,
    )]
}

pub(super) fn load_n(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let cells = |x: f64, e9: bool| by_servers(only(rows, |r| rewarm(r) == e9 && at(r, x)));
    let (near, broken, e9) = (cells(NEAR, false), cells(BREAK, false), cells(BREAK, true));
    let list = |v: &[&SummaryRow]| v.iter().map(|r| cell(sc, r)).collect::<Vec<_>>();
    let in_words = |v: &[&SummaryRow]| {
        v.iter()
            .map(|r| cell_words(sc, r, "servers"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let each = |v: &[&SummaryRow], name: &str| {
        v.iter()
            .map(|r| words::sig(defined_mean(sc, r, name), 3))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // C1-whp: the share rises from the smallest n to the largest, and at the largest "at least
    // WHP converge" is not rejected.
    let whp = match (near.first(), near.last()) {
        (Some(a), Some(b)) if near.len() >= 2 => {
            let (a, b) = (converged_of_feasible(sc, a), converged_of_feasible(sc, b));
            Some((fisher_greater(a, b), binomial_cdf(b.1, WHP, b.0), b.1))
        }
        _ => None,
    };
    // C1-break: at every n "at least WHP converge" is rejected, and the re-trials are false
    // shortfalls.
    let judged: Vec<(f64, f64, f64)> = broken
        .iter()
        .map(|r| {
            let (done, with) = converged_of_feasible(sc, r);
            let p = if with == 0 {
                f64::NAN
            } else {
                binomial_cdf(with, WHP, done)
            };
            (
                num(r, "servers"),
                p,
                defined_mean(sc, r, "retrials_within_capacity"),
            )
        })
        .collect();
    let breaks = !judged.is_empty()
        && judged
            .iter()
            .all(|(_, p, w)| *p < FAMILY_ALPHA && *w >= FALSE_SHORTFALLS);
    // E9-load: exclude_rewarm converges in more runs, pooled over n.
    let pooled = |v: &[&SummaryRow]| {
        v.iter().fold((0, 0), |acc, r| {
            let (d, w) = converged_of_feasible(sc, r);
            (acc.0 + d, acc.1 + w)
        })
    };
    let (paper_pool, e9_pool) = (pooled(&broken), pooled(&e9));
    let gain = fisher_greater(paper_pool, e9_pool);
    vec![
        claim(
            "gwtw.C1-whp",
            "Near the threshold (c = 2, k = 2, lambda / c = 0.8) convergence holds with high \
             probability as n grows: the share of runs with an optimum that converge rises \
             with n, and at the largest n at least 90% converge",
            json!({"cells": list(&near),
                   "p_rise_fisher": whp.map(|w| w.0), "p_at_least_90_percent": whp.map(|w| w.1)}),
            format!(
                "one-sided Fisher exact p < {RISE} for a rise from the smallest n to the largest; \
                 at the largest n, P[Bin(runs with an optimum, {WHP}) <= converged] >= \
                 {FAMILY_ALPHA}"
            ),
            whp.is_some_and(|(rise, at_least, with)| {
                with > 0 && rise < RISE && at_least >= FAMILY_ALPHA
            }),
        )
        .says(format!(
            "converged of the runs with an optimum: {}; rise p = {}, at the largest n P[<= this \
             | 90%] = {}",
            in_words(&near),
            whp.map_or("n/a".into(), |w| words::sig(w.0, 2)),
            whp.map_or("n/a".into(), |w| words::sig(w.1, 2)),
        )),
        claim(
            "gwtw.C1-break",
            "Below the orientability threshold the paper's rule stops converging w.h.p.: at \
             c = 2, k = 2, lambda / c = 0.85 (threshold 0.897) fewer than 90% of the runs with \
             an optimum converge at every n, and the re-trials that keep it from converging are \
             false shortfalls (users within their server's capacity, disturbed by trial \
             traffic and re-warm misses)",
            json!({"cells": list(&broken),
                   "servers_p_at_least_90_percent_within_capacity": judged}),
            format!(
                "at every n: P[Bin(runs with an optimum, {WHP}) <= converged] < {FAMILY_ALPHA}, \
                 and the mean share of re-trials within capacity >= {FALSE_SHORTFALLS}"
            ),
            breaks,
        )
        .says(format!(
            "converged of the runs with an optimum: {}; re-trials within capacity: {} (shown, \
             not judged: of those, made while a trial probed the server: {}; users in a trial \
             at the end: {})",
            in_words(&broken),
            each(&broken, "retrials_within_capacity"),
            each(&broken, "retrials_probed"),
            each(&broken, "in_trial"),
        ))
        .finding(),
        claim(
            "gwtw.E9-load",
            "E9's exclude_rewarm (count a miss only if the previous request for that item there \
             missed too) makes more runs converge at c = 2, k = 2, lambda / c = 0.85 than the \
             paper's rule (cdnlab's variant)",
            json!({"cells": list(&e9), "paper_converged_with_optimum": paper_pool,
                   "exclude_rewarm_converged_with_optimum": e9_pool, "p_fisher": gain}),
            format!("one-sided Fisher exact p < {RISE}, pooled over n"),
            e9_pool.1 > 0 && gain < RISE,
        )
        .says(format!(
            "converged of the runs with an optimum, pooled over n: paper's rule {} of {}, \
             exclude_rewarm {} of {} (p = {}); exclude_rewarm by n: {}",
            paper_pool.0,
            paper_pool.1,
            e9_pool.0,
            e9_pool.1,
            words::sig(gain, 2),
            in_words(&e9)
        ))
        .addition(),
    ]
}
