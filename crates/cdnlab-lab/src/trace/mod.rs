//! Trace input, shared by every command that reads a trace (replay, MRC, statistics): where a
//! trace is and how to read it ([`TraceInput`]), and [`stream`], which hands it over chunk by
//! chunk in constant memory (oracleGeneral plain or zstd-compressed, CSV, one id a line), with
//! the file's first bytes checked against the format asked for.

pub mod hierarchy;
pub mod mrc;
pub mod replay;
pub mod stats;
pub mod synthetic;

use crate::error::{Error, Result};
use cdnlab::workload::Request;
use cdnlab::workload::trace;
pub use cdnlab::workload::trace::{CsvColumns, Format};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

/// Where a trace is and how to read it.
#[derive(Debug, Clone)]
pub struct TraceInput {
    /// The trace file (zstd-compressed or not: told by its first bytes).
    pub path: PathBuf,
    pub format: Format,
    /// Where a CSV trace's fields are (read for `Format::Csv`; for `Format::Text` only
    /// `id_is_text`).
    pub csv: CsvColumns,
}

impl TraceInput {
    /// An oracleGeneral trace at `path`.
    pub fn oracle_general(path: impl Into<PathBuf>) -> Self {
        TraceInput {
            path: path.into(),
            format: Format::OracleGeneral,
            csv: CsvColumns::default(),
        }
    }
}

/// The CSV field delimiter given as text (`--csv-delimiter`): one ASCII character.
pub fn csv_delimiter(text: &str) -> Result<u8> {
    match text.as_bytes() {
        [d] if d.is_ascii() => Ok(*d),
        _ => Err(Error::Usage(format!(
            "--csv-delimiter `{text}`: one ASCII character is allowed"
        ))),
    }
}

/// Records decoded and replayed at a time: small enough to stay in cache beside the policy's
/// state, large enough that per-chunk work is negligible.
const CHUNK_RECORDS: usize = 1 << 14;

/// The zstd frame magic number (RFC 8878), as it lies on disk.
pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The trace's bytes, decompressed as they are read if the file is zstd, with its first bytes
/// available for sniffing.
struct Source {
    reader: std::io::BufReader<Box<dyn Read + Send>>,
    /// The file's length when it is not compressed (its record count is then known up front).
    plain_len: Option<u64>,
    /// The compression's name, when compressed.
    compression: Option<&'static str>,
}

