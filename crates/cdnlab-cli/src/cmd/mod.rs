//! One module per command: its flags (clap), the plan they become, and how its results are
//! printed. The work itself is in `cdnlab-lab` (experiments, traces) and `cdnlab-live`
//! (servers).

pub mod experiments;
pub mod hierarchy;
pub mod mrc;
pub mod replay;
pub mod reproduce;
pub mod run;
pub mod synth;
pub mod topo;
pub mod tp;
pub mod trace_stats;

use cdnlab::Named;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// A flag's parser for a registry of named choices: the names are the possible values, and
/// each one's line of description is its help, both from the registry.
pub fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|m| {
        let p = PossibleValue::new(m.name());
        if m.about().is_empty() {
            p
        } else {
            p.help(m.about())
        }
    }))
    .try_map(|s| T::parse_name(&s))
}

/// `--threads`, shared by the commands that run work in parallel.
#[derive(Debug, clap::Args)]
pub struct Threads {
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long = "threads", value_name = "THREADS", value_parser = parse_threads)]
    pub count: Option<usize>,
}

/// Parses `--threads`: a whole number, at least 1.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "--threads {s}: a whole number, at least 1, is allowed"
        )),
    }
}

/// A comma-separated flag's items.
pub fn items(s: &str) -> Vec<&str> {
    s.split(',').collect()
}
