//! The report: report.html (the claims by paper, each experiment's figures, parameters and
//! replications, provenance) and the summary lines printed at the end of a run.

use super::*;

/// Where a run's time went: per experiment the cells, the replications and the seconds its cells
/// took (slowest first), then the total and the wall-clock time of the whole run.
pub(super) fn time_table(done: &[Done], wall: f64) -> String {
    let mut rows: Vec<&Done> = done.iter().collect();
    rows.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let mut t = format!(
        "{:<18} {:>6} {:>8} {:>12}\n",
        "experiment", "cells", "runs", "cell-seconds"
    );
    for d in &rows {
        t += &format!(
            "{:<18} {:>6} {:>8} {:>12.1}\n",
            d.rep.id,
            d.scenario.cells.len(),
            d.runs(),
            d.seconds
        );
    }
    t += &format!(
        "{:<18} {:>6} {:>8} {:>12.1}\nwall clock {wall:.1} s (cells of all experiments run side by side)",
        "total",
        rows.iter().map(|d| d.scenario.cells.len()).sum::<usize>(),
        rows.iter().map(|d| d.runs()).sum::<usize>(),
        rows.iter().map(|d| d.seconds).sum::<f64>()
    );
    t
}

impl Done {
    /// Replications summarised, over every cell.
    pub(super) fn runs(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.metrics.first().map_or(0, |s| s.n))
            .sum()
    }

    /// "10 replications", or with a precision target "5 to 40 replications per cell until ...".
    fn replications_in_words(&self) -> String {
        let r = &self.scenario.resolved;
        let Some(p) = &r.precision else {
            return format!("{} replications per cell", r.replications);
        };
        let targets: Vec<String> = p
            .half_width
            .iter()
            .map(|(m, h)| format!("{m} ± {h}"))
            .chain(
                p.relative_half_width
                    .iter()
                    .map(|(m, f)| format!("{m} ± {}%", f * 100.0)),
            )
            .collect();
        let used: Vec<usize> = self
            .rows
            .iter()
            .map(|r| r.metrics.first().map_or(0, |s| s.n))
            .collect();
        let met = self
            .rows
            .iter()
            .filter(|r| r.target_met == Some(true))
            .count();
        format!(
            "{} to {} replications per cell, added {} at a time until the 95% interval is \
             within {} (used {} to {}; target met in {met} of {} cells)",
            p.min_replications,
            r.replications,
            p.batch,
            targets.join(" and "),
            used.iter().min().unwrap_or(&0),
            used.iter().max().unwrap_or(&0),
            used.len()
        )
    }
}

/// "P of N claims of the papers pass; findings F of G; additions A of B".
pub(super) fn tally(claims: &[&Claim]) -> String {
    let count = |k: Kind| {
        let of: Vec<&&Claim> = claims.iter().filter(|c| c.kind == k).collect();
        (of.iter().filter(|c| c.pass).count(), of.len())
    };
    let (p, n) = count(Kind::Paper);
    let (fp, fln) = count(Kind::Finding);
    let (ap, an) = count(Kind::Addition);
    format!(
        "{p} of {n} claims of the papers pass; findings of the reconstruction: {fp} of {fln} \
         hold; cdnlab's additions: {ap} of {an} hold"
    )
}

/// A paper's name in the report.
fn paper_name(paper: &str) -> &'static str {
    match paper {
        "cache" => "Cache substrate: LRU against the Che approximation",
        "gwtw" => "Go-With-The-Winner server selection",
        "multihash" => "Multi-hash replication in a DHT-based CDN",
        "transport" => "Optimal allocation for streaming (Transportation Problem)",
        "steering" => "Steering by what viewers experience (cdnlab's comparison of policies)",
        _ => "Other",
    }
}

const STYLE: &str = "body{font-family:'DejaVu Sans',sans-serif;max-width:1180px;margin:1.5em auto;\
padding:0 1em;line-height:1.45;color:#222}\
h1{font-size:1.7em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}h3{margin-top:1.6em}\
table{border-collapse:collapse;margin:.8em 0;width:100%}\
td,th{border:1px solid #ccc;padding:4px 7px;text-align:left;vertical-align:top;overflow-wrap:break-word}\
th{background:#f4f4f4}table.claims td,table.emulation td{overflow-wrap:anywhere}table.claims,table.emulation{table-layout:fixed;font-size:.92em}\
tr.fail td{background:#fdecea}.pass-mark{color:#1a7f37;font-weight:bold}\
.fail-mark{color:#b3261e;font-weight:bold}small{color:#555}small.differs{color:#b3261e}\
code{background:#f3f3f3;overflow-wrap:anywhere}\
details pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8em;max-height:20em;overflow:auto}\
figure{margin:1.2em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.9em;color:#444}nav.toc ul{margin:.2em 0}.num{text-align:right}";

