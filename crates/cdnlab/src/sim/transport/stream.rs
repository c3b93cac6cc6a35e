//! `stream`: user populations in metro areas stream videos from servers; an allocation decides
//! which servers take whose requests (spec `docs/spec/transport.md`; `docs/transport.md`).
//!
//! The reference topology (invented for reproducibility, as the spec says): 8 metros, 12 links,
//! cost = hop count. One server per metro with a capacity of concurrent streams; one population
//! per metro with Poisson arrivals at rate rho D_i / h and holding times of mean h (exponential
//! or deterministic). Events (arrivals, departures) run in time order from a 4-ary heap keyed
//! by (time, sequence), so ties resolve the same way in every run.

use crate::Error;
use crate::Named;
use crate::alloc::Problem;
pub use crate::alloc::admission::Choice;
use crate::alloc::admission::{Admission, Admit, Method, allocate, demand_rows, reallocation};
use crate::alloc::erlang::erlang_b;
use crate::alloc::topology::{CAPACITY, LINKS, R1, R15, SHIFTED, hops, random_instance};
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
// A 4-ary heap pops this loop's events a little faster than std's binary heap; `PeekMut` lets an
// arrival's successor replace it in place (docs/transport.md).
use dary_heap::{PeekMut, QuaternaryHeap as BinaryHeap};
use std::cmp::Reverse;

crate::registry! {
    /// How requests are placed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum AllocationPolicy: "allocation policy" {
        /// S0: thresholds from the optimal Transportation Problem solution.
        Optimal => "optimal",
        /// S1: the nearest server only, no thresholds, no overflow.
        Nearest => "nearest",
        /// S3: thresholds from a feasible non-optimal allocation (north-west corner).
        Northwest => "northwest",
        /// S3: thresholds from Vogel's approximation.
        Vogel => "vogel",
        /// S4: any server with room, nearest first (full sharing).
        Sharing => "sharing",
    }
}

/// The experiment.
pub struct StreamExperiment;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "policy",
        AllocationPolicy::NAMES,
        "allocation: S0 optimal TP, S1 nearest, S3 NW-corner or Vogel, S4 full sharing",
    ),
    ParamSpec::choice(
        "protocol",
        &["cp1", "cp2"],
        "within a cluster: CP-1 single source (largest residual share first), CP-2 striped",
    ),
    ParamSpec::choice(
        "choice",
        Choice::NAMES,
        "CP-1's pick within a cluster among the servers under their threshold: the most free threshold slots T_ij - n_ij (default), the largest free fraction (T_ij - n_ij) / T_ij (balances utilisation), or the nearest (a control)",
    ),
    ParamSpec::float(
        "reserve",
        0.0,
        1.0,
        1.0,
        "partial sharing of slack (CP-1 with thresholds): a request refused by every threshold of its cluster takes a free slot at a cluster server while more than reserve x capacity slots are free there; 1: complete partitioning, 0: any free slot",
    )
    .unit("fraction of the threshold"),
    ParamSpec::choice(
        "topology",
        &["reference", "random"],
        "the spec's 8-metro instance, or a random one per replication (ring plus chords)",
    ),
    ParamSpec::int("metros", 2, 1000, 50, "metros of a random topology"),
    ParamSpec::choice(
        "profile",
        &["r1", "r15"],
        "demand profile of the reference instance",
    ),
    ParamSpec::positive("rho", 10.0, 1.0, "offered load: sum A_i / sum C_j")
    .unit("offered load per capacity"),
    ParamSpec::choice(
        "holding",
        &["exponential", "deterministic"],
        "holding-time distribution (mean 90 minutes)",
    ),
    ParamSpec::positive("hours", 1e7, 1000.0, "simulated hours after the warm-up")
    .unit("hours"),
    ParamSpec::float("warmup", 0.0, 1e7, 20.0, "hours simulated before measuring"),
    ParamSpec::float(
        "shift_at",
        0.0,
        1e7,
        0.0,
        "hour at which demand shifts to the spec's shift profile (0: never; with profile r1)",
    ),
    ParamSpec::flag(
        "reallocate",
        false,
        "re-solve the allocation when a window's blocking exceeds b_max (optimal policy)",
    ),
    ParamSpec::positive("window", 1e6, 10.0, "blocking monitor window, hours"),
    ParamSpec::float(
        "b_max",
        0.0,
        1.0,
        0.05,
        "blocking that triggers a re-allocation",
    ),
    ParamSpec::choice(
        "estimate",
        &["arrivals", "true"],
        "the demand a re-allocation solves for: the window's arrival counts (TP-R6), or the true \
         new demand (an oracle no live system has; a wrong model for tp.reallocation-excess)",
    ),
    ParamSpec::float(
        "tail",
        0.0,
        1e7,
        50.0,
        "final hours over which blocking_tail is measured",
    ),
];

const METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "blocking",
        "fraction",
        "blocked arrivals per arrival, after the warm-up",
    ),
    MetricSpec::new(
        "erlang",
        "fraction",
        "Erlang-B for a complete partitioning with D_i circuits per population, weighted by arrival rates",
    ),
    MetricSpec::new(
        "max_z",
        "standard errors",
        "largest |measured - Erlang-B| over populations, from 20 batch means",
    ),
    MetricSpec::new(
        "hops",
        "hops",
        "mean hops from a population to the servers of its admitted streams",
    ),
    MetricSpec::new("events", "events", "events simulated"),
    MetricSpec::new(
        "blocking_tail",
        "fraction",
        "blocking over the final tail hours",
    ),
    MetricSpec::new(
        "erlang_end",
        "fraction",
        "Erlang-B for the demand in force at the end",
    ),
    MetricSpec::new("reallocations", "re-allocations", "re-allocations made"),
    MetricSpec::new(
        "borrowed",
        "fraction",
        "admitted streams that took a slot above their threshold (slack sharing)",
    ),
    MetricSpec::new(
        "b_sea",
        "fraction",
        "blocking of the SEA population (reference metros only)",
    ),
    MetricSpec::new(
        "b_sfo",
        "fraction",
        "blocking of SFO (reference metros only)",
    ),
    MetricSpec::new(
        "b_lax",
        "fraction",
        "blocking of LAX (reference metros only)",
    ),
    MetricSpec::new(
        "b_den",
        "fraction",
        "blocking of DEN (reference metros only)",
    ),
    MetricSpec::new(
        "b_chi",
        "fraction",
        "blocking of CHI (reference metros only)",
    ),
    MetricSpec::new(
        "b_dal",
        "fraction",
        "blocking of DAL (reference metros only)",
    ),
    MetricSpec::new(
        "b_atl",
        "fraction",
        "blocking of ATL (reference metros only)",
    ),
    MetricSpec::new(
        "b_nyc",
        "fraction",
        "blocking of NYC (reference metros only)",
    ),
    MetricSpec::new(
        "cluster_spread",
        "fraction",
        "CP-1: mean spread of a cluster's threshold occupancies seen on arrival",
    ),
    MetricSpec::new(
        "alloc_hops",
        "hops",
        "the initial allocation's hops per stream, sum d T / sum T",
    ),
    MetricSpec::new(
        "alloc_dmax",
        "hops",
        "largest hop distance with a positive threshold",
    ),
];

/// Holding time of a stream, hours.
const HOLD: f64 = 1.5;
/// Batches of the measured period for the standard errors of blocking.
const BATCHES: usize = 20;

/// Checks that involve several parameters.
fn check(p: &Params) -> Result<(), Error> {
    // rho, hours and window above 0: their declarations (ParamSpec::positive).
    if p.float("reserve") < 1.0
        && (p.text("protocol") != "cp1" || ["nearest", "sharing"].contains(&p.text("policy")))
    {
        return Err(p.refuse("reserve", "1 unless the protocol is cp1 and the policy has thresholds (optimal, northwest, vogel)"));
    }
    if p.text("choice") != "residual"
        && (p.text("protocol") != "cp1" || ["nearest", "sharing"].contains(&p.text("policy")))
    {
        return Err(p.refuse("choice", "residual unless the protocol is cp1 and the policy has thresholds (optimal, northwest, vogel)"));
    }
    if p.float("shift_at") > 0.0 && (p.text("profile") != "r1" || p.text("topology") != "reference")
    {
        return Err(p.refuse(
            "profile",
            "r1 on the reference topology when shift_at > 0 (the spec's shift starts from R1)",
        ));
    }
    Ok(())
}

