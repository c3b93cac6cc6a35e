//! The userspace link element: what netem would do on a kernel that has it (this one does
//! not). It runs in a link's own namespace, between the two veth ends that face the link's
//! nodes, and moves whole Ethernet frames from one to the other through a timed queue: each
//! frame is dropped with the link's loss probability, or released `delay + jitter` after it
//! arrived, never before a frame that arrived earlier (a link does not reorder; netem with a
//! rate does not either). The rate and the queue are the kernel's: a tbf qdisc on the
//! outgoing end (see `net.rs`), so a frame is shaped after its propagation delay, as at the far
//! end of a real link's bottleneck.
//!
//! Each direction has a reader thread (blocked in `read` on its packet socket) and a writer
//! thread (asleep on a condition variable until the head frame is due): a frame waits for its
//! own deadline, not for a timer tick.

use super::sys;
use rand::RngExt;
use std::collections::VecDeque;
use std::io::{Read, Write};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What one direction of a link does to each frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impair {
    /// One-way propagation delay.
    pub delay: Duration,
    /// Half-width of the uniform jitter added to the delay (netem's default distribution).
    pub jitter: Duration,
    /// Probability that a frame is lost, in [0, 1).
    pub loss: f64,
    /// How long before a frame is due the writer stops sleeping and spins (0: never spins).
    pub spin: Duration,
}

/// Frames a direction has seen, by fate.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, Clone, PartialEq, Eq)]
pub struct Counts {
    pub frames: u64,
    pub bytes: u64,
    pub lost: u64,
    /// Frames the outgoing end refused (its tbf queue full, or a send error).
    pub refused: u64,
    /// Frames dropped because more than `MAX_HELD` were held at once.
    pub overflow: u64,
    /// Nanoseconds the reader and writer threads spent on the CPU (from /proc).
    pub cpu_ns: u64,
}

/// Frames held at once in one direction before new ones are dropped: far above what any
/// tbf queue behind it holds (a bound, not a model).
pub const MAX_HELD: usize = 1 << 16;
/// The largest frame read (veth's MTU is 1500; offloads are off, so no frame is larger).
const FRAME: usize = 65_536;

struct Queue {
    held: Mutex<VecDeque<(Instant, Vec<u8>)>>,
    ready: Condvar,
}

#[derive(Default)]
struct Tally {
    frames: AtomicU64,
    bytes: AtomicU64,
    lost: AtomicU64,
    refused: AtomicU64,
    overflow: AtomicU64,
    reader_tid: AtomicU64,
    writer_tid: AtomicU64,
}

/// One direction running: frames read from `from`, written to `to`.
pub struct Direction {
    tally: Arc<Tally>,
}

