//! Real network topologies: one type for the simulator, the steering server and the testbed.
//!
//! A [`Topology`] is nodes (a name and coordinates) joined by undirected links (capacity, length,
//! propagation delay, loss), with an optional demand matrix and an optional demand series. It
//! is read from the formats researchers already have on disk, each reader in its own file and
//! all of them streaming from a `BufRead` (the caller opens the file):
//!
//! | format | file | source |
//! |---|---|---|
//! | `gml` | `gml.rs` | the Internet Topology Zoo's GML |
//! | `graphml` | `graphml.rs` | the Internet Topology Zoo's GraphML |
//! | `sndlib` | `sndlib.rs` | SNDlib's native text format (networks and demand matrices) |
//! | `sndlib-xml` | `sndlib.rs` | SNDlib's XML format (networks and demand matrices) |
//! | `json` | `json.rs` | networkx node-link JSON as topohub ships it (and as `topo convert` writes it) |
//!
//! Every reader feeds one [`Builder`], which checks what all formats share (duplicate ids,
//! dangling links, coordinates, negative capacities and demands) and derives what a file
//! leaves out: a link's length is the great-circle distance between its ends when the file
//! gives none, and its delay is the propagation time over that length at 2/3 of the speed of
//! light (fibre; as fnss and Icarus assume). Refusals carry the line they were found on
//! ([`TopologyError`]). `docs/topologies.md` documents the readers and every rule here.

pub mod catalog;
pub mod gml;
pub mod graphml;
pub mod json;
mod lines;
pub mod sndlib;
mod xml;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::BufRead;

pub use crate::error::{Problem, TopologyError};

crate::registry! {
    /// Topology file formats.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Format: "topology format" {
        Gml => "gml": "the Internet Topology Zoo's GML (node Latitude/Longitude, edge LinkSpeedRaw)",
        Graphml => "graphml": "the Internet Topology Zoo's GraphML (the same attributes as its GML)",
        Sndlib => "sndlib": "SNDlib's native text format (NODES, LINKS, DEMANDS)",
        SndlibXml => "sndlib-xml": "SNDlib's XML format (networkStructure, demands)",
        Json => "json": "networkx node-link JSON as topohub ships it (graph.demands, node pos, edge dist)",
    }
}

crate::registry! {
    /// The cost of carrying a stream between two nodes, for the Transportation Problem (TP-R1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Cost: "cost" {
        Hops => "hops": "links on a shortest path (TP-R1: the spec's cost)",
        Km => "km": "length of a shortest path over the real links, rounded to the km",
        Delay => "delay": "one-way delay of a shortest path over the links, rounded to the ms (a testbed's routing)",
    }
}

impl Format {
    /// The format a file's first bytes say it is in, if they say: `{` JSON, `<` an XML root
    /// (`graphml` or SNDlib's `network`, told apart by the root element's name), `?SNDlib` or a
    /// `NODES (` section SNDlib native, `graph [` or `Creator` GML.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        let text = String::from_utf8_lossy(head);
        let t = text.trim_start_matches('\u{feff}').trim_start();
        if t.starts_with('{') {
            return Some(Format::Json);
        }
        if t.starts_with('<') {
            // The root element: the first tag that is not a declaration or a comment.
            let mut rest = t;
            while let Some(i) = rest.find('<') {
                rest = &rest[i + 1..];
                if rest.starts_with('?') || rest.starts_with('!') {
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == ':' || *c == '_')
                    .collect();
                let local = name.rsplit(':').next().unwrap_or("");
                return match local {
                    "graphml" => Some(Format::Graphml),
                    "network" => Some(Format::SndlibXml),
                    _ => None,
                };
            }
            return None;
        }
        if t.starts_with("?SNDlib") || t.contains("\nNODES (") || t.starts_with("NODES (") {
            return Some(Format::Sndlib);
        }
        let code = t
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))?;
        if code.starts_with("graph") || code.starts_with("Creator") || code.starts_with("Version") {
            return Some(Format::Gml);
        }
        None
    }

    /// The format of a file: as its first bytes say ([`Format::sniff`]), else as its name's
    /// extension says. Every caller that opens a topology file decides this way.
    pub fn detect(head: &[u8], name: &str) -> Option<Format> {
        Format::sniff(head).or_else(|| Format::from_extension(name))
    }

    /// The format a file name's extension suggests (`.gml`, `.graphml`, `.json`, `.xml` for
    /// SNDlib XML, `.txt` or `.sndlib` for SNDlib native).
    pub fn from_extension(name: &str) -> Option<Format> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "gml" => Some(Format::Gml),
            "graphml" => Some(Format::Graphml),
            "json" => Some(Format::Json),
            "xml" => Some(Format::SndlibXml),
            "txt" | "sndlib" => Some(Format::Sndlib),
            _ => None,
        }
    }
}

