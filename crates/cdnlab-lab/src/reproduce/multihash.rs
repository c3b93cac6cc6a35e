//! Reproductions of multi-hash replication in a DHT-based CDN (spec `docs/spec/multihash.md`,
//! experiments X1-X6). Every pass/fail is computed from the run's summary against the spec's
//! formulas, with the tolerance stated in the claim.

use super::{Claim, Reproduction, metric, num, runs, se, text, words};
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

fn x1(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let min_fit = rows
        .iter()
        .map(|r| metric(sc, r, "fits"))
        .fold(f64::INFINITY, f64::min);
    let worst_chi = rows
        .iter()
        .map(|r| metric(sc, r, "chi2") / metric(sc, r, "chi2_bound").max(1e-12))
        .fold(0.0, f64::max);
    // z-score of the mean probes against 1 + H_K - H_n.
    let z = |r: &SummaryRow| {
        let var = metric(sc, r, "var_expected");
        let se = (var / (num(r, "requests") * reps(r))).sqrt();
        super::z_score(
            metric(sc, r, "probes_mean"),
            metric(sc, r, "probes_expected"),
            se,
        )
    };
    let worst_z = rows.iter().map(z).fold(0.0, f64::max);
    // The sample variance against its formula, in standard errors of a sample variance
    // (from the exact fourth cumulant of the probe count).
    let var_z = |r: &SummaryRow| {
        let (k, n) = (num(r, "k") as u32, num(r, "n") as u32);
        let var = metric(sc, r, "var_expected");
        let samples = num(r, "requests") * reps(r);
        let se = ((analysis::probe_fourth_cumulant(k, n) + 2.0 * var * var) / samples).sqrt();
        super::z_score(metric(sc, r, "probes_var"), var, se)
    };
    let with_var: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| metric(sc, r, "var_expected") > 0.0)
        .collect();
    let worst_var = with_var.iter().map(|r| var_z(r)).fold(0.0, f64::max);
    let bound = super::critical(0, rows.len());
    let var_bound = super::critical(0, with_var.len());
    vec![
        claim(
            "mh.rbs-uniform",
            "RBS serves from a uniformly random used index (chi-square, every K and n)",
            json!({"lowest_fraction_of_runs_passing": min_fit, "largest_chi2_over_bound": worst_chi}),
            "every run below the 1e-4 chi-square bound".into(),
            !rows.is_empty() && min_fit == 1.0,
        )
        .says(format!(
            "{} cells (K, n); runs below the bound: {}% in the worst cell; the largest \
             chi-square is {} of the bound",
            rows.len(),
            words::sig(100.0 * min_fit, 3),
            words::sig(worst_chi, 2)
        )),
        claim(
            "mh.rbs-probes",
            "RBS makes 1 + H_K - H_n probes per request on average",
            json!({"largest_z": worst_z, "bound": bound}),
            format!(
                "|mean - formula| within {bound:.2} standard errors in every cell (normal, 0.001 family-wise)"
            ),
            !rows.is_empty() && worst_z <= bound,
        )
        .says(format!(
            "the farthest cell's mean is {} standard errors from the formula",
            words::sig(worst_z, 2)
        )),
        claim(
            "mh.rbs-variance",
            "The variance of the probe count is the sum over j in (n, K] of 1/j - 1/j^2",
            json!({"largest_z": worst_var, "bound": var_bound}),
            format!(
                "sample variance within {var_bound:.2} of its standard errors of the formula in every cell with n < K (0.001 family-wise)"
            ),
            !with_var.is_empty() && worst_var <= var_bound,
        )
        .says(format!(
            "{} cells with n < K; the farthest sample variance is {} of its standard errors \
             from the formula",
            with_var.len(),
            words::sig(worst_var, 2)
        )),
    ]
}

fn x2(_: &Scenario, _: &[SummaryRow]) -> Vec<Claim> {
    // A figure, not a claim: RBS's largest possible mean, 1 + H_1024 - H_1 = 7.51, is below
    // binary search's 11 probes by arithmetic, so the comparison could not fail; RBS's own
    // cost is checked against its formula in X1 (mh.rbs-probes).
    Vec::new()
}

fn gaps(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let min_fit = rows
        .iter()
        .map(|r| metric(sc, r, "fits"))
        .fold(f64::INFINITY, f64::min);
    // Failure rate at g = 1 against 1/n.
    let fail_z = rows
        .iter()
        .filter(|r| num(r, "gap") == 1.0)
        .map(|r| {
            let p = 1.0 / num(r, "n");
            let se = (p * (1.0 - p) / (num(r, "requests") * reps(r))).sqrt();
            super::z_score(metric(sc, r, "fail_rate"), p, se)
        })
        .fold(0.0, f64::max);
    let bound = super::critical(0, rows.len());
    // RGR rounds: geometric with success (n - g)/(n - 1).
    let rgr_z = rows
        .iter()
        .map(|r| {
            let (n, g) = (num(r, "n"), num(r, "gap"));
            let p = (n - g) / (n - 1.0);
            let se = ((1.0 - p) / (p * p) / (num(r, "rounds_trials") * reps(r))).sqrt();
            super::z_score(
                metric(sc, r, "rgr_rounds"),
                analysis::rgr_mean_rounds(n as u32, g as u32),
                se,
            )
        })
        .fold(0.0, f64::max);
    vec![
        claim(
            "mh.gap-single",
            "With one gap g, requests serve from j < g with probability (1/n)(1 + 1/(g - 1)), from j > g with 1/n, and fail with 1/n when g = 1",
            json!({"lowest_fraction_of_runs_passing_chi2": min_fit, "failure_rate_largest_z": fail_z}),
            format!(
                "every run below the 1e-4 chi-square bound; failure rate within {bound:.2} standard errors of 1/n (0.001 family-wise)"
            ),
            !rows.is_empty() && min_fit == 1.0 && fail_z <= bound,
        )
        .says(format!(
            "{} cells; runs below the chi-square bound: {}% in the worst cell; the failure \
             rate at g = 1 is at most {} standard errors from 1/n",
            rows.len(),
            words::sig(100.0 * min_fit, 3),
            words::sig(fail_z, 2)
        )),
        claim(
            "mh.rgr-rounds",
            "Random gap removal fills a single gap g after (n - 1)/(n - g) rounds on average",
            json!({"largest_z": rgr_z, "bound": bound}),
            format!("within {bound:.2} standard errors in every cell (0.001 family-wise)"),
            !rows.is_empty() && rgr_z <= bound,
        )
        .says(format!(
            "{} cells (n, g); the farthest mean is {} standard errors from (n - 1)/(n - g)",
            rows.len(),
            words::sig(rgr_z, 2)
        )),
    ]
}

