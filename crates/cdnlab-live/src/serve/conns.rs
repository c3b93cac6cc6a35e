//! The connections a server holds, what each costs and delivers, and whom to shed when every
//! slot is taken.
//!
//! Each connection is in one of three states: waiting for a request head (from its accept, or
//! from the first byte of a later head), answering (from a head until the last byte of its
//! response body), or idle between keep-alive requests. Its socket wrapper ([`Io`]) counts the
//! bytes the kernel took and notes when a write stalls because the client does not read; a
//! once-a-second sweep samples the counts, so the rate over the last [`Limits::rate_window`] is
//! known without timing every write.
//!
//! A connection that finds every slot taken sheds one other, in this order (the first that has
//! a candidate), and waits up to [`RECLAIM_WAIT`] for that connection's slot, which is handed
//! to it (not to another newcomer that shed nobody):
//!
//! 1. idle keep-alive connections, oldest first (closed gracefully: nothing is in flight);
//! 2. partial heads older than [`Limits::head_grace`], oldest first (a client that has taken
//!    that long for one head is a slowloris or lost);
//! 3. slow readers: answering, stalled on the client now, and below [`Limits::min_rate`] over
//!    the last [`Limits::rate_window`] of the answer, slowest first, of addresses holding more
//!    slots than the newcomer's would (the newcomer included);
//! 4. fair share: a connection of the address holding the most slots, if it holds more than
//!    twice what the newcomer's address would, preferring one not yet answering, then the
//!    longest stalled. No address can then keep a new address out: what holds every slot from
//!    a few addresses gives way to a client from another one.
//!
//! Rules 3 and 4 spare addresses no heavier than the newcomer's: attackers from several
//! addresses reopening connections would otherwise shed each other without end, each shed
//! handing an attacker a slot and a new body to start (8 addresses x 256 never-readers of an
//! 8 MiB object: 3,500 sheds in 12 s, and a normal client's 8 MiB took up to 2 s).
//!
//! Rules 2 to 4 close abortively (`SO_LINGER` 0: a reset, and the kernel drops what was queued
//! for the client), so the slot and the memory come back at once rather than when a graceful
//! close's last byte is taken. Each shed connection is counted once, by reason.

use crate::serve::Limits;
use crate::serve::metrics::Metrics;
use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit, oneshot};

/// How long a connection over the global limit waits for a slot freed by shedding another.
pub const RECLAIM_WAIT: Duration = Duration::from_millis(200);

/// How often the sweep samples each connection's bytes.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Why a connection was shed (the label of `cdnlab_connections_reclaimed_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    Idle,
    PartialHead,
    SlowReader,
    FairShare,
}

impl Shed {
    pub const ALL: [Shed; 4] = [
        Shed::Idle,
        Shed::PartialHead,
        Shed::SlowReader,
        Shed::FairShare,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Shed::Idle => "idle",
            Shed::PartialHead => "partial_head",
            Shed::SlowReader => "slow_reader",
            Shed::FairShare => "fair_share",
        }
    }
}

/// A connection being served. Times are milliseconds since `accepted`, plus one, so that 0
/// can mean "none".
pub struct Conn {
    ip: IpAddr,
    accepted: Instant,
    /// Requests being answered (until the last byte of the body).
    busy: AtomicUsize,
    /// When the head now being read began (0: none; a new connection waits from its accept).
    head_since: AtomicU64,
    /// When the connection last went from idle or reading to answering.
    busy_since: AtomicU64,
    /// Bytes the socket took.
    written: AtomicU64,
    /// When the current write stall began (0: not stalled).
    stalled_since: AtomicU64,
    /// (time, written) once a [`SAMPLE_EVERY`], the newest last, as far back as the window.
    samples: Mutex<std::collections::VecDeque<(u64, u64)>>,
    /// Set once when the connection is shed.
    shed: AtomicBool,
    /// Close after the current response (graceful), or at once (abortive).
    pub close: Notify,
    pub abort: Notify,
    /// The newcomer that shed this connection, waiting for its slot.
    heir: Mutex<Heir>,
}