/// Choices a reader leaves to its caller.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Drop nodes that have no coordinates, with their links, instead of refusing the file
    /// (the Topology Zoo gives none for its external nodes: peers, customers).
    pub drop_uncoordinated: bool,
}

/// Reads a topology in `format` from `input`.
pub fn read(
    input: impl BufRead,
    format: Format,
    options: ReadOptions,
) -> Result<Topology, TopologyError> {
    match format {
        Format::Gml => gml::read(input, options),
        Format::Graphml => graphml::read(input, options),
        Format::Sndlib => sndlib::read_native(input, options),
        Format::SndlibXml => sndlib::read_xml(input, options),
        Format::Json => json::read(input, options),
    }
}

/// How a node's coordinates are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coordinates {
    /// (longitude, latitude) in degrees; lengths are great-circle distances in km.
    Geographic,
    /// (x, y) on a plane in the file's units (SNDlib's `pixel` coordinates); lengths are
    /// Euclidean distances in those units.
    Planar,
}

/// A node of the network (a point of presence, a metro).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    /// (longitude, latitude) or (x, y), as [`Topology::coordinates`] says.
    pub pos: [f64; 2],
}

/// An undirected link.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Its ends, indices into [`Topology::nodes`], `a < b`.
    pub a: usize,
    pub b: usize,
    /// Capacity in the file's unit: bit/s for the Topology Zoo (`LinkSpeedRaw`) and for
    /// `topo convert`'s JSON, SNDlib's pre-installed capacity in its own unit; `None` when the
    /// file gives none (topohub gives none).
    pub capacity: Option<f64>,
    /// Length in km (geographic coordinates) or in the plane's units.
    pub length: f64,
    /// One-way propagation delay, ms.
    pub delay: f64,
    /// Packet loss probability in [0, 1).
    pub loss: f64,
}

/// One origin-destination demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    pub src: usize,
    pub dst: usize,
    /// Volume, in the file's unit (SNDlib: its demand unit; topohub: as SNDlib).
    pub value: f64,
}

/// A demand matrix, as a list of non-zero entries ordered by (source, destination), whatever
/// order the file gave them in (pairs that repeat are summed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Demands {
    pub entries: Vec<Demand>,
}

impl Demands {
    /// Orders the entries by (source, destination): one matrix, one list, whatever the format.
    fn canonical(&mut self) {
        self.entries.sort_by_key(|d| (d.src, d.dst));
    }

    /// The demand that ends at each node (what the users there download): sum over sources.
    pub fn sink_totals(&self, nodes: usize) -> Vec<f64> {
        let mut out = vec![0.0; nodes];
        for d in &self.entries {
            out[d.dst] += d.value;
        }
        out
    }

    /// The demand that starts at each node.
    pub fn source_totals(&self, nodes: usize) -> Vec<f64> {
        let mut out = vec![0.0; nodes];
        for d in &self.entries {
            out[d.src] += d.value;
        }
        out
    }

