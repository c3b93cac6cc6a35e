//! Real players through the live CDN: hls.js, dash.js and Shaka Player (pinned in
//! player/package.json) in headless Chromium play the VP9 asset (media/make-asset.sh) from two
//! edges with admission, following the steering server. For each player (Shaka: parts 1, 5 and
//! 6, with its own expectations):
//!
//! 1. eight sessions of one population start and play, each from the pathway its steering
//!    manifest puts first, spread over the edges as the allocation's shares say (within the
//!    library's bound for 8 sessions); the edges read their CMCD, and every CMCD string the
//!    page saw go out decodes alike with cdnlab's decoder and SVTA's CML;
//! 2. an edge taken out: every session on it moves to the other edge within the manifest's TTL
//!    plus one segment, and keeps playing;
//! 3. a session whose first pathway refuses it (503 + Retry-After: its edge's slots for the
//!    population are all taken) falls back to the next pathway and plays;
//! 4. an edge is killed mid-play: its sessions (fresh ones) move to the other and keep playing;
//! 5. the content-steering corners: a steering manifest answered 429 with Retry-After (hls.js
//!    1.7.4 stops reloading, dash.js reloads after Retry-After, Shaka before it), and one
//!    answered 410 (hls.js and dash.js never reload again, Shaka does); both play on;
//! 6. PATHWAY-CLONES: a session whose playlist lacks an edge moves to it when its manifest
//!    names it as a clone (URI-REPLACEMENT), and plays on (Shaka ignores the clone).
//!
//! Needs ffmpeg (to build the asset once, into target/media), `npm ci --prefix player`, and
//! chromium: `.ci/run` installs them. Without them the tests are skipped, except under CI=true,
//! where they fail.

mod common;

use cdnlab_live::edge::{self, EdgeConfig};
use cdnlab_live::media::{Asset, Files};
use cdnlab_live::origin::{self, OriginConfig};
use cdnlab_live::players::{self, Browser, SessionReport as Session};
use cdnlab_live::serve::{Limits, SECRET};
use cdnlab_live::steer::{self, Deployment, SteerConfig};
use common::on_free_port;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

const SECRET_VALUE: &str = "players-test-secret-0123";
/// The steering manifests' TTL, seconds.
const TTL: u32 = 2;
/// The asset's segment duration, seconds.
const SEGMENT: f64 = 2.0;
/// What reporting adds to a switch: the segment's own load and the page's 0.5 s report batch.
const SLACK: f64 = 1.0;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The asset, built once into target/media (the script skips a built one).
fn asset_dir() -> Option<PathBuf> {
    let dir = root().join("target/media");
    if !dir.join("manifest.mpd").exists() {
        cdnlab_testkit::need(cdnlab_testkit::FFMPEG, cdnlab_testkit::on_path("ffmpeg"))?;
        let status = std::process::Command::new(root().join("media/make-asset.sh"))
            .arg(&dir)
            .status()
            .expect("media/make-asset.sh runs");
        assert!(status.success(), "media/make-asset.sh failed");
    }
    Some(dir)
}

/// The sessions the pages tagged `tag` reported to the origin.
fn sessions(o: &origin::Origin, tag: &str) -> BTreeMap<String, Session> {
    players::sessions(&o.reports(), tag)
}

