use super::*;

const GOOD: &str = r#"
name = "t"
[[node]]
name = "origin"
role = "origin"
[[node]]
name = "r"
[[node]]
name = "edge"
role = "edge"
[[node]]
name = "users"
role = "clients"
count = 8
[[link]]
a = "origin"
b = "r"
rate = "100Mbit"
delay_ms = 10
[[link]]
a = "r"
b = "edge"
rate = 8e6
delay_ms = 5
jitter_ms = 1
loss = 0.01
[[link]]
a = "origin"
b = "edge"
rate = "1Gbit"
delay_ms = 40
[[link]]
a = "edge"
b = "users"
rate = "512kbit"
delay_ms = 2
queue_bytes = 4000
"#;

fn parse_str(text: &str) -> Result<Spec, crate::Error> {
    parse(text, Path::new("t.toml"))
}

fn refused(text: &str) -> String {
    parse_str(text).expect_err("refused").to_string()
}

#[test]
fn a_good_description_is_read_whole() {
    let s = parse_str(GOOD).unwrap();
    assert_eq!(s.nodes.len(), 4);
    assert_eq!(s.nodes[3].count, 8);
    assert_eq!(s.nodes[3].role, Role::Clients);
    assert_eq!(s.range, DEFAULT_RANGE);
    let addrs: Vec<String> = s.nodes.iter().map(|n| n.address.to_string()).collect();
    assert_eq!(
        addrs,
        ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
    );
    assert_eq!(s.links[1].rate, 8e6);
    assert_eq!(s.links[2].rate, 1e9);
    assert_eq!(s.links[3].rate, 512e3);
    assert_eq!(s.links[3].queue, 4000);
    // The default queue holds 50 ms at the rate: 100e6 / 8 * 0.05.
    assert_eq!(s.links[0].queue, 625_000);
    assert_eq!(s.links[1].jitter, Duration::from_millis(1));
}

/// Routing by delay goes origin-r-edge (15 ms) rather than the direct 40 ms link; by hops it
/// takes the direct link.
#[test]
fn routes_follow_the_shortest_path_by_delay_or_hops() {
    let s = parse_str(GOOD).unwrap();
    let hops = s.next_hops();
    assert_eq!(hops[0][2], Some((0, 1)));
    assert_eq!(hops[0][3], Some((0, 1)));
    assert_eq!(hops[3][0], Some((3, 2)));
    assert_eq!(hops[0][0], None);
    assert_eq!(s.path_delay(0, 3), Duration::from_millis(17));
    let h = parse_str(&GOOD.replace("name = \"t\"", "name = \"t\"\nrouting = \"hops\"")).unwrap();
    assert_eq!(h.next_hops()[0][2], Some((2, 2)));
    assert_eq!(h.path_delay(0, 3), Duration::from_millis(42));
}

#[test]
fn bad_values_are_refused_with_the_field_and_what_is_allowed() {
    let cases = [
        (
            GOOD.replace("b = \"users\"", "b = \"nobody\""),
            "link 4 (edge-nobody): b: \"nobody\" is not allowed; allowed: the name of a [[node]]",
        ),
        (
            GOOD.replace("delay_ms = 10", "delay_ms = -1"),
            "link 1 (origin-r): delay_ms: -1 is not allowed; allowed: milliseconds from 0 to 10000",
        ),
        (
            GOOD.replace("rate = \"100Mbit\"", "rate = 0"),
            "link 1 (origin-r): rate: 0 is not allowed; allowed: a rate above 0",
        ),
        (
            GOOD.replace("rate = \"100Mbit\"", "rate = \"100 furlongs\""),
            "rate: \"100 furlongs\" is not allowed",
        ),
        (
            GOOD.replace("loss = 0.01", "loss = 0.7"),
            "loss: 0.7 is not allowed; allowed: a probability from 0 up to (not including) 0.5",
        ),
        (
            GOOD.replace("jitter_ms = 1", "jitter_ms = 6"),
            "jitter_ms: 6 is not allowed; allowed: at most delay_ms",
        ),
        (
            GOOD.replace("queue_bytes = 4000", "queue_bytes = 100"),
            "queue_bytes: 100 is not allowed; allowed: bytes from 1514",
        ),
        (
            GOOD.replace("role = \"edge\"", "role = \"cache\""),
            "node 3 (edge): role: \"cache\" is not allowed; allowed: router, origin, edge, dht-edge, steering, clients",
        ),
        (
            GOOD.replace("count = 8", "count = 0"),
            "node 4 (users): count: 0 is not allowed",
        ),
        (
            GOOD.replace("name = \"r\"", "name = \"origin\""),
            "node 2 (origin): name: \"origin\" is not allowed; allowed: a name no other node has",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nrange = \"8.8.0.0/16\""),
            "range: \"8.8.0.0/16\" is not allowed; allowed: a block from /8 to /24 inside 10.0.0.0/8",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nrange = \"10.1.2.0/16\""),
            "range: \"10.1.2.0/16\" is not allowed",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nrouting = \"cheapest\""),
            "routing: \"cheapest\" is not allowed; allowed: delay (the default) or hops",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \"t\"\nspeed = 3"),
            "unknown field `speed`",
        ),
        (
            GOOD.replace(
                "b = \"edge\"\nrate = \"1Gbit\"",
                "b = \"origin\"\nrate = \"1Gbit\"",
            ),
            "link 3 (origin-origin): b: \"origin\" is not allowed; allowed: a node other than a (no loops)",
        ),
        (
            GOOD.replace("a = \"origin\"\nb = \"edge\"", "a = \"edge\"\nb = \"r\""),
            "link 3 (edge-r): b: \"r\" is not allowed; allowed: one link between two nodes",
        ),
    ];
    for (text, want) in cases {
        let got = refused(&text);
        assert!(got.starts_with("t.toml: "), "{got}");
        assert!(got.contains(want), "wanted {want:?} in {got:?}");
    }
}

