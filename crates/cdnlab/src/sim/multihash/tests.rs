//! Invariants of the simulated DHT CDN (spec `docs/spec/multihash.md`).

use super::*;
use crate::Named;

fn small(growth: Growth) -> Config {
    Config {
        nodes: 100,
        vnodes: 4,
        ring: RingLayout::PerRun,
        routing: Routing::Fingers,
        files: 2000,
        k: 256,
        alpha: 1.0,
        load: 0.5,
        c_high: 0.2,
        gamma: 0.75,
        shrink: true,
        window: 100.0,
        growth,
        place: Place::Smallest,
        leave: Leave::Top,
        search: Search::Gallop,
        strategy: Strategy::Rbs,
        policy: PlacementPolicy::MultiHash,
        balance: 1.25,
        fail_fraction: 0.0,
        fail_at: 0,
        repair: Repair::Rgr,
        flash: 4.0,
        flash_start: 5,
        flash_end: 15,
        horizon: 30,
        measure: 5,
    }
}

/// Each replication draws its own ring (per-run): two seeds give two networks, one seed the
/// same one; `fixed` puts every run on the live deployments' ring, whatever the seed.
#[test]
fn rings_are_drawn_per_run() {
    let cfg = Config {
        vnodes: 1,
        shrink: false,
        ..small(Growth::One)
    };
    let max_mean = |cfg: &Config, seed| {
        run(cfg, &mut crate::rng::stream(seed, 0, 0))
            .unwrap()
            .max_mean
    };
    let drawn: Vec<f64> = (0..4).map(|s| max_mean(&cfg, s)).collect();
    assert_eq!(
        drawn[0],
        max_mean(&cfg, 0),
        "a run is a function of its seed"
    );
    assert!(drawn.windows(2).all(|w| w[0] != w[1]), "{drawn:?}");
    let fixed = Config {
        ring: RingLayout::Fixed,
        policy: PlacementPolicy::SingleHash,
        ..cfg
    };
    // Single-hash on one ring: the same busiest node in every run; the load it carries varies
    // only with the requests drawn, so max / mean stays within a few percent.
    let one: Vec<f64> = (0..4).map(|s| max_mean(&fixed, s)).collect();
    let per_run = Config {
        ring: RingLayout::PerRun,
        ..fixed
    };
    let many: Vec<f64> = (0..4).map(|s| max_mean(&per_run, s)).collect();
    let spread = |v: &[f64]| {
        v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
    };
    assert!(
        spread(&many) > spread(&one),
        "fixed {one:?}, per run {many:?}"
    );
}

/// Without failures the used indices of every file are the prefix 1..n_f after every window,
/// whatever the growth rule: concurrent replication attempts meet at CREATE_IF_ABSENT, so none
/// creates a duplicate or skips an index, and only the top replica ever leaves. A flash crowd
/// makes the counts go up and down.
#[test]
fn prefix_invariant_without_failures() {
    for growth in [Growth::One, Growth::Double, Growth::Jump] {
        let cfg = small(growth);
        let mut rng = crate::rng::stream(3, 0, 0);
        let mut most = 0usize;
        run_with(&cfg, &mut rng, &mut |t, store| {
            for f in 0..cfg.files {
                let idx: Vec<u32> = store.replicas(f).iter().map(|r| r.index).collect();
                let prefix: Vec<u32> = (1..=idx.len() as u32).collect();
                assert_eq!(idx, prefix, "{growth:?}: window {t}, file {f}");
            }
            most = most.max(store.replicas(0).len());
        })
        .unwrap();
        assert!(
            most > 10,
            "{growth:?}: the flash crowd replicated file 0 ({most})"
        );
    }
}

/// The served load per replica ends near c_high or below for the top file once replicated
/// (jump growth reaches the steady count within a few windows).
#[test]
fn replication_caps_replica_load() {
    let mut cfg = small(Growth::Jump);
    cfg.flash = 1.0;
    let mut rng = crate::rng::stream(4, 0, 0);
    let out = run(&cfg, &mut rng).unwrap();
    assert!(out.top_replicas >= out.top_steady, "{out:?}");
    // Poisson noise over a window of 100 time units at c_high = 0.2: counts of 20 have sd 4.5.
    assert!(out.top_replica_load < cfg.c_high * 1.6, "{out:?}");
    assert_eq!(out.failure_rate, 0.0);
}

