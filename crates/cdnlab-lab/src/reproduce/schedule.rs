//! The order in which `reproduce` runs its cells: every experiment's cells in one pool, the
//! timed ones first on a worker of their own, then longest expected first.

use super::*;

/// Expected seconds per cell (scale, experiment, cell, seconds), as measured by
/// `bench/reproduce.sh` on a 2-core machine. Only the order in which cells start depends on it,
/// never a result; a stale or missing entry costs time, not correctness.
const EXPECTED: &str = include_str!("../../../../scenarios/expected-seconds.csv");

/// The expected seconds of each (experiment, cell) at `scale`.
fn expected(scale: &str) -> std::collections::HashMap<(String, u64), f64> {
    EXPECTED
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 4 && f[0] == scale)
                .then(|| Some(((f[1].to_string(), f[2].parse().ok()?), f[3].parse().ok()?)))
                .flatten()
        })
        .collect()
}

/// Runs the cells of every chosen experiment in one pool, longest expected first, so both
/// cores stay busy to the end instead of idling at each experiment's tail. Timed experiments
/// (whose metric is a solve time) are one job at the head of the queue: one worker runs their
/// cells one after another, replications in sequence, while the other workers run the rest, so
/// a timed cell never shares its core and no core waits for it. Returns per experiment the
/// summary rows and the seconds its cells took, and the failed cells. Writes
/// `cell-seconds.csv` (what `bench/reproduce.sh` turns into the expected times).
#[allow(clippy::type_complexity)]
pub(super) fn run_all(
    chosen: &[(Reproduction, Scenario, PathBuf)],
    a: &ReproducePlan,
    out: &Path,
    shard: Shard,
    scale: &str,
) -> Result<(Vec<Vec<SummaryRow>>, Vec<f64>, Vec<String>)> {
    use rayon::prelude::*;
    let prepared: Vec<runner::Prepared> = chosen
        .iter()
        .map(|(_, sc, dir)| runner::prepare(sc, dir, shard, true))
        .collect::<Result<_>>()?;
    let table = &expected(scale);
    let cells: Vec<(usize, &crate::scenario::Cell, bool, Option<f64>)> = prepared
        .iter()
        .enumerate()
        .flat_map(|(e, p)| {
            let (id, timed) = (chosen[e].0.id, p.sc.experiment.timed());
            p.todo
                .iter()
                .map(move |&c| (e, c, timed, table.get(&(id.to_string(), c.index)).copied()))
        })
        .collect();
    let total = cells.len();
    let jobs = schedule(cells);
    eprintln!(
        "== {} experiments ({scale}): {total} cells to run, longest expected first",
        chosen.len()
    );
    let pool = runner::pool(a.threads)?;
    let (bar, log) = runner::cell_bar(total as u64, true, "reproduce".into());
    let mut ran: Vec<(usize, u64, std::result::Result<f64, String>)> = pool.install(|| {
        // par_bridge hands the jobs out in order as workers free up.
        jobs.into_iter()
            .par_bridge()
            .flat_map_iter(|cells| {
                // A timed job runs its cells here, in order; the cells' replications run in
                // sequence too (runner::replications), so this worker steals nothing meanwhile.
                cells
                    .into_iter()
                    // After a stop request (crate::stop) the cells not yet started are skipped.
                    .filter(|_| !crate::stop::requested())
                    .map(|(e, c)| {
                        let r = prepared[e].run(c);
                        bar.inc(1);
                        (e, c.index, r)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    drop(log);
    bar.finish_and_clear();
    crate::stop::check()?;
    ran.sort_by_key(|r| (r.0, r.1));
    let mut seconds = vec![0.0; chosen.len()];
    let mut failures = Vec::new();
    let mut timings = String::from("scale,experiment,cell,seconds\n");
    for (e, cell, r) in &ran {
        match r {
            Ok(t) => {
                seconds[*e] += t;
                timings += &format!("{scale},{},{cell},{t:.3}\n", chosen[*e].0.id);
            }
            Err(m) => failures.push(format!("{} cell {cell}: {m}", chosen[*e].0.id)),
        }
    }
    write_atomic(&out.join("cell-seconds.csv"), timings.as_bytes())?;
    let threads = pool.current_num_threads();
    let rows = prepared
        .into_iter()
        .map(|p| {
            let t = if p.sc.experiment.timed() { 1 } else { threads };
            p.finish(t)
        })
        .collect::<Result<_>>()?;
    Ok((rows, seconds, failures))
}

/// The jobs of [`run_all`] in the order workers take them, from (experiment, cell, timed,
/// expected seconds) in registry order: first one job of every timed cell, in registry order;
/// then one job per other cell, longest expected first, cells without an estimate (they may be
/// long) before all others, ties in registry order.
pub(super) fn schedule<C>(cells: Vec<(usize, C, bool, Option<f64>)>) -> Vec<Vec<(usize, C)>> {
    let (timed, mut other): (Vec<_>, Vec<_>) = cells.into_iter().partition(|c| c.2);
    // Stable: equal estimates (and the unknown, as infinity) keep registry order.
    other.sort_by(|x, y| {
        let t = |c: &(usize, C, bool, Option<f64>)| c.3.unwrap_or(f64::INFINITY);
        t(y).total_cmp(&t(x))
    });
    let timed: Vec<(usize, C)> = timed.into_iter().map(|(e, c, _, _)| (e, c)).collect();
    (!timed.is_empty())
        .then_some(timed)
        .into_iter()
        .chain(other.into_iter().map(|(e, c, _, _)| vec![(e, c)]))
        .collect()
}
