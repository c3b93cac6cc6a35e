//! The testbed description (docs/testbed.md): nodes with roles, links with rate, delay,
//! jitter, loss and queue, routing by shortest path; or a real network file read through the
//! library's topology readers, its link delays from great-circle lengths (2/3 c) and its
//! capacities from the data. Everything is checked here, before anything is built: a refused
//! file names itself, the field and what is allowed.

use cdnlab::topology::{self, Cost, Topology};
use serde::Deserialize;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a node is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Forwards only (every node forwards).
    Router,
    /// The origin server.
    Origin,
    /// A caching edge.
    Edge,
    /// An edge of the multi-hash DHT.
    DhtEdge,
    /// The steering server.
    Steering,
    /// A population of clients (`count` of them, all in this node's namespace).
    Clients,
}

impl Role {
    const ALLOWED: &str = "router, origin, edge, dht-edge, steering, clients";

    /// Whether clients are served by a node of this role.
    pub fn serves(self) -> bool {
        matches!(self, Role::Origin | Role::Edge | Role::DhtEdge)
    }
}

/// A node as built.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub role: Role,
    /// Clients in a `clients` node (1 otherwise).
    pub count: u32,
    /// The node's one address (on its loopback; every interface is unnumbered).
    pub address: Ipv4Addr,
}

/// A link as built: both directions alike.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    /// Bits per second of Ethernet frames (IP packet plus its 14-byte header), each way.
    pub rate: f64,
    pub delay: Duration,
    pub jitter: Duration,
    pub loss: f64,
    /// Bytes the link's queue holds before it drops (tbf's limit), each way.
    pub queue: u64,
}

/// A checked testbed.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub source: PathBuf,
    /// The private block every address comes from, used only inside the run's namespaces.
    pub range: (Ipv4Addr, u8),
    pub routing: Cost,
    pub seed: u64,
    /// Whether the link elements (and the UDP probes) run at real-time priority.
    pub realtime: bool,
    /// How long before a frame is due a link element stops sleeping and spins: a timer that
    /// wakes an idle virtual CPU is late by hundreds of microseconds, a spin is not; each spin
    /// costs CPU, so a testbed of many busy links may want less (0: never).
    pub spin: Duration,
    /// The CPUs' wake-up latency asked for while the testbed is up (PM QoS), microseconds;
    /// `None`: no request.
    pub cpu_latency: Option<u32>,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// The network as the library sees it (link delays in ms), for shortest paths.
    pub network: Topology,
    /// The experiment's own table, read by the experiment.
    pub experiment: Option<toml::Table>,
}

/// The block a testbed uses unless it names one: part of 198.18.0.0/15, which RFC 2544 and
/// RFC 5735 set aside for benchmarking network devices.
pub const DEFAULT_RANGE: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 16);

/// The blocks a range may lie in: RFC 1918's private blocks, RFC 6598's shared space and RFC
/// 2544's benchmarking block. No address there is routed on the public Internet.
const PRIVATE: [(Ipv4Addr, u8); 5] = [
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
];

