//! The session emulator (`cdnlab testbed probe steering`): many player sessions in one process,
//! each the library's player model ([`cdnlab::steer::player::Session`]: buffer, throughput
//! estimate, ABR rule) driven by real HTTP against the live CDN, as a real player would be:
//!
//! 1. open a session at the steering server (`/play/{population}/master.m3u8`), read its
//!    pathways and renditions from the multivariant playlist, and each rendition's media
//!    playlist from the first pathway;
//! 2. fetch one segment at a time from the first usable pathway of the latest steering
//!    manifest, with CTA-5004 CMCD in the query string (what hls.js sends), and feed the
//!    download time back to the model;
//! 3. reload the steering manifest every TTL with `_HLS_pathway` and `_HLS_throughput` (HLS
//!    4.4.6.6), honouring 410 (no more reloads) and 429 (Retry-After);
//! 4. on a refused or failed fetch (an edge's admission answers 503), try the next pathway of
//!    the order at once, as hls.js and dash.js do; with none left, wait a second.
//!
//! What it does not do (docs/steering.md says so): no init segments (under 1 kB each), no
//! audio, no parallel fetches.

use cdnlab::steer::player::{Abr, Next, Phase, Session, Stream};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What the emulator is told.
#[derive(Debug, Clone)]
pub struct Config {
    /// The steering server's `/play/{population}/master.m3u8`.
    pub play: String,
    pub sessions: usize,
    /// The ABR rule of session k: `abr[k mod len]`.
    pub abr: Vec<Abr>,
    /// Segments each session plays (at most the asset's).
    pub segments: u32,
    pub buffer_s: f64,
    /// Session k starts at `k / sessions x spread` seconds (evenly spread, no randomness).
    pub spread_s: f64,
    /// Sessions still running then are cut.
    pub seconds: f64,
    /// A wrong model, for the calibration's test of itself: the ABR rules' factors so large
    /// that every session always fetches the top rendition (a player without adaptation).
    pub greedy: bool,
    /// Where to fetch the real players' reports at the end of the run (the origin's
    /// `/player/reports`).
    pub reports: Option<String>,
}

/// One segment as the emulator fetched it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fetch {
    /// Seconds from the emulator's start to the request and to its last byte.
    pub at_s: f64,
    pub end_s: f64,
    pub segment: u32,
    pub rendition: usize,
    /// The pathway's index in the session's playlist order (the steering server's servers).
    pub pathway: String,
    pub bytes: u64,
}

/// One emulated session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Emulated {
    pub abr: String,
    pub start_s: f64,
    pub startup_s: Option<f64>,
    pub played_s: f64,
    pub stalled_s: f64,
    pub stalls: u32,
    pub mean_kbps: f64,
    pub switches: u32,
    pub ended: bool,
    /// Fetches refused or failed (each tried again elsewhere or later).
    pub refused: u32,
    pub steering_reloads: u32,
    pub fetches: Vec<Fetch>,
    /// (seconds from the emulator's start, buffer s), one a second.
    pub buffer: Vec<(f64, f64)>,
    /// Why the session could not open, if it could not.
    pub error: Option<String>,
}

/// The emulator's output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Output {
    /// Wall clock (Unix milliseconds) of the emulator's time 0.
    pub start_unix_ms: u64,
    pub sessions: Vec<Emulated>,
    /// The origin's player reports, as fetched at the end (JSON array), if asked.
    pub reports: Option<serde_json::Value>,
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A session's playlist as the emulator reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Playlist {
    pub steering: String,
    /// (pathway id, base URL ending in `/`), in playlist order.
    pub pathways: Vec<(String, String)>,
    /// Each rendition's bandwidth (bit/s) and media playlist name, ascending by bandwidth.
    pub renditions: Vec<(u64, String)>,
}

/// Reads a multivariant playlist with content steering (what `/play` answers).
pub fn parse_multivariant(text: &str) -> Result<Playlist, String> {
    let attr = |line: &str, name: &str| crate::media::attribute(line, name).map(unquote);
    let mut steering = None;
    let mut pathways: Vec<(String, String)> = Vec::new();
    let mut renditions: Vec<(u64, String)> = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if let Some(a) = line.strip_prefix("#EXT-X-CONTENT-STEERING:") {
            steering = attr(a, "SERVER-URI");
        } else if let Some(a) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            let uri = lines.next().ok_or("a variant without its URI")?;
            let bw: u64 = attr(a, "BANDWIDTH")
                .and_then(|b| b.parse().ok())
                .ok_or("a variant without BANDWIDTH")?;
            let id = attr(a, "PATHWAY-ID").unwrap_or_else(|| ".".into());
            let (base, name) = uri.rsplit_once('/').ok_or("a variant URI without a path")?;
            if !pathways.iter().any(|p| p.0 == id) {
                pathways.push((id.clone(), format!("{base}/")));
            }
            if pathways[0].0 == id {
                renditions.push((bw, name.to_string()));
            }
        }
    }
    renditions.sort();
    if renditions.is_empty() {
        return Err("no variants".into());
    }
    Ok(Playlist {
        steering: steering.ok_or("no #EXT-X-CONTENT-STEERING")?,
        pathways,
        renditions,
    })
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches('"').to_string()
}

