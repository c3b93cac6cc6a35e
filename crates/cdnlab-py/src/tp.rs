//! The Transportation Problem from Python: instances given as bytes of little-endian i64s,
//! solved by an allocation method, re-solved warm; Erlang-B.

use crate::*;
use cdnlab::alloc::admission::{self, Method};

/// Decodes little-endian i64s (numpy's `<i8` bytes).
pub(crate) fn i64s(b: &[u8], what: &str) -> PyResult<Vec<i64>> {
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

pub(crate) fn balance(name: Option<&str>) -> PyResult<Option<Balance>> {
    name.map(str::parse).transpose().map_err(lib_err)
}

/// Builds the instance, with the library's message for unequal totals and the hint of the
/// Python argument (the command line's says `--balance`).
pub(crate) fn problem(
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
pub(crate) struct TpSolution {
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
    /// The allocation of `p` by `method` (warm from `basis` when given), timed.
    fn allocate(
        py: Python<'_>,
        p: Problem,
        method: Method,
        basis: Option<&Basis>,
    ) -> PyResult<Self> {
        let t = std::time::Instant::now();
        let a = py
            .detach(|| admission::allocate(method, &p, basis))
            .map_err(lib_err)?;
        let (u, v) = a.duals.unzip();
        Ok(TpSolution {
            cost: a.allocation.cost,
            flows: a.allocation.flows,
            u,
            v,
            pivots: a.pivots,
            rows: p.rows(),
            cols: p.cols(),
            supply: p.supply.clone(),
            demand: p.demand.clone(),
            seconds: t.elapsed().as_secs_f64(),
            problem: p,
            basis: a.basis,
        })
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
        TpSolution::allocate(py, p, Method::Optimal, Some(basis))
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
pub(crate) fn tp_solve(
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
    let method: Method = method.parse().map_err(lib_err)?;
    TpSolution::allocate(py, p, method, None)
}

/// Erlang-B blocking probability of `load` Erlangs offered to `servers` servers.
#[pyfunction]
pub(crate) fn erlang_b(load: f64, servers: u64) -> PyResult<f64> {
    if !(load.is_finite() && load >= 0.0) {
        return Err(CdnlabError::new_err(format!(
            "load {load}: allowed a finite number >= 0 (Erlangs)"
        )));
    }
    Ok(cdnlab::alloc::erlang::erlang_b(load, servers))
}
