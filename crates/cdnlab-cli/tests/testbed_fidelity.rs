//! The link-fidelity goals (docs/testbed.md#link-fidelity) on CI's scenario, as root: every
//! link within them, no host-namespace socket toward the testbed at any time, nothing left after.
//!
//! A binary of its own, so that no other test shares the machine while it runs: cargo runs test
//! binaries one after another, and the goals are on the tail of the one-way delay. Inside the
//! `cli` binary it ran beside other tests, and a CI run failed it (the jittered link's p99
//! 2.235 ms over, against 2). Beside the `cli` binary's `run::` and `reproduce::` tests, the
//! scenario's p99 came 1.9-2.2 ms over in 3 of 11 runs (1,000 probes a link), though the element
//! and the probes run at real-time priority: `probes.csv` shows the whole path stalled for 6-60
//! ms at a time (this kernel does not preempt work inside it, and the virtual CPUs are the
//! host's to deschedule). Alone, 2 of 11 runs still met such a stall (p99 0.94 and 1.39 ms
//! over; 13 probes late within 50 ms in the second), hence 2,500 probes a link
//! (scenarios/testbed-ci.toml): one stall of up to 50 ms then moves fewer than 1% of them, so it
//! no longer decides the p99.
//!
//! Up to three runs: the next CI run of this binary, alone, met a slow machine for one link's
//! 10 s (the element's CPU time 134 µs a frame, four times its usual; the median 0.94 ms over;
//! p99 13.1 ms over), and the next link, and the three runs after, were as usual (0.14-0.28 ms
//! over). A machine its host slows says nothing about the emulator, and a wrong one misses every
//! run: with 2.5 ms added to the element's delay, all three runs missed (p99 2.6-3.5 ms over).
#![cfg(all(target_os = "linux", feature = "live"))]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Sockets of the host's own namespace (/proc/net/{tcp,udp}: the reader's namespace) with an
/// end in 198.18.0.0/15, as "proto local remote".
fn host_sockets_to_testbed() -> Vec<String> {
    let mut found = Vec::new();
    for proto in ["tcp", "udp"] {
        let text = std::fs::read_to_string(format!("/proc/net/{proto}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            for addr in f.iter().skip(1).take(2) {
                // Little-endian hex of the IPv4 address, then :port.
                let hex = addr.split(':').next().unwrap_or("");
                if let Ok(v) = u32::from_str_radix(hex, 16) {
                    let ip = std::net::Ipv4Addr::from(v.swap_bytes());
                    if ip.octets()[0] == 198 && (ip.octets()[1] & 0xfe) == 18 {
                        found.push(format!("{proto} {} {}", f[1], f[2]));
                    }
                }
            }
        }
    }
    found
}

/// The run's process, killed if a check fails while it runs (SIGKILL: its watchdog then tears
/// the testbed down at once), instead of left to finish on its own.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Up to this many runs of the scenario, the timing goals judged on each: see the module's
/// doc for why more than one.
const RUNS: usize = 3;

/// CI's scenario end to end: every link within the fidelity goals, no host socket toward the
/// testbed at any time, nothing left after. What does not depend on the machine's speed (the
/// guard, sockets, leftovers, a median never below the configured delay, the seeded losses) is
/// asserted in every run; the timing goals (p99 and goodput) must all hold in one run of
/// [`RUNS`], and every run that misses one prints what it missed.
#[test]
fn ci_scenario_meets_the_link_fidelity_goals_and_leaves_nothing() {
    if cdnlab_testkit::need(cdnlab_testkit::NETNS, cdnlab_testkit::netns()).is_none() {
        return;
    }
    let mut missed = Vec::new();
    for run in 1..=RUNS {
        let this = run_once();
        if this.is_empty() {
            return;
        }
        eprintln!("run {run} of {RUNS} missed a timing goal: {this:?}");
        missed.push(this);
    }
    panic!("every run missed a timing goal: {missed:?}");
}

/// One run of the scenario: asserts what does not depend on the machine's speed and returns
/// the timing goals it missed.
fn run_once() -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let out_dir = d.path().join("out");
    let mut run = Running(Some(
        Command::new(env!("CARGO_BIN_EXE_cdnlab"))
            .args(["testbed", "run", "scenarios/testbed-ci.toml", "--out"])
            .arg(&out_dir)
            .current_dir(repo())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let child = run.0.as_mut().unwrap();
    // While it runs: the host's own namespace never holds a socket with a testbed address.
    let start = Instant::now();
    let (mut seen_up, mut guarded) = (false, false);
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the CI scenario ran over 2 minutes"
        );
        let up = cdnlab_testkit::testbed_leftovers()
            .iter()
            .any(|l| l.starts_with("cdnlab-"));
        seen_up |= up;
        if up {
            // The host's route to a node's address (a lookup; nothing is sent) is the guard:
            // unreachable, not the default route out of the machine.
            let got = Command::new("ip")
                .args(["route", "get", "198.18.200.1"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&got.stdout).to_string()
                + &String::from_utf8_lossy(&got.stderr);
            if text.contains("unreachable") || text.contains("No route to host") {
                guarded = true;
            } else if cdnlab_testkit::testbed_leftovers()
                .iter()
                .any(|l| l.starts_with("unreachable"))
            {
                panic!("the host routes a testbed address elsewhere while the guard is up: {text}");
            }
        }
        let leak = host_sockets_to_testbed();
        assert!(
            leak.is_empty(),
            "host-namespace sockets toward the testbed: {leak:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = run.0.take().unwrap().wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(seen_up, "the testbed's namespaces were never seen");
    assert!(guarded, "the guard route was never seen");
    assert_eq!(
        cdnlab_testkit::testbed_leftovers(),
        Vec::<String>::new(),
        "left behind after a normal run"
    );
    let mut rows = csv::Reader::from_path(out_dir.join("fidelity.csv")).unwrap();
    let heads = rows.headers().unwrap().clone();
    let (mut n, mut missed) = (0, Vec::new());
    for r in rows.records() {
        let r = r.unwrap();
        let f = |k: &str| -> f64 {
            r[heads.iter().position(|h| h == k).unwrap()]
                .parse()
                .unwrap()
        };
        let link = format!("{}-{}", &r[1], &r[2]);
        // The goals of docs/testbed.md, written before the first run: one-way delay p99
        // within 2 ms of the configured delay's own 99th percentile (and the median above
        // it: a link is never faster than configured); ...
        if f("err_p99_ms").abs() >= 2.0 {
            missed.push(format!("{link}: p99 error {} ms", f("err_p99_ms")));
        }
        assert!(
            f("err_p50_ms") > -0.05,
            "{link}: median {} ms below the configured delay",
            f("err_p50_ms")
        );
        // ... goodput within 5% of the rate less headers on a loss-free link; ...
        if f("loss") == 0.0 && (f("goodput_ratio") - 1.0).abs() >= 0.05 {
            missed.push(format!("{link}: goodput ratio {}", f("goodput_ratio")));
        }
        // ... and lost probes within the central 95% of Binomial(sent, loss). The element's
        // draws are seeded and the probes are the first frames of the direction, so the
        // count is the same in every run.
        assert!(
            f("lost") >= f("lost_lo") && f("lost") <= f("lost_hi"),
            "{link}: lost {} outside {}-{}",
            f("lost"),
            f("lost_lo"),
            f("lost_hi")
        );
        assert_eq!(f("sent"), 2500.0);
        n += 1;
    }
    assert_eq!(n, 2);
    missed
}
