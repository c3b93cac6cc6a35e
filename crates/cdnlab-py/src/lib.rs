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
use cdnlab::alloc::Problem;
use cdnlab::alloc::problem::Balance;
use cdnlab::alloc::simplex::Basis;
use cdnlab::cache::{Capacity, Policy, Unit};
use cdnlab::rng::Rng;
use cdnlab::select::gwtw::{Gwtw as GwtwSelector, GwtwConfig, Pick, Probe, Retrial};
use cdnlab::select::{Event, NoLoad, Selector};
use cdnlab::workload::Request;
use cdnlab_lab::Error as LabError;
use cdnlab_lab::error::ArgStyle;
use cdnlab_lab::reproduce::{self as lab_reproduce, ReproducePlan};
use cdnlab_lab::trace::replay::{self as lab_replay, ReplayPlan};
use cdnlab_lab::trace::{self as lab_trace, CsvColumns, Format, TraceInput};
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
pub(crate) fn to_py(e: LabError) -> PyErr {
    match e {
        LabError::Io { .. } => PyOSError::new_err(e.to_string()),
        LabError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        LabError::Failed(_) => PyRuntimeError::new_err(e.to_string()),
        LabError::File { .. } | LabError::Usage(_) | LabError::Lib(_) => {
            CdnlabError::new_err(e.to_string())
        }
    }
}

pub(crate) fn lib_err(e: cdnlab::Error) -> PyErr {
    CdnlabError::new_err(e.to_string())
}

/// Runs `work` on a worker thread with the GIL released, checking for signals every 100 ms.
/// On Ctrl-C (or any signal handler that raises) it asks the work to stop, waits for it, and
/// raises what the handler raised.
pub(crate) fn interruptible<T: Send>(
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
pub(crate) fn check_threads(threads: Option<usize>) -> PyResult<()> {
    if threads == Some(0) {
        return Err(CdnlabError::new_err(
            "threads 0: a whole number, at least 1, is allowed",
        ));
    }
    Ok(())
}

/// The items of a list of strings and numbers, as the command's flags give them one by one.
pub(crate) fn items(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    let items: Vec<Bound<'_, PyAny>> = v
        .extract()
        .map_err(|_| CdnlabError::new_err(format!("{what}: a list is allowed")))?;
    items.iter().map(|i| Ok(i.str()?.to_string())).collect()
}

/// `Ok` with a dict of `"key" => value` pairs (in that order), or the first insertion's error.
macro_rules! dict {
    ($py:expr, $($key:literal => $value:expr),+ $(,)?) => {{
        let d = PyDict::new($py);
        $(d.set_item($key, $value)?;)+
        Ok(d)
    }};
}

mod cache;
mod lab;
mod select;
mod tp;
mod trace;

/// The module: `cdnlab._native`.
#[pymodule]
mod _native {
    #[pymodule_export]
    use super::CdnlabError;
    #[pymodule_export]
    use super::cache::{
        Cache, hierarchy, hierarchy_columns, mrc, mrc_columns, policies, replay, replay_columns,
    };
    #[pymodule_export]
    use super::lab::{experiments, reproduce, reproductions, run_scenario, scenario_toml};
    #[pymodule_export]
    use super::lab::{merge, plot};
    #[pymodule_export]
    use super::select::{Gwtw, RbsSearch, rbs};
    #[pymodule_export]
    use super::tp::{TpSolution, erlang_b, tp_solve};
    #[pymodule_export]
    use super::trace::{gen_trace, trace_stats};
}
