//! The native half of cdnlab's Python package (`python/cdnlab`). Every entry point builds the
//! same plan as the `cdnlab` command and calls the same function of the experiment crate
//! (`cdnlab-lab`) or the library (`cdnlab`), so Python and the command line give the same
//! answers and the same error messages. Results come back as Python lists, dicts and objects;
//! the Python half turns them into data frames and arrays.
//!
//! Long work runs on a worker thread with the GIL released; the calling thread wakes every
//! 100 ms to let Python handle signals, and Ctrl-C asks the work to stop ([`cdnlab_lab::stop`])
//! and raises `KeyboardInterrupt` once it has.

#![forbid(unsafe_code)]

use cdnlab::Named;
use cdnlab::alloc::problem::Balance;
use cdnlab::alloc::simplex::{Basis, Solution};
use cdnlab::alloc::{Problem, initial, simplex};
use cdnlab::cache::{Capacity, Policy, Unit};
use cdnlab::rng::Rng;
use cdnlab::select::gwtw::{Gwtw as GwtwSelector, GwtwConfig, Probe, Retrial};
use cdnlab::select::{Event, NoLoad, Selector};
use cdnlab::workload::Request;
use cdnlab_lab::Error as LabError;
use cdnlab_lab::reproduce::{self as lab_reproduce, ReproducePlan};
use cdnlab_lab::trace::replay::{self as lab_replay, ReplayPlan};
use cdnlab_lab::trace::{Format, TraceInput};
use cdnlab_lab::{runner, scenario, stop};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

pyo3::create_exception!(
    cdnlab,
    CdnlabError,
    PyValueError,
    "Bad input to cdnlab: the message names what is wrong and what is allowed."
);

/// The command's error as a Python exception: bad input is `CdnlabError` (a `ValueError`), a
/// file that cannot be read `OSError`, a stop `KeyboardInterrupt`, the rest `RuntimeError`.
/// The message is the command's own.
fn to_py(e: LabError) -> PyErr {
    match e {
        LabError::Io { .. } => PyOSError::new_err(e.to_string()),
        LabError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        LabError::Failed(_) => PyRuntimeError::new_err(e.to_string()),
        LabError::File { .. } | LabError::Usage(_) | LabError::Lib(_) => {
            CdnlabError::new_err(e.to_string())
        }
    }
}

fn lib_err(e: cdnlab::Error) -> PyErr {
    CdnlabError::new_err(e.to_string())
}

/// Runs `work` on a worker thread with the GIL released, checking for signals every 100 ms.
/// On Ctrl-C (or any signal handler that raises) it asks the work to stop, waits for it, and
/// raises what the handler raised.
fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> cdnlab_lab::Result<T> + Send,
) -> PyResult<T> {
    stop::clear();
    std::thread::scope(|s| {
        let (tx, mut rx) = mpsc::channel();
        let worker = s.spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            let (back, got) = py.detach(move || {
                let got = rx.recv_timeout(Duration::from_millis(100));
                (rx, got)
            });
            rx = back;
            match got {
                Ok(result) => return result.map_err(to_py),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(signal) = py.check_signals() {
                        stop::request();
                        let _ = py.detach(move || rx.recv());
                        stop::clear();
                        return Err(signal);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let why = match worker.join() {
                        Err(p) => p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_default(),
                        Ok(()) => String::new(),
                    };
                    return Err(PyRuntimeError::new_err(format!(
                        "cdnlab: internal error (please report it): {why}"
                    )));
                }
            }
        }
    })
}

/// `threads` as the command's `--threads` allows it: None (one per core) or at least 1.
fn check_threads(threads: Option<usize>) -> PyResult<()> {
    if threads == Some(0) {
        return Err(CdnlabError::new_err(
            "threads 0: a whole number, at least 1, is allowed",
        ));
    }
    Ok(())
}

/// The items of a list of strings and numbers, as the command's flags give them one by one.
fn items(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    let items: Vec<Bound<'_, PyAny>> = v
        .extract()
        .map_err(|_| CdnlabError::new_err(format!("{what}: a list is allowed")))?;
    items.iter().map(|i| Ok(i.str()?.to_string())).collect()
}

/// Replays a trace through every (policy, size): one dict per (policy, size), with the keys of
/// `cdnlab cache-replay --json`.
#[pyfunction]
#[pyo3(signature = (trace, policies, sizes, size_unit = "objects", format = "oracle-general",
    threads = None, csv_id = 1, csv_size = None, csv_time = None, csv_header = false,
    csv_delimiter = ",", csv_id_text = false))]
