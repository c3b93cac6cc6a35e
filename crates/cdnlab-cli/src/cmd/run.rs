//! `cdnlab run`, `cdnlab merge` and `cdnlab plot`: the flags of a scenario sweep, of merging its
//! shards and of re-drawing its figures.

use super::{Threads, named};
use crate::say::outln;
use cdnlab_lab::Result;
use cdnlab_lab::plot::Format;
use cdnlab_lab::runner::{self, PlotPlan, Shard};
use cdnlab_lab::scenario::Scenario;
use clap::Args;
use std::path::{Path, PathBuf};

/// Arguments of `cdnlab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Output folder (default: out/NAME, NAME from the scenario).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub threads: Threads,
    /// Run only shard I of N (0 <= I < N): the cells whose index is I modulo N. Combine shard
    /// folders with `cdnlab merge`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Continue an interrupted run in the same folder, skipping finished cells.
    #[arg(long)]
    pub resume: bool,
}

/// `cdnlab run`.
pub fn run(a: &RunArgs) -> Result<()> {
    let sc = Scenario::load(&a.scenario)?;
    let shard = match &a.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&sc.resolved.name));
    let o = runner::run_scenario(&sc, &out, shard, a.threads.count, a.resume, true)?;
    runner::check_failures(&o)
}

/// Arguments of `cdnlab merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard output folders of one scenario.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Folder for the combined results.
    #[arg(long)]
    pub out: PathBuf,
}

/// `cdnlab merge`.
pub fn merge(a: &MergeArgs) -> Result<()> {
    let n = runner::merge_into(&a.dirs, &a.out)?.len();
    eprintln!(
        "merged {n} cells from {} folders into {}",
        a.dirs.len(),
        a.out.display()
    );
    Ok(())
}

/// Arguments of `cdnlab plot`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab plot out/che                              re-draw the scenario's plots (SVG and PNG)
  cdnlab plot out/che --log-y --format png --scale 3
  cdnlab plot out/che --x alpha --y hit_ratio,che_hit_ratio --series cache_size --name alpha
  cdnlab plot out/reproduce/gwtw-e5-quick --x load --y satisfied --series k --where tau=20")]
pub struct PlotArgs {
    /// A finished run's folder (of `cdnlab run`, `merge`, or an experiment of `reproduce`).
    pub dir: PathBuf,
    /// The x axis: a swept parameter. With --y, draws one new plot instead of the scenario's.
    #[arg(long, requires = "y")]
    pub x: Option<String>,
    /// Metrics on the y axis, comma-separated (see `cdnlab experiments`).
    #[arg(long, value_delimiter = ',', requires = "x")]
    pub y: Vec<String>,
    /// A swept parameter whose values are drawn as separate lines.
    #[arg(long, requires = "x")]
    pub series: Option<String>,
    /// Values for the other swept parameters, as NAME=VALUE (repeatable).
    #[arg(long = "where", value_name = "NAME=VALUE", requires = "x")]
    pub filter: Vec<String>,
    /// Logarithmic x axis.
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis.
    #[arg(long)]
    pub log_y: bool,
    /// Title of the new plot.
    #[arg(long, requires = "x")]
    pub title: Option<String>,
    /// Label of the y axis (default: the metric with its unit).
    #[arg(long)]
    pub y_label: Option<String>,
    /// Which files to write.
    #[arg(long, default_value = "both", value_parser = named::<Format>())]
    pub format: Format,
    /// PNG size as a multiple of 760 x 480 px (1 to 8).
    #[arg(long, default_value_t = 2.0)]
    pub scale: f32,
    /// Folder to write to (default: DIR).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// File name (without extension) of the new plot.
    #[arg(long, default_value = "plot")]
    pub name: String,
}

/// `cdnlab plot`.
pub fn plot(a: &PlotArgs) -> Result<()> {
    let written = runner::plot_dir(&PlotPlan {
        dir: a.dir.clone(),
        x: a.x.clone(),
        y: a.y.clone(),
        series: a.series.clone(),
        filter: a.filter.clone(),
        log_x: a.log_x,
        log_y: a.log_y,
        title: a.title.clone(),
        y_label: a.y_label.clone(),
        format: a.format,
        scale: a.scale,
        out: a.out.clone(),
        name: a.name.clone(),
        style: cdnlab_lab::error::ArgStyle::Cli,
    })?;
    for f in written {
        outln!("wrote {}", f.display());
    }
    Ok(())
}
