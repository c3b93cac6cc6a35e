//! What cdnlab's test suites share (a dev-dependency only).
//!
//! The README's test command must pass with only the Rust toolchain and a C/C++ compiler. A test
//! that needs an installed tool (promtool, Chromium, ffmpeg, node and the npm packages) asks for it here:
//! when the tool is missing, outside CI the test skips that check and says so in one line on the
//! terminal (naming the tool and the command that installs it); under CI (`CI` set, as `.ci/run`
//! sets it, to anything but `false` or `0`) it fails, since `.ci/run` installs every tool and a
//! check must not pass there unchecked.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// A tool beyond the Rust toolchain that some test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// What the tool is, as the skip line names it.
    pub name: &'static str,
    /// The command that installs it.
    pub install: &'static str,
}

/// Prometheus's `promtool`, which lints every live server's `/metrics`.
pub const PROMTOOL: Tool = Tool {
    name: "promtool",
    install: "apt-get install prometheus",
};
/// Headless Chromium, for the report's layout check and the real players.
pub const CHROMIUM: Tool = Tool {
    name: "chromium",
    install: "apt-get install chromium",
};
/// ffmpeg, which builds the players' VP9 test asset (media/make-asset.sh).
pub const FFMPEG: Tool = Tool {
    name: "ffmpeg",
    install: "apt-get install ffmpeg",
};
/// The pinned npm packages of player/package-lock.json: hls.js, dash.js, Shaka Player and
/// SVTA's CMCD codec (`@svta/cml-cmcd`, the reference decoder), with node to run the codec.
pub const PLAYERS: Tool = Tool {
    name: "node and the npm packages in player/ (hls.js, dash.js, Shaka Player, @svta/cml-cmcd)",
    install: "npm ci --prefix player",
};

/// Every network topohub ships, exported by `data/fetch-topologies.sh` (PyPI, into a virtual
/// environment) into `data/topologies/topohub`.
pub const TOPOHUB: Tool = Tool {
    name: "topohub's networks (data/topologies/topohub)",
    install: "data/fetch-topologies.sh",
};

/// Root with network namespaces and the tools the testbed builds them with (docs/testbed.md).
pub const NETNS: Tool = Tool {
    name: "root with network namespaces (the testbed: ip, tc, ethtool, chrt)",
    install: "run the tests as root, with apt-get install iproute2 ethtool util-linux",
};

/// Whether this process has root's CAP_NET_ADMIN and CAP_SYS_ADMIN (capability(7) bits 12 and
/// 21 of CapEff), whatever tools are installed.
pub fn net_caps() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 12) != 0 && caps & (1 << 21) != 0)
}

/// `Some(())` when this process can build a testbed: [`net_caps`], and `ip`, `tc`, `ethtool`
/// and `chrt` installed.
pub fn netns() -> Option<()> {
    let sbin = |t: &str| {
        on_path(t).is_some()
            || ["/usr/sbin", "/sbin"]
                .iter()
                .any(|d| std::path::Path::new(d).join(t).is_file())
    };
    (net_caps() && ["ip", "tc", "ethtool", "chrt"].into_iter().all(sbin)).then_some(())
}

/// The testbed's traces in the host's own namespace: its namespaces (`cdnlab-*`), guard routes
/// (`unreachable 198.18.*`) and records (/run/cdnlab-testbed), as the testbed's tests check
/// that nothing is left behind.
pub fn testbed_leftovers() -> Vec<String> {
    let names = |dir: &str| -> Vec<std::fs::DirEntry> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .collect()
    };
    let mut found: Vec<String> = names("/run/netns")
        .into_iter()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("cdnlab-"))
        .collect();
    let routes = std::process::Command::new("ip")
        .args(["route", "show", "table", "all"])
        .output()
        .expect("ip route show");
    found.extend(
        String::from_utf8_lossy(&routes.stdout)
            .lines()
            .filter(|l| l.starts_with("unreachable 198.18."))
            .map(String::from),
    );
    found.extend(
        names("/run/cdnlab-testbed")
            .into_iter()
            .map(|e| e.path().display().to_string()),
    );
    found
}

