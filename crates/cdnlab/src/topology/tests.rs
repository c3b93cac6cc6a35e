use super::*;
use proptest::prelude::*;

const GML: &str = include_str!("../../../../data/topologies/fixtures/tiny.gml");
const GRAPHML: &str = include_str!("../../../../data/topologies/fixtures/tiny.graphml");
const NATIVE: &str = include_str!("../../../../data/topologies/fixtures/tiny.txt");
const XML: &str = include_str!("../../../../data/topologies/fixtures/tiny.xml");
const JSON: &str = include_str!("../../../../data/topologies/fixtures/tiny.json");

const ALL: [(Format, &str); 5] = [
    (Format::Gml, GML),
    (Format::Graphml, GRAPHML),
    (Format::Sndlib, NATIVE),
    (Format::SndlibXml, XML),
    (Format::Json, JSON),
];

fn parse(format: Format, text: &str) -> Result<Topology, TopologyError> {
    read(text.as_bytes(), format, ReadOptions::default())
}

fn refused(format: Format, text: &str) -> TopologyError {
    match parse(format, text) {
        Ok(t) => panic!("{format:?} read what it should refuse: {t:?}"),
        Err(e) => e,
    }
}

/// The great-circle distance by the spherical law of cosines: a second formula for the same
/// distance (haversine is what the readers use).
fn cosines_km(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (p1, p2) = (a[1].to_radians(), b[1].to_radians());
    let dl = (b[0] - a[0]).to_radians();
    EARTH_RADIUS_KM * (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos()).acos()
}

#[test]
fn every_format_reads_the_same_network() {
    let names = ["Berlin", "Paris", "London", "Madrid", "Rome"];
    let pairs = [(0, 1), (1, 2), (1, 3), (0, 4), (3, 4), (0, 2)];
    let caps = [10e9, 10e9, 2.5e9, 2.5e9, 1e9, 10e9];
    for (format, text) in ALL {
        let t = parse(format, text).unwrap_or_else(|e| panic!("{format:?}: {e}"));
        assert_eq!(t.name, "tiny", "{format:?}");
        assert_eq!(t.coordinates, Coordinates::Geographic);
        let got: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(got, names, "{format:?}");
        assert_eq!(t.nodes[3].pos, [-3.7038, 40.4168], "{format:?}");
        assert_eq!(t.links.len(), 6, "{format:?}");
        for (l, (&(a, b), &c)) in t.links.iter().zip(pairs.iter().zip(&caps)) {
            assert_eq!((l.a, l.b), (a, b), "{format:?}");
            assert_eq!(l.capacity, Some(c), "{format:?}");
            let want = cosines_km(t.nodes[a].pos, t.nodes[b].pos);
            assert!(
                (l.length - want).abs() < 1e-6,
                "{format:?}: {} vs {want}",
                l.length
            );
            assert!((l.delay - l.length / FIBRE_KM_PER_MS).abs() < 1e-12);
            assert_eq!(l.loss, 0.0);
        }
        let has_demands = !matches!(format, Format::Gml | Format::Graphml);
        assert_eq!(t.demands.is_some(), has_demands, "{format:?}");
        if let Some(d) = &t.demands {
            assert_eq!(d.entries.len(), 5, "{format:?}");
            assert_eq!(d.total(), 450.75, "{format:?}");
            // Demand ending at Berlin (from Rome), at Paris (from Berlin).
            let sinks = d.sink_totals(5);
            assert_eq!(sinks, vec![200.0, 120.5, 80.0, 40.25, 10.0], "{format:?}");
        }
    }
}

#[test]
fn distances_and_propagation_delays_have_their_known_values() {
    // London to Paris: 343.5 km on the mean-radius sphere (a check by hand: the central angle
    // is 0.05392 rad).
    let d = great_circle_km([-0.1276, 51.5072], [2.3522, 48.8566]);
    assert!((d - 343.5).abs() < 0.5, "{d}");
    // A quarter of a meridian.
    let q = great_circle_km([0.0, 0.0], [0.0, 90.0]);
    assert!((q - EARTH_RADIUS_KM * std::f64::consts::FRAC_PI_2).abs() < 1e-9);
    // Antipodes: half the circumference, no NaN from rounding above 1.
    let h = great_circle_km([0.0, 0.0], [180.0, 0.0]);
    assert!(
        (h - EARTH_RADIUS_KM * std::f64::consts::PI).abs() < 1e-6,
        "{h}"
    );
    // 1000 km of fibre: 1000 / (2/3 x 299,792.458 km/s) = 5.003 ms.
    assert!((1000.0 / FIBRE_KM_PER_MS - 5.003_461).abs() < 1e-6);
}

