//! The network simplex method for the Transportation Problem: exact, integral, deterministic.
//!
//! The bipartite network has a node per supply row and per demand column, an uncapacitated arc
//! i -> j of cost c_ij for every cell, and an artificial root joined to every node by an arc of
//! a cost larger than any path (big M). The starting basis is the tree of artificial arcs,
//! oriented so that it is strongly feasible (every zero-flow arc points toward the root).
//! Each pivot prices a block of about sqrt(mn) arcs and takes the most negative reduced cost
//! c_ij + pi_i - pi_j in it (block search); the leaving arc is the last blocking arc of the cycle
//! (Cunningham's rule), which keeps the tree strongly feasible and so rules out cycling. The
//! tree is kept as parent links with depths and child lists; a pivot re-hangs one subtree and
//! shifts its potentials.
//!
//! At the end every reduced cost is >= 0: the potentials are an optimal dual solution, a
//! certificate that [`Solution::certify`] checks independently of the algorithm.

use super::problem::{Allocation, Problem};
use crate::Error;

const NONE: usize = usize::MAX;
/// The arc from a node to its parent points up (node -> parent) or down (parent -> node).
const UP: i64 = 1;
const DOWN: i64 = -1;

/// An optimal solution with its dual potentials.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub allocation: Allocation,
    /// Dual values: u_i for rows and v_j for columns, with c_ij - u_i - v_j >= 0 for every
    /// cell and = 0 where flow is positive.
    pub u: Vec<i64>,
    pub v: Vec<i64>,
    /// Pivots made.
    pub pivots: u64,
    /// The final tree (see [`solve_warm`]).
    pub basis: Basis,
}

impl Solution {
    /// Checks optimality independently of how the solution was found: feasibility, dual
    /// feasibility, complementary slackness, and equal primal and dual objectives.
    pub fn certify(&self, p: &Problem) -> Result<(), String> {
        p.check(&self.allocation.flow)?;
        let n = p.cols();
        for i in 0..p.rows() {
            for j in 0..n {
                let rc = p.cost[i * n + j] - self.u[i] - self.v[j];
                if rc < 0 {
                    return Err(format!("reduced cost {rc} < 0 at [{i}][{j}]"));
                }
                if rc > 0 && self.allocation.flow[i * n + j] > 0 {
                    return Err(format!("flow on [{i}][{j}] with reduced cost {rc}"));
                }
            }
        }
        let dual: i128 = p
            .supply
            .iter()
            .zip(&self.u)
            .chain(p.demand.iter().zip(&self.v))
            .map(|(&a, &b)| i128::from(a) * i128::from(b))
            .sum();
        if dual != i128::from(self.allocation.cost) {
            return Err(format!(
                "dual objective {dual} != primal {}",
                self.allocation.cost
            ));
        }
        Ok(())
    }
}

/// Solves `p` to optimality.
pub fn solve(p: &Problem) -> Result<Solution, Error> {
    Network::new(p, None).run(p)
}

/// Solves `p` starting from the basis of an earlier solution of an instance of the same shape
/// (same costs, different supplies or demands: a re-allocation). The old tree is kept where its
/// arcs can carry the new flows; the rest hang from the root. Cold if the shapes differ.
pub fn solve_warm(p: &Problem, basis: &Basis) -> Result<Solution, Error> {
    Network::new(p, Some(basis)).run(p)
}

/// The spanning tree of an optimal solution, for warm starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basis {
    rows: usize,
    parent: Vec<u32>,
    pred: Vec<u32>,
}

struct Network {
    m: usize,
    n: usize,
    // Nodes 0..m are rows, m..m+n columns, m+n the artificial root. Arc e < m n is cell
    // (e / n, e % n); arc m n + u joins node u and the root.
    /// Flow on each node's tree arc (`pred`). Arcs out of the tree are uncapacitated, so they
    /// sit at flow 0: no m x n array to clear or update.
    flow: Vec<i64>,
    parent: Vec<usize>,
    pred: Vec<usize>,
    dir: Vec<i64>,
    depth: Vec<u32>,
    pi: Vec<i64>,
    first_child: Vec<usize>,
    next_sib: Vec<usize>,
    prev_sib: Vec<usize>,
    /// Where the next pricing block starts.
    next_arc: usize,
    block: usize,
    stack: Vec<usize>,
}

