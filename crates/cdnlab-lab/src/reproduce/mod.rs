//! `cdnlab reproduce`: runs every registered experiment (quick or paper scale), evaluates its
//! claims and writes `report.html` and `claims.json`.
//!
//! A [`Reproduction`] is a scenario (embedded, in two scales) plus a function from its summary to
//! claims. Each paper's issue registers its own here; the runner is shared.

use crate::error::{Error, Result};
use crate::files::{self, write_atomic};
use crate::plot::esc;
use crate::provenance;
use crate::runner::{self, Shard, SummaryRow};
use crate::scenario::Scenario;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Whose statement a claim checks; the report shows each kind in its own section and counts
/// only the papers' claims in its headline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Stated by the paper (or its spec's "facts any correct implementation must show").
    Paper,
    /// Found by our reconstruction of the model (the paper does not say it).
    Finding,
    /// Something cdnlab adds: a baseline comparison, a variant, a project target.
    Addition,
}

impl Kind {
    fn heading(self) -> &'static str {
        match self {
            Kind::Paper => "Claims of the papers",
            Kind::Finding => "Findings of the reconstruction",
            Kind::Addition => "cdnlab's own additions",
        }
    }
}

/// One claim checked against a measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub id: String,
    pub paper: &'static str,
    pub kind: Kind,
    pub claim: String,
    pub measured: serde_json::Value,
    /// What was measured, in words, with numbers rounded to their uncertainty (the report
    /// shows this; `measured` keeps full precision).
    pub in_words: String,
    pub expected: String,
    pub pass: bool,
    /// Where the verdict is known to depend on the scale, or is an honest divergence: said
    /// beside the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Claim {
    /// The same claim as a finding of the reconstruction.
    pub fn finding(mut self) -> Claim {
        self.kind = Kind::Finding;
        self
    }

    /// The same claim as one of cdnlab's additions.
    pub fn addition(mut self) -> Claim {
        self.kind = Kind::Addition;
        self
    }

    /// The same claim with its measurement in words (see [`words`]).
    pub fn says(mut self, in_words: String) -> Claim {
        self.in_words = in_words;
        self
    }

    /// The same claim with a note beside its verdict.
    pub fn note(mut self, note: &str) -> Claim {
        self.note = Some(note.into());
        self
    }
}

/// A registered experiment.
pub struct Reproduction {
    /// Short id; output goes to DIR/ID.
    pub id: &'static str,
    /// `cache`, `gwtw`, `multihash` or `transport`.
    pub paper: &'static str,
    pub title: &'static str,
    /// Scenario at quick scale (the default) and at paper scale: (path in the repository, text
    /// embedded at build time, so the binary runs anywhere).
    pub quick: (&'static str, &'static str),
    pub full: (&'static str, &'static str),
    /// What the figures show and how the claims are judged (HTML allowed).
    pub notes: &'static str,
    pub claims: fn(&Scenario, &[SummaryRow]) -> Vec<Claim>,
}

/// A scenario file of `scenarios/`, embedded: (path, text).
macro_rules! scenario {
    ($file:literal) => {
        (
            concat!("scenarios/", $file),
            include_str!(concat!("../../../../scenarios/", $file)),
        )
    };
}

mod cache;
mod gwtw;
mod multihash;
mod transport;
pub(crate) mod words;

/// Every registered experiment, in report order.
pub fn registry() -> Vec<Reproduction> {
    let mut all = cache::registry();
    all.extend(gwtw::registry());
    all.extend(multihash::registry());
    all.extend(transport::registry());
    all
}

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
    }
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

/// What `reproduce` runs.
#[derive(Debug, Clone, Default)]
pub struct ReproducePlan {
    /// Paper scale (larger catalogues, more requests and replications); else quick scale.
    pub full: bool,
    /// Output folder (None: see [`ReproducePlan::out_dir`]).
    pub out: Option<PathBuf>,
    /// Write into `out` even when it holds the report of another selection of experiments or
    /// another scale.
    pub replace: bool,
    /// Worker threads (None: one per core). Results do not depend on it.
    pub threads: Option<usize>,
    /// Run only the experiments with these ids (empty: every one).
    pub only: Vec<String>,
    /// Run only this shard of every experiment's cells (claims and report come with `merge`).
    pub shard: Option<Shard>,
    /// Merge the folders of shard runs into `out`, then check the claims and write the report.
    pub merge: Vec<PathBuf>,
}

impl ReproducePlan {
    /// The experiments chosen, in registry order (every one without `--only`).
    fn selection(&self) -> Vec<&'static str> {
        registry()
            .iter()
            .filter(|r| self.only.is_empty() || self.only.iter().any(|o| o == r.id))
            .map(|r| r.id)
            .collect()
    }

    /// The output folder: `--out`, else `out/reproduce` for every experiment and
    /// `out/reproduce-ID+ID...` for an `--only` selection (a short hash of the ids instead when
    /// the name would pass 100 characters).
    pub fn out_dir(&self) -> PathBuf {
        if let Some(out) = &self.out {
            return out.clone();
        }
        if self.only.is_empty() {
            return PathBuf::from("out/reproduce");
        }
        let ids = self.selection().join("+");
        let name = if ids.len() <= 100 {
            ids
        } else {
            let h = xxhash_rust::xxh64::xxh64(ids.as_bytes(), 0);
            format!("{}-experiments-{:08x}", self.selection().len(), h as u32)
        };
        PathBuf::from(format!("out/reproduce-{name}"))
    }
}