/// A value of a resolved scenario as a person writes it: `web`, `1000`, `0.5`.
fn show_toml(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => words::sig(*f, 6),
        toml::Value::Array(a) => a.iter().map(show_toml).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// A resolved parameter as a person writes it.
fn show_value(v: &cdnlab::sim::Value) -> String {
    match v {
        cdnlab::sim::Value::Float(f) => words::sig(*f, 6),
        other => other.to_string(),
    }
}

/// The report's template (minijinja, HTML auto-escaping by our [`esc`]).
const TEMPLATE: &str = include_str!("report.html");

/// The committed record of the last paper-scale run (`scenarios/verdicts-full.csv`, written by
/// `bench/reproduce.sh`): claim, pass (true or false), measured in words, commit, date.
const PAPER_SCALE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/verdicts-full.csv"
));

/// A claim's verdict in the last paper-scale run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub(super) struct Recorded {
    pub claim: String,
    pub pass: bool,
    pub measured: String,
    pub commit: String,
    pub date: String,
}

/// The record, by claim id (empty if it cannot be read: the report then says there is none).
pub(super) fn paper_scale() -> Vec<Recorded> {
    csv::Reader::from_reader(PAPER_SCALE.as_bytes())
        .deserialize()
        .filter_map(|r| r.ok())
        .collect()
}

/// A claim's row in a claims table.
#[derive(Serialize)]
struct ClaimRow<'a> {
    pass: bool,
    claim: &'a str,
    id: &'a str,
    kind: &'static str,
    words: &'a str,
    note: Option<&'a str>,
    rules: String,
    data: String,
    expected: &'a str,
    exp: &'static str,
    /// In a quick report: the claim's verdict in the last paper-scale run, if it was there,
    /// and whether it differs from this one.
    paper_scale: Option<Recorded>,
    differs: bool,
    /// In a quick report, a claim the last paper-scale run did not have.
    unrecorded: bool,
}

impl<'a> ClaimRow<'a> {
    fn new(c: &'a Claim, d: &Done, record: Option<&[Recorded]>) -> Self {
        let paper_scale = record.and_then(|r| r.iter().find(|x| x.claim == c.id).cloned());
        ClaimRow {
            differs: paper_scale.as_ref().is_some_and(|r| r.pass != c.pass),
            unrecorded: record.is_some() && paper_scale.is_none(),
            paper_scale,
            pass: c.pass,
            claim: &c.claim,
            id: &c.id,
            kind: match c.kind {
                Kind::Paper => "paper",
                Kind::Finding => "finding",
                Kind::Addition => "addition",
            },
            words: &c.in_words,
            note: c.note.as_deref(),
            rules: c.rules.join(", "),
            data: serde_json::to_string_pretty(&c.measured).unwrap_or_default(),
            expected: &c.expected,
            exp: d.rep.id,
        }
    }
}

/// An experiment's link in the contents.
#[derive(Serialize)]
struct Link {
    id: &'static str,
    title: &'static str,
}

/// A paper's row in the summary, and its experiments in the contents.
#[derive(Serialize)]
struct PaperRow {
    name: &'static str,
    claims: String,
    findings: String,
    additions: String,
    experiments: Vec<&'static str>,
    titles: Vec<Link>,
    failing: Vec<String>,
}

/// The claims of one kind, in their own section.
#[derive(Serialize)]
struct KindSection<'a> {
    anchor: &'static str,
    heading: &'static str,
    claims: Vec<ClaimRow<'a>>,
}

/// A parameter of an experiment: swept (its values), set, or left at its default.
#[derive(Serialize)]
struct ParamRow {
    name: &'static str,
    swept: Option<String>,
    value: Option<String>,
    default: Option<String>,
    help: &'static str,
}

/// A figure with its caption's parts.
#[derive(Serialize)]
struct FigureRow {
    number: usize,
    svg: String,
    png: String,
    title: String,
    what: Vec<String>,
    x: String,
    x_help: Option<&'static str>,
    series: Option<String>,
    filter: Option<String>,
    over: String,
}

/// The replications each cell of an experiment with a precision target needed.
#[derive(Serialize)]
struct CellsTable {
    swept: Vec<String>,
    rows: Vec<CellRow>,
}

