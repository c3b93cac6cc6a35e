//! Per-server metrics as Prometheus text (exposition format 0.0.4). Written here rather than
//! with the `metrics` crate because that one keeps a global recorder, and a demo runs several
//! edges in one process, each with its own counters.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Status codes counted separately; others count as "other".
const CODES: [u16; 10] = [200, 400, 404, 405, 408, 414, 431, 502, 503, 504];
/// Latency histogram bucket bounds, seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    by_code: [AtomicU64; CODES.len() + 1],
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub collapsed: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub origin_fetches: AtomicU64,
    pub origin_errors: AtomicU64,
    pub in_flight: AtomicI64,
    latency: [AtomicU64; BUCKETS.len() + 1],
    latency_sum_us: AtomicU64,
}

impl Metrics {
    /// Counts a finished request.
    pub fn record(&self, code: u16, elapsed: Duration) {
        let i = CODES.iter().position(|&c| c == code).unwrap_or(CODES.len());
        self.by_code[i].fetch_add(1, Relaxed);
        let s = elapsed.as_secs_f64();
        let b = BUCKETS
            .iter()
            .position(|&b| s <= b)
            .unwrap_or(BUCKETS.len());
        self.latency[b].fetch_add(1, Relaxed);
        self.latency_sum_us
            .fetch_add(elapsed.as_micros() as u64, Relaxed);
    }

    /// Requests counted so far.
    pub fn requests(&self) -> u64 {
        self.by_code.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// The exposition text; `extra` are more (name, help, type, value) samples, the type
    /// "counter" or "gauge".
    pub fn render(&self, extra: &[(&str, &str, &str, f64)]) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
            );
        };
        let _ = writeln!(
            out,
            "# HELP cdnlab_requests_total Requests answered, by status code.\n# TYPE cdnlab_requests_total counter"
        );
        for (i, c) in self.by_code.iter().enumerate() {
            let code = CODES.get(i).map_or("other".to_string(), |c| c.to_string());
            let _ = writeln!(
                out,
                "cdnlab_requests_total{{code=\"{code}\"}} {}",
                c.load(Relaxed)
            );
        }
        counter(
            &mut out,
            "cdnlab_cache_hits_total",
            "Requests served from the cache.",
            self.hits.load(Relaxed),
        );
        counter(
            &mut out,
            "cdnlab_cache_misses_total",
            "Requests that fetched from the origin themselves.",
            self.misses.load(Relaxed),
        );
        counter(
            &mut out,
            "cdnlab_cache_collapsed_total",
            "Misses that waited for another request's origin fetch.",
            self.collapsed.load(Relaxed),
        );
        counter(
            &mut out,
            "cdnlab_bytes_sent_total",
            "Body bytes sent to clients.",
            self.bytes_sent.load(Relaxed),
        );
        counter(
            &mut out,
            "cdnlab_origin_fetches_total",
            "Fetches from the origin.",
            self.origin_fetches.load(Relaxed),
        );
        counter(
            &mut out,
            "cdnlab_origin_errors_total",
            "Origin fetches that failed (error status, timeout, connection).",
            self.origin_errors.load(Relaxed),
        );
        let _ = writeln!(
            out,
            "# HELP cdnlab_in_flight Requests being answered now.\n# TYPE cdnlab_in_flight gauge\ncdnlab_in_flight {}",
            self.in_flight.load(Relaxed)
        );
        for (name, help, kind, v) in extra {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP cdnlab_request_duration_seconds Time from a request to its response head.\n# TYPE cdnlab_request_duration_seconds histogram"
        );
        let mut cumulative = 0;
        for (i, c) in self.latency.iter().enumerate() {
            cumulative += c.load(Relaxed);
            let le = BUCKETS.get(i).map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(
                out,
                "cdnlab_request_duration_seconds_bucket{{le=\"{le}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "cdnlab_request_duration_seconds_sum {}\ncdnlab_request_duration_seconds_count {cumulative}",
            self.latency_sum_us.load(Relaxed) as f64 / 1e6
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative_and_codes_are_counted() {
        let m = Metrics::default();
        m.record(200, Duration::from_micros(300));
        m.record(200, Duration::from_millis(3));
        m.record(502, Duration::from_secs(20));
        m.record(418, Duration::from_millis(1));
        let t = m.render(&[("cdnlab_cache_objects", "Objects cached.", "gauge", 5.0)]);
        assert!(t.contains("cdnlab_requests_total{code=\"200\"} 2"));
        assert!(t.contains("cdnlab_requests_total{code=\"502\"} 1"));
        assert!(t.contains("cdnlab_requests_total{code=\"other\"} 1"));
        assert!(t.contains("cdnlab_request_duration_seconds_bucket{le=\"0.0005\"} 1"));
        assert!(t.contains("cdnlab_request_duration_seconds_bucket{le=\"0.005\"} 3"));
        assert!(t.contains("cdnlab_request_duration_seconds_bucket{le=\"+Inf\"} 4"));
        assert!(t.contains("cdnlab_request_duration_seconds_count 4"));
        assert!(t.contains("cdnlab_cache_objects 5"));
        assert_eq!(m.requests(), 4);
    }
}