/// A media playlist's segment names and their duration (the longest `#EXTINF`).
pub fn parse_media(text: &str) -> Result<(Vec<String>, f64), String> {
    let mut names = Vec::new();
    let mut longest: f64 = 0.0;
    for line in text.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("#EXTINF:") {
            let d: f64 = d
                .split(',')
                .next()
                .and_then(|x| x.trim().parse().ok())
                .ok_or("an #EXTINF without a duration")?;
            longest = longest.max(d);
        } else if !line.is_empty() && !line.starts_with('#') {
            names.push(line.to_string());
        }
    }
    if names.is_empty() || longest <= 0.0 {
        return Err("no segments".into());
    }
    Ok((names, longest))
}

/// Runs every session to its end or to the time limit, then (at the time limit) fetches the
/// real players' reports.
pub async fn run(cfg: Config) -> Output {
    let start = Instant::now();
    let start_unix_ms = unix_ms();
    let mut tasks = Vec::new();
    for k in 0..cfg.sessions {
        let cfg = cfg.clone();
        let at = cfg.spread_s * k as f64 / cfg.sessions.max(1) as f64;
        let abr = cfg.abr[k % cfg.abr.len()];
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until((start + Duration::from_secs_f64(at)).into()).await;
            session(&cfg, abr, start, at).await
        }));
    }
    let mut sessions = Vec::new();
    for t in tasks {
        sessions.push(
            t.await
                .unwrap_or_else(|e| failed(Abr::Hlsjs, 0.0, e.to_string())),
        );
    }
    // The real players beside the sessions play to the end of the run: their reports are
    // fetched then.
    let reports = match &cfg.reports {
        Some(url) => {
            tokio::time::sleep_until((start + Duration::from_secs_f64(cfg.seconds)).into()).await;
            match reqwest::get(url).await {
                Ok(r) => r.json().await.ok(),
                Err(_) => None,
            }
        }
        None => None,
    };
    Output {
        start_unix_ms,
        sessions,
        reports,
    }
}

fn failed(abr: Abr, at: f64, why: String) -> Emulated {
    use cdnlab::Named;
    Emulated {
        abr: abr.name().into(),
        start_s: at,
        startup_s: None,
        played_s: 0.0,
        stalled_s: 0.0,
        stalls: 0,
        mean_kbps: 0.0,
        switches: 0,
        ended: false,
        refused: 0,
        steering_reloads: 0,
        fetches: Vec::new(),
        buffer: Vec::new(),
        error: Some(why),
    }
}

/// The steering manifest's answer: the pathway order, its TTL and reload URI.
#[derive(Debug, Default)]
struct Manifest {
    order: Vec<String>,
    ttl: f64,
    reload: Option<String>,
}

async fn text(client: &reqwest::Client, url: &str) -> Result<String, String> {
    let r = client.get(url).send().await.map_err(|e| e.to_string())?;
    if !r.status().is_success() {
        return Err(format!("{url}: {}", r.status()));
    }
    r.text().await.map_err(|e| e.to_string())
}

