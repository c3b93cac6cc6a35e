//! `cdnlab cache-hierarchy`: the flags of a two-tier replay (edges and a shared parent), and its
//! table, JSON or CSV, and figure.

use super::replay::TraceArgs;
use super::{Threads, items, named};
use crate::say::outln;
use cdnlab::Named;
use cdnlab::cache::admission::Admission;
use cdnlab::cache::{Policy, Unit};
use cdnlab_lab::Result;
use cdnlab_lab::error::ArgStyle;
use cdnlab_lab::trace::hierarchy::{
    HIERARCHY_COLUMNS, HierarchyPlan, HierarchyRow, TierSpec, draw, hierarchy,
};
use cdnlab_lab::trace::replay::{SizeSpec, parse_sizes, size_unit};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cdnlab cache-hierarchy`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab cache-hierarchy --trace t.oracleGeneral --edges 4 --edge-size 0.01 --parent-size 0.01,0.03,0.1
  cdnlab cache-hierarchy --trace cdn.oracleGeneral --edges 8 --route random --edge-size 1GiB \\
      --parent-policy s3fifo --parent-size 8GiB,32GiB --edge-admission second-hit --ttl 1h
  cdnlab cache-hierarchy --trace log.csv --format csv --csv-header --csv-id 2 --csv-size 3 \
      --route client:4 --edge-size 1GiB --parent-size 8GiB     each client (column 4) to one edge
Each request goes to an edge by --route; an edge's misses go to the parent; the parent's misses
to the origin. Per parent size: each tier's hit and byte hit ratios, the share of requests and
bytes it served, and the origin's traffic; the figure draws those shares against the parent size.")]
pub struct HierarchyArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Number of edge caches.
    #[arg(long, default_value_t = 4)]
    pub edges: usize,
    /// How a request picks its edge: hash (by object id: the edges split the objects), modulo
    /// (id mod edges), random (each request to a random edge: popular objects sit in every
    /// edge), client:COL (by a hash of column COL of a CSV trace: each client to one edge, as
    /// DNS or anycast maps it).
    #[arg(long, default_value = "hash")]
    pub route: String,
    /// Each edge's eviction policy (`cdnlab cache-replay --help` lists them).
    #[arg(long, default_value = Policy::Lru.name(), value_parser = named::<Policy>())]
    pub edge_policy: Policy,
    /// Each edge's size, as cache-replay's --size reads one (0.01: a share of the working set;
    /// 1000; 1GiB).
    #[arg(long)]
    pub edge_size: String,
    /// Admission at each edge (all, second-hit, bloom[:N], size:N, prob:P, adaptsize).
    #[arg(long, default_value = "all")]
    pub edge_admission: String,
    /// The parent's eviction policy.
    #[arg(long, default_value = Policy::Lru.name(), value_parser = named::<Policy>())]
    pub parent_policy: Policy,
    /// The parent's sizes, comma-separated: one configuration each.
    #[arg(long)]
    pub parent_size: String,
    /// Admission at the parent.
    #[arg(long, default_value = "all")]
    pub parent_admission: String,
    /// What sizes count: objects or bytes [default: bytes when a size has a byte unit].
    #[arg(long)]
    pub size_unit: Option<String>,
    /// Time to live at every tier (as cache-replay's --ttl).
    #[arg(long)]
    pub ttl: Option<String>,
    #[command(flatten)]
    pub threads: Threads,
    /// Print one JSON object per (parent size, tier), one a line.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
    /// Where to draw the shares served (an .svg; the .png beside it), with two parent sizes or
    /// more.
    #[arg(long, default_value = "out/cache-hierarchy/served.svg")]
    pub plot: PathBuf,
    /// Draw nothing.
    #[arg(long)]
    pub no_plot: bool,
}

fn admission(s: &str, flag: &str) -> Result<Admission> {
    s.parse()
        .map_err(|e| cdnlab_lab::Error::Usage(format!("{flag}: {e}")))
}

/// Runs the command.
pub fn run(a: &HierarchyArgs) -> Result<()> {
    let asked = a.size_unit.as_deref().map(str::parse::<Unit>).transpose()?;
    let edge = parse_sizes(&[a.edge_size.as_str()], "--edge-size")?;
    let parent = parse_sizes(&items(&a.parent_size), "--parent-size")?;
    let all: Vec<SizeSpec> = edge.iter().chain(&parent).copied().collect();
    let plan = HierarchyPlan {
        input: a.input.input()?,
        unit: size_unit(&all, asked, "--edge-size and --parent-size")?,
        edges: a.edges,
        edge: TierSpec {
            policy: a.edge_policy,
            size: edge[0],
            admission: admission(&a.edge_admission, "--edge-admission")?,
        },
        route: a.route.parse()?,
        parent: TierSpec {
            policy: a.parent_policy,
            size: parent[0],
            admission: admission(&a.parent_admission, "--parent-admission")?,
        },
        parent_sizes: parent,
        ttl: cdnlab_lab::trace::replay::parse_ttl(a.ttl.as_deref(), ArgStyle::Cli)?,
        threads: a.threads.count,
        style: ArgStyle::Cli,
    };
    let svg = (!a.no_plot && plan.parent_sizes.len() >= 2)
        .then(|| cdnlab_lab::plot::plot_target(&a.plot))
        .transpose()?;
    let rows = hierarchy(&plan)?;
    if a.json {
        for r in &rows {
            outln!("{}", serde_json::to_value(r).unwrap_or_default());
        }
    } else if a.csv {
        print_csv(&rows);
    } else {
        print_table(&plan, &rows);
    }
    if let Some(svg) = svg {
        let files = draw(&plan, &rows, &svg)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("shares served: {}", names.join(", "));
    }
    Ok(())
}

fn print_csv(rows: &[HierarchyRow]) {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(HIERARCHY_COLUMNS);
    for r in rows {
        let v = serde_json::to_value(r).unwrap_or_default();
        let _ = w.write_record(HIERARCHY_COLUMNS.iter().map(|k| match &v[*k] {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        }));
    }
    let bytes = w.into_inner().unwrap_or_default();
    outln!("{}", String::from_utf8_lossy(&bytes).trim_end());
}

fn print_table(a: &HierarchyPlan, rows: &[HierarchyRow]) {
    let unit = a.unit.name();
    outln!(
        "trace        {} ({} requests)",
        a.input.path.display(),
        rows.first().map_or(0, |r| r.requests)
    );
    outln!(
        "edges        {} x {} ({} routing); parent {}{}",
        a.edges,
        a.edge.policy.name(),
        a.route.name(),
        a.parent.policy.name(),
        a.ttl
            .as_ref()
            .map_or_else(String::new, |t| format!("; TTL {}", t.name()))
    );
    outln!(
        "{:>14} {:<8} {:>14} {:>12} {:>9} {:>9} {:>10} {:>10}",
        format!("parent ({unit})"),
        "tier",
        format!("size ({unit})"),
        "requests",
        "hit",
        "byte hit",
        "served",
        "bytes"
    );
    for r in rows {
        outln!(
            "{:>14} {:<8} {:>14} {:>12} {:>9.4} {:>9.4} {:>10.4} {:>10.4}",
            r.parent_size,
            r.tier,
            r.size.map_or_else(|| "-".into(), |s| s.to_string()),
            r.requests,
            r.hit_ratio,
            r.byte_hit_ratio,
            r.served_share,
            r.served_byte_share
        );
    }
    outln!(
        "`served`/`bytes`: shares of all requests/bytes served at that tier (the origin's: what \
         the CDN fetched)"
    );
}