/// Refuses to write into `out` when its claims.json is of another selection of experiments or
/// another scale, unless `replace`: a partial or quick run must not silently replace a full
/// report.
fn check_selection(out: &Path, ids: &[&str], scale: &str, replace: bool) -> Result<()> {
    let path = out.join("claims.json");
    if replace || !path.exists() {
        return Ok(());
    }
    let describe = |ids: &[String], scale: &str| {
        let all = registry().len();
        if ids.len() == all {
            format!("every experiment ({all}), {scale} scale")
        } else {
            format!("{}, {scale} scale", ids.join(", "))
        }
    };
    let ours: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    let theirs = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            let exps = v.get("experiments")?.as_array()?;
            let ids: Option<Vec<String>> = exps
                .iter()
                .map(|e| Some(e.get("id")?.as_str()?.to_string()))
                .collect();
            let scale = exps
                .first()
                .and_then(|e| e.get("scale")?.as_str())
                .unwrap_or(scale)
                .to_string();
            Some((ids?, scale))
        });
    let held = match &theirs {
        Some((t, s)) if *t == ours && s == scale => return Ok(()),
        Some((t, s)) => describe(t, s),
        None => "a report this version cannot read".to_string(),
    };
    Err(Error::Usage(format!(
        "{} holds the report of {held}; this run ({}) would replace it. Choose another --out \
         (without --out, an --only selection writes to a folder of its own), or pass --replace",
        out.display(),
        describe(&ours, scale)
    )))
}

struct Done {
    rep: Reproduction,
    scenario: Scenario,
    dir: PathBuf,
    claims: Vec<Claim>,
    rows: Vec<SummaryRow>,
    /// Seconds this invocation's cells of it took, summed over its cells (cells of every
    /// experiment run side by side, so this is its share of the work, not a stretch of the
    /// clock; cells reused from an earlier run cost nothing).
    seconds: f64,
}

/// Runs the chosen experiments (or merges their shards), checks the claims and writes
/// claims.json and report.html into the plan's output folder.
pub fn reproduce(a: &ReproducePlan) -> Result<()> {
    let all = registry();
    if let Some(bad) = a
        .only
        .iter()
        .find(|o| !all.iter().any(|r| r.id == o.as_str()))
    {
        let ids: Vec<&str> = all.iter().map(|r| r.id).collect();
        return Err(Error::Usage(format!(
            "--only {bad}: no such experiment (registered: {})",
            ids.join(", ")
        )));
    }
    let shard = a.shard.unwrap_or(Shard::ALL);
    let start = provenance::Start::now();
    let out = a.out_dir();
    let scale = if a.full { "full" } else { "quick" };
    check_selection(&out, &a.selection(), scale, a.replace)?;
    files::ensure_dir(&out)?;
    // Every scenario is loaded (and checked) before any work.
    let mut chosen = Vec::new();
    for rep in all
        .into_iter()
        .filter(|r| a.only.is_empty() || a.only.iter().any(|o| o == r.id))
    {
        let (path, text) = if a.full { rep.full } else { rep.quick };
        let sc = Scenario::parse(text, Path::new(path))?;
        let dir = out.join(format!("{}-{scale}", rep.id));
        chosen.push((rep, sc, dir));
    }
    let mut failures = Vec::new();
    let (rows, seconds): (Vec<Vec<SummaryRow>>, Vec<f64>) = if a.merge.is_empty() {
        // Re-running into the same folder reuses finished cells: results are a function of
        // the scenario, so they are the same.
        let (rows, seconds, failed) = run_all(&chosen, a, &out, shard, scale)?;
        failures = failed;
        (rows, seconds)
    } else {
        let mut rows = Vec::new();
        for (rep, _, dir) in &chosen {
            let name = format!("{}-{scale}", rep.id);
            let parts: Vec<PathBuf> = a
                .merge
                .iter()
                .map(|d| d.join(&name))
                .filter(|d| d.is_dir())
                .collect();
            if parts.is_empty() {
                return Err(Error::Failed(format!(
                    "none of the --merge folders holds {name}/ (run every --shard first, with \
                     the same --only and scale)"
                )));
            }
            rows.push(runner::merge_into(&parts, dir)?);
        }
        let n = rows.len();
        (rows, vec![0.0; n])
    };
    let mut done = Vec::new();
    for (((rep, sc, dir), rows), seconds) in chosen.into_iter().zip(rows).zip(seconds) {
        if shard != Shard::ALL {
            continue; // claims need every cell: after --merge
        }
        eprintln!(
            "== {} ({}, {scale}): {} cells",
            rep.id,
            rep.paper,
            sc.cells.len()
        );
        let claims = (rep.claims)(&sc, &rows);
        for c in &claims {
            eprintln!(
                "   {} {}{}: {} (expected {})",
                if c.pass { "PASS" } else { "FAIL" },
                c.id,
                match c.kind {
                    Kind::Paper => "",
                    Kind::Finding => " [finding]",
                    Kind::Addition => " [addition]",
                },
                c.in_words,
                c.expected
            );
        }
        done.push(Done {
            rep,
            scenario: sc,
            dir,
            claims,
            rows,
            seconds,
        });
    }
    if shard != Shard::ALL {
        eprintln!(
            "shard {}/{} done in {}; when every shard is done: cdnlab reproduce{} --merge \
             <the {} shard folders> --out DIR",
            shard.index,
            shard.count,
            out.display(),
            if a.full { " --full" } else { "" },
            shard.count
        );
        return if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::Failed(format!(
                "some cells failed:\n  {}",
                failures.join("\n  ")
            )))
        };
    }
    let claims: Vec<&Claim> = done.iter().flat_map(|d| d.claims.iter()).collect();
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let prov = start.finish(threads);
    let experiments: Vec<_> = done
        .iter()
        .map(|d| {
            serde_json::json!({
                "id": d.rep.id,
                "scale": scale,
                "seed": d.scenario.resolved.seed,
                "replications": d.scenario.resolved.replications,
                "runs": d.runs(),
                "precision": d.scenario.resolved.precision,
                "cells": d.scenario.cells.len(),
                "dir": d.dir.display().to_string(),
                "seconds": d.seconds,
            })
        })
        .collect();
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "provenance": prov,
        "experiments": experiments,
        "claims": claims,
    }))
    .expect("serialisable");
    write_atomic(&out.join("claims.json"), json.as_bytes())?;
    write_atomic(
        &out.join("report.html"),
        report(&done, scale, &prov)?.as_bytes(),
    )?;
    eprintln!("{}", time_table(&done, prov.seconds));
    eprintln!(
        "{}; report: {}",
        tally(&claims),
        out.join("report.html").display()
    );
    if !failures.is_empty() {
        return Err(Error::Failed(format!(
            "some cells failed:\n  {}",
            failures.join("\n  ")
        )));
    }
    Ok(())
}