/// Who gets a shed connection's slot.
enum Heir {
    /// Nobody shed it (yet).
    None,
    /// The newcomer that shed it.
    Waiting(oneshot::Sender<OwnedSemaphorePermit>),
    /// The connection ended and its slot went back to the pool: a newcomer that chose it
    /// just before (it was closing on its own, say on the client's EOF) takes a slot from the
    /// pool instead of waiting for one that will never be handed over.
    Released,
}

impl Conn {
    fn new(ip: IpAddr) -> Self {
        Conn {
            ip,
            accepted: Instant::now(),
            busy: AtomicUsize::new(0),
            head_since: AtomicU64::new(1),
            busy_since: AtomicU64::new(0),
            written: AtomicU64::new(0),
            stalled_since: AtomicU64::new(0),
            samples: Mutex::new(std::collections::VecDeque::new()),
            shed: AtomicBool::new(false),
            close: Notify::new(),
            abort: Notify::new(),
            heir: Mutex::new(Heir::None),
        }
    }

    fn now(&self) -> u64 {
        self.accepted.elapsed().as_millis() as u64 + 1
    }

    /// A request's head is complete: the connection answers it until [`Busy`] is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy {
        if self.busy.fetch_add(1, Relaxed) == 0 {
            self.busy_since.store(self.now(), Relaxed);
        }
        self.head_since.store(0, Relaxed);
        Busy(self.clone())
    }

    /// Whether a request is being answered.
    pub fn answering(&self) -> bool {
        self.busy.load(Relaxed) > 0
    }

    fn sample(&self, window: Duration) {
        let now = self.now();
        let keep = window.as_millis() as u64 + 2 * SAMPLE_EVERY.as_millis() as u64;
        let mut s = self.samples.lock().expect("samples lock");
        s.push_back((now, self.written.load(Relaxed)));
        while s.front().is_some_and(|&(t, _)| now - t > keep) {
            s.pop_front();
        }
    }

    /// Bytes per second the client took over at least the last `window` of the answer now
    /// under way; None while that answer is younger than the window.
    fn rate(&self, window: Duration) -> Option<f64> {
        let now = self.now();
        let busy_since = self.busy_since.load(Relaxed);
        if !self.answering() || busy_since == 0 {
            return None;
        }
        let w = window.as_millis() as u64;
        let s = self.samples.lock().expect("samples lock");
        // The newest sample at least a window old, taken while this answer was under way.
        let &(t, bytes) = s.iter().rev().find(|&&(t, _)| now - t >= w)?;
        if t < busy_since {
            return None;
        }
        let took = self.written.load(Relaxed).saturating_sub(bytes);
        Some(took as f64 * 1000.0 / (now - t) as f64)
    }

    /// How long the current write stall has lasted, in milliseconds (None: not stalled).
    fn stalled_for(&self) -> Option<u64> {
        match self.stalled_since.load(Relaxed) {
            0 => None,
            t => Some(self.now().saturating_sub(t)),
        }
    }

    /// Marks the connection shed; false if it already was.
    fn mark(&self) -> bool {
        !self.shed.swap(true, Relaxed)
    }

    /// The connection has ended: its slot goes to the newcomer that shed it, if any, rather
    /// than to whoever waits first (another newcomer that shed nobody would take it).
    pub fn release(&self, slot: OwnedSemaphorePermit) {
        let mut heir = self.heir.lock().expect("heir lock");
        if let Heir::Waiting(tx) = std::mem::replace(&mut *heir, Heir::Released) {
            let _ = tx.send(slot);
        }
    }
}

/// An answer under way on a connection; dropped with the response body.
pub struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Relaxed) == 1 {
            self.0.busy_since.store(0, Relaxed);
        }
    }
}

