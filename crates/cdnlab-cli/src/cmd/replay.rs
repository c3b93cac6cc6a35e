//! `cdnlab cache-replay`: the flags of a trace replay, and its table, JSON or CSV.

use super::{Threads, items, named};
use crate::say::outln;
use cdnlab::Named;
use cdnlab::cache::strata::Estimator;
use cdnlab::cache::{Policy, Unit};
use cdnlab_lab::Result;
use cdnlab_lab::trace::replay::{
    REPLAY_COLUMNS, ReplayPlan, Replayed, Sampling, draw_mrc, parse_policies, parse_sizes, replay,
    size_unit,
};
use cdnlab_lab::trace::{CsvColumns, Format, TraceInput, csv_delimiter};
use clap::Args;
use std::path::PathBuf;

/// Where a trace is and how to read it (shared by the commands that read traces).
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Trace file (zstd-compressed or not: told by its first bytes).
    #[arg(long)]
    pub trace: PathBuf,
    /// Trace format.
    #[arg(long, value_parser = named::<Format>(), default_value = "oracle-general")]
    pub format: Format,
    /// CSV: column of the object id (1-based).
    #[arg(long, default_value_t = 1)]
    pub csv_id: usize,
    /// CSV: column of the object size in bytes (default: every size is 1).
    #[arg(long)]
    pub csv_size: Option<usize>,
    /// CSV: column of the timestamp (default: the line number).
    #[arg(long)]
    pub csv_time: Option<usize>,
    /// CSV: column of the time to live, in the timestamp's unit (0: none; read with --ttl
    /// trace).
    #[arg(long)]
    pub csv_ttl: Option<usize>,
    /// CSV: the first line is a header.
    #[arg(long)]
    pub csv_header: bool,
    /// CSV: field delimiter (one ASCII character).
    #[arg(long, default_value = ",")]
    pub csv_delimiter: String,
    /// CSV: ids are text (hashed with FNV-1a 64) rather than integers.
    #[arg(long)]
    pub csv_id_text: bool,
}

impl TraceArgs {
    pub fn input(&self) -> Result<TraceInput> {
        Ok(TraceInput {
            path: self.trace.clone(),
            format: self.format,
            csv: CsvColumns {
                id: self.csv_id,
                size: self.csv_size,
                time: self.csv_time,
                ttl: self.csv_ttl,
                header: self.csv_header,
                delimiter: csv_delimiter(&self.csv_delimiter)?,
                id_is_text: self.csv_id_text,
            },
        })
    }
}

/// Arguments of `cdnlab cache-replay`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab cache-replay --trace t.oracleGeneral --policy lru --size 1000
  cdnlab cache-replay --trace t.oracleGeneral --policy lru,fifo,s3fifo --size 0.001,0.01,0.1
  cdnlab cache-replay --trace t.oracleGeneral --policy all --size 0.01,0.1 --size-unit bytes --csv
  cdnlab cache-replay --trace t.oracleGeneral --policy lru,s3fifo --size 64MiB,1GiB,10GiB
  cdnlab cache-replay --trace cdn.oracleGeneral --policy lru --size 1GiB --admission second-hit
  cdnlab cache-replay --trace t.oracleGeneral.zst --policy lru,s3fifo --size 0.01
  cdnlab cache-replay --trace big.oracleGeneral --policy s3fifo --size 0.01,0.1 --sample 0.01
  cdnlab cache-replay --trace cdn.oracleGeneral --policy lru --size 1GiB --ttl 1h
  cdnlab cache-replay --trace cdn.oracleGeneral --policy lru --size 1GiB --ttl 64KiB:1h,1d
  cdnlab cache-replay --trace kv.twr --format twr --policy lru --size 0.1 --ttl trace
  cdnlab cache-replay --trace ids.txt --format text --size 100
  cdnlab cache-replay --trace t.csv --format csv --csv-header --csv-id 2 --size 500 --json
