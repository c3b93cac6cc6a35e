//! Experiment `steering` (docs/steering.md#the-testbed-experiment): the steering policies
//! judged by what viewers experience, with real players and emulated sessions on pathways of
//! unequal capacity, one of which degrades mid-run.
//!
//! Every run starts the real servers in their namespaces (`cdnlab live origin` with the asset
//! and the player page, `cdnlab live edge` with admission on every edge node, `cdnlab live
//! steer --policy P` on the steering node); then, in the clients' namespace, the session
//! emulator ([`super::emulator`], `sessions` sessions of the library's player model) and one
//! headless Chromium per real player (hls.js, dash.js, Shaka Player on `player/play.html`),
//! all opening sessions at the steering server. At `degrade_at_s` the first edge's link to the
//! clients keeps `degrade` of its rate. Per policy, over `runs` runs: rebuffering ratio,
//! startup time, mean bitrate, switches, each edge's share of the segments, Jain's fairness
//! of the sessions' bitrates, and the reaction to the degradation, with 95% intervals; beside
//! them the simulator's (`cdnlab::sim::steering`) on the same pathways.
//!
//! Before the policy runs, the emulator is checked against each real player of `calibrate`:
//! the player alone, then one emulated session of its ABR rule alone, on the first edge whose
//! link follows `calibrate_rates` (three equal phases); their bitrate choices and buffer level
//! over time are compared against tolerances stated in [`CALIBRATION`].

use super::emulator::{self, Emulated};
use super::net::Testbed;
use super::spec::{Role, Spec};
use crate::players::{self, Browser};
use cdnlab::Named;
use cdnlab::stats::Summary;
use cdnlab::steer::player::Abr;
use cdnlab::steer::policy::Policy;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Every server's port.
const PORT: u16 = 8080;
/// TCP payload per full frame (MSS 1448 with timestamps in a 1514-byte frame).
const PAYLOAD: f64 = 1448.0 / 1514.0;
/// The page's players.
const PLAYERS: [(&str, Abr); 3] = [
    ("hls", Abr::Hlsjs),
    ("dash", Abr::Dashjs),
    ("shaka", Abr::Shaka),
];

/// The emulator against a real player, stated before the first calibration run: over the
/// segments both fetched, (1) their mean bitrates within 25% of the real player's (a rendition
/// step of the asset's ladder is 40-60%, so a model that picks one step off for a third of the
/// session fails); (2) the mean absolute difference of their buffer levels, sampled each
/// second from the real player's first frame, at most one segment (2 s); (3) stalls within
/// one of each other.
pub const CALIBRATION: &str =
    "mean bitrate within 25%, buffer level within 2 s on average, stalls within 1";
const CAL_BITRATE: f64 = 0.25;
const CAL_BUFFER_S: f64 = 2.0;
const CAL_STALLS: u32 = 1;

/// The `[experiment]` table with `kind = "steering"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Plan {
    /// Steering policies, one set of runs each.
    pub policies: Vec<String>,
    /// Runs per policy.
    pub runs: u32,
    /// Emulated sessions per run.
    pub sessions: usize,
    /// The emulated sessions' ABR rule: mixed (hls.js, dash.js, Shaka in turn) or one.
    pub abr: String,
    /// Real players per run (one session each): hls, dash, shaka.
    pub players: Vec<String>,
    /// Segments an emulated session plays (at most the asset's).
    pub segments: u32,
    /// A run's length; sessions still playing then are cut.
    pub seconds: f64,
    /// The emulated sessions start evenly over this many seconds.
    pub spread_s: f64,
    /// Buffer every player keeps ahead.
    pub buffer_s: f64,
    /// The steering manifests' TTL, and the steering server's window.
    pub ttl: u32,
    pub window_ms: u64,
    /// The share of its rate the first edge's link keeps from `degrade_at_s` (1: none).
    pub degrade: f64,
    pub degrade_at_s: f64,
    /// Real players the emulator is checked against (empty: no check).
    pub calibrate: Vec<String>,
    /// The first edge's link rate, bit/s, in each third of a calibration run.
    pub calibrate_rates: Vec<f64>,
    pub calibrate_seconds: f64,
    /// The emulated side of the calibration: `rule` (the player model's ABR rule); `greedy`
    /// is a wrong model (always the top rendition), to show the calibration can fail.
    pub calibrate_model: String,
    /// Simulated runs per policy.
    pub sim_runs: u32,
    /// The asset (media/make-asset.sh) and the player directory (with node_modules).
    pub media: PathBuf,
    pub player: PathBuf,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            policies: Policy::NAMES.iter().map(|s| s.to_string()).collect(),
            runs: 3,
            sessions: 30,
            abr: "mixed".into(),
            players: vec!["hls".into(), "dash".into(), "shaka".into()],
            segments: 30,
            seconds: 90.0,
            spread_s: 10.0,
            buffer_s: 8.0,
            ttl: 4,
            window_ms: 2000,
            degrade: 0.1,
            degrade_at_s: 25.0,
            calibrate: Vec::new(),
            calibrate_rates: vec![1.2e6, 0.35e6, 1.2e6],
            calibrate_seconds: 75.0,
            calibrate_model: "rule".into(),
            sim_runs: 20,
            media: "target/media".into(),
            player: "player".into(),
        }
    }
}

/// The nodes as the experiment sees them.
#[derive(Debug, Clone)]
pub struct Layout {
    pub origin: usize,
    pub steering: usize,
    /// The clients nodes, in the scenario's order: one population each, named as its node.
    pub clients: Vec<usize>,
    /// Edge nodes, in the scenario's order (the first degrades), and each one's pathway links:
    /// the first links of its routed paths to the clients nodes (one shared by every
    /// population, or one per population).
    pub edges: Vec<usize>,
    pub links: Vec<Vec<usize>>,
    pub policies: Vec<Policy>,
    pub abr: Vec<Abr>,
}

