//! `cdnlab experiments`: every experiment a scenario can name, with its parameters and metrics.

use crate::say::outln;

pub fn run() {
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