fn multigap(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let min_fit = rows
        .iter()
        .map(|r| metric(sc, r, "fits"))
        .fold(f64::INFINITY, f64::min);
    let dev = rows
        .iter()
        .map(|r| metric(sc, r, "max_abs_dev"))
        .fold(0.0, f64::max);
    vec![
        claim(
            "mh.gap-multi",
            "With several gaps the served index and failures follow the exact recursion",
            json!({"lowest_fraction_of_runs_passing_chi2": min_fit, "largest_abs_deviation": dev}),
            "every run below the 1e-4 chi-square bound".into(),
            !rows.is_empty() && min_fit == 1.0,
        )
        .says(format!(
            "{} cells; runs below the chi-square bound: {}% in the worst cell; the largest \
         deviation of a served-index share from the recursion is {}",
            rows.len(),
            words::sig(100.0 * min_fit, 3),
            words::sig(dev, 2)
        )),
    ]
}

fn x3(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    // Per run: the busiest node's load over the mean, multi-hash against single-hash in the
    // same (alpha, vnodes) cell; every multi-hash run below every single-hash run.
    let mut cells = Vec::new();
    for r in rows.iter().filter(|r| text(r, "policy") == "multihash") {
        let Some(single) = rows.iter().find(|s| {
            text(s, "policy") == "single-hash"
                && num(s, "alpha") == num(r, "alpha")
                && num(s, "vnodes") == num(r, "vnodes")
        }) else {
            continue;
        };
        let worst_mh = runs(sc, r, "max_mean").iter().copied().fold(0.0, f64::max);
        let best_single = runs(sc, single, "max_mean")
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        cells.push((num(r, "alpha"), num(r, "vnodes"), worst_mh, best_single));
    }
    // The gain grows with alpha: popularity, which replication spreads, is what skews
    // single-hash placement.
    let mut growth = Vec::new();
    for vnodes in super::values_of(rows, "vnodes") {
        let pts: Vec<(f64, f64, f64)> = cells
            .iter()
            .filter(|c| c.1 == vnodes)
            .map(|c| (c.0, (c.3 / c.2).ln(), 0.0))
            .collect();
        let fit = cdnlab::stats::LineFit::fit(&pts);
        growth.push((vnodes, fit.map(|f| f.slope), fit.is_some_and(|f| f.rises())));
    }
    vec![claim(
        "mh.balance-gain",
        "Replication balances node load: the busiest node's load over the mean falls against \
         single-hash placement, the more the more skewed the popularity",
        json!({"alpha_vnodes_worst_multihash_best_singlehash": cells, "vnodes_slope_of_ln_gain_vs_alpha_rises": growth}),
        "in every cell every multi-hash run's max/mean is below every single-hash run's, and \
         ln(gain) (best single-hash over worst multi-hash) rises with alpha at every ring layout \
         (slope's 95% interval above 0)"
            .into(),
        !cells.is_empty()
            && cells.iter().all(|c| c.2 < c.3)
            && !growth.is_empty()
            && growth.iter().all(|g| g.2),
    )
    .says(format!(
        "busiest node over the mean, worst multi-hash run against best single-hash run: {}; \
         slope of ln(gain) against alpha: {}",
        words::list(
            cells.iter().map(|c| format!(
                "alpha {} ({} vnodes) {} vs {}",
                words::sig(c.0, 3),
                c.1,
                words::sig(c.2, 3),
                words::sig(c.3, 3)
            )),
            12
        ),
        words::list(
            growth.iter().map(|g| format!(
                "{} at {} vnodes",
                g.1.map_or("n/a".into(), |x| words::sig(x, 2)),
                g.0
            )),
            4
        )
    ))]
}

fn steady(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let windows = super::values_of(rows, "window");
    let (Some(&short), Some(&long)) = (windows.first(), windows.last()) else {
        return steady_claims(
            json!(null),
            false,
            json!(null),
            false,
            "no window was run".into(),
        );
    };
    let per_run = |w: f64| -> Vec<(f64, usize, f64, f64)> {
        let mut v = Vec::new();
        for r in rows.iter().filter(|r| num(r, "window") == w) {
            let (hot, all) = (runs(sc, r, "hot_in_band"), runs(sc, r, "in_band"));
            for rep in 0..hot.len() {
                v.push((num(r, "alpha"), rep, hot[rep], all[rep]));
            }
        }
        v
    };
    let at_long = per_run(long);
    let at_short = per_run(short);
    let long_ok = windows.len() >= 2
        && !at_long.is_empty()
        && at_long.iter().all(|x| x.2 == 1.0 && x.3 >= 0.99);
    let short_over = !at_short.is_empty() && at_short.iter().all(|x| x.2 < 1.0);
    let in_band = |v: &[(f64, usize, f64, f64)]| {
        let hot = v.iter().filter(|x| x.2 == 1.0).count();
        let low = v.iter().map(|x| x.3).fold(f64::INFINITY, f64::min);
        format!(
            "{} had all 10 hot files in the band, and at least {}% of all files were in it",
            words::of(hot, v.len(), "runs"),
            words::sig(100.0 * low, 3)
        )
    };
    let said = format!(
        "window {}: {}; window {}: {}",
        words::sig(long, 4),
        in_band(&at_long),
        words::sig(short, 4),
        in_band(&at_short)
    );
    steady_claims(
        json!({"window": long, "alpha_rep_hot_all": at_long}),
        long_ok,
        json!({"window": short, "alpha_rep_hot_all": at_short}),
        short_over && long_ok,
        said,
    )
}

