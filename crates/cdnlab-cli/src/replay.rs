//! `cdnlab cache-replay`: replays a trace through several cache policies at several sizes in one
//! run and reports each one's miss ratio and throughput, with reading and simulation timed
//! separately; draws the miss-ratio curve when there are several sizes.
//!
//! Sizes below 1 are fractions of the trace's working set (distinct objects, or the bytes of
//! distinct objects at their first request), truncated as libCacheSim's `cachesim` does; 1 or
//! more is an absolute capacity. The (policy, size) caches are shared out over worker threads;
//! each worker streams the trace once and feeds every chunk to each of its caches, so memory
//! stays constant in the trace's length and the results do not depend on the thread count.

use crate::error::{CliError, Result};
use crate::output::outln;
use crate::plot::{Chart, Series};
use cdnlab::Named;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use cdnlab::workload::Request;
use cdnlab::workload::trace::{self, CsvColumns};
use clap::{Args, ValueEnum};
use std::collections::HashSet;
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
    /// Text, one object id a line (every size 1; --csv-id-text for ids that are not numbers).
    Text,
}

/// Where a trace is and how to read it (shared by the commands that read traces).
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Trace file (zstd-compressed or not: told by its first bytes).
    #[arg(long)]
    pub trace: PathBuf,
    /// Trace format.
    #[arg(long, value_enum, default_value = "oracle-general")]
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

/// Arguments of `cdnlab cache-replay`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  cdnlab cache-replay --trace t.oracleGeneral --policy lru --size 1000
  cdnlab cache-replay --trace t.oracleGeneral --policy lru,fifo,s3fifo --size 0.001,0.01,0.1
  cdnlab cache-replay --trace t.oracleGeneral --policy all --size 0.01,0.1 --size-unit bytes --csv
  cdnlab cache-replay --trace t.oracleGeneral.zst --policy lru,s3fifo --size 0.01
  cdnlab cache-replay --trace ids.txt --format text --size 100
  cdnlab cache-replay --trace t.csv --format csv --csv-header --csv-id 2 --size 500 --json
A trace compressed with zstd is decompressed as it streams in, whatever its name.")]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Eviction policies, comma-separated, or `all`: lru, fifo, lfu, s3fifo (libCacheSim's),
    /// sieve, clock, s3fifo-paper (the paper's pseudocode), arc, twoq, slru, wtinylfu, gdsf,
    /// lfuda, belady (offline optimal, from the trace's next accesses), lirs (libCacheSim's),
    /// lirs-paper.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Cache sizes, comma-separated: below 1 a fraction of the trace's working set (its distinct
    /// objects, or their bytes with --size-unit bytes), 1 or more an absolute capacity in
    /// --size-unit units.
    #[arg(long)]
    pub size: String,
    /// What --size counts: objects (every object weighs 1) or bytes (objects weigh their size).
    #[arg(long, default_value = "objects")]
    pub size_unit: String,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_parser = crate::runner::parse_threads)]
    pub threads: Option<usize>,
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

/// A requested size: a fraction of the working set, or an absolute capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
enum SizeSpec {
    Fraction(f64),
    Absolute(u64),
}

/// Parses `--size`: comma-separated numbers above 0; below 1 a fraction, else a whole number.
fn parse_sizes(s: &str) -> Result<Vec<SizeSpec>> {
    let bad = |t: &str, why: &str| {
        CliError::Usage(format!(
            "--size `{t}`: {why} (sizes are comma-separated: below 1 a fraction of the working \
             set, e.g. 0.01; 1 or more a whole capacity, e.g. 1000)"
        ))
    };
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim) {
        let x: f64 = t.parse().map_err(|_| bad(t, "not a number"))?;
        if !(x > 0.0 && x.is_finite()) {
            return Err(bad(t, "a size must be above 0"));
        }
        let spec = if x < 1.0 {
            SizeSpec::Fraction(x)
        } else if x.fract() == 0.0 && x <= u64::MAX as f64 {
            SizeSpec::Absolute(x as u64)
        } else {
            return Err(bad(t, "a capacity of 1 or more must be a whole number"));
        };
        if out.contains(&spec) {
            return Err(bad(t, "given twice"));
        }
        out.push(spec);
    }
    Ok(out)
}

