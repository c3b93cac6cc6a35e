//! `tp solve`: instances, re-allocation and bad input.

use super::*;

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
