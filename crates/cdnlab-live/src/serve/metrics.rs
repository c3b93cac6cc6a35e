//! Per-server metrics through the `prometheus` crate, exposed as Prometheus text (format 0.0.4,
//! what `promtool check metrics` reads; the OpenMetrics text of `prometheus-client` names
//! counters without their `_total` suffix and promtool refuses it). Every server owns its own
//! [`Registry`] rather than the crate's global one, because a demo runs several edges in one
//! process, each with its own counters.
//!
//! The per-request counters and the latency histogram are the crate's atomics, created once
//! (one counter per counted status code), so the request path takes no lock. Values a server
//! already keeps (cache size, the DHT's counters, the steering plan) are read at scrape time
//! and handed to [`Metrics::render`] as [`family`]s.

use crate::serve::conns::Shed;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily};
use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry};
use prometheus::{TEXT_FORMAT, TextEncoder};
use std::time::Duration;

pub use prometheus::proto::MetricType as Kind;

/// Status codes counted separately; others count as "other".
const CODES: [u16; 10] = [200, 400, 404, 405, 408, 414, 431, 502, 503, 504];
/// Latency histogram bucket bounds, seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A server's request counters and latency histogram.
#[derive(Debug, Clone)]
pub struct Metrics {
    registry: Registry,
    /// `cdnlab_requests_total` for each of [`CODES`], then "other".
    by_code: Vec<IntCounter>,
    pub hits: IntCounter,
    pub misses: IntCounter,
    pub collapsed: IntCounter,
    pub bytes_sent: IntCounter,
    pub origin_fetches: IntCounter,
    pub origin_errors: IntCounter,
    pub in_flight: IntGauge,
    latency: Histogram,
    /// Connections refused because every slot was taken, or because their address had its
    /// share; idle ones closed to make room; open now; responses cut by the send timeout.
    pub refused_busy: IntCounter,
    pub refused_per_address: IntCounter,
    reclaimed: Vec<IntCounter>,
    pub connections: IntGauge,
    pub send_timeouts: IntCounter,
}

impl Default for Metrics {
    fn default() -> Self {
        // The names and label sets below are constants, registered once each: the crate can
        // only refuse them for a typo, which the tests would show.
        let registry = Registry::new();
        let register = |m: Box<dyn prometheus::core::Collector>| {
            registry
                .register(m)
                .expect("metric names are distinct constants");
        };
        let codes = IntCounterVec::new(
            Opts::new(
                "cdnlab_requests_total",
                "Requests answered, by status code.",
            ),
            &["code"],
        )
        .expect("a valid counter family");
        register(Box::new(codes.clone()));
        let by_code = CODES
            .iter()
            .map(|c| c.to_string())
            .chain(["other".to_string()])
            .map(|c| codes.with_label_values(&[c.as_str()]))
            .collect();
        let counter = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).expect("a valid counter");
            register(Box::new(c.clone()));
            c
        };
        let hits = counter("cdnlab_cache_hits_total", "Requests served from the cache.");
        let misses = counter(
            "cdnlab_cache_misses_total",
            "Requests that fetched from the origin themselves.",
        );
        let collapsed = counter(
            "cdnlab_cache_collapsed_total",
            "Misses that waited for another request's origin fetch.",
        );
        let bytes_sent = counter("cdnlab_bytes_sent_total", "Body bytes sent to clients.");
        let origin_fetches = counter("cdnlab_origin_fetches_total", "Fetches from the origin.");
        let origin_errors = counter(
            "cdnlab_origin_errors_total",
            "Origin fetches that failed (error status, timeout, connection).",
        );
        let in_flight = IntGauge::new("cdnlab_in_flight", "Requests being answered now.")
            .expect("a valid gauge");
        register(Box::new(in_flight.clone()));
        let latency = Histogram::with_opts(
            HistogramOpts::new(
                "cdnlab_request_duration_seconds",
                "Time from a request to its response head.",
            )
            .buckets(BUCKETS.to_vec()),
        )
        .expect("valid buckets");
        register(Box::new(latency.clone()));
        let refused = IntCounterVec::new(
            Opts::new(
                "cdnlab_connections_refused_total",
                "Connections answered 503 and closed: every slot taken (busy) or the client address at its limit (per_address).",
            ),
            &["reason"],
        )
        .expect("a valid counter family");
        register(Box::new(refused.clone()));
        let reclaimed = IntCounterVec::new(
            Opts::new(
                "cdnlab_connections_reclaimed_total",
                "Connections shed to make room for a new one when every slot was taken, by reason: idle keep-alive, partial head past its grace, slow reader, fair share between addresses.",
            ),
            &["reason"],
        )
        .expect("a valid counter family");
        register(Box::new(reclaimed.clone()));
        let reclaimed = Shed::ALL
            .iter()
            .map(|r| reclaimed.with_label_values(&[r.label()]))
            .collect();
        let connections = IntGauge::new("cdnlab_connections_open", "Connections being served.")
            .expect("a valid gauge");
        register(Box::new(connections.clone()));
        let send_timeouts = counter(
            "cdnlab_send_timeouts_total",
            "Connections closed because the client took no bytes within the send timeout.",
        );
        Metrics {
            refused_busy: refused.with_label_values(&["busy"]),
            refused_per_address: refused.with_label_values(&["per_address"]),
            reclaimed,
            connections,
            send_timeouts,
            registry,
            by_code,
            hits,
            misses,
            collapsed,
            bytes_sent,
            origin_fetches,
            origin_errors,
            in_flight,
            latency,
        }
    }
}