    /// The sum of all entries.
    pub fn total(&self) -> f64 {
        self.entries.iter().map(|d| d.value).sum()
    }
}

/// A shortest-path tree: for each node, the node before it and the link between (None for
/// the root and unreachable nodes).
pub type Tree = Vec<Option<(usize, usize)>>;

/// A demand by node names: (source, destination, value).
pub type NamedDemand = (String, String, f64);

/// One interval of a demand series.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Seconds from the start of the series.
    pub at: f64,
    pub demands: Demands,
}

/// A network: nodes, links, and what is known of its demand.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub name: String,
    pub coordinates: Coordinates,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// The static demand matrix, if the file has one.
    pub demands: Option<Demands>,
    /// A demand series, interval by interval (empty unless attached).
    pub series: Vec<Snapshot>,
    /// What reading changed, in words (parallel links merged, nodes dropped), for `topo stats`.
    pub notes: Vec<String>,
}

/// Propagation speed in fibre, km per ms: 2/3 of the speed of light in vacuum.
pub const FIBRE_KM_PER_MS: f64 = 299_792.458 * 2.0 / 3.0 / 1000.0;

/// The Earth's mean radius (IUGG), km.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// Great-circle distance in km between two (longitude, latitude) points in degrees, by the
/// haversine formula on a sphere of the Earth's mean radius.
pub fn great_circle_km(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (lat1, lat2) = (a[1].to_radians(), b[1].to_radians());
    let (dlat, dlon) = (lat2 - lat1, (b[0] - a[0]).to_radians());
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * h.sqrt().min(1.0).asin()
}

/// Summary statistics of a topology (`topo stats`).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub nodes: usize,
    pub links: usize,
    pub min_degree: usize,
    pub mean_degree: f64,
    pub max_degree: usize,
    /// Connected components (1: connected).
    pub components: usize,
    /// Largest shortest-path hop count between two connected nodes.
    pub diameter_hops: u32,
    /// Largest shortest-path length between two connected nodes (km or plane units).
    pub diameter_length: f64,
    /// Mean shortest-path hops over ordered pairs of distinct connected nodes.
    pub mean_hops: f64,
    pub total_length: f64,
    /// Links with a capacity, and the sum of their capacities.
    pub links_with_capacity: usize,
    pub total_capacity: f64,
    /// Non-zero demand entries and their sum (0 without a matrix).
    pub demand_pairs: usize,
    pub demand_total: f64,
    /// Intervals of the demand series.
    pub intervals: usize,
}

impl Topology {
    /// Neighbours of every node, with the link index.
    pub fn adjacency(&self) -> Vec<Vec<(usize, usize)>> {
        let mut adj = vec![Vec::new(); self.nodes.len()];
        for (l, link) in self.links.iter().enumerate() {
            adj[link.a].push((link.b, l));
            adj[link.b].push((link.a, l));
        }
        adj
    }

    /// Degree of every node.
    pub fn degrees(&self) -> Vec<usize> {
        let mut d = vec![0; self.nodes.len()];
        for l in &self.links {
            d[l.a] += 1;
            d[l.b] += 1;
        }
        d
    }

    /// Hop counts between all nodes (breadth-first search from each; `u32::MAX`: unreachable).
    pub fn hops(&self) -> Vec<Vec<u32>> {
        let adj = self.adjacency();
        let n = self.nodes.len();
        (0..n)
            .map(|s| {
                let mut row = vec![u32::MAX; n];
                row[s] = 0;
                let mut q = VecDeque::from([s]);
                while let Some(u) = q.pop_front() {
                    for &(v, _) in &adj[u] {
                        if row[v] == u32::MAX {
                            row[v] = row[u] + 1;
                            q.push_back(v);
                        }
                    }
                }
                row
            })
            .collect()
    }

