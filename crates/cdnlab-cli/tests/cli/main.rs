//! End-to-end tests of the `cdnlab` binary: bad input of every class gets a non-zero exit and one
//! clear message (never a panic), and sweeps are identical whatever the threads, shards or
//! interruptions.

use cdnlab::Named;
use cdnlab::cache::Policy;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod live;
mod reproduce;
mod run;
mod testbed;
mod topo;
mod tp;
mod trace;

fn cdnlab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdnlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run cdnlab")
}

/// The items of a JSON array (panics if `v` is not one).
fn items(v: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    v.as_array().expect("a JSON array").iter()
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

/// Runs each (arguments, needles) case in `dir`: each fails with a message containing its
/// needles (see [`fails_with`]).
fn refuses(dir: &Path, cases: &[(&[&str], &[&str])]) {
    for (args, needles) in cases {
        fails_with(&cdnlab(args, dir), needles);
    }
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
fn flag_errors() {
    let (d, p) = setup(SCENARIO);
    let s = p.to_str().unwrap();
    refuses(
        d.path(),
        &[
            (&["run", s, "--shard", "3/2"], &["--shard 3/2", "0 to 1"]),
            (&["run", s, "--threads", "0"], &["--threads 0"]),
        ],
    );
    // An output folder that cannot be created (under a regular file; root ignores permissions).
    std::fs::write(d.path().join("file"), "").unwrap();
    refuses(
        d.path(),
        &[
            (&["run", s, "--out", "file/sub"], &["file/sub"]),
            (
                &["reproduce", "--only", "nope"],
                &["--only nope", "cache-che"],
            ),
        ],
    );
    // clap's own usage errors also exit non-zero without a panic.
    let out = cdnlab(&["cache-replay", "--size", "x", "--trace", "t"], d.path());
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
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

/// A scenario.toml without its `[[provenance]]` entries.
fn scenario_part(bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(bytes).unwrap();
    let end = text.find("[[provenance]]").unwrap_or(text.len());
    text[..end].trim_end().as_bytes().to_vec()
}
