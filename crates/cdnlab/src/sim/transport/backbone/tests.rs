use super::*;
use crate::sim::Experiment;
use crate::topology::{Format, ReadOptions, read};

fn tiny() -> Topology {
    read(
        include_str!("../../../../../../data/topologies/fixtures/tiny.json").as_bytes(),
        Format::Json,
        ReadOptions::default(),
    )
    .unwrap()
}

fn rules(capacity: CapacityRule, links: LinkRule) -> Rules {
    Rules {
        capacity,
        cost: Cost::Hops,
        links,
        headroom: 1.0,
        streams: 100,
    }
}

#[test]
fn apportion_is_largest_remainder() {
    assert_eq!(apportion(&[1.0, 1.0, 1.0], 10), vec![4, 3, 3]);
    assert_eq!(apportion(&[0.0, 0.0], 5), vec![3, 2]);
    assert_eq!(apportion(&[3.0, 1.0], 8), vec![6, 2]);
}

/// The fixture's instance, worked by hand (docs/transport.md shows the same numbers): the
/// matrix routes London-Madrid over Paris, so node traffic is Berlin 320.5, Paris 240.75,
/// London 120.25, Madrid 50.25, Rome 210 (of 942); the traffic ending at each node is 200,
/// 120.5, 80, 40.25, 10 (of 450.75). At 100 streams a node (500) by largest remainder:
/// capacity 170, 128, 64, 27, 111 and demand 222, 134, 89, 44, 11; mismatch (52 + 6 + 25 + 17 +
/// 100) / 2 / 500 = 0.2. Links carry 120.5, 120.25, 40.25, 200, 10, 0 of 450.75, so at 500
/// streams they hold 134, 133, 45, 222, 11 and 1 (the floor).
#[test]
fn the_fixture_becomes_the_instance_a_hand_count_gives() {
    let i = instance(tiny(), &rules(CapacityRule::Carried, LinkRule::Carried)).unwrap();
    assert!(i.has_matrix);
    assert_eq!(i.capacity, vec![170, 128, 64, 27, 111]);
    assert_eq!(i.demand, vec![222, 134, 89, 44, 11]);
    assert!((i.mismatch - 0.2).abs() < 1e-12, "{}", i.mismatch);
    let lm = i.links.as_ref().unwrap();
    assert_eq!(lm.capacity, vec![134, 133, 45, 222, 11, 1]);
    // Server Madrid (3) to population London (2): Madrid-Paris, Paris-London.
    assert_eq!(lm.paths[2 * 5 + 3], vec![2, 1]);
    assert_eq!(lm.paths[3 * 5 + 3], Vec::<usize>::new());
    assert_eq!(i.costs[2][3], 2);
    // Degree and uniform rules; km costs are the links' lengths.
    let d = instance(tiny(), &rules(CapacityRule::Degree, LinkRule::Unlimited)).unwrap();
    assert_eq!(d.capacity, apportion(&[3.0, 3.0, 2.0, 2.0, 2.0], 500));
    let u = instance(tiny(), &rules(CapacityRule::Uniform, LinkRule::Unlimited)).unwrap();
    assert_eq!(u.capacity, vec![100; 5]);
    let km = instance(
        tiny(),
        &Rules {
            cost: Cost::Km,
            ..rules(CapacityRule::Uniform, LinkRule::Unlimited)
        },
    )
    .unwrap();
    assert_eq!(km.costs[1][2], 344, "Paris-London 343.5 km");
}

/// A network without a matrix gets the uniform one: equal demand everywhere.
#[test]
fn without_a_matrix_every_node_has_the_same_demand() {
    let mut t = tiny();
    t.demands = None;
    let i = instance(t, &rules(CapacityRule::Degree, LinkRule::Unlimited)).unwrap();
    assert!(!i.has_matrix);
    assert_eq!(i.demand, vec![100; 5]);
    let mut broken = tiny();
    broken.links.truncate(4); // Rome-Madrid and London-Berlin gone: still connected? no:
    broken.links.retain(|l| !(l.a == 0 && l.b == 4));
    assert!(instance(broken, &rules(CapacityRule::Degree, LinkRule::Unlimited)).is_err());
}

fn params(e: &dyn crate::sim::Experiment, given: &[(&str, crate::sim::Value)]) -> Params {
    let map = given
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Params::resolve(e.params(), &map).unwrap()
}

