//! `rbs`: random binary search (and its comparison variants) on one file with a given set of
//! used indices, against the exact formulas; and random gap removal on one file with one gap.
//! Experiments X1 and X2, and the checks of the serve probabilities with gaps.

use crate::Error;
use crate::Named;
use crate::dht::search::{self, Strategy};
use crate::dht::{analysis, repair};
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use crate::stats;
use rand::RngExt;

/// The experiment.
pub struct RbsExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("k", 1, 1 << 20, 1024, "hash functions K"),
    ParamSpec::int(
        "n",
        1,
        1 << 20,
        8,
        "replicas n_f: indices 1..n used, at most K",
    )
    .unit("used indices"),
    ParamSpec::choice(
        "gaps",
        &["none", "single", "random"],
        "missing indices below n: none, the one at `gap`, or `gap_count` random ones",
    ),
    ParamSpec::int(
        "gap",
        1,
        1 << 20,
        1,
        "the missing index with gaps = single (1..n-1)",
    ),
    ParamSpec::int(
        "gap_count",
        0,
        1 << 20,
        2,
        "missing indices with gaps = random (below n)",
    ),
    ParamSpec::choice("strategy", Strategy::NAMES, "how a request finds a replica"),
    ParamSpec::int("requests", 1, 1_000_000_000, 100_000, "lookups per run"),
    ParamSpec::int(
        "rounds_trials",
        0,
        1_000_000_000,
        10_000,
        "random gap removal: single-gap trials per run (0: skip)",
    ),
    ParamSpec::choice(
        "probe",
        &["random", "neighbour"],
        "which index replica i probes in those trials: random, uniform in [1, i - 1] (RGR, \
         MH-R8); neighbour, i - 1 (the neighbour check, a wrong model for RGR's rounds)",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new("probes_mean", "probes", "mean probes per lookup"),
    MetricSpec::new(
        "probes_var",
        "probes^2",
        "sample variance of the probes per lookup",
    ),
    MetricSpec::new(
        "probes_expected",
        "probes",
        "expected probes from the exact formula (RBS only)",
    ),
    MetricSpec::new(
        "var_expected",
        "probes^2",
        "expected variance (RBS on a prefix only)",
    ),
    MetricSpec::new(
        "chi2",
        "chi-square",
        "chi-square of the served indices against the exact distribution",
    ),
    MetricSpec::new("chi2_bound", "chi-square", "its critical value at 1e-4"),
    MetricSpec::new("fits", "0/1", "1 if chi2 <= chi2_bound"),
    MetricSpec::new("fail_rate", "fraction", "lookups that found no replica"),
    MetricSpec::new("fail_expected", "fraction", "the exact failure probability"),
    MetricSpec::new(
        "max_abs_dev",
        "fraction",
        "largest |measured - exact| share over the served indices",
    ),
    MetricSpec::new(
        "rgr_rounds",
        "rounds",
        "random gap removal: mean rounds until the single gap is found",
    ),
    MetricSpec::new("rgr_expected", "rounds", "the same, exact"),
];