#[derive(Serialize)]
struct CellRow {
    values: Vec<String>,
    replications: usize,
    met: Option<bool>,
}

/// The recorded emulation claims, each with whether its code has changed since.
#[derive(Serialize)]
struct EmulationRow {
    #[serde(flatten)]
    row: crate::emulation::Recorded,
    stale: bool,
}

fn emulation_rows() -> Vec<EmulationRow> {
    crate::emulation::record()
        .into_iter()
        .map(|row| EmulationRow {
            stale: crate::emulation::stale(&row),
            row,
        })
        .collect()
}

/// One experiment's section.
#[derive(Serialize)]
struct ExperimentSection<'a> {
    id: &'static str,
    title: &'static str,
    paper: &'static str,
    notes: &'static str,
    replications: String,
    cells: usize,
    seed: u64,
    experiment: String,
    folder: String,
    params: Vec<ParamRow>,
    figures: Vec<FigureRow>,
    cells_table: Option<CellsTable>,
    claims: Vec<ClaimRow<'a>>,
}

/// The provenance line's values.
#[derive(Serialize)]
struct ProvenanceView<'a> {
    version: &'a str,
    commit: &'a str,
    command: String,
    started: &'a str,
    seconds: String,
    threads: usize,
    cores: usize,
    os: &'a str,
}

