//! Traces from Python: a synthetic one (`cdnlab gen-trace`) and a trace's characterisation
//! (`cdnlab trace-stats`).

use crate::*;

/// Writes a synthetic Zipf trace in oracleGeneral format, as `cdnlab gen-trace` does (whole,
/// or not at all).
#[pyfunction]
#[pyo3(signature = (out, objects = 1_000_000, requests = 10_000_000, alpha = 0.8, size = 1,
    max_size = None, seed = 1))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gen_trace(
    py: Python<'_>,
    out: PathBuf,
    objects: usize,
    requests: usize,
    alpha: f64,
    size: u32,
    max_size: Option<u32>,
    seed: u64,
) -> PyResult<()> {
    use cdnlab_lab::trace::synthetic::{GenTracePlan, gen_trace};
    let plan = GenTracePlan {
        out,
        objects,
        requests,
        alpha,
        size,
        max_size,
        seed,
        style: ArgStyle::Python,
    };
    interruptible(py, || gen_trace(&plan))
}

/// A trace's characterisation as `cdnlab trace-stats --json` prints it (a JSON document), with
/// its figures drawn into `plot_dir` when given.
#[pyfunction]
#[pyo3(signature = (trace, format = "oracle-general", plot_dir = None))]
pub(crate) fn trace_stats(
    py: Python<'_>,
    trace: PathBuf,
    format: &str,
    plot_dir: Option<PathBuf>,
) -> PyResult<String> {
    use cdnlab_lab::trace::stats;
    let input = trace_input(trace, format)?;
    interruptible(py, || {
        let s = stats::trace_stats(&input)?;
        if let Some(dir) = &plot_dir {
            stats::draw(&s, dir)?;
        }
        Ok(stats::to_json(&input, &s).to_string())
    })
}

/// A trace file with its CSV columns (read only with `format="csv"`), as the commands' flags
/// give them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn csv_input(
    path: PathBuf,
    format: &str,
    id: usize,
    size: Option<usize>,
    time: Option<usize>,
    ttl: Option<usize>,
    header: bool,
    delimiter: &str,
    id_is_text: bool,
) -> PyResult<TraceInput> {
    Ok(TraceInput {
        csv: CsvColumns {
            id,
            size,
            time,
            ttl,
            header,
            delimiter: lab_trace::csv_delimiter(delimiter).map_err(to_py)?,
            id_is_text,
        },
        ..trace_input(path, format)?
    })
}

/// A trace file in one of the binary or text formats (no CSV columns).
pub(crate) fn trace_input(path: PathBuf, format: &str) -> PyResult<TraceInput> {
    Ok(TraceInput {
        path,
        format: format.parse::<Format>().map_err(lib_err)?,
        csv: CsvColumns::default(),
    })
}