impl Direction {
    /// Starts the two threads of one direction. `seed` fixes the loss and jitter draws.
    pub fn start(from: &str, to: &str, impair: Impair, seed: u64) -> std::io::Result<Direction> {
        let mut input = sys::packet_socket(from, 4 << 20)?;
        let mut output = sys::packet_socket(to, 1 << 20)?;
        let queue = Arc::new(Queue {
            held: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
        });
        let tally = Arc::new(Tally::default());
        let (q, t) = (queue.clone(), tally.clone());
        std::thread::Builder::new()
            .name(format!("wire-in-{from}"))
            .spawn(move || {
                t.reader_tid.store(thread_id(), Ordering::Relaxed);
                let mut rng = cdnlab::rng::from_seed(seed);
                let mut last = Instant::now();
                let mut buf = vec![0u8; FRAME];
                loop {
                    let n = match input.read(&mut buf) {
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => return,
                    };
                    let now = Instant::now();
                    t.frames.fetch_add(1, Ordering::Relaxed);
                    t.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    if impair.loss > 0.0 && rng.random::<f64>() < impair.loss {
                        t.lost.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let mut due = now + impair.delay;
                    if !impair.jitter.is_zero() {
                        let j = impair.jitter.as_secs_f64() * (2.0 * rng.random::<f64>() - 1.0);
                        due = if j >= 0.0 {
                            due + Duration::from_secs_f64(j)
                        } else {
                            due.checked_sub(Duration::from_secs_f64(-j)).unwrap_or(now)
                        };
                    }
                    // First in, first out: a frame never overtakes one that arrived before it.
                    due = due.max(last).max(now);
                    last = due;
                    let mut held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                    if held.len() >= MAX_HELD {
                        t.overflow.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let was_empty = held.is_empty();
                    held.push_back((due, buf[..n].to_vec()));
                    drop(held);
                    if was_empty {
                        q.ready.notify_one();
                    }
                }
            })?;
        let (q, t) = (queue, tally.clone());
        std::thread::Builder::new()
            .name(format!("wire-out-{to}"))
            .spawn(move || {
                t.writer_tid.store(thread_id(), Ordering::Relaxed);
                let mut held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    let now = Instant::now();
                    match held.front() {
                        None => {
                            held = q.ready.wait(held).unwrap_or_else(|e| e.into_inner());
                        }
                        Some((due, _)) if *due > now + impair.spin => {
                            let wait = *due - now - impair.spin;
                            held = q
                                .ready
                                .wait_timeout(held, wait)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                        Some((due, _)) if *due > now => {
                            // The last stretch awake: a timer that wakes an idle CPU is late
                            // by the wake-up (hundreds of microseconds on a virtual machine);
                            // a spin of at most `spin` is not.
                            let due = *due;
                            drop(held);
                            while Instant::now() < due {
                                std::hint::spin_loop();
                            }
                            held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                        }
                        Some(_) => {
                            let (_, frame) = held.pop_front().expect("a head frame");
                            drop(held);
                            if output.write(&frame).is_err() {
                                t.refused.fetch_add(1, Ordering::Relaxed);
                            }
                            held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                        }
                    }
                }
            })?;
        Ok(Direction { tally })
    }

    /// What this direction has seen so far.
    pub fn counts(&self) -> Counts {
        let t = &self.tally;
        let cpu = [&t.reader_tid, &t.writer_tid]
            .iter()
            .map(|tid| thread_cpu_ns(tid.load(Ordering::Relaxed)))
            .sum();
        Counts {
            frames: t.frames.load(Ordering::Relaxed),
            bytes: t.bytes.load(Ordering::Relaxed),
            lost: t.lost.load(Ordering::Relaxed),
            refused: t.refused.load(Ordering::Relaxed),
            overflow: t.overflow.load(Ordering::Relaxed),
            cpu_ns: cpu,
        }
    }
}

/// This thread's kernel id (its /proc/self/task entry).
fn thread_id() -> u64 {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .unwrap_or(0)
}

/// CPU time of a thread of this process, from /proc/self/task/{tid}/stat (utime + stime, in
/// clock ticks of 1/100 s, as proc(5) gives on Linux).
fn thread_cpu_ns(tid: u64) -> u64 {
    if tid == 0 {
        return 0;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
        return 0;
    };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of stat; `rest` starts at field 3.
    (ticks(11) + ticks(12)) * 10_000_000
}

/// The link element's process: both directions between interfaces `a` and `b` with the same
/// impairment, seeded per direction. Prints `ready` once its sockets are bound; then for each
/// line on its standard input prints the two directions' counts as one JSON line (`[a to b,
/// b to a]`), and when its input closes prints them once more and ends.
pub fn serve(a: &str, b: &str, impair: Impair, seeds: [u64; 2]) -> Result<(), crate::Error> {
    let ab = Direction::start(a, b, impair, seeds[0])
        .map_err(|e| crate::Error::io(format!("packet sockets on {a} and {b}"), e))?;
    let ba = Direction::start(b, a, impair, seeds[1])
        .map_err(|e| crate::Error::io(format!("packet sockets on {b} and {a}"), e))?;
    let mut out = std::io::stdout();
    let say = |out: &mut std::io::Stdout| {
        let counts = [ab.counts(), ba.counts()];
        let _ = writeln!(out, "{}", serde_json::to_string(&counts).expect("counts"));
        let _ = out.flush();
    };
    let _ = out.write_all(b"ready\n");
    let _ = out.flush();
    for line in std::io::stdin().lines() {
        if line.is_err() {
            break;
        }
        say(&mut out);
    }
    say(&mut out);
    Ok(())
}
