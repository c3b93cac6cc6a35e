//! A transportation instance: m supplies (server capacities), n demands (population demands)
//! and an m x n cost matrix, validated so that no later sum can overflow.
//!
//! Rules: TP-R2 (balancing) of docs/spec/transport.md.

use crate::Error;
use crate::rng::Rng;
use rand::RngExt;
use std::ops::RangeInclusive;

/// Largest supply, demand or |cost| accepted: sums and products of them stay far inside i64
/// (m x n x 2^31 x 2^31 would not, so the objective is also computed with checks).
pub const MAX_VALUE: i64 = 1 << 31;
/// Most supplies plus demands (dummy included): keeps the solver's potentials below 2^58.
pub const MAX_NODES: usize = 1 << 26;

crate::registry! {
    /// How an instance whose supplies and demands differ in total is made balanced.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Balance: "balance rule" {
        /// Scale the demands to the total supply (largest remainders, so they stay integers).
        Scale => "scale": "scale the demands to the total supply (largest remainders)",
        /// Add a dummy supply row or demand column of cost 0 that takes the difference.
        Dummy => "dummy": "add a dummy row or column of cost 0",
    }
}

/// A balanced, validated instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub supply: Vec<i64>,
    pub demand: Vec<i64>,
    /// Row-major, supply by demand.
    pub cost: Vec<i64>,
}

/// An allocation: its positive flows x_ij as (i, j, x_ij) in row-major order (at most m + n - 1
/// of the m n cells for a basic solution), and their total cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub flows: Vec<(usize, usize, i64)>,
    pub cost: i64,
}

impl Allocation {
    /// The flows as an m x n matrix (row-major, like the costs). With populations as rows and
    /// servers as columns these are the admission thresholds T_ij = x_ij.
    pub fn dense(&self, m: usize, n: usize) -> Vec<i64> {
        let mut x = vec![0; m * n];
        for &(i, j, f) in &self.flows {
            x[i * n + j] = f;
        }
        x
    }

    /// The cluster of each of the m rows: the columns it ships to (x_ij > 0), in order. With
    /// populations as rows, K_i = the servers that take population i's requests.
    pub fn clusters(&self, m: usize) -> Vec<Vec<usize>> {
        let mut k = vec![Vec::new(); m];
        for &(i, j, _) in &self.flows {
            k[i].push(j);
        }
        k
    }
}

impl Problem {
    /// Checks the instance: non-empty, rectangular, values in [0, 2^31] (costs in
    /// [-2^31, 2^31]), totals equal. An unbalanced instance is an error that says so (see
    /// [`Problem::balanced`]).
    pub fn new(supply: Vec<i64>, demand: Vec<i64>, cost: Vec<Vec<i64>>) -> Result<Self, Error> {
        let p = Self::checked(supply, demand, cost)?;
        let (s, d) = (p.supply.iter().sum::<i64>(), p.demand.iter().sum::<i64>());
        if s != d {
            return Err(Error::param(
                "demand",
                format!("total {d}"),
                format!(
                    "the total supply ({s}) for a balanced instance; balance it by scaling the \
                     demands or with a dummy row or column"
                ),
            ));
        }
        Ok(p)
    }

    /// As [`Problem::new`], balancing unequal totals as asked.
    pub fn balanced(
        supply: Vec<i64>,
        demand: Vec<i64>,
        cost: Vec<Vec<i64>>,
        how: Balance,
    ) -> Result<Self, Error> {
        let mut p = Self::checked(supply, demand, cost)?;
        let (s, d) = (p.supply.iter().sum::<i64>(), p.demand.iter().sum::<i64>());
        if s == d {
            return Ok(p);
        }
        let (m, n) = (p.supply.len(), p.demand.len());
        match how {
            Balance::Scale => {
                if d == 0 {
                    return Err(Error::param(
                        "demand",
                        "all 0",
                        "some positive demand to scale",
                    ));
                }
                p.demand = scale_to(&p.demand, s);
            }
            Balance::Dummy if s > d => {
                // A dummy demand column takes the spare supply.
                let mut cost = Vec::with_capacity(m * (n + 1));
                for i in 0..m {
                    cost.extend_from_slice(&p.cost[i * n..(i + 1) * n]);
                    cost.push(0);
                }
                p.cost = cost;
                p.demand.push(s - d);
            }
            Balance::Dummy => {
                // A dummy supply row covers the unmet demand.
                p.cost.extend(std::iter::repeat_n(0, n));
                p.supply.push(d - s);
            }
        }
        Ok(p)
    }

