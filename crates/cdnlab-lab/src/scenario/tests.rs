use super::*;
use proptest::prelude::*;

const GOOD: &str = r#"
experiment = "lru-che"
seed = 7
replications = 2
[params]
objects = 1000
requests = 1000
[grid]
alpha = [0.5, 1.0]
cache_size = [10, 100, 500]
[[plots]]
file = "a.svg"
x = "cache_size"
y = ["hit_ratio"]
series = "alpha"
"#;

fn err(text: &str) -> String {
    match Scenario::parse(text, Path::new("s.toml")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn expands_grid_last_key_fastest() {
    let s = Scenario::parse(GOOD, Path::new("s.toml")).unwrap();
    assert_eq!(s.cells.len(), 6);
    let c1 = s.cells[1].params.values();
    assert_eq!(c1["alpha"], Value::Float(0.5));
    assert_eq!(c1["cache_size"], Value::Int(100));
    assert_eq!(s.cells[3].params.values()["alpha"], Value::Float(1.0));
    assert_eq!(s.resolved.seed, 7);
    assert!(s.resolved.params.contains_key("warmup"));
}

#[test]
fn errors_name_line_field_value_and_range() {
    let e = err(&GOOD.replace("alpha = [0.5, 1.0]", "alpha = [0.5, -1.0]"));
    assert!(
        e.contains("s.toml") && e.contains("line 9") && e.contains("alpha"),
        "{e}"
    );
    assert!(e.contains("-1") && e.contains("from 0 to 5"), "{e}");
    let e = err(&GOOD.replace("objects = 1000", "objects = \"many\""));
    assert!(
        e.contains("line 6") && e.contains("objects") && e.contains("many"),
        "{e}"
    );
    let e = err(&GOOD.replace("seed = 7", "sed = 7"));
    assert!(e.contains("unknown field") && e.contains("sed"), "{e}");
    let e = err(&GOOD.replace("[params]", "[params]\nzeta = 1"));
    assert!(e.contains("zeta") && e.contains("allowed: objects"), "{e}");
    let e = err(&GOOD.replace("cache_size = [10, 100, 500]", "cache_size = [0]"));
    assert!(e.contains("cache_size") && e.contains("from 1"), "{e}");
    let e = err(&GOOD.replace("cache_size = [10, 100, 500]", "cache_size = [1000]"));
    assert!(e.contains("below objects"), "{e}");
    let e = err(&GOOD.replace("replications = 2", "replications = 0"));
    assert!(e.contains("replications = 0"), "{e}");
    let e = err(&GOOD.replace("y = [\"hit_ratio\"]", "y = [\"hits\"]"));
    assert!(e.contains("unknown metric `hits`"), "{e}");
    let e = err(&GOOD.replace("series = \"alpha\"", ""));
    assert!(e.contains("where"), "{e}");
    let e = err("experiment = \"nope\"");
    assert!(
        e.contains("unknown experiment `nope`") && e.contains("lru-che"),
        "{e}"
    );
    let e = err("experiment = ");
    assert!(e.contains("s.toml") && e.contains("line 1"), "{e}");
}

#[test]
fn precision_targets_are_checked() {
    let with = |p: &str| format!("{GOOD}\n[precision]\n{p}\n");
    // `replications` (2 in GOOD) is the maximum, and the minimum cannot exceed it.
    let e = err(&with(
        "min_replications = 4\nhalf_width = { hit_ratio = 0.01 }",
    ));
    assert!(
        e.contains("min_replications = 4") && e.contains("(2)"),
        "{e}"
    );
    let e =
        err(&with("half_width = { hit_ratio = 0.01 }")
            .replace("replications = 2", "replications = 1"));
    assert!(
        e.contains("max_replications = 1") && e.contains("from 2"),
        "{e}"
    );
    let ok = Scenario::parse(
        &with("half_width = { hit_ratio = 0.01 }").replace("replications = 2", "replications = 40"),
        Path::new("s.toml"),
    )
    .unwrap();
    let (rule, targets) = ok.sequential().unwrap();
    assert_eq!((rule.min, rule.batch, rule.max), (5, 5, 40));
    assert_eq!(targets, [(0, HalfWidth::Absolute(0.01))]);
    let e = err(&with(
        "max_replications = 9\nhalf_width = { hit_ratio = 0.01 }",
    ));
    assert!(
        e.contains("max_replications = 9 but replications = 2"),
        "{e}"
    );
    let e = err(
        &with("min_replications = 1\nhalf_width = { hit_ratio = 0.01 }")
            .replace("replications = 2", "replications = 9"),
    );
    assert!(
        e.contains("min_replications = 1") && e.contains("from 2 to"),
        "{e}"
    );
    let e = err(&with("batch = 0\nhalf_width = { hit_ratio = 0.01 }")
        .replace("replications = 2", "replications = 9"));
    assert!(e.contains("batch = 0"), "{e}");
    let e = err(&with("min_replications = 3").replace("replications = 2", "replications = 9"));
    assert!(e.contains("at least one target"), "{e}");
    let e =
        err(&with("half_width = { hits = 0.01 }").replace("replications = 2", "replications = 9"));
    assert!(
        e.contains("unknown metric `hits`") && e.contains("hit_ratio"),
        "{e}"
    );
    let e = err(&with("relative_half_width = { hit_ratio = -1.0 }")
        .replace("replications = 2", "replications = 9"));
    assert!(
        e.contains("relative_half_width.hit_ratio = -1") && e.contains("above 0"),
        "{e}"
    );
    let e = err(&with("halfwidth = { hit_ratio = 1.0 }"));
    assert!(
        e.contains("unknown field") && e.contains("halfwidth"),
        "{e}"
    );
    assert!(e.contains("line"), "{e}");
}

#[test]
fn fixed_count_cells_are_named_by_parameters_the_grid_has() {
    let with = |w: &str| {
        format!("{GOOD}\n[precision]\nhalf_width = {{ hit_ratio = 0.01 }}\nfixed_where = {w}\n")
            .replace("replications = 2", "replications = 9")
    };
    let ok = Scenario::parse(
        &with("[{ alpha = 1, cache_size = 100 }, { alpha = 0.5, cache_size = 10 }]"),
        Path::new("s.toml"),
    )
    .unwrap();
    let fixed: Vec<u64> = ok
        .cells
        .iter()
        .filter(|c| ok.fixed_count(c))
        .map(|c| c.index)
        .collect();
    // Cells: alpha outer, cache_size inner; 1 equals 1.0.
    assert_eq!(fixed, [0, 4]);
    // A wrong model that changes a matched parameter keeps the same cells at the maximum
    // (it must run as many runs as the paper's rule), and no others.
    let wrong = ok
        .altered("t", "alpha moved", |m| {
            m.insert("alpha".into(), cdnlab::sim::Value::Float(0.7));
        })
        .unwrap();
    let kept: Vec<u64> = wrong
        .cells
        .iter()
        .filter(|c| wrong.fixed_count(c))
        .map(|c| c.index)
        .collect();
    assert_eq!(kept, [0, 4]);
    let e = err(&with("[{ alpha = 0.7 }]"));
    assert!(
        e.contains("fixed_where { alpha = 0.7 }") && e.contains("matches no cell"),
        "{e}"
    );
    let e = err(&with("[{ k = 2 }]"));
    assert!(
        e.contains("unknown parameter `k`") && e.contains("cache_size"),
        "{e}"
    );
    let e = err(&with("[{}]"));
    assert!(e.contains("at least one parameter"), "{e}");
    let e = err(&with("[{ alpha = [1] }]"));
    assert!(e.contains("matches no cell"), "{e}");
}

#[test]
fn plot_x_must_be_numeric() {
    // No registered experiment sweeps text yet, so check the plot rule on its own.
    let s = Scenario::parse(GOOD, Path::new("s.toml")).unwrap();
    let mut r = s.resolved.clone();
    r.grid.insert(
        "cache_size".into(),
        vec![toml::Value::Integer(1), toml::Value::String("big".into())],
    );
    let e = check_plot(&r.plots[0], &r, s.experiment).unwrap_err();
    assert!(e.contains("\"big\"") && e.contains("needs numbers"), "{e}");
    assert!(check_plot(&s.resolved.plots[0], &s.resolved, s.experiment).is_ok());
}

#[test]
fn plot_marks_are_drawn_and_checked() {
    let with = |marks: &str| format!("{GOOD}log_x = true\nmarks = {marks}\n");
    let s = Scenario::parse(
        &with(r#"[{ x = 50, label = "knee" }]"#),
        Path::new("s.toml"),
    )
    .unwrap();
    let chart = crate::runner::chart(&s, &s.resolved.plots[0], &[]);
    assert_eq!(chart.marks, vec![(50.0, "knee".to_string())]);
    let svg = crate::plot::svg(&chart);
    assert!(svg.contains(">knee</text>") && svg.contains("stroke-dasharray=\"5 4\""));
    let e = err(&with(r#"[{ x = 0, label = "zero" }]"#));
    assert!(
        e.contains("mark `zero` at x = 0") && e.contains("above 0"),
        "{e}"
    );
    let e = err(&with(r#"[{ x = 1 }]"#));
    assert!(e.contains("label"), "{e}");
}

proptest! {
    /// Fuzz the loader: arbitrary text and random single-byte corruptions of a valid file give
    /// a result or an error, never a panic.
    #[test]
    fn loader_never_panics(text in "\\PC{0,300}") {
        let _ = Scenario::parse(&text, Path::new("f.toml"));
    }

    #[test]
    fn corrupted_scenarios_never_panic(pos in 0usize..GOOD.len(), byte in 32u8..127) {
        let mut b = GOOD.as_bytes().to_vec();
        b[pos] = byte;
        if let Ok(t) = String::from_utf8(b) {
            let _ = Scenario::parse(&t, Path::new("f.toml"));
        }
    }
}
