//! The results of `cdnlab testbed run` for experiment `steering` (docs/steering.md#the-testbed-experiment):
//! every run as JSON, the sessions as CSV, per-policy metrics with 95% intervals beside the
//! simulator's, the emulator's calibration against the real players, figures and a summary.

use cdnlab_lab::plot::{self, Chart, Series};
use cdnlab_lab::{Error, Result};
use cdnlab_live::testbed::Spec;
use cdnlab_live::testbed::steering::{
    self, CALIBRATION, Calibration, Layout, Plan, PolicySummary, Run,
};
use std::path::Path;

/// The metrics of the summary table: (key, heading, how a value is shown).
const SHOWN: [(&str, &str, usize); 7] = [
    ("rebuffering", "rebuffering", 4),
    ("startup_s", "startup s", 2),
    ("bitrate_kbps", "bitrate kbit/s", 0),
    ("switches", "switches", 1),
    ("fairness", "fairness (Jain)", 3),
    ("degraded_share", "first edge's share after", 2),
    ("reaction_s", "reaction s", 1),
];

/// A summary worth showing: some runs and a finite mean.
fn shown(s: Option<&cdnlab::stats::Summary>) -> Option<&cdnlab::stats::Summary> {
    s.filter(|s| s.n > 0 && s.mean.is_finite())
}

fn cell(s: Option<&cdnlab::stats::Summary>, digits: usize) -> String {
    match shown(s) {
        Some(s) if s.ci95.is_finite() => {
            format!("{:.*} ± {:.*}", digits, s.mean, digits, s.ci95)
        }
        Some(s) => format!("{:.*}", digits, s.mean),
        None => "-".into(),
    }
}

pub(super) fn write(
    out: &Path,
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    cal: &[Calibration],
    runs: &[Run],
    sums: &[PolicySummary],
) -> Result<()> {
    let json = serde_json::json!({ "calibration": cal, "runs": runs });
    cdnlab_lab::files::write_atomic(
        &out.join("runs.json"),
        serde_json::to_string(&json)
            .map_err(|e| Error::Failed(e.to_string()))?
            .as_bytes(),
    )?;
    cdnlab_lab::files::write_atomic(&out.join("viewers.csv"), &steering::viewers_table(runs))?;
    // summary.csv: one row per policy and metric.
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "policy", "metric", "runs", "mean", "ci95", "sim_mean", "sim_ci95",
    ])
    .map_err(|e| Error::Failed(e.to_string()))?;
    for s in sums {
        for (k, m) in &s.metrics {
            let sim = s.simulated.get(k.as_str());
            w.write_record([
                s.policy.clone(),
                k.clone(),
                m.n.to_string(),
                format!("{}", m.mean),
                format!("{}", m.ci95),
                sim.map_or(String::new(), |x| format!("{}", x.mean)),
                sim.map_or(String::new(), |x| format!("{}", x.ci95)),
            ])
            .map_err(|e| Error::Failed(e.to_string()))?;
        }
    }
    cdnlab_lab::files::write_atomic(
        &out.join("summary.csv"),
        &w.into_inner().map_err(|e| Error::Failed(e.to_string()))?,
    )?;
    let verdicts: Vec<steering::CalibrationVerdict> =
        cal.iter().map(steering::judge_calibration).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    for v in &verdicts {
        w.serialize(v).map_err(|e| Error::Failed(e.to_string()))?;
    }
    cdnlab_lab::files::write_atomic(
        &out.join("calibration.csv"),
        &w.into_inner().map_err(|e| Error::Failed(e.to_string()))?,
    )?;
    figures(out, spec, plan, layout, cal, runs, sums)?;
    let text = summary(spec, plan, layout, &verdicts, sums);
    cdnlab_lab::files::write_atomic(&out.join("summary.md"), text.as_bytes())?;
    print!("{text}");
    Ok(())
}

