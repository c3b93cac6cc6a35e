//! The record of the claims of kind "emulation" (docs/testbed.md#agreement): the testbed needs
//! root, so `reproduce` cannot run them; `cdnlab testbed report` writes their verdicts to
//! `scenarios/verdicts-emulation.csv`, which is committed, and `reproduce`'s report shows them
//! beside the simulated claims. Each row carries a fingerprint of the code and the scenario its
//! verdict depends on, so a claim whose code has changed since says so.

use serde::{Deserialize, Serialize};

/// Where the record lives, from the repository's root.
pub const RECORD_PATH: &str = "scenarios/verdicts-emulation.csv";

const RECORD: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/verdicts-emulation.csv"
));

/// One case of one emulation claim, as recorded: the fields of the judge's
/// `cdnlab_live::testbed::agree::Agreement` (a crate this one does not depend on; the csv crate
/// cannot flatten one struct into another's row) and where the verdict came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Recorded {
    pub experiment: String,
    pub claim: String,
    pub case: String,
    pub emulated: String,
    pub simulated: String,
    pub tolerance: String,
    pub agree: bool,
    /// The scenario file the run used.
    pub scenario: String,
    pub commit: String,
    pub date: String,
    /// [`code`] of the experiment when it ran.
    pub code: String,
}

macro_rules! sources {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../", $path)))),*]
    };
}

/// The files an experiment's verdicts depend on: the emulator, the live programs it runs, the
/// simulator it is judged against, the judge, and the scenario.
const SOURCES: &[(&str, &[(&str, &str)])] = &[
    (
        "gwtw-video",
        sources![
            "crates/cdnlab-live/src/testbed/gwtw.rs",
            "crates/cdnlab-live/src/testbed/net.rs",
            "crates/cdnlab-live/src/testbed/wire.rs",
            "crates/cdnlab-live/src/client.rs",
            "crates/cdnlab-live/src/edge/mod.rs",
            "crates/cdnlab/src/select/gwtw.rs",
            "crates/cdnlab/src/sim/gwtw/mod.rs",
            "crates/cdnlab/src/sim/gwtw/video.rs",
            "scenarios/testbed-gwtw.toml",
            "scenarios/testbed-gwtw-shallow.toml",
        ],
    ),
    (
        "tp-paths",
        sources![
            "crates/cdnlab-live/src/testbed/paths.rs",
            "crates/cdnlab-live/src/testbed/probe.rs",
            "crates/cdnlab-live/src/testbed/net.rs",
            "crates/cdnlab-live/src/testbed/wire.rs",
            "crates/cdnlab/src/sim/transport/paths.rs",
            "scenarios/testbed-tp-paths.toml",
            "scenarios/testbed-tp-distance.toml",
            "data/topologies/zoo/abilene.json",
        ],
    ),
    (
        "tp-segments",
        sources![
            "crates/cdnlab-live/src/testbed/segments.rs",
            "crates/cdnlab-live/src/testbed/paths.rs",
            "crates/cdnlab-live/src/testbed/probe.rs",
            "crates/cdnlab-live/src/testbed/net.rs",
            "crates/cdnlab-live/src/testbed/wire.rs",
            "crates/cdnlab-live/src/origin.rs",
            "scenarios/testbed-tp-segments.toml",
            "scenarios/testbed-tp-segments-distance.toml",
            "data/topologies/zoo/abilene.json",
        ],
    ),
    (
        "tp-admission",
        sources![
            "crates/cdnlab-live/src/testbed/admission.rs",
            "crates/cdnlab-live/src/testbed/net.rs",
            "crates/cdnlab-live/src/testbed/wire.rs",
            "crates/cdnlab-live/src/demo/steer.rs",
            "crates/cdnlab-live/src/edge/mod.rs",
            "crates/cdnlab-live/src/steer/mod.rs",
            "crates/cdnlab-live/src/steer/routes.rs",
            "crates/cdnlab/src/alloc/admission.rs",
            "crates/cdnlab/src/sim/transport/stream.rs",
            "scenarios/testbed-tp-admission.toml",
            "scenarios/testbed-tp-admission-metros.toml",
            "scenarios/reference-metros.json",
        ],
    ),
    (
        "dht",
        sources![
            "crates/cdnlab-live/src/testbed/dht.rs",
            "crates/cdnlab-live/src/testbed/net.rs",
            "crates/cdnlab-live/src/testbed/wire.rs",
            "crates/cdnlab-live/src/dht/mod.rs",
            "crates/cdnlab-live/src/dht/routes.rs",
            "crates/cdnlab-live/src/dht/rounds.rs",
            "crates/cdnlab-live/src/dht/state.rs",
            "crates/cdnlab/src/dht/replication.rs",
            "crates/cdnlab/src/dht/search.rs",
            "crates/cdnlab/src/sim/multihash/mod.rs",
            "crates/cdnlab/src/sim/multihash/window.rs",
            "scenarios/testbed-dht.toml",
        ],
    ),
];

