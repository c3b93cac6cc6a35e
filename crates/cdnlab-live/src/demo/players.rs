//! The players demo (`cdnlab live demo --scenario players`): an origin serving the VP9 asset and
//! the player page, three edges with admission, the steering server, and N hls.js or dash.js
//! sessions of one population in headless Chromium, on loopback. Halfway through, the edge
//! carrying the most sessions is taken out; the summary gives the sessions per pathway against
//! the allocation, each session's startup time, stalls and switch time, and a timeline of the
//! segments each edge served.

use crate::Error;
use crate::edge::{self, EdgeConfig};
use crate::media::{Asset, Files};
use crate::origin::{self, OriginConfig};
use crate::players::{self, Browser};
use crate::serve::Limits;
use crate::steer::{self, Deployment, SteerConfig};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The edges: (name, metro, capacity in streams). The population lives in metro A.
const EDGES: [(&str, &str, i64); 3] = [("east", "A", 4), ("west", "B", 6), ("north", "C", 6)];

/// A players demo run.
#[derive(Debug, Clone)]
pub struct PlayersDemoConfig {
    /// `hls`, `dash` or `shaka` (Shaka Player plays the HLS playlist).
    pub player: String,
    pub sessions: usize,
    pub duration: Duration,
    /// The steering manifests' TTL, seconds.
    pub ttl: u32,
    /// The asset directory (media/make-asset.sh) and the player directory (player/, with its
    /// node_modules).
    pub media: PathBuf,
    pub player_dir: PathBuf,
    /// After the run, keep every server up (until Ctrl-C) for a person to open the pages.
    pub keep: bool,
}

/// One session's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionSummary {
    pub id: String,
    /// The edge that served its first segment.
    pub first_pathway: String,
    pub startup_ms: u64,
    pub stalls: u64,
    pub played_seconds: f64,
    /// Seconds from the edge being taken out to its first segment elsewhere (sessions that
    /// were on it).
    pub switch_seconds: Option<f64>,
    pub segments: BTreeMap<String, usize>,
    pub fatal: Vec<String>,
}

/// What the demo measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlayersDemoResult {
    pub player: String,
    pub edges: Vec<String>,
    /// The allocation's streams per edge for the population, and its share.
    pub thresholds: Vec<i64>,
    pub shares: Vec<f64>,
    /// Sessions whose first segment came from each edge, and the allocation's expectation.
    pub sessions_per_edge: Vec<usize>,
    pub expected_per_edge: Vec<f64>,
    pub taken_out: String,
    pub taken_out_at_seconds: f64,
    pub sessions: Vec<SessionSummary>,
    /// Segments served per edge in each 2-second bin of the run (one segment's duration, so a
    /// steady player adds 1 per bin).
    pub timeline: Vec<Vec<usize>>,
    /// The page a person can open while `--keep` holds the servers.
    pub page: String,
}

