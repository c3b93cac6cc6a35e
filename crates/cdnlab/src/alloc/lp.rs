//! The Transportation Problem as a plain linear program, solved by a general LP solver (good_lp
//! with microlp, a pure-Rust simplex). Independent of the network simplex in every respect, it
//! is the reference its optima are checked against (tests, experiment T5). Dense: one variable
//! per cell, so it is meant for instances up to a few hundred rows and columns.

use super::problem::Problem;
use crate::Error;
use good_lp::{Expression, Solution as _, SolverModel, constraint, microlp, variable, variables};

/// The optimal cost found by the LP solver.
pub fn optimum(p: &Problem) -> Result<f64, Error> {
    let (m, n) = (p.rows(), p.cols());
    let mut vars = variables!();
    let x: Vec<_> = (0..m * n).map(|_| vars.add(variable().min(0.0))).collect();
    let objective: Expression = x.iter().zip(&p.cost).map(|(&v, &c)| c as f64 * v).sum();
    let mut model = vars.minimise(objective.clone()).using(microlp);
    for i in 0..m {
        let row: Expression = (0..n).map(|j| x[i * n + j]).sum();
        model = model.with(constraint!(row == p.supply[i] as f64));
    }
    for j in 0..n {
        let col: Expression = (0..m).map(|i| x[i * n + j]).sum();
        model = model.with(constraint!(col == p.demand[j] as f64));
    }
    let s = model
        .solve()
        .map_err(|e| Error::param("instance", e, "an instance the LP solver can solve"))?;
    Ok(s.eval(&objective))
}
