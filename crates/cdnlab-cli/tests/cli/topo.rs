//! `topo stats`, `topo plot`, `topo convert`: the fixtures in every format, every network
//! topohub ships (against topohub's own statistics), and bad files.

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(ext: &str) -> String {
    root()
        .join(format!("data/topologies/fixtures/tiny.{ext}"))
        .display()
        .to_string()
}

/// Stats of the fixture in all five formats agree; plots and conversions are written and read
/// back; a folder gives one CSV row per file.
#[test]
fn topo_stats_plot_and_convert_on_the_fixtures() {
    let d = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for ext in ["gml", "graphml", "txt", "xml", "json"] {
        let out = ok(cdnlab(
            &["topo", "stats", "--json", &fixture(ext)],
            d.path(),
        ));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["nodes"], 5);
        assert_eq!(v["links"], 6);
        assert_eq!(v["diameter_hops"], 2);
        assert_eq!(v["total_capacity"], 36_000_000_000i64);
        v.as_object_mut().unwrap().remove("file");
        for k in ["demand_pairs", "demand_total"] {
            v.as_object_mut().unwrap().remove(k);
        }
        rows.push(v);
    }
    assert!(rows.windows(2).all(|w| w[0] == w[1]), "{rows:?}");
    let out = ok(cdnlab(
        &[
            "topo",
            "stats",
            "--csv",
            &root()
                .join("data/topologies/fixtures")
                .display()
                .to_string(),
        ],
        d.path(),
    ));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 6);

    // Plots: SVG and PNG by extension.
    ok(cdnlab(
        &["topo", "plot", &fixture("txt"), "-o", "m.svg"],
        d.path(),
    ));
    let svg = std::fs::read_to_string(d.path().join("m.svg")).unwrap();
    assert!(svg.contains("tiny: 5 nodes, 6 links") && svg.matches("<line").count() >= 6);
    ok(cdnlab(
        &["topo", "plot", &fixture("gml"), "-o", "maps/m.png"],
        d.path(),
    ));
    assert!(
        std::fs::read(d.path().join("maps/m.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );

    // Conversions read back the same network; a lossy one is refused unless asked for.
    let gml = fixture("gml");
    for name in ["t.json", "t.txt", "t.gml"] {
        ok(cdnlab(&["topo", "convert", &gml, name], d.path()));
        let a = ok(cdnlab(&["topo", "stats", "--json", name], d.path()));
        let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
        assert_eq!(
            (v["nodes"].clone(), v["links"].clone()),
            (5.into(), 6.into()),
            "{name}"
        );
        assert_eq!(v["total_length_km"], rows[0]["total_length_km"], "{name}");
    }
    fails_with(
        &cdnlab(
            &["topo", "convert", &fixture("json"), "lossy.gml"],
            d.path(),
        ),
        &["5 demands", "--lossy"],
    );
    assert!(!d.path().join("lossy.gml").exists(), "nothing half-written");
    ok(cdnlab(
        &["topo", "convert", &fixture("json"), "lossy.gml", "--lossy"],
        d.path(),
    ));

    // A demand series from a folder of SNDlib matrices, kept by JSON.
    let series = d.path().join("series");
    std::fs::create_dir(&series).unwrap();
    for i in 0..3 {
        std::fs::copy(fixture("txt"), series.join(format!("m{i}.txt"))).unwrap();
    }
    std::fs::copy(fixture("xml"), series.join("m3.xml")).unwrap();
    ok(cdnlab(
        &[
            "topo",
            "convert",
            &fixture("txt"),
            "s.json",
            "--series",
            "series",
        ],
        d.path(),
    ));
    let v: serde_json::Value = serde_json::from_slice(
        &ok(cdnlab(&["topo", "stats", "--json", "s.json"], d.path())).stdout,
    )
    .unwrap();
    assert_eq!(v["intervals"], 4);
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("s.json")).unwrap()).unwrap();
    // The META granularity of 5 minutes sets the intervals' times.
    assert_eq!(t["graph"]["series"][3]["at"], 900.0);
}