/// Parses `--policy`: comma-separated names, or `all`.
fn parse_policies(s: &str) -> Result<Vec<Policy>> {
    if s.trim() == "all" {
        return Ok(Policy::ALL.to_vec());
    }
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim) {
        let p: Policy = t.parse()?;
        if out.contains(&p) {
            return Err(CliError::Usage(format!("--policy {t}: given twice")));
        }
        out.push(p);
    }
    Ok(out)
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

/// The zstd frame magic number (RFC 8878), as it lies on disk.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The trace's bytes, decompressed as they are read if the file is zstd, with its first bytes
/// available for sniffing.
struct Source {
    reader: std::io::BufReader<Box<dyn Read + Send>>,
    /// The file's length when it is not compressed (its record count is then known up front).
    plain_len: Option<u64>,
}

/// Opens the trace; a zstd file (by its magic number, whatever its name) is decompressed as it
/// streams.
fn open(a: &TraceArgs) -> Result<Source> {
    use std::io::Seek;
    let io = |e| CliError::io(&a.trace, e);
    let mut file = std::fs::File::open(&a.trace).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut magic = [0u8; 4];
    let got = fill(&mut file, &mut magic).map_err(io)?;
    file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    let (inner, plain_len): (Box<dyn Read + Send>, _) = if got == 4 && magic == ZSTD_MAGIC {
        let d = zstd::stream::read::Decoder::new(file)
            .map_err(|e| CliError::file(&a.trace, format!("zstd: {e}")))?;
        (Box::new(d), None)
    } else {
        (Box::new(file), Some(len))
    };
    Ok(Source {
        reader: std::io::BufReader::with_capacity(1 << 16, inner),
        plain_len,
    })
}

/// Refuses a trace whose first bytes do not fit `--format`, naming the likely format and the
/// flag: oracleGeneral records hold zero bytes (small times and sizes in wide fields), so a
/// start of printable text is a text trace; text holds no zero bytes, so one is binary.
fn sniff(a: &TraceArgs, head: &[u8]) -> Result<()> {
    let head = &head[..head.len().min(4096)];
    let text = !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b));
    let binary = head.contains(&0);
    match a.format {
        Format::OracleGeneral if text => Err(CliError::file(
            &a.trace,
            "this looks like a text trace (printable characters, no binary records), not \
             oracleGeneral: use --format csv (with --csv-id, --csv-size, ...) or --format text \
             (one id a line)"
                .to_string(),
        )),
        Format::Csv | Format::Text if binary => Err(CliError::file(
            &a.trace,
            format!(
                "this looks binary (it holds zero bytes), not {}: an oracleGeneral trace is \
                 read with --format oracle-general (the default)",
                if matches!(a.format, Format::Csv) {
                    "CSV"
                } else {
                    "text"
                }
            ),
        )),
        _ => Ok(()),
    }
}

/// An oracleGeneral trace (plain or zstd) decoded chunk by chunk through one reused buffer.
struct OracleChunks<'a> {
    path: &'a std::path::Path,
    compressed: bool,
    reader: std::io::BufReader<Box<dyn Read + Send>>,
    buf: Vec<u8>,
    /// Records decoded so far: the index of the next chunk's first record.
    first: usize,
    sized: bool,
}

impl OracleChunks<'_> {
    /// Decodes the next chunk into `reqs`; false at the end of the trace.
    fn next(&mut self, reqs: &mut Vec<Request>) -> Result<bool> {
        let got = fill(&mut self.reader, &mut self.buf).map_err(|e| {
            CliError::file(
                self.path,
                if self.compressed {
                    format!(
                        "decompressing (zstd): {e}; the compressed file is cut short or damaged"
                    )
                } else {
                    format!("reading: {e}")
                },
            )
        })?;
        if got == 0 {
            return Ok(false);
        }
        // A compressed trace's length is known at its end: a partial last record is reported
        // as truncated there.
        trace::decode_oracle_general(&self.buf[..got], self.first, self.sized, reqs)
            .map_err(|e| CliError::file(self.path, e.to_string()))?;
        self.first += reqs.len();
        Ok(true)
    }
}

