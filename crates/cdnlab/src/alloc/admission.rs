//! Admission over an allocation (spec `transport.md` in the project's docs: thresholds T_ij =
//! x_ij, CP-1 and CP-2, partial sharing of slack, re-allocation on blocking), written once for
//! the simulator (`sim::transport::stream`), the live steering server and the live edges.
//!
//! - [`Method`] and [`allocate`]: thresholds from the optimal Transportation Problem (warm from
//!   a previous basis when given) or from a feasible non-optimal allocation (NW corner, Vogel).
//! - [`Admission`]: the per-(population, server) stream counts under those thresholds, with
//!   CP-1 (one server per stream, picked among the cluster's servers under their threshold by a
//!   [`Choice`], then slack sharing above a reserve) and CP-2 (a stream striped over the
//!   cluster).
//! - [`reallocation`]: the re-allocation rule, a pure function from a window's counts to "re-solve
//!   with this demand" or nothing; [`demand_rows`]: how a demand estimate becomes the problem's
//!   rows; [`guarded_rows`] and [`guarantee`]: the same, keeping each population the planned
//!   share it uses.
//!
//! Rules: TP-R2 (`allocate`), TP-R3, TP-R4, TP-R5 and TP-R6 of docs/spec/transport.md.

use super::problem::scale_to;
use super::simplex::{self, Basis};
use super::{Allocation, Problem, initial};
use crate::Error;
use std::cmp::Reverse;

crate::registry! {
    /// How thresholds are computed from the demand.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Method: "allocation method" {
        /// The optimal Transportation Problem solution (S0).
        Optimal => "optimal": "the optimum (network simplex)",
        /// The north-west corner rule (S3, feasible, not optimal).
        Northwest => "northwest": "the north-west corner rule (feasible, ignores costs)",
        /// Vogel's approximation (S3).
        Vogel => "vogel": "Vogel's approximation method (feasible, usually near the optimum)",
    }
}

/// An allocation computed by [`allocate`].
#[derive(Debug, Clone)]
pub struct Allocated {
    pub allocation: Allocation,
    /// The optimum's basis (for a warm re-allocation); None for a non-optimal method.
    pub basis: Option<Basis>,
    /// The network simplex's pivots; None for a non-optimal method.
    pub pivots: Option<u64>,
    /// The optimum's dual values of the rows and columns (u, v); None for a non-optimal method.
    pub duals: Option<(Vec<i64>, Vec<i64>)>,
}

/// The allocation of `p` by `method`; for [`Method::Optimal`] also its basis and pivots, solved
/// warm from `basis` when given (a re-allocation).
pub fn allocate(method: Method, p: &Problem, basis: Option<&Basis>) -> Result<Allocated, Error> {
    let initial = |allocation| Allocated {
        allocation,
        basis: None,
        pivots: None,
        duals: None,
    };
    Ok(match method {
        Method::Optimal => {
            let s = match basis {
                Some(b) => simplex::solve_warm(p, b)?,
                None => simplex::solve(p)?,
            };
            Allocated {
                allocation: s.allocation,
                basis: Some(s.basis),
                pivots: Some(s.pivots),
                duals: Some((s.u, s.v)),
            }
        }
        Method::Northwest => initial(initial::northwest(p)?),
        Method::Vogel => initial(initial::vogel(p)?),
    })
}

/// The optimal allocation of `p` and its basis, warm from `basis` when given (a re-allocation).
pub fn optimal(p: &Problem, basis: Option<&Basis>) -> Result<(Allocation, Basis), Error> {
    let s = match basis {
        Some(b) => simplex::solve_warm(p, b)?,
        None => simplex::solve(p)?,
    };
    Ok((s.allocation, s.basis))
}

/// The thresholds a steering server installs (TP-R2, TP-R8): the demand estimate scaled to
/// the total `capacity` with every population at least its floor of `min_share` and its
/// `guaranteed` streams ([`guarded_rows`]), solved optimally over `costs` (populations by
/// servers), warm from `basis` when given. Returns T (row-major, populations by servers), the
/// basis and the rows. The live steering server and the steering simulator both call it.
pub fn thresholds(
    capacity: &[i64],
    demand: &[i64],
    costs: Vec<Vec<i64>>,
    min_share: f64,
    guaranteed: &[i64],
    basis: Option<&Basis>,
) -> Result<(Vec<i64>, Basis, Vec<i64>), Error> {
    let rows = guarded_rows(demand, capacity.iter().sum(), min_share, guaranteed);
    let p = Problem::new(rows.clone(), capacity.to_vec(), costs)?;
    let (a, b) = optimal(&p, basis)?;
    Ok((a.dense(p.rows(), p.cols()), b, rows))
}

