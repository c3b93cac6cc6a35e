//! `run`, `merge` and `plot`: scenario errors, precision targets, and sweeps identical whatever
//! the threads, shards or interruptions.

use super::*;

#[test]
fn scenario_errors_name_file_line_field_value_and_range() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("[params\nobjects = 5", "", &["s.toml", "line 1"]),
        ("seed = 3", "sede = 3", &["s.toml", "unknown field", "sede"]),
        (
            "objects = 500",
            "objects = \"big\"",
            &["s.toml", "line 6", "objects", "big", "whole number"],
        ),
        (
            "alpha = [0.6, 1.0]",
            "alpha = [0.6, -1.0]",
            &["line 10", "alpha", "-1", "from 0 to 5"],
        ),
        (
            "cache_size = [5, 50, 200]",
            "cache_size = [0]",
            &["cache_size", "0", "from 1"],
        ),
        (
            "replications = 3",
            "replications = -2",
            &["replications = -2", "from 1"],
        ),
        (
            "experiment = \"lru-che\"",
            "experiment = \"nope\"",
            &["unknown experiment `nope`", "lru-che, gwtw"],
        ),
    ];
    for (from, to, needles) in cases {
        let text = if to.is_empty() {
            from.to_string()
        } else {
            SCENARIO.replace(from, to)
        };
        let (d, p) = setup(&text);
        let out = cdnlab(&["run", p.to_str().unwrap(), "--out", "o"], d.path());
        fails_with(&out, needles);
        assert!(
            !d.path().join("o").exists(),
            "output written for a bad scenario"
        );
    }
    let d = tempfile::tempdir().unwrap();
    fails_with(
        &cdnlab(&["run", "missing.toml"], d.path()),
        &["missing.toml", "No such file"],
    );
}

/// The files a run writes; scenario.toml without its provenance entries (the command, time
/// and threads of each invocation differ by design).
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["results.csv", "summary.csv", "scenario.toml", "h.svg"]
        .iter()
        .map(|f| {
            let bytes = read(&dir.join(f));
            let bytes = if *f == "scenario.toml" {
                scenario_part(bytes)
            } else {
                bytes
            };
            (f.to_string(), bytes)
        })
        .collect()
}

/// The `[[provenance]]` entries of a run folder's scenario.toml.
fn provenance(dir: &Path) -> Vec<toml::Value> {
    let text = String::from_utf8(read(&dir.join("scenario.toml"))).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    doc.get("provenance")
        .and_then(|p| p.as_array().cloned())
        .unwrap_or_default()
}

/// SCENARIO with a precision target instead of a fixed count (30 at most): cells stop at
/// different replication counts. Cell 5 (alpha 1.0, cache 200) runs all 30 whatever its
/// interval.
fn precise() -> String {
    SCENARIO
        .replace("replications = 3\n", "replications = 30\n")
        .replace(
            "[[plots]]",
            "[precision]\nmin_replications = 3\nbatch = 4\n\
         relative_half_width = { hit_ratio = 0.02 }\n\
         fixed_where = [{ alpha = 1, cache_size = 200 }]\n[[plots]]",
        )
}