/// One replication.
fn run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    check(p)?;
    let policy: AllocationPolicy = p.named("policy")?;
    let (hops, capacity, demand) = if p.text("topology") == "reference" {
        let demand = if p.text("profile") == "r1" { R1 } else { R15 };
        (hops(8, &LINKS), CAPACITY.to_vec(), demand.to_vec())
    } else {
        // A different random graph in every replication.
        random_instance(p.int("metros") as usize, rng)
    };
    let reference = p.text("topology") == "reference";
    let shift_at = p.float("shift_at");
    let cfg = Config {
        hops,
        capacity,
        policy,
        striped: p.text("protocol") == "cp2",
        demand,
        rho: p.float("rho"),
        deterministic: p.text("holding") == "deterministic",
        warmup: p.float("warmup"),
        hours: p.float("hours"),
        shift: (shift_at > 0.0).then(|| {
            Shift::once(
                shift_at,
                SHIFTED.to_vec(),
                (p.values()["reallocate"] == crate::sim::Value::Bool(true))
                    .then(|| (p.float("window"), p.float("b_max"))),
                p.text("estimate") == "true",
            )
        }),
        tail: p.float("tail"),
        reserve: p.float("reserve"),
        choice: p.named("choice")?,
        links: None,
    };
    let r = simulate(&cfg, rng)?;
    let mut out = vec![
        r.blocking,
        r.erlang,
        r.max_z,
        r.hops,
        r.events as f64,
        r.blocking_tail,
        r.erlang_end,
        r.reallocations as f64,
        r.borrowed,
    ];
    // Per-population blocking is reported for the reference metros only.
    if reference {
        out.extend(r.per_population);
    } else {
        out.extend([f64::NAN; 8]);
    }
    out.extend([r.cluster_spread, r.alloc_hops, r.alloc_dmax]);
    Ok(out)
}

crate::sim::experiment! {
    StreamExperiment = "stream",
    "streaming server allocation on the reference metro topology: blocking per population against Erlang-B",
    PARAMS, METRICS; check, run
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Blocked arrivals per arrival, after the warm-up.
    pub blocking: f64,
    /// Erlang-B's prediction for a complete partitioning with D_i circuits per population,
    /// weighted by arrival rates.
    pub erlang: f64,
    /// Largest |measured - Erlang-B| over populations, in standard errors from 20 batch means.
    pub max_z: f64,
    /// Mean hops from a population to the server(s) of its admitted streams.
    pub hops: f64,
    pub events: u64,
    pub per_population: Vec<f64>,
    /// Blocking over the final `tail` hours, Erlang-B for the demand in force at the end (a
    /// complete partitioning matched to it), and how many re-allocations were made.
    pub blocking_tail: f64,
    pub erlang_end: f64,
    pub reallocations: u64,
    /// Admitted streams (measured) that took a slot above their threshold (slack sharing).
    pub borrowed: f64,
    /// CP-1's balance within a cluster: over measured arrivals of populations whose cluster
    /// has two or more servers, the mean spread (largest minus smallest) of the cluster's
    /// threshold occupancies n_ij / T_ij, seen on arrival (Poisson arrivals see time averages).
    pub cluster_spread: f64,
    /// The initial allocation's hops per stream, sum d_ij T_ij / sum T_ij (the admitted
    /// streams' mean hops when every threshold is full), and the largest d_ij with T_ij > 0;
    /// both 0 for the policies without thresholds.
    pub alloc_hops: f64,
    pub alloc_dmax: f64,
    /// Blocked arrivals (measured) that the policy would have admitted but for a full link
    /// on the path, per blocked arrival (0 without link capacities).
    pub link_blocked: f64,
    /// Per re-allocation: network simplex pivots warm (from the previous basis) and cold (with
    /// `compare_cold`), and their wall-clock times in microseconds (with `compare_cold`).
    pub warm_pivots: f64,
    pub cold_pivots: f64,
    pub warm_us: f64,
    pub cold_us: f64,
}

/// The allocation problem: rows are populations (supplies = demands D_i), columns servers
/// (capacities C_j), costs in hops.
fn problem(cfg: &Config, demand: &[i64]) -> Result<Problem, Error> {
    Problem::new(demand.to_vec(), cfg.capacity.clone(), cfg.hops.clone())
}

/// The admission method of a policy (None: no thresholds).
fn method(policy: AllocationPolicy) -> Option<Method> {
    match policy {
        AllocationPolicy::Optimal => Some(Method::Optimal),
        AllocationPolicy::Northwest => Some(Method::Northwest),
        AllocationPolicy::Vogel => Some(Method::Vogel),
        AllocationPolicy::Nearest | AllocationPolicy::Sharing => None,
    }
}