#[allow(clippy::too_many_arguments)]
fn replay<'py>(
    py: Python<'py>,
    trace: PathBuf,
    policies: &Bound<'py, PyAny>,
    sizes: &Bound<'py, PyAny>,
    size_unit: &str,
    format: &str,
    threads: Option<usize>,
    csv_id: usize,
    csv_size: Option<usize>,
    csv_time: Option<usize>,
    csv_header: bool,
    csv_delimiter: &str,
    csv_id_text: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    check_threads(threads)?;
    // Checked in the command's order: policies, unit, sizes.
    let policies = lab_replay::parse_policies(&items(policies, "policies")?).map_err(to_py)?;
    let unit: Unit = size_unit.parse().map_err(lib_err)?;
    let sizes = lab_replay::parse_sizes(&items(sizes, "sizes")?).map_err(to_py)?;
    let plan = ReplayPlan {
        input: TraceInput {
            path: trace,
            format: format.parse::<Format>().map_err(lib_err)?,
            csv_id,
            csv_size,
            csv_time,
            csv_header,
            csv_delimiter: csv_delimiter.to_string(),
            csv_id_text,
        },
        policies,
        sizes,
        unit,
        threads,
    };
    let rows = interruptible(py, || lab_replay::replay(&plan).map(|r| r.rows))?;
    rows.iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("trace", &r.trace)?;
            d.set_item("format", r.format)?;
            d.set_item("policy", r.policy.name())?;
            d.set_item("size", r.size)?;
            d.set_item("size_fraction", r.size_fraction)?;
            d.set_item("size_unit", r.size_unit)?;
            d.set_item("requests", r.requests)?;
            d.set_item("hits", r.hits)?;
            d.set_item("misses", r.misses)?;
            d.set_item("miss_ratio", r.miss_ratio)?;
            d.set_item("read_seconds", r.read_seconds)?;
            d.set_item("sim_seconds", r.sim_seconds)?;
            d.set_item("mreq_per_s", r.mreq_per_s)?;
            d.set_item("cached_objects", r.cached_objects)?;
            d.set_item("cache_heap_bytes", r.cache_heap_bytes)?;
            d.set_item(
                "heap_bytes_per_cached_object",
                r.heap_bytes_per_cached_object,
            )?;
            d.set_item("working_set_objects", r.working_set_objects)?;
            d.set_item("working_set_bytes", r.working_set_bytes)?;
            d.set_item("peak_rss_bytes", r.peak_rss_bytes)?;
            Ok(d)
        })
        .collect()
}

/// Every policy name, in the order `policies="all"` runs them.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    Policy::ALL.iter().map(|p| p.name()).collect()
}

/// One cache driven request by request.
#[pyclass(module = "cdnlab._native")]
struct Cache {
    inner: Mutex<Box<dyn cdnlab::cache::Cache + Send>>,
    policy: Policy,
    capacity: Capacity,
}

#[pymethods]
impl Cache {
    #[new]
    #[pyo3(signature = (policy, capacity, unit = "objects"))]
    fn new(policy: &str, capacity: u64, unit: &str) -> PyResult<Self> {
        let policy: Policy = policy.parse().map_err(lib_err)?;
        let unit: Unit = unit.parse().map_err(lib_err)?;
        let capacity = Capacity::new(capacity, unit).map_err(lib_err)?;
        Ok(Cache {
            inner: Mutex::new(policy.build(capacity)),
            policy,
            capacity,
        })
    }

    /// Requests object `id` of `size` bytes; True on a hit. `next_access` (the index of the
    /// object's next request, -1 for none) is read by `belady` only.
    #[pyo3(signature = (id, size = 1, next_access = -1))]
    fn access(&self, id: u64, size: u32, next_access: i64) -> PyResult<bool> {
        if self.policy.offline() && next_access < -1 {
            return Err(CdnlabError::new_err(format!(
                "next_access {next_access}: allowed the index of the next request, or -1"
            )));
        }
        let r = Request {
            time: 0,
            id,
            size,
            next_access,
        };
        Ok(self.lock().access_req(&r))
    }

    /// Whether `id` is cached (not counted as an access).
    fn __contains__(&self, id: u64) -> bool {
        self.lock().contains(id)
    }