/// Expected seconds per cell (scale, experiment, cell, seconds), as measured by
/// `bench/reproduce.sh` on a 2-core machine. Only the order in which cells start depends on it,
/// never a result; a stale or missing entry costs time, not correctness.
const EXPECTED: &str = include_str!("../../../../scenarios/expected-seconds.csv");

/// The expected seconds of each (experiment, cell) at `scale`.
fn expected(scale: &str) -> std::collections::HashMap<(String, u64), f64> {
    EXPECTED
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 4 && f[0] == scale)
                .then(|| Some(((f[1].to_string(), f[2].parse().ok()?), f[3].parse().ok()?)))
                .flatten()
        })
        .collect()
}

/// Runs the cells of every chosen experiment in one pool, longest expected first, so both
/// cores stay busy to the end instead of idling at each experiment's tail. Timed experiments
/// (whose metric is a solve time) are one job at the head of the queue: one worker runs their
/// cells one after another, replications in sequence, while the other workers run the rest, so
/// a timed cell never shares its core and no core waits for it. Returns per experiment the
/// summary rows and the seconds its cells took, and the failed cells. Writes
/// `cell-seconds.csv` (what `bench/reproduce.sh` turns into the expected times).
#[allow(clippy::type_complexity)]
fn run_all(
    chosen: &[(Reproduction, Scenario, PathBuf)],
    a: &ReproducePlan,
    out: &Path,
    shard: Shard,
    scale: &str,
) -> Result<(Vec<Vec<SummaryRow>>, Vec<f64>, Vec<String>)> {
    use rayon::prelude::*;
    let prepared: Vec<runner::Prepared> = chosen
        .iter()
        .map(|(_, sc, dir)| runner::prepare(sc, dir, shard, true))
        .collect::<Result<_>>()?;
    let table = &expected(scale);
    let cells: Vec<(usize, &crate::scenario::Cell, bool, Option<f64>)> = prepared
        .iter()
        .enumerate()
        .flat_map(|(e, p)| {
            let (id, timed) = (chosen[e].0.id, p.sc.experiment.timed());
            p.todo
                .iter()
                .map(move |&c| (e, c, timed, table.get(&(id.to_string(), c.index)).copied()))
        })
        .collect();
    let total = cells.len();
    let jobs = schedule(cells);
    eprintln!(
        "== {} experiments ({scale}): {total} cells to run, longest expected first",
        chosen.len()
    );
    let pool = runner::pool(a.threads)?;
    let (bar, log) = runner::cell_bar(total as u64, true, "reproduce".into());
    let mut ran: Vec<(usize, u64, std::result::Result<f64, String>)> = pool.install(|| {
        // par_bridge hands the jobs out in order as workers free up.
        jobs.into_iter()
            .par_bridge()
            .flat_map_iter(|cells| {
                // A timed job runs its cells here, in order; the cells' replications run in
                // sequence too (runner::replications), so this worker steals nothing meanwhile.
                cells
                    .into_iter()
                    // After a stop request (crate::stop) the cells not yet started are skipped.
                    .filter(|_| !crate::stop::requested())
                    .map(|(e, c)| {
                        let r = prepared[e].run(c);
                        bar.inc(1);
                        (e, c.index, r)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    drop(log);
    bar.finish_and_clear();
    crate::stop::check()?;
    ran.sort_by_key(|r| (r.0, r.1));
    let mut seconds = vec![0.0; chosen.len()];
    let mut failures = Vec::new();
    let mut timings = String::from("scale,experiment,cell,seconds\n");
    for (e, cell, r) in &ran {
        match r {
            Ok(t) => {
                seconds[*e] += t;
                timings += &format!("{scale},{},{cell},{t:.3}\n", chosen[*e].0.id);
            }
            Err(m) => failures.push(format!("{} cell {cell}: {m}", chosen[*e].0.id)),
        }
    }
    write_atomic(&out.join("cell-seconds.csv"), timings.as_bytes())?;
    let threads = pool.current_num_threads();
    let rows = prepared
        .into_iter()
        .map(|p| {
            let t = if p.sc.experiment.timed() { 1 } else { threads };
            p.finish(t)
        })
        .collect::<Result<_>>()?;
    Ok((rows, seconds, failures))
}

/// The jobs of [`run_all`] in the order workers take them, from (experiment, cell, timed,
/// expected seconds) in registry order: first one job of every timed cell, in registry order;
/// then one job per other cell, longest expected first, cells without an estimate (they may be
/// long) before all others, ties in registry order.
fn schedule<C>(cells: Vec<(usize, C, bool, Option<f64>)>) -> Vec<Vec<(usize, C)>> {
    let (timed, mut other): (Vec<_>, Vec<_>) = cells.into_iter().partition(|c| c.2);
    // Stable: equal estimates (and the unknown, as infinity) keep registry order.
    other.sort_by(|x, y| {
        let t = |c: &(usize, C, bool, Option<f64>)| c.3.unwrap_or(f64::INFINITY);
        t(y).total_cmp(&t(x))
    });
    let timed: Vec<(usize, C)> = timed.into_iter().map(|(e, c, _, _)| (e, c)).collect();
    (!timed.is_empty())
        .then_some(timed)
        .into_iter()
        .chain(other.into_iter().map(|(e, c, _, _)| vec![(e, c)]))
        .collect()
}

/// Where a run's time went: per experiment the cells, the replications and the seconds its cells
/// took (slowest first), then the total and the wall-clock time of the whole run.
fn time_table(done: &[Done], wall: f64) -> String {
    let mut rows: Vec<&Done> = done.iter().collect();
    rows.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let mut t = format!(
        "{:<18} {:>6} {:>8} {:>12}\n",
        "experiment", "cells", "runs", "cell-seconds"
    );
    for d in &rows {
        t += &format!(
            "{:<18} {:>6} {:>8} {:>12.1}\n",
            d.rep.id,
            d.scenario.cells.len(),
            d.runs(),
            d.seconds
        );
    }
    t += &format!(
        "{:<18} {:>6} {:>8} {:>12.1}\nwall clock {wall:.1} s (cells of all experiments run side by side)",
        "total",
        rows.iter().map(|d| d.scenario.cells.len()).sum::<usize>(),
        rows.iter().map(|d| d.runs()).sum::<usize>(),
        rows.iter().map(|d| d.seconds).sum::<f64>()
    );
    t
}

impl Done {
    /// Replications summarised, over every cell.
    fn runs(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.metrics.first().map_or(0, |s| s.n))
            .sum()
    }

    /// "10 replications", or with a precision target "5 to 40 replications per cell until ...".
    fn replications_in_words(&self) -> String {
        let r = &self.scenario.resolved;
        let Some(p) = &r.precision else {
            return format!("{} replications per cell", r.replications);
        };
        let targets: Vec<String> = p
            .half_width
            .iter()
            .map(|(m, h)| format!("{m} ± {h}"))
            .chain(
                p.relative_half_width
                    .iter()
                    .map(|(m, f)| format!("{m} ± {}%", f * 100.0)),
            )
            .collect();
        let used: Vec<usize> = self
            .rows
            .iter()
            .map(|r| r.metrics.first().map_or(0, |s| s.n))
            .collect();
        let met = self
            .rows
            .iter()
            .filter(|r| r.target_met == Some(true))
            .count();
        format!(
            "{} to {} replications per cell, added {} at a time until the 95% interval is \
             within {} (used {} to {}; target met in {met} of {} cells)",
            p.min_replications,
            r.replications,
            p.batch,
            targets.join(" and "),
            used.iter().min().unwrap_or(&0),
            used.iter().max().unwrap_or(&0),
            used.len()
        )
    }
}

/// "P of N claims of the papers pass; findings F of G; additions A of B".
fn tally(claims: &[&Claim]) -> String {
    let count = |k: Kind| {
        let of: Vec<&&Claim> = claims.iter().filter(|c| c.kind == k).collect();
        (of.iter().filter(|c| c.pass).count(), of.len())
    };
    let (p, n) = count(Kind::Paper);
    let (fp, fln) = count(Kind::Finding);
    let (ap, an) = count(Kind::Addition);
    format!(
        "{p} of {n} claims of the papers pass; findings of the reconstruction: {fp} of {fln} \
         hold; cdnlab's additions: {ap} of {an} hold"
    )
}

/// A paper's name in the report.
fn paper_name(paper: &str) -> &'static str {
    match paper {
        "cache" => "Cache substrate: LRU against the Che approximation",
        "gwtw" => "Go-With-The-Winner server selection",
        "multihash" => "Multi-hash replication in a DHT-based CDN",
        "transport" => "Optimal allocation for streaming (Transportation Problem)",
        _ => "Other",
    }
}

const STYLE: &str = "body{font-family:'DejaVu Sans',sans-serif;max-width:1180px;margin:1.5em auto;\
padding:0 1em;line-height:1.45;color:#222}\
h1{font-size:1.7em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}h3{margin-top:1.6em}\
table{border-collapse:collapse;margin:.8em 0;width:100%}\
td,th{border:1px solid #ccc;padding:4px 7px;text-align:left;vertical-align:top;overflow-wrap:break-word}\
th{background:#f4f4f4}table.claims td{overflow-wrap:anywhere}table.claims{table-layout:fixed;font-size:.92em}\
tr.fail td{background:#fdecea}.pass-mark{color:#1a7f37;font-weight:bold}\
.fail-mark{color:#b3261e;font-weight:bold}small{color:#555}\
code{background:#f3f3f3;overflow-wrap:anywhere}\
details pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8em;max-height:20em;overflow:auto}\
figure{margin:1.2em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.9em;color:#444}nav.toc ul{margin:.2em 0}.num{text-align:right}";

/// A value of a resolved scenario as a person writes it: `web`, `1000`, `0.5`.
fn show_toml(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => words::sig(*f, 6),
        toml::Value::Array(a) => a.iter().map(show_toml).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// A resolved parameter as a person writes it.
fn show_value(v: &cdnlab::sim::Value) -> String {
    match v {
        cdnlab::sim::Value::Float(f) => words::sig(*f, 6),
        other => other.to_string(),
    }
}

fn report(done: &[Done], scale: &str, prov: &provenance::Provenance) -> Result<String> {
    let claims: Vec<(&Claim, &Done)> = done
        .iter()
        .flat_map(|d| d.claims.iter().map(move |c| (c, d)))
        .collect();
    let mut papers: Vec<&str> = done.iter().map(|d| d.rep.paper).collect();
    papers.dedup();
    let mut h = String::new();
    h.push_str(&format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cdnlab reproduction report ({scale} scale)</title><style>{STYLE}</style></head><body>\
         <h1>cdnlab reproduction report ({scale} scale)</h1><p><strong>{}.</strong></p>",
        esc(&tally(&claims.iter().map(|c| c.0).collect::<Vec<_>>()))
    ));
    // Summary per paper.
    h.push_str(
        "<h2 id=\"summary\">Summary by paper</h2><table><tr><th>paper</th>\
         <th class=\"num\">its claims</th><th class=\"num\">findings</th>\
         <th class=\"num\">additions</th><th>experiments</th><th>not holding</th></tr>",
    );
    for paper in &papers {
        let of = |k: Kind| {
            let v: Vec<&Claim> = claims
                .iter()
                .filter(|c| c.0.paper == *paper && c.0.kind == k)
                .map(|c| c.0)
                .collect();
            if v.is_empty() {
                "—".to_string()
            } else {
                format!("{} of {}", v.iter().filter(|c| c.pass).count(), v.len())
            }
        };
        let exps: Vec<String> = done
            .iter()
            .filter(|d| d.rep.paper == *paper)
            .map(|d| format!("<a href=\"#{0}\">{0}</a>", d.rep.id))
            .collect();
        let failing: Vec<String> = claims
            .iter()
            .filter(|c| c.0.paper == *paper && !c.0.pass)
            .map(|c| format!("<a href=\"#claim-{0}\">{0}</a>", esc(&c.0.id)))
            .collect();
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            paper_name(paper),
            of(Kind::Paper),
            of(Kind::Finding),
            of(Kind::Addition),
            exps.join(", "),
            if failing.is_empty() {
                "none".to_string()
            } else {
                failing.join(", ")
            }
        ));
    }
    h.push_str("</table>");
    h.push_str(&format!(
        "<p>Every number here is regenerated by <code>cdnlab reproduce --{scale}</code>; each \
         experiment's folder holds its resolved scenario, per-replication results (with seeds) \
         and the summary with 95% confidence intervals. <em>Claims of the papers</em> are what \
         the papers (or the specs' facts) state; <em>findings</em> are results of our \
         reconstruction of the model that the papers do not state; <em>additions</em> are \
         comparisons and variants cdnlab adds. Every claim is a function of the runs, with a \
         test that feeds it data from a wrong model and expects it to fail. Measurements are \
         rounded to what their uncertainty supports: <code>0.73 ± 0.02</code> is a mean with \
         the half-width of its 95% interval; a value without ± was the same in every run. The \
         full-precision values are in <code>claims.json</code> and under each claim's \
         <em>data</em>. A note under a verdict says where it is known to depend on the scale or \
         is an honest divergence.</p>"
    ));
    // Contents.
    h.push_str(
        "<nav class=\"toc\"><h2 id=\"contents\">Contents</h2><ul>\
         <li><a href=\"#summary\">Summary by paper</a></li>",
    );
    for kind in [Kind::Paper, Kind::Finding, Kind::Addition] {
        if claims.iter().any(|c| c.0.kind == kind) {
            h.push_str(&format!(
                "<li><a href=\"#{}\">{}</a></li>",
                kind_anchor(kind),
                kind.heading()
            ));
        }
    }
    h.push_str("<li><a href=\"#experiments\">Experiments</a><ul>");
    for paper in &papers {
        let exps: Vec<String> = done
            .iter()
            .filter(|d| d.rep.paper == *paper)
            .map(|d| format!("<a href=\"#{}\">{}</a>", d.rep.id, esc(d.rep.title)))
            .collect();
        h.push_str(&format!(
            "<li>{}: {}</li>",
            paper_name(paper),
            exps.join(" · ")
        ));
    }
    h.push_str("</ul></li><li><a href=\"#provenance\">Provenance</a></li></ul></nav>");
    for kind in [Kind::Paper, Kind::Finding, Kind::Addition] {
        let of: Vec<(&Claim, &Done)> = claims
            .iter()
            .copied()
            .filter(|c| c.0.kind == kind)
            .collect();
        if !of.is_empty() {
            h.push_str(&format!(
                "<h2 id=\"{}\">{}</h2>",
                kind_anchor(kind),
                kind.heading()
            ));
            claims_table(&mut h, &of, true);
        }
    }
    h.push_str("<h2 id=\"experiments\">Experiments</h2>");
    let mut figure = 0;
    for d in done {
        experiment_section(&mut h, d, scale, &mut figure)?;
    }
    provenance_section(&mut h, done, prov);
    h.push_str("</body></html>\n");
    Ok(h)
}

fn kind_anchor(kind: Kind) -> &'static str {
    match kind {
        Kind::Paper => "claims",
        Kind::Finding => "findings",
        Kind::Addition => "additions",
    }
}

/// One experiment's section: what it tests, its scale, its parameters, its figures with
/// captions and its claims.
fn experiment_section(h: &mut String, d: &Done, scale: &str, figure: &mut usize) -> Result<()> {
    let r = &d.scenario.resolved;
    let folder = d
        .dir
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    h.push_str(&format!(
        "<h3 id=\"{id}\">{title} <small>({id})</small></h3><p><strong>Paper:</strong> {paper}. \
         <strong>What it tests:</strong> {notes}</p>\
         <p><strong>Scale:</strong> {scale} ({reps}; {cells} cells, seed \
         {seed}); experiment <code>{exp}</code>; results in <code>{folder}/</code> \
         (<a href=\"{folder}/scenario.toml\">scenario.toml</a>, \
         <a href=\"{folder}/summary.csv\">summary.csv</a>).</p>",
        id = d.rep.id,
        title = esc(d.rep.title),
        paper = paper_name(d.rep.paper),
        notes = d.rep.notes,
        reps = esc(&d.replications_in_words()),
        cells = d.scenario.cells.len(),
        seed = r.seed,
        exp = esc(&r.experiment),
        folder = esc(&folder),
    ));
    // Parameters: every one of the experiment's, swept ones with their values.
    h.push_str(
        "<table><colgroup><col style=\"width:16%\"><col style=\"width:30%\"><col></colgroup>\
         <tr><th>parameter</th><th>value</th><th>meaning</th></tr>",
    );
    let first = d.scenario.cells.first().map(|c| c.params.values());
    for spec in d.scenario.experiment.params() {
        let value = if let Some(vs) = r.grid.get(spec.name) {
            format!(
                "<strong>swept:</strong> {}",
                esc(&vs.iter().map(show_toml).collect::<Vec<_>>().join(", "))
            )
        } else if let Some(v) = r.params.get(spec.name) {
            esc(&show_toml(v))
        } else if let Some(v) = first.and_then(|p| p.get(spec.name)) {
            format!("{} <small>(default)</small>", esc(&show_value(v)))
        } else {
            "—".into()
        };
        h.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{value}</td><td>{}</td></tr>",
            spec.name,
            esc(spec.help)
        ));
    }
    h.push_str("</table>");
    let metrics = d.scenario.experiment.metrics();
    for p in &r.plots {
        *figure += 1;
        let what: Vec<String> =
            p.y.iter()
                .map(|y| match metrics.iter().find(|m| m.name == y.as_str()) {
                    Some(m) => format!("{} ({})", esc(m.help), esc(m.unit)),
                    None => esc(y),
                })
                .collect();
        let x_help = d
            .scenario
            .experiment
            .params()
            .iter()
            .find(|s| s.name == p.x)
            .map_or(String::new(), |s| format!(" ({})", esc(s.help)));
        let filter: Vec<String> = p
            .filter
            .iter()
            .map(|(k, v)| format!("{k} = {}", show_toml(v)))
            .collect();
        let svg = format!("{folder}/{}", p.file_as("svg"));
        let png = format!("{folder}/{}", p.file_as("png"));
        // The figure must exist: the report links it.
        if !d.dir.join(p.file_as("svg")).is_file() {
            return Err(Error::Failed(format!(
                "{}: figure {} missing (re-run the experiment)",
                d.rep.id,
                d.dir.join(p.file_as("svg")).display()
            )));
        }
        h.push_str(&format!(
            "<figure><a href=\"{png}\"><img src=\"{svg}\" alt=\"{alt}\"></a>\
             <figcaption><strong>Figure {n}.</strong> {title}: {what} against <code>{x}</code>{x_help}\
             {series}{filter}. Points are means over {reps} with 95% intervals. \
             Files: <a href=\"{svg}\">SVG</a>, <a href=\"{png}\">PNG</a>.</figcaption></figure>",
            alt = esc(p.title.as_deref().unwrap_or(&r.name)),
            n = figure,
            title = esc(p.title.as_deref().unwrap_or(&r.name)),
            what = what.join("; "),
            x = esc(&p.x),
            series = p
                .series
                .as_ref()
                .map_or(String::new(), |s| format!(", one line per <code>{}</code>", esc(s))),
            filter = if filter.is_empty() {
                String::new()
            } else {
                format!(", at {}", esc(&filter.join(", ")))
            },
            reps = match r.precision {
                None => format!("{} replications", r.replications),
                Some(_) => "each cell's replications (per cell below)".into(),
            },
        ));
    }
    if r.precision.is_some() {
        replications_table(h, d);
    }
    if !d.claims.is_empty() {
        h.push_str(&format!(
            "<p><strong>Claims checked by {}:</strong></p>",
            d.rep.id
        ));
        claims_table(
            h,
            &d.claims.iter().map(|c| (c, d)).collect::<Vec<_>>(),
            false,
        );
    }
    Ok(())
}