/// The problem's rows for a demand estimate: each population's demand (at least 1) scaled to
/// the total capacity, then raised to a floor so that no population is left without a share
/// however large the others' demand (a flood from one population would otherwise round the
/// others' rows to 0). The floor is `min_share` of an equal split of the capacity, and at
/// least 1 stream (while the capacity allows one per population); the streams come from the
/// populations furthest above it.
pub fn demand_rows(demand: &[i64], total_capacity: i64, min_share: f64) -> Vec<i64> {
    guarded_rows(demand, total_capacity, min_share, &vec![0; demand.len()])
}

/// [`demand_rows`] with a guarantee: population i's row is also raised to `guaranteed[i]`, so
/// that a re-allocation driven by another population's demand cannot take from it what it is
/// guaranteed (see [`guarantee`]). The streams come from the rows furthest above their own
/// floor; rows are raised in order, and if the floors add up to more than the capacity the
/// later ones stop short (rows always sum to the capacity).
pub fn guarded_rows(
    demand: &[i64],
    total_capacity: i64,
    min_share: f64,
    guaranteed: &[i64],
) -> Vec<i64> {
    let want: Vec<i64> = demand.iter().map(|&d| d.max(1)).collect();
    let mut rows = scale_to(&want, total_capacity);
    let n = rows.len() as i64;
    if n == 0 {
        return rows;
    }
    let equal = total_capacity / n;
    let least = ((min_share.clamp(0.0, 1.0) * equal as f64) as i64)
        .max(1)
        .min(equal);
    let floors: Vec<i64> = (0..rows.len())
        .map(|i| least.max(guaranteed.get(i).copied().unwrap_or(0)))
        .collect();
    for i in 0..rows.len() {
        while rows[i] < floors[i] {
            // The row furthest above its own floor gives (the first on ties).
            let (j, excess) = rows
                .iter()
                .zip(&floors)
                .map(|(&r, &f)| r - f)
                .enumerate()
                .max_by_key(|&(j, e)| (e, Reverse(j)))
                .expect("rows are not empty");
            let give = (floors[i] - rows[i]).min(excess);
            if give <= 0 {
                break;
            }
            rows[j] -= give;
            rows[i] += give;
        }
    }
    rows
}

/// Each population's guaranteed streams after a re-allocation: its row under the declared
/// demands (`declared`, what the operator planned for it), but no more than it uses (`in_use`:
/// streams it held plus streams refused in the window). A population keeps what it was
/// planned to have while it uses it, whatever another population's flood makes the demand
/// estimate say; what it does not use can go to a population whose demand really grew.
pub fn guarantee(declared: &[i64], in_use: &[i64]) -> Vec<i64> {
    declared
        .iter()
        .zip(in_use)
        .map(|(&d, &u)| d.min(u).max(0))
        .collect()
}

/// The re-allocation rule: when some population's blocking in the window (`blocked` of
/// `arrivals`) exceeds `b_max`, re-solve with the demand estimated from the window's arrival
/// counts (each plus one, saturating: counts reported by servers may be anything), returned;
/// otherwise None.
pub fn reallocation(arrivals: &[u64], blocked: &[u64], b_max: f64) -> Option<Vec<i64>> {
    let over = arrivals
        .iter()
        .zip(blocked)
        .any(|(&a, &b)| a > 0 && b as f64 / a as f64 > b_max);
    over.then(|| {
        arrivals
            .iter()
            .map(|&a| i64::try_from(a).unwrap_or(i64::MAX).saturating_add(1))
            .collect()
    })
}

/// Whether a population's share at a server admits one more of its streams: fewer than
/// `threshold` of them there. (The server must also have a free slot.)
#[inline]
pub fn under_threshold<T: PartialOrd>(streams: T, threshold: T) -> bool {
    streams < threshold
}

crate::registry! {
    /// CP-1's pick within a cluster, among the servers under their threshold with room.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Choice: "CP-1 choice" {
        /// The most free threshold slots, T_ij - n_ij (the spec's "largest residual share" read
        /// as slots; it prefers the big share, usually the nearby server).
        Residual => "residual",
        /// The largest free fraction (T_ij - n_ij) / T_ij (equalises utilisation).
        Fraction => "fraction",
        /// The nearest (a control that ignores balance).
        Nearest => "nearest",
    }
}

