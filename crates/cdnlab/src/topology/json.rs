//! networkx node-link JSON, as topohub ships its 707 networks and as `topo convert` writes:
//!
//! ```json
//! {"directed": false, "multigraph": false,
//!  "graph": {"name": "abilene", "demands": {"0": {"1": 8016.0}}},
//!  "nodes": [{"id": 0, "name": "ATLAM5", "pos": [-84.38, 33.75]}],
//!  "edges": [{"source": 0, "target": 1, "dist": 132.4}]}
//! ```
//!
//! `pos` is (longitude, latitude); `dist` is the link's length in km; `edges` may be called
//! `links` (networkx's older name). cdnlab also reads and writes, where it has them, an edge's
//! `capacity` (bit/s), `delay` (ms) and `loss`, the graph's `coordinates` (`"planar"` for plane
//! coordinates) and a demand series `graph.series`: `[{"at": seconds, "demands": {...}}]`.
//! Other fields (topohub's `stats`, `ecmp_fwd`) are skipped. Node ids are numbers or strings.
//!
//! serde_json streams from the reader; a counting reader notes the line each node and edge
//! starts on, so a refusal names it.

use super::{Builder, Coordinates, Problem, RawLink, ReadOptions, Topology, TopologyError};
use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::{Map, Value, json};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};

thread_local! {
    /// The line the JSON reader is on (set by [`Counting`], read by [`Located`]).
    static LINE: Cell<u64> = const { Cell::new(1) };
}

/// Counts the newlines serde_json reads (it reads a byte at a time through `Read::bytes`).
struct Counting<R>(R);

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        let newlines = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        LINE.with(|l| l.set(l.get() + newlines));
        Ok(n)
    }
}

/// A value with the line it starts on.
struct Located<T> {
    line: u64,
    value: T,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let line = LINE.with(Cell::get);
        Ok(Located {
            line,
            value: T::deserialize(d)?,
        })
    }
}

#[derive(Deserialize)]
struct RawNode {
    id: Value,
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    pos: Option<[f64; 2]>,
}

#[derive(Deserialize)]
struct RawEdge {
    source: Value,
    target: Value,
    #[serde(default)]
    dist: Option<f64>,
    #[serde(default)]
    capacity: Option<f64>,
    #[serde(default)]
    delay: Option<f64>,
    #[serde(default)]
    loss: Option<f64>,
    #[serde(default)]
    id: Option<Value>,
}

#[derive(Deserialize)]
struct RawSnapshot {
    at: f64,
    demands: BTreeMap<String, BTreeMap<String, f64>>,
}

#[derive(Deserialize, Default)]
struct RawGraph {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    coordinates: Option<String>,
    #[serde(default)]
    demands: Option<BTreeMap<String, BTreeMap<String, f64>>>,
    #[serde(default)]
    series: Option<Vec<RawSnapshot>>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    graph: Option<Located<RawGraph>>,
    nodes: Vec<Located<RawNode>>,
    #[serde(default)]
    edges: Option<Vec<Located<RawEdge>>>,
    #[serde(default)]
    links: Option<Vec<Located<RawEdge>>>,
}

