//! The Transportation Problem on a JSON instance file
//! `{"supply": [..], "demand": [..], "cost": [[..], ..]}` (cost is supply by demand, integers).

use crate::error::{Error, Result};
use cdnlab::alloc::Problem;
use cdnlab::alloc::admission::{Allocated, Method, allocate};
use cdnlab::alloc::problem::Balance;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// An instance file to solve, and optionally a second to re-allocate to.
#[derive(Debug, Clone)]
pub struct TpPlan {
    /// JSON instance: {"supply": [ints], "demand": [ints], "cost": [[ints]]}.
    pub file: PathBuf,
    /// Balance unequal totals this way (None: unequal totals are an error).
    pub balance: Option<Balance>,
    pub method: Method,
    /// Then re-allocate: solve this second instance (same costs and shape, new supplies or
    /// demands) from the first optimum's basis (optimal method only).
    pub then: Option<PathBuf>,
}

/// A solved instance.
#[derive(Debug, Clone)]
pub struct TpSolved {
    pub problem: Problem,
    pub method: Method,
    pub allocated: Allocated,
    pub seconds: f64,
    /// The re-allocation: its solution and the seconds it took, warm.
    pub then: Option<(Allocated, f64)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Instance {
    supply: Vec<i64>,
    demand: Vec<i64>,
    cost: Vec<Vec<i64>>,
}

/// Reads and validates one instance file.
fn load(path: &Path, balance: Option<Balance>) -> Result<Problem> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let inst: Instance = serde_json::from_str(&text).map_err(|e| {
        Error::file(
            path,
            format!(
                "{e} (expected {{\"supply\": [ints], \"demand\": [ints], \"cost\": [[ints]]}} \
                 with whole numbers only)"
            ),
        )
    })?;
    match balance {
        None => Problem::new(inst.supply, inst.demand, inst.cost),
        Some(b) => Problem::balanced(inst.supply, inst.demand, inst.cost, b),
    }
    .map_err(|e| {
        // Only unequal totals are what --balance is for.
        let unbalanced = matches!(&e, cdnlab::Error::Param { name, value, .. }
            if name == "demand" && value.starts_with("total"));
        let hint = if unbalanced { " (see --balance)" } else { "" };
        Error::file(path, format!("{e}{hint}"))
    })
}

/// Solves the instance (and the re-allocation, warm from the first basis).
pub fn solve(a: &TpPlan) -> Result<TpSolved> {
    let problem = load(&a.file, a.balance)?;
    let t = Instant::now();
    let allocated = allocate(a.method, &problem, None)?;
    let seconds = t.elapsed().as_secs_f64();
    let then = match (&a.then, &allocated.basis) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(Error::Usage(
                "--then re-solves from the optimum's basis: use it with --method optimal".into(),
            ));
        }
        (Some(path), Some(basis)) => {
            let second = load(path, a.balance)?;
            if (second.rows(), second.cols(), &second.cost)
                != (problem.rows(), problem.cols(), &problem.cost)
            {
                return Err(Error::file(
                    path,
                    "a re-allocation keeps the shape and the costs of the first instance; only \
                     supplies and demands may change",
                ));
            }
            let t = Instant::now();
            let s = allocate(Method::Optimal, &second, Some(basis))?;
            Some((s, t.elapsed().as_secs_f64()))
        }
    };
    Ok(TpSolved {
        problem,
        method: a.method,
        allocated,
        seconds,
        then,
    })
}