/// Demand that changes during a run, and what the system does about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// The changes, in time order: (hour from the start, warm-up included; the demand from
    /// then on). The spec's shift is one change; a demand series is one per interval.
    pub steps: Vec<(f64, Vec<i64>)>,
    /// Re-allocation: every `window` hours, if some population's blocking in the window was
    /// above `b_max`, re-estimate demands from the window's arrival rates, re-solve warm from
    /// the previous basis and install the new thresholds (streams in progress stay).
    pub reallocate: Option<(f64, f64)>,
    /// Re-allocate for the true new demand instead of the window's estimate (a wrong model:
    /// the oracle that `tp.reallocation-excess` says the estimate falls short of).
    pub oracle: bool,
    /// Also solve every re-allocation cold, and time both (wall clock: the one place this
    /// engine reads a clock, for the `timed` experiment that reports it).
    pub compare_cold: bool,
}

impl Shift {
    /// One change, at hour `at`, to `demand`.
    pub fn once(at: f64, demand: Vec<i64>, reallocate: Option<(f64, f64)>, oracle: bool) -> Self {
        Shift {
            steps: vec![(at, demand)],
            reallocate,
            oracle,
            compare_cold: false,
        }
    }
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Hop counts between metros, and server capacities (one server per metro).
    pub hops: Vec<Vec<i64>>,
    pub capacity: Vec<i64>,
    pub policy: AllocationPolicy,
    pub striped: bool,
    pub demand: Vec<i64>,
    pub rho: f64,
    pub deterministic: bool,
    pub warmup: f64,
    pub hours: f64,
    pub shift: Option<Shift>,
    /// Final hours over which `blocking_tail` is measured.
    pub tail: f64,
    /// Partial sharing of slack under CP-1 with thresholds: when every server of a
    /// population's cluster refuses by threshold, a cluster server with more than `reserve`
    /// x capacity free slots admits the stream above the threshold. The reserve protects the
    /// populations whose slack is lent (trunk reservation); 1 is complete partitioning.
    pub reserve: f64,
    /// How CP-1 picks among the cluster servers under their thresholds.
    pub choice: Choice,
    /// Link capacities (None: links never limit, the spec's model): a stream from server j to
    /// population i takes one unit on every link of its path, and a server whose path has a
    /// full link cannot take it. CP-1 only.
    pub links: Option<LinkModel>,
}

/// Links that streams occupy on their way from a server to a population.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkModel {
    /// The links of the path from server j to population i, at `[i * servers + j]`.
    pub paths: Vec<Vec<usize>>,
    /// Each link's capacity, in streams.
    pub capacity: Vec<i64>,
}

/// The servers a policy without thresholds tries, nearest first: S1 only the nearest, S4 all.
fn candidates(policy: AllocationPolicy, by_distance: &[usize]) -> &[usize] {
    if policy == AllocationPolicy::Nearest {
        &by_distance[..1]
    } else {
        by_distance
    }
}