/// With capacity matched to demand the optimal allocation serves every population at home,
/// exactly as nearest-only: on the same arrivals the two block identically (gap 0, no
/// mismatch); with capacity at the hubs nearest-only blocks more.
#[test]
fn matched_capacity_leaves_no_gap_and_hubs_leave_one() {
    use crate::sim::Value::{Float, Int, Text};
    let e = &BackboneExperiment;
    let run = |capacity: &str| {
        let p = params(
            e,
            &[
                ("network", Text("sndlib/abilene".into())),
                ("capacity", Text(capacity.into())),
                ("streams", Int(20)),
                ("hours", Float(200.0)),
            ],
        );
        crate::sim::Experiment::run(e, &p, &mut crate::rng::stream(5, 0, 0)).unwrap()
    };
    let names = e.metric_names();
    let at = |v: &[f64], m: &str| v[names.iter().position(|x| *x == m).unwrap()];
    let matched = run("matched");
    assert_eq!(at(&matched, "gap"), 0.0);
    assert!(at(&matched, "mismatch") < 0.01);
    assert_eq!(at(&matched, "cost_optimal"), 0.0);
    let hubs = run("carried");
    assert!(at(&hubs, "mismatch") > 0.05);
    assert!(at(&hubs, "gap") > 0.02, "{hubs:?}");
    assert!(at(&hubs, "blocking_sharing") <= at(&hubs, "blocking_optimal"));
    assert_eq!(at(&hubs, "nodes"), 12.0);
    assert_eq!(at(&hubs, "has_matrix"), 1.0);
}

/// The diurnal demand peaks at the peak hour in each node's local time: a node at longitude
/// 0 peaks at 21:00 UTC, one at 90 E six hours earlier.
#[test]
fn diurnal_demand_follows_local_time() {
    let mut t = tiny();
    t.nodes[0].pos = [0.0, 50.0];
    t.nodes[1].pos = [90.0, 50.0];
    let i = instance(t, &rules(CapacityRule::Uniform, LinkRule::Unlimited)).unwrap();
    let steps = diurnal_steps(&i, 0.5, 21.0, 1.0, 24.0);
    assert_eq!(steps.len(), 24);
    let at = |h: usize, node: usize| steps[h].1[node];
    assert_eq!(at(21, 0), (i.demand[0] as f64 * 1.5).round() as i64);
    assert_eq!(at(15, 1), (i.demand[1] as f64 * 1.5).round() as i64);
    assert_eq!(at(9, 0), (i.demand[0] as f64 * 0.5).round() as i64);
    let peak0 = (0..24).max_by_key(|&h| at(h, 0)).unwrap();
    assert_eq!(peak0, 21);
}

/// A week of 5-minute intervals on Abilene with re-allocation: 2,016 intervals, and every
/// re-solve warm takes fewer pivots than the same solve cold.
#[test]
fn a_week_of_five_minute_intervals_replays_with_reallocation() {
    use crate::sim::Value::{Bool, Float, Int, Text};
    let e = &SeriesExperiment;
    let p = params(
        e,
        &[
            ("network", Text("sndlib/abilene".into())),
            ("reallocate", Bool(true)),
            ("window", Float(1.0 / 12.0)),
            ("streams", Int(20)),
            ("warmup", Float(0.0)),
            ("hours", Float(168.0)),
        ],
    );
    let v = crate::sim::Experiment::run(e, &p, &mut crate::rng::stream(1, 0, 0)).unwrap();
    let names = e.metric_names();
    let at = |m: &str| v[names.iter().position(|x| *x == m).unwrap()];
    assert_eq!(at("intervals"), 2016.0);
    assert!(at("reallocations") > 10.0, "{v:?}");
    assert!(at("warm_pivots") < at("cold_pivots"), "{v:?}");
    let attached = params(e, &[("series", Text("attached".into()))]);
    let err = crate::sim::Experiment::run(e, &attached, &mut crate::rng::stream(1, 0, 0))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no demand series"), "{err}");
}

/// An attached series is replayed as it is, scaled so that its mean total is the static total:
/// two intervals of 300 s, totals 10 and 30 (mean 20), at 500 streams: x 25.
#[test]
fn an_attached_series_is_replayed_at_the_static_total() {
    let mut t = tiny();
    t.attach_series(vec![
        (0.0, vec![("Berlin".into(), "Rome".into(), 10.0)]),
        (
            300.0,
            vec![
                ("Berlin".into(), "Rome".into(), 20.0),
                ("Rome".into(), "Paris".into(), 10.0),
            ],
        ),
    ])
    .unwrap();
    let i = instance(t, &rules(CapacityRule::Uniform, LinkRule::Unlimited)).unwrap();
    let steps = attached_steps(&i).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0], (0.0, vec![0, 0, 0, 0, 250]));
    assert_eq!(steps[1], (300.0 / 3600.0, vec![0, 250, 0, 0, 500]));
}
