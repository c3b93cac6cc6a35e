use super::*;

const GOOD: &str = r#"{"secret": "0123456789abcdef",
    "network": {"nodes": [{"id": "A", "pos": [0, 0]}, {"id": "B", "pos": [1, 0]}, {"id": "C", "pos": [2, 0]}],
                "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}]},
    "servers": [{"name": "a", "metro": "A", "addr": "127.0.0.1:1", "capacity": 10},
                {"name": "c", "metro": "C", "addr": "127.0.0.1:2", "capacity": 30}],
    "populations": [{"name": "pa", "metro": "A", "demand": 30}, {"name": "pc", "metro": "C", "demand": 10}]}"#;

/// The plan is the library's optimum: population pa fills its local edge and the rest goes
/// two hops to C; pc stays local.
#[test]
fn topology_and_plan() {
    let t = Deployment::parse(GOOD).unwrap();
    assert_eq!(t.costs[0][2], 2);
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
        mem: Memory::new(0.0),
        reloads: 0,
        ended: false,
        throttle: None,
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
            &GOOD.replace("\"metro\": \"C\"", "\"metro\": \"Z\""),
            "server c: unknown node \"Z\"",
        ),
        (
            &GOOD.replace("\"target\": \"C\"", "\"target\": \"Z\""),
            "network: line 1: link B-Z names node Z",
        ),
        (
            &GOOD.replace("\"pos\": [2, 0]", "\"pos\": null"),
            "node C has no coordinates",
        ),
        (
            &GOOD.replace("{\"secret\"", "{\"cost\": \"miles\", \"secret\""),
            "cost: \"miles\" (allowed: hops, km, delay)",
        ),
        (
            &GOOD.replace("\"network\": {", "\"metros\": [], \"network\": {"),
            "unknown field `metros`",
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
            &GOOD.replace(", {\"source\": \"B\", \"target\": \"C\"}", ""),
            "population pa: server c is not reachable",
        ),
        (
            &GOOD.replace(
                "{\"id\": \"C\", \"pos\": [2, 0]}",
                "{\"id\": \"C\", \"pos\": [2, 0]}, {\"id\": \"A2\", \"name\": \"A\", \"pos\": [3, 0]}",
            ),
            "node \"A\" names 2 nodes",
        ),
    ] {
        let e = Deployment::parse(text).unwrap_err().to_string();
        assert!(e.contains(needle), "{needle}: {e}");
    }
}

/// The network can be a file in any format the library reads, found beside the deployment
/// file; costs can be km over the real links.
#[test]
fn the_network_is_read_from_a_file_by_the_library() {
    let d = tempfile::tempdir().unwrap();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/fixtures");
    for ext in ["gml", "graphml", "txt", "xml", "json"] {
        std::fs::copy(
            fixtures.join(format!("tiny.{ext}")),
            d.path().join(format!("tiny.{ext}")),
        )
        .unwrap();
        let file = d.path().join(format!("deploy-{ext}.json"));
        std::fs::write(
            &file,
            format!(r#"{{"secret": "0123456789abcdef", "network": "tiny.{ext}", "cost": "km",
                "servers": [{{"name": "ber", "node": "Berlin", "addr": "127.0.0.1:1", "capacity": 10}},
                            {{"name": "mad", "node": "Madrid", "addr": "127.0.0.1:2", "capacity": 30}}],
                "populations": [{{"name": "rome", "node": "Rome", "demand": 20}}]}}"#),
        )
        .unwrap();
        let t = Deployment::load(&file).unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert_eq!(t.network.nodes.len(), 5);
        // Rome-Berlin 1,183 km and Rome-Madrid 1,364 km: both direct links.
        assert_eq!(t.population_costs(), vec![vec![1183, 1364]], "{ext}");
    }
    let e = Deployment::load(&d.path().join("none.json")).unwrap_err();
    assert!(e.to_string().contains("none.json"), "{e}");
    let missing = d.path().join("missing-network.json");
    std::fs::write(
        &missing,
        r#"{"secret": "0123456789abcdef", "network": "nowhere.gml",
            "servers": [{"name": "a", "node": "A", "addr": "127.0.0.1:1", "capacity": 1}],
            "populations": [{"name": "pa", "node": "A", "demand": 1}]}"#,
    )
    .unwrap();
    let e = Deployment::load(&missing).unwrap_err().to_string();
    assert!(
        e.contains("missing-network.json") && e.contains("nowhere.gml"),
        "{e}"
    );
}
