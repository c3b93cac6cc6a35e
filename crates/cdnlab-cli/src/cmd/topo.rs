//! `cdnlab topo`: statistics, maps and conversions of real network topologies (Topology Zoo
//! GML/GraphML, SNDlib native/XML, topohub JSON).

use super::named;
use crate::say::outln;
use cdnlab::Named;
use cdnlab::topology::{Format, ReadOptions};
use cdnlab_lab::topo::{
    STATS_COLUMNS, TopoInput, attach_series, convert, files_under, load, stats_row, write_map,
};
use cdnlab_lab::{Error, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// Arguments of `cdnlab topo`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab topo stats data/topologies/sndlib/abilene.json
  cdnlab topo stats --csv data/topologies > networks.csv      # one row per network in a folder
  cdnlab topo plot data/topologies/sndlib/geant.json -o geant.png
  cdnlab topo plot data/topologies/zoo -o maps/ --png              # one figure per network
  cdnlab topo convert Geant2012.gml geant.json --drop-uncoordinated
  cdnlab topo convert abilene.txt abilene.json --series demands/ --interval 300

Formats (read): gml, graphml (Topology Zoo), sndlib, sndlib-xml (SNDlib), json (topohub,
networkx node-link). data/fetch-topologies.sh exports all 707 networks that topohub ships.
See docs/topologies.md.")]
pub struct TopoArgs {
    #[command(subcommand)]
    pub command: TopoCommand,
}

/// Topology commands.
#[derive(Debug, Subcommand)]
pub enum TopoCommand {
    /// Nodes, links, degrees, diameter (hops and km), capacity and demand totals.
    Stats(StatsArgs),
    /// A map-like figure: nodes at their coordinates, links weighted by capacity (SVG or PNG).
    Plot(PlotArgs),
    /// Write a topology in another format (json, gml or sndlib), optionally with a demand series.
    Convert(ConvertArgs),
}

/// How to read a topology file.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file's format (default: from its first bytes, else its extension).
    #[arg(long, value_parser = named::<Format>())]
    pub format: Option<Format>,
    /// Drop nodes without coordinates, and their links, instead of refusing the file (the
    /// Topology Zoo gives none for its external nodes).
    #[arg(long)]
    pub drop_uncoordinated: bool,
}

impl ReadArgs {
    fn input(&self, path: &Path) -> TopoInput {
        TopoInput {
            path: path.to_path_buf(),
            format: self.format,
            options: ReadOptions {
                drop_uncoordinated: self.drop_uncoordinated,
            },
        }
    }
}

/// Arguments of `cdnlab topo stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Topology files, or folders (every .gml, .graphml, .json, .xml, .txt under them).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// One CSV row per file (with a header), for joining with other tools' tables.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// One JSON object per file, one a line.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `cdnlab topo plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Topology files, or folders (every topology file under them).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Where to write: for one file, the figure (.svg or .png; default: its name with .svg,
    /// here); for several or a folder, a folder (one figure per file, named by its path).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// With several files: write PNGs (default SVGs).
    #[arg(long)]
    pub png: bool,
}

/// Arguments of `cdnlab topo convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The topology file to read.
    pub input: PathBuf,
    /// The file to write; its format from --to, else its extension (.json, .gml, .txt).
    pub output: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// The format to write: json (holds everything), gml or sndlib.
    #[arg(long, value_parser = named::<Format>())]
    pub to: Option<Format>,
    /// Write even if the format cannot hold everything (demands in GML, a series outside json).
    #[arg(long)]
    pub lossy: bool,
    /// A folder of SNDlib demand matrices (native or XML), one interval a file in name order,
    /// to attach as the topology's demand series.
    #[arg(long, value_name = "DIR")]
    pub series: Option<PathBuf>,
    /// Seconds per interval of --series (default: the files' META granularity).
    #[arg(long, value_name = "SECONDS", requires = "series", value_parser = positive)]
    pub interval: Option<f64>,
}

fn positive(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("{s}: a number of seconds above 0 is allowed")),
    }
}

