//! The demo on loopback: k = 2 converges, k = 1 does not (claims C1 and C2 of the GWTW spec),
//! and users of a killed edge re-trial and settle elsewhere. Each run is bounded (8 to 10 s).

use cdnlab::cache::Policy;
use cdnlab::select::gwtw::GwtwConfig;
use cdnlab_live::client::Measure;
use cdnlab_live::demo::{self, DemoConfig};
use std::time::Duration;

/// 16 users on 8 edges that hold 3 users' catalogues each (load 2 of 3).
fn web(k: usize, seed: u64) -> DemoConfig {
    DemoConfig {
        edges: 8,
        users: 16,
        k,
        users_per_edge: 3,
        objects_per_user: 10,
        object_size: 1024,
        alpha: 0.8,
        gwtw: GwtwConfig {
            tau: 10,
            ..GwtwConfig::default()
        },
        model: Measure::Web,
        policy: Policy::Lru,
        interval: Duration::from_millis(10),
        duration: Duration::from_secs(8),
        sample_every: Duration::from_millis(500),
        seed,
        kill: None,
    }
}

/// The first seed from 1 whose candidates are (in)feasible as wanted.
fn seed_where(k: usize, feasible: bool) -> u64 {
    (1..)
        .find(|&s| demo::feasible(&web(k, s)) == feasible)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k2_converges_k1_does_not() {
    let two = demo::run(&web(2, seed_where(2, true)), |_| {})
        .await
        .unwrap();
    assert!(two.feasible);
    let last = two.timeline.last().unwrap();
    assert_eq!(last.at_best, 1.0, "{:?}", two.timeline);
    assert!(
        two.converged_at.is_some_and(|t| t < 7.0),
        "{:?}",
        two.timeline
    );
    // k = 1 with an assignment that overloads some edge: its users never all reach the best.
    let one = demo::run(&web(1, seed_where(1, false)), |_| {})
        .await
        .unwrap();
    assert!(!one.feasible);
    let tail: Vec<f64> = one
        .timeline
        .iter()
        .rev()
        .take(6)
        .map(|s| s.at_best)
        .collect();
    assert!(tail.iter().all(|&x| x < 1.0), "{:?}", one.timeline);
    assert!(one.converged_at.is_none());
}

/// An edge dies at 3 s: its users see failures, re-trial and settle on their other candidate;
/// every user keeps making requests (none hangs) and all end at the best value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_of_a_killed_edge_settle_elsewhere() {
    let mut cfg = web(2, 0);
    cfg.edges = 4;
    cfg.users = 8;
    cfg.users_per_edge = 4;
    cfg.duration = Duration::from_secs(10);
    cfg.kill = Some((Duration::from_secs(3), 0));
    cfg.seed = (1..)
        .find(|&s| {
            let c = DemoConfig {
                seed: s,
                ..cfg.clone()
            };
            // Some users of the killed edge, and a feasible assignment without it.
            demo::feasible(&c) && {
                let before = DemoConfig { kill: None, ..c };
                demo::feasible(&before)
            }
        })
        .unwrap();
    let out = demo::run(&cfg, |_| {}).await.unwrap();
    assert!(out.edges[0].killed);
    let hit_by_kill = out
        .users
        .iter()
        .filter(|u| u.candidates.contains(&0))
        .count();
    assert!(hit_by_kill > 0);
    assert!(
        out.users
            .iter()
            .all(|u| u.settled.is_some() && u.settled != Some(0)),
        "{:?}",
        out.users
    );
    // Those who were on it (or probed it) saw it fail.
    assert!(out.users.iter().map(|u| u.failures).sum::<u64>() > 0);
    let n = out.timeline.len();
    assert!(out.timeline[n - 1].requests > out.timeline[n - 2].requests);
    assert_eq!(out.timeline[n - 1].at_best, 1.0, "{:?}", out.timeline);
}

/// The video model: edges shaped to 3 streams at the wanted rate, users streaming back to
/// back. k = 2 converges (every user at the full rate at some point); k = 1 with an overloaded
/// edge does not (no user on it ever gets the rate, so its last samples all fall short).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn video_k2_converges_k1_does_not() {
    let video = |k, seed| DemoConfig {
        objects_per_user: 4,
        object_size: 32 << 10,
        model: Measure::Video {
            rate: 256_000.0,
            tolerance: 0.1,
        },
        interval: Duration::from_millis(1),
        duration: Duration::from_secs(12),
        ..web(k, seed)
    };
    let seed = |k, feasible| {
        (1..)
            .find(|&s| demo::feasible(&video(k, s)) == feasible)
            .unwrap()
    };
    // k = 2 reaches the optimal state: every user at the full rate in some sample. Not
    // necessarily in the last one: a single request slowed beyond the tolerance by loopback
    // timing (the model has no such noise) is a shortfall, and under the paper's re-trial rule
    // that user's trial streams overload its other candidate, whose users re-trial in turn
    // (seen once in CI: all at best from 8.5 s to 11 s, then 10 of 16 at 11.5 s).
    let two = demo::run(&video(2, seed(2, true)), |_| {}).await.unwrap();
    assert!(
        two.timeline.iter().any(|s| s.at_best == 1.0),
        "{:?}",
        two.timeline
    );
    let one = demo::run(&video(1, seed(1, false)), |_| {}).await.unwrap();
    let tail: Vec<f64> = one
        .timeline
        .iter()
        .rev()
        .take(6)
        .map(|s| s.at_best)
        .collect();
    assert!(tail.iter().all(|&x| x < 1.0), "{:?}", one.timeline);
}

/// The DHT demo: the hot file is replicated during the flash crowd and back to its home copy
/// after it; an edge holding one of its middle replicas is killed and the file's replicas form
/// a prefix again by the end; searches take a few probes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dht_demo_replicates_repairs_and_shrinks() {
    use cdnlab_live::demo::dht::{self as demo_dht, DhtDemoConfig};
    let cfg = DhtDemoConfig {
        edges: 6,
        files: 500,
        alpha: 0.8,
        base_rate: 80.0,
        crowd_rate: 240.0,
        crowd_start: Duration::from_secs(1),
        crowd_end: Duration::from_secs(6),
        kill_at: Some(Duration::from_secs(4)),
        duration: Duration::from_secs(12),
        sample_every: Duration::from_millis(250),
        k: 32,
        c_high: 40.0,
        window: Duration::from_millis(500),
        seed: 3,
    };
    let out = demo_dht::run(&cfg, |_| {}).await.unwrap();
    assert!(out.max_hot_replicas >= 3, "{out:?}");
    assert_eq!(out.final_hot_replicas, 1, "{:?}", out.timeline);
    assert!(
        out.replications >= 2 && out.dereplications >= 2,
        "{} replications, {} dereplications: {:?}",
        out.replications,
        out.dereplications,
        out.timeline
    );
    let last = out.timeline.last().unwrap();
    assert_eq!(
        last.hot_top as usize, last.hot_replicas,
        "a prefix at the end"
    );
    assert!(
        out.probes_per_request > 1.0 && out.probes_per_request < 10.0,
        "{}",
        out.probes_per_request
    );
    // Requests in flight at the killed edge may fail three times; nothing else.
    assert!(
        out.lost * 100 <= out.requests,
        "{} of {}",
        out.lost,
        out.requests
    );
}
