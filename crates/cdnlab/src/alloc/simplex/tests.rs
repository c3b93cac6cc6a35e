use super::*;
use crate::alloc::problem::tests::textbook;
use crate::rng::stream;
use proptest::prelude::*;
use rand::RngExt;

#[test]
fn textbook_optimum() {
    let p = textbook();
    let s = solve(&p).unwrap();
    assert_eq!(s.allocation.cost, 152_535);
    s.certify(&p).unwrap();
    assert!(s.allocation.flows.len() < 3 + 4);
}

/// A random balanced instance: costs 0..=max_cost, supplies 0..=max_q.
pub(crate) fn random(m: usize, n: usize, max_cost: i64, max_q: i64, seed: u64) -> Problem {
    let mut rng = stream(seed, m as u64, n as u64);
    Problem::random(&mut rng, m, n, 0..=max_cost, 0..=max_q).unwrap()
}

/// Random instances of many shapes for `seeds`, with their names: single rows and columns,
/// square, wide and tall, and degenerate ones (few distinct costs and quantities, zero
/// supplies, ties in costs).
pub(crate) fn instances(seeds: std::ops::Range<u64>) -> impl Iterator<Item = (String, Problem)> {
    const SHAPES: [(usize, usize, i64, i64); 10] = [
        (1, 1, 5, 3),
        (1, 7, 9, 4),
        (6, 1, 9, 4),
        (5, 5, 3, 2),
        (3, 4, 1000, 100),
        (8, 10, 1000, 100),
        (12, 9, 100, 50),
        (15, 12, 5, 3),
        (30, 40, 1000, 100),
        (60, 40, 50, 20),
    ];
    seeds.flat_map(|seed| {
        SHAPES
            .iter()
            .map(move |&(m, n, c, q)| (format!("{m}x{n} seed {seed}"), random(m, n, c, q, seed)))
    })
}

/// Every solution carries its own proof of optimality (dual feasibility and equal
/// objectives), on many shapes, with degenerate instances (zero supplies, ties in costs).
#[test]
fn solutions_certify_themselves() {
    for (what, p) in instances(0..200) {
        let s = solve(&p).unwrap();
        s.certify(&p).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(s.allocation.flows.len() < p.supply.len() + p.demand.len());
    }
}

/// `p` with a few units moved between demands (totals stay balanced), and between supplies
/// if `supplies`.
fn shifted(p: &Problem, seed: u64, moves: usize, supplies: bool) -> Problem {
    let mut q = p.clone();
    let mut rng = stream(seed, 77, 0);
    for _ in 0..moves {
        let v = if supplies && rng.random_bool(0.5) {
            &mut q.supply
        } else {
            &mut q.demand
        };
        let (a, b) = (rng.random_range(0..v.len()), rng.random_range(0..v.len()));
        let x = v[a].min(rng.random_range(0..10));
        v[a] -= x;
        v[b] += x;
    }
    q
}

/// A warm start after changing some supplies and demands reaches the same optimum as a
/// cold solve, on instances with few distinct costs (many ties, degenerate duals) too,
/// and with no change it needs no pivot at all.
#[test]
fn warm_starts_reach_the_cold_optimum() {
    for seed in 0..100 {
        for (max_cost, moves) in [(100, 3), (3, 3), (100, 30)] {
            let p = random(20, 25, max_cost, 40, seed);
            let s = solve(&p).unwrap();
            let again = solve_warm(&p, &s.basis).unwrap();
            assert_eq!(again.pivots, 0);
            assert_eq!(again.allocation.cost, s.allocation.cost);
            let q = shifted(&p, seed, moves, true);
            let warm = solve_warm(&q, &s.basis).unwrap();
            warm.certify(&q).unwrap();
            assert_eq!(warm.allocation.cost, solve(&q).unwrap().allocation.cost);
        }
    }
}