/// Reads and decodes `chunks` on a second thread while `each` runs on this one: reading and
/// decompression are hidden behind the simulation instead of added to it. Two chunks are in
/// flight and their buffers are recycled, so memory stays constant. Returns the seconds this
/// thread waited for the reader (reading not hidden). The order of chunks, hence every result,
/// is the same as without it.
fn read_ahead_into(mut chunks: OracleChunks, each: &mut impl FnMut(&[Request])) -> Result<f64> {
    use std::sync::mpsc;
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Result<Vec<Request>>>(2);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<Request>>();
        s.spawn(move || {
            loop {
                let mut reqs = empty_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK_RECORDS));
                let sent = match chunks.next(&mut reqs) {
                    Ok(false) if chunks.first == 0 => full_tx.send(Err(CliError::file(
                        chunks.path,
                        trace::TraceError::Empty.to_string(),
                    ))),
                    Ok(false) => return,
                    Ok(true) => full_tx.send(Ok(reqs)),
                    Err(e) => full_tx.send(Err(e)),
                };
                // Stops when the consumer has gone (it failed) or after an error was sent.
                if sent.is_err() {
                    return;
                }
            }
        });
        let mut waited = 0.0;
        loop {
            let t = Instant::now();
            // The reader ends the stream by hanging up (or by sending an error).
            let Ok(msg) = full_rx.recv() else { break };
            waited += t.elapsed().as_secs_f64();
            let reqs = msg?;
            crate::stop::check()?;
            each(&reqs);
            // The reader may have finished already; the buffer is then simply dropped.
            let _ = empty_tx.send(reqs);
        }
        Ok(waited)
    })
}

/// Whether a second core is free to read ahead while `workers` threads simulate.
pub(crate) fn spare_core(workers: usize) -> bool {
    std::thread::available_parallelism().map_or(1, |n| n.get()) > workers
}