/// The connections being served, for shedding and draining.
#[derive(Default)]
pub struct Conns {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    per_address: Mutex<HashMap<IpAddr, usize>>,
}

impl Conns {
    /// Counts a new connection from `ip` against its address's share; None if the address is
    /// at `max`. The share is given back when the returned guard is dropped.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<PerAddress> {
        let mut per = self.per_address.lock().expect("conns lock");
        let n = per.entry(ip).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(PerAddress(self.clone(), ip))
    }

    /// Registers a connection that has its slot.
    pub fn open(&self, ip: IpAddr) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Relaxed);
        let conn = Arc::new(Conn::new(ip));
        self.open
            .lock()
            .expect("conns lock")
            .insert(id, conn.clone());
        (id, conn)
    }

    pub fn close(&self, id: u64) {
        self.open.lock().expect("conns lock").remove(&id);
    }

    /// Samples every connection's bytes (the sweep, once a [`SAMPLE_EVERY`]).
    pub fn sample(&self, window: Duration) {
        let open: Vec<Arc<Conn>> = self
            .open
            .lock()
            .expect("conns lock")
            .values()
            .cloned()
            .collect();
        for c in open {
            c.sample(window);
        }
    }

    /// Asks every connection to close after its current response.
    pub fn close_all(&self) {
        for c in self.open.lock().expect("conns lock").values() {
            c.close.notify_one();
        }
    }

    /// Sheds one connection to make room for a newcomer from `ip`, by the rules of this
    /// module; returns why, and where its slot will come, or None if no connection may be shed.
    pub fn shed_one(
        &self,
        ip: IpAddr,
        limits: &Limits,
        metrics: &Metrics,
    ) -> Option<(Shed, oneshot::Receiver<OwnedSemaphorePermit>)> {
        let (victim, why) = self.choose(ip, limits)?;
        if !victim.mark() {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut heir = victim.heir.lock().expect("heir lock");
            if matches!(*heir, Heir::Released) {
                // It ended between the choice and now; its slot is in the pool. Dropping
                // `tx` tells the newcomer so (the receiver errs at once), and nothing was shed.
                return Some((why, rx));
            }
            *heir = Heir::Waiting(tx);
        }
        if why == Shed::Idle {
            victim.close.notify_one();
        } else {
            victim.abort.notify_one();
        }
        metrics.reclaimed(why).inc();
        Some((why, rx))
    }

    fn choose(&self, ip: IpAddr, limits: &Limits) -> Option<(Arc<Conn>, Shed)> {
        let open: Vec<Arc<Conn>> = self
            .open
            .lock()
            .expect("conns lock")
            .values()
            .filter(|c| !c.shed.load(Relaxed))
            .cloned()
            .collect();
        let ms = |c: &Conn, t: u64| c.now().saturating_sub(t);
        // 1. Idle keep-alive, oldest first (not stalled: hyper may still be writing the end
        // of a body it has taken whole).
        if let Some(c) = open
            .iter()
            .filter(|c| !c.answering() && c.head_since.load(Relaxed) == 0)
            .filter(|c| c.stalled_for().is_none())
            .min_by_key(|c| c.accepted)
        {
            return Some((c.clone(), Shed::Idle));
        }
        // 2. Partial heads past the grace, oldest first.
        let grace = limits.head_grace.as_millis() as u64;
        if let Some(c) = open
            .iter()
            .filter(|c| !c.answering())
            .filter_map(|c| match c.head_since.load(Relaxed) {
                0 => None,
                t => Some((c, ms(c, t))),
            })
            .filter(|&(_, age)| age >= grace)
            .max_by_key(|&(_, age)| age)
        {
            return Some((c.0.clone(), Shed::PartialHead));
        }
        // Slots held per address, the newcomer's included.
        let mut held: HashMap<IpAddr, usize> = HashMap::new();
        for c in &open {
            *held.entry(c.ip).or_default() += 1;
        }
        let mine = held.get(&ip).copied().unwrap_or(0) + 1;
        // 3. Slow readers, slowest first, of addresses holding more than the newcomer's would:
        // attackers on equal footing do not shed each other (each shed would hand another
        // attacker a slot and a new body to start), while any lighter address gets in.
        if let Some((c, _)) = open
            .iter()
            .filter(|c| held.get(&c.ip).is_some_and(|&n| n > mine))
            .filter(|c| c.stalled_for().is_some())
            .filter_map(|c| Some((c, c.rate(limits.rate_window)?)))
            .filter(|&(_, r)| r < limits.min_rate as f64)
            .min_by(|a, b| a.1.total_cmp(&b.1))
        {
            return Some((c.clone(), Shed::SlowReader));
        }
        // 4. Fair share between addresses, by the slots they hold (the newcomer's included):
        // the heaviest address gives way if it holds more than twice what the newcomer's
        // would. Twice, not more than: addresses within a factor of two of each other do not
        // shed each other back and forth one slot at a time.
        let (&heavy, &most) = held
            .iter()
            .filter(|&(a, _)| *a != ip)
            .max_by_key(|&(a, n)| (*n, *a))?;
        if most <= 2 * mine {
            return None;
        }
        open.iter()
            .filter(|c| c.ip == heavy)
            .max_by_key(|c| (!c.answering(), c.stalled_for(), c.accepted))
            .map(|c| (c.clone(), Shed::FairShare))
    }
}