impl Plan {
    /// The plan of an `[experiment]` table, checked against `spec`.
    pub fn from_table(table: &toml::Table, spec: &Spec) -> Result<(Plan, Layout), crate::Error> {
        let path = &spec.source;
        let plan: Plan = super::spec::experiment_plan(table, path)?;
        let bad = |f: &str, v: &dyn std::fmt::Display, allowed: &str| {
            super::spec::bad_experiment(path, f, v, allowed)
        };
        let one = |role: Role, what: &str| -> Result<usize, crate::Error> {
            match spec.nodes_of(role)[..] {
                [i] => Ok(i),
                _ => Err(crate::Error::File {
                    path: path.clone(),
                    message: format!("experiment steering needs exactly one {what} node"),
                }),
            }
        };
        let origin = one(Role::Origin, "origin")?;
        let steering = one(Role::Steering, "steering")?;
        let clients = spec.nodes_of(Role::Clients);
        if !(1..=4).contains(&clients.len()) {
            return Err(crate::Error::File {
                path: path.clone(),
                message: format!(
                    "experiment steering needs one to four clients nodes (one population each), not {}",
                    clients.len()
                ),
            });
        }
        let edges = spec.nodes_of(Role::Edge);
        if !(2..=8).contains(&edges.len()) {
            return bad("edges", &edges.len(), "2 to 8 edge nodes");
        }
        // Edge m's pathway: the routed paths from it to each clients node. Their links are its
        // own: on no other edge's paths to the viewers, nor on the viewers' way to the origin
        // and the steering server, nor on its own way to the origin. The first link of each
        // path (one shared by the populations, or one per population) is the one that degrades
        // and whose rate is the pathway's capacity.
        let mut control: Vec<usize> = Vec::new();
        for &c in &clients {
            control.extend(spec.path(c, origin));
            control.extend(spec.path(c, steering));
        }
        let mut owned: Vec<Vec<usize>> = Vec::new();
        let mut links: Vec<Vec<usize>> = Vec::new();
        for &e in &edges {
            let mut of_edge: Vec<usize> = Vec::new();
            let mut all: Vec<usize> = Vec::new();
            for &c in &clients {
                let route = spec.path(e, c);
                let Some(&l) = route.first() else {
                    return Err(crate::Error::File {
                        path: path.clone(),
                        message: format!(
                            "experiment steering: edge {} cannot reach the clients node {}",
                            spec.nodes[e].name, spec.nodes[c].name
                        ),
                    });
                };
                if !of_edge.contains(&l) {
                    of_edge.push(l);
                }
                all.extend(route);
            }
            let fills = spec.path(e, origin);
            let clash = all.iter().find_map(|l| {
                if control.contains(l) {
                    Some((*l, "the viewers' way to the origin and the steering server"))
                } else if fills.contains(l) {
                    Some((*l, "its own way to the origin"))
                } else if owned.iter().any(|o| o.contains(l)) {
                    Some((*l, "another edge's way to the viewers"))
                } else {
                    None
                }
            });
            if let Some((l, what)) = clash {
                return Err(crate::Error::File {
                    path: path.clone(),
                    message: format!(
                        "experiment steering: edge {}'s way to the viewers shares the link {}-{} with {what} (each edge is a pathway: its links toward the viewers are its own)",
                        spec.nodes[e].name,
                        spec.nodes[spec.links[l].a].name,
                        spec.nodes[spec.links[l].b].name,
                    ),
                });
            }
            owned.push(all);
            links.push(of_edge);
        }
        let mut policies = Vec::new();
        for p in &plan.policies {
            policies.push(
                Policy::parse_name(p)
                    .map_err(|_| bad("policies", p, &Policy::NAMES.join(", ")).unwrap_err())?,
            );
        }
        if policies.is_empty() && plan.calibrate.is_empty() {
            return bad(
                "policies",
                &"[]",
                &format!(
                    "{} (empty only with players to calibrate)",
                    Policy::NAMES.join(", ")
                ),
            );
        }
        if !matches!(plan.calibrate_model.as_str(), "rule" | "greedy") {
            return bad("calibrate_model", &plan.calibrate_model, "rule, greedy");
        }
        let abr = match plan.abr.as_str() {
            "mixed" => Abr::ALL.to_vec(),
            a => vec![
                Abr::parse_name(a)
                    .map_err(|_| bad("abr", &a, "mixed, hlsjs, dashjs, shaka").unwrap_err())?,
            ],
        };
        for (field, list) in [("players", &plan.players), ("calibrate", &plan.calibrate)] {
            for (i, p) in list.iter().enumerate() {
                if !PLAYERS.iter().any(|(n, _)| n == p) {
                    return bad(field, p, "hls, dash, shaka");
                }
                // A page's reports are told apart by player: one session each.
                if list[..i].contains(p) {
                    return bad(field, p, "each of hls, dash, shaka at most once");
                }
            }
        }
        if !(1..=50).contains(&plan.runs) {
            return bad("runs", &plan.runs, "1 to 50");
        }
        if !(1..=500).contains(&plan.sessions) {
            return bad("sessions", &plan.sessions, "1 to 500");
        }
        if !(1..=10_000).contains(&plan.segments) {
            return bad("segments", &plan.segments, "1 to 10000");
        }
        let secs = |f: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                super::spec::bad_experiment(path, f, v, &format!("{lo} to {hi} seconds"))
            }
        };
        secs("seconds", plan.seconds, 5.0, 3600.0)?;
        secs("spread_s", plan.spread_s, 0.0, plan.seconds)?;
        secs("buffer_s", plan.buffer_s, 4.0, 120.0)?;
        secs("degrade_at_s", plan.degrade_at_s, 0.0, plan.seconds)?;
        secs("calibrate_seconds", plan.calibrate_seconds, 10.0, 600.0)?;
        if !(1..=3600).contains(&plan.ttl) {
            return bad("ttl", &plan.ttl, "1 to 3600 seconds");
        }
        if !(100..=60_000).contains(&plan.window_ms) {
            return bad("window_ms", &plan.window_ms, "100 to 60000");
        }
        if !(plan.degrade > 0.0 && plan.degrade <= 1.0) {
            return bad("degrade", &plan.degrade, "a share of the rate in (0, 1]");
        }
        if plan.calibrate_rates.len() != 3
            || plan
                .calibrate_rates
                .iter()
                .any(|r| !(r.is_finite() && (1e4..=1e10).contains(r)))
        {
            return bad(
                "calibrate_rates",
                &format!("{:?}", plan.calibrate_rates),
                "three rates, bit/s, from 10000 to 1e10",
            );
        }
        if plan.sim_runs > 10_000 {
            return bad("sim_runs", &plan.sim_runs, "0 to 10000");
        }
        let layout = Layout {
            origin,
            steering,
            clients,
            edges,
            links,
            policies,
            abr,
        };
        // The steering server's deployment, checked now (a clients node's name is a
        // population's; the capacities here are for some top rendition, the asset's later).
        crate::steer::Deployment::parse(&deployment(spec, &plan, &layout, 1e4)).map_err(|e| {
            crate::Error::File {
                path: path.clone(),
                message: format!("experiment steering: the steering server's deployment: {e}"),
            }
        })?;
        Ok((plan, layout))
    }
}

/// One viewer's session as measured, emulated or real.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Viewer {
    /// The ABR rule (emulated) or the player (real: `hls.js`, `dash.js`, `shaka`).
    pub kind: String,
    pub real: bool,
    /// Its population: the index of its clients node.
    #[serde(default)]
    pub population: usize,
    pub startup_s: Option<f64>,
    pub played_s: f64,
    pub stalled_s: f64,
    pub stalls: u32,
    pub mean_kbps: f64,
    pub switches: u32,
    /// (seconds from the run's start, edge index, rendition, bytes) of every segment.
    pub segments: Vec<(f64, usize, usize, u64)>,
    /// (seconds from the run's start, buffer s), one a second.
    pub buffer: Vec<(f64, f64)>,
    pub error: Option<String>,
}

impl Viewer {
    pub fn rebuffering(&self) -> f64 {
        let t = self.played_s + self.stalled_s;
        if t > 0.0 { self.stalled_s / t } else { 0.0 }
    }
}

/// One run of one policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub policy: String,
    pub run: u32,
    /// When the first edge's link degraded, seconds from the run's start.
    pub degraded_at_s: f64,
    pub viewers: Vec<Viewer>,
}

/// The emulator against one real player.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    pub player: String,
    pub real: Viewer,
    pub emulated: Viewer,
}

/// Segments of the asset by file name: (rendition, index), and the ladder in kbit/s.
pub struct AssetMap {
    pub names: HashMap<String, (usize, u32)>,
    pub ladder_kbps: Vec<f64>,
}

impl AssetMap {
    pub fn load(dir: &Path) -> Result<AssetMap, crate::Error> {
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| crate::Error::io(p.display().to_string(), e))
        };
        let bad = |e: String| crate::Error::Testbed(format!("the asset in {}: {e}", dir.display()));
        // A one-pathway session playlist of the packager's own, read as the emulator reads one.
        let asset = crate::media::Asset::load(dir).map_err(bad)?;
        let text = asset.hls(
            &[crate::media::Pathway {
                id: "x".into(),
                base: "http://x/".into(),
            }],
            "http://x/s",
        );
        let p = emulator::parse_multivariant(&text).map_err(bad)?;
        let mut names = HashMap::new();
        for (r, (_, media)) in p.renditions.iter().enumerate() {
            let (segs, _) = emulator::parse_media(&read(media)?).map_err(bad)?;
            for (k, s) in segs.into_iter().enumerate() {
                names.insert(s, (r, k as u32));
            }
        }
        Ok(AssetMap {
            names,
            ladder_kbps: p
                .renditions
                .iter()
                .map(|(b, _)| *b as f64 / 1000.0)
                .collect(),
        })
    }

    fn rendition(&self, url: &str) -> Option<(usize, u32)> {
        let file = url.split('?').next()?.rsplit('/').next()?;
        self.names.get(file).copied()
    }
}