/// The experiment kinds that have a record.
pub fn experiments() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(e, _)| *e)
}

/// A fingerprint of the files `experiment`'s verdicts depend on, as this build has them (16
/// hex digits of XXH64 over their paths and contents), or None for an unknown experiment.
pub fn code(experiment: &str) -> Option<String> {
    let (_, files) = SOURCES.iter().find(|(e, _)| *e == experiment)?;
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    for (path, text) in *files {
        h.update(path.as_bytes());
        h.update(&[0]);
        h.update(without_tests(text).as_bytes());
        h.update(&[0]);
    }
    Some(format!("{:016x}", h.digest()))
}

/// A source file without its unit tests (a top-level `#[cfg(test)] mod tests` and what follows
/// it, where the house keeps them): a test judges a committed run, it does not make it, so
/// editing one does not make the record stale.
fn without_tests(text: &str) -> &str {
    text.find("\n#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i])
}

/// The committed record (empty if it cannot be read).
pub fn record() -> Vec<Recorded> {
    parse(RECORD)
}

/// Rows of a record's text (unreadable rows are skipped).
pub fn parse(text: &str) -> Vec<Recorded> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .filter_map(|r| r.ok())
        .collect()
}

/// Whether a row's code has changed since it was recorded.
pub fn stale(r: &Recorded) -> bool {
    code(&r.experiment).is_none_or(|c| c != r.code)
}

/// A record with `rows` in place of the rows of the same scenarios (the others kept), sorted
/// by experiment and scenario (a stable sort: the cases of one run keep their order), in CSV.
pub fn merge(old: &[Recorded], rows: &[Recorded]) -> Result<Vec<u8>, csv::Error> {
    let mut all: Vec<Recorded> = old
        .iter()
        .filter(|o| !rows.iter().any(|r| r.scenario == o.scenario))
        .cloned()
        .chain(rows.iter().cloned())
        .collect();
    all.sort_by(|a, b| (&a.experiment, &a.scenario).cmp(&(&b.experiment, &b.scenario)));
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in &all {
        w.serialize(r)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(e: &str, claim: &str, agree: bool) -> Recorded {
        Recorded {
            scenario: format!("{e}.toml"),
            experiment: e.into(),
            claim: claim.into(),
            case: "k=2".into(),
            emulated: "x".into(),
            simulated: "y".into(),
            tolerance: "z".into(),
            agree,
            commit: "abc".into(),
            date: "2026-12-04".into(),
            code: code("gwtw-video").unwrap(),
        }
    }

    #[test]
    fn fingerprints_are_stable_and_per_experiment() {
        let c = code("gwtw-video").unwrap();
        assert_eq!(c.len(), 16);
        assert_eq!(code("gwtw-video").unwrap(), c);
        assert!(code("no-such").is_none());
        assert!(!stale(&row("gwtw-video", "A", true)));
        assert!(stale(&Recorded {
            code: "0000000000000000".into(),
            ..row("gwtw-video", "A", true)
        }));
        assert!(stale(&row("no-such", "A", true)));
    }

    /// The unit tests at a file's end are left out of its fingerprint; a change above them
    /// is not.
    #[test]
    fn fingerprints_leave_out_the_unit_tests() {
        let code = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        assert_eq!(without_tests(code), "fn a() {}");
        assert_eq!(without_tests("fn a() {}\n"), "fn a() {}\n");
        // A nested test module (indented) is not the file's own.
        let nested = "mod x {\n    #[cfg(test)]\n    mod tests {}\n}\n";
        assert_eq!(without_tests(nested), nested);
    }

    #[test]
    fn merge_replaces_a_scenario_and_keeps_the_others() {
        let old = vec![row("gwtw-video", "A", true), row("dht", "B", true)];
        let new = vec![row("gwtw-video", "C", false)];
        let text = String::from_utf8(merge(&old, &new).unwrap()).unwrap();
        let back = parse(&text);
        assert_eq!(
            back,
            vec![row("dht", "B", true), row("gwtw-video", "C", false)]
        );
    }

    #[test]
    fn the_committed_record_reads() {
        // Every row of the committed file parses (a row that did not would vanish from the
        // report).
        let lines = RECORD.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(record().len(), lines.saturating_sub(1));
    }
}
