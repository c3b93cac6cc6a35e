//! End-to-end tests of the `cdnlab` binary: bad input of every class gets a non-zero exit and one
//! clear message (never a panic), and sweeps are identical whatever the threads, shards or
//! interruptions.

use cdnlab::Named;
use cdnlab::cache::Policy;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cdnlab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run cdnlab")
}

/// Asserts success (showing standard error if not) and hands the output on.
fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Asserts failure with a message containing every `needle`, and no panic or backtrace.
fn fails_with(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded; stderr: {err}");
    assert!(
        err.starts_with("error: ") || err.contains("error:"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "missing `{n}` in: {err}");
    }
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

const SCENARIO: &str = r#"
experiment = "lru-che"
seed = 3
replications = 3
[params]
objects = 500
warmup = 2000
requests = 5000
[grid]
alpha = [0.6, 1.0]
cache_size = [5, 50, 200]
[[plots]]
file = "h.svg"
x = "cache_size"
y = ["hit_ratio", "che_hit_ratio"]
series = "alpha"
log_x = true
"#;

fn setup(text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.toml");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

/// A successful run's standard output as JSON Lines (one value a line).
fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs `cdnlab gen-trace` with `args` in `dir`, which must succeed.
fn gen_trace(dir: &Path, args: &[&str]) {
    let mut all = vec!["gen-trace"];
    all.extend_from_slice(args);
    let out = cdnlab(&all, dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

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

#[test]
fn flag_errors() {
    let (d, p) = setup(SCENARIO);
    let s = p.to_str().unwrap();
    fails_with(
        &cdnlab(&["run", s, "--shard", "3/2"], d.path()),
        &["--shard 3/2", "0 to 1"],
    );
    fails_with(
        &cdnlab(&["run", s, "--threads", "0"], d.path()),
        &["--threads 0"],
    );
    // An output folder that cannot be created (under a regular file; root ignores permissions).
    std::fs::write(d.path().join("file"), "").unwrap();
    fails_with(
        &cdnlab(&["run", s, "--out", "file/sub"], d.path()),
        &["file/sub"],
    );
    fails_with(
        &cdnlab(&["reproduce", "--only", "nope"], d.path()),
        &["--only nope", "cache-che"],
    );
    // clap's own usage errors also exit non-zero without a panic.
    let out = cdnlab(&["cache-replay", "--size", "x", "--trace", "t"], d.path());
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

fn record(time: u32, id: u64, size: u32, next: i64) -> Vec<u8> {
    let mut b = time.to_le_bytes().to_vec();
    b.extend(id.to_le_bytes());
    b.extend(size.to_le_bytes());
    b.extend(next.to_le_bytes());
    b
}

#[test]
fn trace_errors_and_replay() {
    let d = tempfile::tempdir().unwrap();
    let good: Vec<u8> = [(0, 1, 1, 2), (1, 2, 1, -1), (2, 1, 1, -1)]
        .iter()
        .flat_map(|&(t, i, s, n)| record(t, i, s, n))
        .collect();
    std::fs::write(d.path().join("good.bin"), &good).unwrap();
    std::fs::write(d.path().join("trunc.bin"), &good[..50]).unwrap();
    let mut corrupt = good.clone();
    corrupt[24 + 16..24 + 24].copy_from_slice(&(-7i64).to_le_bytes());
    std::fs::write(d.path().join("corrupt.bin"), &corrupt).unwrap();
    std::fs::write(d.path().join("empty.bin"), b"").unwrap();
    std::fs::write(d.path().join("bad.csv"), "1\n2\nxyz\n").unwrap();
    let replay = |t: &str, extra: &[&str]| {
        let mut a = vec!["cache-replay", "--trace", t, "--size", "1"];
        a.extend_from_slice(extra);
        cdnlab(&a, d.path())
    };
    fails_with(&replay("nope.bin", &[]), &["nope.bin", "No such file"]);
    fails_with(
        &replay("trunc.bin", &[]),
        &["trunc.bin", "truncated", "50 bytes", "2 stray"],
    );
    fails_with(
        &replay("corrupt.bin", &[]),
        &["corrupt.bin", "record 1", "offset 24", "next_access", "-7"],
    );
    fails_with(&replay("empty.bin", &[]), &["empty.bin", "empty"]);
    fails_with(
        &replay("bad.csv", &["--format", "csv"]),
        &["bad.csv", "line 3", "xyz"],
    );
    fails_with(
        &replay("good.bin", &["--policy", "arcc"]),
        &["arcc", "lru, fifo"],
    );
    fails_with(
        &replay("good.bin", &["--size-unit", "kb"]),
        &["kb", "objects, bytes"],
    );
    let out = cdnlab(
        &["cache-replay", "--trace", "good.bin", "--size", "0"],
        d.path(),
    );
    fails_with(&out, &["--size `0`", "above 0"]);

    let out = replay("good.bin", &["--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // LRU of one object on 1 2 1: three misses.
    assert_eq!(v["requests"], 3);
    assert_eq!(v["hits"], 0);
    assert_eq!(v["miss_ratio"], 1.0);
    for k in ["sim_seconds", "mreq_per_s", "read_seconds"] {
        assert!(v[k].is_number(), "{k}");
    }
    let out = cdnlab(
        &[
            "cache-replay",
            "--trace",
            "good.bin",
            "--size",
            "2",
            "--json",
        ],
        d.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"], 1);
}

/// Many policies and sizes in one run: the same hits as one run per (policy, size), whatever
/// the threads; fractions of the working set counted as libCacheSim does (distinct objects,
/// truncated); the miss-ratio curve drawn; bad sizes and plot paths refused.
#[test]
fn replay_many_policies_and_sizes_in_one_run() {
    let d = tempfile::tempdir().unwrap();
    gen_trace(
        d.path(),
        &[
            "--out",
            "t.bin",
            "--objects",
            "3000",
            "--requests",
            "30000",
            "--alpha",
            "0.8",
            "--seed",
            "5",
        ],
    );
    let bytes = read(&d.path().join("t.bin"));
    let distinct: std::collections::HashSet<u64> = bytes
        .chunks_exact(24)
        .map(|r| u64::from_le_bytes(r[4..12].try_into().unwrap()))
        .collect();
    let key = |v: &serde_json::Value| {
        (
            v["policy"].as_str().unwrap().to_string(),
            v["size"].as_u64().unwrap(),
            v["hits"].as_u64().unwrap(),
        )
    };
    let many = |threads: &str| {
        json_lines(&cdnlab(
            &[
                "cache-replay",
                "--trace",
                "t.bin",
                "--policy",
                "all",
                "--size",
                "0.01,0.1,50",
                "--json",
                "--threads",
                threads,
                "--plot",
                "m/mrc.svg",
            ],
            d.path(),
        ))
    };
    // With one worker the trace is read ahead on a second thread (on 2 or more cores), with two
    // it is not; 30,000 requests are two chunks of 16,384: the answers must not differ.
    let (one, two) = (many("1"), many("2"));
    assert_eq!(one.len(), 3 * Policy::ALL.len(), "every policy x 3 sizes");
    assert_eq!(
        one.iter().map(key).collect::<Vec<_>>(),
        two.iter().map(key).collect::<Vec<_>>()
    );
    let wss = distinct.len() as f64;
    for v in &one {
        assert_eq!(v["working_set_objects"], distinct.len() as u64, "{v}");
        let want = match v["size_fraction"].as_f64() {
            Some(f) => (wss * f) as u64,
            None => 50,
        };
        assert_eq!(v["size"], want, "{v}");
        let single = json_lines(&cdnlab(
            &[
                "cache-replay",
                "--trace",
                "t.bin",
                "--policy",
                v["policy"].as_str().unwrap(),
                "--size",
                &want.to_string(),
                "--json",
            ],
            d.path(),
        ));
        assert_eq!(single.len(), 1);
        assert_eq!(key(&single[0]), key(v), "one run per (policy, size) agrees");
    }
    for f in ["m/mrc.svg", "m/mrc.png"] {
        assert!(d.path().join(f).is_file(), "{f}");
    }
    let csv = cdnlab(
        &[
            "cache-replay",
            "--trace",
            "t.bin",
            "--policy",
            "lru,fifo",
            "--size",
            "0.1,200",
            "--csv",
            "--no-plot",
        ],
        d.path(),
    );
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(
        text.starts_with("trace,format,policy,size,size_fraction"),
        "{text}"
    );
    // Bytes: the working set is the distinct objects' bytes (100 each here).
    gen_trace(
        d.path(),
        &[
            "--out",
            "s.bin",
            "--objects",
            "3000",
            "--requests",
            "30000",
            "--alpha",
            "0.8",
            "--seed",
            "5",
            "--size",
            "100",
        ],
    );
    let v = json_lines(&cdnlab(
        &[
            "cache-replay",
            "--trace",
            "s.bin",
            "--size",
            "0.1",
            "--size-unit",
            "bytes",
            "--json",
        ],
        d.path(),
    ));
    assert_eq!(v[0]["working_set_bytes"], 100 * distinct.len() as u64);
    assert_eq!(v[0]["size"], (0.1 * 100.0 * wss) as u64);
    fails_with(
        &cdnlab(
            &["cache-replay", "--trace", "t.bin", "--size", "0.00001"],
            d.path(),
        ),
        &["--size 0.00001", "less than 1", "objects"],
    );
    fails_with(
        &cdnlab(
            &["cache-replay", "--trace", "t.bin", "--size", "1.5"],
            d.path(),
        ),
        &["--size `1.5`", "whole number"],
    );
    fails_with(
        &cdnlab(
            &[
                "cache-replay",
                "--trace",
                "t.bin",
                "--size",
                "10,20",
                "--plot",
                "x.txt",
            ],
            d.path(),
        ),
        &["--plot x.txt", ".svg or .png"],
    );
}

/// Compressed and mismatched traces: a .zst trace replays exactly as the plain one (told by its
/// magic number, not its name), a cut one is reported as such, a text file is not read as
/// oracleGeneral (the issue's 48-byte CSV "replayed" as 2 requests) nor a binary one as CSV,
/// and one id a line is a format of its own.
#[test]
fn compressed_and_mismatched_traces() {
    let d = tempfile::tempdir().unwrap();
    gen_trace(
        d.path(),
        &[
            "--out",
            "t.bin",
            "--objects",
            "2000",
            "--requests",
            "50000",
            "--seed",
            "3",
        ],
    );
    let plain = read(&d.path().join("t.bin"));
    let packed = zstd::encode_all(&plain[..], 3).unwrap();
    std::fs::write(d.path().join("t.bin.zst"), &packed).unwrap();
    std::fs::write(d.path().join("named-plainly.bin"), &packed).unwrap();
    std::fs::write(d.path().join("cut.zst"), &packed[..packed.len() / 2]).unwrap();
    let mut partial = zstd::encode_all(&plain[..1000], 3).unwrap();
    std::fs::write(d.path().join("partial.zst"), &partial).unwrap();
    partial.clear();
    let hits = |t: &str, extra: &[&str]| {
        let mut a = vec![
            "cache-replay",
            "--trace",
            t,
            "--policy",
            "lru,sieve",
            "--size",
        ];
        a.extend_from_slice(&["0.05,100", "--json", "--no-plot"]);
        a.extend_from_slice(extra);
        json_lines(&cdnlab(&a, d.path()))
            .into_iter()
            .map(|v| (v["size"].clone(), v["hits"].clone(), v["requests"].clone()))
            .collect::<Vec<_>>()
    };
    let want = hits("t.bin", &[]);
    assert_eq!(want.len(), 4);
    assert_eq!(hits("t.bin.zst", &[]), want);
    assert_eq!(hits("named-plainly.bin", &[]), want);
    fails_with(
        &cdnlab(
            &["cache-replay", "--trace", "cut.zst", "--size", "10"],
            d.path(),
        ),
        &["cut.zst", "zstd", "cut short"],
    );
    fails_with(
        &cdnlab(
            &["cache-replay", "--trace", "partial.zst", "--size", "10"],
            d.path(),
        ),
        &["partial.zst", "truncated", "1000 bytes", "16 stray"],
    );
    // 48 bytes of CSV: a multiple of 24, so only its content tells it is not oracleGeneral.
    let csv = "1,100,5\n2,200,6\n3,300,7\n1,100,8\n2,200,9\n3,300,1\n";
    assert_eq!(csv.len(), 48);
    std::fs::write(d.path().join("t.csv"), csv).unwrap();
    fails_with(
        &cdnlab(
            &["cache-replay", "--trace", "t.csv", "--size", "2"],
            d.path(),
        ),
        &[
            "t.csv",
            "looks like a text trace",
            "--format csv",
            "--format text",
        ],
    );
    fails_with(
        &cdnlab(
            &[
                "cache-replay",
                "--trace",
                "t.bin.zst",
                "--size",
                "2",
                "--format",
                "csv",
            ],
            d.path(),
        ),
        &["t.bin.zst", "looks binary", "--format oracle-general"],
    );
    std::fs::write(d.path().join("ids.txt"), "7\n8\n7\n9\n7\n").unwrap();
    let out = cdnlab(
        &[
            "cache-replay",
            "--trace",
            "ids.txt",
            "--format",
            "text",
            "--size",
            "2",
            "--json",
        ],
        d.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // LRU of 2 on 7 8 7 9 7: hits at the second and third 7.
    assert_eq!(
        (v["requests"].as_u64(), v["hits"].as_u64()),
        (Some(5), Some(2))
    );
}

/// `cdnlab mrc` in one pass gives exactly the LRU miss ratios of `cache-replay` at each size;
/// SHARDS at rate 1 is the exact curve; a bad rate is refused.
#[test]
fn mrc_equals_lru_replay() {
    let d = tempfile::tempdir().unwrap();
    gen_trace(
        d.path(),
        &[
            "--out",
            "t.bin",
            "--objects",
            "3000",
            "--requests",
            "40000",
            "--seed",
            "9",
        ],
    );
    let sizes = "1,7,50,333,2000";
    let curve = json_lines(&cdnlab(
        &[
            "mrc", "--trace", "t.bin", "--sizes", sizes, "--json", "--plot", "m/c.svg",
        ],
        d.path(),
    ));
    let replay = json_lines(&cdnlab(
        &[
            "cache-replay",
            "--trace",
            "t.bin",
            "--size",
            sizes,
            "--json",
            "--no-plot",
        ],
        d.path(),
    ));
    assert_eq!(curve.len(), 5);
    for (c, r) in curve.iter().zip(&replay) {
        assert_eq!(c["size"], r["size"]);
        assert_eq!(c["miss_ratio"], r["miss_ratio"], "{c} {r}");
    }
    let full = json_lines(&cdnlab(
        &[
            "mrc", "--trace", "t.bin", "--sizes", sizes, "--json", "--sample", "1", "--plot",
            "m/c.svg",
        ],
        d.path(),
    ));
    assert_eq!(
        full.iter()
            .map(|v| v["miss_ratio"].clone())
            .collect::<Vec<_>>(),
        curve
            .iter()
            .map(|v| v["miss_ratio"].clone())
            .collect::<Vec<_>>()
    );
    assert!(d.path().join("m/c.png").is_file());
    // Fixed-size SHARDS with room for every object is the exact curve; with less it
    // estimates, and reports its final rate.
    let whole = json_lines(&cdnlab(
        &[
            "mrc",
            "--trace",
            "t.bin",
            "--sizes",
            sizes,
            "--json",
            "--sample-size",
            "1000000",
            "--no-plot",
        ],
        d.path(),
    ));
    let ratios = |v: &[serde_json::Value]| {
        v.iter()
            .map(|v| v["miss_ratio"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ratios(&whole), ratios(&curve));
    let small = json_lines(&cdnlab(
        &[
            "mrc",
            "--trace",
            "t.bin",
            "--json",
            "--sample-size",
            "50",
            "--exact-too",
            "--no-plot",
        ],
        d.path(),
    ));
    let rate = small[0]["final_rate"].as_f64().unwrap();
    assert!(rate > 0.0 && rate < 1.0, "{rate}");
    assert!(small.iter().all(|v| v["exact_miss_ratio"].is_number()));
    fails_with(
        &cdnlab(&["mrc", "--trace", "t.bin", "--sample", "0"], d.path()),
        &["--sample 0", "above 0"],
    );
    fails_with(
        &cdnlab(&["mrc", "--trace", "t.bin", "--sample-size", "0"], d.path()),
        &["--sample-size 0", "at least 1"],
    );
    fails_with(
        &cdnlab(&["mrc", "--trace", "t.bin", "--exact-too"], d.path()),
        &["--exact-too", "--sample"],
    );
    fails_with(
        &cdnlab(
            &[
                "mrc",
                "--trace",
                "t.bin",
                "--sample",
                "0.5",
                "--sample-size",
                "9",
            ],
            d.path(),
        ),
        &["--sample"],
    );
}

/// A scenario.toml without its `[[provenance]]` entries.
fn scenario_part(bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(bytes).unwrap();
    let end = text.find("[[provenance]]").unwrap_or(text.len());
    text[..end].trim_end().as_bytes().to_vec()
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

/// SCENARIO with a precision target instead of a fixed count: cells stop at different
/// replication counts.
const PRECISE: &str = r#"
experiment = "lru-che"
seed = 3
replications = 30
[params]
objects = 500
warmup = 2000
requests = 5000
[grid]
alpha = [0.6, 1.0]
cache_size = [5, 50, 200]
[precision]
min_replications = 3
batch = 4
relative_half_width = { hit_ratio = 0.02 }
# Cell 5 (alpha 1.0, cache 200) runs all 30 whatever its interval.
fixed_where = [{ alpha = 1, cache_size = 200 }]
[[plots]]
file = "h.svg"
x = "cache_size"
y = ["hit_ratio", "che_hit_ratio"]
series = "alpha"
log_x = true
"#;

/// Sequential stopping: each cell stops at the first batch boundary (3, 7, 11, ..., 30) where
/// the target holds, or at 30 with target_met = false, and the rows are identical with 1 and 2
/// threads, across shards and after a resume.
#[test]
fn precision_targets_stop_alike_across_threads_shards_and_resume() {
    let (d, p) = setup(PRECISE);
    let s = p.to_str().unwrap();
    let ok = |args: &[&str]| {
        let out = cdnlab(args, d.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
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
    let ok = |args: &[&str]| {
        let out = cdnlab(args, d.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
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

/// A partial reproduce never replaces another report: without --out an --only selection writes
/// to a folder of its own; into a folder holding another selection's report it is refused
/// (the report stays byte for byte) unless --replace; the same selection may run there again.
#[test]
fn a_partial_reproduce_never_replaces_another_report() {
    // Two of the quickest experiments (about a second each at quick scale).
    let d = tempfile::tempdir().unwrap();
    let two = ["reproduce", "--only", "mh-x1", "--only", "gwtw-e8"];
    ok(cdnlab(&two, d.path()));
    let own = d.path().join("out/reproduce-gwtw-e8+mh-x1");
    assert!(own.join("report.html").is_file() && own.join("claims.json").is_file());
    assert!(!d.path().join("out/reproduce").exists());
    // Another report in out/reproduce (two experiments stand in for every one).
    let into = |args: &[&str]| {
        let mut v = args.to_vec();
        v.extend(["--out", "out/reproduce"]);
        cdnlab(&v, d.path())
    };
    ok(into(&two));
    let report = |f: &str| read(&d.path().join("out/reproduce").join(f));
    let before = (report("claims.json"), report("report.html"));
    fails_with(
        &into(&["reproduce", "--only", "mh-x1"]),
        &[
            "out/reproduce holds the report of gwtw-e8, mh-x1, quick scale",
            "this run (mh-x1, quick scale)",
            "--replace",
        ],
    );
    // Another scale is another report too.
    fails_with(
        &into(&[
            "reproduce",
            "--full",
            "--only",
            "gwtw-e8",
            "--only",
            "mh-x1",
        ]),
        &["gwtw-e8, mh-x1, full scale", "--replace"],
    );
    assert!(before == (report("claims.json"), report("report.html")));
    // The same selection again (its cells reused), in another order of --only.
    ok(into(&["reproduce", "--only", "gwtw-e8", "--only", "mh-x1"]));
    ok(into(&["reproduce", "--only", "mh-x1", "--replace"]));
    let doc: serde_json::Value = serde_json::from_slice(&report("claims.json")).unwrap();
    assert_eq!(doc["experiments"].as_array().unwrap().len(), 1, "{doc}");
}

#[test]
fn reproduce_quick_writes_report_and_claims() {
    let d = tempfile::tempdir().unwrap();
    // Two of the registered experiments, one per paper, keep this test short; every
    // registered scenario is loaded by a unit test of the registry.
    let args = [
        "reproduce",
        "--out",
        "r",
        "--only",
        "cache-che",
        "--only",
        "gwtw-e8",
    ];
    let out = cdnlab(&args, d.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&read(&d.path().join("r/claims.json"))).unwrap();
    // Provenance: the build, the command, start, duration, threads, machine; seeds per experiment.
    let prov = &doc["provenance"];
    for k in [
        "version", "commit", "command", "started", "seconds", "threads", "cores", "os",
    ] {
        assert!(prov.get(k).is_some(), "provenance without {k}: {prov}");
    }
    assert_eq!(prov["command"][1], "reproduce");
    let seeds: Vec<_> = doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["seed"].as_u64().unwrap()))
        .collect();
    assert_eq!(seeds.len(), 2, "{seeds:?}");
    // Where the time went: seconds per experiment in claims.json and a table at the end.
    for e in doc["experiments"].as_array().unwrap() {
        assert!(e["seconds"].as_f64().is_some_and(|s| s > 0.0), "{e}");
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let table: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.starts_with("experiment "))
        .take(4)
        .collect();
    assert_eq!(table.len(), 4, "{err}");
    assert!(
        table[1..3].iter().any(|l| l.starts_with("cache-che ")),
        "{err}"
    );
    assert!(table[3].starts_with("total "), "{err}");
    assert!(err.contains("wall clock "), "{err}");
    // Every cell run, with its seconds: what bench/reproduce.sh turns into expected times.
    let cells: u64 = doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["cells"].as_u64().unwrap())
        .sum();
    let timings = String::from_utf8(read(&d.path().join("r/cell-seconds.csv"))).unwrap();
    assert_eq!(timings.lines().count() as u64, 1 + cells, "{timings}");
    assert!(
        timings.starts_with("scale,experiment,cell,seconds\nquick,"),
        "{timings}"
    );
    let claims = doc["claims"].as_array().unwrap();
    assert!(!claims.is_empty());
    for c in claims {
        for k in ["id", "paper", "claim", "measured", "expected", "pass"] {
            assert!(c.get(k).is_some(), "claim without {k}: {c}");
        }
        assert!(c["paper"] == "cache" || c["paper"] == "gwtw", "{c}");
        assert_eq!(c["pass"], true, "{c}");
    }
    let ids: Vec<&str> = claims.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(
        ids.contains(&"cache.C1") && ids.contains(&"gwtw.C1-video"),
        "{ids:?}"
    );
    for c in claims {
        let words = c["in_words"].as_str().unwrap_or_default();
        assert!(
            !words.is_empty(),
            "claim without its measurement in words: {c}"
        );
    }
    let html = String::from_utf8(read(&d.path().join("r/report.html"))).unwrap();
    assert!(html.contains("<img src=") && html.contains("cache.C1") && html.contains("gwtw-e8"));
    assert!(
        html.contains("Produced by cdnlab ") && html.contains("Seeds: "),
        "provenance"
    );
    // In a real browser at 1280 px: nothing wider than the window, every figure loads, every
    // claim links to its experiment's section.
    if let Some(r) = browser_check(&d.path().join("r/report.html")) {
        assert_eq!(r["too_wide"], serde_json::json!([]), "{r}");
        assert_eq!(r["broken_images"], serde_json::json!([]), "{r}");
        assert_eq!(r["dangling_links"], serde_json::json!([]), "{r}");
        assert_eq!(r["rows_without_link"], 0, "{r}");
        assert!(r["images"].as_u64().unwrap() >= 3, "{r}");
        // Each claim twice: in the table of its kind and in its experiment's section.
        assert_eq!(
            r["claim_rows"].as_u64().unwrap(),
            2 * claims.len() as u64,
            "{r}"
        );
    }
}

/// Measures a page in headless Chromium at 1280 x 900: elements reaching past the window's
/// width, images that did not load, `#` links to no element, claim-table rows without a link.
const CHECK_SCRIPT: &str = r##"<script>
window.addEventListener('load', () => {
  const de = document.documentElement;
  const r = {width: de.clientWidth, scroll_width: de.scrollWidth};
  r.too_wide = [...document.querySelectorAll('body *')]
    .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > de.clientWidth + 1)
    .slice(0, 10).map(e => e.tagName + (e.id ? '#' + e.id : ''));
  if (de.scrollWidth > de.clientWidth && !r.too_wide.length) r.too_wide.push('page');
  const imgs = [...document.images];
  r.images = imgs.length;
  r.broken_images = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
  const rows = [...document.querySelectorAll('table.claims tr')].filter(tr => tr.querySelector('td'));
  r.claim_rows = rows.length;
  r.rows_without_link = rows.filter(tr => !tr.querySelector('a[href^="#"]')).length;
  r.dangling_links = [...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href').slice(1))
    .filter(id => !document.getElementById(decodeURIComponent(id)));
  const out = document.createElement('pre');
  out.id = 'cdnlab-check';
  out.textContent = JSON.stringify(r);
  document.body.appendChild(out);
});
</script>"##;

/// Runs [`CHECK_SCRIPT`] on `page` (a copy beside it, so relative links resolve) and returns
/// its measurements. Without Chromium: None, with a skip line, or a failure under CI
/// (cdnlab_testkit::need).
fn browser_check(page: &Path) -> Option<serde_json::Value> {
    let bin = cdnlab_testkit::need(cdnlab_testkit::CHROMIUM, cdnlab_testkit::chromium())?;
    let html = String::from_utf8(read(page)).unwrap();
    let copy = page.with_file_name("report-check.html");
    std::fs::write(
        &copy,
        html.replace("</body>", &format!("{CHECK_SCRIPT}</body>")),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1280,900",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", copy.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start chromium");
    // Bounded: a browser that hangs fails the test instead of holding CI.
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut dom = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut dom).unwrap();
    let json = dom
        .split("<pre id=\"cdnlab-check\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no check result in chromium's DOM: {dom:.500}"));
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Some(serde_json::from_str(&json).unwrap())
}

/// The browser check fails on a doctored report: a table wider than the window, an image that
/// does not load, a claim linking to a missing section and a claim row without a link.
#[test]
fn browser_check_catches_overflow_broken_images_and_dangling_links() {
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("report.html");
    std::fs::write(
        &page,
        "<!doctype html><html><body><h2 id=\"a\">A</h2>\
         <table class=\"claims\"><tr><th>x</th></tr>\
         <tr><td><a href=\"#a\">a</a></td></tr><tr><td><a href=\"#nowhere\">b</a></td></tr>\
         <tr><td>no link</td></tr></table>\
         <table><tr><td style=\"white-space:nowrap\">wide wide wide wide wide wide wide wide \
         wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide \
         wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide</td>\
         </tr></table><img src=\"missing.svg\" alt=\"m\"></body></html>",
    )
    .unwrap();
    let Some(r) = browser_check(&page) else {
        return;
    };
    assert_ne!(r["too_wide"], serde_json::json!([]), "{r}");
    assert_eq!(
        r["broken_images"],
        serde_json::json!(["missing.svg"]),
        "{r}"
    );
    assert_eq!(r["dangling_links"], serde_json::json!(["nowhere"]), "{r}");
    assert_eq!(r["rows_without_link"], 1, "{r}");
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

/// Output into a closed pipe (`cdnlab experiments | head -1`) ends quietly, not with a panic.
#[test]
fn closed_stdout_is_not_a_panic() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .arg("experiments")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `cdnlab tp solve`: the textbook instance's optimum and north-west corner cost, the JSON
/// output, and every class of bad input with a message that names it.
#[test]
fn tp_solve_and_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        std::fs::write(d.path().join(name), text).unwrap();
        name.to_string()
    };
    let tb = write(
        "tb.json",
        r#"{"supply": [75, 125, 100], "demand": [80, 65, 70, 85],
            "cost": [[464,513,654,867],[352,416,690,791],[995,682,388,685]]}"#,
    );
    let out = cdnlab(&["tp", "solve", &tb], d.path());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("optimal cost 152535"));
    let out = cdnlab(&["tp", "solve", &tb, "--method", "northwest"], d.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains("165595"));
    let out = cdnlab(&["tp", "solve", &tb, "--json"], d.path());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cost"], 152_535);
    assert!(v["solve_seconds"].as_f64().unwrap() >= 0.0);
    let flows = v["flows"].as_array().unwrap();
    let shipped: i64 = flows.iter().map(|f| f[2].as_i64().unwrap()).sum();
    assert_eq!(shipped, 300);
    assert!(flows.len() < 3 + 4, "at most m + n - 1 positive cells");

    // Re-allocation: demands shift, costs stay; the warm re-solve finds the new optimum.
    let shifted = write(
        "tb2.json",
        r#"{"supply": [75, 125, 100], "demand": [60, 85, 70, 85],
            "cost": [[464,513,654,867],[352,416,690,791],[995,682,388,685]]}"#,
    );
    let cold = cdnlab(&["tp", "solve", &shifted, "--json"], d.path());
    let cold: serde_json::Value = serde_json::from_slice(&cold.stdout).unwrap();
    let out = cdnlab(
        &["tp", "solve", &tb, "--then", &shifted, "--json"],
        d.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["then"]["cost"], cold["cost"]);
    fails_with(
        &cdnlab(
            &["tp", "solve", &tb, "--then", &shifted, "--method", "vogel"],
            d.path(),
        ),
        &["--method optimal"],
    );

    let unbalanced = write(
        "u.json",
        r#"{"supply": [10, 5], "demand": [3, 3], "cost": [[1, 2], [3, 4]]}"#,
    );
    fails_with(
        &cdnlab(&["tp", "solve", &unbalanced], d.path()),
        &["total supply (15)", "--balance"],
    );
    for b in ["scale", "dummy"] {
        let out = cdnlab(
            &["tp", "solve", &unbalanced, "--balance", b, "--json"],
            d.path(),
        );
        assert!(out.status.success(), "{b}");
    }
    let cases: &[(&str, &[&str])] = &[
        (
            r#"{"supply": [-1], "demand": [-1], "cost": [[1]]}"#,
            &["supply", "-1", "from 0"],
        ),
        (
            r#"{"supply": [1], "demand": [1], "cost": [[1, 2]]}"#,
            &["row 0 with 2 entries", "(1)"],
        ),
        (r#"{"supply": [], "demand": [], "cost": []}"#, &["empty"]),
        (
            r#"{"supply": [1.5], "demand": [1], "cost": [[1]]}"#,
            &["floating point", "whole numbers"],
        ),
        (
            r#"{"supply": [1], "demand": [1], "cost": [[99999999999]]}"#,
            &["cost", "99999999999"],
        ),
        (
            r#"{"supply": [1], "demand": [1], "cost": [[1e30]]}"#,
            &["whole numbers"],
        ),
        (
            r#"{"supply": [1], "demand": [1]}"#,
            &["missing field `cost`"],
        ),
        ("not json", &["expected"]),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let f = write(&format!("bad{i}.json"), text);
        let out = cdnlab(&["tp", "solve", &f], d.path());
        fails_with(&out, needles);
        // Only unequal totals point to --balance.
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("--balance"),
            "{text}"
        );
    }
    fails_with(
        &cdnlab(&["tp", "solve", "missing.json"], d.path()),
        &["missing.json"],
    );
}

/// `cdnlab live`: bad values get one clear message each; a tiny demo writes its files.
#[cfg(feature = "live")]
#[test]
fn live_bad_input_and_a_tiny_demo() {
    let d = tempfile::tempdir().unwrap();
    for (args, needles) in [
        (
            &["live", "demo", "--k", "0", "--duration", "1"][..],
            &["k", "1 to the number of edges"][..],
        ),
        (
            &[
                "live",
                "demo",
                "--k",
                "3",
                "--edges",
                "2",
                "--duration",
                "1",
            ],
            &["k", "(2)"],
        ),
        (
            &["live", "demo", "--edges", "0", "--duration", "1"],
            &["edges", "1 to 256"],
        ),
        (
            &["live", "demo", "--duration", "0"],
            &["--duration 0", "seconds > 0"],
        ),
        (
            &[
                "live",
                "demo",
                "--kill-at",
                "1",
                "--kill-edge",
                "9",
                "--duration",
                "2",
            ],
            &["kill", "below 8"],
        ),
        (&["live", "demo", "--tau", "0", "--duration", "1"], &["tau"]),
        (
            &["live", "demo", "--q", "1.5", "--duration", "1"],
            &["q", "(0, 1]"],
        ),
        (
            &[
                "live",
                "demo",
                "--model",
                "video",
                "--rate",
                "0",
                "--duration",
                "1",
            ],
            &["rate"],
        ),
        (
            &[
                "live",
                "client",
                "--edges",
                "127.0.0.1:9",
                "--k",
                "2",
                "--duration",
                "1",
            ],
            &["k", "(1)"],
        ),
        (
            &["live", "client", "--edges", "not-an-address"],
            &["--edges", "not-an-address"],
        ),
        (
            &["live", "origin", "--error-share", "2", "--duration", "0.1"],
            &["error-share", "[0, 1]"],
        ),
        (
            &["live", "origin", "--min-size", "0", "--duration", "0.1"],
            &["size", "1 <= min"],
        ),
        (
            &["live", "origin", "--objects", "0", "--duration", "0.1"],
            &["objects", "at least 1"],
        ),
        (
            &["live", "edge", "--capacity", "0", "--duration", "0.1"],
            &["capacity", "at least 1"],
        ),
        (
            &[
                "live",
                "edge",
                "--max-header-bytes",
                "100",
                "--duration",
                "0.1",
            ],
            &["max-header-bytes", "8192"],
        ),
        (
            &[
                "live",
                "edge",
                "--origin-timeout-ms",
                "0",
                "--duration",
                "0.1",
            ],
            &["origin-timeout"],
        ),
    ] {
        fails_with(&cdnlab(args, d.path()), needles);
    }
    let out = cdnlab(
        &[
            "live",
            "demo",
            "--edges",
            "2",
            "--users",
            "2",
            "--k",
            "2,1",
            "--users-per-edge",
            "2",
            // Both reach every user at the best by 0.5 s; 2 s leaves room on a loaded machine.
            "--duration",
            "2",
            "--out",
            "demo",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "summary.json",
        "timeline.csv",
        "satisfied.svg",
        "satisfied.png",
    ] {
        assert!(d.path().join("demo").join(f).exists(), "{f}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("demo/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["runs"][0]["k"], 2);
    // 2 users on 2 edges of 2 each: k = 1 cannot fail, and the summary says so.
    let note = summary["contrast_note"].as_str().unwrap_or_default();
    assert!(note.contains("cannot show the contrast"), "{summary}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("note: these parameters"));
}

/// SIGTERM (how systemd and Kubernetes stop a service) lets an in-flight response finish and
/// exits 0; it used to cut the response and exit 143. With `--access-log` the request is on
/// standard output as a JSON line.
#[cfg(all(unix, feature = "live"))]
#[test]
fn sigterm_drains_in_flight_responses_and_exits_0() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    // A port below the ephemeral range, per test process.
    let port = 24_000 + (std::process::id() % 1000) as u16;
    let addr = format!("127.0.0.1:{port}");
    let mut server = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args([
            "live",
            "origin",
            "--listen",
            &addr,
            "--latency-ms",
            "1500",
            "--drain-ms",
            "5000",
            "--access-log",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run cdnlab live origin");
    let start = Instant::now();
    let mut conn = loop {
        match TcpStream::connect(&addr) {
            Ok(c) => break c,
            Err(_) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => {
                let _ = server.kill();
                panic!("origin did not listen: {e}");
            }
        }
    };
    conn.write_all(b"GET /content/7 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut response = Vec::new();
    let _ = conn.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("content-length: 1024"), "{text}");
    let head_end = text.find("\r\n\r\n").unwrap() + 4;
    assert_eq!(response.len() - head_end, 1024, "the whole body");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!("still running 10 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    // The access log has the request, as one JSON line.
    let mut log = String::new();
    server
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(line["path"], "/content/7", "{log}");
    assert_eq!(line["status"], 200, "{log}");
    assert_eq!(line["bytes"], 1024, "{log}");
    assert_eq!(line["client"], "127.0.0.1", "{log}");
    assert!(line["ms"].as_f64().unwrap() >= 1500.0, "{log}");
}

/// Findings 2 and 5 of the hardening issue: an edge held 5.6 times its capacity with 1 KiB
/// objects and 1.9 times with 64 KiB ones, and clients that never read pinned bodies without
/// bound (1.68 GB with a 64 MiB cache). Each object is now charged its bookkeeping, stored
/// bodies are exact-size allocations, the servers run with glibc settings that return freed
/// memory, and a send timeout closes stalled readers: the edge process's resident memory (from
/// /proc) grows by at most 1.3 x the capacity over the idle edge's under miss loads and
/// never-reading clients. (The bound was 1.3 x capacity + 8 MiB of absolute RSS; the idle edge,
/// about 9 MB, grows with the binary's features, so it is measured instead of guessed.)
#[cfg(all(target_os = "linux", feature = "live"))]
#[test]
fn edge_memory_stays_within_its_capacity() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    fn rss(pid: u32) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let kb: u64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap();
        kb * 1024
    }
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let base = 25_000 + (std::process::id() % 500) as u16 * 2;
    // (object size, capacity, requests); the 8 MiB objects' requests are never read.
    for (k, (size, capacity, requests)) in [
        (1024u64, 8u64 << 20, 20_000u64),
        (65_536, 32 << 20, 1_500),
        (8 << 20, 32 << 20, 24),
    ]
    .into_iter()
    .enumerate()
    {
        let never_read = size == 8 << 20;
        let (o_addr, e_addr) = (
            format!("127.0.0.1:{}", base + 1000 * k as u16),
            format!("127.0.0.1:{}", base + 1000 * k as u16 + 1),
        );
        let spawn = |args: &[&str]| {
            Killed(
                Command::new(env!("CARGO_BIN_EXE_cdnlab"))
                    .args(args)
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap(),
            )
        };
        let size_s = size.to_string();
        let _origin = spawn(&[
            "live",
            "origin",
            "--listen",
            &o_addr,
            "--objects",
            "1000000",
            "--min-size",
            &size_s,
            "--max-size",
            &size_s,
        ]);
        let cap_s = capacity.to_string();
        let edge = spawn(&[
            "live",
            "edge",
            "--listen",
            &e_addr,
            "--origin",
            &o_addr,
            "--capacity",
            &cap_s,
            "--send-timeout-ms",
            "500",
        ]);
        let start = Instant::now();
        let conn = loop {
            match TcpStream::connect(&e_addr) {
                Ok(c) if TcpStream::connect(&o_addr).is_ok() => break c,
                _ if start.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => panic!("servers did not listen"),
            }
        };
        conn.set_nodelay(true).unwrap();
        // The edge before any object: the binary and its runtime, which grow with features and
        // are not the cache's memory.
        let idle = rss(edge.0.id());
        let mut stalled = Vec::new();
        if never_read {
            // 24 clients ask for the 10 objects (4 fit in the cache) and never read; the
            // send timeout closes them after 500 ms.
            for id in 0..requests {
                let mut c = TcpStream::connect(&e_addr).unwrap();
                c.write_all(
                    format!("GET /content/{} HTTP/1.1\r\nhost: x\r\n\r\n", id % 10).as_bytes(),
                )
                .unwrap();
                stalled.push(c);
            }
            std::thread::sleep(Duration::from_secs(3));
        }
        let mut w = conn.try_clone().unwrap();
        let mut r = BufReader::new(conn);
        for id in 0..if never_read { 0 } else { requests } {
            // One write per request (several small ones would wait on delayed ACKs).
            w.write_all(format!("GET /content/{id} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .unwrap();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            assert_eq!(len as u64, size);
        }
        let held = rss(edge.0.id());
        let bound = capacity * 13 / 10;
        eprintln!(
            "{size}-byte objects: RSS {held}, {} over the idle {idle}, bound {bound}",
            held - idle
        );
        assert!(
            held.saturating_sub(idle) <= bound,
            "{size}-byte objects, capacity {capacity}: RSS {held}, {} over the idle edge's {idle}, above {bound}",
            held.saturating_sub(idle)
        );
    }
}

/// The steering server's failures were visible only in `/metrics`. With its edges down, it
/// now says on standard error what failed and why (the connection refused), once per
/// interval however many reports fail: 2 edges x 15 windows here, one line each kind.
#[cfg(feature = "live")]
#[test]
fn steering_failures_are_logged_with_their_reason_and_rate_limited() {
    let d = tempfile::tempdir().unwrap();
    // A port below the ephemeral range, per test process; the edges at ports 1 and 2, where
    // nothing listens (privileged, unassigned in practice).
    let base = 21_000 + (std::process::id() % 900) as u16;
    let topology = d.path().join("topology.json");
    std::fs::write(
        &topology,
        r#"{"secret": "0123456789abcdef-warn", "metros": ["SEA", "SFO"],
                "links": [["SEA", "SFO"]],
                "servers": [{"name": "a", "metro": "SEA", "addr": "127.0.0.1:1", "capacity": 10},
                            {"name": "b", "metro": "SFO", "addr": "127.0.0.1:2", "capacity": 10}],
                "populations": [{"name": "sea", "metro": "SEA", "demand": 5}]}"#,
    )
    .unwrap();
    let out = cdnlab(
        &[
            "live",
            "steer",
            "--topology",
            topology.to_str().unwrap(),
            "--listen",
            &format!("127.0.0.1:{base}"),
            "--window-ms",
            "200",
            "--duration",
            "3",
        ],
        d.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = |kind: &str| {
        err.lines()
            .filter(|l| l.starts_with(&format!("warning: {kind} failed: ")))
            .collect::<Vec<_>>()
    };
    let (installs, reports) = (lines("steering install"), lines("steering report"));
    assert_eq!(installs.len(), 1, "{err}");
    assert_eq!(reports.len(), 1, "{err}");
    for line in installs.iter().chain(&reports) {
        assert!(
            line.contains("edge a (127.0.0.1:1)") && line.contains("Connection refused"),
            "{line}"
        );
    }
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

/// A reproduction folder's results: per experiment, every file but scenario.toml's provenance
/// (which says how each folder was made), and claims.json's claims.
fn reproduction(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for exp in ["cache-che-quick", "gwtw-e8-quick"] {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(exp))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(exp).display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".csv") || n.ends_with(".svg") || n == "scenario.toml")
            .collect();
        names.sort();
        for n in names {
            let bytes = read(&dir.join(exp).join(&n));
            let bytes = if n == "scenario.toml" {
                scenario_part(bytes)
            } else {
                bytes
            };
            files.push((format!("{exp}/{n}"), bytes));
        }
    }
    let doc: serde_json::Value = serde_json::from_slice(&read(&dir.join("claims.json"))).unwrap();
    files.push(("claims".into(), doc["claims"].to_string().into_bytes()));
    files
}

/// The shipped cluster files work as shipped: examples/slurm/reproduce.sbatch run for every
/// array index (as Slurm would, with SLURM_ARRAY_TASK_ID set), then merge.sbatch; and the
/// Kubernetes Indexed Job's command for every completion index (JOB_COMPLETION_INDEX), then the
/// merge Job's. Both give exactly a single run's results and claims.
#[cfg(unix)]
#[test]
fn cluster_files_shard_and_merge_to_a_single_runs_results() {
    let d = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let bin = env!("CARGO_BIN_EXE_cdnlab");
    let only = "--only cache-che --only gwtw-e8";
    let mut args = vec!["reproduce", "--out", "single"];
    args.extend(only.split(' '));
    ok(cdnlab(&args, d.path()));
    let single = reproduction(&d.path().join("single"));

    // Slurm: the array's tasks, then the merge.
    let slurm = |script: &str, task: Option<u32>| {
        let mut c = Command::new("bash");
        c.arg(examples.join("slurm").join(script))
            .current_dir(d.path())
            .env("CDNLAB", bin)
            .env("CDNLAB_OUT", "slurm")
            .env("CDNLAB_ARGS", only)
            .env("SLURM_CPUS_PER_TASK", "1");
        if let Some(i) = task {
            c.env("SLURM_ARRAY_TASK_ID", (10 + i).to_string())
                .env("SLURM_ARRAY_TASK_MIN", "10")
                .env("SLURM_ARRAY_TASK_COUNT", "3");
        }
        ok(c.output().unwrap())
    };
    for i in 0..3 {
        let out = slurm("reproduce.sbatch", Some(i));
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("shard {i}/3 done")));
    }
    slurm("merge.sbatch", None);
    assert_eq!(single, reproduction(&d.path().join("slurm/reproduce")));

    // Kubernetes: the containers' commands, with the shared volume /data in the temporary
    // folder and cdnlab on PATH.
    let command = |manifest: &str| -> Vec<String> {
        let text = std::fs::read_to_string(examples.join("kubernetes").join(manifest)).unwrap();
        let line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("command: "))
            .expect("a command line");
        serde_json::from_str(line).expect("a flow sequence of double-quoted strings")
    };
    let data = d.path().join("k8s");
    std::fs::create_dir_all(&data).unwrap();
    let path = format!(
        "{}:{}",
        Path::new(bin).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |manifest: &str, index: Option<u32>| {
        let cmd = command(manifest);
        let script = cmd[2].replace("/data", data.to_str().unwrap());
        let mut c = Command::new(&cmd[0]);
        c.args([&cmd[1], &script])
            .current_dir(d.path())
            .env("PATH", &path)
            .env("CDNLAB_SCALE", "--quick")
            .env("CDNLAB_ARGS", only);
        if let Some(i) = index {
            c.env("JOB_COMPLETION_INDEX", i.to_string())
                .env("SHARDS", "3");
        }
        ok(c.output().unwrap());
    };
    for i in 0..3 {
        run("reproduce-job.yaml", Some(i));
    }
    run("merge-job.yaml", None);
    assert_eq!(single, reproduction(&data.join("reproduce")));
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
    fails_with(
        &cdnlab(
            &["plot", "r", "--x", "requests", "--y", "hit_ratio"],
            d.path(),
        ),
        &["requests", "not a grid parameter", "alpha, cache_size"],
    );
    fails_with(
        &cdnlab(&["plot", "r", "--x", "alpha", "--y", "speed"], d.path()),
        &["unknown metric `speed`", "hit_ratio"],
    );
    fails_with(
        &cdnlab(&["plot", "nowhere"], d.path()),
        &["no scenario.toml"],
    );
    fails_with(
        &cdnlab(&["plot", "r", "--scale", "20"], d.path()),
        &["--scale 20", "from 1 to 8"],
    );
}

/// `trace-stats` on a generated trace with varied sizes: counts, working set and one-hit
/// wonders equal what the test computes from the file's records; the Zipf fit near the law;
/// plots written; an empty trace and a text file read as oracleGeneral refused.
#[test]
fn trace_stats_counts_what_the_file_holds() {
    let d = tempfile::tempdir().unwrap();
    gen_trace(
        d.path(),
        &[
            "--out",
            "t.bin",
            "--objects",
            "2000",
            "--requests",
            "40000",
            "--alpha",
            "1.0",
            "--seed",
            "3",
            "--max-size",
            "5000",
        ],
    );
    let bytes = read(&d.path().join("t.bin"));
    let mut count: std::collections::HashMap<u64, (u64, u64)> = Default::default();
    let mut requested = 0;
    for r in bytes.chunks_exact(24) {
        let id = u64::from_le_bytes(r[4..12].try_into().unwrap());
        let size = u64::from(u32::from_le_bytes(r[12..16].try_into().unwrap()));
        requested += size;
        count.entry(id).or_insert((0, size)).0 += 1;
    }
    let out = json_lines(&cdnlab(
        &[
            "trace-stats",
            "--trace",
            "t.bin",
            "--json",
            "--plot-dir",
            "figs",
        ],
        d.path(),
    ));
    let v = &out[0];
    assert_eq!(v["requests"], 40000);
    assert_eq!(v["objects"], count.len() as u64);
    assert_eq!(v["bytes_requested"], requested);
    assert_eq!(
        v["working_set_bytes"],
        count.values().map(|c| c.1).sum::<u64>()
    );
    let once = count.values().filter(|c| c.0 == 1).count() as u64;
    assert_eq!(v["one_hit_objects"], once);
    let head = v["zipf_head"]["alpha"].as_f64().unwrap();
    assert!((head - 1.0).abs() < 0.08, "head alpha {head}");
    let reuse: u64 = v["reuse_distance_requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(
        reuse,
        40000 - count.len() as u64,
        "one gap per repeat request"
    );
    for f in ["popularity", "sizes", "reuse"] {
        for ext in ["svg", "png"] {
            assert!(
                d.path().join(format!("figs/{f}.{ext}")).is_file(),
                "{f}.{ext}"
            );
        }
    }
    let table = cdnlab(&["trace-stats", "--trace", "t.bin", "--no-plot"], d.path());
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("one-hit wonders") && text.contains("Zipf alpha"),
        "{text}"
    );
    std::fs::write(d.path().join("empty.bin"), b"").unwrap();
    fails_with(
        &cdnlab(
            &["trace-stats", "--trace", "empty.bin", "--no-plot"],
            d.path(),
        ),
        &["empty.bin", "empty"],
    );
    std::fs::write(d.path().join("ids.txt"), "1\n2\n1\n".repeat(8)).unwrap();
    fails_with(
        &cdnlab(
            &["trace-stats", "--trace", "ids.txt", "--no-plot"],
            d.path(),
        ),
        &["ids.txt", "--format text"],
    );
}

/// A CSV trace replays exactly as the same trace in oracleGeneral, for every policy (Belady
/// included: the CSV reader fills in next accesses when an offline policy asks for them, and
/// streams in chunks otherwise).
#[test]
fn csv_trace_replays_as_oracle_general() {
    let d = tempfile::tempdir().unwrap();
    gen_trace(
        d.path(),
        &[
            "--out",
            "t.bin",
            "--objects",
            "500",
            "--requests",
            "40000",
            "--alpha",
            "0.9",
            "--seed",
            "8",
            "--max-size",
            "900",
        ],
    );
    let mut csv = String::new();
    for r in read(&d.path().join("t.bin")).chunks_exact(24) {
        let time = u32::from_le_bytes(r[0..4].try_into().unwrap());
        let id = u64::from_le_bytes(r[4..12].try_into().unwrap());
        let size = u32::from_le_bytes(r[12..16].try_into().unwrap());
        csv.push_str(&format!("{time},{id},{size}\n"));
    }
    std::fs::write(d.path().join("t.csv"), csv).unwrap();
    let run = |args: &[&str]| {
        let mut all = vec![
            "cache-replay",
            "--policy",
            "all",
            "--size",
            "20,100",
            "--size-unit",
            "bytes",
            "--json",
            "--no-plot",
        ];
        all.extend_from_slice(args);
        json_lines(&cdnlab(&all, d.path()))
            .iter()
            .map(|v| {
                (
                    v["policy"].to_string(),
                    v["size"].to_string(),
                    v["hits"].to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let bin = run(&["--trace", "t.bin"]);
    let csv = run(&[
        "--trace",
        "t.csv",
        "--format",
        "csv",
        "--csv-time",
        "1",
        "--csv-id",
        "2",
        "--csv-size",
        "3",
    ]);
    assert_eq!(bin.len(), 2 * Policy::ALL.len());
    assert_eq!(bin, csv);
}

/// `gen-trace --max-size`: the same ids as without it, sizes fixed per object and within the
/// range, spread over it; a maximum below the minimum refused.
#[test]
fn gen_trace_sizes() {
    let d = tempfile::tempdir().unwrap();
    let make = |out: &str, extra: &[&str]| {
        let mut a = vec![
            "gen-trace",
            "--out",
            out,
            "--objects",
            "300",
            "--requests",
            "5000",
            "--seed",
            "4",
        ];
        a.extend_from_slice(extra);
        let o = cdnlab(&a, d.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read(&d.path().join(out))
            .chunks_exact(24)
            .map(|r| {
                (
                    u64::from_le_bytes(r[4..12].try_into().unwrap()),
                    u32::from_le_bytes(r[12..16].try_into().unwrap()),
                )
            })
            .collect::<Vec<_>>()
    };
    let plain = make("a.bin", &["--size", "10"]);
    let sized = make("b.bin", &["--size", "10", "--max-size", "1000"]);
    assert!(plain.iter().all(|r| r.1 == 10));
    assert_eq!(
        plain.iter().map(|r| r.0).collect::<Vec<_>>(),
        sized.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    let mut size_of = std::collections::HashMap::new();
    for &(id, s) in &sized {
        assert!((10..=1000).contains(&s), "{s}");
        assert_eq!(*size_of.entry(id).or_insert(s), s, "one size per object");
    }
    let below_100 = size_of.values().filter(|&&s| s < 100).count();
    assert!(
        below_100 > 0 && below_100 < size_of.len(),
        "log-uniform spreads over the range"
    );
    fails_with(
        &cdnlab(
            &[
                "gen-trace",
                "--out",
                "c.bin",
                "--size",
                "10",
                "--max-size",
                "5",
            ],
            d.path(),
        ),
        &["--max-size 5", "--size 10"],
    );
}

/// Built without the live servers, `cdnlab live ...` says so and how to get them, instead of
/// clap's "unrecognized subcommand".
#[cfg(not(feature = "live"))]
#[test]
fn live_without_the_feature_says_how_to_get_it() {
    let d = tempfile::tempdir().unwrap();
    for args in [&["live"][..], &["live", "demo", "--duration", "1"]] {
        fails_with(
            &cdnlab(args, d.path()),
            &[
                "built without the live servers",
                "cargo install --path crates/cdnlab-cli",
            ],
        );
    }
}

/// The players demo says what is missing before it starts anything: the asset, the players,
/// a session count out of range.
#[cfg(feature = "live")]
#[test]
fn players_demo_names_what_is_missing() {
    let d = tempfile::tempdir().unwrap();
    let demo = |extra: &[&str]| {
        let mut args = vec!["live", "demo", "--scenario", "players", "--duration", "2"];
        args.extend_from_slice(extra);
        cdnlab(&args, d.path())
    };
    fails_with(
        &demo(&["--media", "nowhere"]),
        &["--media nowhere", "media/make-asset.sh"],
    );
    fails_with(&demo(&["--sessions", "0"]), &["--sessions 0", "1 to 32"]);
    std::fs::create_dir(d.path().join("m")).unwrap();
    std::fs::write(d.path().join("m/master.m3u8"), "#EXTM3U\n").unwrap();
    std::fs::write(d.path().join("m/manifest.mpd"), "<MPD/>").unwrap();
    fails_with(
        &demo(&["--media", "m", "--player-dir", "."]),
        &["--player-dir .", "npm ci --prefix ."],
    );
}