impl Network {
    /// A network whose tree is every node hung from the root by its artificial arc (a cold
    /// start), or the tree of `basis` (a warm start).
    fn new(p: &Problem, basis: Option<&Basis>) -> Self {
        let (m, n) = (p.rows(), p.cols());
        let nodes = m + n;
        let cells = m * n;
        let mut net = Network {
            m,
            n,
            flow: vec![0; nodes + 1],
            parent: vec![NONE; nodes + 1],
            pred: vec![NONE; nodes + 1],
            dir: vec![0; nodes + 1],
            depth: vec![0; nodes + 1],
            pi: vec![0; nodes + 1],
            first_child: vec![NONE; nodes + 1],
            next_sib: vec![NONE; nodes + 1],
            prev_sib: vec![NONE; nodes + 1],
            next_arc: 0,
            block: ((cells as f64).sqrt().ceil() as usize).max(10),
            stack: Vec::new(),
        };
        match basis {
            Some(b) if b.parent.len() == nodes && b.rows == m => {
                for u in 0..nodes {
                    net.parent[u] = b.parent[u] as usize;
                    net.pred[u] = b.pred[u] as usize;
                }
            }
            _ => {
                for u in 0..nodes {
                    net.parent[u] = nodes;
                    net.pred[u] = cells + u;
                }
            }
        }
        net.install(p);
        net
    }

    /// Makes the tree in `parent`/`pred` a strongly feasible basis for `p` (every zero-flow arc
    /// points toward the root, so any node can send flow to the root along its path): each
    /// node's arc carries the net supply of its subtree; an arc that would carry it the wrong
    /// way, or carry nothing away from the root, is replaced by the node's artificial arc to
    /// the root, oriented to carry it. Then child lists, depths and potentials follow from the tree.
    fn install(&mut self, p: &Problem) {
        let (m, cells, root) = (self.m, self.m * self.n, self.m + self.n);
        // Children lists of the given tree, then a preorder from the root.
        self.first_child.fill(NONE);
        for u in 0..root {
            let par = self.parent[u];
            self.link(u, par);
        }
        let mut order = Vec::with_capacity(root + 1);
        self.stack.clear();
        self.stack.push(root);
        while let Some(x) = self.stack.pop() {
            order.push(x);
            let mut c = self.first_child[x];
            while c != NONE {
                self.stack.push(c);
                c = self.next_sib[c];
            }
        }
        // Bottom-up: net supply of each subtree that stays attached.
        let mut net: Vec<i64> = (0..root)
            .map(|u| if u < m { p.supply[u] } else { -p.demand[u - m] })
            .collect();
        for &u in order.iter().rev() {
            if u == root {
                continue;
            }
            let e = self.pred[u];
            let (s, _) = self.arc_ends(e, u);
            let up = s == u; // the arc points from u to its parent
            let carry = if up { net[u] } else { -net[u] };
            let detach = e >= cells || carry < 0 || (carry == 0 && !up);
            if detach {
                // Hang u from the root by its artificial arc, carrying the subtree's net supply.
                if self.parent[u] != root {
                    self.unlink(u);
                    self.link(u, root);
                }
                self.pred[u] = cells + u;
                if net[u] >= 0 {
                    self.dir[u] = UP;
                    self.flow[u] = net[u];
                } else {
                    self.dir[u] = DOWN;
                    self.flow[u] = -net[u];
                }
            } else {
                self.dir[u] = if up { UP } else { DOWN };
                self.flow[u] = carry;
                let par = self.parent[u];
                if par != root {
                    net[par] += net[u];
                }
            }
        }
        // Top-down: depths and potentials (reduced cost 0 on every tree arc).
        let art_cost = self.art_cost(p);
        self.pi[root] = 0;
        self.depth[root] = 0;
        self.stack.clear();
        self.stack.push(root);
        while let Some(x) = self.stack.pop() {
            let mut c = self.first_child[x];
            while c != NONE {
                let e = self.pred[c];
                let cost = if e < cells { p.cost[e] } else { art_cost };
                self.pi[c] = if self.dir[c] == UP {
                    self.pi[x] - cost
                } else {
                    self.pi[x] + cost
                };
                self.depth[c] = self.depth[x] + 1;
                self.stack.push(c);
                c = self.next_sib[c];
            }
        }
    }