/// Frame bytes of a full-sized packet at veth's MTU (1500 and a 14-byte Ethernet header).
pub const FRAME_BYTES: u64 = 1514;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: Option<String>,
    range: Option<String>,
    routing: Option<String>,
    seed: Option<u64>,
    realtime: Option<bool>,
    spin_us: Option<u64>,
    cpu_latency_us: Option<toml::Value>,
    #[serde(default)]
    node: Vec<FileNode>,
    #[serde(default)]
    link: Vec<FileLink>,
    network: Option<FileNetwork>,
    experiment: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileNode {
    name: String,
    role: Option<String>,
    count: Option<u32>,
    address: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLink {
    a: String,
    b: String,
    rate: toml::Value,
    delay_ms: Option<f64>,
    jitter_ms: Option<f64>,
    loss: Option<f64>,
    queue_bytes: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileNetwork {
    file: PathBuf,
    /// Rate of links whose capacity the file does not give.
    rate: Option<toml::Value>,
    /// Every capacity from the file is multiplied by this (a backbone's 10 Gbit/s links do not
    /// fit on one machine; the ratios between links are what matters).
    capacity_scale: Option<f64>,
    /// Bounds on the rate after scaling, so no link is too slow to carry a probe or too fast
    /// for the machine.
    min_rate: Option<toml::Value>,
    max_rate: Option<toml::Value>,
    loss: Option<f64>,
    jitter_ms: Option<f64>,
    queue_bytes: Option<u64>,
}

/// A description that cannot be built, with the field and what is allowed.
pub fn bad(path: &Path, field: &str, value: impl std::fmt::Display, allowed: &str) -> crate::Error {
    crate::Error::File {
        path: path.to_path_buf(),
        message: format!("{field}: {value} is not allowed; allowed: {allowed}"),
    }
}

/// An `[experiment]` table (its `kind` already read) as the plan `T`, whose serde attributes
/// refuse unknown fields.
pub fn experiment_plan<T: serde::de::DeserializeOwned>(
    table: &toml::Table,
    path: &Path,
) -> Result<T, crate::Error> {
    let mut t = table.clone();
    t.remove("kind");
    t.try_into()
        .map_err(|e: toml::de::Error| crate::Error::File {
            path: path.to_path_buf(),
            message: format!("experiment: {}", e.message()),
        })
}

/// A refused `[experiment]` field, with what is allowed.
pub fn bad_experiment<T>(
    path: &Path,
    field: &str,
    value: impl std::fmt::Display,
    allowed: &str,
) -> Result<T, crate::Error> {
    Err(bad(path, &format!("experiment.{field}"), value, allowed))
}

const RATE_ALLOWED: &str = "a rate above 0 and at most 10 Gbit/s: bits per second (8e6), or a string with a unit (\"512kbit\", \"8Mbit\", \"1Gbit\")";

/// A rate: bits per second as a number, or a string with a unit (kbit, Mbit, Gbit; SI).
pub fn parse_rate(value: &toml::Value) -> Option<f64> {
    let r = match value {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => {
            let s = s.trim();
            let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let num: f64 = num.trim().parse().ok()?;
            let scale = match unit.trim().to_ascii_lowercase().as_str() {
                "" | "bit" | "bps" => 1.0,
                "kbit" | "kbps" => 1e3,
                "mbit" | "mbps" => 1e6,
                "gbit" | "gbps" => 1e9,
                _ => return None,
            };
            num * scale
        }
        _ => return None,
    };
    (r.is_finite() && r > 0.0 && r <= 10e9).then_some(r)
}

fn show(value: &toml::Value) -> String {
    value.to_string()
}

/// A queue that holds `ms` of the link's rate, at least two full frames.
pub fn default_queue(rate: f64, ms: f64) -> u64 {
    ((rate / 8.0 * ms / 1e3) as u64).max(2 * FRAME_BYTES)
}

/// Reads and checks a testbed description.
pub fn load(path: &Path) -> Result<Spec, crate::Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::Error::io(format!("{}", path.display()), e))?;
    parse(&text, path)
}