fn summary(
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    verdicts: &[steering::CalibrationVerdict],
    sums: &[PolicySummary],
) -> String {
    let rates: Vec<String> = layout
        .edges
        .iter()
        .enumerate()
        .map(|(m, &e)| {
            format!(
                "{} {:.1} Mbit/s",
                spec.nodes[e].name,
                steering::edge_rate(spec, layout, m) / 1e6
            )
        })
        .collect();
    let mut text = format!(
        "# Steering by what viewers experience: {}\n\n{} emulated sessions ({}) and real players {:?} per run, {} run(s) per policy; pathways {}; {} keeps {:.0}% of its rate from {} s; TTL {} s, buffer {} s. Means over runs ± the 95% interval's half-width; the simulator's (`cdnlab::sim::steering`, {} runs, its own ladder scaled to this one) beside them.\n\n| policy | {} |\n|---|{}\n",
        spec.name,
        plan.sessions,
        plan.abr,
        plan.players,
        plan.runs,
        rates.join(", "),
        spec.nodes[layout.edges[0]].name,
        100.0 * plan.degrade,
        plan.degrade_at_s,
        plan.ttl,
        plan.buffer_s,
        plan.sim_runs,
        SHOWN.iter().map(|s| s.1).collect::<Vec<_>>().join(" | "),
        "---|".repeat(SHOWN.len())
    );
    for s in sums {
        let cells: Vec<String> = SHOWN
            .iter()
            .map(|&(k, _, d)| cell(s.metrics.get(k), d))
            .collect();
        text.push_str(&format!("| {} | {} |\n", s.policy, cells.join(" | ")));
        if !s.simulated.is_empty() {
            let cells: Vec<String> = SHOWN
                .iter()
                .map(|&(k, _, d)| cell(s.simulated.get(k), d))
                .collect();
            text.push_str(&format!("| *simulated* | {} |\n", cells.join(" | ")));
        }
    }
    // The simulator's ranking against the testbed's, on rebuffering: the pairs the simulator
    // separates (a difference above twice its standard error), and how many of them the
    // testbed's means order the same way.
    let (mut separated, mut same) = (0, 0);
    let mut differ = Vec::new();
    for (i, a) in sums.iter().enumerate() {
        for b in &sums[i + 1..] {
            let (Some(sa), Some(sb), Some(ta), Some(tb)) = (
                a.simulated.get("rebuffering"),
                b.simulated.get("rebuffering"),
                a.metrics.get("rebuffering"),
                b.metrics.get("rebuffering"),
            ) else {
                continue;
            };
            let d = sa.mean - sb.mean;
            if d.abs() > 2.0 * (sa.se().powi(2) + sb.se().powi(2)).sqrt() {
                separated += 1;
                if (ta.mean - tb.mean).signum() == d.signum() {
                    same += 1;
                } else {
                    differ.push(format!("{} / {}", a.policy, b.policy));
                }
            }
        }
    }
    if separated > 0 {
        text.push_str(&format!(
            "\nRanking by rebuffering: of the {separated} pairs of policies the simulator separates (a difference above twice its standard error), the testbed orders {same} the same way{}.\n",
            if differ.is_empty() {
                String::new()
            } else {
                format!(" (not: {})", differ.join(", "))
            }
        ));
    }
    text.push_str("\n## Real players and emulated sessions, side by side\n\n| policy | real rebuffering | emulated rebuffering | real bitrate kbit/s | emulated bitrate kbit/s | sessions that never played |\n|---|---|---|---|---|---|\n");
    for s in sums {
        let g = |k: &str, d| cell(s.metrics.get(k), d);
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            s.policy,
            g("real_rebuffering", 4),
            g("emulated_rebuffering", 4),
            g("real_bitrate_kbps", 0),
            g("emulated_bitrate_kbps", 0),
            g("never_played", 1)
        ));
    }
    if layout.clients.len() > 1 {
        let names: Vec<&str> = layout
            .clients
            .iter()
            .map(|&c| spec.nodes[c].name.as_str())
            .collect();
        text.push_str(&format!(
            "\n## Populations\n\nSession k and real player k belong to population k mod {} ({}). Each population's mean rebuffering and bitrate, and the gap between the best and the worst population's bitrate (the simulator's beside it).\n\n| policy | {} | {} | bitrate gap kbit/s | simulated gap |\n|---|{}---|---|\n",
            names.len(),
            names.join(", "),
            names
                .iter()
                .map(|n| format!("{n} rebuffering"))
                .collect::<Vec<_>>()
                .join(" | "),
            names
                .iter()
                .map(|n| format!("{n} kbit/s"))
                .collect::<Vec<_>>()
                .join(" | "),
            "---|".repeat(2 * names.len())
        ));
        for s in sums {
            let mut cells = Vec::new();
            for p in 0..names.len() {
                cells.push(cell(s.metrics.get(&format!("pop{p}_rebuffering")), 4));
            }
            for p in 0..names.len() {
                cells.push(cell(s.metrics.get(&format!("pop{p}_bitrate_kbps")), 0));
            }
            cells.push(cell(s.metrics.get("population_gap_kbps"), 0));
            cells.push(cell(s.simulated.get("population_gap_kbps"), 0));
            text.push_str(&format!("| {} | {} |\n", s.policy, cells.join(" | ")));
        }
    }
    if !verdicts.is_empty() {
        text.push_str(&format!(
            "\n## The session emulator against the real players\n\nEach player alone, then one emulated session of its ABR rule alone, on {} at {:?} bit/s (three equal phases of {} s). Tolerance, stated before the first run: {CALIBRATION}.\n\n| player | real kbit/s | emulated kbit/s | bitrate gap | buffer gap s | stalls real / emulated | segments real / emulated | same rendition | verdict |\n|---|---|---|---|---|---|---|---|---|\n",
            spec.nodes[layout.edges[0]].name,
            plan.calibrate_rates,
            plan.calibrate_seconds / 3.0
        ));
        for v in verdicts {
            text.push_str(&format!(
                "| {} | {:.0} | {:.0} | {:.0}% | {:.2} | {} / {} | {} / {} | {:.0}% | {} |\n",
                v.player,
                v.real_kbps,
                v.emulated_kbps,
                100.0 * v.bitrate_gap,
                v.buffer_gap_s,
                v.real_stalls,
                v.emulated_stalls,
                v.real_segments,
                v.emulated_segments,
                100.0 * v.same_rendition,
                if v.agree { "agree" } else { "disagree" }
            ));
        }
    }
    text
}

