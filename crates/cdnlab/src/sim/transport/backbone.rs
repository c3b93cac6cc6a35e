//! The streaming allocation on real networks (experiments T1 and T3 on real backbones; spec
//! `docs/spec/transport.md`, as implemented: `docs/transport.md#on-real-networks`).
//!
//! A network from the built-in catalogue (`topology::catalog`: every SNDlib network and a
//! sample of the Topology Zoo) becomes an instance of the streaming model by documented rules,
//! since the data has users and traffic but no CDN:
//!
//! - **Populations**: one per node, with demand in proportion to the traffic that *ends* there
//!   in the network's demand matrix (what its users download). A network without a matrix (the
//!   Zoo's) gets the uniform all-pairs matrix, so every node's demand is equal.
//! - **Server capacity**: one server per node, the capacities summing to the demands' total
//!   (`streams` per node on average), placed by a [`CapacityRule`]: in proportion to the traffic
//!   the node carries when the matrix follows shortest paths (hubs get more: where operators
//!   put PoPs), to its degree (the sensitivity rule), equally, or matched to the demand (no
//!   mismatch: a control).
//! - **Costs**: hops (TP-R1) or km over the real links, between a population's node and a
//!   server's node, over one shortest path.
//! - **Links**: unlimited (the spec's model), or with a capacity in streams in proportion to the
//!   traffic the link carries when the matrix follows shortest paths, scaled so that the matrix
//!   carried at the CDN's total capacity would fill it (times `headroom`); a stream takes one
//!   unit on every link of its server-to-population path.
//!
//! [`BackboneExperiment`] (T1) runs the optimal allocation, nearest-server-only and full sharing
//! on the same arrivals (common random numbers) and reports each one's blocking, the gap between
//! nearest and optimal, and the network's properties, one row per network that other tools'
//! tables can join by name. [`SeriesExperiment`] (T3) replays demand interval by interval: the
//! static demand modulated by a diurnal cycle whose phase follows each node's longitude (its
//! time zone), or a series attached to the network; blocking with and without
//! blocking-triggered re-allocation, the re-allocations, and each re-solve warm against cold.

use super::stream::{AllocationPolicy, Choice, Config, LinkModel, Shift, simulate};
use crate::Error;
use crate::Named;
use crate::alloc::problem::scale_to;
use crate::rng::Rng;
use crate::sim::params::{MetricSpec, ParamSpec, Params};
use crate::topology::{Cost, Demand, Demands, Topology, catalog};

crate::registry! {
    /// Where server capacity is placed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum CapacityRule: "capacity rule" {
        Carried => "carried": "in proportion to the traffic the node carries under shortest-path routing of the matrix (hubs get more)",
        Degree => "degree": "in proportion to the node's degree",
        Uniform => "uniform": "equal at every node",
        Matched => "matched": "in proportion to the node's demand (no mismatch: a control)",
    }
}

crate::registry! {
    /// Whether links limit streams.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum LinkRule: "link rule" {
        Unlimited => "unlimited": "links never limit streams (the spec's model)",
        Carried => "carried": "link capacity in proportion to the traffic it carries under shortest-path routing of the matrix, times the headroom",
    }
}

/// How a network becomes a streaming instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub capacity: CapacityRule,
    pub cost: Cost,
    pub links: LinkRule,
    /// Link capacity multiplier (with [`LinkRule::Carried`]).
    pub headroom: f64,
    /// Mean server capacity per node, in streams (the total is this x nodes).
    pub streams: i64,
}

/// A network made a streaming instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub network: Topology,
    /// Streams per node: the populations' demands and the servers' capacities (same total).
    pub demand: Vec<i64>,
    pub capacity: Vec<i64>,
    /// Costs between nodes (hops or km).
    pub costs: Vec<Vec<i64>>,
    pub links: Option<LinkModel>,
    /// Whether the network has its own demand matrix (else the uniform all-pairs one).
    pub has_matrix: bool,
    /// Half the L1 distance between the demand shares and the capacity shares: the share of
    /// demand that cannot be served at its own node, in [0, 1].
    pub mismatch: f64,
}

/// The uniform all-pairs matrix: one unit from every node to every other.
pub fn uniform_matrix(n: usize) -> Demands {
    Demands {
        entries: (0..n)
            .flat_map(|s| {
                (0..n).filter(move |&d| d != s).map(move |d| Demand {
                    src: s,
                    dst: d,
                    value: 1.0,
                })
            })
            .collect(),
    }
}

