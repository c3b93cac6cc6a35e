//! Progress of long work. On a terminal, indicatif's bar; otherwise (a Slurm or Kubernetes
//! log, a file) a plain line every few seconds, since a bar is not drawn there and nothing
//! would show until the end.

use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between log lines, from `CDNLAB_PROGRESS_SECS` (default 5; 0 turns them off).
fn every() -> Option<Duration> {
    let secs = std::env::var("CDNLAB_PROGRESS_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(5.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// Writes `what`'s progress from `bar` (position of length) to standard error every few seconds
/// while it lives, when standard error is not a terminal.
pub struct LogLines {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl LogLines {
    pub fn start(bar: &ProgressBar, what: String, unit: &'static str) -> Self {
        let idle = LogLines {
            stop: None,
            thread: None,
        };
        if std::io::stderr().is_terminal() {
            return idle;
        }
        let Some(every) = every() else {
            return idle;
        };
        let (tx, rx) = mpsc::channel::<()>();
        let bar = bar.clone();
        let t0 = Instant::now();
        let thread = std::thread::spawn(move || {
            // Until the sender is dropped (or sends).
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                let (done, total) = (bar.position(), bar.length().unwrap_or(0));
                eprintln!("{}", line(&what, unit, done, total, t0.elapsed()));
            }
        });
        LogLines {
            stop: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for LogLines {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// "gwtw-e2: 12/48 cells (25%), 1m 05s elapsed, ETA 3m 15s"
fn line(what: &str, unit: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let pct = if total == 0 {
        100.0
    } else {
        100.0 * done as f64 / total as f64
    };
    let eta = if done == 0 {
        "ETA unknown".to_string()
    } else {
        let left = elapsed.as_secs_f64() * (total.saturating_sub(done)) as f64 / done as f64;
        format!("ETA {}", clock(left))
    };
    format!(
        "{what}: {done}/{total} {unit} ({pct:.0}%), {} elapsed, {eta}",
        clock(elapsed.as_secs_f64())
    )
}

/// 65.2 -> "1m 05s"; 3725 -> "1h 02m 05s".
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, s) => format!("{h}h {m:02}m {s:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_done_total_elapsed_and_eta() {
        assert_eq!(
            line("gwtw-e2", "cells", 12, 48, Duration::from_secs(65)),
            "gwtw-e2: 12/48 cells (25%), 1m 05s elapsed, ETA 3m 15s"
        );
        assert_eq!(
            line("x", "cells", 0, 10, Duration::from_secs(3)),
            "x: 0/10 cells (0%), 3s elapsed, ETA unknown"
        );
        assert_eq!(clock(3725.0), "1h 02m 05s");
    }
}