/// Per cell of an experiment with a precision target: its swept parameters, the replications
/// it needed and whether its target was met.
fn replications_table(h: &mut String, d: &Done) {
    let swept: Vec<&String> = d.scenario.resolved.grid.keys().collect();
    h.push_str(&format!(
        "<details><summary>Replications each cell needed ({})</summary><table><tr>",
        esc(&d.replications_in_words())
    ));
    for k in &swept {
        h.push_str(&format!("<th>{}</th>", esc(k)));
    }
    h.push_str("<th>replications</th><th>target met</th></tr>");
    for r in &d.rows {
        h.push_str("<tr>");
        for k in &swept {
            h.push_str(&format!("<td>{}</td>", esc(&show_value(&r.params[*k]))));
        }
        h.push_str(&format!(
            "<td>{}</td><td>{}</td></tr>",
            r.metrics.first().map_or(0, |s| s.n),
            match r.target_met {
                Some(true) => "yes",
                Some(false) => "<strong>no</strong> (stopped at the maximum)",
                None => "",
            }
        ));
    }
    h.push_str("</table></details>");
}

fn provenance_section(h: &mut String, done: &[Done], prov: &provenance::Provenance) {
    let commit = if prov.commit.is_empty() {
        "not built from a git checkout".to_string()
    } else {
        format!("commit <code>{}</code>", esc(&prov.commit))
    };
    h.push_str(&format!(
        "<h2 id=\"provenance\">Provenance</h2><p class=\"provenance\">Produced by cdnlab \
         {version} ({commit}) with <code>{command}</code>, started {started}, {seconds:.0} s \
         on {threads} threads; machine: {cores} cores, {os}. Results do not depend on the \
         thread count. Seeds: {seeds}.</p>",
        version = esc(&prov.version),
        command = esc(&prov.command.join(" ")),
        started = esc(&prov.started),
        seconds = prov.seconds,
        threads = prov.threads,
        cores = prov.cores,
        os = esc(&prov.os),
        seeds = done
            .iter()
            .map(|d| format!("{} {}", d.rep.id, d.scenario.resolved.seed))
            .collect::<Vec<_>>()
            .join(", "),
    ));
}