/// Checks a description's text; `path` names it in errors and anchors relative file names.
pub fn parse(text: &str, path: &Path) -> Result<Spec, crate::Error> {
    let file: FileSpec = toml::from_str(text).map_err(|e| crate::Error::File {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let name = file.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or("testbed".into(), |s| s.to_string_lossy().into_owned())
    });
    let range = match &file.range {
        None => DEFAULT_RANGE,
        Some(r) => parse_range(r).ok_or_else(|| {
            bad(
                path,
                "range",
                format!("{r:?}"),
                "a block from /8 to /24 inside 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 or 198.18.0.0/15, written as its first address and prefix (\"10.77.0.0/16\")",
            )
        })?,
    };
    let spin_us = file.spin_us.unwrap_or(0);
    if spin_us > 5000 {
        return Err(bad(
            path,
            "spin_us",
            spin_us,
            "0 (never spin, the default) to 5000 microseconds",
        ));
    }
    let cpu_latency = match &file.cpu_latency_us {
        None => None,
        Some(toml::Value::String(s)) if s == "none" => None,
        Some(toml::Value::Integer(i)) if (0..=1_000_000).contains(i) => Some(*i as u32),
        Some(v) => {
            return Err(bad(
                path,
                "cpu_latency_us",
                v,
                "microseconds from 0 to 1000000, or \"none\" (no request, the default)",
            ));
        }
    };
    let routing = match file.routing.as_deref() {
        None | Some("delay") => Cost::Delay,
        Some("hops") => Cost::Hops,
        Some(r) => {
            return Err(bad(
                path,
                "routing",
                format!("{r:?}"),
                "delay (the default) or hops",
            ));
        }
    };
    let (mut nodes, mut links) = match &file.network {
        Some(net) => from_network(path, net)?,
        None => (Vec::new(), Vec::new()),
    };
    // The network file's own nodes (with a file, [[link]] may only attach new nodes to them).
    let from_file = nodes.len();
    // Nodes: with a network file, [[node]] gives roles to the file's nodes and declares new
    // ones (a population or an edge at a metro, joined to it by a [[link]]); without, it
    // declares them all.
    for (i, n) in file.node.iter().enumerate() {
        let field = |f: &str| format!("node {} ({}): {f}", i + 1, n.name);
        let role = match n.role.as_deref() {
            None => Role::Router,
            Some(r) => toml::Value::String(r.into())
                .try_into::<Role>()
                .map_err(|_| bad(path, &field("role"), format!("{r:?}"), Role::ALLOWED))?,
        };
        let count = n.count.unwrap_or(1);
        if count == 0 || count > 10_000 || (role != Role::Clients && count != 1) {
            return Err(bad(
                path,
                &field("count"),
                count,
                "1 to 10000 for a clients node; nothing (1) for the other roles",
            ));
        }
        let address = match &n.address {
            None => None,
            Some(a) => Some(
                a.parse::<Ipv4Addr>()
                    .ok()
                    .filter(|a| in_range(*a, range))
                    .ok_or_else(|| {
                        bad(
                            path,
                            &field("address"),
                            format!("{a:?}"),
                            &format!("an IPv4 address inside the range {}/{}", range.0, range.1),
                        )
                    })?,
            ),
        };
        if n.name.trim().is_empty() || n.name.len() > 64 {
            return Err(bad(
                path,
                &field("name"),
                format!("{:?}", n.name),
                "1 to 64 characters",
            ));
        }
        match nodes.iter().position(|m: &Node| m.name == n.name) {
            Some(j) if j < from_file => {
                let m = &mut nodes[j];
                m.role = role;
                m.count = count;
                if let Some(a) = address {
                    m.address = a;
                }
            }
            Some(_) => {
                return Err(bad(
                    path,
                    &field("name"),
                    format!("{:?}", n.name),
                    "a name no other node has",
                ));
            }
            None if from_file > 0 && !file.link.iter().any(|l| l.a == n.name || l.b == n.name) => {
                return Err(bad(
                    path,
                    &field("name"),
                    format!("{:?}", n.name),
                    "a node of the network file, or a new node joined to the network by a [[link]]",
                ));
            }
            None => nodes.push(Node {
                name: n.name.clone(),
                role,
                count,
                address: address.unwrap_or(Ipv4Addr::UNSPECIFIED),
            }),
        }
    }
    if nodes.len() < 2 {
        return Err(bad(path, "node", nodes.len(), "at least two nodes"));
    }
    for (i, l) in file.link.iter().enumerate() {
        let field = |f: &str| format!("link {} ({}-{}): {f}", i + 1, l.a, l.b);
        let end = |name: &str, f: &str| {
            nodes.iter().position(|n| n.name == name).ok_or_else(|| {
                bad(
                    path,
                    &field(f),
                    format!("{name:?}"),
                    "the name of a [[node]]",
                )
            })
        };
        let (a, b) = (end(&l.a, "a")?, end(&l.b, "b")?);
        if a < from_file && b < from_file {
            return Err(bad(
                path,
                &field("b"),
                format!("{:?}", l.b),
                "a link with a new [[node]] at one end at least (links between the network file's nodes come from the file)",
            ));
        }
        if a == b {
            return Err(bad(
                path,
                &field("b"),
                format!("{:?}", l.b),
                "a node other than a (no loops)",
            ));
        }
        if links
            .iter()
            .any(|m: &Link| (m.a, m.b) == (a, b) || (m.a, m.b) == (b, a))
        {
            return Err(bad(
                path,
                &field("b"),
                format!("{:?}", l.b),
                "one link between two nodes",
            ));
        }
        let rate = parse_rate(&l.rate)
            .ok_or_else(|| bad(path, &field("rate"), show(&l.rate), RATE_ALLOWED))?;
        let delay = ms(
            path,
            &field("delay_ms"),
            l.delay_ms.unwrap_or(0.0),
            10_000.0,
        )?;
        let jitter = ms(
            path,
            &field("jitter_ms"),
            l.jitter_ms.unwrap_or(0.0),
            10_000.0,
        )?;
        if jitter > delay {
            return Err(bad(
                path,
                &field("jitter_ms"),
                jitter.as_secs_f64() * 1e3,
                "at most delay_ms (a delay is never negative)",
            ));
        }
        let loss = probability(path, &field("loss"), l.loss.unwrap_or(0.0))?;
        let queue = queue(path, &field("queue_bytes"), l.queue_bytes, rate)?;
        links.push(Link {
            a,
            b,
            rate,
            delay,
            jitter,
            loss,
            queue,
        });
    }
    if links.is_empty() {
        return Err(bad(path, "link", 0, "at least one link"));
    }
    assign_addresses(path, &mut nodes, range)?;
    let network = library_view(&name, &nodes, &links);
    let spec = Spec {
        name,
        source: path.to_path_buf(),
        range,
        routing,
        seed: file.seed.unwrap_or(1),
        realtime: file.realtime.unwrap_or(true),
        spin: Duration::from_micros(spin_us),
        cpu_latency,
        nodes,
        links,
        network,
        experiment: file.experiment,
    };
    check_reach(path, &spec)?;
    Ok(spec)
}

