//! The networks committed under `data/topologies/` (all 26 SNDlib networks and 30 Topology Zoo
//! networks, from topohub: data/topologies/README.md), built into the library so that an
//! experiment names one (`network = "sndlib/abilene"`) and runs anywhere without a download or a
//! file. `data/fetch-topologies.sh --committed` rewrites the files; a test checks that this
//! list and the folders agree.

/// (name, node-link JSON): `sndlib/NAME` and `zoo/NAME`.
pub const NETWORKS: &[(&str, &str)] = &[
    (
        "sndlib/abilene",
        include_str!("../../../../data/topologies/sndlib/abilene.json"),
    ),
    (
        "sndlib/atlanta",
        include_str!("../../../../data/topologies/sndlib/atlanta.json"),
    ),
    (
        "sndlib/brain",
        include_str!("../../../../data/topologies/sndlib/brain.json"),
    ),
    (
        "sndlib/cost266",
        include_str!("../../../../data/topologies/sndlib/cost266.json"),
    ),
    (
        "sndlib/dfn-bwin",
        include_str!("../../../../data/topologies/sndlib/dfn-bwin.json"),
    ),
    (
        "sndlib/dfn-gwin",
        include_str!("../../../../data/topologies/sndlib/dfn-gwin.json"),
    ),
    (
        "sndlib/di-yuan",
        include_str!("../../../../data/topologies/sndlib/di-yuan.json"),
    ),
    (
        "sndlib/france",
        include_str!("../../../../data/topologies/sndlib/france.json"),
    ),
    (
        "sndlib/geant",
        include_str!("../../../../data/topologies/sndlib/geant.json"),
    ),
    (
        "sndlib/germany50",
        include_str!("../../../../data/topologies/sndlib/germany50.json"),
    ),
    (
        "sndlib/giul39",
        include_str!("../../../../data/topologies/sndlib/giul39.json"),
    ),
    (
        "sndlib/india35",
        include_str!("../../../../data/topologies/sndlib/india35.json"),
    ),
    (
        "sndlib/janos-us-ca",
        include_str!("../../../../data/topologies/sndlib/janos-us-ca.json"),
    ),
    (
        "sndlib/janos-us",
        include_str!("../../../../data/topologies/sndlib/janos-us.json"),
    ),
    (
        "sndlib/newyork",
        include_str!("../../../../data/topologies/sndlib/newyork.json"),
    ),
    (
        "sndlib/nobel-eu",
        include_str!("../../../../data/topologies/sndlib/nobel-eu.json"),
    ),
    (
        "sndlib/nobel-germany",
        include_str!("../../../../data/topologies/sndlib/nobel-germany.json"),
    ),
    (
        "sndlib/nobel-us",
        include_str!("../../../../data/topologies/sndlib/nobel-us.json"),
    ),
    (
        "sndlib/norway",
        include_str!("../../../../data/topologies/sndlib/norway.json"),
    ),
    (
        "sndlib/pdh",
        include_str!("../../../../data/topologies/sndlib/pdh.json"),
    ),
    (
        "sndlib/pioro40",
        include_str!("../../../../data/topologies/sndlib/pioro40.json"),
    ),
    (
        "sndlib/polska",
        include_str!("../../../../data/topologies/sndlib/polska.json"),
    ),
    (
        "sndlib/sun",
        include_str!("../../../../data/topologies/sndlib/sun.json"),
    ),
    (
        "sndlib/ta1",
        include_str!("../../../../data/topologies/sndlib/ta1.json"),
    ),
    (
        "sndlib/ta2",
        include_str!("../../../../data/topologies/sndlib/ta2.json"),
    ),
    (
        "sndlib/zib54",
        include_str!("../../../../data/topologies/sndlib/zib54.json"),
    ),
    (
        "zoo/abilene",
        include_str!("../../../../data/topologies/zoo/abilene.json"),
    ),
    (
        "zoo/attmpls",
        include_str!("../../../../data/topologies/zoo/attmpls.json"),
    ),
    (
        "zoo/bellcanada",
        include_str!("../../../../data/topologies/zoo/bellcanada.json"),
    ),
    (
        "zoo/btnorthamerica",
        include_str!("../../../../data/topologies/zoo/btnorthamerica.json"),
    ),
    (
        "zoo/cernet",
        include_str!("../../../../data/topologies/zoo/cernet.json"),
    ),
    (
        "zoo/chinanet",
        include_str!("../../../../data/topologies/zoo/chinanet.json"),
    ),
    (
        "zoo/dfn",
        include_str!("../../../../data/topologies/zoo/dfn.json"),
    ),
    (
        "zoo/funet",
        include_str!("../../../../data/topologies/zoo/funet.json"),
    ),
    (
        "zoo/garr201201",
        include_str!("../../../../data/topologies/zoo/garr201201.json"),
    ),
    (
        "zoo/geant2012",
        include_str!("../../../../data/topologies/zoo/geant2012.json"),
    ),
    (
        "zoo/grnet",
        include_str!("../../../../data/topologies/zoo/grnet.json"),
    ),
    (
        "zoo/heanet",
        include_str!("../../../../data/topologies/zoo/heanet.json"),
    ),
    (
        "zoo/iij",
        include_str!("../../../../data/topologies/zoo/iij.json"),
    ),
    (
        "zoo/internetmci",
        include_str!("../../../../data/topologies/zoo/internetmci.json"),
    ),
    (
        "zoo/janetbackbone",
        include_str!("../../../../data/topologies/zoo/janetbackbone.json"),
    ),
    (
        "zoo/karen",
        include_str!("../../../../data/topologies/zoo/karen.json"),
    ),
    (
        "zoo/kreonet",
        include_str!("../../../../data/topologies/zoo/kreonet.json"),
    ),
    (
        "zoo/nsfnet",
        include_str!("../../../../data/topologies/zoo/nsfnet.json"),
    ),
    (
        "zoo/psinet",
        include_str!("../../../../data/topologies/zoo/psinet.json"),
    ),
    (
        "zoo/rediris",
        include_str!("../../../../data/topologies/zoo/rediris.json"),
    ),
    (
        "zoo/renater2010",
        include_str!("../../../../data/topologies/zoo/renater2010.json"),
    ),
    (
        "zoo/sinet",
        include_str!("../../../../data/topologies/zoo/sinet.json"),
    ),
    (
        "zoo/sprint",
        include_str!("../../../../data/topologies/zoo/sprint.json"),
    ),
    (
        "zoo/sunet",
        include_str!("../../../../data/topologies/zoo/sunet.json"),
    ),
    (
        "zoo/surfnet",
        include_str!("../../../../data/topologies/zoo/surfnet.json"),
    ),
    (
        "zoo/switchl3",
        include_str!("../../../../data/topologies/zoo/switchl3.json"),
    ),
    (
        "zoo/uninett2011",
        include_str!("../../../../data/topologies/zoo/uninett2011.json"),
    ),
    (
        "zoo/uunet",
        include_str!("../../../../data/topologies/zoo/uunet.json"),
    ),
    (
        "zoo/vtlwavenet2011",
        include_str!("../../../../data/topologies/zoo/vtlwavenet2011.json"),
    ),
    (
        "zoo/widejpn",
        include_str!("../../../../data/topologies/zoo/widejpn.json"),
    ),
];