/// Checks that involve several parameters.
fn check(p: &Params) -> Result<(), Error> {
    let (k, n) = (p.int("k"), p.int("n"));
    if n > k {
        return Err(Error::param("n", n, format!("at most k ({k})")));
    }
    if p.text("gaps") == "single" && p.int("gap") >= n {
        return Err(p.refuse(
            "gap",
            format!(
                "from 1 to n - 1 ({}): a gap lies below the top replica",
                n - 1
            ),
        ));
    }
    if p.text("gaps") == "random" && p.int("gap_count") >= n {
        return Err(p.refuse("gap_count", format!("below n ({n}): the top replica stays")));
    }
    Ok(())
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    check(p)?;
    let (k, n) = (p.int("k") as u32, p.int("n") as u32);
    let strategy: Strategy = p.named("strategy")?;
    let mut used: Vec<bool> = (1..=k).map(|i| i <= n).collect();
    match p.text("gaps") {
        "single" => used[p.int("gap") as usize - 1] = false,
        "random" => {
            // Distinct indices below n (the top replica is what makes them gaps).
            let mut pool: Vec<u32> = (1..n).collect();
            for i in 0..p.int("gap_count") as usize {
                let j = rng.random_range(i..pool.len());
                pool.swap(i, j);
                used[pool[i] as usize - 1] = false;
            }
        }
        _ => {}
    }
    let requests = p.int("requests") as u64;
    let mut counts = vec![0u64; k as usize + 1];
    let (mut sum, mut sum2) = (0.0, 0.0);
    for _ in 0..requests {
        let l = search::lookup(strategy, k, n, rng, |i| used[i as usize - 1]);
        counts[l.served.map_or(0, |s| s as usize)] += 1;
        let x = f64::from(l.probes);
        sum += x;
        sum2 += x * x;
    }
    let r = requests as f64;
    let mean = sum / r;
    let var = if requests > 1 {
        (sum2 - sum * sum / r) / (r - 1.0)
    } else {
        f64::NAN
    };
    let prefix = used.iter().take_while(|&&u| u).count() as u32 == n;
    let (dist, probes_expected, var_expected) = if strategy == Strategy::Rbs {
        (
            analysis::serve_distribution(&used),
            analysis::expected_probes_with(&used),
            if prefix {
                analysis::probe_variance(k, n)
            } else {
                f64::NAN
            },
        )
    } else {
        (Vec::new(), f64::NAN, f64::NAN)
    };
    // Chi-square over the cells with positive probability (fail included).
    let (mut chi2, mut bound, mut dev) = (f64::NAN, f64::NAN, f64::NAN);
    if !dist.is_empty() {
        let cells: Vec<usize> = (0..dist.len()).filter(|&j| dist[j] > 0.0).collect();
        let obs: Vec<u64> = cells.iter().map(|&j| counts[j]).collect();
        let exp: Vec<f64> = cells.iter().map(|&j| dist[j] * r).collect();
        chi2 = stats::chi_square(&obs, &exp);
        bound = stats::chi_square_1e4(cells.len().saturating_sub(1));
        dev = (0..dist.len())
            .map(|j| (counts[j] as f64 / r - dist[j]).abs())
            .fold(0.0, f64::max);
    }
    let fail_expected = dist.first().copied().unwrap_or(f64::NAN);
    // Random gap removal on n replicas with the single gap g.
    let trials = p.int("rounds_trials") as u64;
    let (mut rounds, mut rgr_expected) = (f64::NAN, f64::NAN);
    if p.text("gaps") == "single" && trials > 0 && n >= 2 {
        let g = p.int("gap") as u32;
        // The DHT's own repair round (`dht::repair`), on replicas 1..=n without g.
        let held: Vec<u32> = (1..=n).filter(|&i| i != g).collect();
        let mut missing = Vec::new();
        let mut total = 0u64;
        let probe = match p.text("probe") {
            "neighbour" => repair::Probe::Neighbour,
            _ => repair::Probe::Random,
        };
        for _ in 0..trials {
            let mut t = 0u64;
            loop {
                t += 1;
                missing.clear();
                repair::round(&held, probe, rng, |j| j != g, &mut missing);
                if !missing.is_empty() {
                    break;
                }
            }
            total += t;
        }
        rounds = total as f64 / trials as f64;
        rgr_expected = analysis::rgr_mean_rounds(n, g);
    }
    Ok(vec![
        mean,
        var,
        probes_expected,
        var_expected,
        chi2,
        bound,
        f64::from(u8::from(chi2 <= bound)),
        counts[0] as f64 / r,
        fail_expected,
        dev,
        rounds,
        rgr_expected,
    ])
}

crate::sim::experiment! {
    RbsExperiment = "rbs",
    "random binary search on one file (served index, probes, gaps) and random gap removal, against the exact formulas",
    PARAMS, METRICS; check, run
}