fn steady_claims(
    long: serde_json::Value,
    long_ok: bool,
    short: serde_json::Value,
    short_ok: bool,
    said: String,
) -> Vec<Claim> {
    vec![
        claim(
            "mh.steady-replicas",
            "Replica counts settle at max(1, ceil(lambda_f / c_high)), within the de-replication \
             hysteresis, the most popular files included",
            long,
            "with the long overload window, in every run all of the 10 most popular files and at \
             least 99% of all files lie in [ceil(lambda/c_high), ceil(lambda/(gamma c_high))] \
             (ends capped at K)"
                .into(),
            long_ok,
        )
        .says(said.clone()),
        claim(
            "mh.steady-noise",
            "With a short overload window the hot files settle above their band: the busiest of \
             a file's n replicas sees its count's noise, so replication goes on while demand \
             per replica is below c_high",
            short,
            "with the default window (200) some of the 10 most popular files lie outside the \
             band in every run, while all lie inside with the long window"
                .into(),
            short_ok,
        )
        .says(said)
        .finding(),
    ]
}

fn x4(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let cell = |g: &str, h: f64| {
        rows.iter()
            .find(|r| text(r, "growth") == g && num(r, "horizon") == h)
    };
    let (mut start, mut end, mut last, mut target) = (f64::NAN, f64::NAN, f64::NAN, 0u32);
    let mut lambda_w = f64::NAN;
    if let Some(r0) = rows.first() {
        (start, end) = (num(r0, "flash_start"), num(r0, "flash_end"));
        last = rows.iter().map(|r| num(r, "horizon")).fold(0.0, f64::max);
        // The flash crowd's replica count: its demand over c_high.
        let pmf0 = Law::Zipf {
            alpha: num(r0, "alpha"),
        }
        .pmf(num(r0, "files") as usize)
        .map_or(f64::NAN, |p| p[0]);
        let lambda = num(r0, "flash") * pmf0 * num(r0, "load") * num(r0, "nodes");
        target = analysis::steady_replicas(lambda, num(r0, "c_high"));
        lambda_w = lambda * num(r0, "window");
    }
    // Upper bounds: growth stops once overload is rare (analysis::growth_bounds), at a
    // family-wise 0.001 over every crowd window of every double and jump run checked.
    let windows: f64 = rows
        .iter()
        .filter(|r| text(r, "growth") != "one" && num(r, "horizon") > start)
        .map(|r| (num(r, "horizon").min(end) - start) * r.metrics[0].n as f64)
        .sum();
    let (n_star, double_max, jump_max) = rows.first().map_or((0, 0, 0), |r0| {
        analysis::growth_bounds(
            lambda_w,
            num(r0, "c_high") * num(r0, "window"),
            0.001 / windows.max(1.0),
        )
    });
    let mut over = Vec::new();
    for r in rows
        .iter()
        .filter(|r| text(r, "growth") != "one" && num(r, "horizon") > start)
    {
        let bound = if text(r, "growth") == "double" {
            double_max
        } else {
            jump_max
        };
        for (rep, v) in runs(sc, r, "top_replicas").iter().enumerate() {
            if *v > f64::from(bound) {
                over.push((text(r, "growth").to_string(), num(r, "horizon"), rep, *v));
            }
        }
    }
    // Growth, per run: one replica per window adds exactly one each window up to the crowd's
    // end (h + 1 replicas after window h, as long as that is below the target); doubling and
    // jump hold at least the target two windows after the crowd arrives.
    let mut one_off = Vec::new();
    let mut one_runs = 0;
    for r in rows
        .iter()
        .filter(|r| text(r, "growth") == "one" && num(r, "horizon") <= end)
    {
        let h = num(r, "horizon");
        for (rep, v) in runs(sc, r, "top_replicas").iter().enumerate() {
            one_runs += 1;
            if *v != (h + 1.0).min(f64::from(target)) {
                one_off.push((h, rep, *v));
            }
        }
    }
    let soon = start + 2.0;
    let mut slow = Vec::new();
    let mut fast_runs = 0;
    for g in ["double", "jump"] {
        for (rep, v) in cell(g, soon)
            .map(|r| runs(sc, r, "top_replicas"))
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            fast_runs += 1;
            if *v < f64::from(target) {
                slow.push((g, rep, *v));
            }
        }
    }
    // Shrink: after the crowd the top replica leaves once per window, so the mean count falls
    // by the windows elapsed (independent runs at the two ends; 95% interval of the
    // difference plus one replica).
    let mut shrink = Vec::new();
    for g in ["double", "jump"] {
        if let (Some(a), Some(b)) = (cell(g, end), cell(g, last)) {
            let want = metric(sc, a, "top_replicas") - (last - end);
            let got = metric(sc, b, "top_replicas");
            let df = a.metrics[0].n.min(b.metrics[0].n).saturating_sub(1).max(1);
            let tol = cdnlab::stats::t975(df)
                * (se(sc, a, "top_replicas").powi(2) + se(sc, b, "top_replicas").powi(2)).sqrt()
                + 1.0;
            shrink.push((
                g,
                metric(sc, a, "top_replicas"),
                got,
                want,
                (got - want).abs() <= tol,
            ));
        }
    }
    // The invariants, per run, over every window of growth and shrink.
    let broken: Vec<(String, f64, usize, f64, f64)> = rows
        .iter()
        .flat_map(|r| {
            let (p, h) = (runs(sc, r, "prefix_breaks"), runs(sc, r, "home_missing"));
            (0..p.len())
                .filter(move |&i| p[i] > 0.0 || h[i] > 0.0)
                .map(move |i| {
                    (
                        text(r, "growth").to_string(),
                        num(r, "horizon"),
                        i,
                        p[i],
                        h[i],
                    )
                })
        })
        .collect();
    let total: usize = rows.iter().map(|r| r.metrics[0].n).sum();
    // The busiest replica of the crowd's file, from 5 windows after the crowd arrives until it
    // leaves: with double and jump at most c_high plus the noise of the busiest of `target`
    // replica counts (normal critical value at 0.001 over them, count ~ Poisson(c_high W)); one
    // replica per window leaves it above c_high.
    let (mut loaded, mut load_runs, mut one_lags) = (Vec::new(), 0, true);
    let mut one_runs_load = 0;
    let mut limit = f64::NAN;
    for r in rows
        .iter()
        .filter(|r| num(r, "horizon") >= start + 5.0 && num(r, "horizon") <= end)
    {
        let c_high = num(r, "c_high");
        limit = c_high + super::critical(0, target as usize) * (c_high / num(r, "window")).sqrt();
        for (rep, v) in runs(sc, r, "top_replica_load").iter().enumerate() {
            if text(r, "growth") == "one" {
                one_runs_load += 1;
                one_lags &= *v > c_high;
            } else {
                load_runs += 1;
                if *v > limit {
                    loaded.push((text(r, "growth").to_string(), num(r, "horizon"), rep, *v));
                }
            }
        }
    }
    vec![
        claim(
            "mh.flash-load",
            "Replication keeps each replica of a flash-crowd file at about c_high with doubling \
             and jump; one replica per window leaves the replicas overloaded",
            json!({"limit": limit, "double_jump_runs": load_runs, "above_growth_horizon_rep_load": loaded,
                   "one_runs": one_runs_load, "one_above_c_high_in_every_run": one_lags}),
            "from 5 windows after the crowd arrives until it leaves: every double and jump run's \
             busiest replica at most c_high + z sqrt(c_high / W) (z for the busiest of the \
             target's replicas at 0.001), every run of one above c_high"
                .into(),
            load_runs > 0 && loaded.is_empty() && one_runs_load > 0 && one_lags,
        )
        .says(format!(
            "doubling and jump: {} above the limit {}; one per window: {} above c_high",
            words::of(loaded.len(), load_runs, "run-windows"),
            words::sig(limit, 3),
            if one_lags {
                format!("every one of {one_runs_load} run-windows")
            } else {
                "not every run-window".to_string()
            }
        )),
        claim(
            "mh.invariants",
            "Without failures the used indices of every file stay a prefix 1..n_f and the home \
             copy is never removed, through replication (CREATE_IF_ABSENT at the smallest unused \
             index) and top-only de-replication",
            json!({"runs": total, "runs_broken_growth_horizon_rep_prefix_home": broken}),
            "in every run and every window: no file with a gap, none without index 1".into(),
            total > 0 && broken.is_empty(),
        )
        .says(format!(
            "{} broke an invariant in some window",
            words::of(broken.len(), total, "runs")
        )),
        claim(
            "mh.flash-growth",
            "Doubling and jump replicate a flash crowd within a few windows; one replica per window lags, adding exactly one per window",
            json!({"target": target, "one_runs": one_runs, "one_runs_off_h_plus_1": one_off,
                   "window": soon, "double_jump_runs": fast_runs, "below_target": slow,
                   "growth_stops_at": n_star, "double_at_most": double_max, "jump_at_most": jump_max,
                   "above_bound_growth_horizon_rep_replicas": over}),
            format!(
                "every run of one holds h + 1 replicas after window h (below {target}) until the \
                 crowd ends; every run of double and jump holds at least {target} two windows \
                 after it starts, and at most the bound where noise stops triggering growth \
                 (double {double_max}, jump {jump_max}) at every window"
            ),
            one_runs > 0
                && one_off.is_empty()
                && fast_runs > 0
                && slow.is_empty()
                && double_max > 0
                && over.is_empty(),
        )
        .says(format!(
            "one per window: {} off h + 1; double and jump two windows in: {} below {target}; \
             {} above the bound",
            words::of(one_off.len(), one_runs, "run-windows"),
            words::of(slow.len(), fast_runs, "runs"),
            words::of(over.len(), rows.iter().filter(|r| text(r, "growth") != "one" && num(r, "horizon") > start).map(|r| r.metrics[0].n).sum(), "run-windows of double and jump")
        )),
        claim(
            "mh.flash-shrink",
            "After the crowd leaves, top-only de-replication removes one replica per window",
            json!({"growth_at_end_at_last_expected_ok": shrink, "windows": last - end}),
            "mean replicas at the last window = mean when the crowd left minus the windows \
             since, within the 95% interval of the difference plus one, for double and jump"
                .into(),
            shrink.len() == 2 && shrink.iter().all(|s| s.4),
        )
        .says(format!(
            "{} windows after the crowd: {}",
            words::sig(last - end, 4),
            words::list(
                shrink.iter().map(|s| format!(
                    "{} from {} to {} replicas (expected {})",
                    s.0,
                    words::sig(s.1, 3),
                    words::sig(s.2, 3),
                    words::sig(s.3, 3)
                )),
                2
            )
        )),
    ]
}