/// `weights` (non-negative) apportioned to integers summing to `total` (largest remainder).
pub fn apportion(weights: &[f64], total: i64) -> Vec<i64> {
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 {
        return scale_to(&vec![1; weights.len()], total);
    }
    // Integers in proportion to the weights, fine enough that the rounding is below a stream.
    let ints: Vec<i64> = weights
        .iter()
        .map(|w| (w / sum * 1e12).round() as i64)
        .collect();
    scale_to(&ints, total)
}

/// Builds the instance of `network` under `rules`.
pub fn instance(network: Topology, rules: &Rules) -> Result<Instance, Error> {
    let n = network.nodes.len();
    if network.components().1 != 1 {
        return Err(Error::param(
            "network",
            &network.name,
            "a connected network (every population must reach every server)",
        ));
    }
    let has_matrix = network.demands.as_ref().is_some_and(|d| d.total() > 0.0);
    let matrix = match &network.demands {
        Some(d) if has_matrix => d.clone(),
        _ => uniform_matrix(n),
    };
    let total = rules.streams * n as i64;
    let demand = apportion(&matrix.sink_totals(n), total);
    let (carried_nodes, carried_links) = network.carried(&matrix, rules.cost);
    let weights: Vec<f64> = match rules.capacity {
        CapacityRule::Carried => carried_nodes,
        CapacityRule::Degree => network.degrees().iter().map(|&d| d as f64).collect(),
        CapacityRule::Uniform => vec![1.0; n],
        CapacityRule::Matched => demand.iter().map(|&d| d as f64).collect(),
    };
    let capacity = apportion(&weights, total);
    let costs = network.costs(rules.cost);
    let links = match rules.links {
        LinkRule::Unlimited => None,
        LinkRule::Carried => {
            // A link carries share f_e = carried_e / volume of the matrix; at the CDN's total
            // it would carry f_e x total streams.
            let volume = matrix.total();
            let capacity = carried_links
                .iter()
                .map(|&c| ((rules.headroom * c / volume * total as f64).round() as i64).max(1))
                .collect();
            // Server j to population i: the path in server j's shortest-path tree.
            let mut paths = vec![Vec::new(); n * n];
            for j in 0..n {
                let tree = network.shortest_paths(j, rules.cost);
                for i in 0..n {
                    paths[i * n + j] = Topology::path(&tree, i);
                }
            }
            Some(LinkModel { paths, capacity })
        }
    };
    let (dt, ct) = (
        demand.iter().sum::<i64>() as f64,
        capacity.iter().sum::<i64>() as f64,
    );
    let mismatch = 0.5
        * demand
            .iter()
            .zip(&capacity)
            .map(|(&d, &c)| (d as f64 / dt - c as f64 / ct).abs())
            .sum::<f64>();
    Ok(Instance {
        network,
        demand,
        capacity,
        costs,
        links,
        has_matrix,
        mismatch,
    })
}

fn network(p: &Params) -> Result<Topology, Error> {
    catalog::get(p.text("network")).ok_or_else(|| {
        Error::param(
            "network",
            p.text("network"),
            format!("a built-in network: {}", catalog::NAMES.join(", ")),
        )
    })
}

fn rules(p: &Params) -> Result<Rules, Error> {
    Ok(Rules {
        capacity: p.named("capacity")?,
        cost: p.named("cost")?,
        links: p.named("links")?,
        headroom: p.float("headroom"),
        streams: p.int("streams"),
    })
}

/// One run's configuration for `policy` on `inst` (CP-1, exponential holding, no shift).
fn config(inst: &Instance, policy: AllocationPolicy, p: &Params) -> Config {
    Config {
        hops: inst.costs.clone(),
        capacity: inst.capacity.clone(),
        policy,
        striped: false,
        demand: inst.demand.clone(),
        rho: p.float("rho"),
        deterministic: false,
        warmup: p.float("warmup"),
        hours: p.float("hours"),
        shift: None,
        tail: p.float("hours"),
        reserve: 1.0,
        choice: Choice::Residual,
        links: inst.links.clone(),
    }
}