    /// Longer than any path of real arcs: (nodes + 1) arcs of at most the largest |cost|.
    fn art_cost(&self, p: &Problem) -> i64 {
        let max_cost = p.cost.iter().map(|c| c.abs()).max().unwrap_or(0);
        (max_cost + 1) * ((self.m + self.n) as i64 + 1)
    }

    /// (source, target) of tree arc `e` hanging node `u` (artificial arcs: by `dir`).
    fn arc_ends(&self, e: usize, u: usize) -> (usize, usize) {
        let cells = self.m * self.n;
        if e < cells {
            (e / self.n, self.m + e % self.n)
        } else if self.dir[u] == UP {
            (u, self.m + self.n)
        } else {
            (self.m + self.n, u)
        }
    }

    #[inline]
    fn reduced(&self, p: &Problem, e: usize) -> i64 {
        let (s, t) = (e / self.n, self.m + e % self.n);
        p.cost[e] + self.pi[s] - self.pi[t]
    }

    fn link(&mut self, child: usize, parent: usize) {
        self.parent[child] = parent;
        let f = self.first_child[parent];
        self.next_sib[child] = f;
        self.prev_sib[child] = NONE;
        if f != NONE {
            self.prev_sib[f] = child;
        }
        self.first_child[parent] = child;
    }

    fn unlink(&mut self, child: usize) {
        let parent = self.parent[child];
        let (prev, next) = (self.prev_sib[child], self.next_sib[child]);
        if prev != NONE {
            self.next_sib[prev] = next;
        } else {
            self.first_child[parent] = next;
        }
        if next != NONE {
            self.prev_sib[next] = prev;
        }
        self.parent[child] = NONE;
    }

    /// Block search: the most negative reduced cost in the first block that has one. Tree arcs
    /// have reduced cost 0, so they need no test; rows and columns are walked with counters
    /// (no division per arc).
    fn entering(&mut self, p: &Problem) -> Option<usize> {
        let (m, n) = (self.m, self.n);
        let cells = m * n;
        let (mut best, mut best_rc) = (NONE, 0i64);
        let mut e = self.next_arc;
        let (mut i, mut j) = (e / n, e % n);
        let mut left_in_block = self.block;
        for _ in 0..cells {
            let rc = p.cost[e] + self.pi[i] - self.pi[m + j];
            if rc < best_rc {
                best_rc = rc;
                best = e;
            }
            e += 1;
            j += 1;
            if j == n {
                j = 0;
                i += 1;
                if i == m {
                    i = 0;
                    e = 0;
                }
            }
            left_in_block -= 1;
            if left_in_block == 0 {
                if best != NONE {
                    break;
                }
                left_in_block = self.block;
            }
        }
        self.next_arc = e;
        (best != NONE).then_some(best)
    }

    fn join(&self, mut a: usize, mut b: usize) -> usize {
        while a != b {
            if self.depth[a] >= self.depth[b] {
                a = self.parent[a];
            } else {
                b = self.parent[b];
            }
        }
        a
    }