    /// Cached objects.
    fn __len__(&self) -> usize {
        self.lock().len()
    }

    /// Capacity units in use.
    #[getter]
    fn used(&self) -> u64 {
        self.lock().used()
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.capacity.amount
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.capacity.unit.name()
    }

    #[getter]
    fn policy(&self) -> &'static str {
        self.policy.name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Cache({:?}, {}, unit={:?})",
            self.policy.name(),
            self.capacity.amount,
            self.capacity.unit.name()
        )
    }
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Box<dyn cdnlab::cache::Cache + Send>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Decodes little-endian i64s (numpy's `<i8` bytes).
fn i64s(b: &[u8], what: &str) -> PyResult<Vec<i64>> {
    if !b.len().is_multiple_of(8) {
        return Err(CdnlabError::new_err(format!(
            "{what}: {} bytes is not a whole number of 64-bit integers",
            b.len()
        )));
    }
    Ok(b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

fn balance(name: Option<&str>) -> PyResult<Option<Balance>> {
    match name {
        None => Ok(None),
        Some("scale") => Ok(Some(Balance::Scale)),
        Some("dummy") => Ok(Some(Balance::Dummy)),
        Some(other) => Err(CdnlabError::new_err(format!(
            "balance {other:?}: allowed None, 'scale' (demands scaled to the total supply) or \
             'dummy' (a dummy row or column of cost 0)"
        ))),
    }
}

/// Builds the instance, with the library's message for unequal totals and the hint of the
/// Python argument (the command line's says `--balance`).
fn problem(
    supply: Vec<i64>,
    demand: Vec<i64>,
    cost: Vec<i64>,
    how: Option<Balance>,
) -> PyResult<Problem> {
    let n = demand.len();
    if n == 0 || cost.len() != supply.len() * n {
        return Err(CdnlabError::new_err(format!(
            "cost: {} values for {} supplies x {} demands; allowed a supply-by-demand matrix",
            cost.len(),
            supply.len(),
            n
        )));
    }
    let rows: Vec<Vec<i64>> = cost.chunks(n).map(<[i64]>::to_vec).collect();
    match how {
        None => Problem::new(supply, demand, rows),
        Some(b) => Problem::balanced(supply, demand, rows, b),
    }
    .map_err(|e| {
        let unbalanced = matches!(&e, cdnlab::Error::Param { name, value, .. }
            if name == "demand" && value.starts_with("total"));
        let hint = if unbalanced {
            " (pass balance='scale' or balance='dummy')"
        } else {
            ""
        };
        CdnlabError::new_err(format!("{e}{hint}"))
    })
}

/// A solved Transportation Problem.
#[pyclass(module = "cdnlab._native", frozen)]
struct TpSolution {
    #[pyo3(get)]
    cost: i64,
    /// Positive flows (i, j, x) in row-major order.
    #[pyo3(get)]
    flows: Vec<(usize, usize, i64)>,
    /// Dual values of the rows and columns (None for an initial, non-optimal method).
    #[pyo3(get)]
    u: Option<Vec<i64>>,
    #[pyo3(get)]
    v: Option<Vec<i64>>,
    #[pyo3(get)]
    pivots: Option<u64>,
    #[pyo3(get)]
    rows: usize,
    #[pyo3(get)]
    cols: usize,
    /// The balanced instance that was solved (a dummy row or column included).
    #[pyo3(get)]
    supply: Vec<i64>,
    #[pyo3(get)]
    demand: Vec<i64>,
    #[pyo3(get)]
    seconds: f64,
    problem: Problem,
    basis: Option<Basis>,
}

impl TpSolution {
    fn optimal(p: Problem, s: Solution, seconds: f64) -> Self {
        TpSolution {
            cost: s.allocation.cost,
            flows: s.allocation.flows,
            u: Some(s.u),
            v: Some(s.v),
            pivots: Some(s.pivots),
            rows: p.rows(),
            cols: p.cols(),
            supply: p.supply.clone(),
            demand: p.demand.clone(),
            seconds,
            problem: p,
            basis: Some(s.basis),
        }
    }
}

#[pymethods]
impl TpSolution {
    /// Re-solves with new supplies and/or demands (same shape and costs), starting from this
    /// optimum's basis (a re-allocation).
    #[pyo3(signature = (supply = None, demand = None, balance = None))]
    fn resolve(
        &self,
        py: Python<'_>,
        supply: Option<Vec<u8>>,
        demand: Option<Vec<u8>>,
        balance: Option<&str>,
    ) -> PyResult<TpSolution> {
        let Some(basis) = &self.basis else {
            return Err(CdnlabError::new_err(
                "resolve starts from the optimum's basis: solve with method='optimal' first",
            ));
        };
        let supply = match supply {
            Some(b) => i64s(&b, "supply")?,
            None => self.problem.supply.clone(),
        };
        let demand = match demand {
            Some(b) => i64s(&b, "demand")?,
            None => self.problem.demand.clone(),
        };
        if (supply.len(), demand.len()) != (self.rows, self.cols) {
            return Err(CdnlabError::new_err(format!(
                "a re-allocation keeps the shape of the first instance ({} supplies x {} \
                 demands); got {} x {}",
                self.rows,
                self.cols,
                supply.len(),
                demand.len()
            )));
        }
        let p = problem(
            supply,
            demand,
            self.problem.cost.clone(),
            self::balance(balance)?,
        )?;
        if (p.rows(), p.cols()) != (self.rows, self.cols) {
            return Err(CdnlabError::new_err(
                "a re-allocation keeps the shape of the first instance: balancing added a \
                 dummy row or column; give totals that need the same balancing",
            ));
        }
        let t = std::time::Instant::now();
        let s = py
            .detach(|| simplex::solve_warm(&p, basis))
            .map_err(lib_err)?;
        Ok(TpSolution::optimal(p, s, t.elapsed().as_secs_f64()))
    }

    fn __repr__(&self) -> String {
        format!(
            "TpSolution(cost={}, {} x {}, {} flows)",
            self.cost,
            self.rows,
            self.cols,
            self.flows.len()
        )
    }
}

/// Solves a Transportation Problem given as little-endian i64 bytes (the Python half converts
/// lists and arrays): `method` is optimal (network simplex), northwest or vogel.
#[pyfunction]
#[pyo3(signature = (supply, demand, cost, balance = None, method = "optimal"))]
fn tp_solve(
    py: Python<'_>,
    supply: Vec<u8>,
    demand: Vec<u8>,
    cost: Vec<u8>,
    balance: Option<&str>,
    method: &str,
) -> PyResult<TpSolution> {
    let p = problem(
        i64s(&supply, "supply")?,
        i64s(&demand, "demand")?,
        i64s(&cost, "cost")?,
        self::balance(balance)?,
    )?;
    let t = std::time::Instant::now();
    let initial = |a: cdnlab::alloc::Allocation, p: Problem, secs: f64| TpSolution {
        cost: a.cost,
        flows: a.flows,
        u: None,
        v: None,
        pivots: None,
        rows: p.rows(),
        cols: p.cols(),
        supply: p.supply.clone(),
        demand: p.demand.clone(),
        seconds: secs,
        problem: p,
        basis: None,
    };
    match method {
        "optimal" => {
            let s = py.detach(|| simplex::solve(&p)).map_err(lib_err)?;
            Ok(TpSolution::optimal(p, s, t.elapsed().as_secs_f64()))
        }
        "northwest" => {
            let a = initial::northwest(&p).map_err(lib_err)?;
            Ok(initial(a, p, t.elapsed().as_secs_f64()))
        }
        "vogel" => {
            let a = py.detach(|| initial::vogel(&p)).map_err(lib_err)?;
            Ok(initial(a, p, t.elapsed().as_secs_f64()))
        }
        other => Err(CdnlabError::new_err(format!(
            "method {other:?}: allowed optimal, northwest, vogel"
        ))),
    }
}

/// Erlang-B blocking probability of `load` Erlangs offered to `servers` servers.
#[pyfunction]
fn erlang_b(load: f64, servers: u64) -> PyResult<f64> {
    if !(load.is_finite() && load >= 0.0) {
        return Err(CdnlabError::new_err(format!(
            "load {load}: allowed a finite number >= 0 (Erlangs)"
        )));
    }
    Ok(cdnlab::alloc::erlang::erlang_b(load, servers))
}

/// Every experiment a scenario can name, with its parameters and metrics: one dict each.
#[pyfunction]
fn experiments(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    cdnlab::sim::registry()
        .iter()
        .map(|e| {
            let params = e
                .params()
                .iter()
                .map(|p| {
                    let d = PyDict::new(py);
                    d.set_item("name", p.name)?;
                    d.set_item("help", p.help)?;
                    d.set_item("unit", p.unit)?;
                    d.set_item("allowed", p.kind.allowed())?;
                    d.set_item("default", p.default.to_string())?;
                    Ok(d)
                })
                .collect::<PyResult<Vec<_>>>()?;
            let metrics = e
                .metrics()
                .iter()
                .map(|m| {
                    let d = PyDict::new(py);
                    d.set_item("name", m.name)?;
                    d.set_item("help", m.help)?;
                    d.set_item("unit", m.unit)?;
                    Ok(d)
                })
                .collect::<PyResult<Vec<_>>>()?;
            let d = PyDict::new(py);
            d.set_item("name", e.name())?;
            d.set_item("about", e.about())?;
            d.set_item("params", params)?;
            d.set_item("metrics", metrics)?;
            Ok(d)
        })
        .collect()
}

/// The columns of a replay's rows, in order.
#[pyfunction]
fn replay_columns() -> Vec<&'static str> {
    lab_replay::REPLAY_COLUMNS.to_vec()
}

/// Runs a scenario (TOML text; `name` names it in errors) into `out`, as `cdnlab run` does.
/// Returns the number of cells run now.
#[pyfunction]
#[pyo3(signature = (text, name, out, threads = None, shard = None, resume = false, progress = false))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    name: &str,
    out: PathBuf,
    threads: Option<usize>,
    shard: Option<&str>,
    resume: bool,
    progress: bool,
) -> PyResult<usize> {
    check_threads(threads)?;
    let sc = scenario::Scenario::parse(text, Path::new(name)).map_err(to_py)?;
    let shard = match shard {
        Some(s) => runner::Shard::parse(s).map_err(to_py)?,
        None => runner::Shard::ALL,
    };
    interruptible(py, || {
        let o = runner::run_scenario(&sc, &out, shard, threads, resume, progress)?;
        runner::check_failures(&o)?;
        Ok(o.cells_run)
    })
}

/// A scenario given as JSON (a dict from Python) written as TOML, the scenario format.
#[pyfunction]
fn scenario_toml(json: &str) -> PyResult<String> {
    let v: toml::Value = serde_json::from_str(json).map_err(|e| {
        CdnlabError::new_err(format!(
            "scenario: {e} (allowed: a dict of strings, numbers, booleans, lists and dicts, \
             as a scenario file holds; no None)"
        ))
    })?;
    toml::to_string(&v).map_err(|e| CdnlabError::new_err(format!("scenario: {e}")))
}

/// Runs `cdnlab reproduce` into `out` (None: the command's default folder for the selection);
/// returns the path of claims.json.
#[pyfunction]
#[pyo3(signature = (out = None, only = Vec::new(), full = false, threads = None, replace = false))]
fn reproduce(
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
fn reproductions() -> Vec<(&'static str, &'static str, &'static str)> {
    lab_reproduce::registry()
        .iter()
        .map(|r| (r.id, r.paper, r.title))
        .collect()
}

/// One Go-With-The-Winner client over its candidate servers.
#[pyclass(module = "cdnlab._native")]
struct Gwtw {
    inner: Mutex<(GwtwSelector, Rng)>,
}

#[pymethods]
impl Gwtw {
    #[new]
    #[pyo3(signature = (candidates, tau = cdnlab::select::gwtw::DEFAULT_TAU, probe = "all",
        retrial = "on-shortfall", q = cdnlab::select::gwtw::DEFAULT_Q, best = 1.0, seed = 0))]
    fn new(
        candidates: Vec<u32>,
        tau: usize,
        probe: &str,
        retrial: &str,
        q: f64,
        best: f64,
        seed: u64,
    ) -> PyResult<Self> {
        let cfg = GwtwConfig {
            tau,
            probe: probe.parse::<Probe>().map_err(lib_err)?,
            retrial: retrial.parse::<Retrial>().map_err(lib_err)?,
            q,
            best,
        };
        let g = GwtwSelector::new(candidates, cfg).map_err(lib_err)?;
        Ok(Gwtw {
            inner: Mutex::new((g, cdnlab::rng::from_seed(seed))),
        })
    }

    /// The servers the next request goes to: one when settled, several while probing.
    fn targets(&self) -> Vec<u32> {
        let mut g = self.lock();
        let (sel, rng) = &mut *g;
        let mut out = Vec::new();
        sel.targets(&NoLoad, rng, &mut out);
        out
    }

    /// Feeds the outcome of a request to `server`: a value (1 hit, 0 miss, or a bit rate), or
    /// None for one that must not count. Returns what changed: None, ("settled", s),
    /// ("retrial", s) or ("moved", from, to).
    #[pyo3(signature = (server, value))]
    fn observe(&self, server: u32, value: Option<f64>) -> PyResult<Option<(String, u32, u32)>> {
        let mut g = self.lock();
        let (sel, rng) = &mut *g;
        if sel.candidates().all(|c| c != server) {
            let c: Vec<u32> = sel.candidates().collect();
            return Err(CdnlabError::new_err(format!(
                "server {server}: not a candidate of this client (candidates {c:?})"
            )));
        }
        if let Some(v) = value
            && !v.is_finite()
        {
            return Err(CdnlabError::new_err(format!(
                "value {v}: allowed a finite number, or None"
            )));
        }
        Ok(match sel.observe(server, value, rng) {
            Event::None => None,
            Event::Settled(s) => Some(("settled".into(), s, s)),
            Event::Retrial(s) => Some(("retrial".into(), s, s)),
            Event::Moved(a, b) => Some(("moved".into(), a, b)),
        })
    }

    /// The server the client is settled on, or None while in trial.
    #[getter]
    fn settled(&self) -> Option<u32> {
        self.lock().0.settled()
    }

    #[getter]
    fn in_trial(&self) -> bool {
        self.lock().0.in_trial()
    }

    #[getter]
    fn candidates(&self) -> Vec<u32> {
        self.lock().0.candidates().collect()
    }
}