/// How a CP-1 stream was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Under its threshold at this server.
    Threshold(usize),
    /// Above its threshold, on a free slot above the server's reserve (slack sharing).
    Borrowed(usize),
}

impl Admit {
    /// The server.
    pub fn server(self) -> usize {
        match self {
            Admit::Threshold(j) | Admit::Borrowed(j) => j,
        }
    }
}

/// Streams under an allocation's thresholds: populations by servers.
#[derive(Debug, Clone)]
pub struct Admission {
    servers: usize,
    /// T_ij, population-major, and each population's cluster (servers with T_ij > 0).
    t: Vec<i64>,
    clusters: Vec<Vec<usize>>,
    capacity: Vec<i64>,
    /// Free slots a server keeps for threshold admissions (slack sharing; capacity: none).
    reserve: Vec<f64>,
    choice: Choice,
    /// n_ij (CP-1), streams per server, striped streams per population (CP-2).
    n: Vec<i64>,
    load: Vec<i64>,
    striped: Vec<i64>,
}

impl Admission {
    /// Admission under `allocation` of `populations` rows over servers with `capacity`:
    /// `reserve` is the share of a server's capacity kept free for threshold admissions (1:
    /// complete partitioning, no slack sharing).
    pub fn new(
        allocation: &Allocation,
        populations: usize,
        capacity: &[i64],
        reserve: f64,
        choice: Choice,
    ) -> Self {
        let (m, n) = (populations, capacity.len());
        Admission {
            servers: n,
            t: allocation.dense(m, n),
            clusters: allocation.clusters(m),
            capacity: capacity.to_vec(),
            reserve: capacity.iter().map(|&c| reserve * c as f64).collect(),
            choice,
            n: vec![0; m * n],
            load: vec![0; n],
            striped: vec![0; m],
        }
    }

    /// New thresholds (a re-allocation); streams in progress keep their slots.
    pub fn install(&mut self, allocation: &Allocation) {
        let m = self.striped.len();
        self.t = allocation.dense(m, self.servers);
        self.clusters = allocation.clusters(m);
    }

    /// The thresholds, population-major.
    pub fn thresholds(&self) -> &[i64] {
        &self.t
    }

    /// Population `i`'s cluster.
    pub fn cluster(&self, i: usize) -> &[usize] {
        &self.clusters[i]
    }

    /// CP-1: a stream of population `i` (`hops`: its distance to each server, for
    /// [`Choice::Nearest`]) goes to the cluster server picked by the choice among those under
    /// their threshold with room; failing that, with slack sharing, to the cluster server with
    /// the most free slots above its reserve; else it is blocked (None).
    pub fn admit(&mut self, i: usize, hops: &[i64]) -> Option<Admit> {
        self.admit_if(i, hops, |_| true)
    }

    /// CP-1 as [`Admission::admit`], among the servers that `room` allows: the simulator's
    /// link capacities, where a server whose path to the population has a full link cannot
    /// take the stream.
    pub fn admit_if(
        &mut self,
        i: usize,
        hops: &[i64],
        room: impl Fn(usize) -> bool,
    ) -> Option<Admit> {
        let k = self.servers;
        let (t, cluster) = (&self.t[i * k..(i + 1) * k], &self.clusters[i]);
        let (n, load, capacity) = (&self.n[i * k..(i + 1) * k], &self.load, &self.capacity);
        let open = cluster
            .iter()
            .copied()
            .filter(|&j| under_threshold(n[j], t[j]) && load[j] < capacity[j] && room(j));
        let pick = match self.choice {
            Choice::Residual => open.max_by_key(|&j| (t[j] - n[j], Reverse(j))),
            // (T_a - n_a) / T_a against (T_b - n_b) / T_b, exactly in integers.
            Choice::Fraction => open.max_by(|&a, &b| {
                ((t[a] - n[a]) * t[b])
                    .cmp(&((t[b] - n[b]) * t[a]))
                    .then(b.cmp(&a))
            }),
            Choice::Nearest => open.min_by_key(|&j| (hops[j], j)),
        };
        let admit = match pick {
            Some(j) => Admit::Threshold(j),
            None => Admit::Borrowed(
                cluster
                    .iter()
                    .copied()
                    .filter(|&j| (capacity[j] - load[j]) as f64 > self.reserve[j] && room(j))
                    .max_by_key(|&j| (capacity[j] - load[j], Reverse(j)))?,
            ),
        };
        let j = admit.server();
        self.n[i * k + j] += 1;
        self.load[j] += 1;
        Some(admit)
    }

