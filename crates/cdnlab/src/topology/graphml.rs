//! The Internet Topology Zoo's GraphML: `<key>` elements name the attributes (`attr.name`) that
//! `<data key=...>` elements of nodes, edges and the graph carry. Read: the graph's `label` (or
//! `Network`) as its name; a node's `id` attribute, its `label` data as its name, `Longitude`
//! and `Latitude`; an edge's `source` and `target` attributes, and `LinkSpeedRaw` (bit/s; or
//! `capacity`), `length`, `delay` and `loss` data. Other data are skipped. One graph per file.

use super::xml::{Step, number, walk};
use super::{Builder, Problem, RawLink, ReadOptions, Topology, TopologyError};
use std::collections::HashMap;
use std::io::BufRead;

#[derive(Default)]
struct Element {
    id: String,
    source: String,
    target: String,
    data: Vec<(String, String)>,
    line: u64,
}

impl Element {
    fn get(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|n| {
            self.data
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        })
    }

    fn number(&self, names: &[&str], what: &str) -> Result<Option<f64>, TopologyError> {
        match self.get(names) {
            None => Ok(None),
            Some(t) if t.trim().is_empty() => Ok(None),
            Some(t) => number(&format!("{what}: {}", names[0]), t, self.line).map(Some),
        }
    }
}

/// Reads a GraphML topology.
pub fn read(input: impl BufRead, options: ReadOptions) -> Result<Topology, TopologyError> {
    let mut b = Builder::new();
    let mut keys: HashMap<String, String> = HashMap::new();
    let mut current: Option<Element> = None;
    let mut graph_data: Vec<(String, String)> = Vec::new();
    let mut graphs = 0usize;
    let mut data_key = String::new();
    walk(input, |step, line| {
        match step {
            Step::Start(path, attrs) => {
                let attr = |name: &str| {
                    attrs
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                };
                let name = path.last().map(String::as_str).unwrap_or("");
                if path.len() == 1 && name != "graphml" {
                    return Err(TopologyError::at(
                        line,
                        Problem::Syntax(format!("the root element is <{name}>, not <graphml>")),
                    ));
                }
                match name {
                    "key" => {
                        if let (Some(id), Some(n)) = (attr("id"), attr("attr.name")) {
                            keys.insert(id, n);
                        }
                    }
                    "graph" => {
                        graphs += 1;
                        if graphs > 1 || path.len() != 2 {
                            return Err(TopologyError::at(
                                line,
                                Problem::Syntax(
                                    "a second or nested <graph>: cdnlab reads one graph per file"
                                        .into(),
                                ),
                            ));
                        }
                        if let Some(id) = attr("id") {
                            graph_data.push(("id".into(), id));
                        }
                    }
                    "node" | "edge" if path.len() == 3 => {
                        current = Some(Element {
                            id: attr("id").unwrap_or_default(),
                            source: attr("source").unwrap_or_default(),
                            target: attr("target").unwrap_or_default(),
                            data: Vec::new(),
                            line,
                        });
                    }
                    "data" => data_key = attr("key").unwrap_or_default(),
                    _ => {}
                }
            }
            Step::End(path, text) => {
                let name = path.last().map(String::as_str).unwrap_or("");
                let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
                match (name, parent) {
                    ("data", Some("node" | "edge")) => {
                        if let Some(e) = current.as_mut() {
                            let k = keys.get(&data_key).cloned().unwrap_or(data_key.clone());
                            e.data.push((k, text.to_string()));
                        }
                    }
                    ("data", Some("graph")) => {
                        let k = keys.get(&data_key).cloned().unwrap_or(data_key.clone());
                        graph_data.push((k, text.to_string()));
                    }
                    ("node", Some("graph")) => {
                        let e = current.take().unwrap_or_default();
                        if e.id.is_empty() {
                            return Err(TopologyError::at(
                                e.line,
                                Problem::Syntax("a <node> without an id".into()),
                            ));
                        }
                        let what = format!("node {}", e.id);
                        let lon = e.number(&["Longitude", "longitude"], &what)?;
                        let lat = e.number(&["Latitude", "latitude"], &what)?;
                        let label = e.get(&["label", "name"]).unwrap_or("").to_string();
                        b.node(&e.id, &label, lon.zip(lat).map(|(x, y)| [x, y]), e.line)?;
                    }
                    ("edge", Some("graph")) => {
                        let e = current.take().unwrap_or_default();
                        if e.source.is_empty() || e.target.is_empty() {
                            return Err(TopologyError::at(
                                e.line,
                                Problem::Syntax("an <edge> without a source and a target".into()),
                            ));
                        }
                        let what = format!("edge {}-{}", e.source, e.target);
                        let link = RawLink {
                            capacity: e.number(&["LinkSpeedRaw", "capacity"], &what)?,
                            length: e.number(&["length"], &what)?,
                            delay: e.number(&["delay"], &what)?,
                            loss: e.number(&["loss"], &what)?,
                            id: e.id.clone(),
                            a: e.source.clone(),
                            b: e.target.clone(),
                        };
                        b.link(link, e.line)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    })?;
    if graphs == 0 {
        return Err(TopologyError::whole(Problem::Syntax(
            "no <graph> in the file".into(),
        )));
    }
    for key in ["label", "Network", "id"] {
        if let Some((_, v)) = graph_data.iter().find(|(k, _)| k == key) {
            b.name(v);
            break;
        }
    }
    b.finish(options)
}