/// One session, from `at` seconds after `start`.
async fn session(cfg: &Config, abr: Abr, start: Instant, at: f64) -> Emulated {
    let now = || start.elapsed().as_secs_f64();
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
    {
        Ok(c) => c,
        Err(e) => return failed(abr, at, e.to_string()),
    };
    // Open the session; a refusal (429, 503) is retried after its Retry-After, within the run.
    let mut refused = 0u32;
    let master = loop {
        match client.get(&cfg.play).send().await {
            Ok(r) if r.status().is_success() => match r.text().await {
                Ok(t) => break t,
                Err(e) => return failed(abr, at, e.to_string()),
            },
            Ok(r) => {
                refused += 1;
                let wait = retry_after(&r).unwrap_or(1.0);
                if now() + wait >= cfg.seconds {
                    return failed(abr, at, format!("/play answered {}", r.status()));
                }
                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
            }
            Err(e) => return failed(abr, at, e.to_string()),
        }
    };
    let playlist = match parse_multivariant(&master) {
        Ok(p) => p,
        Err(e) => return failed(abr, at, format!("the multivariant playlist: {e}")),
    };
    // The media playlists from the first pathway that serves them (an edge whose slots are
    // full answers 503: players then try the next pathway).
    let mut names: Vec<Vec<String>> = Vec::new();
    let mut segment_s: f64 = 0.0;
    let mut first = None;
    let mut why = Vec::new();
    'pathways: for (k, (_, base)) in playlist.pathways.iter().enumerate() {
        names.clear();
        for (_, media) in &playlist.renditions {
            match text(&client, &format!("{base}{media}"))
                .await
                .and_then(|t| parse_media(&t))
            {
                Ok((n, d)) => {
                    segment_s = segment_s.max(d);
                    names.push(n);
                }
                Err(e) => {
                    refused += 1;
                    why.push(e);
                    continue 'pathways;
                }
            }
        }
        first = Some(k);
        break;
    }
    let Some(first) = first else {
        return failed(
            abr,
            at,
            format!("no pathway served the playlists: {}", why.join("; ")),
        );
    };
    let segments = names.iter().map(Vec::len).min().unwrap_or(0) as u32;
    let stream = Stream {
        ladder_kbps: playlist
            .renditions
            .iter()
            .map(|(b, _)| *b as f64 / 1000.0)
            .collect(),
        segment_s,
        segments: segments.min(cfg.segments),
        max_buffer_s: cfg.buffer_s,
    };
    let mut player = if cfg.greedy {
        let mut p = abr.params();
        p.down = 1e9;
        p.up = 1e9;
        p.max_starvation_delay_s = None;
        Session::with_params(stream, p, at)
    } else {
        Session::new(stream, abr, at)
    };
    let sid = playlist.pathways[0]
        .1
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let mut out = failed(abr, at, String::new());
    out.error = None;
    out.refused = refused;
    // The pathway order: the playlist's until the first steering manifest.
    let mut manifest = Manifest {
        order: playlist.pathways.iter().map(|p| p.0.clone()).collect(),
        ttl: 0.0,
        reload: Some(playlist.steering.clone()),
    };
    let mut next_steer = now();
    let mut current = playlist.pathways[first].0.clone();
    // Pathways that failed a fetch since the last manifest (hls.js penalises them).
    let mut penalised: Vec<String> = playlist.pathways[..first]
        .iter()
        .map(|p| p.0.clone())
        .collect();
    let mut next_sample = now();
    loop {
        let t = now();
        if t >= cfg.seconds {
            break;
        }
        player.advance(t);
        while t >= next_sample {
            out.buffer.push((next_sample, player.buffer_s()));
            next_sample += 1.0;
        }
        if player.phase() == Phase::Ended {
            out.ended = true;
            break;
        }
        if t >= next_steer {
            match manifest.reload.clone() {
                Some(url) => {
                    let est = (player.estimate_kbps() * 1000.0).round() as u64;
                    let sep = if url.contains('?') { '&' } else { '?' };
                    let url = format!("{url}{sep}_HLS_pathway={current}&_HLS_throughput={est}");
                    out.steering_reloads += 1;
                    match steer(&client, &url).await {
                        Ok(SteerAnswer::Manifest(m)) => {
                            if m.order.iter().any(|p| manifest_has(&playlist, p)) {
                                manifest.order = m.order;
                            }
                            manifest.ttl = m.ttl;
                            if m.reload.is_some() {
                                manifest.reload = m.reload;
                            }
                            penalised.clear();
                            next_steer = now() + manifest.ttl.max(1.0);
                        }
                        Ok(SteerAnswer::Gone) => manifest.reload = None,
                        Ok(SteerAnswer::Later(s)) => next_steer = now() + s,
                        // A failed reload keeps the last order and tries again a TTL later.
                        Err(_) => next_steer = now() + manifest.ttl.max(1.0),
                    }
                }
                None => next_steer = f64::INFINITY,
            }
            // hls.js and dash.js move at the next segment: the first usable pathway.
            if let Some(p) = first_usable(&manifest.order, &playlist, &penalised) {
                current = p;
            }
        }
        match player.next(t) {
            Next::Fetch { segment, rendition } => {
                let mut report = player.report(rendition);
                report.session = Some(sid.clone());
                let base = &playlist
                    .pathways
                    .iter()
                    .find(|p| p.0 == current)
                    .expect("current is a listed pathway")
                    .1;
                let url = format!("{base}{}", names[rendition][segment as usize]);
                let url = match reqwest::Url::parse_with_params(&url, [("CMCD", report.encode())]) {
                    Ok(u) => u,
                    Err(e) => return failed(abr, at, e.to_string()),
                };
                let sent = now();
                let got = match client.get(url).send().await {
                    Ok(r) if r.status().is_success() => r.bytes().await.ok(),
                    _ => None,
                };
                let end = now();
                match got {
                    Some(body) => {
                        player.fetched(end, body.len() as u64, end - sent);
                        out.fetches.push(Fetch {
                            at_s: sent,
                            end_s: end,
                            segment,
                            rendition,
                            pathway: current.clone(),
                            bytes: body.len() as u64,
                        });
                    }
                    None => {
                        out.refused += 1;
                        player.failed(end);
                        penalised.push(current.clone());
                        match first_usable(&manifest.order, &playlist, &penalised) {
                            Some(p) => current = p,
                            None => {
                                penalised.clear();
                                tokio::time::sleep(Duration::from_secs(1)).await;
                            }
                        }
                    }
                }
            }
            Next::Wait(until) => {
                let until = until.min(next_steer).min(next_sample).min(cfg.seconds);
                sleep_to(start, until).await;
            }
            // Every segment fetched: play the buffer out.
            Next::Done | Next::Busy => {
                let until = (t + player.buffer_s().max(0.05))
                    .min(next_sample)
                    .min(cfg.seconds);
                sleep_to(start, until).await;
            }
        }
    }
    player.advance(now().min(cfg.seconds));
    let e = player.experience();
    out.startup_s = e.startup_s;
    out.played_s = e.played_s;
    out.stalled_s = e.stalled_s;
    out.stalls = e.stalls;
    out.mean_kbps = e.mean_kbps;
    out.switches = e.switches;
    out
}