/// After crashes, the measured failure rate of the next window matches the exact recursion's
/// prediction (within 4 standard errors), and random gap removal leaves no gap.
#[test]
fn crashes_match_the_recursion_and_rgr_repairs() {
    let mut cfg = small(Growth::Jump);
    cfg.flash = 1.0;
    cfg.fail_fraction = 0.2;
    cfg.fail_at = 10;
    cfg.window = 400.0;
    let mut rng = crate::rng::stream(5, 0, 0);
    let out = run(&cfg, &mut rng).unwrap();
    assert!(out.gaps_after_failure > 0, "{out:?}");
    let p = out.predicted_failure_after;
    let n = cfg.load * f64::from(cfg.nodes) * cfg.window;
    let se = (p * (1.0 - p) / n).sqrt();
    assert!(
        (out.failure_rate_after - p).abs() < 4.0 * se,
        "{} vs {p} (se {se})",
        out.failure_rate_after
    );
    assert!(out.repair_rounds < cfg.horizon - cfg.fail_at, "{out:?}");
}

/// A run is a function of its seed.
#[test]
fn runs_are_reproducible() {
    let cfg = small(Growth::Double);
    let a = run(&cfg, &mut crate::rng::stream(9, 1, 2)).unwrap();
    let b = run(&cfg, &mut crate::rng::stream(9, 1, 2)).unwrap();
    assert_eq!(a, b);
}

proptest::proptest! {
    /// Fuzz: any configuration within the parameters' ranges runs or is refused with an error;
    /// nothing panics (tiny systems, one node, K = 1, every node but one crashing, ...).
    #[test]
    fn configs_never_panic(
        nodes in 1u32..12, vnodes in 1u32..4, files in 1u32..40, k in 1u32..40,
        alpha in 0.0f64..3.0, load in 0.01f64..3.0, c_high in 0.01f64..2.0,
        window in 1.0f64..30.0, growth in 0usize..3, strategy in 0usize..3, policy in 0usize..5,
        fail in 0.0f64..=1.0, fail_at in 0u32..5, repair in 0usize..5, horizon in 1u32..6,
        shrink in proptest::bool::ANY, flash in 1.0f64..5.0, place in 0usize..2, leave in 0usize..2,
    ) {
        let cfg = Config {
            nodes, vnodes, ring: RingLayout::PerRun, routing: Routing::Fingers, files, k, alpha, load, c_high, gamma: 0.75,
            shrink, window,
            growth: [Growth::One, Growth::Double, Growth::Jump][growth],
            place: Place::ALL[place], leave: Leave::ALL[leave], search: Search::Gallop,
            strategy: Strategy::ALL[strategy],
            policy: [PlacementPolicy::MultiHash, PlacementPolicy::SingleHash, PlacementPolicy::BoundedLoad,
                     PlacementPolicy::Rendezvous, PlacementPolicy::Maglev][policy],
            balance: 1.25, fail_fraction: fail, fail_at,
            repair: [Repair::None, Repair::Rgr, Repair::Neighbour, Repair::Request,
                     Repair::Migrate][repair],
            flash, flash_start: 1, flash_end: 3, horizon, measure: 1,
        };
        let mut rng = crate::rng::stream(1, 0, 0);
        let _ = run(&cfg, &mut rng);
    }
}

/// The outcome does not depend on how many requests' files are drawn at a time: one at a time,
/// odd chunks, and all of a window first (as before chunks) give the same run, with a flash
/// crowd (a draw of its own per request), a crash and request-driven repair.
#[test]
fn outcome_does_not_depend_on_the_chunk() {
    let mut cfg = small(Growth::Jump);
    cfg.fail_fraction = 0.1;
    cfg.fail_at = 20;
    cfg.repair = Repair::Request;
    let outcome = |chunk| {
        let mut rng = crate::rng::stream(5, 1, 2);
        let out = run_chunked(&cfg, &mut rng, &mut |_, _| {}, chunk).unwrap();
        // The generator's state after the run too: later draws must not shift either.
        (format!("{out:?}"), rng.random::<u64>())
    };
    let all_first = outcome(u64::MAX);
    for chunk in [1, 7, 4096] {
        assert_eq!(outcome(chunk), all_first, "chunk {chunk}");
    }
}
