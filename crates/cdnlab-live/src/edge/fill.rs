//! Bodies in flight and at rest, with bounded memory.
//!
//! A stored body is kept in pieces of [`PIECE`] bytes, each its own allocation ([`Pieces`]).
//! A miss streams: the origin's bytes go into a [`Fill`] as they arrive, and every request for
//! the object reads from it at its own pace, the first one and those that join mid-stream
//! alike; when the fill is complete its pieces become the stored body. Responses hold a stored
//! body only by a weak reference, one piece at a time ([`Reader`]): a client that does not read
//! pins at most the piece in flight, not an object the cache has evicted. A reader whose body
//! has gone (evicted, or a fill abandoned) goes on from the origin at its offset, with a
//! `Range` request that must match the body's validators (`If-Range`, RFC 9110 section 13.1.5),
//! so the client gets the bytes it was promised.
//!
//! Objects above the edge's largest cacheable size, and misses when the fill budget (the bytes
//! of all fills under way) has no room, are passed through: each request streams from its own
//! origin response, which the client's reading paces (at most [`PASS_THROUGH`] at once).

use crate::serve::http::Validators;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use smallvec::SmallVec;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, watch};

pub use crate::serve::conns::PIECE;

/// Pass-through streams at once, by default. Each holds an origin connection and, while its
/// client does not read, up to about 0.7 MiB (the HTTP client's read buffer, which grows to
/// 400 KiB on a fast origin, and the pieces queued on both sides): measured 189 MiB peak with
/// 128 of them under 250 never-reading clients of 8 MiB misses (64 MiB cache), 116 MiB with
/// 32, 104 MiB with 8. 32 keeps that attack within 1.3 x the capacity plus 64 MiB.
pub const PASS_THROUGH: usize = 32;

/// A body in pieces: all of [`PIECE`] bytes but the last, each its own allocation.
#[derive(Debug, Default)]
pub struct Pieces {
    pieces: SmallVec<[Bytes; 1]>,
    len: usize,
}

impl Pieces {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes from `pos` to the end of its piece, at most up to `end`.
    pub fn at(&self, pos: usize, end: usize) -> Bytes {
        let p = &self.pieces[pos / PIECE];
        let off = pos % PIECE;
        p.slice(off..p.len().min(off + (end - pos)))
    }

    /// The whole body in one piece, if it is one (small objects: no stream needed).
    pub fn single(&self) -> Option<&Bytes> {
        match self.pieces.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// A body made of `bytes` (tests, and bodies read whole).
    pub fn from_bytes(bytes: &[u8]) -> Pieces {
        let mut p = Piecer::default();
        p.push(bytes);
        p.finish()
    }
}

/// Cuts a stream of chunks into [`PIECE`]-byte pieces.
#[derive(Default)]
pub struct Piecer {
    done: SmallVec<[Bytes; 1]>,
    cur: BytesMut,
    len: usize,
}

impl Piecer {
    /// Adds bytes; returns the pieces completed by them.
    pub fn push(&mut self, mut b: &[u8]) -> usize {
        let before = self.done.len();
        self.len += b.len();
        while !b.is_empty() {
            if self.cur.capacity() == 0 {
                self.cur = BytesMut::with_capacity(PIECE);
            }
            let n = (PIECE - self.cur.len()).min(b.len());
            self.cur.extend_from_slice(&b[..n]);
            b = &b[n..];
            if self.cur.len() == PIECE {
                self.done.push(std::mem::take(&mut self.cur).freeze());
            }
        }
        self.done.len() - before
    }

    /// The pieces so far, from `from` on.
    fn pieces(&self, from: usize) -> &[Bytes] {
        &self.done[from..]
    }

    /// Bytes pushed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The body: the last piece in an allocation of its own size.
    pub fn finish(mut self) -> Pieces {
        if !self.cur.is_empty() {
            self.done.push(Bytes::copy_from_slice(&self.cur));
        }
        Pieces {
            pieces: self.done,
            len: self.len,
        }
    }
}

/// How a fill ended.
#[derive(Debug, Clone)]
pub enum End {
    Filling,
    /// Complete: the stored body, while the cache keeps it.
    Done(Weak<Pieces>),
    /// Abandoned (too large, no budget, or the origin failed): readers go on from the origin.
    Abandoned,
}

/// A miss being filled from the origin, read by every request for it meanwhile.
pub struct Fill {
    pub validators: Arc<Validators>,
    /// The length the origin announced, if it did.
    pub announced: Option<usize>,
    state: Mutex<(Piecer, End)>,
    /// Bytes in complete pieces so far (readers wait on it).
    progress: watch::Sender<usize>,
}

impl Fill {
    pub fn new(validators: Arc<Validators>, announced: Option<usize>) -> Arc<Fill> {
        Arc::new(Fill {
            validators,
            announced,
            state: Mutex::new((Piecer::default(), End::Filling)),
            progress: watch::channel(0).0,
        })
    }

