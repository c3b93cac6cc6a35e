//! `testbed`: bad descriptions refused before anything is built; without root it says so and
//! builds nothing; and, as root, nothing is left behind after a SIGKILL'd run, and the GWTW
//! video and steering experiments agree with the simulator. The root tests share one lock: two
//! testbeds at once would compete for the CPU their results are judged on. The link-fidelity
//! goals are checked in a test binary of their own (tests/testbed_fidelity.rs), where no other
//! test shares the machine.
#![cfg(all(target_os = "linux", feature = "live"))]

use super::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn bad_descriptions_are_refused_before_anything_is_built() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(repo().join("scenarios/testbed-ci.toml")).unwrap();
    for (edit, needles) in [
        (
            base.replace("b = \"users\"", "b = \"nobody\""),
            &[
                "bad.toml: link 2 (edge-nobody): b: \"nobody\" is not allowed; allowed: the name of a [[node]]",
            ][..],
        ),
        (
            base.replace("delay_ms = 20", "delay_ms = -3"),
            &["link 1 (origin-edge): delay_ms: -3 is not allowed"][..],
        ),
        (
            base.replace("rate = \"10Mbit\"", "rate = \"0Mbit\""),
            &["link 1 (origin-edge): rate: \"0Mbit\" is not allowed"][..],
        ),
        (
            base.replace("kind = \"fidelity\"", "kind = \"chess\""),
            &["experiment.kind: \"chess\" is not allowed; allowed: fidelity"][..],
        ),
        (
            base.replace("probes = 2500", "probes = 0"),
            &["experiment.probes: 0 is not allowed; allowed: 1 to 100000"][..],
        ),
    ] {
        std::fs::write(d.path().join("bad.toml"), edit).unwrap();
        fails_with(
            &cdnlab(&["testbed", "check", "bad.toml"], d.path()),
            needles,
        );
        fails_with(
            &cdnlab(&["testbed", "run", "bad.toml", "--out", "o"], d.path()),
            needles,
        );
        assert!(
            !d.path().join("o").exists(),
            "a refused run made its output folder"
        );
    }
    let out = ok(cdnlab(
        &["testbed", "check", "scenarios/testbed-ci.toml"],
        &repo(),
    ));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("3 nodes, 2 links, range 198.18.200.0/24"),
        "{text}"
    );
}

/// Without root's capabilities nothing is built and the message says what is needed. As root
/// the test drops every capability (`setpriv`: an empty bounding set, so the program runs with
/// none, as a user's would); as a user it has none already. Root is told by the capabilities,
/// not by the testbed's tools: as root without `ethtool`, the program run with root's
/// capabilities named the missing tool instead.
#[test]
fn without_root_it_says_so_and_builds_nothing() {
    let root = cdnlab_testkit::net_caps();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = cdnlab_testkit::testbed_leftovers();
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("scenarios/testbed-ci.toml"),
        d.path().join("s.toml"),
    )
    .unwrap();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--bounding-set=-all", "--inh-caps=-all"])
            .arg(env!("CARGO_BIN_EXE_cdnlab"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_cdnlab"))
    };
    let out = cmd
        .args(["testbed", "run", "s.toml", "--out", "o"])
        .current_dir(d.path())
        .output()
        .unwrap();
    fails_with(
        &out,
        &[
            "the testbed needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN",
            "Nothing was built",
        ],
    );
    assert_eq!(cdnlab_testkit::testbed_leftovers(), before);
    assert!(
        !d.path().join("o").exists(),
        "a refused run made its output folder"
    );
}

