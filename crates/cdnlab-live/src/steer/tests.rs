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