/// The dual phase keeps every reduced cost >= 0 and, when it reports success, leaves
/// a feasible tree (no negative flow, nothing on an artificial arc): an optimum before
/// any primal pivot. It succeeds on nearly every small change.
#[test]
fn dual_phase_reaches_a_feasible_optimal_tree() {
    let mut succeeded = 0;
    for seed in 0..100 {
        let p = random(30, 40, 50, 30, seed);
        let q = shifted(&p, seed, 5, false);
        let b = solve(&p).unwrap().basis;
        let mut net = Network::new(&q, None);
        for u in 0..70 {
            net.parent[u] = b.parent[u] as usize;
            net.pred[u] = b.pred[u] as usize;
        }
        net.install(&q, false);
        let dual_feasible = |net: &Network| (0..30 * 40).all(|e| net.reduced(&q, e) >= 0);
        assert!(
            dual_feasible(&net),
            "seed {seed}: the old optimum's potentials"
        );
        if net.dual_phase(&q) {
            succeeded += 1;
            assert!((0..70).all(|u| net.flow[u] >= 0), "seed {seed}");
            assert!((0..70).all(|u| net.pred[u] < 1200 || net.flow[u] == 0));
        }
        assert!(dual_feasible(&net), "seed {seed}: after the dual phase");
    }
    assert!(
        succeeded >= 95,
        "dual phase succeeded {succeeded} times in 100"
    );
}

/// A basis from other costs breaks the warm start's premise (its potentials need not be
/// dual feasible); the answer is still the optimum, found by the primal method.
#[test]
fn warm_start_from_other_costs_is_still_optimal() {
    for seed in 0..50 {
        let p = random(12, 15, 100, 30, seed);
        let other = random(12, 15, 100, 30, seed + 1000);
        let basis = solve(&other).unwrap().basis;
        let warm = solve_warm(&p, &basis).unwrap();
        warm.certify(&p).unwrap();
        assert_eq!(warm.allocation.cost, solve(&p).unwrap().allocation.cost);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Structural invariants on arbitrary small instances: exact sums, integrality (by
    /// type), at most m + n - 1 positive cells, and optimality by certificate.
    #[test]
    fn structural_invariants(m in 1usize..8, n in 1usize..8, seed in any::<u64>(),
                             neg in any::<bool>()) {
        let mut p = random(m, n, 20, 6, seed);
        if neg {
            p.cost.iter_mut().for_each(|c| *c -= 10);
        }
        let s = solve(&p).unwrap();
        prop_assert!(s.certify(&p).is_ok());
        prop_assert!(s.allocation.flows.len() < m + n);
    }
}

/// Cross-check against an independent LP solver (`alloc::lp`).
mod lp_check {
    use super::*;
    use crate::alloc::lp;

    #[test]
    fn same_optimum_as_an_lp_solver() {
        for seed in 0..40 {
            for (m, n) in [(3, 4), (8, 10), (15, 12)] {
                let p = random(m, n, 1000, 100, seed);
                let ours = solve(&p).unwrap().allocation.cost;
                let lp = lp::optimum(&p).unwrap();
                assert!(
                    (ours as f64 - lp).abs() <= 1e-6 * lp.abs().max(1.0),
                    "{m}x{n} seed {seed}: {ours} vs LP {lp}"
                );
            }
        }
    }
}
mod strong {
    use super::*;
    /// After every pivot the tree stays strongly feasible: no arc of zero flow points away
    /// from the root (the property that rules out cycling).
    #[test]
    fn trees_stay_strongly_feasible() {
        for seed in 0..30 {
            let p = super::random(15, 20, 5, 3, seed);
            let mut net = Network::new(&p, None);
            let check =
                |net: &Network| (0..net.m + net.n).all(|u| net.flow[u] > 0 || net.dir[u] == UP);
            assert!(check(&net));
            while let Some(e) = net.entering(&p) {
                net.pivot(&p, e);
                assert!(check(&net), "seed {seed}");
            }
        }
    }
}
