//! The Transportation Problem as a min-cost flow, solved by LEMON's network simplex (C++, through
//! the `mcmf` crate): the second independent reference for the solver's optima. Unlike the
//! general LP solver (`lp.rs`, dense and slow), it solves a 1000 x 1000 instance in well under a
//! second, so experiment T5 checks every instance of every size with it. LEMON is the library
//! POT's `emd` wraps (`bench/transport.sh`).

use super::problem::Problem;
use mcmf::{Capacity, Cost, GraphBuilder, Vertex};

/// The optimal cost found by LEMON, or `None` when the instance is outside what `mcmf` computes
/// exactly: it passes capacities and costs as `i32` and returns the total cost as `i32`, so the
/// total supply, and the total supply times the largest absolute cost, must stay below 2^31 (a
/// balanced instance's every supply, demand and cost is then within `i32` too).
pub fn optimum(p: &Problem) -> Option<i64> {
    let limit = i64::from(i32::MAX);
    let total: i64 = p.supply.iter().sum();
    let largest = p.cost.iter().map(|c| c.unsigned_abs()).max().unwrap_or(0);
    if total >= limit || u128::from(total.unsigned_abs()) * u128::from(largest) >= limit as u128 {
        return None;
    }
    let (m, n) = (p.rows(), p.cols());
    let mut g = GraphBuilder::new();
    for (i, &s) in p.supply.iter().enumerate() {
        g.add_edge(Vertex::Source, i, Capacity(s as i32), Cost(0));
    }
    for (j, &d) in p.demand.iter().enumerate() {
        g.add_edge(m + j, Vertex::Sink, Capacity(d as i32), Cost(0));
    }
    for i in 0..m {
        for j in 0..n {
            let cap = p.supply[i].min(p.demand[j]);
            g.add_edge(
                i,
                m + j,
                Capacity(cap as i32),
                Cost(p.cost[i * n + j] as i32),
            );
        }
    }
    // A balanced instance on a complete bipartite graph: the maximum flow ships every supply,
    // so the min-cost maximum flow is the Transportation Problem's optimum.
    let (cost, paths) = g.mcmf();
    let shipped: i64 = paths.iter().map(|x| i64::from(x.amount())).sum();
    (shipped == total).then_some(i64::from(cost))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::simplex::solve;
    use crate::alloc::simplex::tests::{instances, random};

    /// The network simplex and LEMON agree on random instances of many shapes, including
    /// degenerate ones (few distinct costs and quantities).
    #[test]
    fn same_optimum_as_lemon() {
        for (what, p) in instances(0..40) {
            let ours = solve(&p).unwrap().allocation.cost;
            assert_eq!(optimum(&p), Some(ours), "{what}");
        }
    }

    /// A doctored optimum is caught: LEMON's cost is the optimum, not just a feasible cost.
    #[test]
    fn lemon_finds_a_cost_below_a_feasible_one() {
        let p = random(30, 30, 1000, 100, 7);
        let nw = crate::alloc::initial::northwest(&p).unwrap().cost;
        let best = optimum(&p).unwrap();
        assert!(best < nw, "{best} vs the north-west corner's {nw}");
    }

    /// Out of `mcmf`'s i32 range: no answer rather than a wrong one. (A total flow beyond it is
    /// not a valid `Problem`: totals stop near 2^30.)
    #[test]
    fn too_large_for_i32_is_none() {
        let p = Problem::new(
            vec![1 << 20, 1 << 20],
            vec![1 << 20, 1 << 20],
            vec![vec![1 << 12; 2]; 2],
        )
        .unwrap();
        assert_eq!(optimum(&p), None);
        let p = Problem::new(vec![3, 4], vec![5, 2], vec![vec![1, 2], vec![3, 1]]).unwrap();
        assert_eq!(optimum(&p), Some(3 + 2 * 3 + 2));
    }
}
