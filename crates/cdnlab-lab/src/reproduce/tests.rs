use super::fixture::{Falsifier, synth};
use super::schedule::schedule;
use super::*;

#[test]
fn a_selection_has_a_default_folder_of_its_own() {
    let args = |only: &[&str]| ReproducePlan {
        only: only.iter().map(|s| s.to_string()).collect(),
        ..ReproducePlan::default()
    };
    assert_eq!(args(&[]).out_dir(), Path::new("out/reproduce"));
    // Registry order, whatever the order of --only; a repeated id counts once.
    assert_eq!(
        args(&["gwtw-e8", "cache-che", "gwtw-e8"]).out_dir(),
        Path::new("out/reproduce-cache-che+gwtw-e8")
    );
    let ids: Vec<&str> = registry().iter().map(|r| r.id).collect();
    let long = args(&ids).out_dir();
    let name = long.file_name().unwrap().to_str().unwrap();
    assert!(name.len() < 60, "{name}");
    assert!(name.starts_with(&format!("reproduce-{}-experiments-", ids.len())));
    let mut given = args(&["cache-che"]);
    given.out = Some("elsewhere".into());
    assert_eq!(given.out_dir(), Path::new("elsewhere"));
}

/// The pool's order: the timed cells are one job at the head (in registry order), then the
/// rest longest expected first, unknown estimates first, ties in registry order.
#[test]
fn schedule_puts_timed_cells_first_then_longest() {
    // (experiment, cell, timed, expected seconds), in registry order.
    let cells = vec![
        (0, 0, false, Some(5.0)),
        (0, 1, false, None),
        (1, 0, true, Some(200.0)),
        (2, 0, false, Some(50.0)),
        (1, 1, true, None),
        (2, 1, false, Some(5.0)),
        (3, 0, false, None),
    ];
    assert_eq!(
        schedule(cells),
        vec![
            vec![(1, 0), (1, 1)],
            vec![(0, 1)],
            vec![(3, 0)],
            vec![(2, 0)],
            vec![(0, 0)],
            vec![(2, 1)],
        ]
    );
    // Without timed cells no empty job leads.
    assert_eq!(
        schedule(vec![(0, 0, false, Some(1.0)), (0, 1, false, Some(2.0))]),
        vec![vec![(0, 1)], vec![(0, 0)]]
    );
}

