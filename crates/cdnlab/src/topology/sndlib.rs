//! SNDlib (sndlib.put.poznan.pl, formerly sndlib.zib.de): networks and demand matrices, in its
//! native text format and in its XML format.
//!
//! Native: sections `NAME ( ... )`; `#` starts a comment and a line starting with `?` is the
//! header. `META ( key = value ... )`, one pair a line; `NODES ( id ( x y ) ... )`;
//! `LINKS ( id ( source target ) pre_installed_capacity pre_installed_cost routing_cost
//! setup_cost ( {module_capacity module_cost}* ) ... )`; `DEMANDS ( id ( source target )
//! routing_unit value max_path_length ... )`; other sections (`ADMISSIBLE_PATHS`) are skipped.
//! XML: `network/networkStructure/nodes[@coordinatesType]/node[@id]/coordinates/{x,y}`,
//! `.../links/link[@id]/{source,target,preInstalledModule/capacity}`,
//! `network/demands/demand/{source,target,demandValue}`, `network/meta/*`.
//!
//! Coordinates: the XML says `geographical` or `pixel`; the native format says nothing (unless
//! its META has `coordinates = pixel`, as `topo convert` writes), so the [`Builder`] reads it as
//! planar when a coordinate lies outside longitude [-180, 180] or latitude [-90, 90]. A link's capacity is its pre-installed capacity
//! (in SNDlib's unit) when above 0, else unknown.
//!
//! SNDlib's dynamic demand series (Abilene every 5 minutes, GEANT every 15) are one matrix a
//! file in either format; [`read_matrix`] reads one, with its `META` time and granularity.

use super::xml::{Step, number, walk};
use super::{Builder, Coordinates, Problem, RawLink, ReadOptions, Topology, TopologyError};
use std::io::{BufRead, Read, Write};

/// Longest line accepted, bytes.
const MAX_LINE: u64 = 1 << 20;

/// One demand matrix of a series: its entries by node name, and what its `META` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix {
    /// `(source, target, value)`, by node name.
    pub entries: Vec<(String, String, f64)>,
    /// `META` keys and values (`time`, `granularity`, ...), in file order.
    pub meta: Vec<(String, String)>,
}

/// What a file holds, before it becomes a topology.
#[derive(Default)]
struct Parsed {
    meta: Vec<(String, String)>,
    nodes: Vec<(String, Option<[f64; 2]>, u64)>,
    links: Vec<(RawLink, u64)>,
    demands: Vec<(String, String, f64, u64)>,
    has_demands: bool,
    planar: Option<bool>,
}

impl Parsed {
    fn topology(self, options: ReadOptions) -> Result<Topology, TopologyError> {
        let mut b = Builder::new();
        if let Some((_, n)) = self
            .meta
            .iter()
            .find(|(k, _)| k == "name" || k == "network")
        {
            b.name(n);
        }
        let declared = self
            .meta
            .iter()
            .find(|(k, _)| k == "coordinates")
            .map(|(_, v)| v == "pixel" || v == "planar");
        match self.planar.or(declared) {
            Some(true) => b.coordinates(Coordinates::Planar),
            Some(false) => b.coordinates(Coordinates::Geographic),
            None => {}
        }
        for (id, pos, line) in &self.nodes {
            b.node(id, id, *pos, *line)?;
        }
        for (link, line) in self.links {
            b.link(link, line)?;
        }
        if self.has_demands {
            b.has_demands();
        }
        for (s, t, v, line) in &self.demands {
            b.demand(s, t, *v, *line)?;
        }
        b.finish(options)
    }

    fn matrix(self) -> Matrix {
        Matrix {
            entries: self
                .demands
                .into_iter()
                .map(|(s, t, v, _)| (s, t, v))
                .collect(),
            meta: self.meta,
        }
    }
}

/// The native format's tokens: words, `(` and `)`, each with its line.
struct Tokens<R> {
    r: R,
    line: u64,
    pending: std::collections::VecDeque<(String, u64)>,
}