/// The claims table: verdict, statement, measurement in words (the JSON folded under it),
/// expectation and the experiment. `anchors` gives each row its `claim-ID` anchor (once per
/// report).
fn claims_table(h: &mut String, claims: &[(&Claim, &Done)], anchors: bool) {
    h.push_str(
        "<table class=\"claims\"><colgroup><col style=\"width:8%\"><col style=\"width:27%\">\
         <col style=\"width:37%\"><col style=\"width:17%\"><col style=\"width:11%\"></colgroup>\
         <tr><th>verdict</th><th>claim</th><th>measured</th><th>expected</th>\
         <th>experiment</th></tr>",
    );
    for (c, d) in claims {
        let note = c
            .note
            .as_deref()
            .map(|n| format!("<br><small><strong>Note:</strong> {}</small>", esc(n)))
            .unwrap_or_default();
        let data = serde_json::to_string_pretty(&c.measured).unwrap_or_default();
        h.push_str(&format!(
            "<tr class=\"{class}\"{anchor}><td>{mark}</td><td>{claim}<br><small>{id} · {kind}\
             </small></td><td>{words}{note}<details><summary>data</summary><pre>{data}</pre>\
             </details></td><td>{expected}</td><td><a href=\"#{exp}\">{exp}</a></td></tr>",
            class = if c.pass { "pass" } else { "fail" },
            anchor = if anchors {
                format!(" id=\"claim-{}\"", esc(&c.id))
            } else {
                String::new()
            },
            mark = if c.pass {
                "<span class=\"pass-mark\">✔ pass</span>"
            } else {
                "<span class=\"fail-mark\">✘ FAIL</span>"
            },
            claim = esc(&c.claim),
            id = esc(&c.id),
            kind = match c.kind {
                Kind::Paper => "paper",
                Kind::Finding => "finding",
                Kind::Addition => "addition",
            },
            words = esc(&c.in_words),
            data = esc(&data),
            expected = esc(&c.expected),
            exp = d.rep.id,
        ));
    }
    h.push_str("</table>");
}