    fn checked(supply: Vec<i64>, demand: Vec<i64>, cost: Vec<Vec<i64>>) -> Result<Self, Error> {
        if supply.is_empty() || demand.is_empty() {
            return Err(Error::param(
                "instance",
                "empty",
                "at least one supply and one demand",
            ));
        }
        let (m, n) = (supply.len(), demand.len());
        if m + n >= MAX_NODES {
            return Err(Error::param(
                "instance",
                format!("{m} supplies and {n} demands"),
                format!("fewer than {MAX_NODES} supplies and demands in all"),
            ));
        }
        if cost.len() != m {
            return Err(Error::param(
                "cost",
                format!("{} rows", cost.len()),
                format!("one row per supply ({m})"),
            ));
        }
        if let Some((i, r)) = cost.iter().enumerate().find(|(_, r)| r.len() != n) {
            return Err(Error::param(
                "cost",
                format!("row {i} with {} entries", r.len()),
                format!("one entry per demand ({n}) in every row"),
            ));
        }
        for (what, v) in [("supply", &supply), ("demand", &demand)] {
            if let Some((i, x)) = v
                .iter()
                .enumerate()
                .find(|(_, x)| !(0..=MAX_VALUE).contains(*x))
            {
                return Err(Error::param(
                    what,
                    format!("{x} at index {i}"),
                    format!("a whole number from 0 to {MAX_VALUE}"),
                ));
            }
        }
        for (i, r) in cost.iter().enumerate() {
            if let Some((j, c)) = r.iter().enumerate().find(|(_, c)| c.abs() > MAX_VALUE) {
                return Err(Error::param(
                    "cost",
                    format!("{c} at [{i}][{j}]"),
                    format!("a whole number from -{MAX_VALUE} to {MAX_VALUE}"),
                ));
            }
        }
        let (s, d) = (supply.iter().sum::<i64>(), demand.iter().sum::<i64>());
        if s.max(d) > i64::MAX / MAX_VALUE / 4 {
            return Err(Error::param(
                "supply",
                format!("total {}", s.max(d)),
                "totals small enough that total cost fits 64 bits",
            ));
        }
        Ok(Problem {
            supply,
            demand,
            cost: cost.into_iter().flatten().collect(),
        })
    }

    /// A random balanced instance: supplies uniform in `quantity`, demands uniform in
    /// `quantity` (from 1 up) scaled to the total supply, costs uniform in `cost`, drawn in
    /// that order (costs row by row).
    pub fn random(
        rng: &mut Rng,
        m: usize,
        n: usize,
        cost: RangeInclusive<i64>,
        quantity: RangeInclusive<i64>,
    ) -> Result<Self, Error> {
        if cost.is_empty() {
            return Err(Error::param(
                "cost",
                format!("{cost:?}"),
                "a non-empty range",
            ));
        }
        let demand_range = (*quantity.start()).max(1)..=*quantity.end();
        if quantity.is_empty() || demand_range.is_empty() {
            return Err(Error::param(
                "quantity",
                format!("{quantity:?}"),
                "a non-empty range reaching 1 or more",
            ));
        }
        let supply: Vec<i64> = (0..m).map(|_| rng.random_range(quantity.clone())).collect();
        let demand: Vec<i64> = (0..n)
            .map(|_| rng.random_range(demand_range.clone()))
            .collect();
        let demand = scale_to(&demand, supply.iter().sum());
        let cost = (0..m)
            .map(|_| (0..n).map(|_| rng.random_range(cost.clone())).collect())
            .collect();
        Problem::new(supply, demand, cost)
    }

    /// Rows (supplies).
    pub fn rows(&self) -> usize {
        self.supply.len()
    }

    /// Columns (demands).
    pub fn cols(&self) -> usize {
        self.demand.len()
    }

    /// The cost of positive flows (i, j, x), checked: an error if it does not fit 64 bits.
    pub fn total_cost(&self, flows: &[(usize, usize, i64)]) -> Result<i64, Error> {
        let n = self.cols();
        let t: i128 = flows
            .iter()
            .map(|&(i, j, x)| i128::from(self.cost[i * n + j]) * i128::from(x))
            .sum();
        i64::try_from(t).map_err(|_| Error::param("cost", t, "a total cost that fits 64 bits"))
    }

