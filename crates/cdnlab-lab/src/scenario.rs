//! Scenario files: which experiment, fixed parameters, a grid to sweep, replications, seed and
//! plots. Loading validates everything before anything runs; errors name the file, the line, the
//! field, the bad value and what is allowed.
//!
//! ```toml
//! experiment = "lru-che"
//! seed = 1
//! replications = 5
//! [params]            # fixed for every cell (omitted ones take the experiment's defaults)
//! objects = 10000
//! [grid]              # swept: the cells are the cartesian product, last key fastest
//! alpha = [0.6, 0.8, 1.0]
//! cache_size = [10, 100, 1000]
//! [[plots]]
//! file = "hit_ratio.svg"
//! x = "cache_size"
//! y = ["hit_ratio", "che_hit_ratio"]
//! series = "alpha"
//! log_x = true
//! ```
//!
//! Instead of a fixed count, `[precision]` may ask for a confidence half-width per metric;
//! `replications` is then the most a cell may use (see [`Precision`] and docs/runner.md).

use crate::error::{Error, Result};
use cdnlab::sim::{self, Experiment, Params, Value};
use cdnlab::stats::{HalfWidth, Sequential};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// Most cells x replications a scenario may expand to.
pub const MAX_RUNS: u64 = 10_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    description: Option<String>,
    experiment: Spanned<String>,
    seed: Option<Spanned<i64>>,
    replications: Option<Spanned<i64>>,
    #[serde(default)]
    params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    grid: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<toml::Value>>>>,
    #[serde(default)]
    plots: Vec<Spanned<PlotSpec>>,
    precision: Option<Spanned<RawPrecision>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrecision {
    min_replications: Option<i64>,
    max_replications: Option<i64>,
    batch: Option<i64>,
    #[serde(default)]
    half_width: BTreeMap<String, f64>,
    #[serde(default)]
    relative_half_width: BTreeMap<String, f64>,
    #[serde(default)]
    fixed_where: Vec<BTreeMap<String, toml::Value>>,
}

/// A scenario's precision target: replications are added to a cell, `batch` at a time after
/// the first `min_replications`, until each named metric's 95% confidence half-width is at
/// most its target (absolute, or relative to |mean|) or `replications` (the maximum) are done.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Precision {
    pub min_replications: u64,
    pub batch: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub half_width: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub relative_half_width: BTreeMap<String, f64>,
    /// Cells matching any of these (parameter = value) tables run the maximum: cells whose
    /// claims count runs ("in every run", "in at least one run"), where fewer runs would
    /// weaken the claim whatever the interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_where: Vec<BTreeMap<String, toml::Value>>,
}

/// A plot declared in a scenario: summary means (with 95% CI bars) of `y` against grid
/// parameter `x`, one line per value of `series` (and per metric).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// File name in the output folder, ending in .svg or .png: both are written (the same
    /// stem), the SVG for browsers and the report, the PNG for slides and LaTeX.
    pub file: String,
    #[serde(default)]
    pub title: Option<String>,
    pub x: String,
    pub y: Vec<String>,
    #[serde(default)]
    pub series: Option<String>,
    #[serde(default)]
    pub log_x: bool,
    #[serde(default)]
    pub log_y: bool,
    #[serde(default)]
    pub y_label: Option<String>,
    /// Values for the other grid parameters, when the grid has more than x and series.
    #[serde(default, rename = "where")]
    pub filter: BTreeMap<String, toml::Value>,
    /// Vertical reference lines at x values (a threshold, the end of a claimed range), each
    /// `{ x = 0.5, label = "threshold" }`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<Mark>,
}

/// A vertical reference line of a plot.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

impl PlotSpec {
    /// The file stem with `ext` ("svg" or "png").
    pub fn file_as(&self, ext: &str) -> String {
        let stem = self
            .file
            .strip_suffix(".svg")
            .or_else(|| self.file.strip_suffix(".png"))
            .unwrap_or(&self.file);
        format!("{stem}.{ext}")
    }
}

/// The canonical, fully resolved scenario: written beside the results and compared on
/// `--resume` and `merge`, so results of different scenarios never mix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Resolved {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub experiment: String,
    pub seed: u64,
    pub replications: u64,
    pub params: BTreeMap<String, toml::Value>,
    pub grid: BTreeMap<String, Vec<toml::Value>>,
    /// With a precision target, `replications` is the most a cell may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    #[serde(default)]
    pub plots: Vec<PlotSpec>,
}

/// One point of the grid.
#[derive(Debug, Clone)]
pub struct Cell {
    pub index: u64,
    /// Every parameter of the experiment, resolved.
    pub params: Params,
}

