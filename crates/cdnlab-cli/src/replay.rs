//! `cdnlab cache-replay`: replays a trace through one cache policy and reports the miss ratio and
//! the throughput, with reading and simulation timed separately.

use crate::error::{CliError, Result};
use crate::output;
use crate::output::outln;
use cdnlab::Named;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use cdnlab::workload::trace::{self, CsvColumns};
use clap::{Args, ValueEnum};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

/// Trace file formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// libCacheSim oracleGeneral binary: 24-byte records (u32 time, u64 id, u32 size,
    /// i64 next-access), little endian.
    OracleGeneral,
    /// Text, one request a line; columns chosen with --csv-id, --csv-size, --csv-time.
    Csv,
}

/// Arguments of `cdnlab cache-replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trace file to replay.
    #[arg(long)]
    pub trace: PathBuf,
    /// Trace format.
    #[arg(long, value_enum, default_value = "oracle-general")]
    pub format: Format,
    /// Eviction policy: lru, fifo, lfu, s3fifo or sieve.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Cache capacity, in --size-unit units (at least 1).
    #[arg(long)]
    pub size: u64,
    /// What --size counts: objects (every object weighs 1) or bytes (objects weigh their size).
    #[arg(long, default_value = "objects")]
    pub size_unit: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// CSV: column of the object id (1-based).
    #[arg(long, default_value_t = 1)]
    pub csv_id: usize,
    /// CSV: column of the object size in bytes (default: every size is 1).
    #[arg(long)]
    pub csv_size: Option<usize>,
    /// CSV: column of the timestamp (default: the line number).
    #[arg(long)]
    pub csv_time: Option<usize>,
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

/// Peak resident memory of this process (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Records decoded and replayed at a time: small enough to stay in cache beside the policy's
/// state, large enough that per-chunk work is negligible.
const CHUNK_RECORDS: usize = 1 << 14;

/// What a replay counted, and where its time went.
struct Replayed {
    requests: u64,
    hits: u64,
    read_s: f64,
    sim_s: f64,
}

/// Streams an oracleGeneral file through `cache` in chunks, with one reused buffer: no copy of
/// the whole trace in memory (which cost more than the simulation on large traces). Time in
/// reading and decoding counts as reading; time in the cache as simulation.
fn stream_oracle_general(a: &ReplayArgs, sized: bool, cache: &mut dyn Cache) -> Result<Replayed> {
    let bad = |e: trace::TraceError| CliError::file(&a.trace, e.to_string());
    let mut file = std::fs::File::open(&a.trace).map_err(|e| CliError::io(&a.trace, e))?;
    let len = file
        .metadata()
        .map_err(|e| CliError::io(&a.trace, e))?
        .len();
    trace::check_oracle_general_length(len).map_err(bad)?;
    let mut buf = vec![0u8; CHUNK_RECORDS * trace::ORACLE_GENERAL_RECORD];
    let mut reqs = Vec::with_capacity(CHUNK_RECORDS);
    let mut r = Replayed {
        requests: 0,
        hits: 0,
        read_s: 0.0,
        sim_s: 0.0,
    };
    loop {
        let t = Instant::now();
        let got = fill(&mut file, &mut buf).map_err(|e| CliError::io(&a.trace, e))?;
        if got == 0 {
            break;
        }
        trace::decode_oracle_general(&buf[..got], r.requests as usize, sized, &mut reqs)
            .map_err(bad)?;
        let t1 = Instant::now();
        r.hits += cache.replay_dyn(&reqs);
        r.sim_s += t1.elapsed().as_secs_f64();
        r.read_s += (t1 - t).as_secs_f64();
        r.requests += reqs.len() as u64;
    }
    if r.requests == 0 {
        return Err(bad(trace::TraceError::Empty));
    }
    Ok(r)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn fill(f: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads a CSV trace whole, then replays it.
fn replay_csv(a: &ReplayArgs, cache: &mut dyn Cache) -> Result<Replayed> {
    let delimiter = match a.csv_delimiter.as_bytes() {
        [d] => *d,
        _ => {
            return Err(CliError::Usage(format!(
                "--csv-delimiter `{}`: one ASCII character is allowed",
                a.csv_delimiter
            )));
        }
    };
    let cols = CsvColumns {
        id: a.csv_id,
        size: a.csv_size,
        time: a.csv_time,
        header: a.csv_header,
        delimiter,
        id_is_text: a.csv_id_text,
    };
    let t0 = Instant::now();
    let bytes = output::read(&a.trace)?;
    let reqs =
        trace::read_csv(&bytes[..], &cols).map_err(|e| CliError::file(&a.trace, e.to_string()))?;
    let t1 = Instant::now();
    let hits = cache.replay_dyn(&reqs);
    Ok(Replayed {
        requests: reqs.len() as u64,
        hits,
        read_s: (t1 - t0).as_secs_f64(),
        sim_s: t1.elapsed().as_secs_f64(),
    })
}

/// Runs the command.
pub fn run(a: &ReplayArgs) -> Result<()> {
    let policy: Policy = a.policy.parse()?;
    let unit: Unit = a.size_unit.parse()?;
    let cap = Capacity::new(a.size, unit).map_err(|_| {
        CliError::Usage(format!(
            "--size {}: the capacity must be at least 1",
            a.size
        ))
    })?;
    let mut cache = policy.build(cap);
    let r = match a.format {
        Format::OracleGeneral => stream_oracle_general(a, unit == Unit::Bytes, cache.as_mut()),
        Format::Csv => replay_csv(a, cache.as_mut()),
    }?;
    let (n, hits, read_s, sim_s) = (r.requests, r.hits, r.read_s, r.sim_s);
    let miss_ratio = (n - hits) as f64 / n as f64;
    let mreq = n as f64 / sim_s.max(1e-9) / 1e6;
    let heap = cache.heap_bytes();
    let per_obj = heap as f64 / cache.len().max(1) as f64;
    if a.json {
        let v = serde_json::json!({
            "trace": a.trace.display().to_string(),
            "format": a.format.to_possible_value().map(|v| v.get_name().to_string()),
            "policy": policy.name(),
            "size": a.size,
            "size_unit": a.size_unit,
            "requests": n,
            "hits": hits,
            "misses": n - hits,
            "miss_ratio": miss_ratio,
            "read_seconds": read_s,
            "sim_seconds": sim_s,
            "mreq_per_s": mreq,
            "cached_objects": cache.len(),
            "cache_heap_bytes": heap,
            "heap_bytes_per_cached_object": per_obj,
            "peak_rss_bytes": peak_rss(),
        });
        outln!("{v}");
    } else {
        outln!("trace        {} ({n} requests)", a.trace.display());
        outln!(
            "policy       {}, capacity {} {}",
            policy.name(),
            a.size,
            a.size_unit
        );
        outln!("requests     {n}");
        outln!("hits         {hits}");
        outln!("miss ratio   {miss_ratio:.6}");
        outln!("read time    {read_s:.3} s");
        outln!("sim time     {sim_s:.3} s");
        outln!("throughput   {mreq:.2} Mreq/s (simulation only)");
        outln!(
            "cache memory {heap} bytes for {} objects ({per_obj:.1} bytes/object)",
            cache.len()
        );
    }
    Ok(())
}
