//! What the claims' falsifiers share: a model of one run, synthetic rows drawn from it for every
//! cell of a scenario, and wrong models declared as the right one doctored (which metric, in
//! which replications, becomes what).

use super::*;
use cdnlab::rng::Rng;

/// A model: the metric values of replication `rep` of the cell whose parameters `r` holds
/// (its `runs` are empty); metrics not named are 0.
pub type Model = fn(&SummaryRow, u64, &mut Rng) -> Vec<(&'static str, f64)>;

/// Which replications of which cells a doctored model changes.
pub type When = fn(&SummaryRow, u64) -> bool;

/// Every replication of every cell.
pub fn always(_: &SummaryRow, _: u64) -> bool {
    true
}

/// What a doctored metric becomes.
#[derive(Clone, Copy)]
pub enum To {
    /// This value.
    Is(f64),
    /// `f(cell, the right model's value)`.
    Map(fn(&SummaryRow, f64) -> f64),
    /// A draw, made after the right model's own draws (so those stay as they were).
    Draw(fn(&SummaryRow, &mut Rng) -> f64),
    /// The value of another metric of the same replication.
    Same(&'static str),
}

/// A wrong model: the right one doctored, or one of its own.
pub enum Wrong {
    /// The right model's output with `edits` applied, in order, where `when` holds.
    Doctored {
        when: When,
        edits: Vec<(&'static str, To)>,
    },
    /// A model written out whole (for example the right one on a changed cell).
    Whole(Model),
}

/// A claim with the model under which it must pass and models under which it must fail.
pub struct Falsifier {
    /// The reproduction (registry id) whose claim function emits the claim.
    pub rep: &'static str,
    pub claim: &'static str,
    pub right: Model,
    pub wrong: Vec<(&'static str, Wrong)>,
}

impl Falsifier {
    /// A falsifier of claim `claim` of reproduction `rep`, with no wrong model yet.
    pub fn new(rep: &'static str, claim: &'static str, right: Model) -> Self {
        Falsifier {
            rep,
            claim,
            right,
            wrong: Vec::new(),
        }
    }

    /// Adds the wrong model `what`: the right model with `edits` where `when` holds.
    pub fn doctor(mut self, what: &'static str, when: When, edits: &[(&'static str, To)]) -> Self {
        let edits = edits.to_vec();
        self.wrong.push((what, Wrong::Doctored { when, edits }));
        self
    }

    /// Adds the wrong model `what`, written out whole.
    pub fn whole(mut self, what: &'static str, model: Model) -> Self {
        self.wrong.push((what, Wrong::Whole(model)));
        self
    }

    /// Replication `rep` of cell `r` under `wrong`.
    pub fn run(
        &self,
        wrong: &Wrong,
        r: &SummaryRow,
        rep: u64,
        rng: &mut Rng,
    ) -> Vec<(&'static str, f64)> {
        match wrong {
            Wrong::Whole(model) => model(r, rep, rng),
            Wrong::Doctored { when, edits } => {
                let mut v = (self.right)(r, rep, rng);
                if when(r, rep) {
                    for &(name, to) in edits {
                        let x = match to {
                            To::Is(x) => x,
                            To::Map(f) => f(r, get(&v, name)),
                            To::Draw(f) => f(r, rng),
                            To::Same(other) => get(&v, other),
                        };
                        set(&mut v, name, x);
                    }
                }
                v
            }
        }
    }
}

/// Metric `name` of a model's output (0 when absent, as in `synth`).
fn get(v: &[(&'static str, f64)], name: &str) -> f64 {
    v.iter().find(|m| m.0 == name).map_or(0.0, |m| m.1)
}

/// Sets `name` in a model's output (appends it when absent).
pub fn set(v: &mut Vec<(&'static str, f64)>, name: &'static str, x: f64) {
    match v.iter_mut().find(|m| m.0 == name) {
        Some(m) => m.1 = x,
        None => v.push((name, x)),
    }
}

/// Rows for every cell of `sc`, with the scenario's replications drawn from `model`
/// (seeded per cell and replication, so the data are fixed).
pub fn synth(
    sc: &Scenario,
    model: impl Fn(&SummaryRow, u64, &mut Rng) -> Vec<(&'static str, f64)>,
) -> Vec<SummaryRow> {
    let names = sc.experiment.metric_names();
    sc.cells
        .iter()
        .map(|cell| {
            let probe = SummaryRow::new(
                sc.experiment,
                cell.index,
                cell.params.values().clone(),
                Vec::new(),
            );
            let mut cols = vec![Vec::new(); names.len()];
            for rep in 0..sc.resolved.replications {
                let mut rng = cdnlab::rng::from_seed(cdnlab::rng::stream_seed(99, cell.index, rep));
                let vals = model(&probe, rep, &mut rng);
                for (m, name) in names.iter().enumerate() {
                    cols[m].push(get(&vals, name));
                }
                for (name, _) in &vals {
                    assert!(names.contains(name), "model sets unknown metric {name}");
                }
            }
            SummaryRow::new(
                sc.experiment,
                cell.index,
                cell.params.values().clone(),
                cols,
            )
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
    v.extend(super::steering::falsifiers());
    v
}