#[test]
fn a_client_population_cut_off_from_every_server_is_refused() {
    let cut = GOOD.replace(
        "a = \"edge\"\nb = \"users\"\nrate = \"512kbit\"",
        "a = \"r\"\nb = \"origin\"\nrate = \"512kbit\"",
    );
    // users now has no link at all (r-origin duplicates a link, so give it another spare node).
    let cut = cut.replace("a = \"r\"\nb = \"origin\"", "a = \"users\"\nb = \"spare\"")
        + "[[node]]\nname = \"spare\"\n";
    let got = refused(&cut);
    assert!(
        got.contains(
            "node users: a clients node that no origin or edge can be reached from is not allowed"
        ),
        "{got}"
    );
}

#[test]
fn addresses_may_be_given_but_not_twice_nor_outside_the_range() {
    let with = |a: &str, b: &str| {
        GOOD.replace(
            "name = \"r\"\n",
            &format!("name = \"r\"\naddress = \"{a}\"\n"),
        )
        .replace(
            "name = \"users\"\n",
            &format!("name = \"users\"\naddress = \"{b}\"\n"),
        )
    };
    let s = parse_str(&with("198.18.0.1", "198.18.9.9")).unwrap();
    assert_eq!(s.nodes[1].address.to_string(), "198.18.0.1");
    // The others take the next free ones, skipping the given address.
    assert_eq!(s.nodes[0].address.to_string(), "198.18.0.2");
    assert_eq!(s.nodes[3].address.to_string(), "198.18.9.9");
    let got = refused(&with("198.18.0.7", "198.18.0.7"));
    assert!(got.contains("node users: address: 198.18.0.7 is not allowed; allowed: an address no other node has (node r has it)"), "{got}");
    let got = refused(&with("10.0.0.1", "198.18.0.9"));
    assert!(got.contains("node 2 (r): address: \"10.0.0.1\" is not allowed; allowed: an IPv4 address inside the range 198.18.0.0/16"), "{got}");
    let got = refused(&with("198.18.0.0", "198.18.0.9"));
    assert!(
        got.contains("not the range's first or last address"),
        "{got}"
    );
}

#[test]
fn ranges_must_be_private_blocks_and_overlap_is_exact() {
    assert_eq!(
        parse_range("10.77.0.0/16"),
        Some((Ipv4Addr::new(10, 77, 0, 0), 16))
    );
    assert_eq!(
        parse_range("198.19.0.0/16"),
        Some((Ipv4Addr::new(198, 19, 0, 0), 16))
    );
    assert_eq!(parse_range("198.20.0.0/16"), None);
    assert_eq!(parse_range("172.32.0.0/16"), None);
    assert_eq!(parse_range("10.0.0.0/7"), None);
    assert_eq!(parse_range("10.0.0.0/25"), None);
    let r = |s| parse_range(s).unwrap();
    assert!(overlaps(r("10.0.0.0/8"), r("10.77.0.0/16")));
    assert!(!overlaps(r("10.78.0.0/16"), r("10.77.0.0/16")));
    assert!(overlaps(
        (Ipv4Addr::new(10, 77, 3, 4), 32),
        r("10.77.0.0/16")
    ));
}