    /// Shortest-path lengths between all nodes (Dijkstra from each; infinite: unreachable).
    pub fn distances(&self) -> Vec<Vec<f64>> {
        (0..self.nodes.len())
            .map(|s| self.dijkstra(s, Cost::Km).0)
            .collect()
    }

    /// Dijkstra from `s` with link weights by `cost` (1 a link, or its length): distances, and
    /// for each node the node before it and the link between. Ties go to the path found first
    /// (neighbours in link order, the heap by distance then node), so the paths are the same in
    /// every run.
    fn dijkstra(&self, s: usize, cost: Cost) -> (Vec<f64>, Tree) {
        let adj = self.adjacency();
        let n = self.nodes.len();
        let weight = |l: usize| match cost {
            Cost::Hops => 1.0,
            Cost::Km => self.links[l].length,
            Cost::Delay => self.links[l].delay,
        };
        let (mut dist, mut pred) = (vec![f64::INFINITY; n], vec![None; n]);
        dist[s] = 0.0;
        // Weights are finite and non-negative, so their bits order like the numbers.
        let mut heap = std::collections::BinaryHeap::new();
        heap.push(std::cmp::Reverse((0u64, s)));
        while let Some(std::cmp::Reverse((bits, u))) = heap.pop() {
            let du = f64::from_bits(bits);
            if du > dist[u] {
                continue;
            }
            for &(v, l) in &adj[u] {
                let dv = du + weight(l);
                if dv < dist[v] {
                    dist[v] = dv;
                    pred[v] = Some((u, l));
                    heap.push(std::cmp::Reverse((dv.to_bits(), v)));
                }
            }
        }
        (dist, pred)
    }