/// Sequential stopping: each cell stops at the first batch boundary (3, 7, 11, ..., 30) where
/// the target holds, or at 30 with target_met = false, and the rows are identical with 1 and 2
/// threads, across shards and after a resume.
#[test]
fn precision_targets_stop_alike_across_threads_shards_and_resume() {
    let (d, p) = setup(&precise());
    let s = p.to_str().unwrap();
    let ok = |args: &[&str]| ok(cdnlab(args, d.path()));
    ok(&["run", s, "--out", "t1", "--threads", "1"]);
    ok(&["run", s, "--out", "t2", "--threads", "2"]);
    let one = outputs(&d.path().join("t1"));
    assert_eq!(one, outputs(&d.path().join("t2")));
    ok(&["run", s, "--out", "a", "--shard", "0/2", "--threads", "2"]);
    ok(&["run", s, "--out", "b", "--shard", "1/2", "--threads", "1"]);
    ok(&["merge", "a", "b", "--out", "m"]);
    assert_eq!(one, outputs(&d.path().join("m")));
    for f in ["cells/cell-000000.csv", "cells/cell-000003.csv"] {
        std::fs::remove_file(d.path().join("t1").join(f)).unwrap();
    }
    ok(&["run", s, "--out", "t1", "--resume", "--threads", "2"]);
    assert_eq!(one, outputs(&d.path().join("t1")));

    // The rule, checked from the rows: per cell, the values of hit_ratio in replication order.
    let results = String::from_utf8(one[0].1.clone()).unwrap();
    let mut rdr = csv::Reader::from_reader(results.as_bytes());
    let h = rdr.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (ci, ri, hi) = (col("cell"), col("replication"), col("hit_ratio"));
    let mut per_cell: Vec<Vec<f64>> = vec![Vec::new(); 6];
    for r in rdr.records() {
        let r = r.unwrap();
        let cell: usize = r[ci].parse().unwrap();
        assert_eq!(r[ri].parse::<usize>().unwrap(), per_cell[cell].len());
        per_cell[cell].push(r[hi].parse().unwrap());
    }
    let met = |xs: &[f64]| {
        let s = cdnlab::stats::Summary::of(xs);
        s.ci95 <= 0.02 * s.mean.abs()
    };
    let summary = String::from_utf8(one[1].1.clone()).unwrap();
    let mut rdr = csv::Reader::from_reader(summary.as_bytes());
    let sh = rdr.headers().unwrap().clone();
    let (runs_i, met_i) = (
        sh.iter().position(|c| c == "runs").unwrap(),
        sh.iter().position(|c| c == "target_met").unwrap(),
    );
    let mut counts = std::collections::BTreeSet::new();
    for (cell, r) in rdr.records().enumerate() {
        let r = r.unwrap();
        let xs = &per_cell[cell];
        let n = xs.len();
        assert_eq!(r[runs_i].parse::<usize>().unwrap(), n);
        assert_eq!(r[met_i].parse::<bool>().unwrap(), met(xs), "cell {cell}");
        if cell == 5 {
            assert_eq!(n, 30, "cell 5 matches fixed_where");
            assert!(
                (3..30).step_by(4).any(|b| met(&xs[..b])),
                "cell 5 would have stopped before 30 without fixed_where"
            );
            continue;
        }
        counts.insert(n);
        assert!(
            n == 30 || (n >= 3 && (n - 3).is_multiple_of(4)),
            "cell {cell}: {n}"
        );
        // Not met at any earlier boundary; met at n unless n is the maximum.
        for b in (3..n).step_by(4) {
            assert!(!met(&xs[..b]), "cell {cell} could have stopped at {b}");
        }
        assert_eq!(r[met_i].parse::<bool>().unwrap(), met(xs), "cell {cell}");
        assert!(met(xs) || n == 30, "cell {cell}");
    }
    assert!(counts.len() >= 3, "cells stopped alike: {counts:?}");
    assert!(
        counts.contains(&30),
        "some cell should miss its target: {counts:?}"
    );
}

