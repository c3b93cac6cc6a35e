//! `cdnlab reproduce`: runs every registered experiment (quick or paper scale), evaluates its
//! claims and writes `report.html` and `claims.json`.
//!
//! A [`Reproduction`] is a scenario (embedded, in two scales) plus a function from its summary to
//! claims. Each paper's issue registers its own here; the runner is shared.

use crate::error::{CliError, Result};
use crate::output::outln;
use crate::output::{self, write_atomic};
use crate::plot::esc;
use crate::provenance;
use crate::runner::{self, Shard, SummaryRow};
use crate::scenario::Scenario;
use clap::Args;
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
    let end_ok = sign * change > cdnlab::stats::t975(df.max(1)) * change_se;
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

/// Arguments of `cdnlab reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Quick scale (the default): every experiment in at most a few minutes on 2 cores.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Paper scale: larger catalogues, more requests and replications.
    #[arg(long)]
    pub full: bool,
    /// Output folder.
    #[arg(long, default_value = "out/reproduce")]
    pub out: PathBuf,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_parser = runner::parse_threads)]
    pub threads: Option<usize>,
    /// Run only the experiments with these ids (repeatable); see --list.
    #[arg(long)]
    pub only: Vec<String>,
    /// List the registered experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Run only shard I of N of every experiment's cells (on one of N machines, each with its
    /// own --out); then `--merge` the N folders to get the claims and the report. Example:
    /// `cdnlab reproduce --shard 0/4 --out out/shard-0`.
    #[arg(long, conflicts_with = "merge")]
    pub shard: Option<String>,
    /// Merge the folders of `--shard` runs into --out, then check the claims and write the
    /// report (as one run would). Example:
    /// `cdnlab reproduce --merge out/shard-0 out/shard-1 --out out/reproduce`.
    #[arg(long, num_args = 1..)]
    pub merge: Vec<PathBuf>,
}

struct Done {
    rep: Reproduction,
    scenario: Scenario,
    dir: PathBuf,
    claims: Vec<Claim>,
}

/// Runs the command.
pub fn run(a: &ReproduceArgs) -> Result<()> {
    let all = registry();
    if a.list {
        for r in &all {
            outln!("{:<14} {:<10} {}", r.id, r.paper, r.title);
        }
        return Ok(());
    }
    if let Some(bad) = a
        .only
        .iter()
        .find(|o| !all.iter().any(|r| r.id == o.as_str()))
    {
        let ids: Vec<&str> = all.iter().map(|r| r.id).collect();
        return Err(CliError::Usage(format!(
            "--only {bad}: no such experiment (registered: {})",
            ids.join(", ")
        )));
    }
    let shard = match &a.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let start = provenance::Start::now();
    output::ensure_dir(&a.out)?;
    let scale = if a.full { "full" } else { "quick" };
    let mut done = Vec::new();
    let mut failures = Vec::new();
    for rep in all
        .into_iter()
        .filter(|r| a.only.is_empty() || a.only.iter().any(|o| o == r.id))
    {
        let (path, text) = if a.full { rep.full } else { rep.quick };
        let sc = Scenario::parse(text, Path::new(path))?;
        let dir = a.out.join(format!("{}-{scale}", rep.id));
        eprintln!(
            "== {} ({}, {scale}): {} cells",
            rep.id,
            rep.paper,
            sc.cells.len()
        );
        let rows = if a.merge.is_empty() {
            // Re-running into the same folder reuses finished cells: results are a function of
            // the scenario, so they are the same.
            let o = runner::run_scenario(&sc, &dir, shard, a.threads, true, true)?;
            failures.extend(
                o.failures
                    .iter()
                    .map(|(c, e)| format!("{} cell {c}: {e}", rep.id)),
            );
            o.rows
        } else {
            let name = format!("{}-{scale}", rep.id);
            let parts: Vec<PathBuf> = a
                .merge
                .iter()
                .map(|d| d.join(&name))
                .filter(|d| d.is_dir())
                .collect();
            if parts.is_empty() {
                return Err(CliError::Failed(format!(
                    "none of the --merge folders holds {name}/ (run every --shard first, with \
                     the same --only and scale)"
                )));
            }
            runner::merge_into(&parts, &dir)?
        };
        if shard != Shard::ALL {
            continue; // claims need every cell: after --merge
        }
        let claims = (rep.claims)(&sc, &rows);
        for c in &claims {
            eprintln!(
                "   {} {}{}: measured {} (expected {})",
                if c.pass { "PASS" } else { "FAIL" },
                c.id,
                match c.kind {
                    Kind::Paper => "",
                    Kind::Finding => " [finding]",
                    Kind::Addition => " [addition]",
                },
                c.measured,
                c.expected
            );
        }
        done.push(Done {
            rep,
            scenario: sc,
            dir,
            claims,
        });
    }
    if shard != Shard::ALL {
        eprintln!(
            "shard {}/{} done in {}; when every shard is done: cdnlab reproduce{} --merge \
             <the {} shard folders> --out DIR",
            shard.index,
            shard.count,
            a.out.display(),
            if a.full { " --full" } else { "" },
            shard.count
        );
        return if failures.is_empty() {
            Ok(())
        } else {
            Err(CliError::Failed(format!(
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
                "cells": d.scenario.cells.len(),
                "dir": d.dir.display().to_string(),
            })
        })
        .collect();
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "provenance": prov,
        "experiments": experiments,
        "claims": claims,
    }))
    .expect("serialisable");
    write_atomic(&a.out.join("claims.json"), json.as_bytes())?;
    write_atomic(
        &a.out.join("report.html"),
        report(&done, scale, &prov)?.as_bytes(),
    )?;
    eprintln!(
        "{}; report: {}",
        tally(&claims),
        a.out.join("report.html").display()
    );
    if !failures.is_empty() {
        return Err(CliError::Failed(format!(
            "some cells failed:\n  {}",
            failures.join("\n  ")
        )));
    }
    Ok(())
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

