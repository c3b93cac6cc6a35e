//! Initial solutions, usable on their own as feasible but (usually) sub-optimal allocations:
//! the north-west corner rule, which ignores costs, and Vogel's approximation method, which
//! serves first the row or column that would lose most by not getting its cheapest cell.
//!
//! Rules: TP-R2 (the feasible sub-optimal allocations) of docs/spec/transport.md.

use super::problem::{Allocation, Problem};
use crate::Error;

/// North-west corner: fill cells left to right, top to bottom.
pub fn northwest(p: &Problem) -> Result<Allocation, Error> {
    let (m, n) = (p.rows(), p.cols());
    let (mut s, mut d) = (p.supply.clone(), p.demand.clone());
    // i and j never decrease: the cells come in row-major order.
    let mut flows = Vec::with_capacity(m + n);
    let (mut i, mut j) = (0, 0);
    while i < m && j < n {
        let x = s[i].min(d[j]);
        if x > 0 {
            flows.push((i, j, x));
        }
        s[i] -= x;
        d[j] -= x;
        if s[i] == 0 && i + 1 < m {
            i += 1;
        } else if d[j] == 0 {
            j += 1;
        } else {
            i += 1;
        }
    }
    let cost = p.total_cost(&flows)?;
    Ok(Allocation { flows, cost })
}

/// Vogel's approximation method. Penalty of a line: its second-cheapest open cell's cost minus
/// its cheapest. The open line with the largest penalty (ties: rows before columns, then lower
/// index) gets as much as possible on its cheapest open cell (ties: lower index), and a line
/// that is satisfied closes. Each line keeps its cells sorted by cost, so finding its two
/// cheapest open cells skips closed ones once: O(mn log(mn) + (m + n)^2).
pub fn vogel(p: &Problem) -> Result<Allocation, Error> {
    vogel_in(p, Order::Cheapest)
}

/// The order [`vogel_in`] reads each line's cells in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Cheapest first: Vogel's method.
    Cheapest,
    /// Dearest first: a wrong model (a flipped comparator), which still reads the costs but
    /// fills the dearest cells; the reproduction's `tp.vogel` must reject it.
    Dearest,
}

/// Vogel's approximation method reading each line's cells in `order` (see [`vogel`]).
pub fn vogel_in(p: &Problem, order: Order) -> Result<Allocation, Error> {
    let (m, n) = (p.rows(), p.cols());
    let (mut s, mut d) = (p.supply.clone(), p.demand.clone());
    let mut flows = Vec::with_capacity(m + n);
    let sign = match order {
        Order::Cheapest => 1,
        Order::Dearest => -1,
    };
    let cost = |i: usize, j: usize| sign * p.cost[i * n + j];
    let sorted = |len: usize, key: &dyn Fn(usize) -> i64| {
        let mut v: Vec<usize> = (0..len).collect();
        v.sort_by_key(|&x| (key(x), x));
        v
    };
    let row_order: Vec<Vec<usize>> = (0..m).map(|i| sorted(n, &|j| cost(i, j))).collect();
    let col_order: Vec<Vec<usize>> = (0..n).map(|j| sorted(m, &|i| cost(i, j))).collect();
    let (mut row_at, mut col_at) = (vec![0usize; m], vec![0usize; n]);
    let (mut row_open, mut col_open) = (vec![true; m], vec![true; n]);
    let (mut rows_left, mut cols_left) = (m, n);
    // The two cheapest open entries of a line: (cheapest index, penalty).
    fn two(
        order: &[usize],
        at: &mut usize,
        open: &[bool],
        c: &dyn Fn(usize) -> i64,
    ) -> Option<(usize, i64)> {
        while *at < order.len() && !open[order[*at]] {
            *at += 1;
        }
        let first = *order.get(*at)?;
        let second = order[*at + 1..].iter().find(|&&x| open[x]);
        Some((first, second.map_or(0, |&x| c(x) - c(first))))
    }
    while rows_left > 0 && cols_left > 0 {
        // (penalty, is_row, index, cell)
        let mut best: Option<(i64, usize, usize)> = None; // (penalty, row, col)
        for i in (0..m).filter(|&i| row_open[i]) {
            if let Some((j, pen)) = two(&row_order[i], &mut row_at[i], &col_open, &|j| cost(i, j))
                && best.is_none_or(|b| pen > b.0)
            {
                best = Some((pen, i, j));
            }
        }
        for j in (0..n).filter(|&j| col_open[j]) {
            if let Some((i, pen)) = two(&col_order[j], &mut col_at[j], &row_open, &|i| cost(i, j))
                && best.is_none_or(|b| pen > b.0)
            {
                best = Some((pen, i, j));
            }
        }
        let Some((_, i, j)) = best else { break };
        // A cell is chosen once: one of its lines closes right after.
        let x = s[i].min(d[j]);
        if x > 0 {
            flows.push((i, j, x));
        }
        s[i] -= x;
        d[j] -= x;
        // Close one line per step (the row on a tie, unless it is the last row), so the
        // allocation has at most m + n - 1 cells.
        if s[i] == 0 && (d[j] != 0 || rows_left > 1) {
            row_open[i] = false;
            rows_left -= 1;
        } else {
            col_open[j] = false;
            cols_left -= 1;
        }
    }
    flows.sort_unstable();
    let cost = p.total_cost(&flows)?;
    Ok(Allocation { flows, cost })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::problem::tests::textbook;

    #[test]
    fn textbook_initial_solutions() {
        let p = textbook();
        let nw = northwest(&p).unwrap();
        assert_eq!(nw.cost, 165_595);
        p.check(&nw.flows).unwrap();
        let v = vogel(&p).unwrap();
        p.check(&v.flows).unwrap();
        // Vogel lands between the optimum and the north-west corner here.
        assert!((152_535..=165_595).contains(&v.cost), "{}", v.cost);
        // The flipped comparator fills dear cells: above the north-west corner here.
        let dear = vogel_in(&p, Order::Dearest).unwrap();
        p.check(&dear.flows).unwrap();
        assert!(dear.cost > nw.cost, "{}", dear.cost);
    }

    /// Both are feasible on random instances, with at most m + n - 1 positive cells, and never
    /// below the optimum.
    #[test]
    fn feasible_and_not_better_than_optimal() {
        for seed in 0..100 {
            let p = crate::alloc::simplex::tests::random(9, 13, 50, 20, seed);
            let opt = crate::alloc::simplex::solve(&p).unwrap().allocation.cost;
            for a in [
                northwest(&p).unwrap(),
                vogel(&p).unwrap(),
                vogel_in(&p, Order::Dearest).unwrap(),
            ] {
                p.check(&a.flows).unwrap();
                assert!(a.flows.len() < 9 + 13);
                assert!(a.cost >= opt);
            }
        }
    }
}
