//! `cdnlab reproduce`: runs every registered experiment (quick or paper scale), evaluates its
//! claims and writes `report.html` and `claims.json`.
//!
//! A [`Reproduction`] is a scenario (embedded, in two scales) plus a function from its summary to
//! claims. Each paper's issue registers its own here; the runner is shared.

use crate::error::{CliError, Result};
use crate::output::outln;
use crate::output::{self, write_atomic};
use crate::plot::esc;
use crate::runner::{self, Shard, SummaryRow};
use crate::scenario::Scenario;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One claim checked against a measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub id: String,
    pub paper: &'static str,
    pub claim: String,
    pub measured: serde_json::Value,
    pub expected: String,
    pub pass: bool,
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
        claim: text.into(),
        measured,
        expected,
        pass,
    }
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
    let i = sc
        .experiment
        .metrics()
        .iter()
        .position(|m| *m == name)
        .expect("registered metric");
    &r.metrics[i]
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
        // Re-running into the same folder reuses finished cells: results are a function of the
        // scenario, so they are the same.
        let o = runner::run_scenario(&sc, &dir, Shard::ALL, a.threads, true, true)?;
        failures.extend(
            o.failures
                .iter()
                .map(|(c, e)| format!("{} cell {c}: {e}", rep.id)),
        );
        let claims = (rep.claims)(&sc, &o.rows);
        for c in &claims {
            eprintln!(
                "   {} {}: measured {} (expected {})",
                if c.pass { "PASS" } else { "FAIL" },
                c.id,
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
    let claims: Vec<&Claim> = done.iter().flat_map(|d| d.claims.iter()).collect();
    let json = serde_json::to_string_pretty(&claims).expect("serialisable");
    write_atomic(&a.out.join("claims.json"), json.as_bytes())?;
    write_atomic(&a.out.join("report.html"), report(&done, scale)?.as_bytes())?;
    let passed = claims.iter().filter(|c| c.pass).count();
    eprintln!(
        "{passed} of {} claims pass; report: {}",
        claims.len(),
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

fn report(done: &[Done], scale: &str) -> Result<String> {
    let claims: Vec<&Claim> = done.iter().flat_map(|d| d.claims.iter()).collect();
    let passed = claims.iter().filter(|c| c.pass).count();
    let mut h = String::new();
    h.push_str(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>cdnlab reproduction report</title>\
         <style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;line-height:1.4}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}\
         .pass{background:#e6f4e6}.fail{background:#fbe3e3}code{background:#f3f3f3}</style></head><body>",
    );
    h.push_str(&format!(
        "<h1>cdnlab reproduction report ({scale} scale)</h1><p>{passed} of {} claims pass. \
         Every number here is regenerated by <code>cdnlab reproduce --{scale}</code>; each \
         experiment's folder holds its resolved scenario, per-replication results (with seeds) \
         and the summary with 95% confidence intervals.</p>",
        claims.len()
    ));
    h.push_str("<h2>Claims</h2>");
    claims_table(&mut h, &claims);
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
            let svg = output::read_text(&d.dir.join(&p.file))?;
            h.push_str(&format!("<figure>{svg}</figure>"));
        }
        claims_table(&mut h, &d.claims.iter().collect::<Vec<_>>());
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

fn claims_table(h: &mut String, claims: &[&Claim]) {
    h.push_str(
        "<table><tr><th>id</th><th>claim</th><th>measured</th><th>expected</th><th>pass</th></tr>",
    );
    for c in claims {
        h.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if c.pass { "pass" } else { "fail" },
            c.id,
            esc(&c.claim),
            esc(&c.measured.to_string()),
            esc(&c.expected),
            if c.pass { "yes" } else { "NO" }
        ));
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
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
}