/// Waits (up to `limit`) until `done` holds for the sessions of `tag`; returns them.
async fn wait_for(
    o: &origin::Origin,
    tag: &str,
    limit: Duration,
    what: &str,
    done: impl Fn(&BTreeMap<String, Session>) -> bool,
) -> BTreeMap<String, Session> {
    let t = Instant::now();
    loop {
        let s = sessions(o, tag);
        if done(&s) {
            return s;
        }
        assert!(
            t.elapsed() < limit,
            "{what}: not within {limit:?}; sessions: {s:#?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The first pathway the steering server gives session `id`.
async fn first_pathway(steer: SocketAddr, id: &str) -> String {
    let m: Value = reqwest::get(format!("http://{steer}/steering/pa?session={id}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    m["PATHWAY-PRIORITY"][0].as_str().unwrap().to_string()
}

/// One browser test at a time: two would share the 2 cores and blur the switch times.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn play(kind: &str) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let Some(media) = asset_dir() else { return };
    let player_dir = root().join("player");
    let players = player_dir.join(cdnlab_live::media::PLAYER_SCRIPTS[0].1);
    // The players' browser is the `chromium` on PATH (cdnlab_live::players::Browser).
    if cdnlab_testkit::need(cdnlab_testkit::PLAYERS, players.exists().then_some(())).is_none()
        || cdnlab_testkit::need(
            cdnlab_testkit::CHROMIUM,
            cdnlab_testkit::on_path("chromium"),
        )
        .is_none()
    {
        return;
    }
    let asset = Arc::new(Asset::load(&media).unwrap());
    let files = Arc::new(Files::player(&player_dir).unwrap());
    let o = on_free_port(|a| {
        let mut cfg = OriginConfig::serving(common::catalogue());
        cfg.media = Some(asset.clone());
        cfg.player = Some(files.clone());
        origin::start(a, cfg)
    })
    .await;
    let mut edges = Vec::new();
    for _ in 0..2 {
        edges.push(
            on_free_port(|a| {
                edge::start(
                    a,
                    EdgeConfig {
                        admission: Some(SECRET_VALUE.into()),
                        ..common::edge_config(o.server.addr)
                    },
                )
            })
            .await,
        );
    }
    let (east, west) = (edges[0].server.addr, edges[1].server.addr);
    // Capacities 6 and 10 streams: population pa's shares are 6/16 and 10/16.
    let topology = Deployment::parse(&format!(
        r#"{{"secret": "{SECRET_VALUE}", "network": {{"nodes": [{{"id": "A", "pos": [0, 0]}}, {{"id": "B", "pos": [1, 0]}}], "edges": [{{"source": "A", "target": "B"}}]}},
            "servers": [{{"name": "east", "metro": "A", "addr": "{east}", "capacity": 6}},
                        {{"name": "west", "metro": "B", "addr": "{west}", "capacity": 10}}],
            "populations": [{{"name": "pa", "metro": "A", "demand": 16}}]}}"#
    ))
    .unwrap();
    let s = on_free_port(|a| {
        steer::start(SteerConfig {
            topology: topology.clone(),
            listen: a,
            ttl: TTL,
            window: Duration::from_millis(500),
            // Re-allocation only if nearly everything is refused: the test's plan stays put.
            b_max: 0.99,
            timeout: Duration::from_secs(2),
            limits: Limits::default(),
            min_share: steer::DEFAULT_MIN_SHARE,
            sessions: steer::SessionLimits::default(),
            guarantee: true,
            policy: cdnlab::steer::policy::Policy::Shares,
            media: Some(asset.clone()),
        })
    })
    .await;
    assert_eq!(s.thresholds(), [6, 10]);
    let host_of = |h: &str| {
        if h == east.to_string() {
            "east"
        } else if h == west.to_string() {
            "west"
        } else {
            "?"
        }
    };
    let file = if kind == "dash" {
        "manifest.mpd"
    } else {
        "master.m3u8"
    };
    let page = |n: usize, tag: &str| {
        format!(
            "http://{}/player/play.html?player={kind}&n={n}&tag={tag}&cmcdlog=200&src=http://{}/play/pa/{file}",
            o.server.addr, s.server.addr
        )
    };

    // 1. Eight sessions: each plays from its first pathway; the spread follows the shares.
    let browser = Browser::open(&page(8, "a")).unwrap();
    let a = wait_for(
        &o,
        "a",
        Duration::from_secs(60),
        "8 sessions playing 6 s",
        |m| {
            m.len() >= 8 && m.values().all(|x| x.played >= 6.0)
                || m.values().any(|x| !x.fatal.is_empty())
        },
    )
    .await;
    let mut per_edge: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, x) in &a {
        assert!(
            x.fatal.is_empty() && x.started,
            "{kind} session {id}: {x:?}"
        );
        let first = first_pathway(s.server.addr, id).await;
        assert!(
            x.frags.iter().all(|(_, h)| host_of(h) == first),
            "{kind} session {id}: segments from {:?}, but its manifest puts {first} first",
            x.frags.iter().map(|(_, h)| host_of(h)).collect::<Vec<_>>()
        );
        *per_edge.entry(host_of(&x.frags[0].1)).or_default() += 1;
    }
    // The library's bound for 8 sessions (alloc::steering): within 1.6 of 8 x share.
    for (edge, share) in [("east", 6.0 / 16.0), ("west", 10.0 / 16.0)] {
        let got = per_edge.get(edge).copied().unwrap_or(0) as f64;
        assert!(
            (got - 8.0 * share).abs() <= 1.6,
            "{kind}: {got} sessions on {edge}, allocation {:.1}: {per_edge:?}",
            8.0 * share
        );
    }
    eprintln!(
        "{kind}: sessions per pathway {per_edge:?} (allocation east 3.0, west 5.0); startup {:?} ms",
        a.values().map(|x| x.startup_ms).collect::<Vec<_>>()
    );
    // What the real player sends as CMCD (query mode, player/play.html) is read by the edges,
    // none of it refused or dropped, and the edges' tallies count the sessions they serve.
    let (mut read, mut sessions_seen) = (0.0, 0.0);
    for e in [east, west] {
        let m = reqwest::get(format!("http://{e}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        read += common::metric(&m, "cdnlab_cmcd_reports_total");
        sessions_seen += common::metric(&m, "cdnlab_cmcd_sessions");
        for bad in [
            "cdnlab_cmcd_refused_total{reason=\"malformed\"}",
            "cdnlab_cmcd_refused_total{reason=\"oversized\"}",
            "cdnlab_cmcd_dropped_values_total",
        ] {
            assert_eq!(common::metric(&m, bad), 0.0, "{kind} at {e}: {bad}\n{m}");
        }
    }
    assert!(
        read >= 8.0 * 3.0,
        "{kind}: {read} CMCD reports for 8 sessions"
    );
    assert_eq!(sessions_seen, 8.0, "{kind}: the edges' tallies");
    eprintln!("{kind}: {read} CMCD reports read, 8 sessions in the tallies");
    cmcd_as_cml_decodes(kind, &a);
    // The sessions' reports of the pathway they use are counted, for DASH as for HLS.
    let plan: Value = reqwest::get(format!("http://{}/allocation", s.server.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let reported: u64 = plan["sessions_reported"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert!(
        reported >= 1,
        "{kind}: no session's pathway counted: {plan}"
    );

    // Parts 2 to 4 (an edge out, a refused session, an edge killed) for hls.js and dash.js;
    // Shaka, whose failover is not what this issue measures, goes on to the corners with the
    // sessions of part 1 and with an edge taken out where the others have one killed.
    let full = kind != "shaka";
    // The corners' sessions, by their tag, and the page that plays them.
    let (corner_tag, corner_sessions, killed, other, _corner_page) = if !full {
        (String::from("a"), a, "east", "west", browser)
    } else {
        // 2. East taken out: its sessions move to west within the TTL plus one segment.
        let on_east: Vec<String> = a
            .iter()
            .filter(|(_, x)| host_of(&x.frags[0].1) == "east")
            .map(|(id, _)| id.clone())
            .collect();
        let t0 = now_ms();
        assert!(s.set_out("east", true));
        let played_before: HashMap<String, f64> =
            a.iter().map(|(id, x)| (id.clone(), x.played)).collect();
        let b = wait_for(&o, "a", Duration::from_secs(20), "sessions off east", |m| {
            on_east.iter().all(|id| {
                m[id]
                    .frags
                    .iter()
                    .any(|(at, h)| *at > t0 && host_of(h) == "west")
            })
        })
        .await;
        let mut switches = Vec::new();
        for id in &on_east {
            let at = b[id]
                .frags
                .iter()
                .find(|(at, h)| *at > t0 && host_of(h) == "west")
                .unwrap()
                .0;
            let secs = (at - t0) as f64 / 1000.0;
            switches.push(secs);
            assert!(
                secs <= f64::from(TTL) + SEGMENT + SLACK,
                "{kind} session {id}: moved after {secs} s (TTL {TTL} s + a {SEGMENT} s segment)"
            );
            // Nothing from east after the move.
            assert!(
                b[id]
                    .frags
                    .iter()
                    .all(|(t, h)| *t <= at || host_of(h) == "west"),
                "{kind} session {id} went back to east"
            );
        }
        eprintln!("{kind}: switch times after east was taken out: {switches:?} s");
        let c = wait_for(&o, "a", Duration::from_secs(20), "playback going on", |m| {
            played_before.iter().all(|(id, &p)| m[id].played >= p + 2.0)
        })
        .await;
        assert!(c.values().all(|x| x.fatal.is_empty()), "{kind}: {c:#?}");
        drop(browser);
        assert!(s.set_out("east", false));

        // 3. A session whose first pathway (east) refuses it falls back to west and plays. East's
        // 6 slots for pa are taken by sessions this test keeps alive (a request each per second).
        // Six active sessions are not enough: sessions of the parts above may still hold slots
        // until they expire, and a slot they free could go to the session under test before a
        // holder takes it. So the test waits for a round in which every holder was admitted.
        let all_held = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let held = all_held.clone();
        // Sessions the steering server did not open, with tokens signed by the secret (serials far
        // above the test's): the edge takes them as its own.
        let expires = cdnlab_live::session::unix_now() + 3600;
        let tokens: Vec<String> = (0..6)
            .map(|k| cdnlab_live::session::mint(SECRET_VALUE, "pa", 1_000_000 + k, expires))
            .collect();
        let holders = tokio::spawn(async move {
            let client = reqwest::Client::new();
            loop {
                let mut admitted = 0;
                for token in &tokens {
                    let ok = client
                        .get(format!("http://{east}/p/pa/{token}/init-0.m4s"))
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success());
                    admitted += usize::from(ok);
                }
                held.store(admitted == 6, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let shares_at_east = || async {
            reqwest::Client::new()
                .get(format!("http://{east}/internal/admission"))
                .header(SECRET, SECRET_VALUE)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        };
        let t = Instant::now();
        while !all_held.load(std::sync::atomic::Ordering::SeqCst)
            || shares_at_east().await["pa"]["active"] != 6
        {
            assert!(
                t.elapsed() < Duration::from_secs(15),
                "east not full: {}",
                shares_at_east().await
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let blocked_before = shares_at_east().await["pa"]["blocked"].as_u64().unwrap();
        let browser_c = Browser::open(&page(1, "c")).unwrap();
        let c = wait_for(
            &o,
            "c",
            Duration::from_secs(60),
            "the refused session playing 4 s from west",
            |m| {
                m.values()
                    .any(|x| x.played >= 4.0 && x.frags.iter().any(|(_, h)| host_of(h) == "west"))
                    || m.values().any(|x| !x.fatal.is_empty())
            },
        )
        .await;
        let (id, x) = c.iter().next().unwrap();
        assert!(x.fatal.is_empty(), "{kind} session {id}: {x:?}");
        assert_eq!(
            first_pathway(s.server.addr, id).await,
            "east",
            "{kind}: session {id} should be one that steering sends to east first"
        );
        assert!(
            x.frags.iter().all(|(_, h)| host_of(h) == "west"),
            "{kind}: {x:?}"
        );
        let refused = shares_at_east().await;
        assert!(
            refused["pa"]["blocked"].as_u64().unwrap() > blocked_before,
            "east never refused {id}: {refused}"
        );
        holders.abort();
        eprintln!(
            "{kind}: refused session {id} played from west; startup {} ms",
            x.startup_ms
        );

        drop(browser_c);

        // 4. An edge killed mid-play: its reports fail, the steering server leaves it out of the
        // orders (which never become empty), and its sessions move to the other edge and keep
        // playing. Fresh sessions: a player does not go back to a pathway that failed it within
        // minutes (hls.js keeps a pathway that erred in a penalty box for 5), as the refused
        // session of part 3 did at east. First the holders' leases at east run out (10 s).
        let t = Instant::now();
        while shares_at_east().await["pa"]["active"].as_u64() >= Some(6) {
            assert!(t.elapsed() < Duration::from_secs(15), "east still full");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let browser_d = Browser::open(&page(3, "d")).unwrap();
        let d = wait_for(
            &o,
            "d",
            Duration::from_secs(60),
            "3 sessions playing 4 s",
            |m| {
                m.len() >= 3 && m.values().all(|x| x.played >= 4.0)
                    || m.values().any(|x| !x.fatal.is_empty())
            },
        )
        .await;
        assert!(d.values().all(|x| x.fatal.is_empty()), "{kind}: {d:#?}");
        let on = |x: &Session| host_of(&x.frags.last().unwrap().1);
        let on_west = d.values().filter(|x| on(x) == "west").count();
        let (killed, other, idx) = if on_west >= 1 {
            ("west", "east", 1)
        } else {
            ("east", "west", 0)
        };
        let moving: Vec<(String, f64)> = d
            .iter()
            .filter(|(_, x)| on(x) == killed)
            .map(|(id, x)| (id.clone(), x.played))
            .collect();
        let t_kill = now_ms();
        edges.remove(idx).server.stop().await;
        let after = wait_for(
            &o,
            "d",
            Duration::from_secs(30),
            "the killed edge's sessions playing on from the other",
            |m| {
                moving.iter().all(|(id, played)| {
                    m[id].played >= played + 4.0
                        && m[id]
                            .frags
                            .iter()
                            .any(|(at, h)| *at > t_kill && host_of(h) == other)
                }) || m.values().any(|x| !x.fatal.is_empty())
            },
        )
        .await;
        assert!(
            after.values().all(|x| x.fatal.is_empty()),
            "{kind}: {after:#?}"
        );
        let moved: Vec<f64> = moving
            .iter()
            .map(|(id, _)| {
                let at = after[id]
                    .frags
                    .iter()
                    .find(|(at, h)| *at > t_kill && host_of(h) == other)
                    .unwrap()
                    .0;
                (at - t_kill) as f64 / 1000.0
            })
            .collect();
        eprintln!("{kind}: {killed} killed; its sessions on {other} after {moved:?} s");
        (String::from("d"), after, killed, other, browser_d)
    };
    if !full {
        // Where the others' edge is killed: taken out, so a session opened now lists only the
        // other (part 6).
        assert!(s.set_out(killed, true));
    }

    // 5. The content-steering corners (HLS 4.4.6.6; DASH-IF's content steering). Expected,
    // written before the first run: after a 429 with Retry-After the spec wants a reload once
    // Retry-After has passed; hls.js 1.7.4's source reads Retry-After but returns without
    // scheduling a reload, so hls.js is expected to stop reloading, and dash.js to reload
    // within Retry-After plus a TTL and the slack. After a 410, neither reloads again. Both
    // play on meanwhile. Shaka 5.2.12 (lib/util/content_steering_manager.js) handles neither:
    // its networking engine retries any failed request once, 0.5-1.5 s later (the default
    // retry parameters), and after a failure the manager asks again a TTL later. So Shaka is
    // expected to reload before Retry-After has passed, and to go on reloading after a 410.
    let ids: Vec<String> = corner_sessions.keys().cloned().collect();
    let reloads = |id: &str| s.reloads(id).unwrap_or_else(|| panic!("session {id}"));
    let wait_reload = |id: String, from: u64, limit: Duration| {
        let s = &s;
        async move {
            let t = Instant::now();
            while s.reloads(&id).unwrap() == from {
                if t.elapsed() > limit {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Some(t.elapsed())
        }
    };
    let ttl = Duration::from_secs(u64::from(TTL));
    let slack = Duration::from_secs_f64(SLACK);
    // 429: the next reload is refused; then wait Retry-After + TTL + slack for another.
    const RETRY: u32 = 3;
    let x = ids[0].clone();
    let r = reloads(&x);
    assert!(s.session_control(&x, false, Some(RETRY)));
    assert!(
        wait_reload(x.clone(), r, ttl + slack).await.is_some(),
        "{kind}: session {x} asked for no steering manifest within a TTL"
    );
    let refused_at = Instant::now();
    let retry = Duration::from_secs(u64::from(RETRY));
    let again = wait_reload(x.clone(), r + 1, retry + ttl + slack).await;
    if kind == "shaka" {
        let took = again.unwrap_or_else(|| panic!("{kind}: no reload after a 429"));
        assert!(
            took < retry,
            "{kind}: expected to reload before Retry-After {RETRY} s (its own retry); after {took:?}"
        );
    } else if kind == "hls" {
        assert_eq!(
            again, None,
            "{kind}: hls.js 1.7.4 was expected not to reload after a 429 (it returns before \
             scheduling); it did after {again:?}"
        );
    } else {
        let took = again.unwrap_or_else(|| {
            panic!("{kind}: no reload within Retry-After {RETRY} s + TTL + slack after a 429")
        });
        assert!(
            took + Duration::from_millis(500) >= retry,
            "{kind}: reloaded {took:?} after a 429 with Retry-After {RETRY} s"
        );
    }
    eprintln!(
        "{kind}: after a 429 with Retry-After {RETRY} s: next steering reload {:?}",
        again.map(|t| t.as_secs_f64())
    );
    // 410: the next reload is refused, and none follows for three TTLs.
    let y = ids[1].clone();
    let r = reloads(&y);
    assert!(s.session_control(&y, true, None));
    assert!(
        wait_reload(y.clone(), r, ttl + slack).await.is_some(),
        "{kind}: session {y} asked for no steering manifest within a TTL"
    );
    let gone = reloads(&y);
    let none = wait_reload(y.clone(), gone, 3 * ttl).await;
    if kind == "shaka" {
        assert!(
            none.is_some(),
            "{kind}: expected to reload after a 410 (it retries, then asks a TTL later)"
        );
    } else {
        assert_eq!(none, None, "{kind}: session {y} reloaded after a 410");
    }
    // Both played on.
    let before: HashMap<String, f64> = [&x, &y]
        .iter()
        .map(|id| ((*id).clone(), corner_sessions[*id].played))
        .collect();
    let played = wait_for(
        &o,
        &corner_tag,
        Duration::from_secs(20),
        "playing on",
        |m| {
            before.iter().all(|(id, p)| m[id].played >= p + 4.0)
                || m.values().any(|x| !x.fatal.is_empty())
        },
    )
    .await;
    assert!(
        played.values().all(|x| x.fatal.is_empty()),
        "{kind}: {played:#?}"
    );
    eprintln!(
        "{kind}: 410 then {} steering reload for {} s; both sessions played on ({:.0} s since the 429)",
        if none.is_some() { "a" } else { "no" },
        3 * TTL,
        refused_at.elapsed().as_secs_f64()
    );

    // 6. PATHWAY-CLONES with URI-REPLACEMENT. A session opened while the killed edge was down
    // lists only the other. The killed edge comes back on its address and the other is taken
    // out: the session's manifest now names the edge it never listed, as a clone of a listed
    // pathway with the edge's host (and, for hls.js, every variant's URI). Expected, written
    // before the first run: the player moves to it within the TTL plus a segment, and plays on.
    let _browser_e = Browser::open(&page(1, "e")).unwrap();
    let e = wait_for(
        &o,
        "e",
        Duration::from_secs(60),
        "1 session playing 4 s",
        |m| m.values().any(|x| x.played >= 4.0) || m.values().any(|x| !x.fatal.is_empty()),
    )
    .await;
    let (eid, ex) = e.iter().next().unwrap();
    assert!(ex.fatal.is_empty(), "{kind} session {eid}: {ex:?}");
    assert!(ex.frags.iter().all(|(_, h)| host_of(h) == other), "{ex:?}");
    let back = if full {
        let killed_addr = if killed == "east" { east } else { west };
        let back = edge::start(
            killed_addr,
            EdgeConfig {
                admission: Some(SECRET_VALUE.into()),
                ..common::edge_config(o.server.addr)
            },
        )
        .await
        .unwrap();
        Some(back)
    } else {
        assert!(s.set_out(killed, false));
        None
    };
    assert!(s.set_out(other, true));
    let t = Instant::now();
    let cloned = loop {
        let m: Value = reqwest::get(format!(
            "http://{}/steering/pa?session={eid}",
            s.server.addr
        ))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        if m["PATHWAY-PRIORITY"] == serde_json::json!([killed])
            && m["PATHWAY-CLONES"][0]["ID"] == killed
        {
            break m;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{kind}: no clone of {killed} for session {eid}: {m}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let t0 = now_ms();
    let played_e = ex.played;
    if kind == "shaka" {
        // Shaka 5.2.12 steers an HLS stream only when the multivariant playlist lists it under
        // more than one pathway (`verbatimMediaPlaylistUris.length > 1`, lib/hls/hls_parser.js),
        // so a clone of a single-pathway session is never used. Seen in the first run, then
        // read in the source: the session stays where it is (taken out, still serving) past the
        // window the others are judged by, and plays on.
        let window = Duration::from_secs_f64(f64::from(TTL) + SEGMENT + SLACK);
        let stayed = wait_for(
            &o,
            "e",
            window + Duration::from_secs(4),
            "playing on",
            |m| {
                now_ms() >= t0 + window.as_millis() as u64 && m[eid].played >= played_e + 4.0
                    || !m[eid].fatal.is_empty()
            },
        )
        .await;
        let x = &stayed[eid];
        assert!(x.fatal.is_empty(), "{kind} session {eid}: {x:?}");
        assert!(
            x.frags.iter().all(|(_, h)| host_of(h) == other),
            "{kind} session {eid} used the clone, which Shaka 5.2.12 was expected to ignore: {x:?}"
        );
        eprintln!(
            "{kind}: the clone {killed} ignored (one pathway in the playlist); playing on from {other}"
        );
    } else {
        let moved_e = wait_for(
            &o,
            "e",
            Duration::from_secs(30),
            "the session on the clone",
            |m| {
                m[eid]
                    .frags
                    .iter()
                    .any(|(at, h)| *at > t0 && host_of(h) == killed)
                    && m[eid].played >= played_e + 4.0
                    || !m[eid].fatal.is_empty()
            },
        )
        .await;
        let x = &moved_e[eid];
        assert!(x.fatal.is_empty(), "{kind} session {eid}: {x:?}");
        let at = x
            .frags
            .iter()
            .find(|(at, h)| *at > t0 && host_of(h) == killed)
            .unwrap()
            .0;
        let secs = (at - t0) as f64 / 1000.0;
        assert!(
            secs <= f64::from(TTL) + SEGMENT + SLACK,
            "{kind} session {eid}: on the clone after {secs} s; manifest {cloned}"
        );
        eprintln!("{kind}: session on the clone {killed} after {secs} s, playing on");
    }
    assert!(s.set_out(other, false));
    if let Some(back) = back {
        back.server.stop().await;
    }
}

/// What the real player sent as CMCD (the page's `cmcdlog`: the URLs of its requests as they
/// went out) decodes to the same keys and values with cdnlab's decoder and SVTA's CML, and
/// neither refuses any of it; every session sent some.
fn cmcd_as_cml_decodes(kind: &str, sessions: &BTreeMap<String, Session>) {
    let sent: Vec<&String> = sessions.values().flat_map(|x| &x.cmcd).collect();
    for (id, x) in sessions {
        assert!(!x.cmcd.is_empty(), "{kind} session {id}: no CMCD captured");
    }
    let cases: Vec<Value> = sent
        .iter()
        .map(|u| serde_json::json!({ "query": u.split_once('?').map_or("", |q| q.1) }))
        .collect();
    let Some(theirs) = cdnlab_testkit::cml_decode(&cases) else {
        return;
    };
    let mut keys = std::collections::BTreeSet::new();
    for ((url, case), their) in sent.iter().zip(&cases).zip(&theirs) {
        let data = cdnlab::steer::cmcd::query_data(case["query"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{kind}: {url}: {e:?}"))
            .unwrap_or_else(|| panic!("{kind}: {url}: no CMCD parameter"));
        let pairs = cdnlab::steer::cmcd::decode(&data)
            .unwrap_or_else(|e| panic!("{kind}: {url}: refused: {e:?}"));
        keys.extend(pairs.iter().map(|(k, _)| k.clone()));
        let ours: serde_json::Map<String, Value> = pairs
            .into_iter()
            .map(|(k, v)| (k, serde_json::json!(v)))
            .collect();
        assert!(
            their
                .get("ok")
                .is_some_and(|t| cdnlab_testkit::same_decoding(&Value::Object(ours.clone()), t)),
            "{kind}: {url}: ours {ours:?}, CML {their}"
        );
    }
    eprintln!(
        "{kind}: {} CMCD strings as sent, decoded alike by cdnlab and CML; keys {keys:?}; e.g. {}",
        sent.len(),
        sent.first().map_or("", |u| u.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hls_js_plays_through_the_cdn_and_follows_steering() {
    play("hls").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_js_plays_through_the_cdn_and_follows_steering() {
    play("dash").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shaka_plays_through_the_cdn_and_follows_steering() {
    play("shaka").await;
}
