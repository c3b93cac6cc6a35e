//! What the sessions on one pathway report through CMCD, aggregated for steering: how many
//! sessions were active in the last window, how many of them starved (`bs`), and the spread of
//! their measured throughput, bitrate and buffer.
//!
//! One session, one vote. A session is counted under the name the CDN gave it (the edge's
//! signed session token), never under the `sid` it claims, and every aggregate is over
//! sessions, not requests: the starvation rate is the fraction of sessions that reported `bs`
//! in the window (not counting a session's first report here: its `bs` is about the pathway it
//! came from), the rest are quantiles of each session's latest value (a buffer reported at
//! startup, `su`, is left out: it is low by design). A session that lies
//! (reports starvation on every request, or a throughput of 100 Gbit/s) moves the starvation
//! rate by 1/n of the n sessions and a quantile by at most one rank: it cannot steer the
//! others beyond its own share.
//!
//! Memory is bounded: at most `max_sessions` are remembered. When the table is full, sessions
//! not seen for a window are forgotten (at most once per quarter window, so a flood of new
//! names costs no scan per request); a newcomer that still finds no room is not tracked and is
//! counted ([`Tally::untracked`]), so a flood cannot push out the sessions in use.

use super::cmcd::Report;
use std::collections::HashMap;

/// One session's latest state.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    last_ms: u64,
    starved_ms: Option<u64>,
    throughput_kbps: Option<u32>,
    bitrate_kbps: Option<u32>,
    buffer_ms: Option<u32>,
}

/// The aggregates of one pathway's sessions.
#[derive(Debug)]
pub struct Tally {
    window_ms: u64,
    max_sessions: usize,
    sessions: HashMap<u64, Seen>,
    pruned_ms: u64,
    untracked: u64,
}

/// Lower, middle and upper decile of one value over the sessions that reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    /// Sessions that reported the value.
    pub n: u32,
    pub p10: u32,
    pub p50: u32,
    pub p90: u32,
}

/// One window's aggregates.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Sessions seen in the window.
    pub sessions: u32,
    /// Of them, those that reported buffer starvation in the window.
    pub starving: u32,
    pub throughput_kbps: Spread,
    pub bitrate_kbps: Spread,
    pub buffer_ms: Spread,
}

impl Summary {
    /// Starving sessions over sessions (0 with no session).
    pub fn starvation(&self) -> f64 {
        if self.sessions == 0 {
            0.0
        } else {
            f64::from(self.starving) / f64::from(self.sessions)
        }
    }
}

impl Tally {
    /// A tally over windows of `window_ms` that remembers at most `max_sessions` sessions.
    pub fn new(window_ms: u64, max_sessions: usize) -> Tally {
        Tally {
            window_ms: window_ms.max(1),
            max_sessions: max_sessions.max(1),
            sessions: HashMap::new(),
            pruned_ms: 0,
            untracked: 0,
        }
    }

    /// Records `report` from `session` (the CDN's name for it) at time `now_ms`.
    pub fn record(&mut self, session: &str, now_ms: u64, report: &Report) {
        let key = xxhash_rust::xxh64::xxh64(session.as_bytes(), 0x5eed);
        if !self.sessions.contains_key(&key) && self.sessions.len() >= self.max_sessions {
            if now_ms >= self.pruned_ms + self.window_ms / 4 {
                self.prune(now_ms);
            }
            if self.sessions.len() >= self.max_sessions {
                self.untracked += 1;
                return;
            }
        }
        let new = !self.sessions.contains_key(&key);
        let s = self.sessions.entry(key).or_default();
        s.last_ms = s.last_ms.max(now_ms);
        // `bs` says the buffer ran dry since the previous request; at a session's first request
        // here that one went elsewhere (the session was just steered here), so it is not this
        // pathway's starvation.
        if report.starved && !new {
            s.starved_ms = Some(now_ms);
        }
        s.throughput_kbps = report.throughput_kbps.or(s.throughput_kbps);
        s.bitrate_kbps = report.bitrate_kbps.or(s.bitrate_kbps);
        // A buffer filling at startup (`su`) is low by design, not a warning.
        if !report.startup {
            s.buffer_ms = report.buffer_ms.or(s.buffer_ms);
        }
    }

    fn prune(&mut self, now_ms: u64) {
        let since = now_ms.saturating_sub(self.window_ms);
        self.sessions.retain(|_, s| s.last_ms >= since);
        self.pruned_ms = now_ms;
    }

    /// The aggregates of the sessions seen in the window ending at `now_ms` (forgetting the
    /// older ones).
    pub fn summary(&mut self, now_ms: u64) -> Summary {
        self.prune(now_ms);
        let since = now_ms.saturating_sub(self.window_ms);
        let mut sum = Summary {
            sessions: self.sessions.len() as u32,
            ..Summary::default()
        };
        let (mut tp, mut br, mut bl) = (Vec::new(), Vec::new(), Vec::new());
        for s in self.sessions.values() {
            if s.starved_ms.is_some_and(|t| t >= since) {
                sum.starving += 1;
            }
            tp.extend(s.throughput_kbps);
            br.extend(s.bitrate_kbps);
            bl.extend(s.buffer_ms);
        }
        sum.throughput_kbps = spread(tp);
        sum.bitrate_kbps = spread(br);
        sum.buffer_ms = spread(bl);
        sum
    }