fn x5(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    // Requests in the window after the crash: about load x nodes x window per run.
    let z = |r: &SummaryRow| {
        let (m, p) = (
            metric(sc, r, "failure_rate_after"),
            metric(sc, r, "predicted_failure_after"),
        );
        let n = num(r, "load") * num(r, "nodes") * num(r, "window") * reps(r);
        let se = (p * (1.0 - p) / n).sqrt().max(1e-12);
        (m - p).abs() / se
    };
    let worst = rows.iter().map(z).fold(0.0, f64::max);
    let horizon_left = |r: &SummaryRow| num(r, "horizon") - num(r, "fail_at");
    // Per run: a run whose gaps were never all filled reports the rounds left to the horizon.
    let mut unrepaired: Vec<(String, f64, usize, f64)> = Vec::new();
    let mut worst_run: Option<(String, f64, usize, f64)> = None;
    for r in rows {
        for (rep, &v) in runs(sc, r, "repair_rounds").iter().enumerate() {
            let item = (
                text(r, "repair").to_string(),
                num(r, "fail_fraction"),
                rep,
                v,
            );
            if v >= horizon_left(r) {
                unrepaired.push(item.clone());
            }
            if worst_run.as_ref().is_none_or(|w| v > w.3) {
                worst_run = Some(item);
            }
        }
    }
    let rounds: Vec<(String, f64, f64)> = rows
        .iter()
        .map(|r| {
            (
                text(r, "repair").to_string(),
                num(r, "fail_fraction"),
                metric(sc, r, "repair_rounds"),
            )
        })
        .collect();
    // Load skew below gaps: per run, the requests served by replicas below each file's lowest
    // gap on the exact recursion's expectation (Poisson standard error sqrt(expected), an upper
    // bound on the binomial one); over all runs, above a uniform pick's beyond that error.
    let n_runs: usize = rows.iter().map(|r| r.metrics[0].n).sum();
    let crit = super::critical(0, n_runs.max(1));
    let mut skew_bad = Vec::new();
    let mut worst_skew_z: f64 = 0.0;
    let mut pooled = (0.0, 0.0); // served beyond the uniform pick's, and expected, all runs
    for r in rows {
        let (o, e, u) = (
            runs(sc, r, "below_gap_served"),
            runs(sc, r, "below_gap_expected"),
            runs(sc, r, "below_gap_uniform"),
        );
        for rep in 0..o.len() {
            let se = e[rep].sqrt();
            let z = super::z_score(o[rep], e[rep], se);
            worst_skew_z = worst_skew_z.max(z);
            if e[rep] <= 0.0 || z > crit {
                skew_bad.push((text(r, "repair").to_string(), num(r, "fail_fraction"), rep));
            }
            pooled.0 += o[rep] - u[rep];
            pooled.1 += e[rep];
        }
    }
    vec![
        claim(
            "mh.gap-skew",
            "After crashes, replicas below a gap carry more load: requests pick a used index by \
             RBS, so indices below a gap absorb the gap's share, as the recursion says",
            json!({"runs": n_runs, "largest_z_vs_recursion": worst_skew_z, "bound": crit,
                   "runs_off_repair_fraction_rep": skew_bad,
                   "beyond_uniform_in_se": pooled.0 / pooled.1.max(1.0).sqrt()}),
            "in every run, the requests served below the lowest gap within the critical value \
             (0.001 family-wise) of the recursion's expectation; over all runs, above a uniform \
             pick's by more than that critical value of their error"
                .into(),
            n_runs > 0 && skew_bad.is_empty() && pooled.0 > crit * pooled.1.max(1.0).sqrt(),
        )
        .says(format!(
            "{} off the recursion (the farthest {} standard errors, bound {}); over all runs, \
             {} standard errors above a uniform pick",
            words::of(skew_bad.len(), n_runs, "runs"),
            words::sig(worst_skew_z, 2),
            words::sig(crit, 3),
            words::sig(pooled.0 / pooled.1.max(1.0).sqrt(), 3)
        )),
        claim(
            "mh.failure-recursion",
            "After crashes, the request failure rate is what the exact recursion predicts from the surviving replicas",
            json!({"largest_z": worst, "bound": super::critical(0, rows.len())}),
            format!(
                "measured within {:.2} standard errors of predicted in every cell (0.001 family-wise)",
                super::critical(0, rows.len())
            ),
            !rows.is_empty() && worst <= super::critical(0, rows.len()),
        )
        .says(format!(
            "{} cells; the farthest is {} standard errors from the prediction",
            rows.len(),
            words::sig(worst, 2)
        )),
        claim(
            "mh.repair",
            "Random gap removal and its variants remove every gap",
            json!({"runs_with_gaps_left_repair_fraction_rep_rounds": unrepaired, "worst_run": worst_run, "mean_rounds": rounds}),
            "no gap left before the horizon in any run".into(),
            !rows.is_empty() && unrepaired.is_empty(),
        )
        .says(format!(
            "{} left a gap at the horizon; the slowest run took {} rounds ({}); mean rounds: {}",
            words::of(unrepaired.len(), rows.iter().map(|r| r.metrics[0].n).sum(), "runs"),
            worst_run.as_ref().map_or("n/a".into(), |w| words::sig(w.3, 4)),
            worst_run.as_ref().map_or("n/a".into(), |w| format!("{}, {} failed", w.0, words::sig(w.1, 3))),
            words::list(
                rounds.iter().map(|r| format!("{} at {} failed: {}", r.0, words::sig(r.1, 3), words::sig(r.2, 3))),
                8
            )
        )),
    ]
}

