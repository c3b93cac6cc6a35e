//! What the claims' falsifiers share: a model of one run, synthetic rows drawn from it for every
//! cell of a scenario, and small helpers to doctor a run.

use super::*;
use cdnlab::rng::Rng;

/// A model: the metric values of replication `rep` of the cell whose parameters `r` holds
/// (its `runs` are empty); metrics not named are 0.
pub type Model = fn(&SummaryRow, u64, &mut Rng) -> Vec<(&'static str, f64)>;

/// A claim with the model under which it must pass and models under which it must fail.
pub struct Falsifier {
    /// The reproduction (registry id) whose claim function emits the claim.
    pub rep: &'static str,
    pub claim: &'static str,
    pub right: Model,
    pub wrong: Vec<(&'static str, Model)>,
}

/// Sets `name` in a model's output (appends it when absent).
pub fn set(v: &mut Vec<(&'static str, f64)>, name: &'static str, x: f64) {
    match v.iter_mut().find(|m| m.0 == name) {
        Some(m) => m.1 = x,
        None => v.push((name, x)),
    }
}

/// A falsifier of claim `claim` of reproduction `rep`.
pub fn falsifier(
    rep: &'static str,
    claim: &'static str,
    right: Model,
    wrong: Vec<(&'static str, Model)>,
) -> Falsifier {
    Falsifier {
        rep,
        claim,
        right,
        wrong,
    }
}

/// The right model's output with metric `name` set to `value(cell, rng)`, drawn after the right
/// model's own draws: one replication doctored.
pub fn doctor(
    right: Model,
    r: &SummaryRow,
    rep: u64,
    rng: &mut Rng,
    name: &'static str,
    value: impl FnOnce(&SummaryRow, &mut Rng) -> f64,
) -> Vec<(&'static str, f64)> {
    let mut v = right(r, rep, rng);
    let x = value(r, rng);
    set(&mut v, name, x);
    v
}

/// The right model's output with metric `name` replaced by `f(cell, value)`.
pub fn tweak(
    r: &SummaryRow,
    rep: u64,
    rng: &mut Rng,
    right: Model,
    name: &'static str,
    f: fn(&SummaryRow, f64) -> f64,
) -> Vec<(&'static str, f64)> {
    let mut v = right(r, rep, rng);
    let x = v.iter().find(|m| m.0 == name).map_or(0.0, |m| m.1);
    set(&mut v, name, f(r, x));
    v
}

/// Rows for every cell of `sc`, with the scenario's replications drawn from `model`
/// (seeded per cell and replication, so the data are fixed).
pub fn synth(sc: &Scenario, model: Model) -> Vec<SummaryRow> {
    let names = sc.experiment.metric_names();
    sc.cells
        .iter()
        .map(|cell| {
            let probe = SummaryRow::new(cell.index, cell.params.values().clone(), Vec::new());
            let mut cols = vec![Vec::new(); names.len()];
            for rep in 0..sc.resolved.replications {
                let mut rng = cdnlab::rng::from_seed(cdnlab::rng::stream_seed(99, cell.index, rep));
                let vals = model(&probe, rep, &mut rng);
                for (m, name) in names.iter().enumerate() {
                    let v = vals.iter().find(|v| v.0 == *name).map_or(0.0, |v| v.1);
                    cols[m].push(v);
                }
                for (name, _) in &vals {
                    assert!(names.contains(name), "model sets unknown metric {name}");
                }
            }
            SummaryRow::new(cell.index, cell.params.values().clone(), cols)
        })
        .collect()
}

/// A normal draw (Box-Muller), for noise in models.
pub fn normal(rng: &mut Rng, mean: f64, sd: f64) -> f64 {
    use rand::RngExt;
    let (u, v): (f64, f64) = (rng.random(), rng.random());
    mean + sd * (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Every falsifier of every paper.
pub fn all() -> Vec<Falsifier> {
    let mut v = super::cache::falsifiers();
    v.extend(super::gwtw::falsifiers());
    v.extend(super::multihash::falsifiers());
    v.extend(super::transport::falsifiers());
    v
}