/// The network parameters both experiments share.
macro_rules! network_params {
    () => {
        [
            ParamSpec::choice(
                "network",
                catalog::NAMES,
                "a built-in network: sndlib/NAME (every SNDlib network) or zoo/NAME (a Topology Zoo sample)",
            ),
            ParamSpec::positive("rho", 10.0, 1.0, "offered load: sum A_i / sum C_j")
                .unit("offered load per capacity"),
            ParamSpec::choice(
                "capacity",
                CapacityRule::NAMES,
                "where server capacity is placed: carried (traffic the node carries), degree, uniform, matched (to the demand)",
            ),
            ParamSpec::choice(
                "cost",
                Cost::NAMES,
                "cost between nodes: hops (TP-R1) or km over the real links",
            ),
            ParamSpec::int("streams", 1, 100_000, 100, "mean server capacity per node, streams"),
            ParamSpec::float("warmup", 0.0, 1e7, 20.0, "hours simulated before measuring"),
        ]
    };
}

/// T1 on real networks.
pub struct BackboneExperiment;

const T1_PARAMS: &[ParamSpec] = &{
    let [a, b, c, d, e, f] = network_params!();
    [
        a,
        b,
        c,
        d,
        e,
        f,
        ParamSpec::choice(
            "links",
            LinkRule::NAMES,
            "whether links limit streams: unlimited (the spec's model) or carried (capacity from the traffic each link carries)",
        ),
        ParamSpec::positive(
            "headroom",
            1e3,
            1.0,
            "link capacity multiplier (links = carried)",
        ),
        ParamSpec::positive("hours", 1e7, 200.0, "simulated hours after the warm-up").unit("hours"),
    ]
};

const T1_METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "blocking_optimal",
        "fraction",
        "blocked arrivals per arrival, optimal allocation (thresholds, CP-1)",
    ),
    MetricSpec::new(
        "blocking_nearest",
        "fraction",
        "blocked arrivals per arrival, nearest server only",
    ),
    MetricSpec::new(
        "blocking_sharing",
        "fraction",
        "blocked arrivals per arrival, full sharing (nearest with room)",
    ),
    MetricSpec::new(
        "gap",
        "fraction",
        "blocking of nearest-only minus blocking of the optimal allocation",
    ),
    MetricSpec::new(
        "cost_optimal",
        "hops, km or ms",
        "mean cost from a population to the server of its admitted streams, optimal",
    ),
    MetricSpec::new(
        "cost_nearest",
        "hops, km or ms",
        "mean cost of admitted streams, nearest only",
    ),
    MetricSpec::new(
        "cost_sharing",
        "hops, km or ms",
        "mean cost of admitted streams, full sharing",
    ),
    MetricSpec::new(
        "erlang",
        "fraction",
        "Erlang-B for a complete partitioning with D_i circuits per population (the optimal allocation's prediction without link limits)",
    ),
    MetricSpec::new(
        "max_z",
        "standard errors",
        "optimal: largest |measured - Erlang-B| over populations, from 20 batch means",
    ),
    MetricSpec::new(
        "link_blocked",
        "fraction",
        "optimal: blocked arrivals it would have admitted but for a full link, per blocked arrival",
    ),
    MetricSpec::new(
        "link_blocked_nearest",
        "fraction",
        "nearest only: blocked arrivals it would have admitted but for a full link, per blocked arrival (0: its streams cross no link)",
    ),
    MetricSpec::new("nodes", "nodes", "nodes of the network"),
    MetricSpec::new("links_count", "links", "links of the network"),
    MetricSpec::new(
        "diameter",
        "hops",
        "largest shortest-path hop count of the network",
    ),
    MetricSpec::new("mean_degree", "links per node", "mean node degree"),
    MetricSpec::new(
        "mismatch",
        "fraction",
        "half the L1 distance between demand shares and capacity shares: demand that cannot be served at its own node",
    ),
    MetricSpec::new(
        "has_matrix",
        "0/1",
        "1 if the network has its own demand matrix (SNDlib), 0 for the uniform one",
    ),
];

fn t1_check(p: &Params) -> Result<(), Error> {
    if p.text("links") == "unlimited" && p.float("headroom") != 1.0 {
        return Err(p.refuse("headroom", "1 unless links = carried"));
    }
    Ok(())
}