impl Gwtw {
    fn lock(&self) -> std::sync::MutexGuard<'_, (GwtwSelector, Rng)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Random binary search over hash indices 1..=k, one probe at a time.
#[pyclass(module = "cdnlab._native")]
struct RbsSearch {
    inner: Mutex<(cdnlab::dht::search::RbsSearch, Rng, Option<u32>)>,
}

#[pymethods]
impl RbsSearch {
    #[new]
    #[pyo3(signature = (k, seed = 0))]
    fn new(k: u32, seed: u64) -> PyResult<Self> {
        if k == 0 {
            return Err(CdnlabError::new_err(
                "k 0: allowed a whole number >= 1 (hash functions)",
            ));
        }
        Ok(RbsSearch {
            inner: Mutex::new((
                cdnlab::dht::search::RbsSearch::new(k),
                cdnlab::rng::from_seed(seed),
                None,
            )),
        })
    }

    /// The next index to probe, or None when every index has missed.
    fn next(&self) -> Option<u32> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (s, rng, last) = &mut *g;
        *last = s.next(rng);
        *last
    }

    /// The index last named was not there: search below it.
    fn missed(&self) -> PyResult<()> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (s, _, last) = &mut *g;
        match last.take() {
            Some(i) => {
                s.missed(i);
                Ok(())
            }
            None => Err(CdnlabError::new_err(
                "missed() reports a miss on the index next() named: call next() first",
            )),
        }
    }

    /// Probes named so far.
    #[getter]
    fn probes(&self) -> u32 {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .probes()
    }
}

/// The random binary search of the library over 1..=k with `present(i)` as the probe: returns
/// (the index served from or None, probes).
#[pyfunction]
#[pyo3(signature = (k, present, seed = 0))]
fn rbs(k: u32, present: &Bound<'_, PyAny>, seed: u64) -> PyResult<(Option<u32>, u32)> {
    let mut rng = cdnlab::rng::from_seed(seed);
    let mut err = None;
    let l = cdnlab::dht::search::rbs(k, &mut rng, |i| {
        if err.is_some() {
            return false;
        }
        match present.call1((i,)).and_then(|r| r.is_truthy()) {
            Ok(b) => b,
            Err(e) => {
                err = Some(e);
                false
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok((l.served, l.probes)),
    }
}

/// The module: `cdnlab._native`.
#[pymodule]
mod _native {
    #[pymodule_export]
    use super::{
        Cache, CdnlabError, Gwtw, RbsSearch, TpSolution, erlang_b, experiments, policies, rbs,
        replay, replay_columns, reproduce, reproductions, run_scenario, scenario_toml, tp_solve,
    };
}