/// A loaded scenario, ready to run.
#[derive(Clone)]
pub struct Scenario {
    pub resolved: Resolved,
    pub experiment: &'static dyn Experiment,
    pub cells: Vec<Cell>,
    /// The cells that run the maximum, when fixed by index rather than by `fixed_where` (an
    /// altered scenario keeps its original's: a wrong model runs as many runs per cell as the
    /// paper's rule, whatever parameters it changes).
    fixed_cells: Option<std::collections::BTreeSet<u64>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Where `offset` lies in a scenario written from a dict ([`Scenario::parse_dict`]), as the
/// dict's keys: `scenario["params"]["objects"]`, `scenario["plots"][0]["x"]`. The text is
/// `toml::to_string`'s: one `key = value` a line under `[table]` or `[[array]]` headers.
fn key_at(text: &str, offset: usize) -> String {
    let upto = &text[..offset.min(text.len())];
    let line_start = upto.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let mut at = String::from("scenario");
    // The nearest header at or above the line, and for `[[plots]]` which one it is.
    let above = &text[..line_start + line.len()];
    if let Some(h) = above.lines().rev().find(|l| l.starts_with('[')) {
        let name = h.trim_matches(|c| c == '[' || c == ']');
        at += &format!("[{name:?}]");
        if h.starts_with("[[") {
            let n = above.lines().filter(|l| *l == h).count();
            at += &format!("[{}]", n - 1);
        }
    }
    if let Some((key, _)) = line.split_once(" = ") {
        at += &format!("[{:?}]", key.trim().trim_matches('"'));
    }
    at
}

/// Converts a TOML scalar to a parameter value.
/// Whether two parameter values are equal (numbers compare as numbers: 1 equals 1.0).
pub fn same(a: &Value, b: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    match (a, b) {
        (Value::Text(x), Value::Text(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        _ => num(a).is_some_and(|x| num(b) == Some(x)),
    }
}

/// Whether `cell` has every (parameter, value) of `table`.
fn matches_where(table: &BTreeMap<String, toml::Value>, cell: &Cell) -> bool {
    table.iter().all(|(k, v)| {
        to_value(v).is_some_and(|v| cell.params.values().get(k).is_some_and(|x| same(x, &v)))
    })
}

pub fn to_value(v: &toml::Value) -> Option<Value> {
    match v {
        toml::Value::Integer(i) => Some(Value::Int(*i)),
        toml::Value::Float(f) => Some(Value::Float(*f)),
        toml::Value::String(s) => Some(Value::Text(s.clone())),
        toml::Value::Boolean(b) => Some(Value::Bool(*b)),
        _ => None,
    }
}

/// Converts a parameter value back to TOML.
pub fn to_toml(v: &Value) -> toml::Value {
    match v {
        Value::Int(i) => toml::Value::Integer(*i),
        Value::Float(f) => toml::Value::Float(*f),
        Value::Text(s) => toml::Value::String(s.clone()),
        Value::Bool(b) => toml::Value::Boolean(*b),
    }
}

impl Scenario {
    /// The stopping rule and its targets (metric index, target), if the scenario states a
    /// precision target.
    pub fn sequential(&self) -> Option<(Sequential, Vec<(usize, HalfWidth)>)> {
        let p = self.resolved.precision.as_ref()?;
        let names = self.experiment.metric_names();
        let index = |m: &String| names.iter().position(|n| n == m).expect("validated metric");
        let targets = p
            .half_width
            .iter()
            .map(|(m, &h)| (index(m), HalfWidth::Absolute(h)))
            .chain(
                p.relative_half_width
                    .iter()
                    .map(|(m, &r)| (index(m), HalfWidth::Relative(r))),
            )
            .collect();
        Some((
            Sequential {
                min: p.min_replications,
                batch: p.batch,
                max: self.resolved.replications,
            },
            targets,
        ))
    }

    /// Whether `cell` runs the maximum whatever its interval (it matches a table of the
    /// precision target's `fixed_where`).
    pub fn fixed_count(&self, cell: &Cell) -> bool {
        if let Some(fixed) = &self.fixed_cells {
            return fixed.contains(&cell.index);
        }
        self.resolved
            .precision
            .as_ref()
            .is_some_and(|p| p.fixed_where.iter().any(|w| matches_where(w, cell)))
    }

    /// The same scenario with every cell's parameters changed by `alter` (re-validated, and
    /// checked by the experiment as on load), named `NAME+tag` so that its results never mix
    /// with the unaltered scenario's on `--resume`, with `what` added to its description and
    /// without figures. Seeds are unchanged, so each altered cell draws what the original drew.
    pub fn altered(
        &self,
        tag: &str,
        what: &str,
        alter: impl Fn(&mut BTreeMap<String, Value>),
    ) -> Result<Scenario> {
        let exp = self.experiment;
        let mut cells = Vec::with_capacity(self.cells.len());
        for c in &self.cells {
            let mut given = c.params.values().clone();
            alter(&mut given);
            let params = Params::resolve(exp.params(), &given)?;
            exp.check(&params)?;
            cells.push(Cell {
                index: c.index,
                params,
            });
        }
        let mut resolved = self.resolved.clone();
        resolved.name = format!("{}+{tag}", resolved.name);
        resolved.description = format!("{} [{tag}: {what}]", resolved.description);
        resolved.plots.clear();
        let fixed_cells = Some(
            self.cells
                .iter()
                .filter(|c| self.fixed_count(c))
                .map(|c| c.index)
                .collect(),
        );
        Ok(Scenario {
            resolved,
            experiment: exp,
            cells,
            fixed_cells,
        })
    }

    /// Loads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario> {
        let text = crate::files::read_text(path)?;
        Self::parse(&text, path)
    }

    /// Parses and validates scenario text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario> {
        Self::parse_from(text, path, false)
    }

    /// Parses and validates a scenario given as a dict (Python's `cdnlab.run`), written as TOML
    /// by `toml::to_string`: errors name the dict's keys, not lines of a text never seen.
    pub fn parse_dict(text: &str) -> Result<Scenario> {
        Self::parse_from(text, Path::new("scenario dict"), true)
    }

    fn parse_from(text: &str, path: &Path, dict: bool) -> Result<Scenario> {
        let place = |offset: usize| {
            if dict {
                key_at(text, offset)
            } else {
                format!("line {}", line_of(text, offset))
            }
        };
        let raw: Raw = toml::from_str(text).map_err(|e| match (dict, e.span()) {
            (true, Some(span)) => Error::Usage(format!("{}: {}", place(span.start), e.message())),
            _ => Error::file(path, e.to_string().trim_end().to_string()),
        })?;
        let at = |span: std::ops::Range<usize>, msg: String| {
            if dict {
                Error::Usage(format!("{}: {msg}", place(span.start)))
            } else {
                Error::file(path, format!("{}: {msg}", place(span.start)))
            }
        };
        let exp = sim::find(raw.experiment.get_ref())
            .map_err(|e| at(raw.experiment.span(), e.to_string()))?;
        let seed = match &raw.seed {
            None => 1,
            Some(s) if *s.get_ref() >= 0 => *s.get_ref() as u64,
            Some(s) => {
                return Err(at(
                    s.span(),
                    format!("seed = {}: allowed a whole number >= 0", s.get_ref()),
                ));
            }
        };
        let replications = match &raw.replications {
            None => 3,
            Some(r) if (1..=1_000_000).contains(r.get_ref()) => *r.get_ref() as u64,
            Some(r) => {
                return Err(at(
                    r.span(),
                    format!(
                        "replications = {}: allowed a whole number from 1 to 1000000",
                        r.get_ref()
                    ),
                ));
            }
        };
        let precision = match &raw.precision {
            None => None,
            Some(p) => {
                let bad = |msg: String| at(p.span(), format!("[precision]: {msg}"));
                let q = p.get_ref();
                let max = match (q.max_replications, &raw.replications) {
                    (Some(m), Some(r)) if m != *r.get_ref() => {
                        return Err(bad(format!(
                            "max_replications = {m} but replications = {}: with a precision \
                             target, replications is the maximum; give one of them",
                            r.get_ref()
                        )));
                    }
                    (Some(m), _) => m,
                    (None, Some(r)) => *r.get_ref(),
                    (None, None) => {
                        return Err(bad(
                            "give max_replications (or replications): the most replications a \
                             cell may use"
                                .into(),
                        ));
                    }
                };
                if !(2..=1_000_000).contains(&max) {
                    return Err(bad(format!(
                        "max_replications = {max}: allowed a whole number from 2 to 1000000"
                    )));
                }
                let min = q.min_replications.unwrap_or(5.min(max));
                if !(2..=max).contains(&min) {
                    return Err(bad(format!(
                        "min_replications = {min}: allowed a whole number from 2 to \
                         max_replications ({max})"
                    )));
                }
                let batch = q.batch.unwrap_or(min);
                if !(1..=max).contains(&batch) {
                    return Err(bad(format!(
                        "batch = {batch}: allowed a whole number from 1 to max_replications ({max})"
                    )));
                }
                if q.half_width.is_empty() && q.relative_half_width.is_empty() {
                    return Err(bad(
                        "name at least one target, e.g. half_width = { hit_ratio = 0.005 } or \
                         relative_half_width = { hit_ratio = 0.01 }"
                            .into(),
                    ));
                }
                for (table, targets) in [
                    ("half_width", &q.half_width),
                    ("relative_half_width", &q.relative_half_width),
                ] {
                    for (m, v) in targets {
                        if !exp.metric_names().contains(&m.as_str()) {
                            return Err(bad(format!(
                                "{table}: unknown metric `{m}` (metrics of `{}`: {})",
                                exp.name(),
                                exp.metric_names().join(", ")
                            )));
                        }
                        if !(v.is_finite() && *v > 0.0) {
                            return Err(bad(format!(
                                "{table}.{m} = {v}: allowed a number above 0"
                            )));
                        }
                    }
                }
                Some((
                    max as u64,
                    Precision {
                        min_replications: min as u64,
                        batch: batch as u64,
                        half_width: q.half_width.clone(),
                        relative_half_width: q.relative_half_width.clone(),
                        fixed_where: q.fixed_where.clone(),
                    },
                ))
            }
        };
        let (replications, precision) = match precision {
            Some((max, p)) => (max, Some(p)),
            None => (replications, None),
        };
        let known = |k: &Spanned<String>| -> Result<()> {
            if exp.params().iter().any(|s| s.name == k.get_ref()) {
                Ok(())
            } else {
                let names: Vec<_> = exp.params().iter().map(|s| s.name).collect();
                Err(at(
                    k.span(),
                    format!(
                        "unknown parameter `{}` for experiment `{}` (allowed: {})",
                        k.get_ref(),
                        exp.name(),
                        names.join(", ")
                    ),
                ))
            }
        };
        let scalar = |k: &str, v: &Spanned<toml::Value>| -> Result<Value> {
            let val = to_value(v.get_ref()).ok_or_else(|| {
                at(
                    v.span(),
                    format!(
                        "`{k}`: {} is not allowed (a number, text or boolean)",
                        v.get_ref()
                    ),
                )
            })?;
            let spec = exp
                .params()
                .iter()
                .find(|s| s.name == k)
                .expect("checked name");
            spec.validate(&val).map_err(|e| at(v.span(), e.to_string()))
        };
        let mut fixed = BTreeMap::new();
        for (k, v) in &raw.params {
            known(k)?;
            fixed.insert(k.get_ref().clone(), scalar(k.get_ref(), v)?);
        }
        let mut grid: Vec<(String, Vec<Value>)> = Vec::new();
        for (k, vs) in &raw.grid {
            known(k)?;
            if fixed.contains_key(k.get_ref()) {
                return Err(at(
                    k.span(),
                    format!("`{}` is in both [params] and [grid]; keep one", k.get_ref()),
                ));
            }
            if vs.get_ref().is_empty() {
                return Err(at(
                    vs.span(),
                    format!("grid `{}` is empty; give at least one value", k.get_ref()),
                ));
            }
            let vals = vs
                .get_ref()
                .iter()
                .map(|v| scalar(k.get_ref(), v))
                .collect::<Result<Vec<_>>>()?;
            grid.push((k.get_ref().clone(), vals));
        }
        let n_cells: u64 = grid.iter().map(|(_, v)| v.len() as u64).product();
        if n_cells.saturating_mul(replications) > MAX_RUNS {
            return Err(Error::file(
                path,
                format!(
                    "{n_cells} cells x {replications} replications is more than the {MAX_RUNS} \
                     runs one scenario may hold; split it"
                ),
            ));
        }
        // Cartesian product, last grid key varying fastest.
        let mut cells = Vec::with_capacity(n_cells as usize);
        for index in 0..n_cells {
            let mut given = fixed.clone();
            let mut rest = index;
            for (k, vals) in grid.iter().rev() {
                given.insert(k.clone(), vals[(rest % vals.len() as u64) as usize].clone());
                rest /= vals.len() as u64;
            }
            let params = Params::resolve(exp.params(), &given)?;
            exp.check(&params).map_err(|e| {
                let point: Vec<String> = grid
                    .iter()
                    .map(|(k, _)| format!("{k} = {}", params.values()[k]))
                    .collect();
                Error::file(path, format!("grid point ({}): {e}", point.join(", ")))
            })?;
            cells.push(Cell { index, params });
        }
        if let Some(p) = &raw.precision {
            for table in &p.get_ref().fixed_where {
                let bad = |msg: String| {
                    at(
                        p.span(),
                        format!("[precision] fixed_where {{ {} }}: {msg}", show(table)),
                    )
                };
                if table.is_empty() {
                    return Err(bad("name at least one parameter, e.g. { k = 2 }".into()));
                }
                if let Some(k) = table
                    .keys()
                    .find(|k| !exp.params().iter().any(|s| s.name == *k))
                {
                    let names: Vec<_> = exp.params().iter().map(|s| s.name).collect();
                    return Err(bad(format!(
                        "unknown parameter `{k}` (allowed: {})",
                        names.join(", ")
                    )));
                }
                if !cells.iter().any(|c| matches_where(table, c)) {
                    return Err(bad("matches no cell of the grid".into()));
                }
            }
        }
        let all = Params::resolve(exp.params(), &fixed)?;
        let resolved = Resolved {
            name: raw.name.clone().unwrap_or_else(|| {
                path.file_stem()
                    .map_or_else(|| exp.name().to_string(), |s| s.to_string_lossy().into())
            }),
            description: raw.description.clone().unwrap_or_default(),
            experiment: exp.name().to_string(),
            seed,
            replications,
            params: all
                .values()
                .iter()
                .filter(|(k, _)| !grid.iter().any(|(g, _)| g == *k))
                .map(|(k, v)| (k.clone(), to_toml(v)))
                .collect(),
            grid: grid
                .iter()
                .map(|(k, vs)| (k.clone(), vs.iter().map(to_toml).collect()))
                .collect(),
            precision,
            plots: raw.plots.iter().map(|p| p.get_ref().clone()).collect(),
        };
        for p in &raw.plots {
            check_plot(p.get_ref(), &resolved, exp).map_err(|m| at(p.span(), m))?;
        }
        Ok(Scenario {
            resolved,
            experiment: exp,
            cells,
            fixed_cells: None,
        })
    }
}

/// A `where` table as TOML text (`k = 2, load = 0.5`).
fn show(table: &BTreeMap<String, toml::Value>) -> String {
    table
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn check_plot(
    p: &PlotSpec,
    r: &Resolved,
    exp: &dyn Experiment,
) -> std::result::Result<(), String> {
    let grid: Vec<&String> = r.grid.keys().collect();
    // x is a grid parameter (a curve) or a metric (a scatter of the cells).
    let scatter = exp.metric_names().contains(&p.x.as_str());
    if !r.grid.contains_key(&p.x) && !scatter {
        return Err(format!(
            "plot `{}`: x = `{}` is neither a grid parameter (grid: {}) nor a metric",
            p.file,
            p.x,
            grid.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(v) = r
        .grid
        .get(&p.x)
        .into_iter()
        .flatten()
        .find(|v| !matches!(v, toml::Value::Integer(_) | toml::Value::Float(_)))
    {
        return Err(format!(
            "plot `{}`: x = `{}` takes the value {v}; an x axis needs numbers",
            p.file, p.x
        ));
    }
    if let Some(s) = &p.series
        && (!r.grid.contains_key(s) || s == &p.x)
    {
        return Err(format!(
            "plot `{}`: series = `{s}` must be a grid parameter other than x",
            p.file
        ));
    }
    if p.y.is_empty() {
        return Err(format!("plot `{}`: y lists no metric", p.file));
    }
    if let Some(m) =
        p.y.iter()
            .find(|m| !exp.metric_names().contains(&m.as_str()))
    {
        return Err(format!(
            "plot `{}`: unknown metric `{m}` (metrics of `{}`: {})",
            p.file,
            exp.name(),
            exp.metric_names().join(", ")
        ));
    }
    for g in grid {
        let free = g != &p.x && Some(g) != p.series.as_ref();
        if free && !scatter && r.grid[g].len() > 1 && !p.filter.contains_key(g) {
            return Err(format!(
                "plot `{}`: grid parameter `{g}` varies but is neither x nor series; fix it with \
                 where = {{ {g} = ... }}",
                p.file
            ));
        }
    }
    if let Some(m) = p
        .marks
        .iter()
        .find(|m| !m.x.is_finite() || (p.log_x && m.x <= 0.0))
    {
        return Err(format!(
            "plot `{}`: mark `{}` at x = {}: allowed a finite number{}",
            p.file,
            m.label,
            m.x,
            if p.log_x { " above 0 (log x axis)" } else { "" }
        ));
    }
    let named = p.file.ends_with(".svg") || p.file.ends_with(".png");
    if !named || p.file.len() <= 4 || p.file.contains(['/', '\\']) {
        return Err(format!(
            "plot file `{}`: a plain file name ending in .svg or .png is allowed (both are \
             written)",
            p.file
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