impl<R: BufRead> Tokens<R> {
    fn next(&mut self) -> Result<Option<(String, u64)>, TopologyError> {
        while self.pending.is_empty() {
            let mut buf = Vec::new();
            let n = (&mut self.r)
                .take(MAX_LINE + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| TopologyError::at(self.line + 1, Problem::Io(e.to_string())))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if n as u64 > MAX_LINE {
                return Err(TopologyError::at(
                    self.line,
                    Problem::Syntax(format!("a line longer than {MAX_LINE} bytes")),
                ));
            }
            let text = String::from_utf8(buf).map_err(|_| {
                TopologyError::at(
                    self.line,
                    Problem::Syntax("a line that is not UTF-8".into()),
                )
            })?;
            let text = text.trim_start_matches('\u{feff}');
            if text.starts_with('?') {
                continue;
            }
            let code = text.split('#').next().unwrap_or("");
            let spaced = code.replace('(', " ( ").replace(')', " ) ");
            self.pending.extend(
                spaced
                    .split_whitespace()
                    .map(|w| (w.to_string(), self.line)),
            );
        }
        Ok(self.pending.pop_front())
    }

    fn expect(&mut self, what: &str, context: &str) -> Result<(String, u64), TopologyError> {
        match self.next()? {
            Some(t) if what.is_empty() || t.0 == what => Ok(t),
            Some((t, line)) => Err(TopologyError::at(
                line,
                Problem::Syntax(format!(
                    "{context}: `{t}` where {} was expected",
                    if what.is_empty() {
                        "a value".to_string()
                    } else {
                        format!("`{what}`")
                    }
                )),
            )),
            None => Err(TopologyError::at(
                self.line,
                Problem::Syntax(format!("{context}: the file ends inside the section")),
            )),
        }
    }

    fn number(&mut self, field: &str) -> Result<f64, TopologyError> {
        let (t, line) = self.expect("", field)?;
        if t == "(" || t == ")" {
            return Err(TopologyError::at(
                line,
                Problem::Syntax(format!("{field}: `{t}` where a number was expected")),
            ));
        }
        number(field, &t, line)
    }
}

fn parse_native(input: impl BufRead) -> Result<Parsed, TopologyError> {
    let mut tk = Tokens {
        r: input,
        line: 0,
        pending: Default::default(),
    };
    let mut p = Parsed::default();
    let mut sections = 0;
    while let Some((name, line)) = tk.next()? {
        let ctx = format!("section {name}");
        tk.expect("(", &ctx)?;
        sections += 1;
        match name.as_str() {
            "META" => {
                // One `key = value` a line.
                let mut current: Option<(u64, Vec<String>)> = None;
                loop {
                    let (t, l) = tk.expect("", &ctx)?;
                    if t == ")" {
                        break;
                    }
                    match current.as_mut() {
                        Some((cl, words)) if *cl == l => words.push(t),
                        _ => {
                            if let Some((_, w)) = current.take() {
                                push_meta(&mut p, w);
                            }
                            current = Some((l, vec![t]));
                        }
                    }
                }
                if let Some((_, w)) = current {
                    push_meta(&mut p, w);
                }
            }
            "NODES" => loop {
                let (id, l) = tk.expect("", &ctx)?;
                if id == ")" {
                    break;
                }
                let what = format!("node {id}");
                tk.expect("(", &what)?;
                let x = tk.number(&format!("{what}: x (longitude)"))?;
                let y = tk.number(&format!("{what}: y (latitude)"))?;
                tk.expect(")", &what)?;
                p.nodes.push((id, Some([x, y]), l));
            },
            "LINKS" => loop {
                let (id, l) = tk.expect("", &ctx)?;
                if id == ")" {
                    break;
                }
                let what = format!("link {id}");
                tk.expect("(", &what)?;
                let (a, _) = tk.expect("", &what)?;
                let (b, _) = tk.expect("", &what)?;
                tk.expect(")", &what)?;
                let cap = tk.number(&format!("{what}: pre-installed capacity"))?;
                for field in ["pre-installed capacity cost", "routing cost", "setup cost"] {
                    tk.number(&format!("{what}: {field}"))?;
                }
                tk.expect("(", &format!("{what}: modules"))?;
                loop {
                    let (t, ml) = tk.expect("", &format!("{what}: modules"))?;
                    if t == ")" {
                        break;
                    }
                    number(&format!("{what}: module capacity or cost"), &t, ml)?;
                }
                p.links.push((
                    RawLink {
                        a,
                        b,
                        capacity: (cap != 0.0).then_some(cap),
                        id,
                        ..RawLink::default()
                    },
                    l,
                ));
            },
            "DEMANDS" => {
                p.has_demands = true;
                loop {
                    let (id, l) = tk.expect("", &ctx)?;
                    if id == ")" {
                        break;
                    }
                    let what = format!("demand {id}");
                    tk.expect("(", &what)?;
                    let (s, _) = tk.expect("", &what)?;
                    let (t, _) = tk.expect("", &what)?;
                    tk.expect(")", &what)?;
                    tk.number(&format!("{what}: routing unit"))?;
                    let v = tk.number(&format!("{what}: value"))?;
                    tk.expect("", &format!("{what}: max path length"))?;
                    p.demands.push((s, t, v, l));
                }
            }
            _ => {
                let mut depth = 1;
                while depth > 0 {
                    match tk.next()? {
                        Some((t, _)) if t == "(" => depth += 1,
                        Some((t, _)) if t == ")" => depth -= 1,
                        Some(_) => {}
                        None => {
                            return Err(TopologyError::at(
                                line,
                                Problem::Syntax(format!(
                                    "section {name} opened here is not closed"
                                )),
                            ));
                        }
                    }
                }
            }
        }
    }
    if sections == 0 {
        return Err(TopologyError::whole(Problem::Syntax(
            "no SNDlib sections (NODES ( ... ), LINKS ( ... ), DEMANDS ( ... )) in the file".into(),
        )));
    }
    Ok(p)
}