fn ms(path: &Path, field: &str, v: f64, max: f64) -> Result<Duration, crate::Error> {
    if v.is_finite() && (0.0..=max).contains(&v) {
        Ok(Duration::from_secs_f64(v / 1e3))
    } else {
        Err(bad(
            path,
            field,
            v,
            &format!("milliseconds from 0 to {max}"),
        ))
    }
}

fn probability(path: &Path, field: &str, v: f64) -> Result<f64, crate::Error> {
    if v.is_finite() && (0.0..0.5).contains(&v) {
        Ok(v)
    } else {
        Err(bad(
            path,
            field,
            v,
            "a probability from 0 up to (not including) 0.5",
        ))
    }
}

fn queue(path: &Path, field: &str, q: Option<u64>, rate: f64) -> Result<u64, crate::Error> {
    match q {
        None => Ok(default_queue(rate, 50.0)),
        Some(q) if (FRAME_BYTES..=1 << 30).contains(&q) => Ok(q),
        Some(q) => Err(bad(
            path,
            field,
            q,
            "bytes from 1514 (one full frame) to 1 GiB; the default holds 50 ms at the rate",
        )),
    }
}

/// "a.b.c.d/p" inside one of the private blocks, with p from 8 to 24 and no host bits set.
pub fn parse_range(s: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, p) = s.trim().split_once('/')?;
    let (a, p): (Ipv4Addr, u8) = (a.parse().ok()?, p.parse().ok()?);
    if !(8..=24).contains(&p) || u32::from(a) & !mask(p) != 0 {
        return None;
    }
    PRIVATE
        .iter()
        .any(|&(b, q)| q <= p && in_range(a, (b, q)))
        .then_some((a, p))
}

fn mask(p: u8) -> u32 {
    if p == 0 { 0 } else { u32::MAX << (32 - p) }
}