fn t1_run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    t1_check(p)?;
    let inst = instance(network(p)?, &rules(p)?)?;
    // The same arrivals for the three policies (common random numbers): each starts from a
    // copy of the replication's stream.
    let run = |policy| simulate(&config(&inst, policy, p), &mut rng.clone());
    let (opt, near, share) = (
        run(AllocationPolicy::Optimal)?,
        run(AllocationPolicy::Nearest)?,
        run(AllocationPolicy::Sharing)?,
    );
    let st = inst.network.stats();
    Ok(vec![
        opt.blocking,
        near.blocking,
        share.blocking,
        near.blocking - opt.blocking,
        opt.hops,
        near.hops,
        share.hops,
        opt.erlang,
        opt.max_z,
        opt.link_blocked,
        near.link_blocked,
        st.nodes as f64,
        st.links as f64,
        st.diameter_hops as f64,
        st.mean_degree,
        inst.mismatch,
        if inst.has_matrix { 1.0 } else { 0.0 },
    ])
}

crate::sim::experiment! {
    BackboneExperiment = "backbone",
    "streaming allocation on a real network (T1): optimal vs nearest vs full sharing on the same arrivals, and the network's properties",
    T1_PARAMS, T1_METRICS; t1_check, t1_run
}

/// T3 on real networks: demand interval by interval.
pub struct SeriesExperiment;

const T3_PARAMS: &[ParamSpec] = &{
    let [a, b, c, d, e, f] = network_params!();
    [
        a,
        b,
        c,
        d,
        e,
        f,
        ParamSpec::choice(
            "series",
            &["diurnal", "attached"],
            "the demand over time: diurnal (the static demand times a daily cycle in each node's local time) or attached (the network's own series)",
        ),
        ParamSpec::float(
            "amplitude",
            0.0,
            1.0,
            0.5,
            "diurnal: demand swings between (1 - amplitude) and (1 + amplitude) times its mean",
        ),
        ParamSpec::float(
            "peak",
            0.0,
            24.0,
            21.0,
            "diurnal: local hour of the daily peak",
        ),
        ParamSpec::positive("interval", 1440.0, 5.0, "minutes per demand interval").unit("minutes"),
        ParamSpec::flag(
            "reallocate",
            false,
            "re-solve the allocation (warm) when a window's blocking exceeds b_max",
        ),
        ParamSpec::positive("window", 1e6, 1.0, "blocking monitor window, hours"),
        ParamSpec::float(
            "b_max",
            0.0,
            1.0,
            0.05,
            "blocking that triggers a re-allocation",
        ),
        ParamSpec::positive("hours", 1e7, 24.0, "simulated hours after the warm-up").unit("hours"),
        ParamSpec::float(
            "tail",
            0.0,
            1e7,
            1.0,
            "final hours over which blocking_tail is measured",
        ),
    ]
};

const T3_METRICS: &[MetricSpec] = &[
    MetricSpec::new(
        "blocking",
        "fraction",
        "blocked arrivals per arrival after the warm-up",
    ),
    MetricSpec::new(
        "blocking_tail",
        "fraction",
        "blocking over the final tail hours",
    ),
    MetricSpec::new("reallocations", "re-allocations", "re-allocations made"),
    MetricSpec::new(
        "warm_pivots",
        "pivots",
        "network simplex pivots per re-allocation, warm from the previous basis",
    ),
    MetricSpec::new(
        "cold_pivots",
        "pivots",
        "pivots of the same re-solve started cold",
    ),
    MetricSpec::new(
        "warm_us",
        "microseconds",
        "wall-clock time per warm re-solve (varies between runs)",
    ),
    MetricSpec::new(
        "cold_us",
        "microseconds",
        "wall-clock time per cold re-solve (varies between runs)",
    ),
    MetricSpec::new("intervals", "intervals", "demand intervals simulated"),
    MetricSpec::new(
        "swing",
        "fraction",
        "largest relative change of total demand between two intervals",
    ),
];

fn t3_check(p: &Params) -> Result<(), Error> {
    if p.float("tail") > p.float("hours") {
        return Err(p.refuse("tail", "at most hours"));
    }
    Ok(())
}