/// Every registered experiment's scenarios load at both scales, ids are unique and papers are
/// the known ones (the four papers', and cdnlab's steering comparison): a registration mistake
/// fails here, not in a user's reproduce run.
#[test]
fn registry_is_well_formed() {
    let all = registry();
    let mut ids: Vec<&str> = all.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len());
    for r in &all {
        assert!(
            ["cache", "gwtw", "multihash", "transport", "steering"].contains(&r.paper),
            "{}",
            r.id
        );
        for (path, text) in [r.quick, r.full] {
            assert!(Path::new("../..").join(path).exists(), "{path}");
            Scenario::parse(text, Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Critical values against tables: the normal 0.9995 quantile 3.2905, Student's t(9) at
/// 0.9995 4.7809, and Bonferroni over 10 tests (normal 0.99995: 3.8906).
#[test]
fn critical_values() {
    assert!((critical(0, 1) - 3.2905).abs() < 1e-3);
    assert!((critical(9, 1) - 4.7809).abs() < 1e-3);
    assert!((critical(0, 10) - 3.8906).abs() < 1e-3);
}

fn verdict(rep: &Reproduction, sc: &Scenario, rows: &[SummaryRow], id: &str) -> Claim {
    (rep.claims)(sc, rows)
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{}: claim {id} missing", rep.id))
}

/// The rule of the house: every claim of every reproduction, at both scales, passes on data
/// from a right model and fails on data from each listed wrong model or doctored result;
/// with no data at all every claim fails; and no claim lacks a failing-data test.
#[test]
fn every_claim_can_fail() {
    let fals = fixture::all();
    let all = registry();
    for f in &fals {
        assert!(
            all.iter().any(|r| r.id == f.rep),
            "falsifier for unknown {}",
            f.rep
        );
        assert!(!f.wrong.is_empty(), "{}: no wrong model", f.claim);
    }
    for rep in &all {
        for (path, text) in [rep.quick, rep.full] {
            let sc = Scenario::parse(text, Path::new(path)).unwrap();
            // A reproduction may be figures only; one with claims emits them all, with
            // or without data.
            let empty = (rep.claims)(&sc, &[]);
            // The same claims with data as without, so that none hides behind "no data"
            // (and every falsifier names one of them).
            let ids = |rows: &[SummaryRow]| -> Vec<String> {
                (rep.claims)(&sc, rows).into_iter().map(|c| c.id).collect()
            };
            for f in fals.iter().filter(|f| f.rep == rep.id) {
                assert_eq!(
                    ids(&[]),
                    ids(&synth(&sc, f.right)),
                    "{}: claims differ with and without data",
                    rep.id
                );
                assert!(
                    ids(&[]).iter().any(|i| i == f.claim),
                    "{}: no claim {}",
                    rep.id,
                    f.claim
                );
            }
            for c in &empty {
                assert!(!c.pass, "{} passes with no data ({path})", c.id);
                let mine: Vec<&Falsifier> = fals
                    .iter()
                    .filter(|f| f.rep == rep.id && f.claim == c.id)
                    .collect();
                assert!(!mine.is_empty(), "claim {} has no failing-data test", c.id);
                for f in mine {
                    let right = verdict(rep, &sc, &synth(&sc, f.right), &c.id);
                    assert!(
                        right.pass,
                        "{} fails on the right model ({path}): measured {}",
                        c.id, right.measured
                    );
                    // The report shows the words: they exist, and no raw float leaks in.
                    for v in [&right, c] {
                        assert!(!v.in_words.is_empty(), "{}: no measurement in words", c.id);
                        assert_eq!(
                            words::overlong_number(&v.in_words),
                            None,
                            "{}: {}",
                            c.id,
                            v.in_words
                        );
                    }
                    for (name, wrong) in &f.wrong {
                        let rows = synth(&sc, |r, i, rng| f.run(wrong, r, i, rng));
                        let v = verdict(rep, &sc, &rows, &c.id);
                        assert!(
                            !v.pass,
                            "{} passes on the wrong model `{name}` ({path}): measured {}",
                            c.id, v.measured
                        );
                    }
                }
            }
        }
    }
}

/// Every claim cites at least one numbered rule, every cited rule is a row of a spec's rule
/// table in docs/spec, and the table of citations names no claim that does not exist.
#[test]
fn every_claim_cites_rules_that_exist() {
    let spec = |paper: &str| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../docs/spec/{paper}.md"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let specs: Vec<(&str, String)> = [("GWTW", "gwtw"), ("MH", "multihash"), ("TP", "transport")]
        .into_iter()
        .map(|(prefix, paper)| (prefix, spec(paper)))
        .collect();
    let mut seen = Vec::new();
    for rep in registry() {
        let sc = Scenario::parse(rep.quick.1, Path::new(rep.quick.0)).unwrap();
        for c in (rep.claims)(&sc, &[]) {
            assert!(!c.rules.is_empty(), "{} cites no rule (see rules.rs)", c.id);
            for r in c.rules {
                let prefix = r.split('-').next().unwrap();
                let (_, text) = specs
                    .iter()
                    .find(|(p, _)| *p == prefix)
                    .unwrap_or_else(|| panic!("{}: {r} is of no spec", c.id));
                assert!(
                    text.contains(&format!("\n| {r} |")),
                    "{}: {r} is not in its spec's rule table",
                    c.id
                );
            }
            seen.push(c.id);
        }
    }
    for id in super::rules::claim_ids() {
        assert!(
            seen.iter().any(|s| s == id),
            "rules.rs names {id}, which no reproduction claims"
        );
    }
}

/// The committed paper-scale record (scenarios/verdicts-full.csv) parses whole, and names only
/// claims that exist: a renamed or retired claim must leave it (bench/reproduce.sh rewrites it).
#[test]
fn paper_scale_record_is_whole_and_current() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/verdicts-full.csv"
    ));
    let record = super::report::paper_scale();
    assert_eq!(
        record.len(),
        text.lines().count() - 1,
        "a row of verdicts-full.csv does not parse"
    );
    let ids: Vec<&str> = super::rules::claim_ids().collect();
    for r in &record {
        assert!(ids.contains(&r.claim.as_str()), "{} is no claim", r.claim);
        assert!(r.commit.len() == 12 && r.date.len() == 10, "{r:?}");
    }
}

