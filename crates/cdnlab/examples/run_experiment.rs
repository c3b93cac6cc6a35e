//! Run a registered experiment programmatically: resolve its parameters, run replications on
//! their own random streams, and summarise a metric with a 95 % confidence interval. This is
//! what `cdnlab run` does for each cell of a scenario's grid (in parallel, with files).
//!
//!     cargo run --release -p cdnlab --example run_experiment

use cdnlab::sim::{self, Value};
use cdnlab::stats::Summary;
use std::collections::BTreeMap;

fn main() -> Result<(), cdnlab::Error> {
    let exp = sim::find("lru-che")?;
    println!("{}: {}", exp.name(), exp.about());
    for alpha in [0.6, 1.0] {
        let given = BTreeMap::from([
            ("alpha".to_string(), Value::Float(alpha)),
            ("cache_size".to_string(), Value::Int(100)),
            ("objects".to_string(), Value::Int(10_000)),
            ("requests".to_string(), Value::Int(200_000)),
        ]);
        let params = sim::Params::resolve(exp.params(), &given)?;
        exp.check(&params)?;
        let metrics = exp.metric_names();
        // Replication r of cell 0 under master seed 1: the same stream `cdnlab run` would use.
        let runs: Vec<Vec<f64>> = (0..5)
            .map(|r| exp.run(&params, &mut cdnlab::rng::stream(1, 0, r)))
            .collect::<Result<_, _>>()?;
        for (m, name) in metrics.iter().enumerate() {
            let s = Summary::of(&runs.iter().map(|v| v[m]).collect::<Vec<_>>());
            println!("  alpha {alpha}: {name} = {:.4} ± {:.4}", s.mean, s.ci95);
        }
    }
    Ok(())
}
