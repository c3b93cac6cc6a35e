//! The machinery of the `cdnlab` command, as a library: trace replay, scenario sweeps, the
//! reproduction report, the Transportation Problem on files, plots. The `cdnlab` binary parses
//! flags and calls these; the Python package (`crates/cdnlab-py`) calls the same functions, so
//! both give the same answers. Models and algorithms live in the `cdnlab` crate; this one reads
//! files, runs threads, writes results and reports errors.

#![forbid(unsafe_code)]

pub mod error;
pub mod gentrace;
#[cfg(feature = "live")]
pub mod live;
pub mod mrc;
pub mod output;
pub mod plot;
pub mod progress;
pub mod provenance;
pub mod replay;
pub mod reproduce;
pub mod runner;
pub mod scenario;
pub mod stop;
pub mod tp;
pub mod tracestats;

use output::outln;

/// `cdnlab experiments`: every experiment a scenario can name, with its parameters and metrics.
pub fn print_experiments() {
    for e in cdnlab::sim::registry() {
        outln!("{}: {}", e.name(), e.about());
        outln!("  parameters:");
        for p in e.params() {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!("unit: {}; ", p.unit)
            };
            outln!(
                "    {:<12} {} ({unit}{}; default {})",
                p.name,
                p.help,
                p.kind.allowed(),
                p.default
            );
        }
        outln!("  metrics:");
        for m in e.metrics() {
            outln!("    {:<12} {} ({})", m.name, m.help, m.unit);
        }
    }
}
