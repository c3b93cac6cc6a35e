//! Link fidelity: what each link of a running testbed does, against what it was configured to
//! do. Per link, from its `a` end to its `b` end: one-way delay of timestamped UDP probes
//! against the configured delay, their loss against the configured loss (the count must lie in
//! the central 95% of its binomial law), and TCP goodput against the rate less the headers of a
//! full segment (1448 bytes of payload in a 1514-byte frame: 20 IP, 20 TCP, 12 timestamp option,
//! 14 Ethernet); and the link element's CPU time per frame.

use super::net::Testbed;
use super::spec::FRAME_BYTES;
use serde::Serialize;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::Duration;

/// TCP payload of a full-sized segment at veth's MTU with timestamps (RFC 7323) on.
pub const MSS: f64 = 1448.0;
/// The port the probes use inside the namespaces (each namespace has its own ports).
const PORT: u16 = 5201;

/// How hard to probe (the `[experiment]` table with `kind = "fidelity"`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Plan {
    /// UDP probes per link.
    pub probes: u64,
    /// Probes per second (low enough that the probes themselves never queue).
    pub probe_rate: f64,
    /// Bytes of each probe's UDP payload.
    pub probe_bytes: usize,
    /// Seconds of the TCP transfer (0: no goodput measure).
    pub goodput_seconds: f64,
    /// Seconds after the first byte before goodput is counted (slow start).
    pub warmup_seconds: f64,
    /// Probe every link at once instead of one after another.
    pub concurrent: bool,
}

impl Plan {
    /// The plan of an `[experiment]` table (its `kind` already read), checked.
    pub fn from_table(table: &toml::Table, path: &std::path::Path) -> Result<Plan, crate::Error> {
        let plan: Plan = super::spec::experiment_plan(table, path)?;
        let bad = |f: &str, v: f64, allowed: &str| super::spec::bad_experiment(path, f, v, allowed);
        if !(1..=100_000).contains(&plan.probes) {
            return bad("probes", plan.probes as f64, "1 to 100000");
        }
        if !(plan.probe_rate.is_finite() && (1.0..=10_000.0).contains(&plan.probe_rate)) {
            return bad(
                "probe_rate",
                plan.probe_rate,
                "1 to 10000 probes per second",
            );
        }
        if !(24..=1400).contains(&plan.probe_bytes) {
            return bad("probe_bytes", plan.probe_bytes as f64, "24 to 1400 bytes");
        }
        if !(plan.goodput_seconds.is_finite() && (0.0..=600.0).contains(&plan.goodput_seconds)) {
            return bad(
                "goodput_seconds",
                plan.goodput_seconds,
                "0 (none) to 600 seconds",
            );
        }
        if !(plan.warmup_seconds.is_finite()
            && plan.warmup_seconds >= 0.0
            && (plan.goodput_seconds == 0.0 || plan.warmup_seconds < plan.goodput_seconds))
        {
            return bad(
                "warmup_seconds",
                plan.warmup_seconds,
                "0 up to goodput_seconds",
            );
        }
        Ok(plan)
    }
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            probes: 1000,
            probe_rate: 200.0,
            probe_bytes: 64,
            goodput_seconds: 6.0,
            warmup_seconds: 2.0,
            concurrent: false,
        }
    }
}

/// One link's fidelity.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub link: usize,
    pub a: String,
    pub b: String,
    pub rate_bps: f64,
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub loss: f64,
    pub queue_bytes: u64,
    pub sent: u64,
    pub received: u64,
    pub owd_p50_ms: f64,
    pub owd_p99_ms: f64,
    pub owd_max_ms: f64,
    /// Measured minus configured delay, at the median and the 99th percentile (with jitter:
    /// against the configured delay's own quantiles).
    pub err_p50_ms: f64,
    pub err_p99_ms: f64,
    pub lost: u64,
    /// The central 95% of lost probes under Binomial(sent, loss).
    pub lost_lo: u64,
    pub lost_hi: u64,
    pub reordered: u64,
    pub goodput_bps: f64,
    pub goodput_expected_bps: f64,
    /// Goodput over expected.
    pub goodput_ratio: f64,
    /// CPU time of the link element per frame it moved, both directions, microseconds.
    pub cpu_us_per_frame: f64,
    pub frames: u64,
    /// Every probe's one-way delay, ms, in arrival order (for the figure, not the table).
    #[serde(skip)]
    pub delays_ms: Vec<f64>,
}

/// The central 95% of Binomial(n, p): the smallest k with CDF >= 2.5% and with CDF >= 97.5%.
pub fn binomial_95(n: u64, p: f64) -> (u64, u64) {
    if p <= 0.0 {
        return (0, 0);
    }
    let mut lo = None;
    for k in 0..=n {
        let c = cdnlab::stats::binomial_cdf(n, p, k);
        if lo.is_none() && c >= 0.025 {
            lo = Some(k);
        }
        if c >= 0.975 {
            return (lo.unwrap_or(k), k);
        }
    }
    (lo.unwrap_or(n), n)
}