A trace compressed with zstd is decompressed as it streams in, whatever its name.")]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Eviction policies, comma-separated, or `all` (--help lists them).
    #[arg(long, default_value = Policy::Lru.name(), long_help = policy_help())]
    pub policy: String,
    /// Cache sizes, comma-separated: below 1 a fraction of the trace's working set (its distinct
    /// objects, or their bytes with --size-unit bytes), 1 or more an absolute capacity in
    /// --size-unit units, or bytes with a unit (512KiB, 64MB, 1.5GiB: KB, MB, GB are powers of
    /// 1000, KiB, MiB, GiB of 1024).
    #[arg(long)]
    pub size: String,
    /// Admission policy in front of every eviction policy: all (every miss is stored),
    /// second-hit (an object is stored on its second miss; the objects missed once kept
    /// exactly), bloom[:N] (second-hit in rotating Bloom filters sized for N objects, default
    /// 10^6: fixed memory, 1% false positives), size:N (objects smaller than N bytes, e.g.
    /// size:1MiB), prob:P (each miss with probability P), adaptsize (AdaptSize: a miss of s
    /// bytes with probability e^(-s/c), c tuned every 30,000 requests by a model of the cache).
    #[arg(long, default_value = "all")]
    pub admission: String,
    /// What --size counts: objects (every object weighs 1) or bytes (objects weigh their size)
    /// [default: bytes when a size has a byte unit, else objects].
    #[arg(long)]
    pub size_unit: Option<String>,
    /// Time to live: a stored object is fresh until its TTL has passed (in the trace's time
    /// unit); a request that finds it stale is a miss, counted apart as a revalidation
    /// (`expired`), and the copy is refreshed in place. `trace` (each request's TTL: twr's
    /// field, --csv-ttl), a duration for every object (3600, 30m, 1h, 1d), or size classes
    /// SIZE:DURATION,...,DURATION (64KiB:1h,1GiB:6h,1d) [default: none]. A TTL of 0 gives no
    /// freshness: every request for a stored object revalidates (RFC 9111 section 4.2); in a
    /// trace's TTL field, 0 means the object never expires.
    #[arg(long)]
    pub ttl: Option<String>,
    /// Miniature simulation: replay only this share of the objects (spatially, by a hash of
    /// the id, with all their requests), each cache scaled by it, in (0, 1]. The counts are
    /// then the sample's; the ratios estimate the whole trace's.
    #[arg(long, group = "sampling")]
    pub sample: Option<f64>,
    /// Miniature simulation with this many objects (those of smallest hash, found in a first
    /// pass): the rate is this over the trace's distinct objects.
    #[arg(long, conflicts_with = "sample", group = "sampling")]
    pub sample_size: Option<usize>,
    /// With --sample or --sample-size: which objects the sample draws (0, the default, and
    /// any other number each give one fixed sample). The curves of several seeds show how
    /// much an estimate moves with the sample.
    #[arg(long, default_value_t = 0, requires = "sampling")]
    pub sample_seed: u64,
    /// With --sample or --sample-size: how the miniature's misses become the trace's ratios.
    /// adj: misses over R x the trace's requests, caches scaled by R (one pass). strata: a
    /// first pass counts every object; misses are weighed by popularity class (requests 1,
    /// 2-3, 4-7, ...) and caches scaled by the share of objects drawn: about half the error
    /// at the same rate, for the time of that pass (docs/traces.md).
    #[arg(long, default_value = "adj", requires = "sampling")]
    pub estimator: String,
    #[command(flatten)]
    pub threads: Threads,
    /// Print one JSON object per (policy, size), one a line, instead of text.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV (a header, then a row per (policy, size)) instead of text.
    #[arg(long)]
    pub csv: bool,
    /// Where to draw the miss-ratio curve (an .svg; the .png beside it), when there are several
    /// sizes [default: out/cache-replay/mrc.svg].
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Do not draw the miss-ratio curve.
    #[arg(long, conflicts_with = "plot")]
    pub no_plot: bool,
}

/// `--policy`'s long help: every policy of the registry, with its line.
fn policy_help() -> String {
    let mut h = String::from("Eviction policies, comma-separated, or `all`:");
    for p in Policy::ALL {
        h.push_str(&format!("\n  {:<13} {}", p.name(), p.about()));
    }
    h
}

/// Runs the command.
pub fn run(a: &ReplayArgs) -> Result<()> {
    // Flags are checked before the plot's path, and the path before the replay, not after it.
    let policies = parse_policies(&items(&a.policy))?;
    let asked = a.size_unit.as_deref().map(str::parse::<Unit>).transpose()?;
    let sizes = parse_sizes(&items(&a.size), "--size")?;
    let plan = ReplayPlan {
        input: a.input.input()?,
        policies,
        unit: size_unit(&sizes, asked, "--size")?,
        sizes,
        admission: a
            .admission
            .parse()
            .map_err(|e| cdnlab_lab::Error::Usage(format!("--admission: {e}")))?,
        threads: a.threads.count,
        sample: Sampling::from_args(a.sample, a.sample_size, ("--sample", "--sample-size"))?,
        sample_seed: a.sample_seed,
        style: cdnlab_lab::error::ArgStyle::Cli,
        ttl: cdnlab_lab::trace::replay::parse_ttl(
            a.ttl.as_deref(),
            cdnlab_lab::error::ArgStyle::Cli,
        )?,
        estimator: a
            .estimator
            .parse()
            .map_err(|e| cdnlab_lab::Error::Usage(format!("--estimator: {e}")))?,
    };
    let plot = if plan.sizes.len() >= 2 && !a.no_plot {
        let path = a
            .plot
            .clone()
            .unwrap_or_else(|| PathBuf::from("out/cache-replay/mrc.svg"));
        Some(cdnlab_lab::plot::plot_target(&path)?)
    } else {
        None
    };
    let r = replay(&plan)?;
    let mut said = std::collections::HashSet::new();
    for w in r.rows.iter().flat_map(|row| &row.warnings) {
        if said.insert(w) {
            eprintln!("warning: {w}");
        }
    }
    if a.json {
        for row in &r.rows {
            outln!("{}", json(row));
        }
    } else if a.csv {
        print_csv(&r);
    } else {
        print_table(&plan, &r);
    }
    if let Some(path) = plot {
        let files = draw_mrc(&plan, &r, &path)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("miss-ratio curve: {}", names.join(", "));
    }
    Ok(())
}