/// Runs the demo. `progress` gets a line at each step; `done` gets the result when the run
/// ends, before `--keep` holds the servers up.
pub async fn run(
    cfg: &PlayersDemoConfig,
    mut progress: impl FnMut(&str),
    done: impl FnOnce(&PlayersDemoResult),
) -> Result<PlayersDemoResult, Error> {
    let bad = |what: String| {
        Error::Config(cdnlab::Error::param(
            "players demo",
            what,
            "see docs/live.md",
        ))
    };
    if !matches!(cfg.player.as_str(), "hls" | "dash" | "shaka") {
        return Err(bad(format!("player {:?}: hls, dash or shaka", cfg.player)));
    }
    if !(1..=32).contains(&cfg.sessions) {
        return Err(bad(format!("{} sessions: 1 to 32", cfg.sessions)));
    }
    let asset = Arc::new(Asset::load(&cfg.media).map_err(bad)?);
    let files = Arc::new(Files::player(&cfg.player_dir).map_err(bad)?);
    if !players::chromium_available() {
        return Err(bad("chromium is missing (apt-get install chromium)".into()));
    }
    let any: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    let mut ocfg = OriginConfig::serving(crate::catalogue::Catalogue::new(16, 1024, 1024, 1)?);
    ocfg.media = Some(asset.clone());
    ocfg.player = Some(files);
    let origin = origin::start(any, ocfg).await?;
    const SECRET: &str = "players-demo-secret-0123";
    let mut edges = Vec::new();
    for _ in EDGES {
        edges.push(
            edge::start(
                any,
                EdgeConfig {
                    admission: Some(SECRET.into()),
                    ..EdgeConfig::in_front_of(origin.server.addr)
                },
            )
            .await?,
        );
    }
    let servers: Vec<String> = EDGES
        .iter()
        .zip(&edges)
        .map(|((name, metro, cap), e)| {
            format!(
                r#"{{"name": "{name}", "metro": "{metro}", "addr": "{}", "capacity": {cap}}}"#,
                e.server.addr
            )
        })
        .collect();
    let capacity: i64 = EDGES.iter().map(|e| e.2).sum();
    let topology = Deployment::parse(&format!(
        r#"{{"secret": "{SECRET}", "network": {{"nodes": [{{"id": "A", "pos": [0, 0]}}, {{"id": "B", "pos": [1, 0]}}, {{"id": "C", "pos": [2, 0]}}], "edges": [{{"source": "A", "target": "B"}}, {{"source": "B", "target": "C"}}]}},
            "servers": [{}], "populations": [{{"name": "pa", "metro": "A", "demand": {capacity}}}]}}"#,
        servers.join(", ")
    ))
    .map_err(|e| bad(e.to_string()))?;
    let s = steer::start(SteerConfig {
        topology,
        listen: any,
        ttl: cfg.ttl,
        window: Duration::from_secs(2),
        b_max: 0.5,
        timeout: Duration::from_secs(2),
        limits: Limits::default(),
        min_share: steer::DEFAULT_MIN_SHARE,
        sessions: steer::SessionLimits::default(),
        guarantee: true,
        policy: cdnlab::steer::policy::Policy::Shares,
        media: Some(asset.clone()),
    })
    .await?;
    let names: Vec<String> = EDGES.iter().map(|e| e.0.to_string()).collect();
    let hosts: Vec<String> = edges.iter().map(|e| e.server.addr.to_string()).collect();
    let edge_of = |h: &str| hosts.iter().position(|x| x == h);
    let thresholds = s.thresholds();
    let total: i64 = thresholds.iter().sum();
    let shares: Vec<f64> = thresholds
        .iter()
        .map(|&t| t as f64 / total.max(1) as f64)
        .collect();
    let page_for = |player: &str, n: usize, tag: &str| {
        let file = if player == "dash" {
            "manifest.mpd"
        } else {
            "master.m3u8"
        };
        format!(
            "http://{}/player/play.html?player={player}&n={n}&tag={tag}&src=http://{}/play/pa/{file}",
            origin.server.addr, s.server.addr
        )
    };
    progress(&format!(
        "{} {} sessions on edges {names:?} (allocation {thresholds:?} streams)",
        cfg.sessions, cfg.player
    ));
    let start = now_ms();
    let browser = Browser::open(&page_for(&cfg.player, cfg.sessions, "demo"))?;
    let half = cfg.duration / 2;
    tokio::time::sleep(half).await;
    let before = players::sessions(&origin.reports(), "demo");
    let mut per_edge = vec![0usize; names.len()];
    for x in before.values() {
        if let Some(j) = x.frags.first().and_then(|f| edge_of(&f.1)) {
            per_edge[j] += 1;
        }
    }
    let busiest = (0..names.len())
        .max_by_key(|&j| (per_edge[j], std::cmp::Reverse(j)))
        .unwrap_or(0);
    let out_at = now_ms();
    s.set_out(&names[busiest], true);
    progress(&format!(
        "sessions per edge {per_edge:?}; {} taken out at {:.1} s",
        names[busiest],
        (out_at - start) as f64 / 1000.0
    ));
    tokio::time::sleep(cfg.duration - half).await;
    drop(browser);
    let after = players::sessions(&origin.reports(), "demo");
    let bins = cfg.duration.as_secs() as usize / 2 + 1;
    let mut timeline = vec![vec![0usize; names.len()]; bins];
    let mut sessions = Vec::new();
    for (id, x) in &after {
        let mut segments = BTreeMap::new();
        for (at, h) in &x.frags {
            let name = edge_of(h).map_or_else(|| h.clone(), |j| names[j].clone());
            *segments.entry(name).or_insert(0) += 1;
            if let Some(j) = edge_of(h) {
                let t = (at.saturating_sub(start) / 2000) as usize;
                if t < bins {
                    timeline[t][j] += 1;
                }
            }
        }
        let first = x.frags.first().and_then(|f| edge_of(&f.1));
        let switch_seconds = (first == Some(busiest))
            .then(|| {
                x.frags
                    .iter()
                    .find(|(at, h)| *at > out_at && edge_of(h) != Some(busiest))
                    .map(|(at, _)| (at - out_at) as f64 / 1000.0)
            })
            .flatten();
        sessions.push(SessionSummary {
            id: id.clone(),
            first_pathway: first.map_or_else(String::new, |j| names[j].clone()),
            startup_ms: x.startup_ms,
            stalls: x.stalls,
            played_seconds: x.played,
            switch_seconds,
            segments,
            fatal: x.fatal.clone(),
        });
    }
    let page = page_for(&cfg.player, 1, "person");
    let result = PlayersDemoResult {
        player: cfg.player.clone(),
        edges: names.clone(),
        expected_per_edge: shares.iter().map(|s| s * cfg.sessions as f64).collect(),
        thresholds,
        shares,
        sessions_per_edge: per_edge,
        taken_out: EDGES[busiest].0.to_string(),
        taken_out_at_seconds: (out_at - start) as f64 / 1000.0,
        sessions,
        timeline,
        page,
    };
    done(&result);
    if cfg.keep {
        s.set_out(&names[busiest], false);
        progress(&format!(
            "kept up until Ctrl-C; open in a browser:\n  {}\n  {}",
            page_for("hls", 1, "person"),
            page_for("dash", 1, "person")
        ));
        let _ = tokio::signal::ctrl_c().await;
    }
    Ok(result)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
