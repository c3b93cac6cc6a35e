use super::*;

/// No column name appears twice in `results.csv` or `summary.csv` of any registered
/// experiment (the rbs experiment's parameter `n` once clashed with the summary's count).
#[test]
fn headers_have_no_clash() {
    for e in cdnlab::sim::registry() {
        let text = format!("name = \"t\"\nexperiment = \"{}\"\n", e.name());
        let sc = Scenario::parse(&text, Path::new("t.toml")).unwrap();
        for h in [header(&sc), summary_header(&sc)] {
            let mut seen = std::collections::BTreeSet::new();
            for c in &h {
                assert!(seen.insert(c), "{}: column `{c}` twice in {h:?}", e.name());
            }
        }
    }
}

#[test]
fn shard_parsing() {
    assert_eq!(Shard::parse("1/4").unwrap(), Shard { index: 1, count: 4 });
    for bad in ["3/2", "2/2", "1/0", "x/2", "1", "-1/2"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
    let e = Shard::parse("3/2").unwrap_err().to_string();
    assert!(e.contains("--shard 3/2") && e.contains("0 to 1"), "{e}");
}
