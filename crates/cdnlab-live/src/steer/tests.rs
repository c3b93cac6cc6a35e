use super::*;

const GOOD: &str = r#"{"secret": "0123456789abcdef", "metros": ["A", "B", "C"],
    "links": [["A", "B"], ["B", "C"]],
    "servers": [{"name": "a", "metro": "A", "addr": "127.0.0.1:1", "capacity": 10},
                {"name": "c", "metro": "C", "addr": "127.0.0.1:2", "capacity": 30}],
    "populations": [{"name": "pa", "metro": "A", "demand": 30}, {"name": "pc", "metro": "C", "demand": 10}]}"#;

/// The plan is the library's optimum: population pa fills its local edge and the rest goes
/// two hops to C; pc stays local.
#[test]
fn topology_and_plan() {
    let t = Topology::parse(GOOD).unwrap();
    assert_eq!(t.hops[0][2], 2);
    let (x, _) = solve(&t, &[30, 10], DEFAULT_MIN_SHARE, None).unwrap();
    assert_eq!(x, [10, 20, 0, 10]);
}

/// A bad topology file is refused with what is wrong in it.
#[test]
fn bad_topologies_say_what_is_wrong() {
    for (text, needle) in [
        ("{}", "missing field"),
        (&GOOD.replace("0123456789abcdef", "short"), "secret"),
        (
            &GOOD.replace("[\"B\", \"C\"]", "[\"B\", \"Z\"]"),
            "unknown metro \"Z\"",
        ),
        (
            &GOOD.replace("\"name\": \"c\"", "\"name\": \"a\""),
            "server \"a\"",
        ),
        (
            &GOOD.replace("\"capacity\": 30", "\"capacity\": 0"),
            "capacity 0",
        ),
        (
            &GOOD.replace("\"demand\": 10", "\"demand\": -1"),
            "demand -1",
        ),
        (
            &GOOD.replace("\"name\": \"pc\"", "\"name\": \"p c\""),
            "population \"p c\"",
        ),
        (
            &GOOD.replace(", [\"B\", \"C\"]", ""),
            "population pa: server c is not reachable",
        ),
        (
            &GOOD.replace(
                "\"metros\": [\"A\", \"B\", \"C\"]",
                "\"metros\": [\"A\", \"A\", \"C\"]",
            ),
            "metro \"A\"",
        ),
    ] {
        let e = Topology::parse(text).unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
}
