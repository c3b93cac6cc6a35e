//! Real players in a headless browser: Debian's Chromium opened on the player page
//! (`player/play.html`, served by the origin), and what the pages report (each segment's host,
//! first frame, stalls, playback time, errors) gathered per session. Used by the players demo
//! and the player tests.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Headless Chromium on one page, killed with its whole process group when dropped.
pub struct Browser {
    child: std::process::Child,
    profile: std::path::PathBuf,
}

/// Whether `chromium` runs here.
pub fn chromium_available() -> bool {
    std::process::Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Browser {
    /// Opens `url` in a fresh profile, with autoplay allowed and Chromium's background
    /// networking off (this machine's network is closed).
    pub fn open(url: &str) -> Result<Browser, crate::Error> {
        Browser::launch(std::process::Command::new("chromium"), url)
    }

    /// Like [`Browser::open`], with `chromium` the command `command` runs (the testbed's runs
    /// it inside a client namespace: `ip netns exec NS chromium`).
    pub fn launch(command: std::process::Command, url: &str) -> Result<Browser, crate::Error> {
        use std::os::unix::process::CommandExt;
        static PROFILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        if PROFILES.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            remove_orphaned_profiles(&std::env::temp_dir());
        }
        let profile = std::env::temp_dir().join(format!(
            "cdnlab-chromium-{}-{}",
            std::process::id(),
            PROFILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        // Chromium's own temporary folders (`org.chromium.Chromium.*`, left behind when it is
        // killed) go inside the profile, which is removed with the browser.
        let tmp = profile.join("tmp");
        std::fs::create_dir_all(&tmp)
            .map_err(|e| crate::Error::io(tmp.display().to_string(), e))?;
        let mut command = command;
        let child = command
            .env("TMPDIR", &tmp)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--autoplay-policy=no-user-gesture-required",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| crate::Error::io("chromium (apt-get install chromium)", e))?;
        Ok(Browser { child, profile })
    }
}

/// Removes the profiles (`cdnlab-chromium-PID-K` in `dir`) of processes that are gone: a
/// process killed with SIGKILL cannot remove its own (a testbed run's Chromium processes are
/// killed with its namespaces, their profiles stay).
fn remove_orphaned_profiles(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cdnlab-chromium-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The renderer and GPU processes are in the browser's process group.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// What the page reported about one session (named by the session id in its segment URLs).
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct SessionReport {
    /// (wall-clock milliseconds, host) of every segment, in order.
    pub frags: Vec<(u64, String)>,
    pub started: bool,
    /// Milliseconds from the page's start to this player's first frame.
    pub startup_ms: u64,
    /// Stalls after the first frame (`waiting` events).
    pub stalls: u64,
    /// Playback position reached, seconds.
    pub played: f64,
    /// Errors the player could not recover from.
    pub fatal: Vec<String>,
    /// Every segment's URL, in the order of `frags`.
    pub urls: Vec<String>,
    /// The page's samples, one a second: (wall-clock milliseconds, playback position s,
    /// buffer ahead of it s).
    pub samples: Vec<(u64, f64, f64)>,
    /// URLs of this session's requests that carried CMCD, as the page sent them (only with
    /// the page's `cmcdlog`).
    pub cmcd: Vec<String>,
}

/// The reports (as the origin received them: batches of events) of the pages tagged `tag`,
/// by session. A player's other events are joined to its session through the player index of
/// its segment reports; fatal errors before any segment go under `(no session)`.
pub fn sessions(reports: &[Value], tag: &str) -> BTreeMap<String, SessionReport> {
    let events: Vec<&Value> = reports
        .iter()
        .flat_map(|b| match b {
            Value::Array(v) => v.iter().collect::<Vec<_>>(),
            v => vec![v],
        })
        .filter(|e| e["tag"] == tag)
        .collect();
    let mut by_player: HashMap<i64, String> = HashMap::new();
    let mut out: BTreeMap<String, SessionReport> = BTreeMap::new();
    // http://host/p/{population}/{session}/{file}
    let session_of = |url: &str| {
        let mut parts = url.split('/').skip(3);
        (parts.next() == Some("p"))
            .then(|| parts.nth(1))
            .flatten()
            .map(str::to_string)
    };
    for e in &events {
        let url = e["url"].as_str().unwrap_or_default();
        if e["ev"] == "cmcd" {
            // Requests outside a session (playlists, steering manifests) are not kept.
            if let Some(id) = session_of(url) {
                out.entry(id).or_default().cmcd.push(url.to_string());
            }
        } else if e["ev"] == "frag" {
            let Some(id) = session_of(url) else {
                continue;
            };
            by_player.insert(e["i"].as_i64().unwrap_or(-1), id.clone());
            let s = out.entry(id).or_default();
            s.urls.push(url.to_string());
            s.frags.push((
                e["at"].as_u64().unwrap_or(0),
                e["host"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    for e in &events {
        let fatal = e["ev"] == "error" && e["fatal"] == true;
        let Some(id) = by_player.get(&e["i"].as_i64().unwrap_or(-1)) else {
            if fatal {
                out.entry("(no session)".into())
                    .or_default()
                    .fatal
                    .push(e["details"].to_string());
            }
            continue;
        };
        let s = out.entry(id.clone()).or_default();
        match e["ev"].as_str() {
            Some("start") => {
                s.started = true;
                s.startup_ms = e["ms"].as_u64().unwrap_or(0);
            }
            Some("stall") => s.stalls += 1,
            Some("time") => {
                let t = e["t"].as_f64().unwrap_or(0.0);
                s.played = s.played.max(t);
                s.samples.push((
                    e["at"].as_u64().unwrap_or(0),
                    t,
                    e["buf"].as_f64().unwrap_or(0.0),
                ));
            }
            _ if fatal => s.fatal.push(e["details"].to_string()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dead process's profile goes, a live one's and anything else stay.
    #[test]
    fn orphaned_profiles_are_removed() {
        let d = tempfile::tempdir().unwrap();
        // PIDs above the kernel's limit (4194304) are never alive.
        for name in [
            "cdnlab-chromium-4999999-0",
            "cdnlab-chromium-4999999-1",
            &format!("cdnlab-chromium-{}-0", std::process::id()),
            "cdnlab-chromium-1-0",
            "other-4999999",
        ] {
            std::fs::create_dir_all(d.path().join(name).join("tmp")).unwrap();
        }
        remove_orphaned_profiles(d.path());
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            format!("cdnlab-chromium-{}-0", std::process::id()),
            "cdnlab-chromium-1-0".to_string(),
            "other-4999999".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn reports_by_session() {
        let batch = serde_json::json!([
            {"tag": "a", "i": 0, "ev": "frag", "url": "http://h1/p/pa/pa-3/seg-0-001.m4s", "host": "h1", "at": 5},
            {"tag": "a", "i": 0, "ev": "start", "ms": 420},
            {"tag": "a", "i": 0, "ev": "time", "t": 3.5, "buf": 4.25, "at": 9},
            {"tag": "a", "i": 0, "ev": "stall", "t": 3.5},
            {"tag": "a", "i": 0, "ev": "time", "t": 2.0},
            {"tag": "a", "i": 1, "ev": "error", "fatal": true, "details": "x"},
            {"tag": "b", "i": 0, "ev": "frag", "url": "http://h2/p/pa/pa-9/s.m4s", "host": "h2", "at": 1},
            {"tag": "a", "i": -1, "ev": "cmcd", "url": "http://h1/p/pa/pa-3/seg-0-002.m4s?CMCD=br%3D1"},
            {"tag": "a", "i": -1, "ev": "cmcd", "url": "http://s/play/pa/pa-3/v0.m3u8?CMCD=br%3D1"}
        ]);
        let s = sessions(&[batch], "a");
        assert_eq!(s.len(), 2);
        let x = &s["pa-3"];
        assert_eq!(x.frags, [(5, "h1".to_string())]);
        assert_eq!(x.urls, ["http://h1/p/pa/pa-3/seg-0-001.m4s"]);
        assert_eq!(x.samples, [(9, 3.5, 4.25), (0, 2.0, 0.0)]);
        assert_eq!(x.cmcd, ["http://h1/p/pa/pa-3/seg-0-002.m4s?CMCD=br%3D1"]);
        assert!(x.started && x.startup_ms == 420 && x.stalls == 1 && x.played == 3.5);
        assert_eq!(s["(no session)"].fatal, ["\"x\""]);
    }
}