/// A run killed with SIGKILL (no chance to clean up) leaves nothing: its watchdog removes it.
#[test]
fn a_sigkilled_run_leaves_nothing() {
    if cdnlab_testkit::need(cdnlab_testkit::NETNS, cdnlab_testkit::netns()).is_none() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["testbed", "run", "scenarios/testbed-ci.toml", "--out"])
        .arg(d.path().join("out"))
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !cdnlab_testkit::testbed_leftovers()
        .iter()
        .any(|l| l.starts_with("cdnlab-"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the testbed never came up"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    while !cdnlab_testkit::testbed_leftovers().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "left behind 10 s after SIGKILL: {:?}",
            cdnlab_testkit::testbed_leftovers()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Experiment gwtw-video in CI (scenarios/testbed-gwtw-ci.toml, about 90 s): the real origin,
/// edges and GWTW users in namespaces behind links of two rates, judged against the simulator
/// on the same servers and candidates. One agreement is asserted, with its tolerance written
/// before the runs (docs/testbed.md#gwtw-video): at k = 1 the at-best share is the simulated
/// one (a third of the users short; EMU-GWTW-1). In eight runs it was 0.60-0.67 against an
/// allowed 0.50-0.83, and once 0.476 in CI with 20 s runs; runs are now 40 s, which narrowed
/// it to 0.56-0.67 in five runs (docs/testbed.md#ci). The others are reported, not asserted: their emulated values came within
/// a few percent of their bounds in some of those runs (k = 2's at-best share 0.867 against
/// 0.833), and EMU-GWTW-4 is a documented disagreement. As a check of the run rather than a
/// claim, k = 2 ends with more users at the best than k = 1.
#[test]
fn gwtw_video_agrees_with_the_simulator() {
    if cdnlab_testkit::need(cdnlab_testkit::NETNS, cdnlab_testkit::netns()).is_none() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let out_dir = d.path().join("out");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["testbed", "run", "scenarios/testbed-gwtw-ci.toml", "--out"])
        .arg(&out_dir)
        .current_dir(repo())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(started.elapsed() < Duration::from_secs(180), "over 180 s");
    assert_eq!(
        cdnlab_testkit::testbed_leftovers(),
        Vec::<String>::new(),
        "left behind"
    );
    let rows: Vec<csv::StringRecord> = csv::Reader::from_path(out_dir.join("agreement.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    let verdict = |claim: &str, case: &str| {
        rows.iter()
            .find(|r| &r[1] == claim && &r[2] == case)
            .map(|r| &r[6] == "true")
            .unwrap_or_else(|| panic!("no {claim} {case} in {rows:?}"))
    };
    assert!(verdict("EMU-GWTW-1", "k=1"), "k = 1: {text}");
    let share = |k: &str| -> f64 {
        let t = std::fs::read_to_string(out_dir.join("gwtw.csv")).unwrap();
        let line = t.lines().find(|l| l.starts_with(&format!("{k},"))).unwrap();
        line.split(',').nth(1).unwrap().parse().unwrap()
    };
    assert!(
        share("2") > share("1"),
        "k = 2 no better than k = 1: {text}"
    );
    // The run is reportable: run.json names it, and `testbed report` reads it.
    let report = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["testbed", "report"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(report.status.success());
    assert!(
        String::from_utf8_lossy(&report.stdout)
            .contains("## gwtw-video (scenarios/testbed-gwtw-ci.toml")
    );
}

/// Experiment steering in CI (scenarios/testbed-steering-ci.toml, about 100 s): the real
/// origin, edges and steering server in namespaces, 6 emulated sessions and a real hls.js,
/// dash.js and Shaka Player in headless Chromium in the namespaces of two populations, under
/// static priority and CMCD-QoE, edge-a's link cut to 5% at 12 s. Asserted, as checks of the
/// run: every session plays, each real player's too, 5 in one population and 4 in the other
/// (each with its own rows in the summary); under priority every segment of the north
/// population before the cut comes from edge-a (its 15 slots there hold north's 5 sessions,
/// and the order never changes; after the cut, fetches that time out send players to the next
/// pathway, so edge-a's share falls: 0.78 after the cut in the first two-population run);
/// under CMCD-QoE, whose sessions on edge-a starve after the cut (0.4 Mbit/s, four sessions at
/// the lowest rendition), at most 80% of the segments after the cut come from edge-a (0.17 to
/// 0.39 in five two-population runs; the bound was written after one smoke run on another
/// network, before this scenario's first run).
#[test]
fn steering_runs_real_players_and_emulated_sessions() {
    if cdnlab_testkit::need(cdnlab_testkit::NETNS, cdnlab_testkit::netns()).is_none() {
        return;
    }
    let root = repo();
    let players = root
        .join("player")
        .join(cdnlab_live::media::PLAYER_SCRIPTS[0].1);
    if cdnlab_testkit::need(cdnlab_testkit::PLAYERS, players.exists().then_some(())).is_none()
        || cdnlab_testkit::need(
            cdnlab_testkit::CHROMIUM,
            cdnlab_testkit::on_path("chromium"),
        )
        .is_none()
    {
        return;
    }
    if !root.join("target/media/manifest.mpd").exists() {
        if cdnlab_testkit::need(cdnlab_testkit::FFMPEG, cdnlab_testkit::on_path("ffmpeg")).is_none()
        {
            return;
        }
        let status = Command::new(root.join("media/make-asset.sh"))
            .arg(root.join("target/media"))
            .status()
            .unwrap();
        assert!(status.success(), "media/make-asset.sh failed");
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let out_dir = d.path().join("out");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args([
            "testbed",
            "run",
            "scenarios/testbed-steering-ci.toml",
            "--out",
        ])
        .arg(&out_dir)
        .current_dir(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    eprintln!("{err}{text}");
    assert!(started.elapsed() < Duration::from_secs(180), "over 180 s");
    assert_eq!(
        cdnlab_testkit::testbed_leftovers(),
        Vec::<String>::new(),
        "left behind"
    );
    let rows: Vec<csv::StringRecord> = csv::Reader::from_path(out_dir.join("viewers.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    for policy in ["priority", "cmcd-qoe"] {
        let of: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[0] == policy).collect();
        assert_eq!(
            of.len(),
            9,
            "{policy}: 6 emulated and 3 real sessions: {of:?}"
        );
        // policy, run, kind, real, population, startup_s, ...
        for r in &of {
            assert!(!r[5].is_empty(), "{policy}: a session never played: {r:?}");
        }
        let north = of.iter().filter(|r| &r[4] == "0").count();
        let south = of.iter().filter(|r| &r[4] == "1").count();
        assert_eq!((north, south), (5, 4), "{policy}: sessions per population");
        let mut real: Vec<&str> = of
            .iter()
            .filter(|r| &r[3] == "true")
            .map(|r| &r[2])
            .collect();
        real.sort();
        assert_eq!(real, ["dash", "hls", "shaka"], "{policy}");
    }
    let summary = std::fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    let metric = |policy: &str, m: &str| -> f64 {
        let line = summary
            .lines()
            .find(|l| l.starts_with(&format!("{policy},{m},")))
            .unwrap_or_else(|| panic!("no {policy} {m} in {summary}"));
        line.split(',').nth(3).unwrap().parse().unwrap()
    };
    assert!(metric("cmcd-qoe", "degraded_share") <= 0.8, "{text}");
    for p in [
        "pop0_bitrate_kbps",
        "pop1_bitrate_kbps",
        "population_gap_kbps",
    ] {
        assert!(metric("priority", p).is_finite(), "{p}");
    }
    assert!(
        std::fs::read_to_string(out_dir.join("summary.md"))
            .unwrap()
            .contains("## Populations"),
        "{text}"
    );
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("runs.json")).unwrap()).unwrap();
    let priority = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["policy"] == "priority")
        .unwrap();
    // North's sessions (population 0) all on edge-a before the cut: priority puts edge-a first
    // for everyone, and the allocation (costs by delay: north is 5 ms from edge-a, south 30)
    // gives north edge-a's 15 slots, more than its 5 viewers. Edge-a is south's farthest edge:
    // the allocation leaves south few of its slots or none, so edge-a may refuse south's
    // sessions, which then fall back (shown, not judged).
    let cut = priority["degraded_at_s"].as_f64().unwrap();
    let (mut before, mut south, mut south_a) = (0, 0, 0);
    for v in priority["viewers"].as_array().unwrap() {
        for seg in v["segments"].as_array().unwrap() {
            if seg[0].as_f64().unwrap() >= cut {
                continue;
            }
            if v["population"] == 0 {
                before += 1;
                assert_eq!(
                    seg[1], 0,
                    "priority: a north segment before the cut off edge-a: {v}"
                );
            } else {
                south += 1;
                south_a += usize::from(seg[1] == 0);
            }
        }
    }
    assert!(before >= 5, "{before} north segments before the cut");
    eprintln!("priority, before the cut: south's segments from edge-a {south_a} of {south}");
    for f in [
        "summary.md",
        "rebuffering.svg",
        "reaction.svg",
        "runs.json",
        "run.json",
    ] {
        assert!(out_dir.join(f).exists(), "{f}");
    }
}

/// `testbed report` (no root needed): the runs' cases into a report and the record, replacing
/// the rows of the same scenario and keeping the others; bad folders are named.
#[test]
fn report_writes_the_record() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let code = String::from_utf8(
        Command::new(env!("CARGO_BIN_EXE_cdnlab"))
            .args(["testbed", "report", "--help"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(code.contains("--record"));
    std::fs::write(
        run.join("run.json"),
        r#"{"experiment":"gwtw-video","scenario":"scenarios/x.toml","commit":"abc","date":"2026-12-04","code":"0000000000000000"}"#,
    )
    .unwrap();
    std::fs::write(
        run.join("agreement.csv"),
        "experiment,claim,case,emulated,simulated,tolerance,agree\n\
         gwtw-video,EMU-GWTW-1,k=1,at best 0.667,\"[0.667, 0.667]\",+- 1 user,true\n\
         gwtw-video,EMU-GWTW-4,k=2,50%,100%,at least 90%,false\n",
    )
    .unwrap();
    let record = d.path().join("record.csv");
    std::fs::write(
        &record,
        "experiment,claim,case,emulated,simulated,tolerance,agree,scenario,commit,date,code\n\
         gwtw-video,OLD,k=1,a,b,c,true,scenarios/x.toml,old,2026-01-01,1\n\
         gwtw-video,KEPT,k=1,a,b,c,true,scenarios/y.toml,old,2026-01-01,1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["testbed", "report"])
        .arg(&run)
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // The code fingerprint is not this build's: the report says the verdicts are stale.
    assert!(text.contains("stale: the code has changed since"), "{text}");
    assert!(
        text.contains("| EMU-GWTW-4 | k=2 | 50% | 100% | at least 90% | DISAGREE |"),
        "{text}"
    );
    let kept = std::fs::read_to_string(&record).unwrap();
    assert!(!kept.contains("OLD") && kept.contains("KEPT"), "{kept}");
    assert_eq!(kept.matches("scenarios/x.toml").count(), 2, "{kept}");
    // A folder without a run.json is named.
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["testbed", "report"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run.json"));
}

/// The judged experiments' tables are checked against their networks before anything is built.
#[test]
fn bad_experiments_are_refused_before_anything_is_built() {
    let d = tempfile::tempdir().unwrap();
    let gwtw = std::fs::read_to_string(repo().join("scenarios/testbed-gwtw.toml")).unwrap();
    let paths = std::fs::read_to_string(repo().join("scenarios/testbed-tp-paths.toml")).unwrap();
    let dht = std::fs::read_to_string(repo().join("scenarios/testbed-dht.toml")).unwrap();
    let admission =
        std::fs::read_to_string(repo().join("scenarios/testbed-tp-admission.toml")).unwrap();
    let segments =
        std::fs::read_to_string(repo().join("scenarios/testbed-tp-segments.toml")).unwrap();
    let steering = std::fs::read_to_string(repo().join("scenarios/testbed-steering.toml")).unwrap();
    for (edit, needle) in [
        (
            steering.replace("runs = 3", "runs = 0"),
            "experiment.runs: 0 is not allowed; allowed: 1 to 50",
        ),
        (
            steering.replace("\"cmcd-qoe\", \"prequal\"]", "\"fastest\"]"),
            "experiment.policies: fastest is not allowed; allowed: priority, nearest, tp, gwtw, cmcd-qoe, prequal",
        ),
        (
            steering.replace(
                "players = [\"hls\", \"dash\", \"shaka\"]",
                "players = [\"vlc\"]",
            ),
            "experiment.players: vlc is not allowed; allowed: hls, dash, shaka",
        ),
        (
            steering.replace(
                "calibrate = [\"hls\", \"dash\"",
                "calibrate = [\"dash\", \"dash\"",
            ),
            "experiment.calibrate: dash is not allowed; allowed: each of hls, dash, shaka at most once",
        ),
        (
            steering.replace("degrade = 0.15", "degrade = 0"),
            "experiment.degrade: 0 is not allowed; allowed: a share of the rate in (0, 1]",
        ),
        (
            steering.replace(
                "a = \"edge-c\"\nb = \"viewers\"",
                "a = \"edge-c\"\nb = \"origin\"",
            ),
            "experiment steering: edge edge-c's way to the viewers shares the link viewers-core with the viewers' way to the origin and the steering server",
        ),
        (
            dht.replace("crowd = [15.0, 35.0]", "crowd = [15.5, 35.0]"),
            "experiment.crowd: [15.5, 35.0] is not allowed; allowed: [start, end] seconds within the run",
        ),
        (
            dht.replacen("delay_ms = 5", "delay_ms = 9", 3),
            "one round trip time between the clients and every edge and between any two edges",
        ),
        (
            admission.replacen("role = \"edge\"", "role = \"router\"", 1),
            "8 edge nodes, one per reference metro",
        ),
        (
            segments.replace("segments = 30", "segments = 2"),
            "experiment.segments: 2 is not allowed; allowed: 3 to 10000",
        ),
        (
            segments.replacen("queue_bytes = 19798", "queue_bytes = 30000", 1),
            "paths as the packet model's: each with a bottleneck of its own, all of one rate and queue",
        ),
        (
            admission.replace("rho = 0.9", "rho = 0"),
            "experiment.rho: 0 is not allowed; allowed: (0, 3]",
        ),
        (
            gwtw.replace("ks = [1, 2, 3]", "ks = [1, 7]"),
            "experiment.ks: [1, 7] is not allowed; allowed: a list of k from 1 to the edges (6)",
        ),
        (
            gwtw.replace("tolerance = 0.1", "tolerance = 0.7"),
            "experiment.tolerance: 0.7 is not allowed; allowed: a share in [0, 0.5)",
        ),
        (
            gwtw.replace("role = \"origin\"", "role = \"router\""),
            "a network of one origin, one clients node and at least one edge (it has 0 origins",
        ),
        (
            paths.replace("sources = [1, 2, 4]", "sources = [5]"),
            "experiment.sources: [5] is not allowed; allowed: a list of 1 to the source edges (4)",
        ),
        (
            paths.replace("rate = 0.3", "rate = 1.5"),
            "experiment.rate: 1.5 is not allowed; allowed: packets per ms above 0, at most the path capacity (1.000)",
        ),
        (
            paths.replacen("rate = 8336000", "rate = 9000000", 1),
            "paths as the packet model's: each with a bottleneck of its own, all of one rate and queue",
        ),
        (
            paths.replace("seconds = 20", "seconds = 20\nwhatever = 1"),
            "experiment: unknown field `whatever`",
        ),
    ] {
        std::fs::write(d.path().join("bad.toml"), edit).unwrap();
        fails_with(
            &cdnlab(&["testbed", "check", "bad.toml"], d.path()),
            &[needle],
        );
    }
}

/// `run` takes several scenarios and checks them all, and their folders, before it builds
/// anything: a bad one refuses the whole run, and two that would write into one folder too.
#[test]
fn several_scenarios_are_checked_before_any_runs() {
    let d = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(repo().join("scenarios/testbed-dht.toml")).unwrap();
    std::fs::write(d.path().join("a.toml"), &good).unwrap();
    std::fs::write(
        d.path().join("b.toml"),
        good.replace("seconds = 60.0", "seconds = 0.5"),
    )
    .unwrap();
    fails_with(
        &cdnlab(
            &["testbed", "run", "a.toml", "b.toml", "--out", "o"],
            d.path(),
        ),
        &["b.toml", "experiment.seconds: 0.5 is not allowed"],
    );
    std::fs::create_dir(d.path().join("x")).unwrap();
    std::fs::write(d.path().join("x/a.toml"), &good).unwrap();
    fails_with(
        &cdnlab(
            &["testbed", "run", "a.toml", "x/a.toml", "--out", "o"],
            d.path(),
        ),
        &["two scenarios would write into o/a"],
    );
    assert!(!d.path().join("o").exists(), "a refused run made a folder");
}