fn x6(sc: &Scenario, rows: &[SummaryRow]) -> Vec<Claim> {
    let worst = rows
        .iter()
        .map(|r| (metric(sc, r, "chord_hops") - 0.5 * num(r, "nodes").log2()).abs())
        .fold(0.0, f64::max);
    let hops: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (num(r, "nodes"), metric(sc, r, "chord_hops")))
        .collect();
    // Per run, against the spec's costs computed from the replica state (not by counting):
    // the probes of every request against RBS's theorem for its file's state then (z of the
    // run's mean from the summed per-request variances), the replication messages against
    // the gallop-and-bisect closed form, a repair round against one probe per replica above
    // the home plus one per refill.
    let n_runs: usize = rows.iter().map(|r| r.metrics[0].n).sum();
    let crit = super::critical(0, n_runs.max(1));
    let (mut probes_z, mut probes_off): (f64, Vec<(f64, usize, f64)>) = (0.0, Vec::new());
    let (mut repl_off, mut repair_off, mut dup) = (Vec::new(), Vec::new(), Vec::new());
    let (mut refused, mut repl_cost) = (0.0, Vec::new());
    let exact = |a: f64, b: f64| b > 0.0 && (a - b).abs() <= 1e-9 * b;
    for r in rows {
        let n = num(r, "nodes");
        let (m, e, s) = (
            runs(sc, r, "probes_per_request"),
            runs(sc, r, "probes_expected"),
            runs(sc, r, "probes_se"),
        );
        let (rm, rf) = (
            runs(sc, r, "messages_per_replication"),
            runs(sc, r, "replication_formula"),
        );
        let (pm, pf) = (
            runs(sc, r, "repair_messages_per_round"),
            runs(sc, r, "repair_formula"),
        );
        let (cr, du) = (
            runs(sc, r, "create_refused"),
            runs(sc, r, "duplicate_replicas"),
        );
        for rep in 0..m.len() {
            let z = super::z_score(m[rep], e[rep], s[rep]);
            probes_z = probes_z.max(z);
            if !(e[rep] > 0.0 && z <= crit) {
                probes_off.push((n, rep, m[rep]));
            }
            if !exact(rm[rep], rf[rep]) {
                repl_off.push((n, rep, rm[rep], rf[rep]));
            }
            if !exact(pm[rep], pf[rep]) {
                repair_off.push((n, rep, pm[rep], pf[rep]));
            }
            if du[rep] > 0.0 {
                dup.push((n, rep, du[rep]));
            }
            refused += cr[rep];
        }
        repl_cost.push((n, metric(sc, r, "messages_per_replication")));
    }
    vec![
        claim(
            "mh.chord-hops",
            "A DHT lookup takes about 0.5 log2 N Chord hops",
            json!({"largest_deviation": worst, "nodes_hops": hops}),
            "within 0.5 hops of 0.5 log2 N at every N".into(),
            !rows.is_empty() && worst <= 0.5,
        )
        .says(format!(
            "hops: {}; the largest deviation from 0.5 log2 N is {}",
            words::list(
                hops.iter()
                    .map(|h| format!("N {}: {}", h.0, words::sig(h.1, 3))),
                8
            ),
            words::sig(worst, 2)
        )),
        claim(
            "mh.x6-probes",
            "Requests in the running DHT, through replication, crashes and repair, make the \
             probes random binary search's theorem gives for each file's state (1 + H_K - H_n \
             for a prefix, the recursion with gaps)",
            json!({"runs": n_runs, "largest_z": probes_z, "bound": crit,
                   "runs_off_nodes_rep_probes": probes_off}),
            format!(
                "every run's mean probes per request within {crit:.2} standard errors of the \
                 theorem's mean over its requests (0.001 family-wise)"
            ),
            n_runs > 0 && probes_off.is_empty(),
        )
        .says(format!(
            "{} off the theorem; the farthest run is {} standard errors away",
            words::of(probes_off.len(), n_runs, "runs"),
            words::sig(probes_z, 2)
        )),
        claim(
            "mh.x6-replication",
            "A replication costs the search for the smallest unused index, 2 floor(log2(n_f - \
             i)) + 2 probes by galloping and bisecting from replica i, plus one \
             CREATE_IF_ABSENT per index attempted",
            json!({"runs": n_runs, "runs_off_nodes_rep_measured_formula": repl_off,
                   "nodes_messages_per_replica_created": repl_cost}),
            "in every run, the messages per replica created equal the closed form summed over \
             the run's searches"
                .into(),
            n_runs > 0 && repl_off.is_empty(),
        )
        .says(format!(
            "{} off the closed form; messages per replica created: {}",
            words::of(repl_off.len(), n_runs, "runs"),
            words::list(
                repl_cost
                    .iter()
                    .map(|c| format!("N {}: {}", c.0, words::sig(c.1, 3))),
                8
            )
        )),
        claim(
            "mh.x6-repair",
            "A round of random gap removal costs one probe per replica above the home, plus \
             one message per refill",
            json!({"runs": n_runs, "runs_off_nodes_rep_measured_formula": repair_off}),
            "in every run, the messages per round equal the replicas above index 1 at each \
             round's start plus the refills, over the rounds"
                .into(),
            n_runs > 0 && repair_off.is_empty(),
        )
        .says(format!(
            "{} off the count",
            words::of(repair_off.len(), n_runs, "runs")
        )),
        claim(
            "mh.create-once",
            "Concurrent replication attempts at one index create one replica: CREATE_IF_ABSENT \
             is decided by the node owning the index's position",
            json!({"runs": n_runs, "attempts_refused_as_existing": refused,
                   "runs_with_a_replica_held_twice_nodes_rep_count": dup}),
            "concurrent attempts happened (some refused as existing), and in no run and no \
             window did a file hold one index twice"
                .into(),
            n_runs > 0 && refused > 0.0 && dup.is_empty(),
        )
        .says(format!(
            "{} attempts refused as existing; {} held an index twice",
            words::sig(refused, 6),
            words::of(dup.len(), n_runs, "runs")
        )),
    ]
}