#[test]
fn sweeps_are_identical_across_threads_shards_and_resume() {
    let (d, p) = setup(SCENARIO);
    let s = p.to_str().unwrap();
    let ok = |args: &[&str]| ok(cdnlab(args, d.path()));
    ok(&["run", s, "--out", "t1", "--threads", "1"]);
    ok(&["run", s, "--out", "t2", "--threads", "2"]);
    let one = outputs(&d.path().join("t1"));
    assert_eq!(one, outputs(&d.path().join("t2")));
    // Each run's provenance: build, command, start, duration, threads, machine.
    let p1 = provenance(&d.path().join("t1"));
    assert_eq!(p1.len(), 1, "{p1:?}");
    assert_eq!(p1[0]["threads"].as_integer(), Some(1));
    assert_eq!(
        provenance(&d.path().join("t2"))[0]["threads"].as_integer(),
        Some(2)
    );
    assert_eq!(p1[0]["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    let command: Vec<&str> = p1[0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(command[1..], ["run", s, "--out", "t1", "--threads", "1"]);
    for key in ["commit", "started", "seconds", "cores", "os"] {
        assert!(p1[0].get(key).is_some(), "{key}: {p1:?}");
    }
    let results = String::from_utf8(one[0].1.clone()).unwrap();
    assert_eq!(results.lines().count(), 1 + 6 * 3);
    assert!(results.starts_with("cell,replication,seed,alpha,cache_size,"));

    ok(&["run", s, "--out", "a", "--shard", "0/2"]);
    ok(&["run", s, "--out", "b", "--shard", "1/2"]);
    let out = cdnlab(&["merge", "a", "--out", "m"], d.path());
    fails_with(&out, &["3 of 6 cells", "none of the folders"]);
    ok(&["merge", "a", "b", "--out", "m"]);
    assert_eq!(one, outputs(&d.path().join("m")));
    // The shards' entries and the merge's.
    let pm = provenance(&d.path().join("m"));
    assert_eq!(pm.len(), 3, "{pm:?}");
    assert_eq!(pm[2]["command"][1].as_str(), Some("merge"));

    // Interrupted run: remove some cells and the assembled files, then resume.
    for f in [
        "cells/cell-000001.csv",
        "cells/cell-000004.csv",
        "results.csv",
    ] {
        std::fs::remove_file(d.path().join("t1").join(f)).unwrap();
    }
    let out = cdnlab(&["run", s, "--out", "t1"], d.path());
    fails_with(&out, &["already holds results", "--resume"]);
    ok(&["run", s, "--out", "t1", "--resume"]);
    assert_eq!(one, outputs(&d.path().join("t1")));
    assert_eq!(
        provenance(&d.path().join("t1")).len(),
        2,
        "the first run's and the resume's"
    );

    // A run killed before its end has no provenance entry yet (it is written last): its
    // folder resumes too (it was refused as "a different scenario" once).
    let t2 = d.path().join("t2");
    let text = std::fs::read_to_string(t2.join("scenario.toml")).unwrap();
    let scenario = &text[..text.find("[[provenance]]").unwrap()];
    std::fs::write(t2.join("scenario.toml"), scenario).unwrap();
    std::fs::remove_file(t2.join("cells/cell-000002.csv")).unwrap();
    ok(&["run", s, "--out", "t2", "--resume"]);
    assert_eq!(one, outputs(&t2));

    // A different scenario never mixes into an existing folder.
    std::fs::write(&p, SCENARIO.replace("seed = 3", "seed = 4")).unwrap();
    let out = cdnlab(&["run", s, "--out", "t1", "--resume"], d.path());
    fails_with(&out, &["different scenario"]);
    let out = cdnlab(&["merge", "t1", "t2", "--out", "m2"], d.path());
    assert!(out.status.success());
    std::fs::write(d.path().join("t2/scenario.toml"), "x").unwrap();
    fails_with(
        &cdnlab(&["merge", "t1", "t2", "--out", "m3"], d.path()),
        &["different scenario"],
    );
}

const GWTW: &str = r#"
experiment = "gwtw"
replications = 2
[params]
servers = 40
horizon = 300
[grid]
k = [1, 2]
model = ["web", "video"]
"#;

/// GWTW bad input: each gets one message naming the parameter, the value and what is allowed.
#[test]
fn gwtw_bad_input() {
    let cases: &[(&str, &[&str])] = &[
        ("k = 0", &["k", "0", "from 1"]),
        ("k = 41", &["k", "41", "number of servers (40)"]),
        ("tau = 0", &["tau", "0", "from 1"]),
        ("partial = 1.5", &["partial", "1.5", "from 0 to 1"]),
        ("partial = -0.1", &["partial", "-0.1", "from 0 to 1"]),
        ("cache_size = 0", &["cache_size", "0", "from 1"]),
        ("catalogue = 0", &["catalogue", "0", "from 1"]),
        ("alpha = -0.5", &["alpha", "-0.5", "from 0"]),
        ("r_max = 0", &["r_max", "0", "above 0"]),
        ("q = 0", &["q", "0", "above 0, at most 1"]),
        ("measure = 301", &["measure", "301", "horizon (300)"]),
        ("model = \"audio\"", &["model", "audio", "web, video"]),
    ];
    for (line, needles) in cases {
        let text = GWTW.replace("horizon = 300", &format!("horizon = 300\n{line}"));
        // A name that is also swept must leave the grid.
        let text = if line.starts_with("k =") || line.starts_with("model =") {
            text.replace("k = [1, 2]\n", "")
                .replace("model = [\"web\", \"video\"]\n", "")
        } else {
            text
        };
        let (d, p) = setup(&text);
        let out = cdnlab(&["run", p.to_str().unwrap(), "--out", "o"], d.path());
        fails_with(&out, needles);
    }
}

/// Runs scenario `text` with 1 and 2 threads and checks that results and summary are
/// byte-identical.
fn identical_across_threads(text: &str) {
    let (d, p) = setup(text);
    let s = p.to_str().unwrap();
    for (t, o) in [("1", "a"), ("2", "b")] {
        let out = cdnlab(&["run", s, "--out", o, "--threads", t], d.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for f in ["results.csv", "summary.csv"] {
        assert_eq!(
            read(&d.path().join("a").join(f)),
            read(&d.path().join("b").join(f)),
            "{f}"
        );
    }
}

/// GWTW results are identical whatever the thread count.
#[test]
fn gwtw_is_identical_across_threads() {
    identical_across_threads(GWTW);
}

const MULTIHASH: &str = r#"
experiment = "multihash"
replications = 2
[params]
nodes = 60
files = 400
k = 64
window = 50.0
horizon = 12
measure = 3
fail_fraction = 0.1
fail_at = 5
growth = "jump"
[grid]
repair = ["rgr", "request"]
"#;

/// Multi-hash bad input: each gets one message naming the parameter, the value and what is
/// allowed.
#[test]
fn multihash_bad_input() {
    let cases: &[(&str, &[&str])] = &[
        ("k = 0", &["k", "0", "from 1"]),
        ("nodes = 0", &["nodes", "0", "from 1"]),
        ("alpha = -1", &["alpha", "-1", "from 0"]),
        (
            "fail_fraction = 1.5",
            &["fail_fraction", "1.5", "from 0 to 1"],
        ),
        (
            "fail_fraction = -0.2",
            &["fail_fraction", "-0.2", "from 0 to 1"],
        ),
        ("c_high = 0", &["c_high", "0", "above 0"]),
        ("c_high = -1", &["c_high", "-1", "above 0"]),
        ("gamma = 1", &["gamma", "1", "above 0 and below 1"]),
        ("measure = 13", &["measure", "13", "horizon (12)"]),
        (
            "growth = \"triple\"",
            &["growth", "triple", "one, double, jump"],
        ),
    ];
    for (line, needles) in cases {
        // The bad line replaces the scenario's own setting of that parameter.
        let key = line.split(" =").next().unwrap();
        let text: String = MULTIHASH
            .lines()
            .filter(|l| !l.starts_with(&format!("{key} =")))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .replace("[params]\n", &format!("[params]\n{line}\n"));
        let (d, p) = setup(&text);
        let out = cdnlab(&["run", p.to_str().unwrap(), "--out", "o"], d.path());
        fails_with(&out, needles);
    }
    // The rbs experiment checks n against k and the gap against n.
    for (line, needles) in [
        ("k = 4\nn = 5", &["n", "5", "at most k (4)"][..]),
        (
            "n = 4\ngaps = \"single\"\ngap = 4",
            &["gap", "4", "from 1 to n - 1 (3)"][..],
        ),
    ] {
        let (d, p) = setup(&format!(
            "experiment = \"rbs\"\nreplications = 1\n[params]\nrequests = 10\n{line}\n"
        ));
        let out = cdnlab(&["run", p.to_str().unwrap(), "--out", "o"], d.path());
        fails_with(&out, needles);
    }
}

/// Multi-hash results (crashes and repair included) are identical whatever the thread count.
#[test]
fn multihash_is_identical_across_threads() {
    identical_across_threads(MULTIHASH);
}

/// With standard error redirected (a Slurm or Kubernetes log), a line every few seconds says
/// how far the run is: cells done of the total, elapsed time and an ETA.
#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let (d, p) = setup(
        r#"name = "progress"
experiment = "gwtw"
seed = 1
replications = 2
[params]
horizon = 4000
[grid]
k = [2, 3]
servers = [800, 1600]
"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["run", p.to_str().unwrap(), "--threads", "1"])
        .current_dir(d.path())
        .env("CDNLAB_PROGRESS_SECS", "0.05")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<_> = err
        .lines()
        .filter(|l| l.starts_with("progress: ") && l.contains("/4 cells ("))
        .collect();
    assert!(!lines.is_empty(), "{err}");
    assert!(lines.iter().all(|l| l.contains(" elapsed, ETA ")), "{err}");
    // Without the variable's override the interval is 5 s, and 0 turns the lines off.
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(["run", p.to_str().unwrap(), "--out", "quiet"])
        .current_dir(d.path())
        .env("CDNLAB_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("progress: "));
}

/// `cdnlab plot DIR` re-draws a finished run's figures with other choices, from its cell
/// files, without running anything or touching its results; bad choices are refused by name.
#[test]
fn plot_redraws_a_finished_run() {
    let (d, p) = setup(SCENARIO);
    let out = cdnlab(&["run", p.to_str().unwrap(), "--out", "r"], d.path());
    assert!(out.status.success(), "{out:?}");
    let results = read(&d.path().join("r/results.csv"));
    // A PNG and an SVG were written by the run itself.
    assert!(read(&d.path().join("r/h.png")).starts_with(b"\x89PNG\r\n\x1a\n"));
    let out = cdnlab(
        &[
            "plot",
            "r",
            "--x",
            "alpha",
            "--y",
            "abs_error",
            "--series",
            "cache_size",
            "--log-y",
            "--format",
            "png",
            "--scale",
            "1",
            "--name",
            "err",
            "--out",
            "figs",
        ],
        d.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let png = read(&d.path().join("figs/err.png"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // 760 x 480 at scale 1 (the IHDR chunk's width and height).
    assert_eq!(&png[16..24], &[0, 0, 2, 248, 0, 0, 1, 224]);
    assert!(!d.path().join("figs/err.svg").exists());
    // The scenario's own plot again, as SVG, with a log y axis labelled by the metric's unit.
    let out = cdnlab(
        &["plot", "r", "--log-y", "--format", "svg", "--out", "again"],
        d.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let svg = String::from_utf8(read(&d.path().join("again/h.svg"))).unwrap();
    assert!(svg.contains("hit_ratio, che_hit_ratio (fraction)"), "{svg}");
    assert_eq!(
        read(&d.path().join("r/results.csv")),
        results,
        "plot must not rewrite results"
    );
    // x may be a metric: a scatter, one marker per cell and no line.
    let out = cdnlab(
        &[
            "plot",
            "r",
            "--x",
            "che_hit_ratio",
            "--y",
            "hit_ratio",
            "--format",
            "svg",
            "--name",
            "scatter",
            "--out",
            "figs",
        ],
        d.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let svg = String::from_utf8(read(&d.path().join("figs/scatter.svg"))).unwrap();
    assert!(svg.contains("<g transform=\"translate("), "markers: {svg}");
    assert!(!svg.contains("stroke-width=\"1.6\""), "no line: {svg}");
    refuses(
        d.path(),
        &[
            (
                &["plot", "r", "--x", "requests", "--y", "hit_ratio"],
                &[
                    "requests",
                    "neither a grid parameter",
                    "alpha, cache_size",
                    "nor a metric",
                ],
            ),
            (
                &["plot", "r", "--x", "alpha", "--y", "speed"],
                &["unknown metric `speed`", "hit_ratio"],
            ),
            (&["plot", "nowhere"], &["no scenario.toml"]),
            (
                &["plot", "r", "--scale", "20"],
                &["--scale 20", "from 1 to 8"],
            ),
        ],
    );
}