#[test]
fn stats_of_the_fixture_are_what_a_hand_count_gives() {
    let t = parse(Format::Json, JSON).unwrap();
    let s = t.stats();
    assert_eq!((s.nodes, s.links), (5, 6));
    assert_eq!((s.min_degree, s.max_degree), (2, 3));
    assert_eq!(s.mean_degree, 2.4);
    assert_eq!(s.components, 1);
    // Madrid-London and Rome-Paris, Rome-London are two hops; nothing is three.
    assert_eq!(s.diameter_hops, 2);
    // 14 ordered pairs... 10 unordered: 6 at one hop, 4 at two: mean 14 / 10.
    assert!((s.mean_hops - 1.4).abs() < 1e-12);
    assert_eq!(s.links_with_capacity, 6);
    assert_eq!(s.total_capacity, 36e9);
    assert_eq!((s.demand_pairs, s.demand_total), (5, 450.75));
    // Dijkstra against a brute force over all simple paths of this small graph.
    let dist = t.distances();
    let adj = t.adjacency();
    fn walk(
        t: &Topology,
        adj: &[Vec<(usize, usize)>],
        u: usize,
        len: f64,
        seen: &mut Vec<bool>,
        best: &mut [f64],
    ) {
        best[u] = best[u].min(len);
        for &(v, l) in &adj[u] {
            if !seen[v] {
                seen[v] = true;
                walk(t, adj, v, len + t.links[l].length, seen, best);
                seen[v] = false;
            }
        }
    }
    for s in 0..5 {
        let mut best = vec![f64::INFINITY; 5];
        let mut seen = vec![false; 5];
        seen[s] = true;
        walk(&t, &adj, s, 0.0, &mut seen, &mut best);
        for v in 0..5 {
            assert!((dist[s][v] - best[v]).abs() < 1e-9, "{s}->{v}");
        }
    }
}

#[test]
fn written_files_read_back_the_same() {
    let t = parse(Format::Sndlib, NATIVE).unwrap();
    let mut json = Vec::new();
    json::write(&t, &mut json).unwrap();
    assert_eq!(
        read(&json[..], Format::Json, ReadOptions::default()).unwrap(),
        t
    );
    let mut native = Vec::new();
    sndlib::write_native(&t, &mut native).unwrap();
    assert_eq!(
        read(&native[..], Format::Sndlib, ReadOptions::default()).unwrap(),
        t
    );
    let mut gml_out = Vec::new();
    gml::write(&t, &mut gml_out).unwrap();
    let back = read(&gml_out[..], Format::Gml, ReadOptions::default()).unwrap();
    assert_eq!(back.links, t.links);
    assert_eq!(back.nodes, t.nodes);
    assert_eq!(back.demands, None, "GML has no demands");
    // A series and plane coordinates survive JSON.
    let mut s = t.clone();
    s.coordinates = Coordinates::Planar;
    s.attach_series(vec![
        (0.0, vec![("Berlin".into(), "Rome".into(), 3.0)]),
        (300.0, vec![("Rome".into(), "Paris".into(), 4.5)]),
    ])
    .unwrap();
    let mut out = Vec::new();
    json::write(&s, &mut out).unwrap();
    assert_eq!(
        read(&out[..], Format::Json, ReadOptions::default()).unwrap(),
        s
    );
}

#[test]
fn formats_are_told_apart_by_their_first_bytes() {
    for (format, text) in ALL {
        assert_eq!(Format::sniff(text.as_bytes()), Some(format), "{format:?}");
    }
    assert_eq!(Format::sniff(b"hello"), None);
    assert_eq!(Format::sniff(b"<html><body/></html>"), None);
    assert_eq!(
        Format::from_extension("a/b/Geant2012.GML"),
        Some(Format::Gml)
    );
    assert_eq!(Format::from_extension("x.csv"), None);
}