/// The q-quantile of sorted values (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Reads a probe's `ready` line, so the sender starts only once the receiver listens.
fn ready(
    child: &mut Child,
    what: &str,
) -> Result<BufReader<std::process::ChildStdout>, crate::Error> {
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line)
        .map_err(|e| crate::Error::io(what, e))?;
    if line.trim() != "ready" {
        let _ = child.kill();
        return Err(crate::Error::Testbed(format!(
            "{what} did not start (it said {line:?})"
        )));
    }
    Ok(out)
}

fn finish<T: serde::de::DeserializeOwned>(
    mut child: Child,
    mut out: BufReader<std::process::ChildStdout>,
    what: &str,
) -> Result<T, crate::Error> {
    let mut text = String::new();
    let _ = out.read_to_string(&mut text);
    let status = child.wait().map_err(|e| crate::Error::io(what, e))?;
    if !status.success() {
        return Err(crate::Error::Testbed(format!("{what} failed ({status})")));
    }
    serde_json::from_str(text.trim())
        .map_err(|e| crate::Error::Testbed(format!("{what}: unreadable result ({e})")))
}

/// One probe phase over `group`'s links: every receiver listening (it says `ready`) before any
/// sender starts, then every sender to its end, then every receiver's result.
pub(super) fn phase<T: serde::de::DeserializeOwned>(
    group: &[usize],
    what: &str,
    receiver: impl Fn(usize) -> std::process::Command,
    sender: impl Fn(usize) -> std::process::Command,
) -> Result<Vec<T>, crate::Error> {
    let (rx_name, tx_name) = (
        format!("the {what} probe receiver"),
        format!("the {what} probe sender"),
    );
    let mut receivers = Vec::new();
    for &l in group {
        let mut rx = spawn(&mut receiver(l), &rx_name)?;
        let out = ready(&mut rx, &rx_name)?;
        receivers.push((rx, out));
    }
    let mut senders = Vec::new();
    for &l in group {
        senders.push(spawn(&mut sender(l), &tx_name)?);
    }
    for s in senders {
        wait_ok(s, &tx_name)?;
    }
    receivers
        .into_iter()
        .map(|(rx, out)| finish(rx, out, &rx_name))
        .collect()
}

fn spawn(cmd: &mut std::process::Command, what: &str) -> Result<Child, crate::Error> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| crate::Error::io(what, e))
}

fn wait_ok(mut child: Child, what: &str) -> Result<(), crate::Error> {
    let status = child.wait().map_err(|e| crate::Error::io(what, e))?;
    if status.success() {
        Ok(())
    } else {
        Err(crate::Error::Testbed(format!("{what} failed ({status})")))
    }
}