fn figures(
    out: &Path,
    spec: &Spec,
    plan: &Plan,
    layout: &Layout,
    cal: &[Calibration],
    runs: &[Run],
    sums: &[PolicySummary],
) -> Result<()> {
    calibration_figures(out, spec, plan, cal)?;
    if sums.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = sums.iter().map(|s| s.policy.clone()).collect();
    let x_label = format!(
        "policy: {}",
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{i} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let bars = |key: &str, title: &str, y: &str, file: &str| -> Result<()> {
        let point = |i: usize, s: Option<&cdnlab::stats::Summary>| {
            shown(s).map(|s| {
                let h = if s.ci95.is_finite() { s.ci95 } else { 0.0 };
                (i as f64, s.mean, s.mean - h, s.mean + h)
            })
        };
        let chart = Chart {
            title: format!("{}: {title}", spec.name),
            x_label: x_label.clone(),
            y_label: y.into(),
            series: vec![
                Series {
                    label: "testbed (95% interval over runs)".into(),
                    points: sums
                        .iter()
                        .enumerate()
                        .filter_map(|(i, s)| point(i, s.metrics.get(key)))
                        .collect(),
                    dash: plot::SCATTER,
                },
                Series {
                    label: "simulator".into(),
                    points: sums
                        .iter()
                        .enumerate()
                        .filter_map(|(i, s)| point(i, s.simulated.get(key)))
                        .map(|(x, m, l, h)| (x + 0.15, m, l, h))
                        .collect(),
                    dash: plot::SCATTER,
                },
            ],
            ..Default::default()
        };
        plot::write_chart(&chart, &out.join(file), plot::Format::Both, 1.0).map(|_| ())
    };
    bars(
        "rebuffering",
        "rebuffering ratio per policy",
        "stalled / (stalled + played)",
        "rebuffering.svg",
    )?;
    bars(
        "bitrate_kbps",
        "mean bitrate per policy",
        "kbit/s",
        "bitrate.svg",
    )?;
    bars("startup_s", "startup time per policy", "s", "startup.svg")?;
    if layout.clients.len() > 1 {
        bars(
            "population_gap_kbps",
            "best minus worst population's mean bitrate",
            "kbit/s",
            "populations.svg",
        )?;
    }
    let target = sums.first().map_or(0.0, |s| s.reaction_target);
    let mut series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, n)| Series {
            label: n.clone(),
            points: steering::first_edge_timeline(runs, n, plan)
                .into_iter()
                .map(|(t, s)| (t, s, s, s))
                .collect(),
            dash: i % 4,
        })
        .collect();
    series.push(Series {
        label: format!("the share a reaction must reach ({target:.2})"),
        points: vec![
            (plan.degrade_at_s, target, target, target),
            (plan.seconds, target, target, target),
        ],
        dash: 3,
    });
    let chart = Chart {
        title: format!(
            "{}: sessions on {} (its link degrades at {} s)",
            spec.name, spec.nodes[layout.edges[0]].name, plan.degrade_at_s
        ),
        x_label: "seconds from the run's start".into(),
        y_label: "share of the sessions fetching".into(),
        y_bounds: Some((0.0, 1.0)),
        series,
        marks: vec![(plan.degrade_at_s, "degradation".into())],
        ..Default::default()
    };
    plot::write_chart(&chart, &out.join("reaction.svg"), plot::Format::Both, 1.0)?;
    Ok(())
}

fn calibration_figures(out: &Path, spec: &Spec, plan: &Plan, cal: &[Calibration]) -> Result<()> {
    for c in cal {
        let track = |v: &steering::Viewer, what: &str, dash: usize| {
            let ladder = |r: usize| r as f64;
            vec![
                Series {
                    label: format!("{what}: rendition (0 lowest)"),
                    points: v
                        .segments
                        .iter()
                        .map(|s| (s.0, ladder(s.2), ladder(s.2), ladder(s.2)))
                        .collect(),
                    dash,
                },
                Series {
                    label: format!("{what}: buffer, s"),
                    points: v.buffer.iter().map(|b| (b.0, b.1, b.1, b.1)).collect(),
                    dash: dash + 2,
                },
            ]
        };
        let mut series = track(&c.real, &format!("real {}", c.player), 0);
        series.extend(track(&c.emulated, "emulated", 1));
        let chart = Chart {
            title: format!(
                "{}: {} against its emulation, link {:?} bit/s",
                spec.name, c.player, plan.calibrate_rates
            ),
            x_label: "seconds from the run's start".into(),
            y_label: "rendition index; buffer s".into(),
            series,
            ..Default::default()
        };
        plot::write_chart(
            &chart,
            &out.join(format!("calibration-{}.svg", c.player)),
            plot::Format::Both,
            1.0,
        )?;
    }
    Ok(())
}
