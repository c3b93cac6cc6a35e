//! Where a result came from: the cdnlab build, the command, when, how long, on what machine.
//! Runs record it in `scenario.toml` (one `[[provenance]]` entry per invocation that wrote to
//! the folder), and `reproduce` in claims.json and report.html.

use serde::{Deserialize, Serialize};
use std::time::{Instant, SystemTime};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// cdnlab's version and the git commit it was built from ("-dirty" with uncommitted
    /// changes; empty when not built from a checkout).
    pub version: String,
    pub commit: String,
    /// The command line, as given.
    pub command: Vec<String>,
    /// Start, UTC (RFC 3339), and wall-clock seconds.
    pub started: String,
    pub seconds: f64,
    /// Worker threads used, and the machine's cores and operating system.
    pub threads: usize,
    pub cores: usize,
    pub os: String,
}

/// The start of an invocation; [`Start::finish`] gives its provenance.
pub struct Start {
    at: SystemTime,
    clock: Instant,
}

impl Start {
    pub fn now() -> Self {
        Start {
            at: SystemTime::now(),
            clock: Instant::now(),
        }
    }

    pub fn finish(&self, threads: usize) -> Provenance {
        Provenance {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("CDNLAB_GIT_COMMIT").to_string(),
            command: std::env::args().collect(),
            started: humantime::format_rfc3339_seconds(self.at).to_string(),
            seconds: (self.clock.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            threads,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: os(),
        }
    }
}

/// "Debian GNU/Linux 12 (bookworm), linux x86_64": the distribution's name where
/// /etc/os-release gives it, then Rust's names of the OS and architecture.
fn os() -> String {
    let base = format!("{} {}", std::env::consts::OS, std::env::consts::ARCH);
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .map_or(base.clone(), |name| format!("{name}, {base}"))
}

/// The `[[provenance]]` entries of a scenario.toml, as TOML text to append.
pub fn toml_entries(entries: &[Provenance]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        provenance: &'a [Provenance],
    }
    toml::to_string(&Doc {
        provenance: entries,
    })
    .expect("provenance serialises")
}

/// Splits a scenario.toml into the resolved scenario (the folder's identity) and its
/// provenance entries (which differ between runs of the same scenario).
pub fn split(text: &str) -> (&str, Vec<Provenance>) {
    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        provenance: Vec<Provenance>,
    }
    match text.find("[[provenance]]") {
        // Trimmed as in the other arm: a run stopped before its first entry was written
        // (killed, or interrupted) must still compare equal when resumed.
        None => (text.trim_end_matches('\n'), Vec::new()),
        Some(i) => {
            let entries = toml::from_str::<Doc>(&text[i..])
                .map(|d| d.provenance)
                .unwrap_or_default();
            (text[..i].trim_end_matches('\n'), entries)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_leave_the_scenario_apart() {
        let p = Start::now().finish(2);
        assert_eq!(p.threads, 2);
        assert!(
            p.started.ends_with('Z') && p.started.len() == 20,
            "{}",
            p.started
        );
        let scenario = "name = \"x\"\nseed = 1\n";
        let text = format!("{scenario}\n{}", toml_entries(&[p.clone(), p.clone()]));
        let (s, entries) = split(&text);
        assert_eq!(s, scenario.trim_end_matches('\n'));
        assert_eq!(entries, vec![p.clone(), p]);
        assert_eq!(
            split(scenario),
            (scenario.trim_end_matches('\n'), Vec::new())
        );
    }
}