/// The names, in catalogue order.
pub fn names() -> Vec<&'static str> {
    NETWORKS.iter().map(|(n, _)| *n).collect()
}

/// The names, in catalogue order (for parameters that name a network).
pub const NAMES: &[&str] = &[
    "sndlib/abilene",
    "sndlib/atlanta",
    "sndlib/brain",
    "sndlib/cost266",
    "sndlib/dfn-bwin",
    "sndlib/dfn-gwin",
    "sndlib/di-yuan",
    "sndlib/france",
    "sndlib/geant",
    "sndlib/germany50",
    "sndlib/giul39",
    "sndlib/india35",
    "sndlib/janos-us-ca",
    "sndlib/janos-us",
    "sndlib/newyork",
    "sndlib/nobel-eu",
    "sndlib/nobel-germany",
    "sndlib/nobel-us",
    "sndlib/norway",
    "sndlib/pdh",
    "sndlib/pioro40",
    "sndlib/polska",
    "sndlib/sun",
    "sndlib/ta1",
    "sndlib/ta2",
    "sndlib/zib54",
    "zoo/abilene",
    "zoo/attmpls",
    "zoo/bellcanada",
    "zoo/btnorthamerica",
    "zoo/cernet",
    "zoo/chinanet",
    "zoo/dfn",
    "zoo/funet",
    "zoo/garr201201",
    "zoo/geant2012",
    "zoo/grnet",
    "zoo/heanet",
    "zoo/iij",
    "zoo/internetmci",
    "zoo/janetbackbone",
    "zoo/karen",
    "zoo/kreonet",
    "zoo/nsfnet",
    "zoo/psinet",
    "zoo/rediris",
    "zoo/renater2010",
    "zoo/sinet",
    "zoo/sprint",
    "zoo/sunet",
    "zoo/surfnet",
    "zoo/switchl3",
    "zoo/uninett2011",
    "zoo/uunet",
    "zoo/vtlwavenet2011",
    "zoo/widejpn",
];

/// A built-in network by name.
pub fn get(name: &str) -> Option<super::Topology> {
    let (_, text) = NETWORKS.iter().find(|(n, _)| *n == name)?;
    let mut t = super::read(
        text.as_bytes(),
        super::Format::Json,
        super::ReadOptions::default(),
    )
    .expect("a committed network reads (tested)");
    t.name = name.to_string();
    Some(t)
}

#[cfg(test)]
mod tests {
    /// The list names every committed file and nothing else, and every one reads.
    #[test]
    fn the_catalogue_is_the_committed_folders() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies");
        let mut files = Vec::new();
        for group in ["sndlib", "zoo"] {
            for e in std::fs::read_dir(root.join(group)).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                if let Some(stem) = name.strip_suffix(".json") {
                    files.push(format!("{group}/{stem}"));
                }
            }
        }
        files.sort();
        let mut listed: Vec<String> = super::names().iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(listed, files);
        assert_eq!(super::NAMES, &super::names()[..]);
        for n in super::names() {
            let t = super::get(n).unwrap();
            assert!(t.nodes.len() >= 2, "{n}");
            assert_eq!(t.components().1, 1, "{n}: connected");
            if n.starts_with("sndlib/") {
                assert!(t.demands.as_ref().is_some_and(|d| d.total() > 0.0), "{n}");
            }
        }
    }
}