fn at(spec: &Spec, i: usize) -> SocketAddr {
    SocketAddr::from((spec.nodes[i].address, PORT))
}

fn secret(spec: &Spec) -> String {
    format!(
        "testbed-{:016x}",
        cdnlab::rng::splitmix64(spec.seed ^ 0x57ee)
    )
}

/// Edge `m`'s links' rates together, bit/s: its pathway's provisioned rate.
pub fn edge_rate(spec: &Spec, layout: &Layout, m: usize) -> f64 {
    layout.links[m].iter().map(|&l| spec.links[l].rate).sum()
}

/// Streams of the top rendition edge `m`'s links carry (its provisioned capacity).
fn capacity(spec: &Spec, layout: &Layout, m: usize, top_kbps: f64) -> i64 {
    ((edge_rate(spec, layout, m) * PAYLOAD / (top_kbps * 1000.0)).floor() as i64).max(1)
}

/// Population `p`'s emulated sessions and real players: session k and player k belong to
/// population k mod P, as in the simulator.
fn of_population(n: usize, pops: usize, p: usize) -> usize {
    (n + pops - 1 - p) / pops
}

/// The deployment file of the steering server and the edges: a population per clients node,
/// named as the node, in a metro of its own; edge m in a metro of its own, linked to each
/// population's with the one-way delay of their testbed path (costs: `delay`, so `nearest` and
/// the allocation prefer the closest); capacity from the edge's links' rates; each
/// population's demand its sessions and real players.
fn deployment(spec: &Spec, plan: &Plan, layout: &Layout, top_kbps: f64) -> String {
    let pops = layout.clients.len();
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    let mut populations = Vec::new();
    for (p, &c) in layout.clients.iter().enumerate() {
        let name = &spec.nodes[c].name;
        nodes.push(serde_json::json!({"id": name, "pos": [0, p]}));
        let demand =
            of_population(plan.sessions, pops, p) + of_population(plan.players.len(), pops, p);
        populations.push(serde_json::json!({"name": name, "metro": name, "demand": demand}));
    }
    let servers: Vec<serde_json::Value> = layout
        .edges
        .iter()
        .enumerate()
        .map(|(m, &e)| {
            let metro = format!("metro-{}", spec.nodes[e].name);
            nodes.push(serde_json::json!({"id": metro, "pos": [1, m]}));
            for &c in &layout.clients {
                let ms = spec.path_delay(e, c).as_secs_f64() * 1e3;
                links.push(
                    serde_json::json!({"source": spec.nodes[c].name, "target": metro, "delay": ms}),
                );
            }
            serde_json::json!({
                "name": spec.nodes[e].name,
                "metro": metro,
                "addr": at(spec, e).to_string(),
                "capacity": capacity(spec, layout, m, top_kbps),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "secret": secret(spec),
        "network": {"nodes": nodes, "edges": links},
        "cost": "delay",
        "servers": servers,
        "populations": populations,
    }))
    .expect("json")
}

/// The servers of one run.
struct Servers {
    _origin: super::net::Process,
    edges: Vec<super::net::Process>,
    _steering: super::net::Process,
}

fn start_servers(
    tb: &Testbed,
    plan: &Plan,
    layout: &Layout,
    file: &Path,
    policy: Policy,
) -> Result<Servers, crate::Error> {
    let spec = &tb.spec;
    let ready = Duration::from_secs(10);
    let s = |x: &dyn ToString| x.to_string();
    let origin = tb.start(
        layout.origin,
        &[
            s(&"live"),
            s(&"origin"),
            s(&"--listen"),
            s(&at(spec, layout.origin)),
            s(&"--media"),
            s(&plan.media.display()),
            s(&"--player"),
            s(&plan.player.display()),
        ],
        "origin on",
        ready,
    )?;
    let steering = tb.start(
        layout.steering,
        &[
            s(&"live"),
            s(&"steer"),
            s(&"--topology"),
            s(&file.display()),
            s(&"--listen"),
            s(&at(spec, layout.steering)),
            s(&"--ttl"),
            s(&plan.ttl),
            s(&"--window-ms"),
            s(&plan.window_ms),
            s(&"--media"),
            s(&plan.media.display()),
            s(&"--policy"),
            s(&policy.name()),
        ],
        "steering on",
        ready,
    )?;
    let mut edges = Vec::new();
    for &e in &layout.edges {
        edges.push(tb.start(
            e,
            &[
                s(&"live"),
                s(&"edge"),
                s(&"--origin"),
                s(&at(spec, layout.origin)),
                s(&"--listen"),
                s(&at(spec, e)),
                s(&"--admission"),
                s(&file.display()),
                s(&"--steering"),
                s(&at(spec, layout.steering)),
            ],
            "edge on",
            ready,
        )?);
    }
    Ok(Servers {
        _origin: origin,
        edges,
        _steering: steering,
    })
}

/// The emulator in population `p`'s namespace, started now; with `reports`, it fetches the
/// page reports at the end.
#[allow(clippy::too_many_arguments)]
fn start_emulator(
    tb: &Testbed,
    plan: &Plan,
    layout: &Layout,
    p: usize,
    sessions: usize,
    abr: &[Abr],
    seconds: f64,
    greedy: bool,
    reports: bool,
) -> Result<std::process::Child, crate::Error> {
    let spec = &tb.spec;
    let abr: Vec<&str> = abr.iter().map(|a| a.name()).collect();
    let clients = layout.clients[p];
    let mut cmd = tb.cdnlab(clients);
    cmd.args(["testbed", "probe", "steering"])
        .arg("--play")
        .arg(format!(
            "http://{}/play/{}/master.m3u8",
            at(spec, layout.steering),
            spec.nodes[clients].name
        ))
        .args(["--sessions", &sessions.to_string()])
        .args(["--abr", &abr.join(",")])
        .args(["--segments", &plan.segments.to_string()])
        .args(["--buffer-s", &plan.buffer_s.to_string()])
        .args(["--spread-s", &plan.spread_s.to_string()])
        .args(["--seconds", &seconds.to_string()]);
    if reports {
        cmd.arg("--reports")
            .arg(format!("http://{}/player/reports", at(spec, layout.origin)));
    }
    if greedy {
        cmd.arg("--greedy");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| crate::Error::io("the session emulator", e))
}

fn finish_emulator(child: std::process::Child) -> Result<emulator::Output, crate::Error> {
    let done = child
        .wait_with_output()
        .map_err(|e| crate::Error::io("the session emulator", e))?;
    let text = String::from_utf8_lossy(&done.stdout);
    match text.lines().last() {
        Some(line) if done.status.success() => serde_json::from_str(line).map_err(|e| {
            crate::Error::Testbed(format!(
                "the session emulator said something unreadable ({e})"
            ))
        }),
        _ => Err(crate::Error::Testbed(format!(
            "the session emulator failed ({})",
            done.status
        ))),
    }
}

/// Headless Chromium in population `p`'s namespace on the player page: one session of
/// `player`.
fn open_player(
    tb: &Testbed,
    plan: &Plan,
    layout: &Layout,
    p: usize,
    player: &str,
    tag: &str,
) -> Result<Browser, crate::Error> {
    let spec = &tb.spec;
    let clients = layout.clients[p];
    let file = if player == "dash" {
        crate::media::DASH_MANIFEST
    } else {
        crate::media::HLS_MANIFEST
    };
    let url = format!(
        "http://{}/player/play.html?player={player}&n=1&tag={tag}&buffer={}&src=http://{}/play/{}/{file}",
        at(spec, layout.origin),
        plan.buffer_s,
        at(spec, layout.steering),
        spec.nodes[clients].name
    );
    // The page is served over plain HTTP from a namespace address: treated as the secure
    // context it would be over HTTPS (Shaka's CMCD asks for crypto.randomUUID()).
    let mut chromium = tb.command(clients, "chromium");
    chromium.arg(format!(
        "--unsafely-treat-insecure-origin-as-secure=http://{}",
        at(spec, layout.origin)
    ));
    Browser::launch(chromium, &url)
}

fn edge_of(spec: &Spec, layout: &Layout, host: &str) -> Option<usize> {
    layout
        .edges
        .iter()
        .position(|&e| at(spec, e).to_string() == host || spec.nodes[e].name == host)
}

/// An emulated session as a viewer, its times from the run's start (`offset` s after it).
fn emulated_viewer(
    spec: &Spec,
    layout: &Layout,
    e: &Emulated,
    offset: f64,
    population: usize,
) -> Viewer {
    Viewer {
        kind: e.abr.clone(),
        real: false,
        population,
        startup_s: e.startup_s,
        played_s: e.played_s,
        stalled_s: e.stalled_s,
        stalls: e.stalls,
        mean_kbps: e.mean_kbps,
        switches: e.switches,
        segments: e
            .fetches
            .iter()
            .map(|f| {
                (
                    f.end_s + offset,
                    edge_of(spec, layout, &f.pathway).unwrap_or(usize::MAX),
                    f.rendition,
                    f.bytes,
                )
            })
            .collect(),
        buffer: e.buffer.iter().map(|&(t, b)| (t + offset, b)).collect(),
        error: e.error.clone(),
    }
}

/// A real player's session from the page's reports; times from `t0_ms` (Unix ms).
pub fn real_viewer(
    kind: &str,
    s: &players::SessionReport,
    asset: &AssetMap,
    hosts: impl Fn(&str) -> Option<usize>,
    t0_ms: u64,
) -> Viewer {
    let secs = |ms: u64| (ms as f64 - t0_ms as f64) / 1000.0;
    let mut segments = Vec::new();
    let mut kbps = Vec::new();
    for ((ms, host), url) in s.frags.iter().zip(&s.urls) {
        let r = asset.rendition(url).map_or(0, |x| x.0);
        kbps.push(asset.ladder_kbps.get(r).copied().unwrap_or(0.0));
        segments.push((secs(*ms), hosts(host).unwrap_or(usize::MAX), r, 0));
    }
    let switches = segments.windows(2).filter(|w| w[0].2 != w[1].2).count() as u32;
    // Stalled time: wall time the playhead did not follow, between samples after the first
    // frame, up to the end of the media.
    let mut samples = s.samples.clone();
    samples.sort_by_key(|x| x.0);
    let end = samples.iter().map(|x| x.1).fold(0.0, f64::max);
    let (mut played, mut stalled) = (0.0, 0.0);
    for w in samples.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.1 <= 0.0 || a.1 >= end - 0.05 {
            continue;
        }
        let wall = (b.0 as f64 - a.0 as f64) / 1000.0;
        let adv = (b.1 - a.1).max(0.0);
        played += adv;
        stalled += (wall - adv).max(0.0);
    }
    Viewer {
        kind: kind.to_string(),
        real: true,
        population: 0,
        startup_s: s.started.then_some(s.startup_ms as f64 / 1000.0),
        played_s: played,
        stalled_s: stalled,
        stalls: s.stalls as u32,
        mean_kbps: if kbps.is_empty() {
            0.0
        } else {
            kbps.iter().sum::<f64>() / kbps.len() as f64
        },
        switches,
        segments,
        buffer: samples.iter().map(|x| (secs(x.0), x.2)).collect(),
        error: s.fatal.first().cloned(),
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs the calibration and every policy's runs. The deployment file is written into `dir`.
pub fn emulate(
    tb: &Testbed,
    plan: &Plan,
    layout: &Layout,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Calibration>, Vec<Run>), crate::Error> {
    let spec = &tb.spec;
    let asset = AssetMap::load(&plan.media)?;
    crate::media::Files::player(&plan.player).map_err(|e| {
        crate::Error::Testbed(format!(
            "{e} (the players: npm ci --prefix {})",
            plan.player.display()
        ))
    })?;
    if (!plan.players.is_empty() || !plan.calibrate.is_empty()) && !players::chromium_available() {
        return Err(crate::Error::Testbed(
            "chromium is missing (apt-get install chromium)".into(),
        ));
    }
    let top = asset.ladder_kbps.last().copied().unwrap_or(1.0);
    let target = reaction_target(spec, plan, layout, top);
    let file = dir.join("deployment.json");
    std::fs::write(&file, deployment(spec, plan, layout, top))
        .map_err(|e| crate::Error::io(file.display().to_string(), e))?;
    let hosts = |h: &str| edge_of(spec, layout, h);
    let pops = layout.clients.len();
    let mut calibrations = Vec::new();
    for player in &plan.calibrate {
        let abr = PLAYERS.iter().find(|p| p.0 == player).expect("checked").1;
        progress(&format!(
            "calibration: {player} alone, then one emulated {} session, on {} at {:?} bit/s",
            abr.name(),
            spec.nodes[layout.edges[0]].name,
            plan.calibrate_rates
        ));
        let mut pair = Vec::new();
        for real in [true, false] {
            set_edge0(tb, layout, |_| plan.calibrate_rates[0])?;
            let servers = start_servers(tb, plan, layout, &file, Policy::Priority)?;
            let t0 = unix_ms();
            let start = Instant::now();
            let tag = format!("cal-{player}");
            let browser = if real {
                Some(open_player(tb, plan, layout, 0, player, &tag)?)
            } else {
                None
            };
            let child = start_emulator(
                tb,
                plan,
                layout,
                0,
                usize::from(!real),
                &[abr],
                plan.calibrate_seconds,
                plan.calibrate_model == "greedy",
                true,
            )?;
            for k in 1..3 {
                sleep_until(start, plan.calibrate_seconds * k as f64 / 3.0);
                set_edge0(tb, layout, |_| plan.calibrate_rates[k])?;
            }
            let out = finish_emulator(child)?;
            drop(browser);
            drop(servers);
            let v = if real {
                let s = players::sessions(&batches(&out), &tag);
                let (_, s) = s
                    .iter()
                    .find(|(k, _)| k.as_str() != "(no session)")
                    .ok_or_else(|| {
                        crate::Error::Testbed(format!(
                            "calibration: the real {player} player reported no session ({s:?})"
                        ))
                    })?;
                real_viewer(player, s, &asset, hosts, t0)
            } else {
                let e = out.sessions.first().ok_or_else(|| {
                    crate::Error::Testbed("calibration: the emulator ran no session".into())
                })?;
                emulated_viewer(
                    spec,
                    layout,
                    e,
                    (out.start_unix_ms as f64 - t0 as f64) / 1e3,
                    0,
                )
            };
            pair.push(v);
        }
        let emulated = pair.pop().expect("two");
        let real = pair.pop().expect("two");
        let c = Calibration {
            player: player.clone(),
            real,
            emulated,
        };
        let j = judge_calibration(&c);
        progress(&format!(
            "  real {:.0} kbit/s, {} stalls; emulated {:.0} kbit/s, {} stalls; buffer gap {:.2} s: {}",
            c.real.mean_kbps,
            c.real.stalls,
            c.emulated.mean_kbps,
            c.emulated.stalls,
            j.buffer_gap_s,
            if j.agree { "agree" } else { "DISAGREE" }
        ));
        calibrations.push(c);
    }
    set_edge0(tb, layout, |r| r)?;
    let mut runs = Vec::new();
    for &policy in &layout.policies {
        for r in 0..plan.runs {
            progress(&format!(
                "{} run {}/{}: {} emulated sessions ({}) and real players {:?}, {} degrades to {:.0}% at {} s",
                policy.name(),
                r + 1,
                plan.runs,
                plan.sessions,
                plan.abr,
                plan.players,
                spec.nodes[layout.edges[0]].name,
                100.0 * plan.degrade,
                plan.degrade_at_s
            ));
            set_edge0(tb, layout, |r| r)?;
            let mut servers = start_servers(tb, plan, layout, &file, policy)?;
            let t0 = unix_ms();
            let start = Instant::now();
            let tag = format!("{}-{r}", policy.name());
            // One emulator per population; the first fetches the pages' reports.
            let mut children = Vec::new();
            for p in 0..pops {
                let n = of_population(plan.sessions, pops, p);
                if n > 0 || p == 0 {
                    children.push((
                        p,
                        start_emulator(
                            tb,
                            plan,
                            layout,
                            p,
                            n,
                            &layout.abr,
                            plan.seconds,
                            false,
                            p == 0,
                        )?,
                    ));
                }
            }
            let mut browsers = Vec::new();
            for (k, name) in plan.players.iter().enumerate() {
                browsers.push(open_player(
                    tb,
                    plan,
                    layout,
                    k % pops,
                    name,
                    &format!("{tag}-{name}"),
                )?);
            }
            let mut degraded_at_s = f64::INFINITY;
            if plan.degrade < 1.0 {
                sleep_until(start, plan.degrade_at_s);
                set_edge0(tb, layout, |r| r * plan.degrade)?;
                degraded_at_s = start.elapsed().as_secs_f64();
            }
            let mut outs = Vec::new();
            for (p, child) in children {
                outs.push((p, finish_emulator(child)?));
            }
            drop(browsers);
            for p in servers.edges.iter_mut() {
                if !p.alive() {
                    return Err(crate::Error::Testbed(format!("{} has stopped", p.what)));
                }
            }
            drop(servers);
            let mut viewers: Vec<Viewer> = Vec::new();
            for (p, out) in &outs {
                let offset = (out.start_unix_ms as f64 - t0 as f64) / 1e3;
                viewers.extend(
                    out.sessions
                        .iter()
                        .map(|e| emulated_viewer(spec, layout, e, offset, *p)),
                );
            }
            let reports = batches(&outs[0].1);
            for (k, name) in plan.players.iter().enumerate() {
                let s = players::sessions(&reports, &format!("{tag}-{name}"));
                match s.iter().find(|(k, _)| k.as_str() != "(no session)") {
                    Some((_, s)) => viewers.push(Viewer {
                        population: k % pops,
                        ..real_viewer(name, s, &asset, hosts, t0)
                    }),
                    None => progress(&format!(
                        "  the real {name} player reported no session: {s:?}"
                    )),
                }
            }
            let run = Run {
                policy: policy.name().into(),
                run: r,
                degraded_at_s,
                viewers,
            };
            let m = metrics(&run, layout, plan, target);
            progress(&format!(
                "  rebuffering {:.3}, startup {:.1} s, bitrate {:.0} kbit/s, reaction {:.0} s, edge shares {:?}",
                m.rebuffering,
                m.startup_s,
                m.bitrate_kbps,
                m.reaction_s,
                m.edge_share
                    .iter()
                    .map(|x| (x * 100.0).round() / 100.0)
                    .collect::<Vec<_>>()
            ));
            runs.push(run);
        }
    }
    set_edge0(tb, layout, |r| r)?;
    Ok((calibrations, runs))
}

/// Sets each of the first edge's links (the pathway that degrades) to `rate` of its
/// configured rate.
fn set_edge0(tb: &Testbed, layout: &Layout, rate: impl Fn(f64) -> f64) -> Result<(), crate::Error> {
    for &l in &layout.links[0] {
        set_rate(tb, l, rate(tb.spec.links[l].rate))?;
    }
    Ok(())
}

/// Changes link `l`'s rate, both directions, keeping its queue: the link that degrades. The
/// tbf is the one `Testbed::up` installs (tc-tbf(8): a bucket of one millisecond at the rate,
/// at least two full frames; `limit` the link's queue), changed in place. It lives here rather
/// than in net.rs while the emulation record's fingerprints include net.rs (docs/testbed.md).
fn set_rate(tb: &Testbed, l: usize, rate: f64) -> Result<(), crate::Error> {
    let queue = tb.spec.links[l].queue;
    let burst = ((rate / 8.0 / 1e3) as u64).max(2 * super::spec::FRAME_BYTES);
    let ns = super::net::link_ns(&tb.run, l);
    let tc = super::net::which("tc").unwrap_or_else(|| "tc".into());
    for dev in ["wa", "wb"] {
        let out = std::process::Command::new(&tc)
            .args(["-n", &ns, "qdisc", "change", "dev", dev, "root", "tbf"])
            .args(["rate", &format!("{}bit", rate.round() as u64)])
            .args(["burst", &burst.to_string(), "limit", &queue.to_string()])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| crate::Error::io("tc qdisc change", e))?;
        if !out.status.success() {
            return Err(crate::Error::Testbed(format!(
                "tc qdisc change on link {l} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    Ok(())
}

/// The origin's report batches the emulator fetched.
fn batches(out: &emulator::Output) -> Vec<serde_json::Value> {
    out.reports
        .as_ref()
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default()
}

fn sleep_until(start: Instant, t: f64) {
    let at = start + Duration::from_secs_f64(t.max(0.0));
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// What one run measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    pub rebuffering: f64,
    pub startup_s: f64,
    pub bitrate_kbps: f64,
    pub switches: f64,
    /// Jain's index of the sessions' mean bitrates.
    pub fairness: f64,
    /// Each edge's share of the segments.
    pub edge_share: Vec<f64>,
    /// Of the segments fetched after the degradation, the share the first edge served.
    pub degraded_share: f64,
    /// From the degradation until the first edge's share of the sessions fetching is at most
    /// [`reaction_target`] (the time left if never).
    pub reaction_s: f64,
    /// The real players' rebuffering and bitrate, and the emulated sessions'.
    pub real_rebuffering: f64,
    pub real_bitrate_kbps: f64,
    pub emulated_rebuffering: f64,
    pub emulated_bitrate_kbps: f64,
    /// Sessions that never played.
    pub never_played: u32,
    /// Each population's mean rebuffering and mean bitrate, and the largest minus the smallest
    /// population's mean bitrate (the simulator's `population_gap_kbps`; 0 with one).
    pub population_rebuffering: Vec<f64>,
    pub population_bitrate_kbps: Vec<f64>,
    pub population_gap_kbps: f64,
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { f64::NAN } else { s / n as f64 }
}

/// Jain's fairness index of `xs` (1: all equal).
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let q: f64 = xs.iter().map(|x| x * x).sum();
    if q > 0.0 {
        s * s / (xs.len() as f64 * q)
    } else {
        1.0
    }
}

/// The capacity share of edge 0 after the degradation: its rate times `degrade` over all.
pub fn degraded_capacity_share(rates: &[f64], degrade: f64) -> f64 {
    let d = rates[0] * degrade;
    d / (d + rates[1..].iter().sum::<f64>())
}

/// The first edge's share of the sessions a reaction must reach: its share of the capacity
/// after the degradation, or, where the other edges' admission slots cannot take the rest,
/// the least share they leave it.
pub fn reaction_target(spec: &Spec, plan: &Plan, layout: &Layout, top_kbps: f64) -> f64 {
    let rates: Vec<f64> = (0..layout.edges.len())
        .map(|m| edge_rate(spec, layout, m))
        .collect();
    let others: i64 = (1..layout.edges.len())
        .map(|m| capacity(spec, layout, m, top_kbps))
        .sum();
    let sessions = (plan.sessions + plan.players.len()) as f64;
    degraded_capacity_share(&rates, plan.degrade).max(1.0 - others as f64 / sessions)
}

pub fn metrics(run: &Run, layout: &Layout, plan: &Plan, target: f64) -> Metrics {
    let edges = layout.edges.len();
    let v = &run.viewers;
    let played: Vec<&Viewer> = v.iter().filter(|x| x.startup_s.is_some()).collect();
    let mut per_edge = vec![0usize; edges];
    let (mut after, mut after0) = (0usize, 0usize);
    for x in v {
        for &(t, e, _, _) in &x.segments {
            if e < edges {
                per_edge[e] += 1;
                if t >= run.degraded_at_s {
                    after += 1;
                    after0 += usize::from(e == 0);
                }
            }
        }
    }
    let total = per_edge.iter().sum::<usize>().max(1);
    // Reaction: each second after the degradation, the sessions still fetching (a segment
    // within the last 3 s) and where their latest segment came from.
    let mut reaction = plan.seconds - run.degraded_at_s.min(plan.seconds);
    if run.degraded_at_s.is_finite() {
        let mut t = run.degraded_at_s;
        while t < plan.seconds {
            let (mut on0, mut n) = (0usize, 0usize);
            for x in v {
                if let Some(&(ts, e, _, _)) = x.segments.iter().rev().find(|s| s.0 <= t)
                    && t - ts <= 3.0 * 2.0
                {
                    n += 1;
                    on0 += usize::from(e == 0);
                }
            }
            if n > 0 && (on0 as f64) / (n as f64) <= target + 1e-9 {
                reaction = t - run.degraded_at_s;
                break;
            }
            t += 1.0;
        }
    }
    let of = |real: bool, f: fn(&Viewer) -> f64| {
        mean(played.iter().filter(|x| x.real == real).map(|x| f(x)))
    };
    let of_pop = |p: usize, f: fn(&Viewer) -> f64| {
        mean(played.iter().filter(|x| x.population == p).map(|x| f(x)))
    };
    let pops = layout.clients.len();
    let population_bitrate_kbps: Vec<f64> = (0..pops).map(|p| of_pop(p, |x| x.mean_kbps)).collect();
    let seen: Vec<f64> = population_bitrate_kbps
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    Metrics {
        rebuffering: mean(played.iter().map(|x| x.rebuffering())),
        startup_s: mean(played.iter().filter_map(|x| x.startup_s)),
        bitrate_kbps: mean(played.iter().map(|x| x.mean_kbps)),
        switches: mean(played.iter().map(|x| x.switches as f64)),
        fairness: jain(&played.iter().map(|x| x.mean_kbps).collect::<Vec<_>>()),
        edge_share: per_edge.iter().map(|&c| c as f64 / total as f64).collect(),
        degraded_share: if after > 0 {
            after0 as f64 / after as f64
        } else {
            0.0
        },
        reaction_s: reaction,
        real_rebuffering: of(true, Viewer::rebuffering),
        real_bitrate_kbps: of(true, |x| x.mean_kbps),
        emulated_rebuffering: of(false, Viewer::rebuffering),
        emulated_bitrate_kbps: of(false, |x| x.mean_kbps),
        never_played: (v.len() - played.len()) as u32,
        population_rebuffering: (0..pops).map(|p| of_pop(p, Viewer::rebuffering)).collect(),
        population_gap_kbps: if seen.is_empty() {
            f64::NAN
        } else {
            seen.iter().copied().fold(f64::MIN, f64::max)
                - seen.iter().copied().fold(f64::MAX, f64::min)
        },
        population_bitrate_kbps,
    }
}

/// The emulator against a real player, judged by [`CALIBRATION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CalibrationVerdict {
    pub player: String,
    pub real_kbps: f64,
    pub emulated_kbps: f64,
    pub bitrate_gap: f64,
    pub buffer_gap_s: f64,
    pub real_stalls: u32,
    pub emulated_stalls: u32,
    /// Segments each fetched, and the share of segment indices both fetched at one rendition.
    pub real_segments: usize,
    pub emulated_segments: usize,
    pub same_rendition: f64,
    pub agree: bool,
}

pub fn judge_calibration(c: &Calibration) -> CalibrationVerdict {
    let n = c.real.segments.len().min(c.emulated.segments.len());
    let (r, e) = (c.real.mean_kbps, c.emulated.mean_kbps);
    let same = if n == 0 {
        0.0
    } else {
        (0..n)
            .filter(|&k| c.real.segments[k].2 == c.emulated.segments[k].2)
            .count() as f64
            / n as f64
    };
    // Buffer levels each second from the real player's first frame (its samples are already
    // one a second), against the emulated session's sample nearest in time after its own
    // first frame.
    let first = |v: &Viewer| v.buffer.iter().find(|x| x.1 > 0.0).map(|x| x.0);
    let gap = match (first(&c.real), first(&c.emulated)) {
        (Some(fr), Some(fe)) => {
            let mut diffs = Vec::new();
            for &(t, b) in c.real.buffer.iter().filter(|x| x.0 >= fr) {
                let te = fe + (t - fr);
                if let Some(&(_, be)) = c
                    .emulated
                    .buffer
                    .iter()
                    .min_by(|x, y| (x.0 - te).abs().total_cmp(&(y.0 - te).abs()))
                    .filter(|x| (x.0 - te).abs() <= 1.0)
                {
                    diffs.push((b - be).abs());
                }
            }
            mean(diffs.into_iter())
        }
        _ => f64::INFINITY,
    };
    let bitrate_gap = if r > 0.0 {
        (e - r).abs() / r
    } else {
        f64::INFINITY
    };
    CalibrationVerdict {
        player: c.player.clone(),
        real_kbps: r,
        emulated_kbps: e,
        bitrate_gap,
        buffer_gap_s: gap,
        real_stalls: c.real.stalls,
        emulated_stalls: c.emulated.stalls,
        real_segments: c.real.segments.len(),
        emulated_segments: c.emulated.segments.len(),
        same_rendition: same,
        agree: bitrate_gap <= CAL_BITRATE
            && gap <= CAL_BUFFER_S
            && c.real.stalls.abs_diff(c.emulated.stalls) <= CAL_STALLS,
    }
}

/// Per policy: each metric over the runs.
#[derive(Debug, Clone)]
pub struct PolicySummary {
    pub policy: String,
    pub runs: usize,
    pub metrics: BTreeMap<String, Summary>,
    /// The simulator's, on the same pathways (None without `sim_runs`).
    pub simulated: BTreeMap<&'static str, Summary>,
    /// The first edge's share of the sessions its reaction was judged against.
    pub reaction_target: f64,
}

/// The metrics compared with the simulator, by name (the same in both).
const SIM_METRICS: [&str; 8] = [
    "rebuffering",
    "startup_s",
    "bitrate_kbps",
    "switches",
    "fairness",
    "population_gap_kbps",
    // The simulator's is of the bytes, the testbed's of the segments.
    "degraded_share",
    "reaction_s",
];

pub fn summarise(
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    runs: &[Run],
) -> Result<Vec<PolicySummary>, crate::Error> {
    let top = AssetMap::load(&plan.media)?
        .ladder_kbps
        .last()
        .copied()
        .unwrap_or(1.0);
    let target = reaction_target(spec, plan, layout, top);
    let mut out = Vec::new();
    for &policy in &layout.policies {
        let ms: Vec<Metrics> = runs
            .iter()
            .filter(|r| r.policy == policy.name())
            .map(|r| metrics(r, layout, plan, target))
            .collect();
        let mut metrics: BTreeMap<String, Summary> = BTreeMap::new();
        let col = |f: &dyn Fn(&Metrics) -> f64| -> Vec<f64> {
            ms.iter().map(f).filter(|x| x.is_finite()).collect()
        };
        metrics.insert("rebuffering".into(), Summary::of(&col(&|m| m.rebuffering)));
        metrics.insert("startup_s".into(), Summary::of(&col(&|m| m.startup_s)));
        metrics.insert(
            "bitrate_kbps".into(),
            Summary::of(&col(&|m| m.bitrate_kbps)),
        );
        metrics.insert("switches".into(), Summary::of(&col(&|m| m.switches)));
        metrics.insert("fairness".into(), Summary::of(&col(&|m| m.fairness)));
        metrics.insert(
            "degraded_share".into(),
            Summary::of(&col(&|m| m.degraded_share)),
        );
        metrics.insert("reaction_s".into(), Summary::of(&col(&|m| m.reaction_s)));
        metrics.insert(
            "real_rebuffering".into(),
            Summary::of(&col(&|m| m.real_rebuffering)),
        );
        metrics.insert(
            "real_bitrate_kbps".into(),
            Summary::of(&col(&|m| m.real_bitrate_kbps)),
        );
        metrics.insert(
            "emulated_rebuffering".into(),
            Summary::of(&col(&|m| m.emulated_rebuffering)),
        );
        metrics.insert(
            "emulated_bitrate_kbps".into(),
            Summary::of(&col(&|m| m.emulated_bitrate_kbps)),
        );
        metrics.insert(
            "never_played".into(),
            Summary::of(&col(&|m| m.never_played as f64)),
        );
        for (j, _) in layout.edges.iter().enumerate() {
            metrics.insert(
                format!("edge{j}_share"),
                Summary::of(&col(&|m| m.edge_share[j])),
            );
        }
        metrics.insert(
            "population_gap_kbps".into(),
            Summary::of(&col(&|m| m.population_gap_kbps)),
        );
        for p in 0..layout.clients.len() {
            metrics.insert(
                format!("pop{p}_rebuffering"),
                Summary::of(&col(&|m| m.population_rebuffering[p])),
            );
            metrics.insert(
                format!("pop{p}_bitrate_kbps"),
                Summary::of(&col(&|m| m.population_bitrate_kbps[p])),
            );
        }
        let simulated = simulate(spec, plan, layout, policy)?;
        out.push(PolicySummary {
            policy: policy.name().into(),
            runs: ms.len(),
            metrics,
            simulated,
            reaction_target: target,
        });
    }
    Ok(out)
}

/// The simulator's steering experiment on the testbed's pathways: the same sessions (emulated
/// and real), pathways, load (sessions x top bitrate over the links' payload capacity),
/// capacity skew (from the first two links' rates), degradation, TTL, buffer and segments.
/// Its ladder is its own (300 to 3000 kbit/s), so bitrates compare as shares of the top.
pub fn simulate(
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    policy: Policy,
) -> Result<BTreeMap<&'static str, Summary>, crate::Error> {
    use cdnlab::sim::{Experiment, Value, params::Params, steering};
    let mut out = BTreeMap::new();
    if plan.sim_runs == 0 {
        return Ok(out);
    }
    let asset = AssetMap::load(&plan.media)?;
    let top = asset.ladder_kbps.last().copied().unwrap_or(1.0);
    let rates: Vec<f64> = (0..layout.edges.len())
        .map(|m| edge_rate(spec, layout, m))
        .collect();
    let sessions = plan.sessions + plan.players.len();
    let capacity: f64 = rates.iter().sum::<f64>() * PAYLOAD / 1000.0;
    let load = sessions as f64 * top / capacity;
    let skew = (rates[1] / rates[0]).clamp(0.01, 0.99);
    let rtt_ms = 2e3
        * spec
            .path_delay(layout.edges[0], layout.clients[0])
            .as_secs_f64();
    let mut given: BTreeMap<String, Value> = BTreeMap::new();
    let mut set = |k: &str, v: Value| given.insert(k.to_string(), v);
    set("policy", Value::Text(policy.name().into()));
    set("abr", Value::Text(plan.abr.clone()));
    set("sessions", Value::Int(sessions as i64));
    set("pathways", Value::Int(rates.len() as i64));
    set("populations", Value::Int(layout.clients.len() as i64));
    set("load", Value::Float(load));
    set("skew", Value::Float(skew));
    set("degrade", Value::Float(plan.degrade));
    set("degrade_at", Value::Float(plan.degrade_at_s));
    set("ttl", Value::Float(f64::from(plan.ttl)));
    set("segments", Value::Int(i64::from(plan.segments)));
    set("ramp", Value::Float(plan.spread_s));
    set("max_buffer", Value::Float(plan.buffer_s));
    set("rtt_ms", Value::Float(rtt_ms));
    let e = steering::SteeringExperiment;
    let p = Params::resolve(e.params(), &given).map_err(crate::Error::Config)?;
    let names: Vec<&str> = e.spec().metrics.iter().map(|m| m.name).collect();
    let mut cols: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for r in 0..plan.sim_runs {
        let mut rng = cdnlab::rng::stream(spec.seed, 0x57ee, u64::from(r));
        let v = e.run(&p, &mut rng).map_err(crate::Error::Config)?;
        for m in SIM_METRICS {
            let x = names
                .iter()
                .position(|n| *n == m)
                .map_or(f64::NAN, |i| v[i]);
            // The simulator's ladder tops at 3000 kbit/s: its bitrate as the testbed's ladder.
            let x = if m == "bitrate_kbps" || m == "population_gap_kbps" {
                x / steering::LADDER[steering::LADDER.len() - 1] * top
            } else {
                x
            };
            cols.entry(m).or_default().push(x);
        }
    }
    for (m, xs) in cols {
        out.insert(m, Summary::of(&xs));
    }
    Ok(out)
}

/// Each second of the runs of `policy`: the share of the sessions still fetching (a segment
/// within the last three segments' time) whose latest segment came from the first edge, over
/// all the policy's runs.
pub fn first_edge_timeline(runs: &[Run], policy: &str, plan: &Plan) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut t = 0.0;
    while t <= plan.seconds {
        let (mut on0, mut n) = (0usize, 0usize);
        for r in runs.iter().filter(|r| r.policy == policy) {
            for x in &r.viewers {
                if let Some(&(ts, e, _, _)) = x.segments.iter().rev().find(|s| s.0 <= t)
                    && t - ts <= 6.0
                {
                    n += 1;
                    on0 += usize::from(e == 0);
                }
            }
        }
        if n > 0 {
            out.push((t, on0 as f64 / n as f64));
        }
        t += 1.0;
    }
    out
}

/// The runs' viewers as CSV: one row per session.
pub fn viewers_table(runs: &[Run]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "policy",
        "run",
        "kind",
        "real",
        "population",
        "startup_s",
        "played_s",
        "stalled_s",
        "stalls",
        "rebuffering",
        "mean_kbps",
        "switches",
        "segments",
        "error",
    ])
    .expect("csv");
    for r in runs {
        for v in &r.viewers {
            w.write_record([
                r.policy.clone(),
                r.run.to_string(),
                v.kind.clone(),
                v.real.to_string(),
                v.population.to_string(),
                v.startup_s.map_or(String::new(), |s| format!("{s:.3}")),
                format!("{:.3}", v.played_s),
                format!("{:.3}", v.stalled_s),
                v.stalls.to_string(),
                format!("{:.4}", v.rebuffering()),
                format!("{:.1}", v.mean_kbps),
                v.switches.to_string(),
                v.segments.len().to_string(),
                v.error.clone().unwrap_or_default(),
            ])
            .expect("csv");
        }
    }
    w.into_inner().expect("csv")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn viewer(real: bool, segs: Vec<(f64, usize, usize, u64)>, stalled: f64) -> Viewer {
        Viewer {
            kind: "hlsjs".into(),
            real,
            population: 0,
            startup_s: Some(1.0),
            played_s: 50.0,
            stalled_s: stalled,
            stalls: u32::from(stalled > 0.0),
            mean_kbps: 250.0,
            switches: 0,
            segments: segs,
            buffer: Vec::new(),
            error: None,
        }
    }

    /// Two edges and `pops` populations (node indices are made up).
    fn layout(pops: usize) -> Layout {
        Layout {
            origin: 0,
            steering: 0,
            clients: (0..pops).collect(),
            edges: vec![10, 11],
            links: vec![(0..pops).collect(), (pops..2 * pops).collect()],
            policies: Vec::new(),
            abr: Vec::new(),
        }
    }

    /// Per population: mean rebuffering and bitrate of its sessions, and the gap between the
    /// best and worst population's bitrate; one population's gap is 0.
    #[test]
    fn populations_are_measured_apart() {
        let plan = Plan::default();
        let segs = vec![(1.0, 0, 1, 1)];
        let mut v = vec![
            viewer(false, segs.clone(), 0.0),
            viewer(false, segs.clone(), 10.0),
            viewer(true, segs, 0.0),
        ];
        v[1].mean_kbps = 400.0;
        v[2].mean_kbps = 700.0;
        v[1].population = 1;
        v[2].population = 1;
        let run = Run {
            policy: "tp".into(),
            run: 0,
            degraded_at_s: f64::INFINITY,
            viewers: v,
        };
        let m = metrics(&run, &layout(2), &plan, 0.5);
        assert_eq!(m.population_bitrate_kbps, [250.0, 550.0]);
        assert_eq!(m.population_rebuffering[0], 0.0);
        assert!((m.population_rebuffering[1] - 10.0 / 60.0 / 2.0).abs() < 1e-12);
        assert_eq!(m.population_gap_kbps, 300.0);
        let one = Run {
            viewers: run
                .viewers
                .iter()
                .map(|x| Viewer {
                    population: 0,
                    ..x.clone()
                })
                .collect(),
            ..run
        };
        let m = metrics(&one, &layout(1), &plan, 0.5);
        assert_eq!(m.population_gap_kbps, 0.0);
        assert_eq!(m.population_bitrate_kbps, [450.0]);
    }

    #[test]
    fn jain_is_one_for_equals_and_one_over_n_for_one_taker() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    /// Two sessions on edge 0 until 30 s, one of them moves at 34 s: edge 0 then holds half
    /// the sessions, at most its capacity share (0.5 here) from 34 s, so the reaction is 4 s
    /// after a degradation at 30 s.
    #[test]
    fn reaction_is_when_the_degraded_edge_holds_no_more_than_its_share() {
        let plan = Plan {
            seconds: 60.0,
            degrade: 0.5,
            ..Plan::default()
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        for k in 0..30 {
            let t = 2.0 * k as f64;
            a.push((t, 0, 1, 1));
            b.push((t, if t >= 34.0 { 1 } else { 0 }, 1, 1));
        }
        let run = Run {
            policy: "tp".into(),
            run: 0,
            degraded_at_s: 30.0,
            viewers: vec![viewer(false, a, 0.0), viewer(true, b, 10.0)],
        };
        // Edge 0 keeps 0.5 x 2 = 1 of 1 + 1: share 0.5.
        let m = metrics(
            &run,
            &layout(1),
            &plan,
            degraded_capacity_share(&[2.0, 1.0], plan.degrade),
        );
        assert_eq!(m.reaction_s, 4.0);
        assert!((m.real_rebuffering - 10.0 / 60.0).abs() < 1e-12);
        assert_eq!(m.emulated_rebuffering, 0.0);
        assert!((m.edge_share[0] - 47.0 / 60.0).abs() < 1e-12);
    }

    /// The calibration's judge on made-up tracks: buffers aligned on each one's first frame,
    /// bitrates by their means; a session a rendition step too high fails on bitrate, one
    /// whose buffer runs 3 s fuller fails on the buffer, and one that stalls twice more fails
    /// on stalls.
    #[test]
    fn the_calibration_judges_bitrate_buffer_and_stalls() {
        let track = |t0: f64, kbps: f64, buf: f64, stalls: u32| Viewer {
            kind: "x".into(),
            real: false,
            population: 0,
            startup_s: Some(t0),
            played_s: 40.0,
            stalled_s: 0.0,
            stalls,
            mean_kbps: kbps,
            switches: 0,
            segments: (0..20).map(|k| (t0 + 2.0 * k as f64, 0, 1, 0)).collect(),
            buffer: (0..40)
                .map(|k| (t0 + k as f64, if k == 0 { 0.0 } else { buf }))
                .collect(),
            error: None,
        };
        let judge = |real: Viewer, emulated: Viewer| {
            judge_calibration(&Calibration {
                player: "hls".into(),
                real,
                emulated,
            })
        };
        let ok = judge(track(1.0, 400.0, 8.0, 0), track(3.5, 380.0, 7.0, 1));
        assert!(ok.agree, "{ok:?}");
        assert!((ok.bitrate_gap - 0.05).abs() < 1e-12 && (ok.buffer_gap_s - 1.0).abs() < 1e-12);
        assert_eq!(ok.same_rendition, 1.0);
        assert!(!judge(track(1.0, 400.0, 8.0, 0), track(1.0, 250.0, 8.0, 0)).agree);
        assert!(!judge(track(1.0, 400.0, 8.0, 0), track(1.0, 400.0, 11.0, 0)).agree);
        assert!(!judge(track(1.0, 400.0, 8.0, 0), track(1.0, 400.0, 8.0, 2)).agree);
    }

    #[test]
    fn a_real_players_stalls_are_the_wall_time_its_playhead_did_not_follow() {
        let asset = AssetMap {
            names: [
                ("seg-0-001.m4s".to_string(), (0, 0)),
                ("seg-2-002.m4s".to_string(), (2, 1)),
            ]
            .into_iter()
            .collect(),
            ladder_kbps: vec![100.0, 250.0, 500.0],
        };
        let s = players::SessionReport {
            frags: vec![(1000, "e0".into()), (3000, "e1".into())],
            urls: vec![
                "http://e0/p/v/s/seg-0-001.m4s?CMCD=x".into(),
                "http://e1/p/v/s/seg-2-002.m4s".into(),
            ],
            started: true,
            startup_ms: 800,
            stalls: 1,
            played: 4.0,
            fatal: Vec::new(),
            cmcd: Vec::new(),
            // 1 s of play, 2 s stalled, 2 s of play, then the end (t stays 3).
            samples: vec![
                (1000, 0.0, 2.0),
                (2000, 1.0, 1.0),
                (3000, 1.0, 0.0),
                (4000, 1.0, 2.0),
                (6000, 3.0, 0.0),
                (7000, 3.0, 0.0),
            ],
        };
        let v = real_viewer("hls", &s, &asset, |h| h.strip_prefix('e')?.parse().ok(), 0);
        assert_eq!(v.segments, [(1.0, 0, 0, 0), (3.0, 1, 2, 0)]);
        assert_eq!(v.switches, 1);
        assert_eq!(v.mean_kbps, 300.0);
        assert_eq!((v.played_s, v.stalled_s), (2.0, 2.0));
    }
}