impl Metrics {
    /// The count of connections shed for `why`.
    pub fn reclaimed(&self, why: Shed) -> &IntCounter {
        &self.reclaimed[Shed::ALL.iter().position(|&r| r == why).unwrap_or(0)]
    }

    /// Counts a finished request.
    pub fn record(&self, code: u16, elapsed: Duration) {
        let i = CODES.iter().position(|&c| c == code).unwrap_or(CODES.len());
        self.by_code[i].inc();
        self.latency.observe(elapsed.as_secs_f64());
    }

    /// Requests counted so far.
    pub fn requests(&self) -> u64 {
        self.by_code.iter().map(IntCounter::get).sum()
    }

    /// The exposition text of these metrics and the scrape-time `extra` families.
    pub fn render(&self, extra: Vec<MetricFamily>) -> String {
        let mut families = self.registry.gather();
        families.extend(extra);
        encode(&families)
    }
}

/// A metric family of `kind` (counter or gauge) with one sample per (labels, value).
pub fn family<'a>(
    name: &str,
    help: &str,
    kind: Kind,
    samples: impl IntoIterator<Item = (Vec<(&'a str, String)>, f64)>,
) -> MetricFamily {
    let mut f = MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(kind);
    f.set_metric(
        samples
            .into_iter()
            .map(|(labels, v)| {
                let mut m = Metric::default();
                m.set_label(
                    labels
                        .into_iter()
                        .map(|(k, v)| {
                            let mut l = LabelPair::default();
                            l.set_name(k.to_string());
                            l.set_value(v);
                            l
                        })
                        .collect(),
                );
                if kind == Kind::COUNTER {
                    let mut c = Counter::default();
                    c.set_value(v);
                    m.set_counter(c);
                } else {
                    let mut g = Gauge::default();
                    g.set_value(v);
                    m.set_gauge(g);
                }
                m
            })
            .collect(),
    );
    f
}

/// A family of one unlabelled sample.
pub fn single(name: &str, help: &str, kind: Kind, value: f64) -> MetricFamily {
    family(name, help, kind, [(Vec::new(), value)])
}

/// Prometheus text of `families`; those without samples (a labelled family with no label set
/// yet, such as per-file replicas before any replication) are left out, as the text format has
/// no way to write them and the encoder refuses them.
pub fn encode(families: &[MetricFamily]) -> String {
    let mut families = families.to_vec();
    families.retain(|f| !f.get_metric().is_empty());
    // The encoder refuses nothing else that `family` builds; say so in the text rather than
    // fail the scrape.
    TextEncoder::new()
        .encode_to_string(&families)
        .unwrap_or_else(|e| format!("# encoding failed: {e}\n"))
}

/// The `/metrics` response of an exposition text.
pub fn response(text: String) -> Response {
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], text).into_response()
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
        m.hits.inc_by(7);
        let t = m.render(vec![
            single("cdnlab_cache_objects", "Objects cached.", Kind::GAUGE, 5.0),
            family(
                "cdnlab_x_total",
                "Labelled.",
                Kind::COUNTER,
                [(vec![("file", "a\"b".to_string())], 2.0)],
            ),
            family("cdnlab_empty", "No samples yet.", Kind::GAUGE, []),
        ]);
        assert!(!t.contains("cdnlab_empty"), "{t}");
        for line in [
            "# TYPE cdnlab_requests_total counter",
            "cdnlab_requests_total{code=\"200\"} 2",
            "cdnlab_requests_total{code=\"502\"} 1",
            "cdnlab_requests_total{code=\"other\"} 1",
            "cdnlab_requests_total{code=\"404\"} 0",
            "cdnlab_cache_hits_total 7",
            "cdnlab_request_duration_seconds_bucket{le=\"0.0005\"} 1",
            "cdnlab_request_duration_seconds_bucket{le=\"0.005\"} 3",
            "cdnlab_request_duration_seconds_bucket{le=\"+Inf\"} 4",
            "cdnlab_request_duration_seconds_count 4",
            "# TYPE cdnlab_cache_objects gauge",
            "cdnlab_cache_objects 5",
            // Label values are escaped by the encoder.
            "cdnlab_x_total{file=\"a\\\"b\"} 2",
        ] {
            assert!(t.lines().any(|l| l == line), "no line {line:?} in\n{t}");
        }
        assert_eq!(m.requests(), 4);
        // Clones share the counters (the edge hands them to its tasks).
        m.clone().hits.inc();
        assert_eq!(m.hits.get(), 8);
    }
}