/// A row as one JSON object (keys in alphabetical order).
fn json(row: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(row).unwrap_or_default()
}

fn print_csv(r: &Replayed) {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(REPLAY_COLUMNS);
    for row in &r.rows {
        let v = json(row);
        let _ = w.write_record(REPLAY_COLUMNS.iter().map(|k| {
            match &v[*k] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                // The warnings, one cell.
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|w| w.as_str().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("; "),
                v => v.to_string(),
            }
        }));
    }
    let bytes = w.into_inner().unwrap_or_default();
    outln!("{}", String::from_utf8_lossy(&bytes).trim_end());
}

fn print_table(a: &ReplayPlan, r: &Replayed) {
    let outs = &r.rows;
    let n = outs.first().map_or(0, |o| o.requests);
    let unit = r.unit.name();
    outln!("trace        {} ({n} requests)", a.input.path.display());
    if let Some((objects, bytes)) = r.wss {
        outln!(
            "working set  {objects} objects, {bytes} bytes ({:.3} s to count)",
            r.wss_s
        );
    }
    if let Some(rate) = outs.first().and_then(|o| o.sample_rate) {
        let seed = match outs.first().and_then(|o| o.sample_seed) {
            Some(k) if k != 0 => format!(" (seed {k})"),
            _ => String::new(),
        };
        match a.estimator {
            Estimator::Adj => outln!(
                "miniature    {rate:.6} of the objects sampled{seed}, {n} of their requests; \
                 each cache scaled by it"
            ),
            Estimator::Strata => outln!(
                "miniature    {rate:.6} of the objects sampled{seed}, {n} of their requests; \
                 each cache scaled by the share drawn, misses weighed by popularity class \
                 (strata, {:.3} s to count the objects)",
                r.wss_s
            ),
        }
    }
    if let [o] = outs.as_slice() {
        outln!(
            "policy       {}, capacity {} {unit}{}",
            o.policy.name(),
            o.size,
            o.miniature_size
                .map_or_else(String::new, |m| format!(" (miniature {m})"))
        );
        outln!("requests     {n}");
        outln!("hits         {}", o.hits);
        outln!("miss ratio   {:.6}", o.miss_ratio);
        if a.ttl.is_some() {
            outln!(
                "expired      {} requests found their object stale (revalidations, counted as \
                 misses), {} bytes; TTL {}",
                o.expired,
                o.expired_bytes,
                o.ttl
            );
        }
        outln!(
            "bytes        {} requested, {} from the cache, {} missed",
            o.bytes,
            o.hit_bytes,
            o.miss_bytes
        );
        outln!("byte miss    {:.6}", o.byte_miss_ratio);
        outln!("read time    {:.3} s", r.read_s);
        outln!("sim time     {:.3} s", o.sim_seconds);
        outln!("throughput   {:.2} Mreq/s (simulation only)", o.mreq_per_s);
        outln!(
            "cache memory {} bytes for {} objects ({:.1} bytes/object)",
            o.cache_heap_bytes,
            o.cached_objects,
            o.heap_bytes_per_cached_object
        );
        return;
    }
    outln!(
        "{} caches on {} threads; reading {:.3} s per pass",
        outs.len(),
        r.threads.min(outs.len()),
        r.read_s
    );
    outln!(
        "{:<8} {:>14} {:>9} {:>12}{} {:>10} {:>10} {:>9} {:>11}",
        "policy",
        format!("size ({unit})"),
        "fraction",
        "hits",
        if a.ttl.is_some() {
            format!(" {:>12}", "expired")
        } else {
            String::new()
        },
        "miss ratio",
        "byte miss",
        "sim s",
        "Mreq/s"
    );
    for o in outs {
        outln!(
            "{:<8} {:>14} {:>9} {:>12}{} {:>10.6} {:>10.6} {:>9.3} {:>11.2}",
            o.policy.name(),
            o.size,
            o.size_fraction
                .map_or_else(|| "-".into(), |f| f.to_string()),
            o.hits,
            if a.ttl.is_some() {
                format!(" {:>12}", o.expired)
            } else {
                String::new()
            },
            o.miss_ratio,
            o.byte_miss_ratio,
            o.sim_seconds,
            o.mreq_per_s
        );
    }
    if let (Some(_), Some(o)) = (&a.ttl, outs.first()) {
        outln!(
            "TTL {}: `expired` counts requests that found their object stale (revalidations, \
             counted as misses too)",
            o.ttl
        );
    }
}