fn push_meta(p: &mut Parsed, words: Vec<String>) {
    if let Some(eq) = words.iter().position(|w| w == "=") {
        p.meta
            .push((words[..eq].join(" "), words[eq + 1..].join(" ")));
    }
}

fn parse_xml(input: impl BufRead) -> Result<Parsed, TopologyError> {
    let mut p = Parsed::default();
    let mut node: Option<(String, Option<f64>, Option<f64>, u64)> = None;
    let mut link: Option<(RawLink, u64)> = None;
    let mut demand: Option<(String, String, Option<f64>, u64)> = None;
    let mut root_checked = false;
    walk(input, |step, line| {
        match step {
            Step::Start(path, attrs) => {
                let attr = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                if !root_checked {
                    root_checked = true;
                    if path[0] != "network" {
                        return Err(TopologyError::at(
                            line,
                            Problem::Syntax(format!(
                                "the root element is <{}>, not SNDlib's <network>",
                                path[0]
                            )),
                        ));
                    }
                }
                match path.last().map(String::as_str) {
                    Some("nodes") => {
                        if let Some(t) = attr("coordinatesType") {
                            p.planar = Some(t == "pixel");
                        }
                    }
                    Some("node") => node = Some((attr("id").unwrap_or_default(), None, None, line)),
                    Some("link") => {
                        link = Some((
                            RawLink {
                                id: attr("id").unwrap_or_default(),
                                ..RawLink::default()
                            },
                            line,
                        ))
                    }
                    Some("demands") => p.has_demands = true,
                    Some("demand") => demand = Some((String::new(), String::new(), None, line)),
                    _ => {}
                }
            }
            Step::End(path, text) => {
                let n = path.len();
                let name = path[n - 1].as_str();
                let parent = if n >= 2 { path[n - 2].as_str() } else { "" };
                match (parent, name) {
                    ("meta", _) => p.meta.push((name.to_string(), text.to_string())),
                    ("coordinates", "x" | "y") => {
                        if let Some(nd) = node.as_mut() {
                            let v = number(&format!("node {}: {name}", nd.0), text, line)?;
                            if name == "x" {
                                nd.1 = Some(v);
                            } else {
                                nd.2 = Some(v);
                            }
                        }
                    }
                    ("nodes", "node") => {
                        if let Some((id, x, y, l)) = node.take() {
                            p.nodes.push((id, x.zip(y).map(|(x, y)| [x, y]), l));
                        }
                    }
                    ("link", "source" | "target") => {
                        if let Some((lk, _)) = link.as_mut() {
                            if name == "source" {
                                lk.a = text.to_string();
                            } else {
                                lk.b = text.to_string();
                            }
                        }
                    }
                    ("preInstalledModule", "capacity") => {
                        if let Some((lk, _)) = link.as_mut() {
                            let c = number(&format!("link {}: capacity", lk.id), text, line)?;
                            lk.capacity = (c != 0.0).then_some(c);
                        }
                    }
                    ("links", "link") => {
                        if let Some((lk, l)) = link.take() {
                            if lk.a.is_empty() || lk.b.is_empty() {
                                return Err(TopologyError::at(
                                    l,
                                    Problem::Syntax(format!(
                                        "link {} without a source and a target",
                                        lk.id
                                    )),
                                ));
                            }
                            p.links.push((lk, l));
                        }
                    }
                    ("demand", "source" | "target") => {
                        if let Some(d) = demand.as_mut() {
                            if name == "source" {
                                d.0 = text.to_string();
                            } else {
                                d.1 = text.to_string();
                            }
                        }
                    }
                    ("demand", "demandValue") => {
                        if let Some(d) = demand.as_mut() {
                            d.2 = Some(number(
                                &format!("demand {}-{}: value", d.0, d.1),
                                text,
                                line,
                            )?);
                        }
                    }
                    ("demands", "demand") => {
                        if let Some((s, t, v, l)) = demand.take() {
                            let v = v.ok_or_else(|| {
                                TopologyError::at(
                                    l,
                                    Problem::Syntax(format!(
                                        "demand {s}-{t} without a demandValue"
                                    )),
                                )
                            })?;
                            if s.is_empty() || t.is_empty() {
                                return Err(TopologyError::at(
                                    l,
                                    Problem::Syntax(
                                        "a demand without a source and a target".into(),
                                    ),
                                ));
                            }
                            p.demands.push((s, t, v, l));
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    })?;
    Ok(p)
}

/// Reads an SNDlib network in the native format.
pub fn read_native(input: impl BufRead, options: ReadOptions) -> Result<Topology, TopologyError> {
    parse_native(input)?.topology(options)
}

/// Reads an SNDlib network in the XML format.
pub fn read_xml(input: impl BufRead, options: ReadOptions) -> Result<Topology, TopologyError> {
    parse_xml(input)?.topology(options)
}

/// Reads one demand matrix (a file of an SNDlib demand series), native or XML.
pub fn read_matrix(input: impl BufRead, xml: bool) -> Result<Matrix, TopologyError> {
    let p = if xml {
        parse_xml(input)?
    } else {
        parse_native(input)?
    };
    if !p.has_demands {
        return Err(TopologyError::whole(Problem::Syntax(
            "no demands in the file (a DEMANDS section or <demands> element)".into(),
        )));
    }
    for (s, t, v, line) in &p.demands {
        super::check_number(
            &format!("demand {s}-{t}"),
            *v,
            0.0,
            f64::MAX,
            "a finite number >= 0",
        )
        .map_err(|e| TopologyError::at(*line, e))?;
    }
    Ok(p.matrix())
}

/// A name as SNDlib's native format allows it: no spaces, parentheses or `#`.
fn word(s: &str) -> String {
    let w: String = s
        .chars()
        .map(|c| {
            if c.is_whitespace() || "()#".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    if w.is_empty() { "_".into() } else { w }
}

/// Writes a topology in SNDlib's native format: nodes with their coordinates, links with their
/// capacity as pre-installed capacity (0 when unknown) and no modules, and the demand matrix.
/// Lengths and delays are not in the format (a reader derives them from the coordinates);
/// node names become words (spaces and parentheses as `_`), made distinct with `_2`, `_3`....
pub fn write_native(t: &Topology, mut out: impl Write) -> std::io::Result<()> {
    let mut names: Vec<String> = Vec::with_capacity(t.nodes.len());
    let mut used = std::collections::HashSet::new();
    for n in &t.nodes {
        let base = word(&n.name);
        let mut name = base.clone();
        let mut k = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}_{k}");
            k += 1;
        }
        names.push(name);
    }
    writeln!(out, "?SNDlib native format; type: network; version: 1.0")?;
    writeln!(out, "# network {}", word(&t.name))?;
    writeln!(out)?;
    writeln!(out, "META (")?;
    writeln!(out, "  name = {}", word(&t.name))?;
    if t.coordinates == Coordinates::Planar {
        writeln!(out, "  coordinates = pixel")?;
    }
    writeln!(out, ")")?;
    writeln!(out)?;
    writeln!(out, "NODES (")?;
    for (i, n) in t.nodes.iter().enumerate() {
        writeln!(out, "  {} ( {:?} {:?} )", names[i], n.pos[0], n.pos[1])?;
    }
    writeln!(out, ")")?;
    writeln!(out)?;
    writeln!(out, "LINKS (")?;
    for (i, l) in t.links.iter().enumerate() {
        writeln!(
            out,
            "  L{} ( {} {} ) {:?} 0.0 0.0 0.0 ( )",
            i + 1,
            names[l.a],
            names[l.b],
            l.capacity.unwrap_or(0.0)
        )?;
    }
    writeln!(out, ")")?;
    if let Some(d) = &t.demands {
        writeln!(out)?;
        writeln!(out, "DEMANDS (")?;
        for e in &d.entries {
            let (s, dd) = (&names[e.src], &names[e.dst]);
            writeln!(out, "  {s}_{dd} ( {s} {dd} ) 1 {:?} UNLIMITED", e.value)?;
        }
        writeln!(out, ")")?;
    }
    Ok(())
}