/// Whether this run is CI's: `CI` set to anything but empty, `false` or `0`.
pub fn under_ci() -> bool {
    ci_value(std::env::var("CI").ok().as_deref())
}

fn ci_value(v: Option<&str>) -> bool {
    v.is_some_and(|v| !matches!(v.trim(), "" | "false" | "0"))
}

/// `command` as found on `PATH`, if it is there and executable.
pub fn on_path(command: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Chromium: `CDNLAB_CHROMIUM` if set, else `chromium`, `chromium-browser` or `google-chrome`
/// on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CDNLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(on_path)
}

/// `found` if the test has `tool`. If not: under CI a panic naming the tool and its install
/// command; outside CI `None`, and one line on the terminal (once per tool and test process)
/// saying what is skipped and how to install the tool. The line goes straight to standard
/// error, past the test harness's capture, so a newcomer sees why a check did not run.
pub fn need<T>(tool: Tool, found: Option<T>) -> Option<T> {
    if found.is_some() {
        return found;
    }
    assert!(
        !under_ci(),
        "{} is missing ({}; .ci/run installs it), and CI must not skip the tests that need it",
        tool.name,
        tool.install
    );
    static SAID: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    if SAID
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(tool.name)
    {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: checks that need {} (install: {}; .ci/run does)",
            tool.name,
            tool.install
        );
    }
    None
}

/// `s` percent-encoded as a browser's `encodeURIComponent` does (what players do to the CMCD
/// data they put in a query string): every byte but ASCII letters, digits and `-_.!~*'()`.
pub fn encode_uri_component(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&c) {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}

/// What SVTA's Common Media Library (`@svta/cml-cmcd`, pinned in player/package.json, run by
/// player/cmcd-decode.mjs under node) decodes from each case, in order: a case is
/// `{"dict": DATA}` (a CMCD dictionary) or `{"query": QUERY}` (a URL's query string); an answer
/// `{"ok": {key: value}}` or `{"err": message}`. None (after [`need`]) without node and the
/// packages.
pub fn cml_decode(cases: &[serde_json::Value]) -> Option<Vec<serde_json::Value>> {
    let player = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../player");
    let found = (on_path("node").is_some()
        && player
            .join("node_modules/@svta/cml-cmcd/package.json")
            .is_file())
    .then_some(());
    need(PLAYERS, found)?;
    let mut child = std::process::Command::new("node")
        .arg(player.join("cmcd-decode.mjs"))
        .current_dir(&player)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut input = String::new();
    for c in cases {
        input.push_str(&c.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from another thread: the decoder's answers fill the pipe while it reads.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("node runs");
    writer.join().expect("writer").expect("cases written");
    assert!(out.status.success(), "cmcd-decode.mjs failed");
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), cases.len(), "one answer per case");
    Some(lines)
}

/// Two decodings in [`cml_decode`]'s shape are the same: numbers equal as f64 (JavaScript
/// has no integers apart), objects with the same keys, whatever their order.
pub fn same_decoding(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_decoding(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_decoding(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_is_any_value_but_empty_false_or_zero() {
        for (v, ci) in [
            (None, false),
            (Some(""), false),
            (Some("false"), false),
            (Some("0"), false),
            (Some("true"), true),
            (Some("1"), true),
            (Some("yes"), true),
        ] {
            assert_eq!(ci_value(v), ci, "{v:?}");
        }
    }

    #[test]
    fn a_found_tool_is_passed_through() {
        assert_eq!(need(PROMTOOL, Some(3)), Some(3));
    }

    #[test]
    fn on_path_finds_sh_and_not_a_made_up_name() {
        assert!(on_path("sh").is_some());
        assert!(on_path("cdnlab-no-such-tool-here").is_none());
    }
}