    /// Checks that `flows` is a feasible allocation: cells inside the matrix, in row-major
    /// order without repeats, positive, row and column sums exact.
    pub fn check(&self, flows: &[(usize, usize, i64)]) -> Result<(), String> {
        let (m, n) = (self.rows(), self.cols());
        let (mut rows, mut cols) = (vec![0i64; m], vec![0i64; n]);
        let mut last = None;
        for &(i, j, x) in flows {
            if i >= m || j >= n {
                return Err(format!("flow at [{i}][{j}] outside {m} x {n}"));
            }
            if last.is_some_and(|l| l >= (i, j)) {
                return Err(format!("flow at [{i}][{j}] out of row-major order"));
            }
            if x <= 0 {
                return Err(format!("flow {x} at [{i}][{j}] is not positive"));
            }
            last = Some((i, j));
            rows[i] += x;
            cols[j] += x;
        }
        for (i, (&r, &s)) in rows.iter().zip(&self.supply).enumerate() {
            if r != s {
                return Err(format!("row {i} ships {r}, supply {s}"));
            }
        }
        for (j, (&c, &d)) in cols.iter().zip(&self.demand).enumerate() {
            if c != d {
                return Err(format!("column {j} gets {c}, demand {d}"));
            }
        }
        Ok(())
    }
}

/// Integers proportional to `v` summing to `total` (largest remainders; ties to the lower index).
pub fn scale_to(v: &[i64], total: i64) -> Vec<i64> {
    let sum: i128 = v.iter().map(|&x| i128::from(x)).sum();
    let exact: Vec<i128> = v
        .iter()
        .map(|&x| i128::from(x) * i128::from(total))
        .collect();
    let mut out: Vec<i64> = exact.iter().map(|&e| (e / sum) as i64).collect();
    let short = total - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(exact[i] % sum), i));
    for &i in order.iter().take(short as usize) {
        out[i] += 1;
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The spec's textbook instance (optimum 152535, north-west corner 165595).
    pub(crate) fn textbook() -> Problem {
        Problem::new(
            vec![75, 125, 100],
            vec![80, 65, 70, 85],
            vec![
                vec![464, 513, 654, 867],
                vec![352, 416, 690, 791],
                vec![995, 682, 388, 685],
            ],
        )
        .unwrap()
    }

    #[test]
    fn bad_instances_are_refused_with_the_reason() {
        let e = |r: Result<Problem, Error>| r.unwrap_err().to_string();
        assert!(e(Problem::new(vec![], vec![1], vec![])).contains("empty"));
        assert!(
            e(Problem::new(vec![1], vec![1], vec![vec![1, 2]]))
                .contains("one entry per demand (1)")
        );
        assert!(
            e(Problem::new(vec![1, 1], vec![2], vec![vec![1]])).contains("one row per supply (2)")
        );
        assert!(e(Problem::new(vec![-1], vec![1], vec![vec![1]])).contains("supply"));
        assert!(e(Problem::new(vec![1], vec![-1], vec![vec![1]])).contains("demand"));
        assert!(e(Problem::new(vec![1], vec![1], vec![vec![1 << 40]])).contains("cost"));
        assert!(e(Problem::new(vec![2], vec![1], vec![vec![1]])).contains("balance"));
    }

    /// Thresholds, clusters and cost of a feasible allocation of the textbook instance, by hand.
    #[test]
    fn thresholds_and_clusters() {
        let a = Allocation {
            flows: vec![
                (0, 1, 65),
                (0, 3, 10),
                (1, 0, 80),
                (1, 3, 45),
                (2, 2, 70),
                (2, 3, 30),
            ],
            cost: 0,
        };
        let t = a.dense(3, 4);
        assert_eq!(t, [0, 65, 0, 10, 80, 0, 0, 45, 0, 0, 70, 30]);
        assert_eq!(a.clusters(3), [vec![1, 3], vec![0, 3], vec![2, 3]]);
        assert_eq!(textbook().check(&a.flows), Ok(()));
        // 513 * 65 + 867 * 10 + 352 * 80 + 791 * 45 + 388 * 70 + 685 * 30
        assert_eq!(textbook().total_cost(&a.flows), Ok(153_480));
    }

    #[test]
    fn balancing() {
        let p = Problem::balanced(
            vec![10, 5],
            vec![3, 3],
            vec![vec![1, 2], vec![3, 4]],
            Balance::Scale,
        )
        .unwrap();
        assert_eq!(p.demand, vec![8, 7]);
        let p = Problem::balanced(
            vec![10, 5],
            vec![3, 3],
            vec![vec![1, 2], vec![3, 4]],
            Balance::Dummy,
        )
        .unwrap();
        assert_eq!((p.demand.clone(), p.cols()), (vec![3, 3, 9], 3));
        assert_eq!(p.cost, vec![1, 2, 0, 3, 4, 0]);
        let p = Problem::balanced(vec![1], vec![3, 3], vec![vec![1, 2]], Balance::Dummy).unwrap();
        assert_eq!(
            (p.supply.clone(), p.cost.clone()),
            (vec![1, 5], vec![1, 2, 0, 0])
        );
        assert_eq!(scale_to(&[1, 1, 1], 10), vec![4, 3, 3]);
    }
}
