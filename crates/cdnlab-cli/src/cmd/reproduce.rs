//! `cdnlab reproduce`: the flags of the reproduction run (every registered experiment, its
//! claims and the report), and `--list`.

use super::Threads;
use crate::say::outln;
use cdnlab_lab::Result;
use cdnlab_lab::reproduce::{ReproducePlan, registry, reproduce, wrong};
use cdnlab_lab::runner::Shard;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cdnlab reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Quick scale (the default): every experiment in at most a few minutes on 2 cores.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Paper scale: larger catalogues, more requests and replications.
    #[arg(long)]
    pub full: bool,
    /// Output folder. Default: `out/reproduce` for every experiment, and for an `--only`
    /// selection a folder of its own, `out/reproduce-ID+ID...` (the ids in registry order), so a
    /// partial run never replaces a full report.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into --out even when it holds the report of another selection of experiments or
    /// another scale (that report is replaced; the cells of both stay and are reused).
    #[arg(long)]
    pub replace: bool,
    #[command(flatten)]
    pub threads: Threads,
    /// Run only the experiments with these ids (repeatable); see --list.
    #[arg(long)]
    pub only: Vec<String>,
    /// List the registered experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Run only shard I of N of every experiment's cells (on one of N machines, each with its
    /// own --out); then `--merge` the N folders to get the claims and the report. Example:
    /// `cdnlab reproduce --shard 0/4 --out out/shard-0`.
    #[arg(long, conflicts_with = "merge")]
    pub shard: Option<String>,
    /// Merge the folders of `--shard` runs into --out, then check the claims and write the
    /// report (as one run would). Example:
    /// `cdnlab reproduce --merge out/shard-0 out/shard-1 --out out/reproduce`.
    #[arg(long, num_args = 1..)]
    pub merge: Vec<PathBuf>,
    /// Run the experiments of one wrong model (a paper's rule replaced by a plausible wrong
    /// one, see --list) and check their claims, which should then fail. Output goes to
    /// `out/reproduce-wrong-ID` unless --out says otherwise. Example:
    /// `cdnlab reproduce --wrong gwtw-uniform`.
    #[arg(long, value_name = "ID")]
    pub wrong: Option<String>,
}

/// Runs the command.
pub fn run(a: &ReproduceArgs) -> Result<()> {
    if a.list {
        for r in &registry() {
            outln!("{:<14} {:<10} {}", r.id, r.paper, r.title);
        }
        outln!("\nwrong models (--wrong ID):");
        for w in &wrong::all() {
            outln!("{:<24} {}", w.id, w.what);
        }
        return Ok(());
    }
    reproduce(&ReproducePlan {
        full: a.full,
        out: a.out.clone(),
        replace: a.replace,
        threads: a.threads.count,
        only: a.only.clone(),
        shard: a.shard.as_deref().map(Shard::parse).transpose()?,
        merge: a.merge.clone(),
        wrong: a.wrong.clone(),
    })
}
