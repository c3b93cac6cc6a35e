//! Experiments from Python: the registry, scenario runs (`cdnlab run`), the reproduction
//! (`cdnlab reproduce`).

use crate::*;

/// Every experiment a scenario can name, with its parameters and metrics: one dict each.
#[pyfunction]
pub(crate) fn experiments(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    cdnlab::sim::registry()
        .iter()
        .map(|e| {
            let params = e
                .params()
                .iter()
                .map(|p| {
                    dict!(py, "name" => p.name, "help" => p.help, "unit" => p.unit,
                        "allowed" => p.kind.allowed(), "default" => p.default.to_string())
                })
                .collect::<PyResult<Vec<_>>>()?;
            let metrics = e
                .metrics()
                .iter()
                .map(|m| dict!(py, "name" => m.name, "help" => m.help, "unit" => m.unit))
                .collect::<PyResult<Vec<_>>>()?;
            dict!(py, "name" => e.name(), "about" => e.about(), "params" => params,
                "metrics" => metrics)
        })
        .collect()
}

/// Runs a scenario (TOML text; `name` names its file in errors, None for a dict's text, whose
/// errors name the dict's keys) into `out`, as `cdnlab run` does.
/// Returns the number of cells run now.
#[pyfunction]
#[pyo3(signature = (text, name, out, threads = None, shard = None, resume = false, progress = false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_scenario(
    py: Python<'_>,
    text: &str,
    name: Option<&str>,
    out: PathBuf,
    threads: Option<usize>,
    shard: Option<&str>,
    resume: bool,
    progress: bool,
) -> PyResult<usize> {
    check_threads(threads)?;
    let sc = match name {
        Some(name) => scenario::Scenario::parse(text, Path::new(name)),
        None => scenario::Scenario::parse_dict(text),
    }
    .map_err(to_py)?;
    let shard = match shard {
        Some(s) => runner::Shard::parse_as(s, ArgStyle::Python).map_err(to_py)?,
        None => runner::Shard::ALL,
    };
    interruptible(py, || {
        let o = runner::run_scenario(&sc, &out, shard, threads, resume, progress)?;
        runner::check_failures(&o)?;
        Ok(o.cells_run)
    })
}

/// A scenario given as a Python dict written as TOML, the scenario format.
#[pyfunction]
pub(crate) fn scenario_toml(scenario: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = to_toml(scenario, "scenario")?;
    toml::to_string(&v).map_err(|e| CdnlabError::new_err(format!("scenario: {e}")))
}

/// A Python value as TOML: dicts with string keys, lists, strings, booleans, integers and
/// floats, as a scenario file holds; `at` names the place in errors.
fn to_toml(v: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
    let bad = |what: &str| {
        CdnlabError::new_err(format!(
            "{at}: {what} (allowed: a dict of strings, numbers, booleans, lists and dicts, as a \
             scenario file holds; no None)"
        ))
    };
    if v.is_none() {
        return Err(bad("None"));
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        let i: i64 = v.extract().map_err(|_| bad("an integer beyond 64 bits"))?;
        return Ok(toml::Value::Integer(i));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if v.is_instance_of::<PyDict>() {
        let d: Bound<'_, PyDict> = v.extract()?;
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k.extract().map_err(|_| bad("a key that is not a string"))?;
            let x = to_toml(&x, &format!("{at}.{k}"))?;
            t.insert(k, x);
        }
        return Ok(toml::Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.extract()?;
        return items
            .iter()
            .enumerate()
            .map(|(i, x)| to_toml(x, &format!("{at}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(toml::Value::Array);
    }
    let kind = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    Err(bad(&format!("a {kind}")))
}

/// Runs `cdnlab reproduce` into `out` (None: the command's default folder for the selection);
/// returns the path of claims.json.
#[pyfunction]
#[pyo3(signature = (out = None, only = Vec::new(), full = false, threads = None, replace = false))]
pub(crate) fn reproduce(
    py: Python<'_>,
    out: Option<PathBuf>,
    only: Vec<String>,
    full: bool,
    threads: Option<usize>,
    replace: bool,
) -> PyResult<PathBuf> {
    check_threads(threads)?;
    let plan = ReproducePlan {
        full,
        out,
        replace,
        threads,
        only,
        ..ReproducePlan::default()
    };
    interruptible(py, || lab_reproduce::reproduce(&plan))?;
    Ok(plan.out_dir().join("claims.json"))
}

/// The registered reproduction experiments: (id, paper, title).
#[pyfunction]
pub(crate) fn reproductions() -> Vec<(&'static str, &'static str, &'static str)> {
    lab_reproduce::registry()
        .iter()
        .map(|r| (r.id, r.paper, r.title))
        .collect()
}

/// Combines the output folders of sharded runs of one scenario into `out`, as `cdnlab merge`
/// does. Returns the number of cells merged.
#[pyfunction]
pub(crate) fn merge(py: Python<'_>, dirs: Vec<PathBuf>, out: PathBuf) -> PyResult<usize> {
    if dirs.is_empty() {
        return Err(CdnlabError::new_err(
            "dirs: give the output folders of the shards (at least one)",
        ));
    }
    interruptible(py, || Ok(runner::merge_into(&dirs, &out)?.len()))
}

/// Re-draws a finished run's figures, or one new plot with `x` and `y`, as `cdnlab plot` does.
/// Returns the files written.
#[pyfunction]
#[pyo3(signature = (dir, x = None, y = Vec::new(), series = None, r#where = Vec::new(),
    log_x = false, log_y = false, title = None, y_label = None, format = "both", scale = 2.0,
    out = None, name = "plot"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn plot(
    py: Python<'_>,
    dir: PathBuf,
    x: Option<String>,
    y: Vec<String>,
    series: Option<String>,
    r#where: Vec<String>,
    log_x: bool,
    log_y: bool,
    title: Option<String>,
    y_label: Option<String>,
    format: &str,
    scale: f32,
    out: Option<PathBuf>,
    name: &str,
) -> PyResult<Vec<PathBuf>> {
    // The command's clap rules: x and y go together; series, where and title need them.
    let needs_x = [
        ("y", !y.is_empty()),
        ("series", series.is_some()),
        ("where", !r#where.is_empty()),
        ("title", title.is_some()),
    ];
    if x.is_some() && y.is_empty() {
        return Err(CdnlabError::new_err(
            "x: give y too (the metrics on the y axis)",
        ));
    }
    if let (None, Some((arg, _))) = (&x, needs_x.iter().find(|(_, given)| *given)) {
        return Err(CdnlabError::new_err(format!(
            "{arg}: give x too (a swept parameter), which draws one new plot"
        )));
    }
    let plan = runner::PlotPlan {
        dir,
        x,
        y,
        series,
        filter: r#where,
        log_x,
        log_y,
        title,
        y_label,
        format: format.parse().map_err(lib_err)?,
        scale,
        out,
        name: name.to_string(),
        style: ArgStyle::Python,
    };
    interruptible(py, || runner::plot_dir(&plan))
}