/// Synthetic results for claim tests: rows for every cell of a scenario, each replication's
/// metrics drawn by a model function, so a claim can be fed a right model and wrong ones.
#[cfg(test)]
pub(crate) mod fixture {
    use super::*;
    use cdnlab::rng::Rng;

    /// A model: the metric values of replication `rep` of the cell whose parameters `r` holds
    /// (its `runs` are empty); metrics not named are 0.
    pub type Model = fn(&SummaryRow, u64, &mut Rng) -> Vec<(&'static str, f64)>;

    /// A claim with the model under which it must pass and models under which it must fail.
    pub struct Falsifier {
        /// The reproduction (registry id) whose claim function emits the claim.
        pub rep: &'static str,
        pub claim: &'static str,
        pub right: Model,
        pub wrong: Vec<(&'static str, Model)>,
    }

    /// Sets `name` in a model's output (appends it when absent).
    pub fn set(v: &mut Vec<(&'static str, f64)>, name: &'static str, x: f64) {
        match v.iter_mut().find(|m| m.0 == name) {
            Some(m) => m.1 = x,
            None => v.push((name, x)),
        }
    }

    /// A falsifier of claim `claim` of reproduction `rep`.
    pub fn falsifier(
        rep: &'static str,
        claim: &'static str,
        right: Model,
        wrong: Vec<(&'static str, Model)>,
    ) -> Falsifier {
        Falsifier {
            rep,
            claim,
            right,
            wrong,
        }
    }

    /// The right model's output with metric `name` replaced by `f(cell, value)`.
    pub fn tweak(
        r: &SummaryRow,
        rep: u64,
        rng: &mut Rng,
        right: Model,
        name: &'static str,
        f: fn(&SummaryRow, f64) -> f64,
    ) -> Vec<(&'static str, f64)> {
        let mut v = right(r, rep, rng);
        let x = v.iter().find(|m| m.0 == name).map_or(0.0, |m| m.1);
        set(&mut v, name, f(r, x));
        v
    }

    /// Rows for every cell of `sc`, with the scenario's replications drawn from `model`
    /// (seeded per cell and replication, so the data are fixed).
    pub fn synth(sc: &Scenario, model: Model) -> Vec<SummaryRow> {
        let names = sc.experiment.metric_names();
        sc.cells
            .iter()
            .map(|cell| {
                let probe = SummaryRow::new(cell.index, cell.params.values().clone(), Vec::new());
                let mut cols = vec![Vec::new(); names.len()];
                for rep in 0..sc.resolved.replications {
                    let mut rng =
                        cdnlab::rng::from_seed(cdnlab::rng::stream_seed(99, cell.index, rep));
                    let vals = model(&probe, rep, &mut rng);
                    for (m, name) in names.iter().enumerate() {
                        let v = vals.iter().find(|v| v.0 == *name).map_or(0.0, |v| v.1);
                        cols[m].push(v);
                    }
                    for (name, _) in &vals {
                        assert!(names.contains(name), "model sets unknown metric {name}");
                    }
                }
                SummaryRow::new(cell.index, cell.params.values().clone(), cols)
            })
            .collect()
    }

    /// A normal draw (Box-Muller), for noise in models.
    pub fn normal(rng: &mut Rng, mean: f64, sd: f64) -> f64 {
        use rand::RngExt;
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        mean + sd * (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Every falsifier of every paper.
    pub fn all() -> Vec<Falsifier> {
        let mut v = super::cache::falsifiers();
        v.extend(super::gwtw::falsifiers());
        v.extend(super::multihash::falsifiers());
        v.extend(super::transport::falsifiers());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{Falsifier, synth};
    use super::*;

    #[test]
    fn a_selection_has_a_default_folder_of_its_own() {
        let args = |only: &[&str]| ReproducePlan {
            only: only.iter().map(|s| s.to_string()).collect(),
            ..ReproducePlan::default()
        };
        assert_eq!(args(&[]).out_dir(), Path::new("out/reproduce"));
        // Registry order, whatever the order of --only; a repeated id counts once.
        assert_eq!(
            args(&["gwtw-e8", "cache-che", "gwtw-e8"]).out_dir(),
            Path::new("out/reproduce-cache-che+gwtw-e8")
        );
        let ids: Vec<&str> = registry().iter().map(|r| r.id).collect();
        let long = args(&ids).out_dir();
        let name = long.file_name().unwrap().to_str().unwrap();
        assert!(name.len() < 60, "{name}");
        assert!(name.starts_with(&format!("reproduce-{}-experiments-", ids.len())));
        let mut given = args(&["cache-che"]);
        given.out = Some("elsewhere".into());
        assert_eq!(given.out_dir(), Path::new("elsewhere"));
    }

    /// The pool's order: the timed cells are one job at the head (in registry order), then the
    /// rest longest expected first, unknown estimates first, ties in registry order.
    #[test]
    fn schedule_puts_timed_cells_first_then_longest() {
        // (experiment, cell, timed, expected seconds), in registry order.
        let cells = vec![
            (0, 0, false, Some(5.0)),
            (0, 1, false, None),
            (1, 0, true, Some(200.0)),
            (2, 0, false, Some(50.0)),
            (1, 1, true, None),
            (2, 1, false, Some(5.0)),
            (3, 0, false, None),
        ];
        assert_eq!(
            schedule(cells),
            vec![
                vec![(1, 0), (1, 1)],
                vec![(0, 1)],
                vec![(3, 0)],
                vec![(2, 0)],
                vec![(0, 0)],
                vec![(2, 1)],
            ]
        );
        // Without timed cells no empty job leads.
        assert_eq!(
            schedule(vec![(0, 0, false, Some(1.0)), (0, 1, false, Some(2.0))]),
            vec![vec![(0, 1)], vec![(0, 0)]]
        );
    }

    /// Every registered experiment's scenarios load at both scales, ids are unique and papers are
    /// the four known ones: a registration mistake fails here, not in a user's reproduce run.
    #[test]
    fn registry_is_well_formed() {
        let all = registry();
        let mut ids: Vec<&str> = all.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        for r in &all {
            assert!(
                ["cache", "gwtw", "multihash", "transport"].contains(&r.paper),
                "{}",
                r.id
            );
            for (path, text) in [r.quick, r.full] {
                assert!(Path::new("../..").join(path).exists(), "{path}");
                Scenario::parse(text, Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    /// Critical values against tables: the normal 0.9995 quantile 3.2905, Student's t(9) at
    /// 0.9995 4.7809, and Bonferroni over 10 tests (normal 0.99995: 3.8906).
    #[test]
    fn critical_values() {
        assert!((critical(0, 1) - 3.2905).abs() < 1e-3);
        assert!((critical(9, 1) - 4.7809).abs() < 1e-3);
        assert!((critical(0, 10) - 3.8906).abs() < 1e-3);
    }

    fn verdict(rep: &Reproduction, sc: &Scenario, rows: &[SummaryRow], id: &str) -> Claim {
        (rep.claims)(sc, rows)
            .into_iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("{}: claim {id} missing", rep.id))
    }

    /// The rule of the house: every claim of every reproduction, at both scales, passes on data
    /// from a right model and fails on data from each listed wrong model or doctored result;
    /// with no data at all every claim fails; and no claim lacks a failing-data test.
    #[test]
    fn every_claim_can_fail() {
        let fals = fixture::all();
        let all = registry();
        for f in &fals {
            assert!(
                all.iter().any(|r| r.id == f.rep),
                "falsifier for unknown {}",
                f.rep
            );
            assert!(!f.wrong.is_empty(), "{}: no wrong model", f.claim);
        }
        for rep in &all {
            for (path, text) in [rep.quick, rep.full] {
                let sc = Scenario::parse(text, Path::new(path)).unwrap();
                // A reproduction may be figures only; one with claims emits them all, with
                // or without data.
                let empty = (rep.claims)(&sc, &[]);
                // The same claims with data as without, so that none hides behind "no data"
                // (and every falsifier names one of them).
                let ids = |rows: &[SummaryRow]| -> Vec<String> {
                    (rep.claims)(&sc, rows).into_iter().map(|c| c.id).collect()
                };
                for f in fals.iter().filter(|f| f.rep == rep.id) {
                    assert_eq!(
                        ids(&[]),
                        ids(&synth(&sc, f.right)),
                        "{}: claims differ with and without data",
                        rep.id
                    );
                    assert!(
                        ids(&[]).iter().any(|i| i == f.claim),
                        "{}: no claim {}",
                        rep.id,
                        f.claim
                    );
                }
                for c in &empty {
                    assert!(!c.pass, "{} passes with no data ({path})", c.id);
                    let mine: Vec<&Falsifier> = fals
                        .iter()
                        .filter(|f| f.rep == rep.id && f.claim == c.id)
                        .collect();
                    assert!(!mine.is_empty(), "claim {} has no failing-data test", c.id);
                    for f in mine {
                        let right = verdict(rep, &sc, &synth(&sc, f.right), &c.id);
                        assert!(
                            right.pass,
                            "{} fails on the right model ({path}): measured {}",
                            c.id, right.measured
                        );
                        // The report shows the words: they exist, and no raw float leaks in.
                        for v in [&right, c] {
                            assert!(!v.in_words.is_empty(), "{}: no measurement in words", c.id);
                            assert_eq!(
                                words::overlong_number(&v.in_words),
                                None,
                                "{}: {}",
                                c.id,
                                v.in_words
                            );
                        }
                        for (name, wrong) in &f.wrong {
                            let v = verdict(rep, &sc, &synth(&sc, *wrong), &c.id);
                            assert!(
                                !v.pass,
                                "{} passes on the wrong model `{name}` ({path}): measured {}",
                                c.id, v.measured
                            );
                        }
                    }
                }
            }
        }
    }
}