    fn pivot(&mut self, p: &Problem, e_in: usize) {
        let (first, second) = (e_in / self.n, self.m + e_in % self.n);
        let rc = self.reduced(p, e_in);
        let join = self.join(first, second);
        // Flow goes first -> second on the entering arc, back up from second to the join and
        // down to first. Blocking (decreasing) arcs: on first's side those pointing up, on
        // second's side those pointing down. Going round the cycle from the join in the flow's
        // direction (down to first, across, up from second), the last blocking arc leaves: on
        // first's side the one nearest first (strict <, walking up from first), on second's
        // side the one nearest the join (<=, walking up from second), and second's side wins
        // ties because it comes later. This keeps the tree strongly feasible.
        let (mut delta, mut u_out, mut side) = (i64::MAX, NONE, 0);
        let mut u = first;
        while u != join {
            if self.dir[u] == UP && self.flow[u] < delta {
                delta = self.flow[u];
                u_out = u;
                side = 1;
            }
            u = self.parent[u];
        }
        let mut u = second;
        while u != join {
            if self.dir[u] == DOWN && self.flow[u] <= delta {
                delta = self.flow[u];
                u_out = u;
                side = 2;
            }
            u = self.parent[u];
        }
        debug_assert!(u_out != NONE, "a balanced complete instance is bounded");
        if delta > 0 {
            let mut u = first;
            while u != join {
                self.flow[u] -= self.dir[u] * delta;
                u = self.parent[u];
            }
            let mut u = second;
            while u != join {
                self.flow[u] += self.dir[u] * delta;
                u = self.parent[u];
            }
        }
        // The subtree under u_out is re-hung from the entering arc's end inside it.
        let (v_in, w_in, new_dir, shift) = if side == 1 {
            (first, second, UP, -rc)
        } else {
            (second, first, DOWN, rc)
        };
        // Reverse the path v_in .. u_out; each arc (with its flow) moves to the node above it,
        // the entering arc (carrying delta) to v_in.
        let (mut node, mut new_parent, mut arc, mut d, mut f) = (v_in, w_in, e_in, new_dir, delta);
        loop {
            let (old_parent, old_arc, old_dir, old_flow) = (
                self.parent[node],
                self.pred[node],
                self.dir[node],
                self.flow[node],
            );
            self.unlink(node);
            self.link(node, new_parent);
            self.pred[node] = arc;
            self.dir[node] = d;
            self.flow[node] = f;
            if node == u_out {
                break;
            }
            new_parent = node;
            node = old_parent;
            arc = old_arc;
            d = -old_dir;
            f = old_flow;
        }
        // Potentials and depths of the re-hung subtree.
        self.stack.clear();
        self.stack.push(v_in);
        while let Some(x) = self.stack.pop() {
            self.pi[x] += shift;
            self.depth[x] = self.depth[self.parent[x]] + 1;
            let mut c = self.first_child[x];
            while c != NONE {
                self.stack.push(c);
                c = self.next_sib[c];
            }
        }
    }

