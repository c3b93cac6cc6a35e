//! `cdnlab tp solve`: the Transportation Problem on a JSON instance
//! `{"supply": [..], "demand": [..], "cost": [[..], ..]}` (cost is supply by demand, integers).

use crate::error::{CliError, Result};
use crate::output::outln;
use cdnlab::alloc::problem::Balance;
use cdnlab::alloc::{Problem, initial, simplex};
use clap::{Args, Subcommand, ValueEnum};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `cdnlab tp`.
#[derive(Debug, Args)]
pub struct TpArgs {
    #[command(subcommand)]
    pub command: TpCommand,
}

/// Transportation Problem commands.
#[derive(Debug, Subcommand)]
pub enum TpCommand {
    /// Solve an instance: the optimal cost and the positive flows (or an initial solution).
    Solve(SolveArgs),
}

/// How totals that differ are reconciled.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BalanceArg {
    /// Scale the demands to the total supply (largest remainders).
    Scale,
    /// Add a dummy row or column of cost 0.
    Dummy,
}

/// Which allocation to compute.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Method {
    /// The optimum (network simplex).
    Optimal,
    /// The north-west corner rule (feasible, ignores costs).
    Northwest,
    /// Vogel's approximation method (feasible, usually near the optimum).
    Vogel,
}

/// Arguments of `cdnlab tp solve`.
#[derive(Debug, Args)]
pub struct SolveArgs {
    /// JSON instance: {"supply": [ints], "demand": [ints], "cost": [[ints]]}.
    pub file: PathBuf,
    /// Balance unequal totals this way (without it, unequal totals are an error).
    #[arg(long, value_enum)]
    pub balance: Option<BalanceArg>,
    /// Allocation to compute.
    #[arg(long, value_enum, default_value = "optimal")]
    pub method: Method,
    /// Print one JSON object: cost, flows [[i, j, x], ...], solve_seconds, and more.
    #[arg(long)]
    pub json: bool,
    /// Then re-allocate: solve this second instance (same costs and shape, new supplies or
    /// demands) starting from the first optimum's basis, and report both (optimal method only).
    #[arg(long, value_name = "FILE2")]
    pub then: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Instance {
    supply: Vec<i64>,
    demand: Vec<i64>,
    cost: Vec<Vec<i64>>,
}

/// Runs the command.
pub fn run(a: &TpArgs) -> Result<()> {
    let TpCommand::Solve(s) = &a.command;
    solve(s)
}

/// Reads and validates one instance file.
fn load(path: &PathBuf, balance: Option<BalanceArg>) -> Result<Problem> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(path, e))?;
    let inst: Instance = serde_json::from_str(&text).map_err(|e| {
        CliError::file(
            path,
            format!(
                "{e} (expected {{\"supply\": [ints], \"demand\": [ints], \"cost\": [[ints]]}} \
                 with whole numbers only)"
            ),
        )
    })?;
    match balance {
        None => Problem::new(inst.supply, inst.demand, inst.cost),
        Some(b) => Problem::balanced(
            inst.supply,
            inst.demand,
            inst.cost,
            match b {
                BalanceArg::Scale => Balance::Scale,
                BalanceArg::Dummy => Balance::Dummy,
            },
        ),
    }
    .map_err(|e| {
        // Only unequal totals are what --balance is for.
        let unbalanced = matches!(&e, cdnlab::Error::Param { name, value, .. }
            if name == "demand" && value.starts_with("total"));
        let hint = if unbalanced { " (see --balance)" } else { "" };
        CliError::file(path, format!("{e}{hint}"))
    })
}

fn solve(a: &SolveArgs) -> Result<()> {
    let problem = load(&a.file, a.balance)?;
    let t = Instant::now();
    let (alloc, pivots, basis) = match a.method {
        Method::Optimal => {
            let s = simplex::solve(&problem)?;
            (s.allocation, Some(s.pivots), Some(s.basis))
        }
        Method::Northwest => (initial::northwest(&problem)?, None, None),
        Method::Vogel => (initial::vogel(&problem)?, None, None),
    };
    let seconds = t.elapsed().as_secs_f64();
    // The re-allocation, warm from the first basis.
    let warm = match (&a.then, basis) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(CliError::Usage(
                "--then re-solves from the optimum's basis: use it with --method optimal".into(),
            ));
        }
        (Some(path), Some(basis)) => {
            let second = load(path, a.balance)?;
            if (second.rows(), second.cols(), &second.cost)
                != (problem.rows(), problem.cols(), &problem.cost)
            {
                return Err(CliError::file(
                    path,
                    "a re-allocation keeps the shape and the costs of the first instance; only \
                     supplies and demands may change",
                ));
            }
            let t = Instant::now();
            let s = simplex::solve_warm(&second, &basis)?;
            Some((s, t.elapsed().as_secs_f64()))
        }
    };
    let (n, flows) = (problem.cols(), &alloc.flows);
    if a.json {
        let out = serde_json::json!({
            "cost": alloc.cost,
            "flows": flows,
            "solve_seconds": seconds,
            "method": format!("{:?}", a.method).to_lowercase(),
            "rows": problem.rows(),
            "cols": n,
            "supply": problem.supply,
            "demand": problem.demand,
            "pivots": pivots,
            "then": warm.as_ref().map(|(s, secs)| serde_json::json!({
                "cost": s.allocation.cost,
                "solve_seconds": secs,
                "pivots": s.pivots,
            })),
        });
        outln!("{out}");
    } else {
        let what = match a.method {
            Method::Optimal => "optimal cost",
            Method::Northwest => "north-west corner cost",
            Method::Vogel => "Vogel cost",
        };
        outln!(
            "{what} {} ({} x {}, {:.3} s)",
            alloc.cost,
            problem.rows(),
            n,
            seconds
        );
        outln!("supply demand flow");
        for (i, j, x) in flows {
            outln!("{i} {j} {x}");
        }
        if let Some((s, secs)) = &warm {
            outln!(
                "re-allocation: optimal cost {} ({:.3} s warm, {} pivots)",
                s.allocation.cost,
                secs,
                s.pivots
            );
        }
    }
    Ok(())
}