/// An id as the key other elements use: a string as it is, a number as JSON writes it.
fn key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads a node-link JSON topology.
pub fn read(input: impl BufRead, options: ReadOptions) -> Result<Topology, TopologyError> {
    LINE.with(|l| l.set(1));
    let raw: Raw = serde_json::from_reader(Counting(input)).map_err(|e| {
        let what = if e.is_io() {
            Problem::Io(e.to_string())
        } else {
            Problem::Syntax(format!(
                "{e} (expected node-link JSON: {{\"graph\", \"nodes\", \"edges\"}})"
            ))
        };
        // serde_json's message carries the line and column already.
        TopologyError::whole(what)
    })?;
    let mut b = Builder::new();
    let (graph, graph_line) = match raw.graph {
        Some(g) => (g.value, g.line),
        None => (RawGraph::default(), 1),
    };
    if let Some(n) = &graph.name {
        b.name(n);
    }
    if graph.coordinates.as_deref() == Some("planar") {
        b.coordinates(Coordinates::Planar);
    }
    let bad_id = |line: u64, what: &str, v: &Value| {
        TopologyError::at(
            line,
            Problem::Value {
                field: what.to_string(),
                value: v.to_string(),
                allowed: "a number or a string".into(),
            },
        )
    };
    for n in &raw.nodes {
        let id = key(&n.value.id).ok_or_else(|| bad_id(n.line, "node id", &n.value.id))?;
        let name = n.value.name.as_ref().and_then(key).unwrap_or_default();
        b.node(&id, &name, n.value.pos, n.line)?;
    }
    if raw.edges.is_some() && raw.links.is_some() {
        return Err(TopologyError::whole(Problem::Syntax(
            "both \"edges\" and \"links\": a file has one list of links".into(),
        )));
    }
    for e in raw.edges.or(raw.links).unwrap_or_default() {
        let line = e.line;
        let e = e.value;
        let a = key(&e.source).ok_or_else(|| bad_id(line, "edge source", &e.source))?;
        let bb = key(&e.target).ok_or_else(|| bad_id(line, "edge target", &e.target))?;
        b.link(
            RawLink {
                id: e.id.as_ref().and_then(key).unwrap_or_default(),
                a,
                b: bb,
                capacity: e.capacity,
                length: e.dist,
                delay: e.delay,
                loss: e.loss,
            },
            line,
        )?;
    }
    if let Some(d) = &graph.demands {
        b.has_demands();
        for (s, row) in d {
            for (t, v) in row {
                b.demand(s, t, *v, graph_line)?;
            }
        }
    }
    let mut topo = b.finish(options)?;
    if let Some(series) = graph.series {
        // Series entries name node ids; the topology's nodes are named: map ids to names.
        let ids: Vec<String> = raw
            .nodes
            .iter()
            .map(|n| key(&n.value.id).unwrap_or_default())
            .collect();
        let by_id = |id: &str| -> String {
            match ids.iter().position(|x| x == id) {
                Some(i) => {
                    let n = &raw.nodes[i].value;
                    n.name
                        .as_ref()
                        .and_then(key)
                        .filter(|s| !s.trim().is_empty())
                        .unwrap_or_else(|| id.to_string())
                        .trim()
                        .to_string()
                }
                None => id.to_string(),
            }
        };
        let intervals = series
            .into_iter()
            .map(|s| {
                let entries = s
                    .demands
                    .iter()
                    .flat_map(|(src, row)| {
                        row.iter()
                            .map(|(dst, v)| (by_id(src), by_id(dst), *v))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                (s.at, entries)
            })
            .collect();
        topo.attach_series(intervals)
            .map_err(|e| TopologyError::at(graph_line, e.problem))?;
    }
    Ok(topo)
}

fn matrix(d: &super::Demands) -> Value {
    let mut rows: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for e in &d.entries {
        rows.entry(e.src)
            .or_default()
            .insert(e.dst.to_string(), json!(e.value));
    }
    Value::Object(
        rows.into_iter()
            .map(|(s, r)| (s.to_string(), Value::Object(r)))
            .collect(),
    )
}

/// Writes a topology as node-link JSON (node ids are the node indices).
pub fn write(t: &Topology, mut out: impl Write) -> std::io::Result<()> {
    let mut graph = Map::new();
    graph.insert("name".into(), json!(t.name));
    if t.coordinates == Coordinates::Planar {
        graph.insert("coordinates".into(), json!("planar"));
    }
    if let Some(d) = &t.demands {
        graph.insert("demands".into(), matrix(d));
    }
    if !t.series.is_empty() {
        graph.insert(
            "series".into(),
            Value::Array(
                t.series
                    .iter()
                    .map(|s| json!({"at": s.at, "demands": matrix(&s.demands)}))
                    .collect(),
            ),
        );
    }
    let nodes: Vec<Value> = t
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"id": i, "name": n.name, "pos": n.pos}))
        .collect();
    let edges: Vec<Value> = t
        .links
        .iter()
        .map(|l| {
            let mut e = Map::new();
            e.insert("source".into(), json!(l.a));
            e.insert("target".into(), json!(l.b));
            e.insert("dist".into(), json!(l.length));
            e.insert("delay".into(), json!(l.delay));
            if let Some(c) = l.capacity {
                e.insert("capacity".into(), json!(c));
            }
            if l.loss > 0.0 {
                e.insert("loss".into(), json!(l.loss));
            }
            Value::Object(e)
        })
        .collect();
    let doc = json!({"directed": false, "multigraph": false, "graph": graph, "nodes": nodes, "edges": edges});
    serde_json::to_writer(&mut out, &doc)?;
    writeln!(out)
}