/// One run.
pub fn simulate(cfg: &Config, rng: &mut Rng) -> Result<Outcome, Error> {
    let (policy, striped, rho, deterministic) =
        (cfg.policy, cfg.striped, cfg.rho, cfg.deterministic);
    let (warmup, hours) = (cfg.warmup, cfg.hours);
    let demand = &cfg.demand[..];
    let k = demand.len();
    let d = &cfg.hops;
    let capacity = &cfg.capacity;
    let (mut admission, mut basis) = match method(policy) {
        Some(m) => {
            let r = allocate(m, &problem(cfg, demand)?, None)?;
            let (a, b) = (r.allocation, r.basis);
            (
                Some(Admission::new(&a, k, capacity, cfg.reserve, cfg.choice)),
                b,
            )
        }
        None => (None, None),
    };
    let (alloc_hops, alloc_dmax) = admission.as_ref().map_or((0.0, 0.0), |a| {
        let (mut cost, mut total, mut dmax) = (0.0, 0.0, 0.0f64);
        for (c, &t) in a.thresholds().iter().enumerate() {
            if t > 0 {
                let h = d[c / k][c % k] as f64;
                cost += h * t as f64;
                total += t as f64;
                dmax = dmax.max(h);
            }
        }
        (cost / total.max(1.0), dmax)
    });
    let (mut spread_sum, mut spread_n) = (0.0, 0u64);
    // Servers by distance from each population (ties: lower index).
    let by_distance: Vec<Vec<usize>> = (0..k)
        .map(|i| {
            let mut v: Vec<usize> = (0..k).collect();
            v.sort_by_key(|&j| (d[i][j], j));
            v
        })
        .collect();
    let mut rate: Vec<f64> = demand.iter().map(|&x| rho * x as f64 / HOLD).collect();
    let mut load = vec![0i64; k]; // streams per server, for the policies without thresholds
    // Streams on each link, and blocks that a full link caused (no server had a free path).
    let mut on_link = vec![0i64; cfg.links.as_ref().map_or(0, |l| l.capacity.len())];
    let mut link_blocked = 0u64;
    if cfg.links.is_some() && striped {
        return Err(Error::param(
            "protocol",
            "cp2",
            "cp1 when links have capacities (a striped stream has no single path)",
        ));
    }
    let (mut arrivals, mut blocked) = (vec![0u64; k], vec![0u64; k]);
    // Per batch of the measured period, for batch-means standard errors (blocking events are
    // correlated in time, so a binomial error would be too small).
    let mut batch_arr = vec![0u64; k * BATCHES];
    let mut batch_blk = vec![0u64; k * BATCHES];
    let (mut hop_sum, mut admitted, mut borrowed) = (0.0, 0u64, 0u64);
    // Events: (time in microseconds, sequence, population, what): a departure from server
    // `what`, or one of these.
    const ARRIVAL: usize = usize::MAX;
    const STRIPE: usize = usize::MAX - 1;
    const SHIFT: usize = usize::MAX - 2;
    const CHECK: usize = usize::MAX - 3;
    let us = |h: f64| (h * 3.6e9) as u64;
    let mut heap = BinaryHeap::new();
    let mut seq = 0u64;
    let exp = crate::workload::arrivals::exponential;
    for (i, &r) in rate.iter().enumerate() {
        if r > 0.0 {
            heap.push(Reverse((us(exp(rng, 1.0 / r)), seq, i, ARRIVAL)));
            seq += 1;
        }
    }
    let (start, end) = (us(warmup), us(warmup + hours));
    let tail_start = us((warmup + hours - cfg.tail).max(warmup));
    let (mut tail_arr, mut tail_blk) = (0u64, 0u64);
    // Arrivals scheduled before the last rate change are void (Poisson: redrawing is exact).
    let mut arrivals_from = 0u64;
    let (mut win_arr, mut win_blk) = (vec![0u64; k], vec![0u64; k]);
    let mut reallocations = 0u64;
    // The demand in force (the oracle re-allocates for it), re-solve pivots and times.
    let mut current: &[i64] = demand;
    let (mut warm_pivots, mut cold_pivots, mut warm_us, mut cold_us) = (0u64, 0u64, 0.0, 0.0);
    if let Some(sh) = &cfg.shift {
        // One change is queued at a time: the next when this one happens.
        if let Some((at, _)) = sh.steps.first() {
            heap.push(Reverse((us(*at), seq, 0, SHIFT)));
            seq += 1;
        }
        if let Some((window, _)) = sh.reallocate {
            heap.push(Reverse((us(window), seq, 0, CHECK)));
            seq += 1;
        }
    }
    let mut events = 0u64;
    loop {
        let Some(mut top) = heap.peek_mut() else {
            break;
        };
        let Reverse((t, ev_seq, i, what)) = *top;
        if t > end {
            break;
        }
        events += 1;
        if what == ARRIVAL && ev_seq >= arrivals_from {
            // The population's next arrival takes the place of this one: it is due soon, so
            // it sifts down a level or two, where a pop and a push would sift the whole depth.
            // The queue holds what it would after the pop and the push, so the order is the
            // same.
            *top = Reverse((t + us(exp(rng, 1.0 / rate[i])), seq, i, ARRIVAL));
            seq += 1;
            drop(top);
        } else {
            PeekMut::pop(top);
        }
        if what == SHIFT {
            let sh = cfg.shift.as_ref().expect("a shift is configured");
            // The population slot of a change event holds its index in the steps.
            current = &sh.steps[i].1;
            if let Some((at, _)) = sh.steps.get(i + 1) {
                heap.push(Reverse((us(*at).max(t), seq, i + 1, SHIFT)));
                seq += 1;
            }
            rate = current.iter().map(|&x| rho * x as f64 / HOLD).collect();
            arrivals_from = seq;
            for (p, &r) in rate.iter().enumerate() {
                if r > 0.0 {
                    heap.push(Reverse((t + us(exp(rng, 1.0 / r)), seq, p, ARRIVAL)));
                    seq += 1;
                }
            }
            continue;
        }
        if what == CHECK {
            let sh = cfg.shift.as_ref().expect("checks only with a shift");
            let (window, b_max) = sh.reallocate.expect("checks only with re-allocation");
            // The shared rule: demands in proportion to the window's arrival counts.
            let est = reallocation(&win_arr, &win_blk, b_max)
                .map(|e| if sh.oracle { current.to_vec() } else { e });
            if let (Some(est), Some(adm), AllocationPolicy::Optimal) =
                (est, admission.as_mut(), policy)
            {
                let prob = problem(cfg, &demand_rows(&est, capacity.iter().sum(), 0.0))?;
                let clock = sh.compare_cold.then(std::time::Instant::now);
                let warm = allocate(Method::Optimal, &prob, basis.as_ref())?;
                if let Some(c) = clock {
                    warm_us += c.elapsed().as_secs_f64() * 1e6;
                    let c = std::time::Instant::now();
                    let cold = allocate(Method::Optimal, &prob, None)?;
                    cold_us += c.elapsed().as_secs_f64() * 1e6;
                    cold_pivots += cold.pivots.unwrap_or(0);
                }
                warm_pivots += warm.pivots.unwrap_or(0);
                adm.install(&warm.allocation);
                basis = warm.basis;
                reallocations += 1;
            }
            win_arr.fill(0);
            win_blk.fill(0);
            heap.push(Reverse((t + us(window), seq, 0, CHECK)));
            seq += 1;
            continue;
        }
        if what == ARRIVAL && ev_seq < arrivals_from {
            continue;
        }
        if what != ARRIVAL {
            // A departure.
            if let Some(lm) = &cfg.links
                && what != STRIPE
            {
                for &l in &lm.paths[i * k + what] {
                    on_link[l] -= 1;
                }
            }
            match (admission.as_mut(), what == STRIPE) {
                (Some(adm), true) => adm.release_striped(i),
                (Some(adm), false) => adm.release(i, what),
                (None, _) => load[what] -= 1,
            }
            continue;
        }
        let measured = t >= start;
        win_arr[i] += 1;
        if t >= tail_start {
            tail_arr += 1;
        }
        let batch = (((t - start.min(t)) as f64 / (end - start).max(1) as f64 * BATCHES as f64)
            as usize)
            .min(BATCHES - 1);
        if measured {
            arrivals[i] += 1;
            batch_arr[i * BATCHES + batch] += 1;
        }
        let served: Option<(usize, f64)> = match (admission.as_mut(), striped) {
            (Some(adm), true) => adm.admit_striped(i).then(|| {
                // The stream's hops: its cluster's, weighted by the shares x_ij / D_i.
                let (t, total) = (&adm.thresholds()[i * k..(i + 1) * k], demand[i].max(1));
                let mean_hops = adm
                    .cluster(i)
                    .iter()
                    .map(|&j| t[j] as f64 * d[i][j] as f64)
                    .sum::<f64>()
                    / total as f64;
                (STRIPE, mean_hops)
            }),
            (Some(adm), false) => {
                if measured && let Some(spread) = adm.spread(i) {
                    spread_sum += spread;
                    spread_n += 1;
                }
                let room = |j: usize| {
                    cfg.links.as_ref().is_none_or(|lm| {
                        lm.paths[i * k + j]
                            .iter()
                            .all(|&l| on_link[l] < lm.capacity[l])
                    })
                };
                adm.admit_if(i, &d[i], room).map(|a| {
                    if measured && matches!(a, Admit::Borrowed(_)) {
                        borrowed += 1;
                    }
                    (a.server(), d[i][a.server()] as f64)
                })
            }
            (None, _) => candidates(policy, &by_distance[i])
                .iter()
                .find(|&&j| {
                    load[j] < capacity[j]
                        && cfg.links.as_ref().is_none_or(|lm| {
                            lm.paths[i * k + j]
                                .iter()
                                .all(|&l| on_link[l] < lm.capacity[l])
                        })
                })
                .map(|&j| (j, d[i][j] as f64)),
        };
        match served {
            Some((j, h)) => {
                if admission.is_none() {
                    load[j] += 1;
                }
                if let Some(lm) = &cfg.links
                    && j != STRIPE
                {
                    for &l in &lm.paths[i * k + j] {
                        on_link[l] += 1;
                    }
                }
                let hold = if deterministic { HOLD } else { exp(rng, HOLD) };
                heap.push(Reverse((t + us(hold), seq, i, j)));
                seq += 1;
                if measured {
                    hop_sum += h;
                    admitted += 1;
                }
            }
            None => {
                // Would the policy have admitted it but for the links? (A dry run without them:
                // admitted and released at once, which leaves every count as it was.)
                if measured && cfg.links.is_some() {
                    let would = match admission.as_mut() {
                        Some(adm) => adm.admit(i, &d[i]).map(|a| adm.release(i, a.server())),
                        None => candidates(policy, &by_distance[i])
                            .iter()
                            .any(|&j| load[j] < capacity[j])
                            .then_some(()),
                    };
                    if would.is_some() {
                        link_blocked += 1;
                    }
                }
                win_blk[i] += 1;
                if t >= tail_start {
                    tail_blk += 1;
                }
                if measured {
                    blocked[i] += 1;
                    batch_blk[i * BATCHES + batch] += 1;
                }
            }
        }
    }
    let per: Vec<f64> = (0..k)
        .map(|i| blocked[i] as f64 / arrivals[i].max(1) as f64)
        .collect();
    let total_arr: u64 = arrivals.iter().sum();
    let erlang_i: Vec<f64> = (0..k)
        .map(|i| erlang_b(rho * demand[i] as f64, demand[i] as u64))
        .collect();
    let total_rate: f64 = rate.iter().sum();
    let max_z = (0..k)
        .filter(|&i| arrivals[i] > 0)
        .map(|i| {
            let means: Vec<f64> = (0..BATCHES)
                .map(|b| {
                    batch_blk[i * BATCHES + b] as f64 / batch_arr[i * BATCHES + b].max(1) as f64
                })
                .collect();
            // With (almost) no blocking seen the batches cannot estimate the error: the
            // binomial error of the predicted rate is the floor.
            let b = erlang_i[i];
            let binomial = (b * (1.0 - b) / arrivals[i] as f64).sqrt();
            let se = (crate::stats::Summary::of(&means).sd / (BATCHES as f64).sqrt()).max(binomial);
            (per[i] - b).abs() / se.max(1e-12)
        })
        .fold(0.0, f64::max);
    // Erlang-B for the demand in force at the end (after a shift, the new one).
    let last = cfg
        .shift
        .as_ref()
        .and_then(|s| s.steps.last())
        .map_or(demand, |(_, d)| &d[..]);
    let last_rate: f64 = last.iter().map(|&x| rho * x as f64 / HOLD).sum();
    let erlang_end = last
        .iter()
        .map(|&x| rho * x as f64 / HOLD * erlang_b(rho * x as f64, x as u64))
        .sum::<f64>()
        / last_rate;
    Ok(Outcome {
        borrowed: borrowed as f64 / admitted.max(1) as f64,
        blocking_tail: tail_blk as f64 / tail_arr.max(1) as f64,
        erlang_end,
        reallocations,
        blocking: blocked.iter().sum::<u64>() as f64 / total_arr.max(1) as f64,
        erlang: (0..k).map(|i| rate[i] * erlang_i[i]).sum::<f64>() / total_rate,
        max_z,
        hops: hop_sum / admitted.max(1) as f64,
        events,
        per_population: per,
        cluster_spread: spread_sum / spread_n.max(1) as f64,
        alloc_hops,
        alloc_dmax,
        link_blocked: link_blocked as f64 / blocked.iter().sum::<u64>().max(1) as f64,
        warm_pivots: warm_pivots as f64 / reallocations.max(1) as f64,
        cold_pivots: cold_pivots as f64 / reallocations.max(1) as f64,
        warm_us: warm_us / reallocations.max(1) as f64,
        cold_us: cold_us / reallocations.max(1) as f64,
    })
}

#[cfg(test)]
mod tests;