/// Streams the trace to `each` chunk by chunk, with one reused buffer (oracleGeneral, plain or
/// zstd: constant memory), or reads a text trace whole and hands it over in chunks. Returns
/// the seconds spent reading, decompressing and decoding (the time inside `each` excluded).
/// With `read_ahead`, an oracleGeneral trace is read on a second thread while `each` runs, and
/// the seconds returned are those `each`'s thread waited for it.
/// With `next_access`, a CSV or text trace is read whole first, to fill in each request's next
/// access (Belady needs it; oracleGeneral carries it); otherwise it streams in chunks, in
/// constant memory.
pub(crate) fn stream(
    a: &TraceArgs,
    sized: bool,
    next_access: bool,
    read_ahead: bool,
    mut each: impl FnMut(&[Request]),
) -> Result<f64> {
    use std::io::BufRead;
    let bad = |e: trace::TraceError| CliError::file(&a.trace, e.to_string());
    let t0 = Instant::now();
    let mut src = open(a)?;
    let head = src
        .reader
        .fill_buf()
        .map_err(|e| CliError::file(&a.trace, format!("reading (or decompressing): {e}")))?;
    sniff(a, head)?;
    let mut read_s = t0.elapsed().as_secs_f64();
    match a.format {
        Format::OracleGeneral => {
            if let Some(len) = src.plain_len {
                trace::check_oracle_general_length(len).map_err(bad)?;
            }
            let mut chunks = OracleChunks {
                path: &a.trace,
                compressed: src.plain_len.is_none(),
                reader: src.reader,
                buf: vec![0u8; CHUNK_RECORDS * trace::ORACLE_GENERAL_RECORD],
                first: 0,
                sized,
            };
            if read_ahead {
                read_s += read_ahead_into(chunks, &mut each)?;
            } else {
                let mut reqs = Vec::with_capacity(CHUNK_RECORDS);
                loop {
                    let t = Instant::now();
                    let more = chunks.next(&mut reqs)?;
                    read_s += t.elapsed().as_secs_f64();
                    if !more {
                        break;
                    }
                    crate::stop::check()?;
                    each(&reqs);
                }
                if chunks.first == 0 {
                    return Err(bad(trace::TraceError::Empty));
                }
            }
        }
        Format::Csv | Format::Text if next_access => {
            let t = Instant::now();
            let reqs = trace::read_csv(src.reader, &text_columns(a)?).map_err(bad)?;
            read_s += t.elapsed().as_secs_f64();
            for chunk in reqs.chunks(CHUNK_RECORDS) {
                crate::stop::check()?;
                each(chunk);
            }
        }
        Format::Csv | Format::Text => {
            let mut rdr = trace::CsvStream::new(src.reader, &text_columns(a)?).map_err(bad)?;
            let mut reqs = Vec::with_capacity(CHUNK_RECORDS);
            let mut total = 0;
            loop {
                let t = Instant::now();
                reqs.clear();
                let got = rdr.next_chunk(&mut reqs, CHUNK_RECORDS).map_err(bad)?;
                read_s += t.elapsed().as_secs_f64();
                if got == 0 {
                    break;
                }
                total += got;
                crate::stop::check()?;
                each(&reqs);
            }
            if total == 0 {
                return Err(bad(trace::TraceError::Empty));
            }
        }
    }
    Ok(read_s)
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

/// The column mapping of a CSV or one-id-a-line trace.
fn text_columns(a: &TraceArgs) -> Result<CsvColumns> {
    if matches!(a.format, Format::Text) {
        // One field a line: a delimiter no id line holds.
        return Ok(CsvColumns {
            id: 1,
            size: None,
            time: None,
            header: false,
            delimiter: b'\t',
            id_is_text: a.csv_id_text,
        });
    }
    let delimiter = match a.csv_delimiter.as_bytes() {
        [d] => *d,
        _ => {
            return Err(CliError::Usage(format!(
                "--csv-delimiter `{}`: one ASCII character is allowed",
                a.csv_delimiter
            )));
        }
    };
    Ok(CsvColumns {
        id: a.csv_id,
        size: a.csv_size,
        time: a.csv_time,
        header: a.csv_header,
        delimiter,
        id_is_text: a.csv_id_text,
    })
}

/// The trace's working set: distinct objects, and their bytes at each one's first request
/// (libCacheSim's `cal_working_set_size`, without its sampling of traces above 1 GiB).
fn working_set(a: &TraceArgs, sized: bool) -> Result<(u64, u64)> {
    let mut seen = HashSet::new();
    let mut bytes = 0u64;
    stream(a, sized, false, spare_core(1), |reqs| {
        for r in reqs {
            if seen.insert(r.id) {
                bytes += u64::from(r.size);
            }
        }
    })?;
    Ok((seen.len() as u64, bytes))
}

/// One (policy, size) replay's outcome.
struct Outcome {
    policy: Policy,
    spec: SizeSpec,
    capacity: u64,
    requests: u64,
    hits: u64,
    sim_s: f64,
    cached_objects: usize,
    heap_bytes: usize,
}

/// A cache being replayed, with its counters.
struct Job {
    policy: Policy,
    spec: SizeSpec,
    capacity: u64,
    cache: Box<dyn Cache + Send>,
    requests: u64,
    hits: u64,
    sim_s: f64,
}

/// A worker's jobs (with their order numbers) after the replay, and its reading time.
type WorkerDone = (Vec<(usize, Job)>, f64);

/// Replays the jobs: worker w takes jobs w, w + W, ... and streams the trace once for them.
/// Returns the outcomes in job order and the largest reading time of a worker.
fn replay_all(
    a: &ReplayArgs,
    sized: bool,
    jobs: Vec<Job>,
    threads: usize,
) -> Result<(Vec<Outcome>, f64)> {
    let workers = threads.clamp(1, jobs.len().max(1));
    let read_ahead = spare_core(workers);
    let mut shares: Vec<Vec<(usize, Job)>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, j) in jobs.into_iter().enumerate() {
        shares[i % workers].push((i, j));
    }
    let results: Vec<Result<WorkerDone>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|mut share| {
                s.spawn(move || {
                    let offline = share.iter().any(|(_, j)| j.policy.offline());
                    let read_s = stream(&a.input, sized, offline, read_ahead, |reqs| {
                        for (_, j) in share.iter_mut() {
                            let t = Instant::now();
                            j.hits += j.cache.replay_dyn(reqs);
                            j.sim_s += t.elapsed().as_secs_f64();
                            j.requests += reqs.len() as u64;
                        }
                    })?;
                    Ok((share, read_s))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("replay worker panicked"))
            .collect()
    });
    let mut done = Vec::new();
    let mut read_s: f64 = 0.0;
    for r in results {
        let (share, t) = r?;
        read_s = read_s.max(t);
        done.extend(share);
    }
    done.sort_by_key(|(i, _)| *i);
    let outcomes = done
        .into_iter()
        .map(|(_, j)| Outcome {
            policy: j.policy,
            spec: j.spec,
            capacity: j.capacity,
            requests: j.requests,
            hits: j.hits,
            sim_s: j.sim_s,
            cached_objects: j.cache.len(),
            heap_bytes: j.cache.heap_bytes(),
        })
        .collect();
    Ok((outcomes, read_s))
}

