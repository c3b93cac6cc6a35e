//! Running a scenario (`cdnlab run`), merging shards (`cdnlab merge`) and re-drawing a run's
//! figures (`cdnlab plot`): sweep a scenario's cells x replications in parallel and write
//! the results.
//!
//! Layout of an output folder:
//! - `scenario.toml`: the resolved scenario (every parameter, seed, grid, plots), then one
//!   `[[provenance]]` entry per invocation that wrote to the folder. A folder holds the results
//!   of one scenario only; `--resume` and `merge` check the scenario part.
//! - `cells/cell-NNNNNN.csv`: the rows of one finished cell, written atomically as soon as the
//!   cell ends, so an interrupted run loses only the cells in flight and `--resume` skips the rest.
//! - `results.csv`: one row per cell and replication (cell, replication, seed, parameters,
//!   metrics). `summary.csv`: per cell, n and for each metric the mean, standard deviation and
//!   95% CI half-width. Plots declared in the scenario, as SVG.
//!
//! Each replication's RNG is `rng::stream(seed, cell, replication)` and the files are assembled in
//! cell order, so the output is byte-identical whatever the thread count or shard split.

use crate::error::{Error, Result};
use crate::files::{self, write_atomic};
use crate::plot::{self, Format, write_chart};
use crate::scenario::{Cell, Scenario, same, to_value};
use crate::{progress, provenance};
use cdnlab::sim::{Experiment, Value};
use cdnlab::stats::Summary;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A shard: index and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole scenario.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` (`--shard`).
    pub fn parse(s: &str) -> Result<Shard> {
        Self::parse_as(s, crate::error::ArgStyle::Cli)
    }

    /// Parses `I/N`, errors naming the argument in `style`.
    pub fn parse_as(s: &str, style: crate::error::ArgStyle) -> Result<Shard> {
        let bad = |why: &str| Error::Usage(format!("{} {s}: {why}", style.plain("--shard")));
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected I/N, e.g. 0/4"))?;
        let i: u64 = i
            .trim()
            .parse()
            .map_err(|_| bad("I must be a whole number"))?;
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| bad("N must be a whole number"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if i >= n {
            return Err(bad(&format!(
                "I must be below N (shards are numbered 0 to {})",
                n - 1
            )));
        }
        Ok(Shard { index: i, count: n })
    }

    fn owns(&self, cell: u64) -> bool {
        cell % self.count == self.index
    }
}

/// How a sweep went.
#[derive(Debug)]
pub struct Outcome {
    pub cells_run: usize,
    pub failures: Vec<(u64, String)>,
    /// The summary of every cell in the folder (finished earlier or now).
    pub rows: Vec<SummaryRow>,
}

fn cell_path(out: &Path, index: u64) -> PathBuf {
    out.join("cells").join(format!("cell-{index:06}.csv"))
}

/// The results header: cell, replication, seed, parameters (sorted), metrics.
fn header(sc: &Scenario) -> Vec<String> {
    let mut h: Vec<String> = ["cell", "replication", "seed"].map(String::from).into();
    h.extend(
        sc.experiment
            .params()
            .iter()
            .map(|p| p.name.to_string())
            .collect::<std::collections::BTreeSet<_>>(),
    );
    h.extend(sc.experiment.metric_names().iter().map(|m| m.to_string()));
    h
}

fn csv_bytes(rows: impl IntoIterator<Item = Vec<String>>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(&r).expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}

/// Runs the replications of `cell` and writes its file; a failed replication fails the cell
/// (no file, so `--resume` retries it). With a precision target, replications are added in
/// batches until the target holds (see [`cdnlab::stats::Sequential`]); replication r always has
/// the seed of (scenario seed, cell, r), so the rows are the same whatever the threads.
fn run_cell(sc: &Scenario, cell: &Cell, out: &Path) -> std::result::Result<(), String> {
    let mut runs: Vec<Run> = Vec::new();
    match sc.sequential().filter(|_| !sc.fixed_count(cell)) {
        None => runs = replications(sc, cell, 0..sc.resolved.replications)?,
        Some((rule, targets)) => {
            let halfwidths: Vec<_> = targets.iter().map(|t| t.1).collect();
            rule.run(&halfwidths, |n| {
                runs.extend(replications(sc, cell, runs.len() as u64..n)?);
                Ok::<_, String>(
                    targets
                        .iter()
                        .map(|&(m, _)| {
                            Summary::of(&runs.iter().map(|r| r.1[m]).collect::<Vec<_>>())
                        })
                        .collect(),
                )
            })?;
        }
    }
    let rows = std::iter::once(header(sc)).chain(runs.into_iter().map(|r| r.0));
    write_atomic(&cell_path(out, cell.index), &csv_bytes(rows)).map_err(|e| e.to_string())
}

/// One replication: its results row and its metrics.
type Run = (Vec<String>, Vec<f64>);

/// Replications `reps` of `cell`.
fn replications(
    sc: &Scenario,
    cell: &Cell,
    reps: std::ops::Range<u64>,
) -> std::result::Result<Vec<Run>, String> {
    let one = |rep: u64| -> std::result::Result<Run, String> {
        let seed = cdnlab::rng::stream_seed(sc.resolved.seed, cell.index, rep);
        let mut rng = cdnlab::rng::from_seed(seed);
        let metrics = sc
            .experiment
            .run(&cell.params, &mut rng)
            .map_err(|e| format!("replication {rep}: {e}"))?;
        let mut row = vec![cell.index.to_string(), rep.to_string(), seed.to_string()];
        row.extend(cell.params.values().values().map(|v| v.to_string()));
        // `{}` on f64 is the shortest text that parses back to the same bits.
        row.extend(metrics.iter().map(|m| m.to_string()));
        Ok((row, metrics))
    };
    if sc.experiment.timed() {
        // A timed experiment's metric is a time: its replications run one after another on
        // the calling thread, never beside each other.
        reps.map(one).collect()
    } else {
        // Replications run in parallel too (rayon nests), so a few expensive cells still keep
        // every core busy; collecting in order keeps the rows in replication order.
        reps.into_par_iter().map(one).collect()
    }
}

/// A scenario's output folder made ready to receive cells: checked (same scenario; finished
/// cells only with `resume`), its scenario.toml written, the cells still to run listed.
pub struct Prepared<'a> {
    pub sc: &'a Scenario,
    pub out: PathBuf,
    /// Cells of this shard without a file yet.
    pub todo: Vec<&'a Cell>,
    text: String,
    history: Vec<provenance::Provenance>,
    start: provenance::Start,
}

/// Checks `out` for `sc` and writes its scenario.toml (see [`Prepared`]).
pub fn prepare<'a>(
    sc: &'a Scenario,
    out: &Path,
    shard: Shard,
    resume: bool,
) -> Result<Prepared<'a>> {
    let start = provenance::Start::now();
    files::ensure_dir(&out.join("cells"))?;
    files::remove_stale_temporaries(&out.join("cells"))?;
    let text = toml::to_string(&sc.resolved).map_err(|e| Error::Failed(e.to_string()))?;
    let scen_path = out.join("scenario.toml");
    let any_cells = std::fs::read_dir(out.join("cells"))
        .map_err(|e| Error::io(&out.join("cells"), e))?
        .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".csv")));
    // Earlier invocations' provenance, kept when this one resumes the folder.
    let mut history = Vec::new();
    if scen_path.exists() {
        let old = files::read_text(&scen_path)?;
        let (old_scenario, entries) = provenance::split(&old);
        history = entries;
        if old_scenario != text.trim_end_matches('\n') {
            return Err(Error::file(
                out,
                "holds results of a different scenario (its scenario.toml differs); choose \
                 another --out",
            ));
        }
    }
    if any_cells && !resume {
        return Err(Error::file(
            out,
            "already holds results of this scenario; pass --resume to continue it, or choose \
             another --out",
        ));
    }
    let p = Prepared {
        sc,
        out: out.to_path_buf(),
        todo: sc
            .cells
            .iter()
            .filter(|c| shard.owns(c.index) && !(resume && cell_path(out, c.index).exists()))
            .collect(),
        text,
        history,
        start,
    };
    write_atomic(&scen_path, p.with_history().as_bytes())?;
    Ok(p)
}

impl Prepared<'_> {
    fn with_history(&self) -> String {
        if self.history.is_empty() {
            self.text.clone()
        } else {
            format!("{}\n{}", self.text, provenance::toml_entries(&self.history))
        }
    }

    /// Runs cell `c` (of `todo`) and writes its file; returns its wall seconds.
    pub fn run(&self, c: &Cell) -> std::result::Result<f64, String> {
        let t = Instant::now();
        run_cell(self.sc, c, &self.out)?;
        Ok(t.elapsed().as_secs_f64())
    }

    /// After the cells: adds this invocation's provenance (with the threads it had) and writes
    /// results.csv, summary.csv and the plots from every cell file present.
    pub fn finish(mut self, threads: usize) -> Result<Vec<SummaryRow>> {
        self.history.push(self.start.finish(threads));
        write_atomic(
            &self.out.join("scenario.toml"),
            self.with_history().as_bytes(),
        )?;
        finalize(self.sc, &self.out)
    }
}

/// A progress bar over `len` cells (hidden unless `show`), with log lines when standard error
/// is not a terminal.
pub fn cell_bar(len: u64, show: bool, what: String) -> (ProgressBar, Option<progress::LogLines>) {
    let bar = if show {
        ProgressBar::new(len)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} cells, ETA {eta}",
        )
        .expect("valid template"),
    );
    let log = show.then(|| progress::LogLines::start(&bar, what, "cells"));
    (bar, log)
}

/// A pool of `threads` workers (default: one per core).
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| Error::Failed(format!("cannot start worker threads: {e}")))
}

/// Sweeps `sc` into `out`.
pub fn run_scenario(
    sc: &Scenario,
    out: &Path,
    shard: Shard,
    threads: Option<usize>,
    resume: bool,
    show_progress: bool,
) -> Result<Outcome> {
    let p = prepare(sc, out, shard, resume)?;
    // Timed experiments run one cell at a time, whatever --threads says.
    let pool = pool(if sc.experiment.timed() {
        Some(1)
    } else {
        threads
    })?;
    let (bar, log) = cell_bar(p.todo.len() as u64, show_progress, sc.resolved.name.clone());
    let t0 = Instant::now();
    let failures: Vec<(u64, String)> = pool.install(|| {
        p.todo
            .par_iter()
            // After a stop request (crate::stop) the cells not yet started are skipped.
            .filter(|_| !crate::stop::requested())
            .filter_map(|c| {
                let failed = p.run(c).err().map(|e| (c.index, e));
                // Counted when finished, not when started: a long single cell shows 0/1 and
                // "ETA unknown" until it ends, not "1/1 (100%)" for its whole run.
                bar.inc(1);
                failed
            })
            .collect()
    });
    drop(log);
    bar.finish_and_clear();
    crate::stop::check()?;
    let ran: Vec<u64> = p.todo.iter().map(|c| c.index).collect();
    let rows = p.finish(pool.current_num_threads())?;
    if show_progress {
        let runs: usize = rows
            .iter()
            .filter(|r| ran.binary_search(&r.cell).is_ok())
            .map(|r| r.metrics.first().map_or(0, |s| s.n))
            .sum();
        eprintln!(
            "{} cells ({runs} runs) in {:.1} s; {} of {} cells in {}",
            ran.len(),
            t0.elapsed().as_secs_f64(),
            rows.len(),
            sc.cells.len(),
            out.display()
        );
    }
    Ok(Outcome {
        cells_run: ran.len(),
        failures,
        rows,
    })
}

/// A row of `summary.csv`, with the per-replication values it summarises (claims that say
/// "every run" are checked on those, not on the mean).
#[derive(Debug, Clone)]
pub struct SummaryRow {
    pub cell: u64,
    pub params: BTreeMap<String, Value>,
    pub metrics: Vec<Summary>,
    /// Per metric (in the experiment's order), the value of every replication in order.
    pub runs: Vec<Vec<f64>>,
    /// With a precision target: whether the cell met it (else it stopped at the maximum).
    pub target_met: Option<bool>,
}

impl SummaryRow {
    /// Summarises per-replication columns (one per metric of `exp`, in its order), each with
    /// the interval its unit calls for ([`cdnlab::sim::MetricSpec::scale`]).
    pub fn new(
        exp: &dyn Experiment,
        cell: u64,
        params: BTreeMap<String, Value>,
        runs: Vec<Vec<f64>>,
    ) -> SummaryRow {
        SummaryRow {
            cell,
            params,
            metrics: runs
                .iter()
                .zip(exp.metrics())
                .map(|(c, m)| Summary::on(c, m.scale()))
                .collect(),
            runs,
            target_met: None,
        }
    }
}

/// The header of `summary.csv`: cell, parameters (sorted), `runs` (replications summarised),
/// with a precision target `target_met` (true or false), then per metric `_mean`, `_sd`,
/// `_ci95` (the Student-t half-width) and `_lo`, `_hi` (the 95% interval of the metric's scale:
/// Wilson for yes/no outcomes, clipped to [0, 1] for fractions).
fn summary_header(sc: &Scenario) -> Vec<String> {
    let head = header(sc);
    let metrics = sc.experiment.metric_names();
    let mut sh: Vec<String> = vec!["cell".into()];
    sh.extend(head[3..head.len() - metrics.len()].iter().cloned());
    sh.push("runs".into());
    if sc.resolved.precision.is_some() {
        sh.push("target_met".into());
    }
    for m in metrics {
        sh.extend(["mean", "sd", "ci95", "lo", "hi"].map(|x| format!("{m}_{x}")));
    }
    sh
}

/// Reads the cell files present and writes results.csv, summary.csv and the plots. Returns the
/// summary of every cell present.
pub fn finalize(sc: &Scenario, out: &Path) -> Result<Vec<SummaryRow>> {
    let (results, summary_rows) = read_cells(sc, out)?;
    write_outputs(sc, out, results, summary_rows)
}

/// The rows of the cell files present in `out`: results.csv's rows (header first) and every
/// cell's summary.
fn read_cells(sc: &Scenario, out: &Path) -> Result<(Vec<Vec<String>>, Vec<SummaryRow>)> {
    let head = header(sc);
    let metrics = sc.experiment.metric_names();
    let first_metric = head.len() - metrics.len();
    let mut results = vec![head.clone()];
    let mut summary_rows = Vec::new();
    for cell in &sc.cells {
        let path = cell_path(out, cell.index);
        if !path.exists() {
            continue;
        }
        let bytes = files::read(&path)?;
        let mut rdr = csv::Reader::from_reader(&bytes[..]);
        let hdr: Vec<String> = rdr
            .headers()
            .map_err(|e| Error::file(&path, e.to_string()))?
            .iter()
            .map(String::from)
            .collect();
        if hdr != head {
            return Err(Error::file(&path, "columns differ from this scenario's"));
        }
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); metrics.len()];
        for rec in rdr.records() {
            let rec = rec.map_err(|e| Error::file(&path, e.to_string()))?;
            for (m, col) in cols.iter_mut().enumerate() {
                let v = rec.get(first_metric + m).unwrap_or("");
                col.push(v.parse().map_err(|_| {
                    Error::file(
                        &path,
                        format!("metric `{}` = `{v}` is not a number", metrics[m]),
                    )
                })?);
            }
            results.push(rec.iter().map(String::from).collect());
        }
        let mut row = SummaryRow::new(
            sc.experiment,
            cell.index,
            cell.params.values().clone(),
            cols,
        );
        // Recomputed from the rows (the rule's decision is a function of them).
        row.target_met = sc
            .sequential()
            .map(|(_, targets)| targets.iter().all(|&(m, t)| t.met(&row.metrics[m])));
        summary_rows.push(row);
    }
    Ok((results, summary_rows))
}

/// Writes results.csv, summary.csv and the plots.
fn write_outputs(
    sc: &Scenario,
    out: &Path,
    results: Vec<Vec<String>>,
    summary_rows: Vec<SummaryRow>,
) -> Result<Vec<SummaryRow>> {
    write_atomic(&out.join("results.csv"), &csv_bytes(results))?;
    let sh = summary_header(sc);
    let rows = summary_rows.iter().map(|r| {
        let mut row = vec![r.cell.to_string()];
        row.extend(r.params.values().map(|v| v.to_string()));
        row.push(r.metrics.first().map_or(0, |s| s.n).to_string());
        if let Some(met) = r.target_met {
            row.push(met.to_string());
        }
        for s in &r.metrics {
            row.extend([s.mean, s.sd, s.ci95, s.lo, s.hi].map(|x| x.to_string()));
        }
        row
    });
    write_atomic(
        &out.join("summary.csv"),
        &csv_bytes(std::iter::once(sh).chain(rows)),
    )?;
    for p in &sc.resolved.plots {
        draw(sc, p, &summary_rows, out, Format::Both, 2.0)?;
    }
    Ok(summary_rows)
}

/// Draws plot `p` of the rows into `dir`, as SVG and/or PNG (at `scale` x 760 x 480 px);
/// returns the files written.
fn draw(
    sc: &Scenario,
    p: &crate::scenario::PlotSpec,
    rows: &[SummaryRow],
    dir: &Path,
    format: Format,
    scale: f32,
) -> Result<Vec<PathBuf>> {
    write_chart(
        &chart(sc, p, rows),
        &dir.join(p.file_as("svg")),
        format,
        scale,
    )
}

/// What `plot_dir` draws.
#[derive(Debug, Clone)]
pub struct PlotPlan {
    /// A finished run's folder (of `cdnlab run`, `merge`, or an experiment of `reproduce`).
    pub dir: PathBuf,
    /// The x axis: a swept parameter. With `y`, draws one new plot instead of the scenario's.
    pub x: Option<String>,
    /// Metrics on the y axis.
    pub y: Vec<String>,
    /// A swept parameter whose values are drawn as separate lines.
    pub series: Option<String>,
    /// Values for the other swept parameters, as NAME=VALUE.
    pub filter: Vec<String>,
    pub log_x: bool,
    pub log_y: bool,
    /// Title of the new plot.
    pub title: Option<String>,
    /// Label of the y axis (None: the metric with its unit).
    pub y_label: Option<String>,
    pub format: Format,
    /// PNG size as a multiple of 760 x 480 px (1 to 8).
    pub scale: f32,
    /// Folder to write to (None: `dir`).
    pub out: Option<PathBuf>,
    /// File name (without extension) of the new plot.
    pub name: String,
    /// How errors name the arguments.
    pub style: crate::error::ArgStyle,
}

/// `cdnlab plot`: re-draws a finished run's figures from its cell files, without running;
/// returns the files written.
pub fn plot_dir(a: &PlotPlan) -> Result<Vec<PathBuf>> {
    if !(1.0..=8.0).contains(&a.scale) {
        return Err(Error::Usage(format!(
            "{} {}: a number from 1 to 8 is allowed",
            a.style.plain("--scale"),
            a.scale
        )));
    }
    if a.name.is_empty() || a.name.contains(['/', '\\', '.']) {
        return Err(Error::Usage(format!(
            "{} {}: a plain file name without extension is allowed",
            a.style.plain("--name"),
            a.name
        )));
    }
    let path = a.dir.join("scenario.toml");
    if !path.exists() {
        return Err(Error::file(
            &a.dir,
            "has no scenario.toml: give the folder of a finished `cdnlab run`",
        ));
    }
    let text = files::read_text(&path)?;
    let (scenario, _) = provenance::split(&text);
    let sc = Scenario::parse(scenario, &path)?;
    let (_, rows) = read_cells(&sc, &a.dir)?;
    if rows.is_empty() {
        return Err(Error::file(&a.dir, "holds no finished cells"));
    }
    let format = a.format;
    let mut plots = sc.resolved.plots.clone();
    if let Some(x) = &a.x {
        let mut filter = std::collections::BTreeMap::new();
        for w in &a.filter {
            let (k, v) = w.split_once('=').ok_or_else(|| {
                Error::Usage(format!(
                    "{} {w}: NAME=VALUE is allowed",
                    a.style.plain("--where")
                ))
            })?;
            // A number or boolean as TOML reads it; anything else as text.
            let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(v.to_string()));
            filter.insert(k.trim().to_string(), value);
        }
        let p = crate::scenario::PlotSpec {
            file: format!("{}.svg", a.name),
            title: a.title.clone(),
            x: x.clone(),
            y: a.y.clone(),
            series: a.series.clone(),
            log_x: a.log_x,
            log_y: a.log_y,
            y_label: a.y_label.clone(),
            filter,
            marks: Vec::new(),
        };
        crate::scenario::check_plot(&p, &sc.resolved, sc.experiment).map_err(Error::Usage)?;
        plots = vec![p];
    } else {
        if plots.is_empty() {
            return Err(Error::Usage(format!(
                "the scenario declares no plots: give {} and {}",
                a.style.plain("--x"),
                a.style.plain("--y")
            )));
        }
        for p in &mut plots {
            p.log_x |= a.log_x;
            p.log_y |= a.log_y;
            if a.y_label.is_some() {
                p.y_label.clone_from(&a.y_label);
            }
        }
    }
    let out = a.out.clone().unwrap_or_else(|| a.dir.clone());
    files::ensure_dir(&out)?;
    let mut written = Vec::new();
    for p in &plots {
        written.extend(draw(&sc, p, &rows, &out, format, a.scale)?);
    }
    Ok(written)
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// The y axis's label when the plot gives none: the metric with its unit, or the metrics and
/// their common unit.
fn default_y_label(sc: &Scenario, y: &[String]) -> String {
    let specs: Vec<_> = y
        .iter()
        .filter_map(|m| {
            sc.experiment
                .metrics()
                .iter()
                .find(|s| s.name == m.as_str())
        })
        .collect();
    match specs.as_slice() {
        [one] => one.label(),
        [first, rest @ ..] if rest.iter().all(|s| s.unit == first.unit) => {
            format!("{} ({})", y.join(", "), first.unit)
        }
        _ => y.join(", "),
    }
}

/// The chart of plot `p` from the summary rows.
pub fn chart(sc: &Scenario, p: &crate::scenario::PlotSpec, rows: &[SummaryRow]) -> plot::Chart {
    let metrics = sc.experiment.metric_names();
    let keep: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| {
            p.filter.iter().all(|(k, v)| {
                to_value(v).is_some_and(|v| r.params.get(k).is_some_and(|x| same(x, &v)))
            })
        })
        .collect();
    let mut series_vals: Vec<Option<Value>> = Vec::new();
    for r in &keep {
        let s = p.series.as_ref().map(|s| r.params[s].clone());
        if !series_vals.iter().any(|x| match (x, &s) {
            (Some(a), Some(b)) => same(a, b),
            (None, None) => true,
            _ => false,
        }) {
            series_vals.push(s);
        }
    }
    // x is a parameter (a curve), or a metric (a scatter: one point per cell, at the metric's
    // mean; the grid parameters that vary make the points).
    let x_metric = metrics.iter().position(|m| *m == p.x);
    let mut series = Vec::new();
    for sv in &series_vals {
        for (dash, m) in p.y.iter().enumerate() {
            let mi = metrics
                .iter()
                .position(|x| x == m)
                .expect("validated metric");
            let mut points: Vec<(f64, f64, f64, f64)> = keep
                .iter()
                .filter(|r| match (sv, &p.series) {
                    (Some(v), Some(s)) => same(&r.params[s], v),
                    _ => true,
                })
                .map(|r| {
                    let s = &r.metrics[mi];
                    let x = match x_metric {
                        Some(xi) => r.metrics[xi].mean,
                        None => num(&r.params[&p.x]),
                    };
                    (x, s.mean, s.lo, s.hi)
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = match (sv, &p.series) {
                (Some(v), Some(s)) if p.y.len() > 1 => format!("{m}, {s} = {v}"),
                (Some(v), Some(s)) => format!("{s} = {v}"),
                _ => m.clone(),
            };
            series.push(plot::Series {
                label,
                points,
                dash: if x_metric.is_some() {
                    plot::SCATTER
                } else {
                    dash
                },
            });
        }
    }
    plot::Chart {
        title: p.title.clone().unwrap_or_else(|| sc.resolved.name.clone()),
        x_label: sc
            .experiment
            .params()
            .iter()
            .find(|s| s.name == p.x)
            .map(|s| s.label())
            .or_else(|| {
                sc.experiment
                    .metrics()
                    .iter()
                    .find(|m| m.name == p.x)
                    .map(|m| m.label())
            })
            .unwrap_or_else(|| p.x.clone()),
        // Shares and yes/no rates cannot leave 0..1.
        y_bounds: p
            .y
            .iter()
            .all(|y| {
                sc.experiment
                    .metrics()
                    .iter()
                    .any(|m| m.name == y.as_str() && matches!(m.unit, "fraction" | "0/1"))
            })
            .then_some((0.0, 1.0)),
        y_label: p
            .y_label
            .clone()
            .unwrap_or_else(|| default_y_label(sc, &p.y)),
        log_x: p.log_x,
        log_y: p.log_y,
        series,
        marks: p.marks.iter().map(|m| (m.x, m.label.clone())).collect(),
    }
}

/// Turns failed cells into an error after everything else was saved.
pub fn check_failures(o: &Outcome) -> Result<()> {
    if o.failures.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = o
        .failures
        .iter()
        .map(|(c, e)| format!("  cell {c}: {e}"))
        .collect();
    Err(Error::Failed(format!(
        "{} of {} cells failed (the others are saved; --resume retries the failed ones):\n{}",
        o.failures.len(),
        o.cells_run,
        list.join("\n")
    )))
}

/// `cdnlab merge`: checks that the shard folders `dirs` hold one scenario and together every
/// cell, copies the cell files into `out` and writes the same files a single run writes;
/// returns the summary of every cell.
pub fn merge_into(dirs: &[PathBuf], out: &Path) -> Result<Vec<SummaryRow>> {
    let start = provenance::Start::now();
    let first = dirs[0].join("scenario.toml");
    let first_text = files::read_text(&first)?;
    let (text, mut history) = provenance::split(&first_text);
    for d in &dirs[1..] {
        let p = d.join("scenario.toml");
        let other = files::read_text(&p)?;
        let (scenario, entries) = provenance::split(&other);
        history.extend(entries);
        if scenario != text {
            return Err(Error::file(
                &p,
                format!(
                    "a different scenario from {}: cannot merge",
                    first.display()
                ),
            ));
        }
    }
    let sc = Scenario::parse(text, &first)?;
    let mut cells: Vec<Option<(PathBuf, Vec<u8>)>> = vec![None; sc.cells.len()];
    for d in dirs {
        for c in &sc.cells {
            let p = cell_path(d, c.index);
            if !p.exists() {
                continue;
            }
            let bytes = files::read(&p)?;
            match &cells[c.index as usize] {
                Some((q, b)) if *b != bytes => {
                    return Err(Error::file(
                        &p,
                        format!("cell {} differs from {}", c.index, q.display()),
                    ));
                }
                Some(_) => {}
                None => cells[c.index as usize] = Some((p, bytes)),
            }
        }
    }
    let missing: Vec<String> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Error::Failed(format!(
            "{} of {} cells are in none of the folders (cells {}); run the missing shards first",
            missing.len(),
            cells.len(),
            missing
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    files::ensure_dir(&out.join("cells"))?;
    // The shards' provenance, then the merge's own (which ran no cells: 1 thread).
    history.push(start.finish(1));
    let merged = format!("{text}\n\n{}", provenance::toml_entries(&history));
    write_atomic(&out.join("scenario.toml"), merged.as_bytes())?;
    for (i, c) in cells.into_iter().enumerate() {
        let (_, bytes) = c.expect("checked complete");
        write_atomic(&cell_path(out, i as u64), &bytes)?;
    }
    finalize(&sc, out)
}

#[cfg(test)]
mod tests;