/// Gives back an address's connection when dropped.
pub struct PerAddress(Arc<Conns>, IpAddr);

impl Drop for PerAddress {
    fn drop(&mut self) {
        let mut per = self.0.per_address.lock().expect("conns lock");
        if let Some(n) = per.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.1);
            }
        }
    }
}

/// A connection's socket: writes fail with `TimedOut` when the peer takes no bytes for the send
/// timeout; what the kernel takes is counted, stalls and the start of each head are noted on
/// the [`Conn`], and a shed or timed-out connection is reset when dropped.
pub struct Io {
    stream: TcpStream,
    conn: Arc<Conn>,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    timeouts: prometheus::IntCounter,
    /// Reset when dropped (the send timeout ran out).
    reset: bool,
}

impl Io {
    pub fn new(
        stream: TcpStream,
        conn: Arc<Conn>,
        timeout: Duration,
        timeouts: prometheus::IntCounter,
    ) -> Self {
        Io {
            stream,
            conn,
            timeout,
            stalled: None,
            timeouts,
            reset: false,
        }
    }

    /// After a write attempt: progress clears the timer and the stall; a stall arms both, and
    /// fails once the timer has run out.
    fn check(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if let Poll::Ready(r) = r {
            self.stalled = None;
            self.conn.stalled_since.store(0, Relaxed);
            if let Ok(n) = r {
                self.conn.written.fetch_add(n as u64, Relaxed);
            }
            return Poll::Ready(r);
        }
        let timeout = self.timeout;
        let conn = &self.conn;
        let sleep = self.stalled.get_or_insert_with(|| {
            conn.stalled_since.store(conn.now(), Relaxed);
            Box::pin(tokio::time::sleep(timeout))
        });
        if sleep.as_mut().poll(cx).is_ready() {
            self.timeouts.inc();
            // Reset, not closed gracefully (nginx's `reset_timedout_connection`): a graceful
            // close leaves an orphaned socket holding its queued bytes in kernel memory until
            // the kernel gives up on the client, minutes later. Under never-reading clients
            // those orphans drove TCP memory to its limit, and every other connection's
            // transfers slowed with it.
            self.reset = true;
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took no bytes within the send timeout",
            )));
        }
        Poll::Pending
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        if self.reset || self.conn.shed.load(Relaxed) {
            // An abortive close (RFC 9293 section 3.6: a reset): the slot and the socket's
            // queued bytes come back now, not when a stalled client takes them.
            let _ = socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
        }
    }
}