/// Opens the trace; a compressed file (zstd, gzip, xz or bzip2, told by its magic number,
/// whatever its name) is decompressed as it streams, several concatenated streams included.
fn open(a: &TraceInput) -> Result<Source> {
    use std::io::Seek;
    let io = |e| Error::io(&a.path, e);
    // Asked before opening: opening a named pipe waits for a writer. Commands may read a trace
    // twice (a first pass for the working set, a count pass, one read per worker), which a
    // pipe, socket or device cannot give.
    let kind = std::fs::metadata(&a.path).map_err(io)?.file_type();
    if !kind.is_file() {
        let what = match kind.is_dir() {
            true => "a directory",
            false => "not a regular file (a pipe, socket or device)",
        };
        return Err(Error::file(
            &a.path,
            format!(
                "{what}: a trace is read from a regular file (some commands read it twice); \
                 save the stream to a file first"
            ),
        ));
    }
    let mut file = std::fs::File::open(&a.path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut magic = [0u8; 6];
    let got = fill(&mut file, &mut magic).map_err(io)?;
    file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    let inner: Box<dyn Read + Send> = match crate::topo::compression(&magic[..got]) {
        None => Box::new(file),
        Some(("zstd", _)) => Box::new(
            zstd::stream::read::Decoder::new(file)
                .map_err(|e| Error::file(&a.path, format!("zstd: {e}")))?,
        ),
        Some(("gzip", _)) => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Some(("xz", _)) => Box::new(liblzma::read::XzDecoder::new_multi_decoder(file)),
        Some(("bzip2", _)) => Box::new(bzip2::read::MultiBzDecoder::new(file)),
        Some((name, tool)) => {
            return Err(Error::file(
                &a.path,
                format!(
                    "a {name} archive: traces are read plain or compressed with zstd, gzip, xz \
                     or bzip2; extract it first ({tool} FILE)"
                ),
            ));
        }
    };
    let compression = crate::topo::compression(&magic[..got]).map(|(name, _)| name);
    Ok(Source {
        reader: std::io::BufReader::with_capacity(1 << 16, inner),
        plain_len: compression.is_none().then_some(len),
        compression,
    })
}

/// Refuses a trace whose first bytes do not fit `--format`, naming the likely format and the
/// flag: oracleGeneral records hold zero bytes (small times and sizes in wide fields), so a
/// start of printable text is a text trace; text holds no zero bytes, so one is binary.
fn sniff(a: &TraceInput, head: &[u8]) -> Result<()> {
    let head = &head[..head.len().min(4096)];
    let text = !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b));
    let binary = head.contains(&0);
    match a.format {
        Format::OracleGeneral if text => Err(Error::file(
            &a.path,
            "this looks like a text trace (printable characters, no binary records), not \
             oracleGeneral: use --format csv (with --csv-id, --csv-size, ...) or --format text \
             (one id a line)"
                .to_string(),
        )),
        Format::Csv | Format::Text if binary => Err(Error::file(
            &a.path,
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

/// An oracleGeneral trace (plain or compressed) decoded chunk by chunk through one reused
/// buffer.
struct OracleChunks<'a> {
    path: &'a std::path::Path,
    compression: Option<&'static str>,
    reader: std::io::BufReader<Box<dyn Read + Send>>,
    buf: Vec<u8>,
    /// Records decoded so far: the index of the next chunk's first record.
    first: usize,
    sized: bool,
    /// The records' layout.
    kind: Binary,
}

/// The binary record layouts read in chunks.
#[derive(Debug, Clone, Copy)]
enum Binary {
    OracleGeneral,
    Vscsi(trace::VscsiVersion),
    Twr,
}

impl Binary {
    fn record(self) -> usize {
        match self {
            Binary::OracleGeneral => trace::ORACLE_GENERAL_RECORD,
            Binary::Vscsi(v) => v.record(),
            Binary::Twr => trace::TWR_RECORD,
        }
    }
}

impl OracleChunks<'_> {
    /// Decodes the next chunk into `reqs`; false at the end of the trace.
    fn next(&mut self, reqs: &mut Vec<Request>) -> Result<bool> {
        let got = fill(&mut self.reader, &mut self.buf).map_err(|e| {
            Error::file(
                self.path,
                if let Some(name) = self.compression {
                    format!(
                        "decompressing ({name}): {e}; the compressed file is cut short or damaged"
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
        let buf = &self.buf[..got];
        match self.kind {
            Binary::OracleGeneral => {
                trace::decode_oracle_general(buf, self.first, self.sized, reqs)
            }
            Binary::Vscsi(v) => trace::decode_vscsi(buf, self.first, v, reqs),
            Binary::Twr => trace::decode_twr(buf, self.first, reqs),
        }
        .map_err(|e| Error::file(self.path, e.to_string()))?;
        // Records, not requests: twr skips some.
        self.first += got / self.kind.record();
        Ok(true)
    }
}

impl OracleChunks<'_> {
    /// Decodes every chunk in turn and hands it to `each`, adding the seconds spent reading to
    /// `read_s`; an empty trace is refused.
    fn each(
        &mut self,
        read_s: &mut f64,
        mut each: impl FnMut(&mut [Request]) -> Result<()>,
    ) -> Result<()> {
        let mut reqs = Vec::with_capacity(CHUNK_RECORDS);
        loop {
            let t = Instant::now();
            let more = self.next(&mut reqs)?;
            *read_s += t.elapsed().as_secs_f64();
            if !more {
                break;
            }
            each(&mut reqs)?;
        }
        if self.first == 0 {
            return Err(Error::file(self.path, trace::TraceError::Empty.to_string()));
        }
        Ok(())
    }
}

/// Decoded chunks that may wait for the simulation ([`read_ahead_into`]).
const READ_AHEAD_CHUNKS: usize = 8;

/// Reads and decodes `chunks` on a second thread while `each` runs on this one: reading and
/// decompression are hidden behind the simulation instead of added to it. Up to eight decoded
/// chunks wait (half a megabyte each) and their buffers are recycled, so memory stays
/// constant. Eight rather than two absorb the reader's pauses (such as a growing renumbering
/// table's, `mrc`): on a 10^7-request trace, `mrc` at 10 sizes took 0.91 of the time (7
/// alternating pairs) and LRU's replay waited 0.010 to 0.015 s for the reader instead of 0.017
/// to 0.035 (3 runs each), for 3 MB more. `prepare` runs on the reader's thread, on each
/// chunk before it is handed over. Returns the seconds this thread waited for the reader
/// (reading not hidden). The order of chunks, hence every result, is the same as without it.
fn read_ahead_into(
    mut chunks: OracleChunks,
    mut prepare: impl FnMut(&mut [Request]) + Send,
    each: &mut impl FnMut(&[Request]),
) -> Result<f64> {
    use std::sync::mpsc;
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Result<Vec<Request>>>(READ_AHEAD_CHUNKS);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<Request>>();
        s.spawn(move || {
            loop {
                let mut reqs = empty_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK_RECORDS));
                let sent = match chunks.next(&mut reqs) {
                    Ok(false) if chunks.first == 0 => full_tx.send(Err(Error::file(
                        chunks.path,
                        trace::TraceError::Empty.to_string(),
                    ))),
                    Ok(false) => return,
                    Ok(true) => {
                        prepare(&mut reqs);
                        full_tx.send(Ok(reqs))
                    }
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
pub fn spare_core(workers: usize) -> bool {
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
pub fn stream(
    a: &TraceInput,
    sized: bool,
    next_access: bool,
    read_ahead: bool,
    each: impl FnMut(&[Request]),
) -> Result<f64> {
    stream_prepared(a, sized, next_access, read_ahead, |_| {}, each)
}

/// Whether [`stream`] reads `a` on a second thread when asked to `read_ahead`: oracleGeneral
/// traces only (the others are read whole, or are text).
pub fn reads_ahead(a: &TraceInput, read_ahead: bool) -> bool {
    read_ahead && a.format == Format::OracleGeneral
}

/// [`stream`], with `prepare` applied to each chunk before `each` sees it: on the reading
/// thread when the trace is read ahead ([`reads_ahead`]), so that work such as renumbering ids
/// runs beside the pass; else on this thread.
pub fn stream_prepared(
    a: &TraceInput,
    sized: bool,
    next_access: bool,
    read_ahead: bool,
    mut prepare: impl FnMut(&mut [Request]) + Send,
    mut each: impl FnMut(&[Request]),
) -> Result<f64> {
    use std::io::BufRead;
    let bad = |e: trace::TraceError| Error::file(&a.path, e.to_string());
    let t0 = Instant::now();
    let mut src = open(a)?;
    let head = src
        .reader
        .fill_buf()
        .map_err(|e| Error::file(&a.path, format!("reading (or decompressing): {e}")))?;
    sniff(a, head)?;
    let mut read_s = t0.elapsed().as_secs_f64();
    match a.format {
        Format::OracleGeneral => {
            if let Some(len) = src.plain_len {
                trace::check_oracle_general_length(len).map_err(bad)?;
            }
            let mut chunks = OracleChunks {
                path: &a.path,
                compression: src.compression,
                reader: src.reader,
                buf: vec![0u8; CHUNK_RECORDS * trace::ORACLE_GENERAL_RECORD],
                first: 0,
                sized,
                kind: Binary::OracleGeneral,
            };
            if read_ahead {
                read_s += read_ahead_into(chunks, prepare, &mut each)?;
            } else {
                chunks.each(&mut read_s, |reqs| {
                    crate::stop::check()?;
                    prepare(reqs);
                    each(reqs);
                    Ok(())
                })?;
            }
        }
        Format::Vscsi | Format::Twr => {
            let kind = if a.format == Format::Twr {
                Binary::Twr
            } else {
                Binary::Vscsi(trace::VscsiVersion::detect(head).ok_or_else(|| {
                    Error::file(
                        &a.path,
                        "not a vscsi trace: the first two records read as neither version 1 \
                         (32 bytes) nor version 2 (40 bytes), or the file is shorter than 80 \
                         bytes"
                            .to_string(),
                    )
                })?)
            };
            let mut chunks = OracleChunks {
                path: &a.path,
                compression: src.compression,
                reader: src.reader,
                buf: vec![0u8; CHUNK_RECORDS * kind.record()],
                first: 0,
                sized,
                kind,
            };
            // These carry no next access: read whole and fill it in when it is needed.
            let mut all = Vec::new();
            chunks.each(&mut read_s, |reqs| {
                if next_access {
                    all.extend_from_slice(reqs);
                } else {
                    crate::stop::check()?;
                    prepare(reqs);
                    each(reqs);
                }
                Ok(())
            })?;
            if next_access {
                trace::fill_next_access(&mut all);
                for chunk in all.chunks_mut(CHUNK_RECORDS) {
                    crate::stop::check()?;
                    prepare(chunk);
                    each(chunk);
                }
            }
        }
        Format::Csv | Format::Text if next_access => {
            let t = Instant::now();
            let mut reqs = trace::read_csv(src.reader, &text_columns(a)).map_err(bad)?;
            read_s += t.elapsed().as_secs_f64();
            for chunk in reqs.chunks_mut(CHUNK_RECORDS) {
                crate::stop::check()?;
                prepare(chunk);
                each(chunk);
            }
        }
        Format::Csv | Format::Text => {
            let mut rdr = trace::CsvStream::new(src.reader, &text_columns(a)).map_err(bad)?;
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
                prepare(&mut reqs);
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
fn text_columns(a: &TraceInput) -> CsvColumns {
    match a.format {
        // One field a line: a delimiter no id line holds.
        Format::Text => CsvColumns {
            delimiter: b'\t',
            id_is_text: a.csv.id_is_text,
            ..CsvColumns::default()
        },
        _ => a.csv.clone(),
    }
}