/// A finished replay: one row per (policy, size), in the order asked, with the keys of
/// `--json`, and what the text table and the plot need.
pub struct Replayed {
    pub rows: Vec<serde_json::Value>,
    outs: Vec<Outcome>,
    policies: Vec<Policy>,
    wss: Option<(u64, u64)>,
    unit: Unit,
    read_s: f64,
    wss_s: f64,
    threads: usize,
}

/// Replays the trace through every (policy, size) of `a`: what `cdnlab cache-replay` prints,
/// as data.
pub fn replay(a: &ReplayArgs) -> Result<Replayed> {
    let policies = parse_policies(&a.policy)?;
    let specs = parse_sizes(&a.size)?;
    let unit: Unit = a.size_unit.parse()?;
    let sized = unit == Unit::Bytes;
    let t0 = Instant::now();
    let wss = if specs.iter().any(|s| matches!(s, SizeSpec::Fraction(_))) {
        Some(working_set(&a.input, sized)?)
    } else {
        None
    };
    let wss_s = t0.elapsed().as_secs_f64();
    let mut jobs = Vec::new();
    for &policy in &policies {
        for &spec in &specs {
            let amount = match spec {
                SizeSpec::Absolute(n) => n,
                SizeSpec::Fraction(f) => {
                    let (objects, bytes) = wss.expect("computed for fractions");
                    let whole = if sized { bytes } else { objects };
                    // Truncated, as libCacheSim does.
                    (whole as f64 * f) as u64
                }
            };
            let cap = Capacity::new(amount, unit).map_err(|_| {
                CliError::Usage(match spec {
                    SizeSpec::Fraction(f) => format!(
                        "--size {f}: {f} of the working set ({} {}) is less than 1; give a \
                         larger fraction",
                        wss.map_or(0, |w| if sized { w.1 } else { w.0 }),
                        unit.name()
                    ),
                    SizeSpec::Absolute(_) => "--size: the capacity must be at least 1".into(),
                })
            })?;
            jobs.push(Job {
                policy,
                spec,
                capacity: amount,
                cache: policy.build(cap),
                requests: 0,
                hits: 0,
                sim_s: 0.0,
            });
        }
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let (outs, read_s) = replay_all(a, sized, jobs, threads)?;
    let rss = peak_rss();
    let rows: Vec<serde_json::Value> = outs
        .iter()
        .map(|o| {
            let n = o.requests;
            serde_json::json!({
                "trace": a.input.trace.display().to_string(),
                "format": a.input.format.to_possible_value().map(|v| v.get_name().to_string()),
                "policy": o.policy.name(),
                "size": o.capacity,
                "size_fraction": match o.spec { SizeSpec::Fraction(f) => Some(f), _ => None },
                "size_unit": unit.name(),
                "requests": n,
                "hits": o.hits,
                "misses": n - o.hits,
                "miss_ratio": (n - o.hits) as f64 / n.max(1) as f64,
                "read_seconds": read_s,
                "sim_seconds": o.sim_s,
                "mreq_per_s": n as f64 / o.sim_s.max(1e-9) / 1e6,
                "cached_objects": o.cached_objects,
                "cache_heap_bytes": o.heap_bytes,
                "heap_bytes_per_cached_object": o.heap_bytes as f64 / o.cached_objects.max(1) as f64,
                "working_set_objects": wss.map(|w| w.0),
                "working_set_bytes": wss.map(|w| w.1),
                "peak_rss_bytes": rss,
            })
        })
        .collect();
    Ok(Replayed {
        rows,
        outs,
        policies,
        wss,
        unit,
        read_s,
        wss_s,
        threads,
    })
}

/// Runs the command.
pub fn run(a: &ReplayArgs) -> Result<()> {
    // Flags are checked before the plot's path, and the path before the replay, not after it.
    parse_policies(&a.policy)?;
    a.size_unit.parse::<Unit>()?;
    let plot = if parse_sizes(&a.size)?.len() >= 2 && !a.no_plot {
        let path = a
            .plot
            .clone()
            .unwrap_or_else(|| PathBuf::from("out/cache-replay/mrc.svg"));
        Some(crate::runner::plot_target(&path)?)
    } else {
        None
    };
    let r = replay(a)?;
    if a.json {
        for row in &r.rows {
            outln!("{row}");
        }
    } else if a.csv {
        print_csv(&r.rows);
    } else {
        print_table(a, &r.outs, r.wss, r.unit, r.read_s, r.wss_s, r.threads);
    }
    if let Some(path) = plot {
        let files = draw_mrc(a, &r.outs, &r.policies, r.unit, &path)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("miss-ratio curve: {}", names.join(", "));
    }
    Ok(())
}

/// The CSV columns, in order: the JSON keys.
const CSV_KEYS: [&str; 19] = [
    "trace",
    "format",
    "policy",
    "size",
    "size_fraction",
    "size_unit",
    "requests",
    "hits",
    "misses",
    "miss_ratio",
    "read_seconds",
    "sim_seconds",
    "mreq_per_s",
    "cached_objects",
    "cache_heap_bytes",
    "heap_bytes_per_cached_object",
    "working_set_objects",
    "working_set_bytes",
    "peak_rss_bytes",
];

fn print_csv(rows: &[serde_json::Value]) {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(CSV_KEYS);
    for r in rows {
        let _ = w.write_record(CSV_KEYS.iter().map(|k| match &r[*k] {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        }));
    }
    let bytes = w.into_inner().unwrap_or_default();
    outln!("{}", String::from_utf8_lossy(&bytes).trim_end());
}

fn print_table(
    a: &ReplayArgs,
    outs: &[Outcome],
    wss: Option<(u64, u64)>,
    unit: Unit,
    read_s: f64,
    wss_s: f64,
    threads: usize,
) {
    let n = outs.first().map_or(0, |o| o.requests);
    outln!("trace        {} ({n} requests)", a.input.trace.display());
    if let Some((objects, bytes)) = wss {
        outln!("working set  {objects} objects, {bytes} bytes ({wss_s:.3} s to count)");
    }
    if let [o] = outs {
        let miss_ratio = (n - o.hits) as f64 / n.max(1) as f64;
        let mreq = n as f64 / o.sim_s.max(1e-9) / 1e6;
        let per_obj = o.heap_bytes as f64 / o.cached_objects.max(1) as f64;
        outln!(
            "policy       {}, capacity {} {}",
            o.policy.name(),
            o.capacity,
            unit.name()
        );
        outln!("requests     {n}");
        outln!("hits         {}", o.hits);
        outln!("miss ratio   {miss_ratio:.6}");
        outln!("read time    {read_s:.3} s");
        outln!("sim time     {:.3} s", o.sim_s);
        outln!("throughput   {mreq:.2} Mreq/s (simulation only)");
        outln!(
            "cache memory {} bytes for {} objects ({per_obj:.1} bytes/object)",
            o.heap_bytes,
            o.cached_objects
        );
        return;
    }
    outln!(
        "{} caches on {} threads; reading {read_s:.3} s per pass",
        outs.len(),
        threads.min(outs.len())
    );
    outln!(
        "{:<8} {:>14} {:>9} {:>12} {:>10} {:>9} {:>11}",
        "policy",
        format!("size ({})", unit.name()),
        "fraction",
        "hits",
        "miss ratio",
        "sim s",
        "Mreq/s"
    );
    for o in outs {
        outln!(
            "{:<8} {:>14} {:>9} {:>12} {:>10.6} {:>9.3} {:>11.2}",
            o.policy.name(),
            o.capacity,
            match o.spec {
                SizeSpec::Fraction(f) => f.to_string(),
                SizeSpec::Absolute(_) => "-".into(),
            },
            o.hits,
            (o.requests - o.hits) as f64 / o.requests.max(1) as f64,
            o.sim_s,
            o.requests as f64 / o.sim_s.max(1e-9) / 1e6
        );
    }
}

/// The miss-ratio curve: one line per policy, miss ratio against the capacity (log axis).
fn draw_mrc(
    a: &ReplayArgs,
    outs: &[Outcome],
    policies: &[Policy],
    unit: Unit,
    svg_path: &std::path::Path,
) -> Result<Vec<PathBuf>> {
    let chart = Chart {
        title: format!(
            "Miss-ratio curve: {}",
            a.input.trace.file_name().map_or_else(
                || a.input.trace.display().to_string(),
                |f| f.to_string_lossy().into_owned()
            )
        ),
        x_label: format!("cache size ({})", unit.name()),
        y_label: "miss ratio".into(),
        log_x: true,
        log_y: false,
        y_bounds: Some((0.0, 1.0)),
        series: policies
            .iter()
            .map(|p| Series {
                label: p.name().into(),
                points: outs
                    .iter()
                    .filter(|o| o.policy == *p)
                    .map(|o| {
                        (
                            o.capacity as f64,
                            (o.requests - o.hits) as f64 / o.requests.max(1) as f64,
                            f64::NAN,
                        )
                    })
                    .collect(),
                dash: 0,
            })
            .collect(),
    };
    crate::runner::write_chart(&chart, svg_path, crate::runner::Format::Both, 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_fractions_below_one_and_whole_capacities_above() {
        assert_eq!(
            parse_sizes("0.001, 0.5,1000").unwrap(),
            [
                SizeSpec::Fraction(0.001),
                SizeSpec::Fraction(0.5),
                SizeSpec::Absolute(1000)
            ]
        );
        assert_eq!(parse_sizes("1").unwrap(), [SizeSpec::Absolute(1)]);
        for (bad, why) in [
            ("0", "above 0"),
            ("-0.1", "above 0"),
            ("1.5", "whole number"),
            ("x", "not a number"),
            ("0.1,0.1", "twice"),
            ("", "not a number"),
            ("nan", "above 0"),
        ] {
            let e = parse_sizes(bad).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("--size"), "{bad}: {e}");
        }
    }

    #[test]
    fn policies_by_name_or_all() {
        assert_eq!(
            parse_policies("lru,sieve").unwrap(),
            [Policy::Lru, Policy::Sieve]
        );
        assert_eq!(parse_policies("all").unwrap(), Policy::ALL);
        let e = parse_policies("lru,nope").unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("s3fifo"), "{e}");
        assert!(
            parse_policies("lru,lru")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
    }
}