/// report.html: the tally, the summary by paper, the claims by kind, each experiment's section
/// and the provenance.
pub(super) fn report(done: &[Done], scale: &str, prov: &provenance::Provenance) -> Result<String> {
    // A quick report shows each claim's verdict at paper scale beside its own.
    let record = (scale == "quick").then(paper_scale);
    let claims: Vec<(&Claim, &Done)> = done
        .iter()
        .flat_map(|d| d.claims.iter().map(move |c| (c, d)))
        .collect();
    let mut papers: Vec<&str> = done.iter().map(|d| d.rep.paper).collect();
    papers.dedup();
    let papers: Vec<PaperRow> = papers
        .iter()
        .map(|paper| {
            let of = |k: Kind| {
                let v: Vec<&Claim> = claims
                    .iter()
                    .filter(|c| c.0.paper == *paper && c.0.kind == k)
                    .map(|c| c.0)
                    .collect();
                if v.is_empty() {
                    "—".to_string()
                } else {
                    format!("{} of {}", v.iter().filter(|c| c.pass).count(), v.len())
                }
            };
            let mine = || done.iter().filter(|d| d.rep.paper == *paper);
            PaperRow {
                name: paper_name(paper),
                claims: of(Kind::Paper),
                findings: of(Kind::Finding),
                additions: of(Kind::Addition),
                experiments: mine().map(|d| d.rep.id).collect(),
                titles: mine()
                    .map(|d| Link {
                        id: d.rep.id,
                        title: d.rep.title,
                    })
                    .collect(),
                failing: claims
                    .iter()
                    .filter(|c| c.0.paper == *paper && !c.0.pass)
                    .map(|c| c.0.id.clone())
                    .collect(),
            }
        })
        .collect();
    let kinds: Vec<KindSection> = [Kind::Paper, Kind::Finding, Kind::Addition]
        .into_iter()
        .map(|kind| KindSection {
            anchor: kind_anchor(kind),
            heading: kind.heading(),
            claims: claims
                .iter()
                .filter(|c| c.0.kind == kind)
                .map(|(c, d)| ClaimRow::new(c, d, record.as_deref()))
                .collect(),
        })
        .filter(|k| !k.claims.is_empty())
        .collect();
    let mut figure = 0;
    let experiments = done
        .iter()
        .map(|d| experiment_section(d, &mut figure, record.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    let view = ProvenanceView {
        version: &prov.version,
        commit: &prov.commit,
        command: prov.command.join(" "),
        started: &prov.started,
        seconds: format!("{:.0}", prov.seconds),
        threads: prov.threads,
        cores: prov.cores,
        os: &prov.os,
    };
    let seeds: Vec<String> = done
        .iter()
        .map(|d| format!("{} {}", d.rep.id, d.scenario.resolved.seed))
        .collect();
    // Claims whose quick verdict differs from the last paper-scale one.
    let differ: Vec<&str> = claims
        .iter()
        .filter(|(c, _)| {
            record
                .as_ref()
                .is_some_and(|r| r.iter().any(|x| x.claim == c.id && x.pass != c.pass))
        })
        .map(|(c, _)| c.id.as_str())
        .collect();
    let mut env = minijinja::Environment::new();
    env.set_formatter(|out, _, value| {
        if value.is_safe() {
            out.write_str(&value.to_string())?;
        } else {
            out.write_str(&esc(&value.to_string()))?;
        }
        Ok(())
    });
    let failed = |e: minijinja::Error| Error::Failed(format!("report template: {e:#}"));
    env.add_template("report.html", TEMPLATE).map_err(failed)?;
    let html = env
        .get_template("report.html")
        .and_then(|t| {
            t.render(minijinja::context! {
                scale, style => STYLE, papers, kinds, experiments, prov => view, seeds,
                tally => tally(&claims.iter().map(|c| c.0).collect::<Vec<_>>()),
                differ => differ, recorded => record.as_ref().and_then(|r| r.first()).cloned(),
                emulation => emulation_rows(),
            })
        })
        .map_err(failed)?;
    Ok(html + "\n")
}

fn kind_anchor(kind: Kind) -> &'static str {
    match kind {
        Kind::Paper => "claims",
        Kind::Finding => "findings",
        Kind::Addition => "additions",
    }
}

/// One experiment's section: what it tests, its scale, its parameters, its figures with
/// captions and its claims. Every figure must exist: the report links it.
fn experiment_section<'a>(
    d: &'a Done,
    figure: &mut usize,
    record: Option<&[Recorded]>,
) -> Result<ExperimentSection<'a>> {
    let r = &d.scenario.resolved;
    let folder = d
        .dir
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let first = d.scenario.cells.first().map(|c| c.params.values());
    let params = d
        .scenario
        .experiment
        .params()
        .iter()
        .map(|spec| ParamRow {
            name: spec.name,
            swept: r
                .grid
                .get(spec.name)
                .map(|vs| vs.iter().map(show_toml).collect::<Vec<_>>().join(", ")),
            value: r.params.get(spec.name).map(show_toml),
            default: first.and_then(|p| p.get(spec.name)).map(show_value),
            help: spec.help,
        })
        .collect();
    let metrics = d.scenario.experiment.metrics();
    let mut figures = Vec::new();
    for p in &r.plots {
        if !d.dir.join(p.file_as("svg")).is_file() {
            return Err(Error::Failed(format!(
                "{}: figure {} missing (re-run the experiment)",
                d.rep.id,
                d.dir.join(p.file_as("svg")).display()
            )));
        }
        *figure += 1;
        let filter: Vec<String> = p
            .filter
            .iter()
            .map(|(k, v)| format!("{k} = {}", show_toml(v)))
            .collect();
        figures.push(FigureRow {
            number: *figure,
            svg: format!("{folder}/{}", p.file_as("svg")),
            png: format!("{folder}/{}", p.file_as("png")),
            title: p.title.clone().unwrap_or_else(|| r.name.clone()),
            what: p
                .y
                .iter()
                .map(|y| match metrics.iter().find(|m| m.name == y.as_str()) {
                    Some(m) => format!("{} ({})", m.help, m.unit),
                    None => y.clone(),
                })
                .collect(),
            x: p.x.clone(),
            x_help: d
                .scenario
                .experiment
                .params()
                .iter()
                .find(|s| s.name == p.x)
                .map(|s| s.help),
            series: p.series.clone(),
            filter: (!filter.is_empty()).then(|| filter.join(", ")),
            over: match r.precision {
                None => format!("{} replications", r.replications),
                Some(_) => "each cell's replications (per cell below)".into(),
            },
        });
    }
    let cells_table = r.precision.is_some().then(|| {
        let swept: Vec<String> = r.grid.keys().cloned().collect();
        CellsTable {
            rows: d
                .rows
                .iter()
                .map(|row| CellRow {
                    values: swept.iter().map(|k| show_value(&row.params[k])).collect(),
                    replications: row.metrics.first().map_or(0, |s| s.n),
                    met: row.target_met,
                })
                .collect(),
            swept,
        }
    });
    Ok(ExperimentSection {
        id: d.rep.id,
        title: d.rep.title,
        paper: paper_name(d.rep.paper),
        notes: d.rep.notes,
        replications: d.replications_in_words(),
        cells: d.scenario.cells.len(),
        seed: r.seed,
        experiment: r.experiment.clone(),
        folder,
        params,
        figures,
        cells_table,
        claims: d
            .claims
            .iter()
            .map(|c| ClaimRow::new(c, d, record))
            .collect(),
    })
}