    fn run(mut self, p: &Problem) -> Result<Solution, Error> {
        let mut pivots = 0u64;
        while let Some(e) = self.entering(p) {
            self.pivot(p, e);
            pivots += 1;
        }
        let cells = self.m * self.n;
        let mut flow = vec![0; cells];
        for u in 0..self.m + self.n {
            let e = self.pred[u];
            if e < cells {
                flow[e] = self.flow[u];
            } else if self.flow[u] != 0 {
                return Err(Error::param(
                    "instance",
                    "infeasible",
                    "a balanced instance (this one leaves flow on an artificial arc)",
                ));
            }
        }
        // Summed over the tree's arcs (the only ones with flow), not all m n cells.
        let total: i128 = (0..self.m + self.n)
            .filter(|&u| self.pred[u] < cells)
            .map(|u| i128::from(p.cost[self.pred[u]]) * i128::from(self.flow[u]))
            .sum();
        let cost = i64::try_from(total)
            .map_err(|_| Error::param("cost", total, "a total cost that fits 64 bits"))?;
        // u_i = -pi_i, v_j = -pi_j gives c - u - v = c + pi_i - pi_j; shift so that the
        // duals are small (a constant moves from u to v without changing anything).
        let base = self.pi[0];
        let u = (0..self.m).map(|i| base - self.pi[i]).collect();
        let v = (0..self.n).map(|j| self.pi[self.m + j] - base).collect();
        let basis = Basis {
            rows: self.m,
            parent: self.parent[..self.m + self.n]
                .iter()
                .map(|&x| x as u32)
                .collect(),
            pred: self.pred[..self.m + self.n]
                .iter()
                .map(|&x| x as u32)
                .collect(),
        };
        Ok(Solution {
            allocation: super::problem::Allocation { flow, cost },
            u,
            v,
            pivots,
            basis,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
        assert!(s.allocation.flow.iter().filter(|&&x| x > 0).count() < 3 + 4);
    }

    /// A random balanced instance.
    pub(crate) fn random(m: usize, n: usize, max_cost: i64, max_q: i64, seed: u64) -> Problem {
        let mut rng = stream(seed, m as u64, n as u64);
        let supply: Vec<i64> = (0..m).map(|_| rng.random_range(0..=max_q)).collect();
        let total: i64 = supply.iter().sum();
        let mut demand: Vec<i64> = (0..n).map(|_| rng.random_range(1..=max_q)).collect();
        demand = crate::alloc::problem::scale_to(&demand, total);
        let cost = (0..m)
            .map(|_| (0..n).map(|_| rng.random_range(0..=max_cost)).collect())
            .collect();
        Problem::new(supply, demand, cost).unwrap()
    }

    /// Every solution carries its own proof of optimality (dual feasibility and equal
    /// objectives), on many shapes, with degenerate instances (zero supplies, ties in costs).
    #[test]
    fn solutions_certify_themselves() {
        for seed in 0..200 {
            for (m, n, c, q) in [
                (1, 1, 5, 3),
                (1, 7, 9, 4),
                (6, 1, 9, 4),
                (5, 5, 3, 2),
                (12, 9, 100, 50),
                (30, 40, 1000, 100),
            ] {
                let p = random(m, n, c, q, seed);
                let s = solve(&p).unwrap();
                s.certify(&p)
                    .unwrap_or_else(|e| panic!("{m}x{n} seed {seed}: {e}"));
                assert!(s.allocation.flow.iter().filter(|&&x| x > 0).count() < m + n);
            }
        }
    }

    /// A warm start after changing some demands reaches the same optimum as a cold solve, and
    /// with no change it needs no pivot at all.
    #[test]
    fn warm_starts_reach_the_cold_optimum() {
        for seed in 0..100 {
            let p = random(20, 25, 100, 40, seed);
            let s = solve(&p).unwrap();
            let again = solve_warm(&p, &s.basis).unwrap();
            assert_eq!(again.pivots, 0);
            assert_eq!(again.allocation.cost, s.allocation.cost);
            // Shift a few units between two demands (totals stay balanced).
            let mut q = p.clone();
            let mut rng = stream(seed, 77, 0);
            for _ in 0..3 {
                let (a, b) = (rng.random_range(0..25), rng.random_range(0..25));
                let x = q.demand[a].min(rng.random_range(0..10));
                q.demand[a] -= x;
                q.demand[b] += x;
            }
            let warm = solve_warm(&q, &s.basis).unwrap();
            warm.certify(&q).unwrap();
            assert_eq!(warm.allocation.cost, solve(&q).unwrap().allocation.cost);
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
            prop_assert!(s.allocation.flow.iter().filter(|&&x| x > 0).count() < m + n);
        }
    }
}

/// Cross-check against an independent LP solver (good_lp with microlp, a dense simplex in
/// floating point): the same optimal cost on random instances.
#[cfg(test)]
mod lp_check {
    use super::tests::random;
    use super::*;
    use good_lp::{
        Expression, Solution as _, SolverModel, constraint, microlp, variable, variables,
    };

    fn lp_optimum(p: &Problem) -> f64 {
        let (m, n) = (p.rows(), p.cols());
        let mut vars = variables!();
        let x: Vec<_> = (0..m * n).map(|_| vars.add(variable().min(0.0))).collect();
        let objective: Expression = x.iter().zip(&p.cost).map(|(&v, &c)| c as f64 * v).sum();
        let mut model = vars.minimise(objective.clone()).using(microlp);
        for i in 0..m {
            let row: Expression = (0..n).map(|j| x[i * n + j]).sum();
            model = model.with(constraint!(row == p.supply[i] as f64));
        }
        for j in 0..n {
            let col: Expression = (0..m).map(|i| x[i * n + j]).sum();
            model = model.with(constraint!(col == p.demand[j] as f64));
        }
        model.solve().expect("LP solves").eval(&objective)
    }

    #[test]
    fn same_optimum_as_an_lp_solver() {
        for seed in 0..40 {
            for (m, n) in [(3, 4), (8, 10), (15, 12)] {
                let p = random(m, n, 1000, 100, seed);
                let ours = solve(&p).unwrap().allocation.cost;
                let lp = lp_optimum(&p);
                assert!(
                    (ours as f64 - lp).abs() <= 1e-6 * lp.abs().max(1.0),
                    "{m}x{n} seed {seed}: {ours} vs LP {lp}"
                );
            }
        }
    }
}
#[cfg(test)]
mod strong {
    use super::*;
    /// After every pivot the tree stays strongly feasible: no arc of zero flow points away
    /// from the root (the property that rules out cycling).
    #[test]
    fn trees_stay_strongly_feasible() {
        for seed in 0..30 {
            let p = super::tests::random(15, 20, 5, 3, seed);
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