/// Probes the links of `tb`: one at a time (so that they do not share the CPU), or all at once
/// with `plan.concurrent` (to find how much traffic the machine carries before fidelity
/// degrades).
pub fn measure(
    tb: &mut Testbed,
    plan: &Plan,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Row>, crate::Error> {
    let links = tb.spec.links.clone();
    let groups: Vec<Vec<usize>> = if plan.concurrent {
        vec![(0..links.len()).collect()]
    } else {
        (0..links.len()).map(|l| vec![l]).collect()
    };
    let before = tb.wire_counts()?;
    let mut rows = Vec::new();
    for group in groups {
        let name = |l: usize| {
            format!(
                "{}-{}",
                tb.spec.nodes[links[l].a].name, tb.spec.nodes[links[l].b].name
            )
        };
        progress(&format!(
            "{}: {} UDP probes, {} s of TCP",
            if group.len() == 1 {
                format!("link {} ({})", group[0], name(group[0]))
            } else {
                format!("{} links at once", group.len())
            },
            plan.probes,
            plan.goodput_seconds
        ));
        let to = |l: usize| format!("{}:{PORT}", tb.spec.nodes[links[l].b].address);
        let probes = plan.probes.to_string();
        let datagrams: Vec<super::probe::Datagrams> = phase(
            &group,
            "UDP",
            |l| {
                let limit =
                    plan.probes as f64 / plan.probe_rate + links[l].delay.as_secs_f64() * 2.0 + 5.0;
                let mut c = tb.cdnlab_realtime(links[l].b);
                c.args([
                    "testbed",
                    "probe",
                    "udp-recv",
                    "--listen",
                    &to(l),
                    "--count",
                    &probes,
                    "--limit-s",
                    &format!("{limit}"),
                ]);
                c
            },
            |l| {
                let mut c = tb.cdnlab_realtime(links[l].a);
                c.args([
                    "testbed",
                    "probe",
                    "udp-send",
                    "--to",
                    &to(l),
                    "--count",
                    &probes,
                ])
                .args([
                    "--rate",
                    &plan.probe_rate.to_string(),
                    "--bytes",
                    &plan.probe_bytes.to_string(),
                ]);
                c
            },
        )?;
        let transfers: Vec<super::probe::Transfer> = if plan.goodput_seconds > 0.0 {
            phase(
                &group,
                "TCP",
                |l| {
                    let mut c = tb.cdnlab(links[l].b);
                    c.args([
                        "testbed",
                        "probe",
                        "tcp-recv",
                        "--listen",
                        &to(l),
                        "--warmup-s",
                        &plan.warmup_seconds.to_string(),
                    ])
                    .args(["--limit-s", &format!("{}", plan.goodput_seconds + 30.0)]);
                    c
                },
                |l| {
                    let mut c = tb.cdnlab(links[l].a);
                    c.args([
                        "testbed",
                        "probe",
                        "tcp-send",
                        "--to",
                        &to(l),
                        "--seconds",
                        &plan.goodput_seconds.to_string(),
                    ]);
                    c
                },
            )?
        } else {
            vec![super::probe::Transfer::default(); group.len()]
        };
        for (k, &l) in group.iter().enumerate() {
            rows.push(row(tb, l, plan, &datagrams[k], &transfers[k]));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let after = tb.wire_counts()?;
    for r in &mut rows {
        let frames: u64 = (0..2)
            .map(|d| after[r.link][d].frames - before[r.link][d].frames)
            .sum();
        let cpu: u64 = (0..2)
            .map(|d| after[r.link][d].cpu_ns - before[r.link][d].cpu_ns)
            .sum();
        r.frames = frames;
        r.cpu_us_per_frame = if frames > 0 {
            cpu as f64 / 1e3 / frames as f64
        } else {
            0.0
        };
    }
    Ok(rows)
}

fn row(
    tb: &Testbed,
    l: usize,
    plan: &Plan,
    d: &super::probe::Datagrams,
    t: &super::probe::Transfer,
) -> Row {
    let link = &tb.spec.links[l];
    let (na, nb) = (&tb.spec.nodes[link.a], &tb.spec.nodes[link.b]);
    let arrivals: Vec<f64> = d.delays_us.iter().map(|&u| u as f64 / 1e3).collect();
    let mut owd = arrivals.clone();
    owd.sort_by(f64::total_cmp);
    let delay_ms = link.delay.as_secs_f64() * 1e3;
    let jitter_ms = link.jitter.as_secs_f64() * 1e3;
    // With uniform jitter of half-width j, the configured delay's q-quantile is
    // delay + j (2q - 1) (ignoring the first-in-first-out hold, which only adds).
    let want = |q: f64| delay_ms + jitter_ms * (2.0 * q - 1.0);
    let (p50, p99) = (quantile(&owd, 0.5), quantile(&owd, 0.99));
    let sent = d.sent.max(plan.probes);
    let lost = sent.saturating_sub(d.received);
    let (lost_lo, lost_hi) = binomial_95(sent, link.loss);
    let expected = link.rate * MSS / FRAME_BYTES as f64;
    Row {
        link: l,
        a: na.name.clone(),
        b: nb.name.clone(),
        rate_bps: link.rate,
        delay_ms,
        jitter_ms,
        loss: link.loss,
        queue_bytes: link.queue,
        sent,
        received: d.received,
        owd_p50_ms: p50,
        owd_p99_ms: p99,
        owd_max_ms: owd.last().copied().unwrap_or(f64::NAN),
        err_p50_ms: p50 - want(0.5),
        err_p99_ms: p99 - want(0.99),
        lost,
        lost_lo,
        lost_hi,
        reordered: d.reordered,
        goodput_bps: t.goodput,
        goodput_expected_bps: expected,
        goodput_ratio: if plan.goodput_seconds > 0.0 {
            t.goodput / expected
        } else {
            f64::NAN
        },
        cpu_us_per_frame: 0.0,
        frames: 0,
        delays_ms: arrivals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The central 95% of binomial laws, against exact rational arithmetic (Python's
    /// `fractions` and `math.comb`, summing the CDF until it passes 1/40 and 39/40).
    #[test]
    fn binomial_95_matches_exact_arithmetic() {
        assert_eq!(binomial_95(1000, 0.02), (12, 29));
        assert_eq!(binomial_95(10_000, 0.001), (4, 17));
        assert_eq!(binomial_95(10_000, 0.1), (942, 1059));
        assert_eq!(binomial_95(2000, 0.05), (81, 120));
        assert_eq!(binomial_95(500, 0.0), (0, 0));
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
