//! Failures worth an operator's attention (steering reports and installations, DHT
//! replication), written to standard error with their reason, at most one line per kind per
//! interval with how many were suppressed since, so a failing peer cannot flood the log.

use std::fmt::Display;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One kind of failure's log.
#[derive(Debug)]
pub struct Warn {
    what: &'static str,
    every: Duration,
    /// When the last line went out, and how many were suppressed since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl Warn {
    /// A log for `what` ("steering report") with one line per `every` at most.
    pub const fn new(what: &'static str, every: Duration) -> Self {
        Warn {
            what,
            every,
            state: Mutex::new((None, 0)),
        }
    }

    /// Logs a failure, or counts it if a line went out less than `every` ago; returns the
    /// line written, if any.
    pub fn warn(&self, reason: impl Display) -> Option<String> {
        let mut st = self.state.lock().expect("warn lock");
        let now = Instant::now();
        if st.0.is_some_and(|t| now.duration_since(t) < self.every) {
            st.1 += 1;
            return None;
        }
        let line = match std::mem::take(&mut st.1) {
            0 => format!("warning: {} failed: {reason}", self.what),
            n => format!(
                "warning: {} failed: {reason} ({n} more since the last warning)",
                self.what
            ),
        };
        st.0 = Some(now);
        eprintln!("{line}");
        Some(line)
    }
}

/// An error with the chain of its sources ("error sending request for url (...): client error
/// (Connect): tcp connect error: Connection refused (os error 111)"): reqwest's own message
/// alone does not say why.
pub fn cause(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_names_every_source_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let outer = std::io::Error::other(io);
        assert_eq!(cause(&outer), "refused");
        #[derive(Debug)]
        struct Wrap(std::io::Error);
        impl std::fmt::Display for Wrap {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("sending the report")
            }
        }
        impl std::error::Error for Wrap {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Wrap(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "refused",
        ));
        assert_eq!(cause(&e), "sending the report: refused");
    }

    #[test]
    fn one_line_per_interval_with_the_count_suppressed() {
        let w = Warn::new("steering report", Duration::from_millis(200));
        let first = w.warn("edge a: connection refused").unwrap();
        assert_eq!(
            first,
            "warning: steering report failed: edge a: connection refused"
        );
        for _ in 0..5 {
            assert!(w.warn("edge a: connection refused").is_none());
        }
        std::thread::sleep(Duration::from_millis(250));
        let next = w.warn("edge b: 401").unwrap();
        assert!(
            next.ends_with("edge b: 401 (5 more since the last warning)"),
            "{next}"
        );
    }
}
