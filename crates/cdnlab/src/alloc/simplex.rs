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
//! A warm start ([`solve_warm`]) takes the tree of an earlier optimum for the same costs. Its
//! potentials are still dual feasible, so the dual simplex method restores primal feasibility
//! first (a few pivots, each taking out an arc that now carries negative flow); the primal
//! method then makes the tree strongly feasible if it has any pivot left to make.
//!
//! At the end every reduced cost is >= 0: the potentials are an optimal dual solution, a
//! certificate that [`Solution::certify`] checks independently of the algorithm.
//!
//! Rules: TP-R2 (the exact solution, warm starts) of docs/spec/transport.md.

use super::problem::{Allocation, MAX_VALUE, Problem};
use super::scan::{equal_to, segment_min};
use crate::Error;

const NONE: usize = usize::MAX;
/// The arc from a node to its parent points up (node -> parent) or down (parent -> node).
const UP: i64 = 1;
const DOWN: i64 = -1;
/// A potential that puts a column out of reach of a scan: c - MASKED >= 2^61 - 2^31, far above
/// any real c - pi (|pi| < 2^58, see `art_cost`).
const MASKED: i64 = -(1 << 61);

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
        p.check(&self.allocation.flows)?;
        let n = p.cols();
        for i in 0..p.rows() {
            for j in 0..n {
                let rc = p.cost[i * n + j] - self.u[i] - self.v[j];
                if rc < 0 {
                    return Err(format!("reduced cost {rc} < 0 at [{i}][{j}]"));
                }
            }
        }
        for &(i, j, _) in &self.allocation.flows {
            let rc = p.cost[i * n + j] - self.u[i] - self.v[j];
            if rc != 0 {
                return Err(format!("flow on [{i}][{j}] with reduced cost {rc}"));
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

/// Scratch space of the dual phase: the subtree S cut off, and candidate entering arcs.
struct Cut {
    inside: Vec<bool>,
    members: Vec<usize>,
    /// Arcs of reduced cost 0 at the start (at most 8 (m + n)).
    zeros: Vec<usize>,
    cols: Vec<usize>,
    masked: Vec<(usize, i64)>,
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
    /// The tree is feasible but may not be strongly feasible (after a dual phase).
    repair_pending: bool,
    /// Primal and dual pivots made.
    pivots: u64,
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
            repair_pending: false,
            pivots: 0,
        };
        match basis {
            Some(b) if b.parent.len() == nodes && b.rows == m => {
                for u in 0..nodes {
                    net.parent[u] = b.parent[u] as usize;
                    net.pred[u] = b.pred[u] as usize;
                }
                net.install(p, false);
                if net.dual_phase(p) {
                    // Feasible and most likely optimal: made strongly feasible only if the
                    // primal method finds a pivot to make (see `run`).
                    net.repair_pending = true;
                    return net;
                }
            }
            _ => {
                for u in 0..nodes {
                    net.parent[u] = nodes;
                    net.pred[u] = cells + u;
                }
            }
        }
        net.install(p, true);
        net
    }

    /// Makes the tree in `parent`/`pred` a strongly feasible basis for `p` (every zero-flow arc
    /// points toward the root, so any node can send flow to the root along its path): each
    /// node's arc carries the net supply of its subtree; with `repair`, an arc that would carry
    /// it the wrong way, or carry nothing away from the root, is replaced by the node's
    /// artificial arc to the root, oriented to carry it. Without, every arc stays, artificial
    /// ones pointing up, and flows may be negative (the start of [`Network::dual_phase`]).
    /// Then child lists, depths and potentials follow from the tree.
    fn install(&mut self, p: &Problem, repair: bool) {
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
            if !repair {
                // Kept as it is; an artificial arc points up (as in an optimal basis, where
                // it carries nothing), so the potentials are the old optimal ones.
                self.dir[u] = if e >= cells || up { UP } else { DOWN };
                self.flow[u] = if e >= cells { net[u] } else { carry };
                let par = self.parent[u];
                if par != root {
                    net[par] += net[u];
                }
                continue;
            }
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
        let art_cost = self.art_cost();
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

    /// The dual simplex method on the tree of an earlier optimum: the costs are the same, so
    /// its potentials are still dual feasible (no negative reduced cost) while some tree arcs
    /// now carry negative flow, or an artificial arc carries some. Each step takes the most
    /// infeasible arc out: it cuts off the subtree S under it, whose net supply must cross the
    /// cut the other way; the entering arc is a cheapest arc across the cut in that direction
    /// ([`Network::cheapest_across`]), so the potentials of S shift by its reduced cost and
    /// every reduced cost stays >= 0. Returns whether the tree became feasible; gives up after
    /// m + n steps (dual degeneracy could cycle). The primal method then finishes and proves
    /// optimality either way.
    fn dual_phase(&mut self, p: &Problem) -> bool {
        let (m, n) = (self.m, self.n);
        let (cells, root) = (m * n, m + n);
        let mut cut = Cut {
            inside: vec![false; root + 1],
            members: Vec::new(),
            zeros: Vec::new(),
            cols: Vec::new(),
            masked: Vec::new(),
        };
        for i in 0..m {
            let row = &p.cost[i * n..(i + 1) * n];
            equal_to(
                row,
                &self.pi[m..root],
                -self.pi[i],
                i * n,
                8 * root,
                &mut cut.zeros,
            );
        }
        for _ in 0..m + n {
            // The most infeasible arc: negative flow, or any flow on an artificial arc.
            let (mut u_out, mut worst) = (NONE, 0);
            for u in 0..root {
                let f = self.flow[u];
                let bad = if self.pred[u] >= cells { f.abs() } else { -f };
                if bad > worst {
                    (u_out, worst) = (u, bad);
                }
            }
            if u_out == NONE {
                return true;
            }
            // Flow along the arc's direction, positive up, means S sends its net supply out.
            let out = (self.flow[u_out] > 0) == (self.dir[u_out] == UP);
            cut.members.clear();
            self.stack.clear();
            self.stack.push(u_out);
            while let Some(x) = self.stack.pop() {
                cut.inside[x] = true;
                cut.members.push(x);
                let mut c = self.first_child[x];
                while c != NONE {
                    self.stack.push(c);
                    c = self.next_sib[c];
                }
            }
            let entering = self.cheapest_across(p, out, &mut cut);
            for &x in &cut.members {
                cut.inside[x] = false;
            }
            let Some((e, rc)) = entering else {
                return false; // no arc can carry it: left to the primal method (and its error)
            };
            let join = self.join(e / n, m + e % n);
            // The row end is inside S exactly when the net supply goes out.
            self.exchange(e, rc, join, self.flow[u_out].abs(), u_out, out);
        }
        false
    }

    /// A cheapest arc from S (`cut.inside`) to the rest if `out`, else from the rest into S,
    /// with its reduced cost; the first in scan order. Reduced costs are >= 0 here, so an arc
    /// of reduced cost 0 is a cheapest one, and a degenerate optimum has many: they were
    /// listed at the start (tree arcs included: they never cross the cut the right way) and
    /// are tried first. Otherwise the cut is scanned, row by row, up to the first 0.
    fn cheapest_across(&mut self, p: &Problem, out: bool, cut: &mut Cut) -> Option<(usize, i64)> {
        let (m, n, root) = (self.m, self.n, self.m + self.n);
        let crosses = |i: usize, x: usize| cut.inside[i] == out && cut.inside[x] != out;
        if let Some(&e) = cut.zeros.iter().find(|&&e| {
            let (i, x) = (e / n, m + e % n);
            crosses(i, x) && p.cost[e] + self.pi[i] == self.pi[x]
        }) {
            return Some((e, 0));
        }
        let (mut best, mut best_rc) = (NONE, i64::MAX);
        cut.cols.clear();
        cut.cols.extend((m..root).filter(|&x| cut.inside[x] != out));
        let rows = (0..m).filter(|&i| cut.inside[i] == out);
        if cut.cols.len() * 16 < n {
            // Few columns: picked out of each row.
            'rows: for i in rows {
                let row = &p.cost[i * n..(i + 1) * n];
                for &x in &cut.cols {
                    let rc = row[x - m] + self.pi[i] - self.pi[x];
                    if rc < best_rc {
                        (best, best_rc) = (i * n + x - m, rc);
                        if rc == 0 {
                            break 'rows;
                        }
                    }
                }
            }
        } else {
            // Many: the other columns get a potential so low that their reduced costs are out
            // of reach, and whole rows go through the vectorised scan.
            cut.masked.clear();
            for x in (m..root).filter(|&x| cut.inside[x] == out) {
                cut.masked.push((x, self.pi[x]));
                self.pi[x] = MASKED;
            }
            for i in rows {
                let (min, k) = segment_min(&p.cost[i * n..(i + 1) * n], &self.pi[m..root]);
                if min < -MASKED / 2 && min + self.pi[i] < best_rc {
                    (best, best_rc) = (i * n + k, min + self.pi[i]);
                    if best_rc == 0 {
                        break;
                    }
                }
            }
            for &(x, q) in &cut.masked {
                self.pi[x] = q;
            }
        }
        (best != NONE).then_some((best, best_rc))
    }

    /// Longer than any path of real arcs: (nodes + 1) arcs of at most [`MAX_VALUE`], the
    /// bound every cost is validated against (a scan for the largest would read all m n
    /// costs once more). With at most [`MAX_NODES`](super::problem::MAX_NODES) nodes, potentials stay below 2^58.
    fn art_cost(&self) -> i64 {
        (MAX_VALUE + 1) * ((self.m + self.n) as i64 + 1)
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
    /// have reduced cost 0, so they need no test. The scan goes by row segments (one division
    /// per segment, not per arc), each reduced to its minimum by a vectorised scan.
    fn entering(&mut self, p: &Problem) -> Option<usize> {
        let (m, n) = (self.m, self.n);
        let cells = m * n;
        let (mut best, mut best_rc) = (NONE, 0i64);
        let mut e = self.next_arc;
        let mut left_in_block = self.block;
        let mut scanned = 0;
        while scanned < cells {
            let (i, j) = (e / n, e % n);
            let len = (n - j).min(left_in_block).min(cells - scanned);
            let (min, k) = segment_min(&p.cost[e..e + len], &self.pi[m + j..m + j + len]);
            if min + self.pi[i] < best_rc {
                best_rc = min + self.pi[i];
                best = e + k;
            }
            e += len;
            if e == cells {
                e = 0;
            }
            scanned += len;
            left_in_block -= len;
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
        self.exchange(e_in, rc, join, delta, u_out, side == 1);
    }

    /// Puts arc `e_in` (reduced cost `rc`) into the tree in place of the arc above `u_out`,
    /// which lies on the cycle `e_in` closes (through `join`), after sending `delta` round
    /// the cycle in the direction of `e_in` (row to column). `out_first`: `u_out` is on the
    /// row end's side, so the row end is the one inside the re-hung subtree.
    fn exchange(
        &mut self,
        e_in: usize,
        rc: i64,
        join: usize,
        delta: i64,
        u_out: usize,
        out_first: bool,
    ) {
        self.pivots += 1;
        let (first, second) = (e_in / self.n, self.m + e_in % self.n);
        if delta != 0 {
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
        let (v_in, w_in, new_dir, shift) = if out_first {
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
        while let Some(e) = self.entering(p) {
            if self.repair_pending {
                // Pivots need a strongly feasible tree (no cycling); potentials change with it.
                self.repair_pending = false;
                self.install(p, true);
                continue;
            }
            self.pivot(p, e);
        }
        let cells = self.m * self.n;
        let mut flows = Vec::with_capacity(self.m + self.n);
        for u in 0..self.m + self.n {
            let e = self.pred[u];
            if e < cells {
                if self.flow[u] > 0 {
                    flows.push((e / self.n, e % self.n, self.flow[u]));
                }
            } else if self.flow[u] != 0 {
                return Err(Error::param(
                    "instance",
                    "infeasible",
                    "a balanced instance (this one leaves flow on an artificial arc)",
                ));
            }
        }
        flows.sort_unstable();
        let cost = p.total_cost(&flows)?;
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
            allocation: Allocation { flows, cost },
            u,
            v,
            pivots: self.pivots,
            basis,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