    /// Sessions remembered now.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is remembered.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Reports from sessions that found the table full, since the start.
    pub fn untracked(&self) -> u64 {
        self.untracked
    }
}

/// Deciles by the nearest rank (the smallest value with at least that fraction at or below it).
fn spread(mut v: Vec<u32>) -> Spread {
    if v.is_empty() {
        return Spread::default();
    }
    v.sort_unstable();
    let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Spread {
        n: v.len() as u32,
        p10: rank(0.1),
        p50: rank(0.5),
        p90: rank(0.9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(starved: bool, mtp: u32, br: u32) -> Report {
        Report {
            starved,
            throughput_kbps: Some(mtp),
            bitrate_kbps: Some(br),
            buffer_ms: Some(4000),
            ..Report::default()
        }
    }

    /// Exact aggregates of a small window: per session, not per request.
    #[test]
    fn aggregates_per_session() {
        let mut t = Tally::new(10_000, 100);
        // Session a: 5 requests, starved once; b: 1 request; c: seen before the window.
        for i in 0..5 {
            t.record("a", 20_000 + i, &report(i == 2, 1000, 800));
        }
        t.record("b", 21_000, &report(false, 3000, 1600));
        t.record("c", 5_000, &report(true, 9000, 3200));
        let s = t.summary(25_000);
        assert_eq!((s.sessions, s.starving), (2, 1));
        assert_eq!(s.starvation(), 0.5);
        assert_eq!(
            s.throughput_kbps,
            Spread {
                n: 2,
                p10: 1000,
                p50: 1000,
                p90: 3000
            }
        );
        assert_eq!(t.len(), 2, "c was forgotten");
        // A starvation older than the window no longer counts, though the session does.
        t.record("a", 31_000, &report(false, 1000, 800));
        let s = t.summary(31_500);
        assert_eq!((s.sessions, s.starving), (1, 0));
    }

    /// A liar among n honest sessions moves the starvation rate by at most 1/n and the
    /// median throughput by at most one rank, however many requests it makes.
    #[test]
    fn a_lying_session_moves_the_aggregates_by_its_own_share() {
        let n = 20u32;
        // Each honest session reports twice (a first report's `bs` is not counted here).
        let mut honest = Tally::new(10_000, 1000);
        let mut t = Tally::new(10_000, 1000);
        for tally in [&mut honest, &mut t] {
            for k in 0..n {
                for at in [900, 1000] {
                    tally.record(&format!("s{k}"), at, &report(k < 2, 1000 + 10 * k, 800));
                }
            }
        }
        let before = honest.summary(2000);
        assert_eq!(before.starving, 2);
        for i in 0..10_000 {
            t.record(
                "liar",
                1000 + i % 900,
                &report(true, 100_000_000, 100_000_000),
            );
        }
        let after = t.summary(2000);
        assert!(
            (after.starvation() - before.starvation()).abs() <= 1.0 / f64::from(n) + 1e-12,
            "{before:?} {after:?}"
        );
        // Sorted honest throughputs 1000, 1010, ..., 1190: the median rank moves one place.
        assert!(after.throughput_kbps.p50 <= before.throughput_kbps.p50 + 10);
    }

    /// The table holds at most max_sessions; a flood of new names is not tracked while the
    /// sessions in use stay, and stale sessions make room once a window has passed.
    #[test]
    fn memory_is_bounded_and_a_flood_cannot_push_out_active_sessions() {
        let mut t = Tally::new(10_000, 10);
        for k in 0..10 {
            t.record(&format!("s{k}"), 1000, &report(false, 1000, 800));
        }
        for k in 0..100_000 {
            t.record(&format!("flood{k}"), 1000 + k / 100, &report(true, 1, 1));
        }
        assert_eq!(t.len(), 10);
        assert_eq!(t.untracked(), 100_000);
        let s = t.summary(2000);
        assert_eq!((s.sessions, s.starving), (10, 0));
        // Past the window the old sessions go and a newcomer is tracked.
        t.record("late", 12_000, &report(false, 500, 400));
        assert_eq!(t.len(), 1);
    }

    /// A session's first report here does not count its `bs` (that stall happened on the
    /// pathway it came from); its later ones do. A buffer reported at startup is left out.
    #[test]
    fn first_report_and_startup() {
        let mut t = Tally::new(10_000, 10);
        t.record("moved", 1000, &report(true, 1000, 800));
        assert_eq!(t.summary(1500).starving, 0);
        t.record("moved", 1200, &report(true, 1000, 800));
        assert_eq!(t.summary(1500).starving, 1);
        let start = Report {
            startup: true,
            buffer_ms: Some(100),
            ..Report::default()
        };
        t.record("new", 1300, &start);
        assert_eq!(
            t.summary(1500).buffer_ms.n,
            1,
            "only the session past startup"
        );
    }

    #[test]
    fn deciles_by_nearest_rank() {
        let s = spread((1..=10).collect());
        assert_eq!((s.n, s.p10, s.p50, s.p90), (10, 1, 5, 9));
        assert_eq!(spread(vec![7]).p10, 7);
        assert_eq!(spread(vec![]), Spread::default());
    }
}
