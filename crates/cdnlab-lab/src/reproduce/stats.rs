//! The statistics the claims share: a row's parameters and metrics, standard errors, critical
//! values (Student's t, Bonferroni over a claim's checks), z-scores, weighted line fits and
//! monotone trends over a sweep.

use super::{Claim, Kind};
use crate::runner::SummaryRow;
use crate::scenario::Scenario;

/// Parameter `key` of row `r` as a number (NaN if it is not one).
pub(crate) fn num(r: &SummaryRow, key: &str) -> f64 {
    match &r.params[key] {
        cdnlab::sim::Value::Int(i) => *i as f64,
        cdnlab::sim::Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// Parameter `key` of row `r` as text ("" if it is not).
pub(crate) fn text<'a>(r: &'a SummaryRow, key: &str) -> &'a str {
    match &r.params[key] {
        cdnlab::sim::Value::Text(t) => t,
        _ => "",
    }
}

/// A claim of `paper`.
pub(crate) fn claim(
    paper: &'static str,
    id: &str,
    text: &str,
    measured: serde_json::Value,
    expected: String,
    pass: bool,
) -> Claim {
    Claim {
        id: id.into(),
        paper,
        kind: Kind::Paper,
        claim: text.into(),
        measured,
        in_words: String::new(),
        expected,
        pass,
        note: None,
        rules: super::rules::rules_of(id),
    }
}

/// A claim of `paper` that must hold in every run: `bad` are the runs (of `runs`, counted as
/// `label`) where it did not, listed in `measured` under `key` beside the run count. It passes
/// when there were runs and none is bad, and its words read "N of M LABEL FAILED".
pub(crate) fn in_every_run<T: serde::Serialize>(
    (paper, id, text): (&'static str, &str, &str),
    expected: &str,
    (runs, label): (usize, &str),
    (key, bad): (&str, &[T]),
    failed: &str,
) -> Claim {
    let mut measured = serde_json::Map::new();
    measured.insert("runs".into(), runs.into());
    measured.insert(key.into(), serde_json::json!(bad));
    claim(
        paper,
        id,
        text,
        measured.into(),
        expected.into(),
        runs > 0 && bad.is_empty(),
    )
    .says(format!(
        "{} {failed}",
        super::words::of(bad.len(), runs, label)
    ))
}

/// The row of `rows` whose text parameter `key` is `value` and that has `r`'s values of the
/// parameters `same`: the other arm of a comparison in `r`'s cell.
pub(crate) fn twin<'a>(
    rows: &'a [SummaryRow],
    r: &SummaryRow,
    (key, value): (&str, &str),
    same: &[&str],
) -> Option<&'a SummaryRow> {
    rows.iter()
        .find(|o| text(o, key) == value && same.iter().all(|k| o.params[*k] == r.params[*k]))
}

/// The value of `name` in every replication of row `r`.
pub(crate) fn runs<'a>(sc: &Scenario, r: &'a SummaryRow, name: &str) -> &'a [f64] {
    &r.runs[metric_index(sc, name)]
}

/// The standard error of the mean of `name` in row `r` (sd / sqrt(runs); NaN with one run).
pub(crate) fn se(sc: &Scenario, r: &SummaryRow, name: &str) -> f64 {
    let s = summary(sc, r, name);
    if s.n < 2 {
        f64::NAN
    } else {
        s.sd / (s.n as f64).sqrt()
    }
}

/// Family-wise false-failure rate of a claim's statistical checks: a claim that compares `tests`
/// means with their expectations fails a correct model at most this often.
pub(crate) const FAMILY_ALPHA: f64 = 1e-3;

/// The two-sided critical value of Student's t with `df` degrees of freedom for one of `tests`
/// simultaneous comparisons (Bonferroni at [`FAMILY_ALPHA`]); the normal one for `df` = 0.
pub(crate) fn critical(df: usize, tests: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    let p = 1.0 - FAMILY_ALPHA / (2.0 * tests.max(1) as f64);
    if df == 0 {
        Normal::new(0.0, 1.0).expect("valid").inverse_cdf(p)
    } else {
        StudentsT::new(0.0, 1.0, df as f64)
            .expect("valid")
            .inverse_cdf(p)
    }
}

/// |measured - expected| / se, with se = 0 giving 0 for an exact match and infinity otherwise.
pub(crate) fn z_score(measured: f64, expected: f64, se: f64) -> f64 {
    let d = (measured - expected).abs();
    if se > 0.0 {
        d / se
    } else if d <= 1e-12 * expected.abs().max(1.0) {
        0.0
    } else {
        f64::INFINITY
    }
}

/// The weighted line fit of metric `y` against `x(row)` over `rows` (points weighted by their
/// standard errors), with the fit rounded for the report.
pub(crate) fn trend(
    sc: &Scenario,
    rows: &[&SummaryRow],
    x: impl Fn(&SummaryRow) -> f64,
    y: &str,
) -> Option<cdnlab::stats::LineFit> {
    let pts: Vec<(f64, f64, f64)> = rows
        .iter()
        .map(|r| {
            let e = se(sc, r, y);
            (x(r), metric(sc, r, y), if e.is_nan() { 0.0 } else { e })
        })
        .collect();
    cdnlab::stats::LineFit::fit(&pts)
}

/// A monotone trend over a whole sweep, for curves that are not straight: the change from the
/// first point to the last lies in the stated direction with 95% confidence (t with the
/// replications' degrees of freedom), and no step between neighbours goes against it beyond
/// its own interval (family-wise 0.001 over the steps). Points are (x, mean, standard error).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Monotone {
    pub ok: bool,
    /// Last minus first, and its standard error.
    pub change: f64,
    pub change_se: f64,
    /// Half-width of the change's 95% interval (Student t with the replications' df).
    pub change_ci95: f64,
    /// The largest step against the direction, in standard errors (0 if none).
    pub worst_reverse_z: f64,
}