/// Bad files and flags: each refused with a message naming the file and what is wrong.
#[test]
fn topo_refuses_bad_files_with_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let txt = fixture("txt");
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.path().join(name), bytes).unwrap();
    w("gz.gml", &[0x1f, 0x8b, 8, 0, 0, 0]);
    w("what.dat", b"hello world\n");
    w(
        "bad.gml",
        b"graph [\n  node [ id 0 Longitude 1 Latitude 2 ]\n  edge [ source 0 target 7 ]\n]\n",
    );
    w(
        "neg.txt",
        b"NODES (\n a ( 1 2 )\n b ( 2 3 )\n)\nLINKS (\n L ( a b ) -5 0 0 0 ( )\n)\n",
    );
    for (args, needles) in [
        (
            vec!["topo", "stats", "missing.gml"],
            vec!["missing.gml", "No such file"],
        ),
        (
            vec!["topo", "stats", "gz.gml"],
            vec!["gz.gml", "gzip-compressed", "gunzip"],
        ),
        (
            vec!["topo", "stats", "what.dat"],
            vec!["what.dat", "--format", "gml, graphml"],
        ),
        (
            vec!["topo", "stats", "bad.gml"],
            vec!["bad.gml", "line 3", "node 7"],
        ),
        (
            vec!["topo", "stats", "neg.txt"],
            vec!["neg.txt", "line 6", "capacity = -5"],
        ),
        (
            vec!["topo", "stats", "--format", "csv", "bad.gml"],
            vec!["possible values: gml, graphml"],
        ),
        (vec!["topo", "convert", "bad.gml", "x.out"], vec!["line 3"]),
        (
            vec!["topo", "plot", "neg.txt", "-o", "x.pdf"],
            vec!["line 6"],
        ),
        (
            vec!["topo", "plot", &txt, "-o", "x.pdf"],
            vec![".svg or .png"],
        ),
        (vec!["topo", "convert", &txt, "x.out"], vec!["--to"]),
        (
            vec!["topo", "convert", &txt, "y.json", "--interval", "0"],
            vec!["above 0"],
        ),
        (
            vec!["topo", "convert", &txt, "y.json", "--interval", "300"],
            vec!["--series"],
        ),
    ] {
        fails_with(&cdnlab(&args, d.path()), &needles);
    }
}

/// Every network topohub ships (707 in 1.5.1), exported by data/fetch-topologies.sh: `topo
/// stats` reads them all and agrees with topohub's own statistics (computed by networkx) on
/// nodes, links, degrees and diameters; `topo plot` draws them all.
#[test]
fn every_network_topohub_ships_has_stats_and_a_map() {
    let dir = root().join("data/topologies/topohub");
    let Some(dir) = cdnlab_testkit::need(cdnlab_testkit::TOPOHUB, dir.is_dir().then_some(dir))
    else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let out = ok(cdnlab(
        &["topo", "stats", "--json", &dir.display().to_string()],
        d.path(),
    ));
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.len() >= 700, "{} networks", rows.len());
    for r in &rows {
        let file = r["file"].as_str().unwrap();
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let s = &t["graph"]["stats"];
        for (ours, theirs) in [
            ("nodes", "nodes"),
            ("links", "links"),
            ("min_degree", "min_degree"),
            ("max_degree", "max_degree"),
            ("diameter_hops", "diameter_hops"),
        ] {
            assert_eq!(r[ours].as_f64(), s[theirs].as_f64(), "{file}: {ours}");
        }
        // topohub rounds to 2 decimals.
        let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
        let (md, ad) = (
            r["mean_degree"].as_f64().unwrap(),
            s["avg_degree"].as_f64().unwrap(),
        );
        assert!(close(md, ad, 0.006), "{file}: degree {md} vs {ad}");
        // Diameter in km over links whose lengths topohub rounded to 0.01 km: at most
        // 0.005 km per hop apart, plus the rounding of the total.
        let (dl, tl) = (
            r["diameter_km"].as_f64().unwrap(),
            s["diameter_len"].as_f64().unwrap(),
        );
        let hops = r["diameter_hops"].as_f64().unwrap();
        assert!(
            close(dl, tl, 0.005 * hops.max(1.0) * 4.0 + 0.01),
            "{file}: {dl} vs {tl}"
        );
    }
    let out = ok(cdnlab(
        &["topo", "plot", &dir.display().to_string(), "-o", "maps"],
        d.path(),
    ));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("wrote {} figures", rows.len()))
    );
}
