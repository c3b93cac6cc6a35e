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
    /// The numbered rules of docs/spec/*.md the claim checks (see `rules.rs`).
    pub rules: &'static [&'static str],
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
    /// `cache`, `gwtw`, `multihash`, `transport` or `steering` (cdnlab's comparison).
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
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/",
                $file
            )),
        )
    };
}

mod cache;
mod gwtw;
mod multihash;
mod report;
mod rules;
mod schedule;
mod stats;
mod steering;
mod transport;
pub mod wrong;

use report::{report, tally, time_table};
use schedule::run_all;
pub(crate) use stats::*;
pub(crate) mod words;

/// Every registered experiment, in report order.
pub fn registry() -> Vec<Reproduction> {
    let mut all = cache::registry();
    all.extend(gwtw::registry());
    all.extend(multihash::registry());
    all.extend(transport::registry());
    all.extend(steering::registry());
    all
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
    /// Run the reproductions of this wrong model ([`wrong::all`]) with its rule in place of
    /// the paper's, and check their claims as usual (they should fail).
    pub wrong: Option<String>,
}

impl ReproducePlan {
    /// The experiments chosen, in registry order (every one without `--only`).
    fn selection(&self) -> Vec<&'static str> {
        let runs = self
            .wrong
            .as_deref()
            .and_then(|w| wrong::find(w).ok())
            .map(|w| w.runs);
        registry()
            .iter()
            .filter(|r| self.only.is_empty() || self.only.iter().any(|o| o == r.id))
            .filter(|r| runs.is_none_or(|runs| runs.contains(&r.id)))
            .map(|r| r.id)
            .collect()
    }

    /// The scale as reports and folders name it: `quick` or `full`, with `+wrong-ID` for a
    /// wrong model's run.
    fn scale(&self) -> String {
        let scale = if self.full { "full" } else { "quick" };
        match &self.wrong {
            Some(w) => format!("{scale}+wrong-{w}"),
            None => scale.to_string(),
        }
    }

    /// The output folder: `--out`, else `out/reproduce` for every experiment and
    /// `out/reproduce-ID+ID...` for an `--only` selection (a short hash of the ids instead when
    /// the name would pass 100 characters).
    pub fn out_dir(&self) -> PathBuf {
        if let Some(out) = &self.out {
            return out.clone();
        }
        if let Some(w) = &self.wrong {
            return PathBuf::from(format!("out/reproduce-wrong-{w}"));
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
    let wrong = a.wrong.as_deref().map(wrong::find).transpose()?;
    if wrong.is_some() && (!a.merge.is_empty() || a.shard.is_some()) {
        return Err(Error::Usage(
            "--wrong runs on one machine: leave out --shard and --merge".into(),
        ));
    }
    let selection = a.selection();
    if selection.is_empty() {
        return Err(Error::Usage(format!(
            "--wrong {} runs none of the --only experiments (it runs {})",
            a.wrong.as_deref().unwrap_or_default(),
            wrong.as_ref().map_or(String::new(), |w| w.runs.join(", "))
        )));
    }
    let shard = a.shard.unwrap_or(Shard::ALL);
    let start = provenance::Start::now();
    let out = a.out_dir();
    let label = a.scale();
    let scale = label.as_str();
    let timing = if a.full { "full" } else { "quick" };
    check_selection(&out, &selection, scale, a.replace)?;
    files::ensure_dir(&out)?;
    // Every scenario is loaded (and checked) before any work.
    // A wrong model's run keeps each original scenario for its claims and relabels the rows.
    let mut chosen = Vec::new();
    let mut originals = Vec::new();
    for rep in all.into_iter().filter(|r| selection.contains(&r.id)) {
        let (path, text) = if a.full { rep.full } else { rep.quick };
        let sc = Scenario::parse(text, Path::new(path))?;
        let dir = out.join(format!("{}-{scale}", rep.id));
        let mut sc = sc;
        let run = match &wrong {
            Some(w) => {
                // A wrong model's report has claims, not figures (the run draws none).
                sc.resolved.plots.clear();
                sc.altered(&format!("wrong-{}", w.id), w.what, w.alter)?
            }
            None => sc.clone(),
        };
        originals.push(sc);
        chosen.push((rep, run, dir));
    }
    let mut failures = Vec::new();
    let (rows, seconds): (Vec<Vec<SummaryRow>>, Vec<f64>) = if a.merge.is_empty() {
        // Re-running into the same folder reuses finished cells: results are a function of
        // the scenario, so they are the same.
        let (rows, seconds, failed) = run_all(&chosen, a, &out, shard, timing)?;
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
    for ((((rep, _, dir), sc), mut rows), seconds) in
        chosen.into_iter().zip(originals).zip(rows).zip(seconds)
    {
        for r in &mut rows {
            if let Some(c) = sc.cells.iter().find(|c| c.index == r.cell) {
                r.params = c.params.values().clone();
            }
        }
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

/// Synthetic results for claim tests: rows for every cell of a scenario, each replication's
/// metrics drawn by a model function, so a claim can be fed a right model and wrong ones.
#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;
