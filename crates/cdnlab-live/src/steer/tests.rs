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
    let (x, _, rows) = solve(&t, &[30, 10], DEFAULT_MIN_SHARE, &[0, 0], None).unwrap();
    assert_eq!(x, [10, 20, 0, 10]);
    assert_eq!(rows, [30, 10]);
}

/// The session table forgets the session unused the longest, only once it has been idle long
/// enough, and counts it; while every session is in use, newcomers find no room.
#[test]
fn sessions_are_forgotten_by_last_use_and_only_when_idle() {
    let t0 = Instant::now();
    let session = |used| Session {
        population: 0,
        point: 0.0,
        listed: vec![],
        pathway: None,
        used,
        tick: 0,
    };
    let mut x = Sessions::default();
    for id in ["s0", "s1", "s2"] {
        assert!(x.make_room(3, Duration::from_secs(30), t0));
        x.insert(id.into(), session(t0));
    }
    // Full, nobody idle: no room, nothing forgotten.
    assert!(!x.make_room(3, Duration::from_secs(30), t0 + Duration::from_secs(29)));
    assert_eq!((x.by_id.len(), x.evicted), (3, 0));
    // s0 is used again: s1 is now the one unused the longest, and goes first.
    let later = t0 + Duration::from_secs(20);
    assert!(x.touch("s0", 1, later).is_none(), "another population's");
    assert!(x.touch("s0", 0, later).is_some());
    let idle = t0 + Duration::from_secs(31);
    assert!(x.make_room(3, Duration::from_secs(30), idle));
    assert!(!x.by_id.contains_key("s1") && x.by_id.contains_key("s0"));
    x.insert("s3".into(), session(idle));
    assert!(x.make_room(3, Duration::from_secs(30), idle));
    assert!(!x.by_id.contains_key("s2"));
    x.insert("s4".into(), session(idle));
    // s0 was used 11 s ago: not idle, so no room.
    assert!(!x.make_room(3, Duration::from_secs(30), idle));
    assert_eq!(x.evicted, 2);
    assert_eq!(x.by_use.len(), x.by_id.len());
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