/// The demand of every interval: (hour from the start, streams per node).
pub fn diurnal_steps(
    inst: &Instance,
    amplitude: f64,
    peak: f64,
    interval_h: f64,
    hours: f64,
) -> Vec<(f64, Vec<i64>)> {
    let geographic = inst.network.coordinates == crate::topology::Coordinates::Geographic;
    let count = (hours / interval_h).ceil() as usize;
    (0..count)
        .map(|k| {
            let t = k as f64 * interval_h;
            let demand = inst
                .network
                .nodes
                .iter()
                .zip(&inst.demand)
                .map(|(node, &d)| {
                    // Local solar time: UTC plus longitude / 15 hours (planar networks: none).
                    let local = t + if geographic { node.pos[0] / 15.0 } else { 0.0 };
                    let phase = 2.0 * std::f64::consts::PI * (local - peak) / 24.0;
                    (d as f64 * (1.0 + amplitude * phase.cos()))
                        .round()
                        .max(0.0) as i64
                })
                .collect();
            (t, demand)
        })
        .collect()
}

/// The network's attached series as steps: interval k's demand ending at each node, scaled so
/// that the series' mean total is the static total.
pub fn attached_steps(inst: &Instance) -> Result<Vec<(f64, Vec<i64>)>, Error> {
    let series = &inst.network.series;
    if series.is_empty() {
        return Err(Error::param(
            "series",
            "attached",
            format!(
                "diurnal: {} has no demand series (attach one with `cdnlab topo convert \
                 NETWORK OUT.json --series DIR`)",
                inst.network.name
            ),
        ));
    }
    let n = inst.network.nodes.len();
    let totals: Vec<Vec<f64>> = series.iter().map(|s| s.demands.sink_totals(n)).collect();
    let mean: f64 = totals.iter().map(|t| t.iter().sum::<f64>()).sum::<f64>() / totals.len() as f64;
    let scale = inst.demand.iter().sum::<i64>() as f64 / mean.max(f64::MIN_POSITIVE);
    Ok(series
        .iter()
        .zip(&totals)
        .map(|(s, t)| {
            (
                s.at / 3600.0,
                t.iter().map(|&x| (x * scale).round() as i64).collect(),
            )
        })
        .collect())
}

fn t3_run(p: &Params, rng: &mut Rng) -> Result<Vec<f64>, Error> {
    t3_check(p)?;
    let rules = Rules {
        links: LinkRule::Unlimited,
        headroom: 1.0,
        ..rules_t3(p)?
    };
    let inst = instance(network(p)?, &rules)?;
    let (warmup, hours) = (p.float("warmup"), p.float("hours"));
    let steps = match p.text("series") {
        "attached" => attached_steps(&inst)?,
        _ => diurnal_steps(
            &inst,
            p.float("amplitude"),
            p.float("peak"),
            p.float("interval") / 60.0,
            warmup + hours,
        ),
    };
    let swing = steps
        .windows(2)
        .map(|w| {
            let (a, b) = (
                w[0].1.iter().sum::<i64>() as f64,
                w[1].1.iter().sum::<i64>() as f64,
            );
            (b - a).abs() / a.max(1.0)
        })
        .fold(0.0, f64::max);
    let intervals = steps.len();
    // Thresholds are planned for the static demand; the series moves the arrivals from the
    // first interval on.
    let cfg = Config {
        shift: Some(Shift {
            steps,
            reallocate: (p.values()["reallocate"] == crate::sim::Value::Bool(true))
                .then(|| (p.float("window"), p.float("b_max"))),
            oracle: false,
            compare_cold: true,
        }),
        tail: p.float("tail"),
        ..config(&inst, AllocationPolicy::Optimal, p)
    };
    let r = simulate(&cfg, rng)?;
    Ok(vec![
        r.blocking,
        r.blocking_tail,
        r.reallocations as f64,
        r.warm_pivots,
        r.cold_pivots,
        r.warm_us,
        r.cold_us,
        intervals as f64,
        swing,
    ])
}

fn rules_t3(p: &Params) -> Result<Rules, Error> {
    Ok(Rules {
        capacity: p.named("capacity")?,
        cost: p.named("cost")?,
        links: LinkRule::Unlimited,
        headroom: 1.0,
        streams: p.int("streams"),
    })
}

crate::sim::experiment! {
    SeriesExperiment = "backbone-series",
    "streaming allocation on a real network under demand that moves (T3): a diurnal cycle in each node's time zone, or an attached series; with and without re-allocation",
    T3_PARAMS, T3_METRICS, timed; t3_check, t3_run
}

#[cfg(test)]
mod tests;