async fn sleep_to(start: Instant, t: f64) {
    tokio::time::sleep_until((start + Duration::from_secs_f64(t.max(0.0))).into()).await;
}

fn manifest_has(p: &Playlist, id: &str) -> bool {
    p.pathways.iter().any(|x| x.0 == id)
}

/// The first pathway of `order` the playlist lists and no fetch has failed on.
fn first_usable(order: &[String], p: &Playlist, penalised: &[String]) -> Option<String> {
    order
        .iter()
        .find(|id| manifest_has(p, id) && !penalised.contains(id))
        .cloned()
}

enum SteerAnswer {
    Manifest(Manifest),
    /// 410: no more reloads.
    Gone,
    /// 429 or 503: again after this many seconds.
    Later(f64),
}

fn retry_after(r: &reqwest::Response) -> Option<f64> {
    r.headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
}

async fn steer(client: &reqwest::Client, url: &str) -> Result<SteerAnswer, String> {
    let r = client
        .get(url)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    match r.status().as_u16() {
        410 => return Ok(SteerAnswer::Gone),
        429 | 503 => return Ok(SteerAnswer::Later(retry_after(&r).unwrap_or(10.0))),
        200 => {}
        s => return Err(format!("steering answered {s}")),
    }
    let v: serde_json::Value = r.json().await.map_err(|e| e.to_string())?;
    Ok(SteerAnswer::Manifest(Manifest {
        order: v["PATHWAY-PRIORITY"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        ttl: v["TTL"].as_f64().unwrap_or(300.0),
        reload: v["RELOAD-URI"].as_str().map(String::from),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_session_playlist() {
        let text = "#EXTM3U\n#EXT-X-VERSION:7\n\
            #EXT-X-CONTENT-STEERING:SERVER-URI=\"http://s/steering/pa?session=x1\",PATHWAY-ID=\"b\"\n\
            #EXT-X-STREAM-INF:BANDWIDTH=501552,CODECS=\"vp09\",STABLE-VARIANT-ID=\"v2\",PATHWAY-ID=\"b\"\n\
            http://10.0.0.2:8080/p/pa/x1/media_2.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=101552,CODECS=\"vp09\",STABLE-VARIANT-ID=\"v0\",PATHWAY-ID=\"b\"\n\
            http://10.0.0.2:8080/p/pa/x1/media_0.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=501552,CODECS=\"vp09\",STABLE-VARIANT-ID=\"v2\",PATHWAY-ID=\"a\"\n\
            http://10.0.0.1:8080/p/pa/x1/media_2.m3u8\n";
        let p = parse_multivariant(text).unwrap();
        assert_eq!(p.steering, "http://s/steering/pa?session=x1");
        assert_eq!(
            p.pathways,
            [
                ("b".to_string(), "http://10.0.0.2:8080/p/pa/x1/".to_string()),
                ("a".to_string(), "http://10.0.0.1:8080/p/pa/x1/".to_string())
            ]
        );
        assert_eq!(
            p.renditions,
            [
                (101552, "media_0.m3u8".into()),
                (501552, "media_2.m3u8".into())
            ]
        );
        assert!(parse_multivariant("#EXTM3U\n").is_err());
        let (names, d) = parse_media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init-0.m4s\"\n#EXTINF:2.000,\nseg-0-001.m4s\n#EXTINF:1.5,\nseg-0-002.m4s\n#EXT-X-ENDLIST\n",
        )
        .unwrap();
        assert_eq!(names, ["seg-0-001.m4s", "seg-0-002.m4s"]);
        assert_eq!(d, 2.0);
    }
}