impl AsyncRead for Io {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.stream).poll_read(cx, buf);
        let c = &self.conn;
        if buf.filled().len() > before && !c.answering() && c.head_since.load(Relaxed) == 0 {
            c.head_since.store(c.now(), Relaxed);
        }
        r
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.check(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.check(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A TCP socket has nothing to flush: this says nothing of whether the client reads.
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Largest piece of a body handed to hyper at once. hyper queues what it is given and takes
/// more only when its write buffer has room, so a body given in pieces is done only when its
/// last piece has been taken, i.e. about when it has been written: until then the connection
/// counts as answering (not idle), and its rate is judged.
pub const PIECE: usize = 64 << 10;

/// A response body that keeps its connection marked as answering until it is done, handed to
/// hyper in pieces of at most [`PIECE`] bytes.
pub struct Tracked<B> {
    inner: B,
    rest: bytes::Bytes,
    _busy: Busy,
}

impl<B> Tracked<B> {
    pub fn new(inner: B, busy: Busy) -> Self {
        Tracked {
            inner,
            rest: bytes::Bytes::new(),
            _busy: busy,
        }
    }
}

impl<B: http_body::Body<Data = bytes::Bytes> + Unpin> http_body::Body for Tracked<B> {
    type Data = bytes::Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if self.rest.is_empty() {
            match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => self.rest = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return other,
            }
        }
        let n = self.rest.len().min(PIECE);
        Poll::Ready(Some(Ok(http_body::Frame::data(self.rest.split_to(n)))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let mut h = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        h.set_lower(h.lower() + rest);
        if let Some(u) = h.upper() {
            h.set_upper(u + rest);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    #[test]
    fn rates_need_a_whole_window_of_the_answer() {
        let c = Arc::new(Conn::new([127, 0, 0, 1].into()));
        let w = Duration::from_millis(50);
        assert_eq!(c.rate(w), None, "not answering");
        let busy = c.begin();
        c.sample(w);
        assert_eq!(c.rate(w), None, "younger than the window");
        std::thread::sleep(Duration::from_millis(60));
        c.written.fetch_add(600, Relaxed);
        let r = c.rate(w).unwrap();
        // 600 bytes over 60-70 ms.
        assert!((8_000.0..=10_000.0).contains(&r), "{r}");
        drop(busy);
        assert_eq!(c.rate(w), None);
    }

    #[test]
    fn shedding_order_idle_heads_slow_then_fair_share() {
        let conns = Arc::new(Conns::default());
        let m = Metrics::default();
        let l = Limits {
            head_grace: Duration::from_millis(30),
            rate_window: Duration::from_millis(30),
            ..limits()
        };
        let a: IpAddr = [127, 0, 0, 2].into();
        let me: IpAddr = [127, 0, 0, 1].into();
        let mut guards = Vec::new();
        let mut open = |ip| {
            guards.push(conns.admit(ip, 100).unwrap());
            conns.open(ip).1
        };
        // Six from `a`: one fresh (a head within its grace), four answering fast, one idle.
        let fresh = open(a);
        let fast = open(a);
        let _fast_busy = fast.begin();
        let fast_ones: Vec<_> = (0..3).map(|_| open(a)).collect();
        let _busy: Vec<_> = fast_ones.iter().map(|c| c.begin()).collect();
        let idle = open(a);
        drop(idle.begin());
        let mine = open(me);
        let _mine_busy = mine.begin();
        let shed = |conns: &Conns| conns.shed_one(me, &l, &m).map(|x| x.0);
        assert_eq!(shed(&conns), Some(Shed::Idle));
        assert!(idle.shed.load(Relaxed));
        // No idle one left; `fresh` is within its grace: the fair share takes one of `a`'s
        // (5 held, more than twice the 2 here with the newcomer), one not yet answering first.
        assert_eq!(shed(&conns), Some(Shed::FairShare));
        assert!(fresh.shed.load(Relaxed));
        // 4 held against 2: within twice, nobody (no shedding back and forth).
        assert!(conns.shed_one(me, &l, &m).is_none());
        // A partial head past its grace goes before anything but idle ones.
        let slowloris = open(a);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(shed(&conns), Some(Shed::PartialHead));
        assert!(slowloris.shed.load(Relaxed));
        // A stalled reader below the rate over a window of its answer, of an address heavier
        // than the newcomer's (5 against 2).
        let stalled = open(a);
        let _b = stalled.begin();
        stalled.sample(l.rate_window);
        std::thread::sleep(Duration::from_millis(40));
        stalled.stalled_since.store(stalled.now(), Relaxed);
        assert_eq!(shed(&conns), Some(Shed::SlowReader));
        assert!(stalled.shed.load(Relaxed));
        // A stalled reader is not shed for an address as heavy as its own.
        let b: IpAddr = [127, 0, 0, 3].into();
        let b_stalled: Vec<_> = (0..4).map(|_| open(b)).collect();
        let _bb: Vec<_> = b_stalled.iter().map(|c| c.begin()).collect();
        for c in &b_stalled {
            c.sample(l.rate_window);
        }
        std::thread::sleep(Duration::from_millis(40));
        for c in &b_stalled {
            c.stalled_since.store(c.now(), Relaxed);
        }
        assert!(
            conns.shed_one(b, &l, &m).is_none(),
            "b would hold 5, a holds 4"
        );
        // Same address as the newcomer, or no more than it holds: nobody.
        assert!(conns.shed_one(a, &l, &m).is_none());
        assert!(!fast.shed.load(Relaxed) && !mine.shed.load(Relaxed));
        let value = |s: Shed| m.reclaimed(s).get();
        assert_eq!(Shed::ALL.map(value), [1, 1, 1, 1]);
    }

    /// A connection chosen for shedding that ended on its own just before (its client closed
    /// it) has put its slot back in the pool: the newcomer learns at once (its channel is
    /// closed) and takes the slot from the pool, instead of waiting for a hand-over that never
    /// comes and answering 503 with a slot free. Seen in CI: a metrics request refused busy
    /// right after a keep-alive client went away.
    #[tokio::test]
    async fn a_victim_that_ended_first_leaves_its_slot_in_the_pool() {
        let conns = Arc::new(Conns::default());
        let m = Metrics::default();
        let slots = Arc::new(tokio::sync::Semaphore::new(1));
        let me: IpAddr = [127, 0, 0, 1].into();
        let _g = conns.admit(me, 100).unwrap();
        let (_, idle) = conns.open(me);
        drop(idle.begin());
        let permit = slots.clone().try_acquire_owned().unwrap();
        // The connection ends (release) while still listed, as between a shedder's choice and
        // its claim on the slot.
        idle.release(permit);
        assert_eq!(slots.available_permits(), 1);
        let (why, heir) = conns.shed_one(me, &limits(), &m).unwrap();
        assert_eq!(why, Shed::Idle);
        assert!(heir.await.is_err(), "no hand-over is pending");
        assert_eq!(m.reclaimed(Shed::Idle).get(), 0, "nothing was shed");
        // A connection shed before it ends hands its slot over.
        let (_, live) = conns.open(me);
        drop(live.begin());
        let permit = slots.clone().try_acquire_owned().unwrap();
        conns.close(0);
        let (_, heir) = conns.shed_one(me, &limits(), &m).unwrap();
        live.release(permit);
        let _inherited = heir.await.expect("the slot is handed over");
        assert_eq!(slots.available_permits(), 0, "the slot went to the heir");
        assert_eq!(m.reclaimed(Shed::Idle).get(), 1);
    }
}