#[test]
fn rates_take_units() {
    let v = |s: &str| parse_rate(&toml::Value::String(s.into()));
    assert_eq!(v("8Mbit"), Some(8e6));
    assert_eq!(v("512 kbit"), Some(512e3));
    assert_eq!(v("1.5Gbit"), Some(1.5e9));
    assert_eq!(v("20Gbit"), None);
    assert_eq!(v("-1Mbit"), None);
    assert_eq!(parse_rate(&toml::Value::Integer(1000)), Some(1000.0));
    assert_eq!(parse_rate(&toml::Value::Boolean(true)), None);
}

/// A real network: delays from great-circle lengths at 2/3 c (the library's), capacities
/// scaled and bounded, roles given to the file's nodes by name.
#[test]
fn a_real_network_file_gives_nodes_links_and_delays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/zoo");
    let text = r#"
[network]
file = "abilene.json"
capacity_scale = 1e-2
max_rate = "50Mbit"
[[node]]
name = "New York"
role = "origin"
[[node]]
name = "Los Angeles"
role = "clients"
count = 4
"#;
    let s = parse(text, &dir.join("x.toml")).unwrap();
    let t = cdnlab::topology::read(
        std::io::BufReader::new(std::fs::File::open(dir.join("abilene.json")).unwrap()),
        cdnlab::topology::Format::Json,
        Default::default(),
    )
    .unwrap();
    assert_eq!(s.nodes.len(), t.nodes.len());
    assert_eq!(s.links.len(), t.links.len());
    for (l, k) in s.links.iter().zip(&t.links) {
        // A Duration keeps whole nanoseconds.
        assert!((l.delay.as_secs_f64() * 1e3 - k.delay).abs() < 1e-6);
        // delay = length / (2/3 c): 1 ms per 199.86 km.
        assert!((k.delay - k.length / (299_792.458 * 2.0 / 3.0) * 1e3).abs() < 1e-9);
        assert!(l.rate <= 50e6 && l.rate >= 1e6);
    }
    let ny = s.node("New York").unwrap();
    assert_eq!(s.nodes[ny].role, Role::Origin);
    let got = parse(
        &text.replace("Los Angeles", "Atlantis"),
        &dir.join("x.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        got.contains("name: \"Atlantis\" is not allowed; allowed: a node of the network file, or a new node joined"),
        "{got}"
    );
}

/// New nodes beside a network file: a population and an edge attached to metros by
/// [[link]]s, routed over the file's links (delays summed along the shortest path); a
/// [[link]] between two of the file's nodes is refused (those come from the file).
#[test]
fn new_nodes_attach_to_a_network_files_metros() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/zoo");
    let text = r#"
[network]
file = "abilene.json"
[[node]]
name = "users"
role = "clients"
[[node]]
name = "edge-atl"
role = "edge"
[[link]]
a = "users"
b = "New York"
rate = "100Mbit"
[[link]]
a = "edge-atl"
b = "Atlanta"
rate = "8Mbit"
delay_ms = 0.5
"#;
    let s = parse(text, &dir.join("x.toml")).unwrap();
    assert_eq!(s.nodes.len(), 11 + 2);
    assert_eq!(s.links.len(), 14 + 2);
    let (users, atl) = (s.node("users").unwrap(), s.node("edge-atl").unwrap());
    let (ny, dc, at) = (
        s.node("New York").unwrap(),
        s.node("Washington DC").unwrap(),
        s.node("Atlanta").unwrap(),
    );
    // Atlanta to New York by delay: through Washington (4.36 + 1.64 ms), not Indianapolis
    // and Chicago (3.44 + 1.32 + 5.73 ms).
    let hop = |x: usize, y: usize| {
        s.links
            .iter()
            .find(|l| (l.a, l.b) == (x, y) || (l.a, l.b) == (y, x))
            .unwrap()
            .delay
    };
    assert_eq!(
        s.path_delay(atl, users),
        Duration::from_micros(500) + hop(at, dc) + hop(dc, ny)
    );
    assert_eq!(s.path(atl, users).len(), 4);
    assert_eq!(s.path_rate(atl, users), 8e6);
    let got = parse(
        &format!("{text}[[link]]\na = \"Atlanta\"\nb = \"New York\"\nrate = \"1Mbit\"\n"),
        &dir.join("x.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        got.contains("links between the network file's nodes come from the file"),
        "{got}"
    );
}