    /// Adds bytes from the origin.
    pub fn push(&self, b: &[u8]) {
        let mut st = self.state.lock().expect("fill lock");
        if st.0.push(b) > 0 {
            let full = st.0.done.len() * PIECE;
            self.progress.send_replace(full);
        }
    }

    /// Bytes received so far.
    pub fn received(&self) -> usize {
        self.state.lock().expect("fill lock").0.len()
    }

    /// The fill is complete: its pieces become the body (returned, for the store to keep), and
    /// readers follow it by a weak reference. The fill holds no bytes any more.
    pub fn complete(&self) -> Arc<Pieces> {
        let mut st = self.state.lock().expect("fill lock");
        let piecer = std::mem::take(&mut st.0);
        let body = Arc::new(piecer.finish());
        st.1 = End::Done(Arc::downgrade(&body));
        drop(st);
        self.progress.send_replace(usize::MAX);
        body
    }

    /// The fill is abandoned; readers go on from the origin.
    pub fn abandon(&self) {
        let mut st = self.state.lock().expect("fill lock");
        st.0 = Piecer::default();
        st.1 = End::Abandoned;
        drop(st);
        self.progress.send_replace(usize::MAX);
    }

    /// The bytes at `pos` (up to `end` and the end of its piece), or how the fill stands.
    fn at(&self, pos: usize, end: usize) -> Result<Bytes, End> {
        let st = self.state.lock().expect("fill lock");
        match &st.1 {
            End::Filling => {
                let i = pos / PIECE;
                match st.0.pieces(0).get(i) {
                    Some(p) => {
                        let off = pos % PIECE;
                        Ok(p.slice(off..p.len().min(off + (end - pos))))
                    }
                    None => Err(End::Filling),
                }
            }
            other => Err(other.clone()),
        }
    }
}

/// How a [`Reader`] goes to the origin: the client, the object's URL and validators, and the
/// pass-through streams allowed.
#[derive(Clone)]
pub struct Origin {
    pub client: reqwest::Client,
    pub url: String,
    pub validators: Arc<Validators>,
    pub timeout: Duration,
    pub streams: Arc<tokio::sync::Semaphore>,
    /// The client's headers the origin chooses by (content negotiation).
    pub headers: reqwest::header::HeaderMap,
}

type ByteStream = Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Where a reader's next bytes come from.
enum Source {
    Fill(Arc<Fill>, watch::Receiver<usize>),
    Stored(Weak<Pieces>),
    /// An origin response, and the bytes of it still to skip (an origin that ignored the
    /// range), with the pass-through permit it holds while it streams.
    Origin {
        stream: ByteStream,
        skip: usize,
        _permit: OwnedSemaphorePermit,
    },
    Gone,
}

/// The bytes `pos..end` of an object, as a stream of pieces.
pub struct Reader {
    source: Source,
    pos: usize,
    end: usize,
    origin: Origin,
}

impl Reader {
    pub fn from_fill(fill: Arc<Fill>, range: std::ops::Range<usize>, origin: Origin) -> Reader {
        let rx = fill.progress.subscribe();
        Reader {
            source: Source::Fill(fill, rx),
            pos: range.start,
            end: range.end,
            origin,
        }
    }

    pub fn from_stored(
        body: &Arc<Pieces>,
        range: std::ops::Range<usize>,
        origin: Origin,
    ) -> Reader {
        Reader {
            source: Source::Stored(Arc::downgrade(body)),
            pos: range.start,
            end: range.end,
            origin,
        }
    }

    /// A pass-through by a request of its own to the origin.
    pub fn from_origin(range: std::ops::Range<usize>, origin: Origin) -> Reader {
        Reader {
            // A weak reference that never upgrades: the first read goes to the origin.
            source: Source::Stored(Weak::new()),
            pos: range.start,
            end: range.end,
            origin,
        }
    }