    /// A CP-1 stream of population `i` at server `j` ended.
    pub fn release(&mut self, i: usize, j: usize) {
        self.n[i * self.servers + j] -= 1;
        self.load[j] -= 1;
    }

    /// CP-2: a striped stream of population `i` takes x_ij / D_i of a slot at each server of
    /// the cluster, so it is admitted iff fewer than sum_j T_ij = D_i streams are on.
    pub fn admit_striped(&mut self, i: usize) -> bool {
        let k = self.servers;
        let ok = self.striped[i] < self.t[i * k..(i + 1) * k].iter().sum::<i64>();
        if ok {
            self.striped[i] += 1;
        }
        ok
    }

    /// A striped stream of population `i` ended.
    pub fn release_striped(&mut self, i: usize) {
        self.striped[i] -= 1;
    }

    /// The spread (largest minus smallest) of population `i`'s threshold occupancies n_ij /
    /// T_ij across its cluster, when the cluster has two servers or more.
    pub fn spread(&self, i: usize) -> Option<f64> {
        let k = self.servers;
        let cluster = &self.clusters[i];
        (cluster.len() > 1).then(|| {
            let (lo, hi) = cluster.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &j| {
                let u = self.n[i * k + j] as f64 / self.t[i * k + j] as f64;
                (lo.min(u), hi.max(u))
            });
            hi - lo
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two populations, two servers of 3 slots: population 0 holds 2 at server 0 and 1 at
    /// server 1, population 1 the rest. CP-1 fills by the choice, blocks at the thresholds,
    /// borrows above the reserve when sharing; CP-2 admits up to D_i; re-allocation triggers
    /// above b_max only.
    #[test]
    fn thresholds_picks_slack_and_reallocation() {
        let p = Problem::new(vec![3, 3], vec![3, 3], vec![vec![0, 1], vec![1, 0]]).unwrap();
        let a = allocate(Method::Optimal, &p, None).unwrap().allocation;
        let mut adm = Admission::new(&a, 2, &[3, 3], 1.0, Choice::Residual);
        assert_eq!(adm.thresholds(), &[3, 0, 0, 3]);
        let hops = [0, 1];
        for _ in 0..3 {
            assert_eq!(adm.admit(0, &hops), Some(Admit::Threshold(0)));
        }
        assert_eq!(adm.admit(0, &hops), None); // complete partitioning
        adm.release(0, 0);
        assert_eq!(adm.admit(0, &hops), Some(Admit::Threshold(0)));
        // Slack sharing with no reserve: population 0 borrows server 1's free slots only if
        // server 1 is in its cluster; with this allocation it is not.
        let mut share = Admission::new(&a, 2, &[3, 3], 0.0, Choice::Residual);
        for _ in 0..3 {
            share.admit(0, &hops);
        }
        assert_eq!(share.admit(0, &hops), None);
        // A split allocation: population 0 gets 2 + 1.
        let p = Problem::new(vec![3, 3], vec![2, 4], vec![vec![0, 1], vec![1, 0]]).unwrap();
        let a = allocate(Method::Optimal, &p, None).unwrap().allocation;
        assert_eq!(a.dense(2, 2), vec![2, 1, 0, 3]);
        let mut frac = Admission::new(&a, 2, &[2, 4], 1.0, Choice::Fraction);
        let mut resid = Admission::new(&a, 2, &[2, 4], 1.0, Choice::Residual);
        // Residual: server 0 (2 free) first, then a tie at 1 free goes to the lower index.
        let r: Vec<usize> = (0..3)
            .map(|_| resid.admit(0, &hops).unwrap().server())
            .collect();
        assert_eq!(r, [0, 0, 1]);
        // Fraction: 1 of 1 at server 1 equals 2 of 2 at server 0 (tie: lower index), then
        // 1/2 at server 0 against 1/1 at server 1.
        let f: Vec<usize> = (0..3)
            .map(|_| frac.admit(0, &hops).unwrap().server())
            .collect();
        assert_eq!(f, [0, 1, 0]);
        assert_eq!(frac.spread(0), Some(0.0));
        let mut borrow = Admission::new(&a, 2, &[2, 4], 0.0, Choice::Residual);
        for _ in 0..3 {
            borrow.admit(0, &hops);
        }
        // Over its thresholds, population 0 borrows server 1's free slot (3 of 4 free).
        assert_eq!(borrow.admit(0, &hops), Some(Admit::Borrowed(1)));
        let mut striped = Admission::new(&a, 2, &[2, 4], 1.0, Choice::Residual);
        assert!((0..3).all(|_| striped.admit_striped(0)));
        assert!(!striped.admit_striped(0));
        assert_eq!(reallocation(&[100, 100], &[5, 4], 0.05), None);
        assert_eq!(reallocation(&[100, 0], &[6, 0], 0.05), Some(vec![101, 1]));
        assert_eq!(demand_rows(&[0, 3], 8, 0.0), scale_to(&[1, 3], 8));
        assert_eq!(
            reallocation(&[u64::MAX, 5], &[u64::MAX, 0], 0.05),
            Some(vec![i64::MAX, 6])
        );
    }

    /// A flood from one population leaves every other one a share: at least 1 stream, or
    /// `min_share` of an equal split; rows still sum to the capacity.
    #[test]
    fn a_flood_leaves_every_population_a_share() {
        // Proportional rounding alone gives [40, 0, 0].
        assert_eq!(scale_to(&[1_000_000, 10, 1], 40), vec![40, 0, 0]);
        assert_eq!(demand_rows(&[1_000_000, 10, 1], 40, 0.0), vec![38, 1, 1]);
        // Half an equal split (13 / 2 = 6).
        assert_eq!(demand_rows(&[1_000_000, 10, 1], 40, 0.5), vec![28, 6, 6]);
        assert_eq!(demand_rows(&[i64::MAX, 1], 10, 0.0), vec![9, 1]);
        // Rows above the floor are left alone.
        assert_eq!(demand_rows(&[30, 10], 40, 0.5), vec![30, 10]);
        // Less capacity than populations: what there is, one each.
        assert_eq!(demand_rows(&[100, 1, 1], 2, 0.5).iter().sum::<i64>(), 2);
        for (d, c, m) in [
            (vec![5_i64, 0, 9, 1_000], 17_i64, 0.3),
            (vec![1, 1], 3, 1.0),
            (vec![7; 9], 100, 0.9),
        ] {
            let r = demand_rows(&d, c, m);
            assert_eq!(r.iter().sum::<i64>(), c, "{d:?} {c} {m}");
            assert!(r.iter().all(|&x| x >= 1), "{r:?}");
        }
    }

    /// A flood from one population cannot take what another is guaranteed: its planned row
    /// while it uses it. Unused, the share goes where the demand went.
    #[test]
    fn a_flood_cannot_take_a_used_planned_share() {
        // Planned [30, 10] of 40; pb floods (its estimate is 100 times pa's).
        let planned = demand_rows(&[30, 10], 40, 0.1);
        assert_eq!(planned, vec![30, 10]);
        let flood = [100, 10_000];
        // Without a guarantee pa is left the floor: 0.1 of an equal split of 40.
        assert_eq!(demand_rows(&flood, 40, 0.1), vec![2, 38]);
        // pa uses 24 streams: it keeps them; pb takes the rest.
        let g = guarantee(&planned, &[24, 500]);
        assert_eq!(g, vec![24, 10]);
        assert_eq!(guarded_rows(&flood, 40, 0.1, &g), vec![24, 16]);
        // pa uses more than planned: it is guaranteed its plan, no more.
        let g = guarantee(&planned, &[35, 500]);
        assert_eq!(guarded_rows(&flood, 40, 0.1, &g), vec![30, 10]);
        // pa uses nothing: the floor only.
        let g = guarantee(&planned, &[0, 500]);
        assert_eq!(guarded_rows(&flood, 40, 0.1, &g), vec![2, 38]);
        // Floors above the capacity: rows still sum to it, each at least its least share.
        let r = guarded_rows(&[1, 1, 1], 10, 0.5, &[9, 9, 9]);
        assert_eq!(r.iter().sum::<i64>(), 10, "{r:?}");
        assert!(r.iter().all(|&x| x >= 1), "{r:?}");
        // No guarantee is demand_rows.
        for (d, c, m) in [
            (vec![5_i64, 0, 9, 1_000], 17_i64, 0.3),
            (vec![7; 9], 100, 0.9),
        ] {
            assert_eq!(
                guarded_rows(&d, c, m, &vec![0; d.len()]),
                demand_rows(&d, c, m)
            );
        }
    }
}