#[cfg(test)]
pub(super) fn falsifiers() -> Vec<super::fixture::Falsifier> {
    use super::fixture::{falsifier as f, normal, set, tweak};
    use cdnlab::rng::Rng;

    type V = Vec<(&'static str, f64)>;
    fn x1_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (k, n) = (num(r, "k") as u32, num(r, "n") as u32);
        let (e, var) = (
            analysis::expected_probes(k, n),
            analysis::probe_variance(k, n),
        );
        let req = num(r, "requests");
        vec![
            ("probes_mean", normal(rng, e, (var / req).sqrt())),
            ("probes_expected", e),
            (
                "probes_var",
                normal(
                    rng,
                    var,
                    ((analysis::probe_fourth_cumulant(k, n) + 2.0 * var * var) / req).sqrt(),
                ),
            ),
            ("var_expected", var),
            ("chi2", 10.0),
            ("chi2_bound", 20.0),
            ("fits", 1.0),
        ]
    }
    fn gaps_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let (n, g) = (num(r, "n"), num(r, "gap"));
        let f = if g == 1.0 { 1.0 / n } else { 0.0 };
        let p = (n - g) / (n - 1.0);
        let trials = num(r, "rounds_trials").max(1.0);
        vec![
            ("fits", 1.0),
            (
                "fail_rate",
                normal(rng, f, (f * (1.0 - f) / num(r, "requests")).sqrt()),
            ),
            (
                "rgr_rounds",
                normal(
                    rng,
                    analysis::rgr_mean_rounds(n as u32, g as u32),
                    ((1.0 - p) / (p * p) / trials).sqrt(),
                ),
            ),
            ("max_abs_dev", 0.001),
        ]
    }
    fn x3_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let gain = 2.0 + 10.0 * num(r, "alpha");
        match text(r, "policy") {
            "multihash" => vec![("max_mean", normal(rng, 1.5, 0.05))],
            _ => vec![("max_mean", normal(rng, 1.5 * gain, 0.3))],
        }
    }
    fn steady_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        if num(r, "window") >= 10000.0 {
            vec![("hot_in_band", 1.0), ("in_band", 1.0)]
        } else {
            vec![
                ("hot_in_band", (normal(rng, 0.2, 0.1)).clamp(0.0, 0.9)),
                ("in_band", 0.98),
            ]
        }
    }
    fn flash_target(r: &SummaryRow) -> f64 {
        let pmf0 = Law::Zipf {
            alpha: num(r, "alpha"),
        }
        .pmf(num(r, "files") as usize)
        .map_or(f64::NAN, |p| p[0]);
        let lambda = num(r, "flash") * pmf0 * num(r, "load") * num(r, "nodes");
        f64::from(analysis::steady_replicas(lambda, num(r, "c_high")))
    }
    fn x4_right(r: &SummaryRow, _: u64, _: &mut Rng) -> V {
        let (h, start, end) = (
            num(r, "horizon"),
            num(r, "flash_start"),
            num(r, "flash_end"),
        );
        let target = flash_target(r);
        let base = (target / num(r, "flash")).ceil();
        let at = |t: f64| match text(r, "growth") {
            "one" => (t + 1.0).min(target),
            _ if t <= start => base,
            _ => target,
        };
        let top = if h <= end {
            at(h)
        } else {
            (at(end) - (h - end)).max(base)
        };
        let load = if text(r, "growth") == "one" && h > start && h <= end {
            2.0
        } else {
            0.45
        };
        vec![
            ("top_replicas", top),
            ("top_replica_load", load),
            ("prefix_breaks", 0.0),
            ("home_missing", 0.0),
        ]
    }
    fn x5_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let p = 0.01 * num(r, "fail_fraction");
        let n = num(r, "load") * num(r, "nodes") * num(r, "window");
        let below = 8000.0;
        vec![
            ("predicted_failure_after", p),
            (
                "failure_rate_after",
                normal(rng, p, (p * (1.0 - p) / n).sqrt()),
            ),
            ("repair_rounds", 5.0),
            ("below_gap_served", normal(rng, below, below.sqrt())),
            ("below_gap_expected", below),
            ("below_gap_uniform", 0.8 * below),
        ]
    }
    fn x6_right(r: &SummaryRow, _: u64, rng: &mut Rng) -> V {
        let n = num(r, "nodes");
        let e = 7.5 - 0.5 * n.ln();
        vec![
            ("chord_hops", normal(rng, 0.5 * n.log2(), 0.05)),
            ("probes_per_request", normal(rng, e, 0.004)),
            ("probes_expected", e),
            ("probes_se", 0.004),
            ("messages_per_replication", 0.5 * n.ln()),
            ("replication_formula", 0.5 * n.ln()),
            ("repair_messages_per_round", 0.8 * n),
            ("repair_formula", 0.8 * n),
            ("create_refused", 2.0 * n),
            ("duplicate_replicas", 0.0),
        ]
    }
    vec![
        f(
            "mh-x1",
            "mh.rbs-uniform",
            x1_right,
            vec![("RBS favours the lowest index in one run", |r, rep, rng| {
                let mut v = x1_right(r, rep, rng);
                if rep == 1 && r.cell == 3 {
                    set(&mut v, "fits", 0.0);
                    set(&mut v, "chi2", 90.0);
                }
                v
            })],
        ),
        f(
            "mh-x1",
            "mh.rbs-probes",
            x1_right,
            vec![("an extra probe 5% of the time", |r, rep, rng| {
                tweak(r, rep, rng, x1_right, "probes_mean", |_, x| x + 0.05)
            })],
        ),
        f(
            "mh-x1",
            "mh.rbs-variance",
            x1_right,
            vec![("variance 3% high", |r, rep, rng| {
                tweak(r, rep, rng, x1_right, "probes_var", |_, x| x * 1.03)
            })],
        ),
        f(
            "mh-gaps",
            "mh.gap-single",
            gaps_right,
            vec![
                ("failure 1.3 / n at g = 1", |r, rep, rng| {
                    tweak(r, rep, rng, gaps_right, "fail_rate", |r, x| {
                        if num(r, "gap") == 1.0 {
                            x + 0.3 / num(r, "n")
                        } else {
                            x
                        }
                    })
                }),
                ("served index skewed in one run", |r, rep, rng| {
                    let mut v = gaps_right(r, rep, rng);
                    if rep == 0 && r.cell == 5 {
                        set(&mut v, "fits", 0.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "mh-gaps",
            "mh.rgr-rounds",
            gaps_right,
            vec![("rounds n / (n - g) (probing [1, i])", |r, rep, rng| {
                tweak(r, rep, rng, gaps_right, "rgr_rounds", |r, x| {
                    let (n, g) = (num(r, "n"), num(r, "gap"));
                    x - (n - 1.0) / (n - g) + n / (n - g)
                })
            })],
        ),
        f(
            "mh-multigap",
            "mh.gap-multi",
            |_, _, _| vec![("fits", 1.0)],
            vec![("one run off the recursion", |r, rep, _| {
                vec![("fits", if rep == 2 && r.cell == 7 { 0.0 } else { 1.0 })]
            })],
        ),
        f(
            "mh-x3",
            "mh.balance-gain",
            x3_right,
            vec![
                ("replication does not balance", |r, rep, rng| {
                    tweak(r, rep, rng, x3_right, "max_mean", |r, x| {
                        if text(r, "policy") == "multihash" {
                            x * (2.0 + 10.0 * num(r, "alpha"))
                        } else {
                            x
                        }
                    })
                }),
                ("the gain does not grow with alpha", |r, rep, rng| {
                    tweak(r, rep, rng, x3_right, "max_mean", |r, x| {
                        if text(r, "policy") == "multihash" {
                            x
                        } else {
                            x / (2.0 + 10.0 * num(r, "alpha")) * 5.0
                        }
                    })
                }),
            ],
        ),
        f(
            "mh-steady",
            "mh.steady-replicas",
            steady_right,
            vec![
                ("single-hash (one replica each)", |_, _, _| {
                    vec![("hot_in_band", 0.0), ("in_band", 0.97)]
                }),
                (
                    "hot files overshoot at the long window too",
                    |r, rep, rng| tweak(r, rep, rng, steady_right, "hot_in_band", |_, _| 0.7),
                ),
            ],
        ),
        f(
            "mh-steady",
            "mh.steady-noise",
            steady_right,
            vec![("no overshoot with the short window", |_, _, _| {
                vec![("hot_in_band", 1.0), ("in_band", 1.0)]
            })],
        ),
        f(
            "mh-x4",
            "mh.flash-growth",
            x4_right,
            vec![
                (
                    "double and jump add one replica per window",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") != "one" {
                            let (h, start) = (num(r, "horizon"), num(r, "flash_start"));
                            let base = (flash_target(r) / num(r, "flash")).ceil();
                            if h > start {
                                set(
                                    &mut v,
                                    "top_replicas",
                                    (base + (h - start)).min(flash_target(r)),
                                );
                            }
                        }
                        v
                    },
                ),
                (
                    "doubling goes on doubling on noise (4x the target in one run)",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") == "double" && rep == 1 && num(r, "horizon") == 20.0 {
                            set(&mut v, "top_replicas", 4.0 * flash_target(r));
                        }
                        v
                    },
                ),
                (
                    "jump takes the largest estimate twice over (2x the target in one run)",
                    |r, rep, rng| {
                        let mut v = x4_right(r, rep, rng);
                        if text(r, "growth") == "jump" && rep == 0 && num(r, "horizon") == 15.0 {
                            set(&mut v, "top_replicas", 2.0 * flash_target(r));
                        }
                        v
                    },
                ),
            ],
        ),
        f(
            "mh-x4",
            "mh.flash-load",
            x4_right,
            vec![
                (
                    "jump replicates too little (load twice c_high)",
                    |r, rep, rng| {
                        tweak(r, rep, rng, x4_right, "top_replica_load", |r, x| {
                            if text(r, "growth") == "jump" { 1.0 } else { x }
                        })
                    },
                ),
                ("one keeps up", |r, rep, rng| {
                    tweak(r, rep, rng, x4_right, "top_replica_load", |_, _| 0.45)
                }),
            ],
        ),
        f(
            "mh-x4",
            "mh.invariants",
            x4_right,
            vec![
                ("de-replication removes a middle replica", |r, rep, rng| {
                    let mut v = x4_right(r, rep, rng);
                    if rep == 1 && num(r, "horizon") == 40.0 && text(r, "growth") == "jump" {
                        set(&mut v, "prefix_breaks", 3.0);
                    }
                    v
                }),
                ("the home copy removed", |r, rep, rng| {
                    let mut v = x4_right(r, rep, rng);
                    if rep == 0 && num(r, "horizon") == 60.0 && text(r, "growth") == "one" {
                        set(&mut v, "home_missing", 1.0);
                    }
                    v
                }),
            ],
        ),
        f(
            "mh-x4",
            "mh.flash-shrink",
            x4_right,
            vec![("no de-replication", |r, rep, rng| {
                let mut v = x4_right(r, rep, rng);
                if num(r, "horizon") > num(r, "flash_end") && text(r, "growth") != "one" {
                    set(&mut v, "top_replicas", flash_target(r));
                }
                v
            })],
        ),
        f(
            "mh-x5",
            "mh.failure-recursion",
            x5_right,
            vec![("failures 50% above the recursion", |r, rep, rng| {
                tweak(r, rep, rng, x5_right, "failure_rate_after", |_, x| x * 1.5)
            })],
        ),
        f(
            "mh-x5",
            "mh.gap-skew",
            x5_right,
            vec![
                ("requests uniform over surviving replicas", |r, rep, rng| {
                    tweak(r, rep, rng, x5_right, "below_gap_served", |_, _| 6400.0)
                }),
                ("gaps shift more load than the recursion", |r, rep, rng| {
                    tweak(r, rep, rng, x5_right, "below_gap_served", |_, x| x * 1.05)
                }),
            ],
        ),
        f(
            "mh-x5",
            "mh.repair",
            x5_right,
            vec![("one rgr run never repaired", |r, rep, rng| {
                let mut v = x5_right(r, rep, rng);
                if rep == 1 && text(r, "repair") == "rgr" && num(r, "fail_fraction") == 0.4 {
                    set(
                        &mut v,
                        "repair_rounds",
                        num(r, "horizon") - num(r, "fail_at"),
                    );
                }
                v
            })],
        ),
        f(
            "mh-x6",
            "mh.chord-hops",
            x6_right,
            vec![("log2 N hops", |r, rep, rng| {
                tweak(r, rep, rng, x6_right, "chord_hops", |r, _| {
                    num(r, "nodes").log2()
                })
            })],
        ),
        f(
            "mh-x6",
            "mh.x6-probes",
            x6_right,
            vec![
                (
                    "an extra probe in 5% of one run's requests",
                    |r, rep, rng| {
                        let mut v = x6_right(r, rep, rng);
                        if rep == 1 && r.cell == 2 {
                            set(
                                &mut v,
                                "probes_per_request",
                                7.5 - 0.5 * num(r, "nodes").ln() + 0.05,
                            );
                        }
                        v
                    },
                ),
                (
                    "binary search then a pick: log2 K + 1 probes",
                    |r, rep, rng| tweak(r, rep, rng, x6_right, "probes_per_request", |_, _| 11.0),
                ),
            ],
        ),
        f(
            "mh-x6",
            "mh.x6-replication",
            x6_right,
            vec![("a linear search upward in one run", |r, rep, rng| {
                let mut v = x6_right(r, rep, rng);
                if rep == 0 && r.cell == 3 {
                    set(
                        &mut v,
                        "messages_per_replication",
                        0.5 * num(r, "nodes").ln() + 1.5,
                    );
                }
                v
            })],
        ),
        f(
            "mh-x6",
            "mh.x6-repair",
            x6_right,
            vec![("each replica probes every index below it", |r, rep, rng| {
                tweak(
                    r,
                    rep,
                    rng,
                    x6_right,
                    "repair_messages_per_round",
                    |_, x| 3.0 * x,
                )
            })],
        ),
        f(
            "mh-x6",
            "mh.create-once",
            x6_right,
            vec![
                (
                    "no arbiter: a concurrent attempt makes a second copy",
                    |r, rep, rng| {
                        let mut v = x6_right(r, rep, rng);
                        if rep == 2 && r.cell == 0 {
                            set(&mut v, "duplicate_replicas", 1.0);
                        }
                        v
                    },
                ),
                ("no concurrent attempts exercised", |r, rep, rng| {
                    tweak(r, rep, rng, x6_right, "create_refused", |_, _| 0.0)
                }),
            ],
        ),
    ]
}