/// Whether `a` lies in block `r`.
pub fn in_range(a: Ipv4Addr, r: (Ipv4Addr, u8)) -> bool {
    u32::from(a) & mask(r.1) == u32::from(r.0)
}

/// Whether two blocks share an address.
pub fn overlaps(x: (Ipv4Addr, u8), y: (Ipv4Addr, u8)) -> bool {
    let p = x.1.min(y.1);
    u32::from(x.0) & mask(p) == u32::from(y.0) & mask(p)
}

/// Gives every node without an address the next free one of the range (from .1), and refuses
/// two nodes on one address or one on the range's first or last address.
fn assign_addresses(
    path: &Path,
    nodes: &mut [Node],
    range: (Ipv4Addr, u8),
) -> Result<(), crate::Error> {
    let base = u32::from(range.0);
    let last = base | !mask(range.1);
    let mut taken = std::collections::BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.address.is_unspecified() {
            continue;
        }
        let a = u32::from(n.address);
        if a == base || a == last {
            return Err(bad(
                path,
                &format!("node {}: address", n.name),
                n.address,
                "not the range's first or last address",
            ));
        }
        if let Some(j) = taken.insert(a, i) {
            return Err(bad(
                path,
                &format!("node {}: address", n.name),
                n.address,
                &format!(
                    "an address no other node has (node {} has it)",
                    nodes[j].name
                ),
            ));
        }
    }
    let mut next = base + 1;
    for n in nodes.iter_mut().filter(|n| n.address.is_unspecified()) {
        while taken.contains_key(&next) {
            next += 1;
        }
        if next >= last {
            return Err(bad(
                path,
                "range",
                format!("{}/{}", range.0, range.1),
                "a block with an address for every node",
            ));
        }
        n.address = Ipv4Addr::from(next);
        taken.insert(next, 0);
    }
    Ok(())
}

/// The library's view of the testbed's own nodes and links, for shortest paths by delay.
fn library_view(name: &str, nodes: &[Node], links: &[Link]) -> Topology {
    Topology {
        name: name.into(),
        coordinates: topology::Coordinates::Planar,
        nodes: nodes
            .iter()
            .map(|n| topology::Node {
                name: n.name.clone(),
                pos: [0.0, 0.0],
            })
            .collect(),
        links: links
            .iter()
            .map(|l| topology::Link {
                a: l.a,
                b: l.b,
                capacity: Some(l.rate),
                length: 0.0,
                delay: l.delay.as_secs_f64() * 1e3,
                loss: l.loss,
            })
            .collect(),
        demands: None,
        series: Vec::new(),
        notes: Vec::new(),
    }
}

/// A description's nodes and links.
type Parts = (Vec<Node>, Vec<Link>);