/// Runs the command.
pub fn run(a: &TopoArgs) -> Result<()> {
    match &a.command {
        TopoCommand::Stats(s) => stats(s),
        TopoCommand::Plot(p) => plot(p),
        TopoCommand::Convert(c) => {
            let mut t = load(&c.read.input(&c.input))?;
            if let Some(dir) = &c.series {
                let n = attach_series(&mut t, dir, c.interval)?;
                eprintln!("attached a demand series of {n} intervals");
            }
            let format =
                c.to.or_else(|| Format::from_extension(&c.output.to_string_lossy()))
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "{}: name the format to write with --to (json, gml or sndlib)",
                            c.output.display()
                        ))
                    })?;
            let lost = convert(&t, &c.output, format, c.lossy)?;
            for l in lost {
                eprintln!("warning: not written: {l}");
            }
            outln!(
                "wrote {} ({}, {} nodes, {} links)",
                c.output.display(),
                format.name(),
                t.nodes.len(),
                t.links.len()
            );
            Ok(())
        }
    }
}

/// The files named, with every topology file under the folders named; whether a folder was.
fn expand(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, bool)> {
    let (mut files, mut folder) = (Vec::new(), false);
    for f in paths {
        if f.is_dir() {
            let under = files_under(f)?;
            if under.is_empty() {
                return Err(Error::file(f, "no topology files in the folder"));
            }
            files.extend(under);
            folder = true;
        } else {
            files.push(f.clone());
        }
    }
    Ok((files, folder))
}

fn plot(p: &PlotArgs) -> Result<()> {
    let (files, folder) = expand(&p.files)?;
    if files.len() == 1 && !folder {
        let t = load(&p.read.input(&files[0]))?;
        let out = p.output.clone().unwrap_or_else(|| {
            PathBuf::from(files[0].file_stem().unwrap_or_default()).with_extension("svg")
        });
        write_map(&t, &out)?;
        outln!("wrote {}", out.display());
        return Ok(());
    }
    let dir = p.output.clone().ok_or_else(|| {
        Error::Usage("several files: name the folder to write the figures to with -o DIR".into())
    })?;
    let ext = if p.png { "png" } else { "svg" };
    let mut failed = 0;
    for f in &files {
        // One name per input path: its folders and stem joined, so that gabriel/25/0.json and
        // gabriel/30/0.json do not overwrite each other.
        let rel = p
            .files
            .iter()
            .find_map(|root| {
                f.strip_prefix(root)
                    .ok()
                    .filter(|r| !r.as_os_str().is_empty())
            })
            .unwrap_or(f.as_path());
        let name = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("-");
        let out = dir.join(format!("{name}.{ext}"));
        match load(&p.read.input(f)).and_then(|t| write_map(&t, &out)) {
            Ok(()) => {}
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
            }
        }
    }
    outln!(
        "wrote {} figures to {}",
        files.len() - failed,
        dir.display()
    );
    if failed > 0 {
        return Err(Error::Failed(format!(
            "{failed} of {} files could not be drawn",
            files.len()
        )));
    }
    Ok(())
}

fn stats(a: &StatsArgs) -> Result<()> {
    let (files, _) = expand(&a.files)?;
    if a.csv {
        outln!("{}", STATS_COLUMNS.join(","));
    }
    let mut failed = 0;
    for f in &files {
        let t = match load(&a.read.input(f)) {
            Ok(t) => t,
            Err(e) if files.len() > 1 => {
                eprintln!("error: {e}");
                failed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let row = stats_row(&t, f);
        if a.csv {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(&row)
                .map_err(|e| Error::Failed(e.to_string()))?;
            let line = String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
            outln!("{}", line.trim_end());
        } else if a.json {
            let obj: serde_json::Map<String, serde_json::Value> = STATS_COLUMNS
                .iter()
                .zip(&row)
                .map(|(k, v)| {
                    let text = serde_json::Value::String(v.clone());
                    let value = if matches!(*k, "name" | "file" | "coordinates") {
                        text
                    } else if let Ok(i) = v.parse::<i64>() {
                        serde_json::Value::from(i)
                    } else {
                        v.parse::<f64>()
                            .ok()
                            .and_then(serde_json::Number::from_f64)
                            .map_or(text, serde_json::Value::Number)
                    };
                    (k.to_string(), value)
                })
                .collect();
            outln!("{}", serde_json::Value::Object(obj));
        } else {
            if files.len() > 1 {
                outln!("");
            }
            for (k, v) in STATS_COLUMNS.iter().zip(&row) {
                outln!("{k:>20}  {v}");
            }
            for n in &t.notes {
                outln!("{:>20}  {n}", "note");
            }
        }
    }
    if failed > 0 {
        return Err(Error::Failed(format!(
            "{failed} of {} files could not be read",
            files.len()
        )));
    }
    Ok(())
}
