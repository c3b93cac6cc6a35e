//! `cdnlab tp solve`: the flags of a Transportation Problem on a JSON instance file, and its
//! answer as text or JSON.

use super::named;
use crate::say::outln;
use cdnlab::Named;
use cdnlab::alloc::admission::Method;
use cdnlab::alloc::problem::Balance;
use cdnlab_lab::Result;
use cdnlab_lab::tp::{TpPlan, solve};
use clap::{Args, Subcommand};
use std::path::PathBuf;

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

/// Arguments of `cdnlab tp solve`.
#[derive(Debug, Args)]
pub struct SolveArgs {
    /// JSON instance: {"supply": [ints], "demand": [ints], "cost": [[ints]]}.
    pub file: PathBuf,
    /// Balance unequal totals this way (without it, unequal totals are an error).
    #[arg(long, value_parser = named::<Balance>())]
    pub balance: Option<Balance>,
    /// Allocation to compute.
    #[arg(long, value_parser = named::<Method>(), default_value = "optimal")]
    pub method: Method,
    /// Print one JSON object: cost, flows [[i, j, x], ...], solve_seconds, and more.
    #[arg(long)]
    pub json: bool,
    /// Then re-allocate: solve this second instance (same costs and shape, new supplies or
    /// demands) starting from the first optimum's basis, and report both (optimal method only).
    #[arg(long, value_name = "FILE2")]
    pub then: Option<PathBuf>,
}

/// Runs the command.
pub fn run(a: &TpArgs) -> Result<()> {
    let TpCommand::Solve(a) = &a.command;
    let s = solve(&TpPlan {
        file: a.file.clone(),
        balance: a.balance,
        method: a.method,
        then: a.then.clone(),
    })?;
    let (problem, alloc) = (&s.problem, &s.allocated.allocation);
    let (n, flows) = (problem.cols(), &alloc.flows);
    if a.json {
        let out = serde_json::json!({
            "cost": alloc.cost,
            "flows": flows,
            "solve_seconds": s.seconds,
            "method": s.method.name(),
            "rows": problem.rows(),
            "cols": n,
            "supply": problem.supply,
            "demand": problem.demand,
            "pivots": s.allocated.pivots,
            "then": s.then.as_ref().map(|(t, secs)| serde_json::json!({
                "cost": t.allocation.cost,
                "solve_seconds": secs,
                "pivots": t.pivots,
            })),
        });
        outln!("{out}");
    } else {
        let what = match s.method {
            Method::Optimal => "optimal cost",
            Method::Northwest => "north-west corner cost",
            Method::Vogel => "Vogel cost",
        };
        outln!(
            "{what} {} ({} x {}, {:.3} s)",
            alloc.cost,
            problem.rows(),
            n,
            s.seconds
        );
        outln!("supply demand flow");
        for (i, j, x) in flows {
            outln!("{i} {j} {x}");
        }
        if let Some((t, secs)) = &s.then {
            outln!(
                "re-allocation: optimal cost {} ({:.3} s warm, {} pivots)",
                t.allocation.cost,
                secs,
                t.pivots.unwrap_or(0)
            );
        }
    }
    Ok(())
}