    /// Costs between all nodes as integers for the Transportation Problem (`i64::MAX`:
    /// unreachable).
    pub fn costs(&self, cost: Cost) -> Vec<Vec<i64>> {
        match cost {
            Cost::Hops => self
                .hops()
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|h| if h == u32::MAX { i64::MAX } else { h as i64 })
                        .collect()
                })
                .collect(),
            Cost::Km | Cost::Delay => (0..self.nodes.len())
                .map(|s| {
                    self.dijkstra(s, cost)
                        .0
                        .into_iter()
                        .map(|d| {
                            if d.is_finite() {
                                d.round() as i64
                            } else {
                                i64::MAX
                            }
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// One shortest path from `s` to every node by `cost`: for each node, the link it is
    /// reached over and the node before it (`None` for `s` and unreachable nodes); the same
    /// paths in every run.
    pub fn shortest_paths(&self, s: usize, cost: Cost) -> Tree {
        self.dijkstra(s, cost).1
    }

    /// The links of the path to `v` in a tree from [`Topology::shortest_paths`], from the
    /// source out.
    pub fn path(pred: &[Option<(usize, usize)>], v: usize) -> Vec<usize> {
        let mut links = Vec::new();
        let mut at = v;
        while let Some((u, l)) = pred[at] {
            links.push(l);
            at = u;
        }
        links.reverse();
        links
    }

    /// The traffic each node and each link carries when every demand of `demands` follows its
    /// shortest path by `cost` (a node carries what starts, ends or passes there).
    pub fn carried(&self, demands: &Demands, cost: Cost) -> (Vec<f64>, Vec<f64>) {
        let n = self.nodes.len();
        let (mut nodes, mut links) = (vec![0.0; n], vec![0.0; self.links.len()]);
        let mut trees: Vec<Option<Tree>> = vec![None; n];
        for d in &demands.entries {
            let pred = trees[d.src].get_or_insert_with(|| self.shortest_paths(d.src, cost));
            if d.src != d.dst && pred[d.dst].is_none() {
                continue; // unreachable: carried nowhere
            }
            nodes[d.src] += d.value;
            for l in Self::path(pred, d.dst) {
                links[l] += d.value;
            }
            // Every node after the source on the path (the source was counted above).
            let mut at = d.dst;
            while let Some((u, _)) = pred[at] {
                nodes[at] += d.value;
                at = u;
            }
        }
        (nodes, links)
    }

    /// The component of every node (numbered from 0 in node order) and how many there are.
    pub fn components(&self) -> (Vec<usize>, usize) {
        let adj = self.adjacency();
        let mut comp = vec![usize::MAX; self.nodes.len()];
        let mut count = 0;
        for s in 0..self.nodes.len() {
            if comp[s] != usize::MAX {
                continue;
            }
            comp[s] = count;
            let mut q = VecDeque::from([s]);
            while let Some(u) = q.pop_front() {
                for &(v, _) in &adj[u] {
                    if comp[v] == usize::MAX {
                        comp[v] = count;
                        q.push_back(v);
                    }
                }
            }
            count += 1;
        }
        (comp, count)
    }

    /// Summary statistics.
    pub fn stats(&self) -> Stats {
        let deg = self.degrees();
        let n = self.nodes.len();
        let hops = self.hops();
        let dist = self.distances();
        let (mut dh, mut dl, mut sum, mut pairs) = (0u32, 0.0f64, 0u64, 0u64);
        for i in 0..n {
            for j in 0..n {
                if i != j && hops[i][j] != u32::MAX {
                    dh = dh.max(hops[i][j]);
                    dl = dl.max(dist[i][j]);
                    sum += hops[i][j] as u64;
                    pairs += 1;
                }
            }
        }
        let caps: Vec<f64> = self.links.iter().filter_map(|l| l.capacity).collect();
        let demands = self.demands.as_ref();
        Stats {
            nodes: n,
            links: self.links.len(),
            min_degree: deg.iter().copied().min().unwrap_or(0),
            mean_degree: if n == 0 {
                0.0
            } else {
                2.0 * self.links.len() as f64 / n as f64
            },
            max_degree: deg.iter().copied().max().unwrap_or(0),
            components: self.components().1,
            diameter_hops: dh,
            diameter_length: dl,
            mean_hops: if pairs == 0 {
                0.0
            } else {
                sum as f64 / pairs as f64
            },
            total_length: self.links.iter().map(|l| l.length).sum(),
            links_with_capacity: caps.len(),
            total_capacity: caps.iter().sum(),
            demand_pairs: demands.map_or(0, |d| d.entries.len()),
            demand_total: demands.map_or(0.0, Demands::total),
            intervals: self.series.len(),
        }
    }

    /// Attaches a demand series: each interval's entries by node name (`(src, dst, value)`),
    /// resolved against this topology's nodes. Refuses a name no node has, a negative value,
    /// and intervals out of time order.
    pub fn attach_series(
        &mut self,
        intervals: Vec<(f64, Vec<NamedDemand>)>,
    ) -> Result<(), TopologyError> {
        let index: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let mut series = Vec::with_capacity(intervals.len());
        let mut last = f64::NEG_INFINITY;
        for (k, (at, entries)) in intervals.into_iter().enumerate() {
            if !(at.is_finite() && at > last) {
                return Err(TopologyError::whole(Problem::Value {
                    field: format!("interval {k}: time"),
                    value: at.to_string(),
                    allowed: "finite and later than the interval before".into(),
                }));
            }
            last = at;
            let mut demands = Demands::default();
            let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
            for (src, dst, value) in entries {
                let find = |name: &str| {
                    index.get(name).copied().ok_or_else(|| {
                        TopologyError::whole(Problem::Dangling {
                            what: format!("interval {k}: demand {src}-{dst}"),
                            node: name.to_string(),
                        })
                    })
                };
                let (s, d) = (find(&src)?, find(&dst)?);
                push_demand(&mut demands, &mut seen, s, d, value).map_err(|p| {
                    TopologyError::whole(match p {
                        Problem::Value { value, allowed, .. } => Problem::Value {
                            field: format!("interval {k}: demand {src}-{dst}"),
                            value,
                            allowed,
                        },
                        other => other,
                    })
                })?;
            }
            demands.canonical();
            series.push(Snapshot { at, demands });
        }
        self.series = series;
        Ok(())
    }
}

/// Adds a demand, summing a pair that repeats; refuses a negative or non-finite value.
fn push_demand(
    demands: &mut Demands,
    seen: &mut HashMap<(usize, usize), usize>,
    src: usize,
    dst: usize,
    value: f64,
) -> Result<(), Problem> {
    if !(value.is_finite() && value >= 0.0) {
        return Err(Problem::Value {
            field: "demand".into(),
            value: value.to_string(),
            allowed: "a finite number >= 0".into(),
        });
    }
    if value == 0.0 || src == dst {
        // Nothing to carry: a zero entry, or traffic that never leaves its node.
        return Ok(());
    }
    match seen.get(&(src, dst)) {
        Some(&i) => demands.entries[i].value += value,
        None => {
            seen.insert((src, dst), demands.entries.len());
            demands.entries.push(Demand { src, dst, value });
        }
    }
    Ok(())
}

/// What a reader found for a link, before the ends are resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawLink {
    pub a: String,
    pub b: String,
    pub capacity: Option<f64>,
    pub length: Option<f64>,
    pub delay: Option<f64>,
    pub loss: Option<f64>,
    /// The link's id in the file, for messages (empty: "a-b").
    pub id: String,
}

/// Collects what a reader finds and checks what every format shares.
#[derive(Debug, Default)]
pub struct Builder {
    name: String,
    coordinates: Option<Coordinates>,
    ids: HashMap<String, usize>,
    nodes: Vec<(String, Option<[f64; 2]>, u64)>,
    links: Vec<(RawLink, u64)>,
    demands: Vec<(String, String, f64, u64)>,
    has_demands: bool,
}

/// A value that must be a finite number in a range.
pub(crate) fn check_number(
    field: &str,
    value: f64,
    min: f64,
    max: f64,
    allowed: &str,
) -> Result<f64, Problem> {
    if value.is_finite() && value >= min && value <= max {
        Ok(value)
    } else {
        Err(Problem::Value {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        })
    }
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The network's name (the first one given wins).
    pub fn name(&mut self, name: &str) {
        if self.name.is_empty() {
            self.name = name.trim().to_string();
        }
    }

    /// How coordinates are to be read (default: geographic).
    pub fn coordinates(&mut self, c: Coordinates) {
        self.coordinates = Some(c);
    }

    /// A node: its id in the file (what links name), its name (empty: the id), coordinates.
    pub fn node(
        &mut self,
        id: &str,
        name: &str,
        pos: Option<[f64; 2]>,
        line: u64,
    ) -> Result<(), TopologyError> {
        if id.is_empty() {
            return Err(TopologyError::at(
                line,
                Problem::Value {
                    field: "node id".into(),
                    value: "\"\"".into(),
                    allowed: "a non-empty id".into(),
                },
            ));
        }
        if let Some(&i) = self.ids.get(id) {
            return Err(TopologyError::at(
                line,
                Problem::Duplicate {
                    what: "node id",
                    id: id.to_string(),
                    first_line: self.nodes[i].2,
                },
            ));
        }
        if let Some([x, y]) = pos
            && !(x.is_finite() && y.is_finite())
        {
            return Err(TopologyError::at(
                line,
                Problem::Value {
                    field: format!("node {id}: coordinates"),
                    value: format!("({x}, {y})"),
                    allowed: "finite numbers".into(),
                },
            ));
        }
        let name = if name.trim().is_empty() { id } else { name };
        self.ids.insert(id.to_string(), self.nodes.len());
        self.nodes.push((name.trim().to_string(), pos, line));
        Ok(())
    }

    /// A link between two node ids (resolved when the file ends: a file may name a node before
    /// it declares it).
    pub fn link(&mut self, link: RawLink, line: u64) -> Result<(), TopologyError> {
        let id = if link.id.is_empty() {
            format!("{}-{}", link.a, link.b)
        } else {
            link.id.clone()
        };
        let at = |p| Err(TopologyError::at(line, p));
        if let Some(c) = link.capacity
            && let Err(p) = check_number(
                &format!("link {id}: capacity"),
                c,
                0.0,
                f64::MAX,
                "a finite number >= 0",
            )
        {
            return at(p);
        }
        for (what, v, max) in [
            ("length", link.length, f64::MAX),
            ("delay", link.delay, f64::MAX),
            ("loss", link.loss, 0.999_999),
        ] {
            if let Some(v) = v
                && let Err(p) = check_number(
                    &format!("link {id}: {what}"),
                    v,
                    0.0,
                    max,
                    if what == "loss" {
                        "a probability in [0, 1)"
                    } else {
                        "a finite number >= 0"
                    },
                )
            {
                return at(p);
            }
        }
        self.links.push((RawLink { id, ..link }, line));
        Ok(())
    }

    /// A demand between two node ids (resolved when the file ends).
    pub fn demand(
        &mut self,
        src: &str,
        dst: &str,
        value: f64,
        line: u64,
    ) -> Result<(), TopologyError> {
        check_number(
            &format!("demand {src}-{dst}"),
            value,
            0.0,
            f64::MAX,
            "a finite number >= 0",
        )
        .map_err(|p| TopologyError::at(line, p))?;
        self.has_demands = true;
        self.demands
            .push((src.to_string(), dst.to_string(), value, line));
        Ok(())
    }

    /// Marks that the file has a demand section, even an empty one.
    pub fn has_demands(&mut self) {
        self.has_demands = true;
    }

    /// Checks everything that needs the whole file and builds the topology.
    pub fn finish(self, options: ReadOptions) -> Result<Topology, TopologyError> {
        if self.nodes.is_empty() {
            return Err(TopologyError::whole(Problem::Empty));
        }
        let mut notes = Vec::new();
        // A file that does not say how to read its coordinates (GML, GraphML, SNDlib native,
        // topohub's JSON) is read as planar when one lies outside longitude [-180, 180] or
        // latitude [-90, 90] (SNDlib's pixel coordinates, topohub's Gabriel graphs).
        let coordinates = self.coordinates.unwrap_or_else(|| {
            let outside = self.nodes.iter().any(|(_, p, _)| {
                p.is_some_and(|[x, y]| {
                    !((-180.0..=180.0).contains(&x) && (-90.0..=90.0).contains(&y))
                })
            });
            if outside {
                notes.push(
                    "coordinates read as planar (x, y): some lie outside longitude and latitude \
                     ranges"
                        .to_string(),
                );
                Coordinates::Planar
            } else {
                Coordinates::Geographic
            }
        });
        // Nodes without coordinates: refused, or dropped with their links.
        let mut keep = vec![usize::MAX; self.nodes.len()];
        let mut nodes = Vec::new();
        for (i, (name, pos, line)) in self.nodes.iter().enumerate() {
            match pos {
                Some([x, y])
                    if coordinates == Coordinates::Geographic
                        && !((-180.0..=180.0).contains(x) && (-90.0..=90.0).contains(y)) =>
                {
                    return Err(TopologyError::at(
                        *line,
                        Problem::Value {
                            field: format!("node {name}: coordinates"),
                            value: format!("({x}, {y})"),
                            allowed: "longitude in [-180, 180] and latitude in [-90, 90] (or \
                                      planar coordinates, declared as such)"
                                .into(),
                        },
                    ));
                }
                Some(p) => {
                    keep[i] = nodes.len();
                    nodes.push(Node {
                        name: name.clone(),
                        pos: *p,
                    });
                }
                None if options.drop_uncoordinated => {}
                None => {
                    return Err(TopologyError::at(
                        *line,
                        Problem::NoCoordinates { node: name.clone() },
                    ));
                }
            }
        }
        let dropped = self.nodes.len() - nodes.len();
        if dropped > 0 {
            notes.push(format!(
                "{dropped} node(s) without coordinates dropped, with their links"
            ));
        }
        if nodes.is_empty() {
            return Err(TopologyError::whole(Problem::Empty));
        }
        let resolve = |id: &str, what: &str, line: u64| -> Result<usize, TopologyError> {
            self.ids.get(id).copied().ok_or_else(|| {
                TopologyError::at(
                    line,
                    Problem::Dangling {
                        what: what.to_string(),
                        node: id.to_string(),
                    },
                )
            })
        };
        // Parallel links become one: capacities add (unknown if one is), the shortest length,
        // delay and loss stand for the pair.
        let mut by_pair: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut links: Vec<Link> = Vec::new();
        let (mut merged, mut loops, mut lost) = (0usize, 0usize, 0usize);
        for (raw, line) in &self.links {
            let what = format!("link {}", raw.id);
            let (a, b) = (
                resolve(&raw.a, &what, *line)?,
                resolve(&raw.b, &what, *line)?,
            );
            if a == b {
                // A loop carries nothing between nodes; the Topology Zoo has a few.
                loops += 1;
                continue;
            }
            let (a, b) = (keep[a], keep[b]);
            if a == usize::MAX || b == usize::MAX {
                lost += 1;
                continue;
            }
            let (a, b) = (a.min(b), a.max(b));
            let length = match raw.length {
                Some(l) => l,
                None => match coordinates {
                    Coordinates::Geographic => great_circle_km(nodes[a].pos, nodes[b].pos),
                    Coordinates::Planar => {
                        let (p, q) = (nodes[a].pos, nodes[b].pos);
                        (p[0] - q[0]).hypot(p[1] - q[1])
                    }
                },
            };
            let link = Link {
                a,
                b,
                capacity: raw.capacity,
                length,
                delay: raw
                    .delay
                    .unwrap_or(if coordinates == Coordinates::Geographic {
                        length / FIBRE_KM_PER_MS
                    } else {
                        0.0
                    }),
                loss: raw.loss.unwrap_or(0.0),
            };
            match by_pair.get(&(a, b)) {
                Some(&i) => {
                    let old = &mut links[i];
                    old.capacity = old.capacity.zip(link.capacity).map(|(x, y)| x + y);
                    old.length = old.length.min(link.length);
                    old.delay = old.delay.min(link.delay);
                    old.loss = old.loss.min(link.loss);
                    merged += 1;
                }
                None => {
                    by_pair.insert((a, b), links.len());
                    links.push(link);
                }
            }
        }
        if merged > 0 {
            notes.push(format!(
                "{merged} parallel link(s) merged into the link they duplicate (capacities added)"
            ));
        }
        if loops > 0 {
            notes.push(format!("{loops} link(s) from a node to itself left out"));
        }
        if lost > 0 {
            notes.push(format!("{lost} link(s) to dropped nodes left out"));
        }
        let demands = if self.has_demands {
            let mut d = Demands::default();
            let mut seen = HashMap::new();
            for (src, dst, value, line) in &self.demands {
                let what = format!("demand {src}-{dst}");
                let (s, t) = (resolve(src, &what, *line)?, resolve(dst, &what, *line)?);
                let (s, t) = (keep[s], keep[t]);
                if s == usize::MAX || t == usize::MAX {
                    continue;
                }
                push_demand(&mut d, &mut seen, s, t, *value)
                    .map_err(|p| TopologyError::at(*line, p))?;
            }
            d.canonical();
            Some(d)
        } else {
            None
        };
        Ok(Topology {
            name: self.name,
            coordinates,
            nodes,
            links,
            demands,
            series: Vec::new(),
            notes,
        })
    }
}

#[cfg(test)]
mod tests;