/// Nodes and links from a real network file: delay from the library (great-circle length at
/// 2/3 c), rate from the capacity (scaled and bounded) or the given default.
fn from_network(path: &Path, net: &FileNetwork) -> Result<Parts, crate::Error> {
    let file = if net.file.is_absolute() {
        net.file.clone()
    } else {
        path.parent().unwrap_or(Path::new(".")).join(&net.file)
    };
    let bytes = std::fs::read(&file).map_err(|e| {
        crate::Error::io(
            format!("{} (network.file of {})", file.display(), path.display()),
            e,
        )
    })?;
    let name = file
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let format = topology::Format::detect(&bytes, &name).ok_or_else(|| {
        bad(
            path,
            "network.file",
            file.display(),
            "a Topology Zoo GML or GraphML, SNDlib (native or XML) or topohub JSON file",
        )
    })?;
    let t = topology::read(
        std::io::Cursor::new(bytes),
        format,
        topology::ReadOptions::default(),
    )
    .map_err(|e| crate::Error::File {
        path: file.clone(),
        message: e.to_string(),
    })?;
    let rate_of = |v: &Option<toml::Value>, field: &str, default: f64| match v {
        None => Ok(default),
        Some(v) => parse_rate(v).ok_or_else(|| bad(path, field, show(v), RATE_ALLOWED)),
    };
    let fallback = rate_of(&net.rate, "network.rate", 10e6)?;
    let (lo, hi) = (
        rate_of(&net.min_rate, "network.min_rate", 1e6)?,
        rate_of(&net.max_rate, "network.max_rate", 100e6)?,
    );
    if lo > hi {
        return Err(bad(
            path,
            "network.min_rate",
            lo,
            "at most network.max_rate",
        ));
    }
    let scale = net.capacity_scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        return Err(bad(
            path,
            "network.capacity_scale",
            scale,
            "a number above 0",
        ));
    }
    let loss = probability(path, "network.loss", net.loss.unwrap_or(0.0))?;
    let jitter = ms(
        path,
        "network.jitter_ms",
        net.jitter_ms.unwrap_or(0.0),
        10_000.0,
    )?;
    let nodes = t
        .nodes
        .iter()
        .map(|n| Node {
            name: n.name.clone(),
            role: Role::Router,
            count: 1,
            address: Ipv4Addr::UNSPECIFIED,
        })
        .collect();
    let mut links = Vec::new();
    for l in &t.links {
        let rate = l
            .capacity
            .filter(|c| *c > 0.0)
            .map_or(fallback, |c| (c * scale).clamp(lo, hi));
        let delay = Duration::from_secs_f64(l.delay / 1e3);
        links.push(Link {
            a: l.a,
            b: l.b,
            rate,
            delay,
            jitter: jitter.min(delay),
            loss: loss.max(l.loss),
            queue: queue(path, "network.queue_bytes", net.queue_bytes, rate)?,
        });
    }
    Ok((nodes, links))
}

/// Refuses a clients node that reaches no server, and a network in pieces that leaves one.
fn check_reach(path: &Path, spec: &Spec) -> Result<(), crate::Error> {
    let (comp, _) = spec.network.components();
    for (i, n) in spec.nodes.iter().enumerate() {
        if n.role == Role::Clients
            && !spec
                .nodes
                .iter()
                .enumerate()
                .any(|(j, m)| m.role.serves() && comp[j] == comp[i])
        {
            return Err(bad(
                path,
                &format!("node {}", n.name),
                "a clients node that no origin or edge can be reached from",
                "clients connected by links to at least one origin, edge or dht-edge",
            ));
        }
    }
    Ok(())
}

impl Spec {
    /// The nodes of a role, in the file's order.
    pub fn nodes_of(&self, role: Role) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].role == role)
            .collect()
    }

    /// The number of a node, by name.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// For every node, the next hop toward every other node: (the link, the node at its far
    /// end), by shortest path (`routing`); `None` for itself and unreachable nodes.
    pub fn next_hops(&self) -> Vec<Vec<Option<(usize, usize)>>> {
        let n = self.nodes.len();
        (0..n)
            .map(|s| {
                let tree = self.network.shortest_paths(s, self.routing);
                (0..n)
                    .map(|d| {
                        let path = Topology::path(&tree, d);
                        let l = *path.first()?;
                        let link = &self.network.links[l];
                        Some((l, if link.a == s { link.b } else { link.a }))
                    })
                    .collect()
            })
            .collect()
    }

    /// The links of the routed path from `s` to `d`, from `s` on.
    pub fn path(&self, s: usize, d: usize) -> Vec<usize> {
        let tree = self.network.shortest_paths(s, self.routing);
        Topology::path(&tree, d)
    }

    /// The one-way delay of the routed path from `s` to `d` (the configured delays summed).
    pub fn path_delay(&self, s: usize, d: usize) -> Duration {
        self.path(s, d).iter().map(|&l| self.links[l].delay).sum()
    }

    /// The lowest rate on the routed path from `s` to `d` (bit/s; infinite from a node to
    /// itself): the path's bottleneck.
    pub fn path_rate(&self, s: usize, d: usize) -> f64 {
        self.path(s, d)
            .iter()
            .map(|&l| self.links[l].rate)
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests;