fn report(done: &[Done], scale: &str, prov: &provenance::Provenance) -> Result<String> {
    let claims: Vec<&Claim> = done.iter().flat_map(|d| d.claims.iter()).collect();
    let mut h = String::new();
    h.push_str(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>cdnlab reproduction report</title>\
         <style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;line-height:1.4}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}\
         .pass{background:#e6f4e6}.fail{background:#fbe3e3}code{background:#f3f3f3}</style></head><body>",
    );
    h.push_str(&format!(
        "<h1>cdnlab reproduction report ({scale} scale)</h1><p>{}.</p><p>Every number here \
         is regenerated by <code>cdnlab reproduce --{scale}</code>; each experiment's folder \
         holds its resolved scenario, per-replication results (with seeds) and the summary with \
         95% confidence intervals. Claims of the papers are what the papers (or the specs' \
         facts) state; findings are results of our reconstruction of the model that the papers \
         do not state; additions are comparisons and variants cdnlab adds. Every claim is a \
         function of the runs with a test that feeds it data from a wrong model and expects it \
         to fail. A note beside a verdict says where it is known to depend on the scale or is \
         an honest divergence.</p>",
        esc(&tally(&claims))
    ));
    let commit = if prov.commit.is_empty() {
        "not built from a git checkout".to_string()
    } else {
        format!("commit <code>{}</code>", esc(&prov.commit))
    };
    h.push_str(&format!(
        "<p class=\"provenance\">Produced by cdnlab {version} ({commit}) with <code>{command}</code>, \
         started {started}, {seconds:.0} s on {threads} threads; machine: {cores} cores, {os}. \
         Seeds: {seeds}.</p>",
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
    for kind in [Kind::Paper, Kind::Finding, Kind::Addition] {
        let of: Vec<&Claim> = claims.iter().copied().filter(|c| c.kind == kind).collect();
        if !of.is_empty() {
            h.push_str(&format!("<h2>{}</h2>", kind.heading()));
            claims_table(&mut h, &of);
        }
    }
    for d in done {
        let r = &d.scenario.resolved;
        h.push_str(&format!(
            "<h2 id=\"{id}\">{title} <small>({id}, paper: {paper})</small></h2><p>{notes}</p>",
            id = d.rep.id,
            title = esc(d.rep.title),
            paper = d.rep.paper,
            notes = d.rep.notes
        ));
        h.push_str(&format!(
            "<p>Experiment <code>{}</code>, seed {}, {} replications per cell, {} cells. \
             Results: <code>{}</code>.</p><table><tr><th>parameter</th><th>value</th></tr>",
            r.experiment,
            r.seed,
            r.replications,
            d.scenario.cells.len(),
            esc(&d.dir.display().to_string())
        ));
        for (k, v) in &r.params {
            h.push_str(&format!(
                "<tr><td>{k}</td><td>{}</td></tr>",
                esc(&v.to_string())
            ));
        }
        for (k, vs) in &r.grid {
            let vals: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            h.push_str(&format!(
                "<tr><td>{k} (swept)</td><td>{}</td></tr>",
                esc(&vals.join(", "))
            ));
        }
        h.push_str("</table>");
        for p in &r.plots {
            let svg = output::read_text(&d.dir.join(p.file_as("svg")))?;
            h.push_str(&format!("<figure>{svg}</figure>"));
        }
        claims_table(&mut h, &d.claims.iter().collect::<Vec<_>>());
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

fn claims_table(h: &mut String, claims: &[&Claim]) {
    h.push_str(
        "<table><tr><th>id</th><th>kind</th><th>claim</th><th>measured</th><th>expected</th>\
         <th>pass</th></tr>",
    );
    for c in claims {
        let note = c
            .note
            .as_deref()
            .map(|n| format!("<br><small>{}</small>", esc(n)))
            .unwrap_or_default();
        h.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{note}</td></tr>",
            if c.pass { "pass" } else { "fail" },
            c.id,
            match c.kind {
                Kind::Paper => "paper",
                Kind::Finding => "finding",
                Kind::Addition => "addition",
            },
            esc(&c.claim),
            esc(&c.measured.to_string()),
            esc(&c.expected),
            if c.pass { "yes" } else { "NO" }
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