/// [`Monotone`] of metric `y` over `rows` sorted by `x`; `rising` gives the direction.
pub(crate) fn monotone(
    sc: &Scenario,
    rows: &[&SummaryRow],
    x: impl Fn(&SummaryRow) -> f64,
    y: &str,
    rising: bool,
) -> Option<Monotone> {
    let mut pts: Vec<(f64, f64, f64, usize)> = rows
        .iter()
        .map(|r| (x(r), metric(sc, r, y), se(sc, r, y), summary(sc, r, y).n))
        .collect();
    if pts.len() < 2 || pts.iter().any(|p| !p.1.is_finite() || p.2.is_nan()) {
        return None;
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sign = if rising { 1.0 } else { -1.0 };
    let df = pts.iter().map(|p| p.3).min().unwrap_or(1).saturating_sub(1);
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    let change = last.1 - first.1;
    let change_se = (first.2.powi(2) + last.2.powi(2)).sqrt();
    let change_ci95 = cdnlab::stats::t975(df.max(1)) * change_se;
    let end_ok = sign * change > change_ci95;
    let step_crit = critical(df, pts.len() - 1);
    let worst_reverse_z = pts
        .windows(2)
        .map(|w| {
            let against = -sign * (w[1].1 - w[0].1);
            let e = (w[0].2.powi(2) + w[1].2.powi(2)).sqrt();
            if against <= 0.0 {
                0.0
            } else if e > 0.0 {
                against / e
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max);
    Some(Monotone {
        ok: end_ok && worst_reverse_z <= step_crit,
        change,
        change_se,
        change_ci95,
        worst_reverse_z,
    })
}

/// A monotone trend as JSON.
pub(crate) fn monotone_json(m: &Option<Monotone>) -> serde_json::Value {
    match m {
        Some(m) => serde_json::json!({
            "first_to_last": m.change, "its_se": m.change_se,
            "largest_step_against_in_se": m.worst_reverse_z, "ok": m.ok,
        }),
        None => serde_json::Value::Null,
    }
}

/// A line fit as JSON: slope with its 95% interval, chi2 and dof.
pub(crate) fn fit_json(f: &Option<cdnlab::stats::LineFit>) -> serde_json::Value {
    match f {
        Some(f) => serde_json::json!({
            "slope": f.slope, "slope_ci95": [f.slope - f.slope_ci95, f.slope + f.slope_ci95],
            "intercept": f.intercept, "chi2": f.chi2, "dof": f.dof,
        }),
        None => serde_json::Value::Null,
    }
}

/// The distinct values of parameter `key` among `rows`, sorted.
pub(crate) fn values_of(rows: &[SummaryRow], key: &str) -> Vec<f64> {
    let mut v: Vec<f64> = rows.iter().map(|r| num(r, key)).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The mean of `name` in summary row `r`.
pub(crate) fn metric(sc: &Scenario, r: &SummaryRow, name: &str) -> f64 {
    summary(sc, r, name).mean
}

/// The summary (mean, sd, 95% interval) of `name` in row `r`.
pub(crate) fn summary<'a>(
    sc: &Scenario,
    r: &'a SummaryRow,
    name: &str,
) -> &'a cdnlab::stats::Summary {
    &r.metrics[metric_index(sc, name)]
}

fn metric_index(sc: &Scenario, name: &str) -> usize {
    sc.experiment
        .metrics()
        .iter()
        .position(|m| m.name == name)
        .expect("registered metric")
}

/// One-sided Fisher exact test that the share of successes in b (`b` = (successes, trials)) is
/// higher than in a: P[X >= b.0] for X hypergeometric with a's and b's trials and successes
/// pooled (conditioning on the margins). 1 when there is nothing to compare.
pub(crate) fn fisher_greater(a: (u64, u64), b: (u64, u64)) -> f64 {
    use statrs::distribution::{DiscreteCDF, Hypergeometric};
    let (total, successes) = (a.1 + b.1, a.0 + b.0);
    if b.0 == 0 || total == 0 {
        return 1.0;
    }
    Hypergeometric::new(total, successes, b.1).map_or(1.0, |h| h.sf(b.0 - 1))
}

/// The runs of row `r` with an optimal state (`feasible` = 1), and how many of those converged:
/// a run without one cannot converge (GWTW-R8), so it is counted apart, never as a failure.
pub(crate) fn converged_of_feasible(sc: &Scenario, r: &SummaryRow) -> (u64, u64) {
    let feasible = runs(sc, r, "feasible");
    let converged = runs(sc, r, "converged");
    let with = feasible.iter().filter(|f| **f == 1.0).count() as u64;
    let done = feasible
        .iter()
        .zip(converged)
        .filter(|(f, c)| **f == 1.0 && **c == 1.0)
        .count() as u64;
    (done, with)
}

/// The median slot of convergence over all runs of row `r`, runs that never converged censored
/// at the horizon (the Kaplan-Meier median: the first slot by which at least half converged):
/// None when more than half are censored (the median is then beyond the horizon).
pub(crate) fn censored_median(sc: &Scenario, r: &SummaryRow) -> Option<f64> {
    let mut slots: Vec<f64> = runs(sc, r, "convergence_slot")
        .iter()
        .zip(runs(sc, r, "converged"))
        .map(|(s, c)| if *c == 1.0 { *s } else { f64::INFINITY })
        .collect();
    if slots.is_empty() {
        return None;
    }
    slots.sort_by(f64::total_cmp);
    // The lower median: it is a converged slot exactly when fewer than half are censored.
    let m = slots[(slots.len() - 1) / 2];
    m.is_finite().then_some(m)
}