/// The record of the wrong models' runs (scenarios/wrong-models.csv, written by
/// bench/wrong_models.sh) shows each claim failing under every wrong model `wrong::REJECTS`
/// names for it; every claim is in `REJECTS` or in `NOT_YET` (with its reason), not both;
/// every wrong model runs registered experiments and rejects some claim.
#[test]
fn every_claim_rejects_its_wrong_models() {
    use super::wrong::{NOT_YET, REJECTS, all};
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/wrong-models.csv"
    ));
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let record: Vec<(String, String, String)> = rows
        .records()
        .map(|r| {
            let r = r.expect("wrong-models.csv parses");
            (r[0].to_string(), r[1].to_string(), r[2].to_string())
        })
        .collect();
    let models = all();
    let reps: Vec<&str> = registry().iter().map(|r| r.id).collect();
    for m in &models {
        assert!(
            m.runs.iter().all(|r| reps.contains(r)),
            "{} runs an unknown experiment",
            m.id
        );
        assert!(
            REJECTS.iter().any(|(_, ms)| ms.contains(&m.id)),
            "wrong model {} rejects no claim",
            m.id
        );
    }
    let ids: Vec<&str> = super::rules::claim_ids().collect();
    for id in &ids {
        let named = REJECTS.iter().filter(|(c, _)| c == id).count();
        let not_yet = NOT_YET.iter().filter(|(c, _)| c == id).count();
        assert_eq!(
            named + not_yet,
            1,
            "claim {id}: name its wrong models in wrong::REJECTS or say why not in NOT_YET"
        );
    }
    for (claim, ms) in REJECTS {
        assert!(ids.contains(claim), "REJECTS names no claim {claim}");
        for m in *ms {
            assert!(
                models.iter().any(|w| w.id == *m),
                "{claim}: no wrong model {m}"
            );
            let row = record
                .iter()
                .find(|r| r.0 == *m && r.1 == *claim)
                .unwrap_or_else(|| {
                    panic!("{claim} under {m}: not in wrong-models.csv (bench/wrong_models.sh)")
                });
            assert_eq!(row.2, "false", "{claim} passes under the wrong model {m}");
        }
    }
    for (claim, why) in NOT_YET {
        assert!(ids.contains(claim), "NOT_YET names no claim {claim}");
        assert!(!why.is_empty());
    }
}

/// Wrong models run through the real pipeline here, not only in the record: the simulator
/// with the rule replaced, the reproduction's own scenario, seeds and claim function. Three
/// cheap ones, one per paper.
#[test]
fn wrong_models_fail_claims_through_the_pipeline() {
    let dir = std::env::temp_dir().join(format!("cdnlab-wrong-{}", std::process::id()));
    for (model, only, claim) in [
        ("gwtw-k1-selects", "gwtw-e7", "gwtw.C2-failure"),
        ("mh-random-place", "mh-x4", "mh.flash-growth"),
        ("tp-never-reallocate", "tp-t3", "tp.reallocation"),
    ] {
        let out = dir.join(model);
        reproduce(&ReproducePlan {
            out: Some(out.clone()),
            only: vec![only.into()],
            wrong: Some(model.into()),
            replace: true,
            ..ReproducePlan::default()
        })
        .unwrap();
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("claims.json")).unwrap()).unwrap();
        let c = doc["claims"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == claim)
            .unwrap_or_else(|| panic!("{model}: no claim {claim}"));
        assert_eq!(
            c["pass"], false,
            "{claim} passes under {model}: {}",
            c["in_words"]
        );
        assert!(
            doc["experiments"][0]["scale"]
                .as_str()
                .unwrap()
                .ends_with(&format!("+wrong-{model}")),
            "the report names the wrong model"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