    /// A pass-through of an origin response already under way (its bytes from 0).
    pub fn from_response(
        r: reqwest::Response,
        range: std::ops::Range<usize>,
        permit: OwnedSemaphorePermit,
        origin: Origin,
    ) -> Reader {
        Reader {
            source: Source::Origin {
                stream: Box::pin(r.bytes_stream()),
                skip: range.start,
                _permit: permit,
            },
            pos: range.start,
            end: range.end,
            origin,
        }
    }

    /// The next bytes; None at the end; an error if the rest cannot be had (the response is
    /// then cut, and the client sees a short body rather than wrong bytes).
    pub async fn next(&mut self) -> Option<io::Result<Bytes>> {
        loop {
            if self.pos >= self.end {
                return None;
            }
            match &mut self.source {
                Source::Gone => return Some(Err(io::Error::other("the body is gone"))),
                Source::Stored(weak) => match weak.upgrade() {
                    Some(body) => {
                        // A length the origin did not announce is known now.
                        self.end = self.end.min(body.len());
                        if self.pos >= self.end {
                            return None;
                        }
                        let b = body.at(self.pos, self.end);
                        self.pos += b.len();
                        return Some(Ok(b));
                    }
                    None => {
                        if let Err(e) = self.resume().await {
                            self.source = Source::Gone;
                            return Some(Err(e));
                        }
                    }
                },
                Source::Fill(fill, rx) => match fill.at(self.pos, self.end) {
                    Ok(b) => {
                        self.pos += b.len();
                        return Some(Ok(b));
                    }
                    Err(End::Filling) => {
                        // The piece at `pos` is not complete yet: wait for the next one (or
                        // the end, which publishes the last, partial piece).
                        let have = *rx.borrow_and_update();
                        if have > self.pos {
                            continue;
                        }
                        if rx.changed().await.is_err() {
                            self.source = Source::Gone;
                        }
                    }
                    Err(End::Done(weak)) => self.source = Source::Stored(weak),
                    Err(End::Abandoned) => {
                        if let Err(e) = self.resume().await {
                            self.source = Source::Gone;
                            return Some(Err(e));
                        }
                    }
                },
                Source::Origin { stream, skip, .. } => {
                    let chunk = tokio::time::timeout(self.origin.timeout, stream.next())
                        .await
                        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "origin timeout"));
                    match chunk {
                        Ok(Some(Ok(mut b))) => {
                            if *skip > 0 {
                                let n = (*skip).min(b.len());
                                *skip -= n;
                                b = b.slice(n..);
                            }
                            let b = b.slice(..b.len().min(self.end - self.pos));
                            if b.is_empty() {
                                continue;
                            }
                            self.pos += b.len();
                            return Some(Ok(b));
                        }
                        Ok(Some(Err(e))) => {
                            self.source = Source::Gone;
                            return Some(Err(io::Error::other(e)));
                        }
                        Ok(None) => {
                            self.source = Source::Gone;
                            if self.end == usize::MAX {
                                return None; // no announced length: its end is the end
                            }
                            return Some(Err(io::Error::other("the origin's body ended early")));
                        }
                        Err(e) => {
                            self.source = Source::Gone;
                            return Some(Err(e));
                        }
                    }
                }
            }
        }
    }

    /// Goes on from the origin at `pos`: `Range: bytes=pos-(end-1)` with `If-Range` on the
    /// body's validators. A 206 goes on; a 200 of the same representation (an origin that does
    /// not do ranges) is read from its start with `pos` bytes skipped; anything else fails.
    async fn resume(&mut self) -> io::Result<()> {
        let o = &self.origin;
        let permit = o
            .streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| io::Error::other("too many pass-through streams"))?;
        let mut req = o.client.get(&o.url).header(
            reqwest::header::RANGE,
            format!("bytes={}-{}", self.pos, self.end - 1),
        );
        let v = &o.validators;
        if let Some(e) = &v.etag {
            req = req.header(reqwest::header::IF_RANGE, e);
        } else if let Some(t) = v.last_modified {
            req = req.header(reqwest::header::IF_RANGE, httpdate::fmt_http_date(t));
        }
        let r = tokio::time::timeout(o.timeout, req.send())
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "origin timeout"))?
            .map_err(io::Error::other)?;
        let same = Validators::from_headers(r.headers()) == **v || v.etag.is_none();
        let skip = match r.status().as_u16() {
            206 => 0,
            200 if same => self.pos,
            s => {
                return Err(io::Error::other(format!(
                    "the origin answered {s} to the rest of the body"
                )));
            }
        };
        self.source = Source::Origin {
            stream: Box::pin(r.bytes_stream()),
            skip,
            _permit: permit,
        };
        Ok(())
    }
}