/// Each kind of bad file is refused with the line it is on and what is wrong.
#[test]
fn bad_files_are_refused_naming_the_line_and_the_problem() {
    // A node without coordinates (GML), and the option that drops it.
    let no_coords = GML.replace("    Longitude -3.7038\n", "");
    let e = refused(Format::Gml, &no_coords);
    assert!(
        matches!(&e.problem, Problem::NoCoordinates { node } if node == "Madrid"),
        "{e}"
    );
    assert_eq!(e.line, Some(29));
    assert!(e.to_string().contains("--drop-uncoordinated"), "{e}");
    let dropped = read(
        no_coords.as_bytes(),
        Format::Gml,
        ReadOptions {
            drop_uncoordinated: true,
        },
    )
    .unwrap();
    assert_eq!((dropped.nodes.len(), dropped.links.len()), (4, 4));
    assert_eq!(dropped.notes.len(), 2, "{:?}", dropped.notes);
    // A dangling link, in every format, with its line.
    let cases = [
        (
            Format::Gml,
            GML.replace("    target 4\n", "    target 9\n"),
            57,
        ),
        (
            Format::Graphml,
            GRAPHML.replace(
                r#"<edge source="0" target="4">"#,
                r#"<edge source="0" target="9">"#,
            ),
            51,
        ),
        (
            Format::Sndlib,
            NATIVE.replace("L4 ( Berlin Rome )", "L4 ( Berlin Roma )"),
            33,
        ),
        (
            Format::SndlibXml,
            XML.replace("<target>Rome</target>", "<target>Roma</target>"),
            0,
        ),
        (
            Format::Json,
            JSON.replace(r#""source": 0, "target": 4"#, r#""source": 0, "target": 9"#),
            15,
        ),
    ];
    for (format, text, line) in cases {
        let e = refused(format, &text);
        assert!(
            matches!(&e.problem, Problem::Dangling { .. }),
            "{format:?}: {e}"
        );
        if line > 0 {
            assert_eq!(e.line, Some(line), "{format:?}: {e}");
        } else {
            assert!(e.line.is_some(), "{format:?}: {e}");
        }
    }
    // A duplicate id names both lines.
    let dup = GML.replace("    id 4\n", "    id 3\n");
    let e = refused(Format::Gml, &dup);
    assert_eq!(
        e.problem,
        Problem::Duplicate {
            what: "node id",
            id: "3".into(),
            first_line: 29
        }
    );
    assert_eq!(e.line, Some(35));
    let dup = NATIVE.replace("  Rome ( 12.4964", "  Paris ( 12.4964");
    assert!(matches!(
        refused(Format::Sndlib, &dup).problem,
        Problem::Duplicate { .. }
    ));
    // A negative capacity, in each format that has capacities.
    for (format, text) in [
        (
            Format::Gml,
            GML.replace("LinkSpeedRaw 1000000000.0", "LinkSpeedRaw -1000000000.0"),
        ),
        (
            Format::Graphml,
            GRAPHML.replace(">1000000000.0<", ">-1000000000.0<"),
        ),
        (
            Format::Sndlib,
            NATIVE.replace(" 1000000000.00 0.00", " -1000000000.00 0.00"),
        ),
        (
            Format::SndlibXml,
            XML.replace(">1000000000.0<", ">-1000000000.0<"),
        ),
        (
            Format::Json,
            JSON.replace("\"capacity\": 1000000000.0", "\"capacity\": -1e9"),
        ),
    ] {
        let e = refused(format, &text);
        assert!(
            matches!(&e.problem, Problem::Value { field, .. } if field.contains("capacity")),
            "{format:?}: {e}"
        );
        assert!(e.line.is_some(), "{format:?}: {e}");
        assert!(e.to_string().contains(">= 0"), "{e}");
    }
    // A negative demand.
    let e = refused(Format::Sndlib, &NATIVE.replace(" 1 10.00 ", " 1 -10.00 "));
    assert!(matches!(&e.problem, Problem::Value { field, .. } if field.contains("demand")));
    assert_eq!(e.line, Some(47));
    // A latitude out of range where the file says its coordinates are geographic.
    let e = refused(
        Format::SndlibXml,
        &XML.replace("<y>41.9028</y>", "<y>141.9028</y>"),
    );
    assert!(e.to_string().contains("latitude"), "{e}");
    // Syntax: an unclosed list, a word where a number belongs, the wrong root, no graph.
    let e = refused(Format::Gml, GML.trim_end().trim_end_matches(']'));
    assert!(e.to_string().contains("not closed"), "{e}");
    assert_eq!(e.line, Some(3));
    let e = refused(
        Format::Sndlib,
        &NATIVE.replace("( 13.405 52.52 )", "( east 52.52 )"),
    );
    assert!(
        e.to_string().contains("\"east\"") && e.line == Some(18),
        "{e}"
    );
    assert!(
        refused(Format::Graphml, XML)
            .to_string()
            .contains("not <graphml>")
    );
    assert!(
        refused(Format::SndlibXml, GRAPHML)
            .to_string()
            .contains("<network>")
    );
    assert!(
        refused(Format::Gml, "Creator \"x\"\n")
            .to_string()
            .contains("no `graph")
    );
    let e = refused(Format::Json, "{\"nodes\": [}");
    assert!(e.to_string().contains("line 1"), "{e}");
    assert_eq!(
        refused(Format::Json, "{\"nodes\": []}").problem,
        Problem::Empty
    );
    // A loss rate is a probability.
    let e = refused(
        Format::Json,
        &JSON.replace("\"capacity\": 2500000000.0}", "\"loss\": 1.5}"),
    );
    assert!(e.to_string().contains("probability"), "{e}");
}

#[test]
fn parallel_links_merge_and_loops_are_left_out() {
    let text = GML.replace(
        "  edge [\n    source 2\n    target 0\n",
        "  edge [\n    source 2\n    target 2\n  ]\n  edge [\n    source 1\n    target 0\n    LinkSpeedRaw 5.0\n  ]\n  edge [\n    source 2\n    target 0\n",
    );
    let t = parse(Format::Gml, &text).unwrap();
    assert_eq!(t.links.len(), 6);
    assert_eq!(t.links[0].capacity, Some(10e9 + 5.0));
    assert_eq!(t.notes.len(), 2, "{:?}", t.notes);
}

#[test]
fn plane_coordinates_are_recognised_and_measured_in_their_units() {
    let text = NATIVE
        .replace("( 13.405 52.52 )", "( 0 0 )")
        .replace("( 2.3522 48.8566 )", "( 300 400 )");
    let t = parse(Format::Sndlib, &text).unwrap();
    assert_eq!(t.coordinates, Coordinates::Planar);
    assert_eq!(t.links[0].length, 500.0);
    assert_eq!(t.links[0].delay, 0.0);
}

#[test]
fn a_series_is_checked_against_the_nodes() {
    let mut t = parse(Format::Json, JSON).unwrap();
    let e = t
        .attach_series(vec![(0.0, vec![("Berlin".into(), "Oslo".into(), 1.0)])])
        .unwrap_err();
    assert!(e.to_string().contains("Oslo"), "{e}");
    let e = t
        .attach_series(vec![
            (0.0, vec![]),
            (0.0, vec![("Berlin".into(), "Rome".into(), 1.0)]),
        ])
        .unwrap_err();
    assert!(e.to_string().contains("later"), "{e}");
    let e = t
        .attach_series(vec![(0.0, vec![("Berlin".into(), "Rome".into(), -1.0)])])
        .unwrap_err();
    assert!(e.to_string().contains(">= 0"), "{e}");
    let m = sndlib::read_matrix(NATIVE.as_bytes(), false).unwrap();
    assert_eq!(m.entries.len(), 5);
    assert!(m.meta.contains(&("granularity".into(), "5min".into())));
    let x = sndlib::read_matrix(XML.as_bytes(), true).unwrap();
    assert_eq!(x.entries, m.entries);
}

/// Corrupt any fixture anywhere (a byte changed, a span deleted or repeated, a cut) or feed
/// random bytes: every reader answers with a topology or an error, never a panic, and an
/// error that names a line names one inside the input.
fn mutate(text: &str, op: u8, at: usize, len: usize, byte: u8) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    let at = at % (b.len() + 1);
    let end = (at + len).min(b.len());
    match op % 4 {
        0 => {
            if at < b.len() {
                b[at] = byte;
            }
        }
        1 => {
            b.drain(at..end);
        }
        2 => {
            let span = b[at..end].to_vec();
            b.splice(at..at, span);
        }
        _ => b.truncate(at),
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn no_reader_panics_on_a_corrupt_file(
        which in 0usize..5, reader in 0usize..5, op in any::<u8>(), at in any::<usize>(),
        len in 0usize..40, byte in any::<u8>()
    ) {
        let input = mutate(ALL[which].1, op, at, len, byte);
        let lines = input.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        if let Err(e) = read(&input[..], ALL[reader].0, ReadOptions::default())
            && let Some(l) = e.line
        {
            prop_assert!(l >= 1 && l <= lines, "line {l} of {lines}: {e}");
        }
    }

    #[test]
    fn no_reader_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), reader in 0usize..5) {
        let _ = read(&bytes[..], ALL[reader].0, ReadOptions::default());
        let _ = sndlib::read_matrix(&bytes[..], reader % 2 == 0);
    }
}
