//! The steering server's deployment file (JSON): the network (a file in any format the
//! library's topology readers take, or node-link JSON inline; read by `cdnlab::topology`, the
//! type the simulator uses), the edges placed on its nodes (name, node, address, capacity in
//! streams), the user populations (name, node, demand), the cost between nodes (hops by
//! default, TP-R1; or km over the real links), and the secret of the internal endpoints. Read
//! whole and checked; every refusal names what is wrong ([`DeploymentError`]).

use cdnlab::Named;
use cdnlab::topology::{Cost, Format, ReadOptions};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Why a deployment file is refused.
#[derive(Debug, thiserror::Error)]
pub enum DeploymentError {
    #[error("{path}: {source}", path = path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {error}", path = path.display())]
    InFile {
        path: PathBuf,
        error: Box<DeploymentError>,
    },
    #[error(
        "{0} (expected {{\"secret\", \"network\", \"servers\", \"populations\"}} and optionally \
         \"cost\"; the network is a file `cdnlab topo` reads, or node-link JSON: docs/live.md)"
    )]
    Json(serde_json::Error),
    #[error("network: {0}")]
    Network(String),
    #[error("secret: at least 16 characters are needed")]
    ShortSecret,
    #[error("network: {0} nodes (1 to 1000 are allowed)")]
    NodeCount(usize),
    #[error("cost: {0:?} (allowed: {allowed})", allowed = Cost::NAMES.join(", "))]
    Cost(String),
    #[error("{what}: unknown node {node:?} (the network's nodes: {known})")]
    UnknownNode {
        what: String,
        node: String,
        known: String,
    },
    #[error("{what}: node {node:?} names {count} nodes of the network; name a node that is unique")]
    AmbiguousNode {
        what: String,
        node: String,
        count: usize,
    },
    #[error("server {0:?}: a distinct name (1 to 64 letters, digits, - or _) and address")]
    BadServer(String),
    #[error("server {server}: capacity {capacity} (1 to 1000000 streams)")]
    Capacity { server: String, capacity: i64 },
    #[error("population {0:?}: a distinct name of 1 to 64 letters, digits, - or _")]
    BadPopulation(String),
    #[error("population {population}: demand {demand} (0 to 1000000 streams)")]
    Demand { population: String, demand: i64 },
    #[error("at least one server and one population are needed")]
    Empty,
    #[error("population {population}: server {server} is not reachable over the links")]
    Unreachable { population: String, server: String },
}

/// An edge of the deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    /// Its node in the network.
    pub node: usize,
    pub addr: SocketAddr,
    /// Concurrent streams.
    pub capacity: i64,
}

/// A user population.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Population {
    pub name: String,
    /// Its node in the network.
    pub node: usize,
    /// Concurrent streams expected at first.
    pub demand: i64,
}

/// A validated deployment: a network with edges and populations on its nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub secret: String,
    pub network: cdnlab::topology::Topology,
    pub cost: Cost,
    /// Costs between nodes in `cost`'s unit (TP-R1).
    pub costs: Vec<Vec<i64>>,
    pub servers: Vec<Server>,
    pub populations: Vec<Population>,
}

/// The network: a file's path (relative to the deployment file), or node-link JSON inline.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawNetwork {
    Path(String),
    Inline(serde_json::Value),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    secret: String,
    network: RawNetwork,
    #[serde(default)]
    cost: Option<String>,
    servers: Vec<RawServer>,
    populations: Vec<RawPopulation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    #[serde(alias = "metro")]
    node: String,
    addr: SocketAddr,
    capacity: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPopulation {
    name: String,
    #[serde(alias = "metro")]
    node: String,
    demand: i64,
}

/// A name: 1 to 64 of letters, digits, '-' and '_' (it goes into paths and queries).
pub(crate) fn good_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Reads a network file for a deployment: its format from its first bytes, else its name.
fn read_network(path: &Path) -> Result<cdnlab::topology::Topology, DeploymentError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|source| DeploymentError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut r = std::io::BufReader::new(file);
    let head = r
        .fill_buf()
        .map_err(|source| DeploymentError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .to_vec();
    let format = Format::detect(&head, &path.to_string_lossy()).ok_or_else(|| {
        DeploymentError::Network(format!(
            "{}: not a topology file (formats: {})",
            path.display(),
            Format::NAMES.join(", ")
        ))
    })?;
    cdnlab::topology::read(r, format, ReadOptions::default())
        .map_err(|e| DeploymentError::Network(format!("{}: {e}", path.display())))
}

impl Deployment {
    /// Reads and checks a deployment file; errors name the file and what is wrong. A network
    /// named by path is found relative to the file's folder.
    pub fn load(path: &Path) -> Result<Self, DeploymentError> {
        let text = std::fs::read_to_string(path).map_err(|source| DeploymentError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::parse_in(&text, dir).map_err(|e| DeploymentError::InFile {
            path: path.to_path_buf(),
            error: Box::new(e),
        })
    }

    /// Parses and checks deployment text (a network path is relative to the working folder).
    pub fn parse(text: &str) -> Result<Self, DeploymentError> {
        Self::parse_in(text, Path::new("."))
    }

    fn parse_in(text: &str, dir: &Path) -> Result<Self, DeploymentError> {
        use DeploymentError as E;
        let raw: Raw = serde_json::from_str(text).map_err(E::Json)?;
        if raw.secret.chars().count() < 16 {
            return Err(E::ShortSecret);
        }
        let network = match &raw.network {
            RawNetwork::Path(p) => read_network(&dir.join(p))?,
            RawNetwork::Inline(v) => cdnlab::topology::read(
                v.to_string().as_bytes(),
                Format::Json,
                ReadOptions::default(),
            )
            .map_err(|e| E::Network(e.to_string()))?,
        };
        if network.nodes.len() > 1000 {
            return Err(E::NodeCount(network.nodes.len()));
        }
        let cost: Cost = match &raw.cost {
            None => Cost::Hops,
            Some(c) => c.parse().map_err(|_| E::Cost(c.clone()))?,
        };
        let index = |what: &str, m: &str| {
            let hits: Vec<usize> = (0..network.nodes.len())
                .filter(|&i| network.nodes[i].name == m)
                .collect();
            match hits[..] {
                [i] => Ok(i),
                [] => Err(E::UnknownNode {
                    what: what.to_string(),
                    node: m.to_string(),
                    known: network
                        .nodes
                        .iter()
                        .take(20)
                        .map(|n| n.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                        + if network.nodes.len() > 20 {
                            ", ..."
                        } else {
                            ""
                        },
                }),
                _ => Err(E::AmbiguousNode {
                    what: what.to_string(),
                    node: m.to_string(),
                    count: hits.len(),
                }),
            }
        };
        let mut servers = Vec::new();
        for s in &raw.servers {
            if !good_name(&s.name)
                || servers
                    .iter()
                    .any(|x: &Server| x.name == s.name || x.addr == s.addr)
            {
                return Err(E::BadServer(s.name.clone()));
            }
            if !(1..=1_000_000).contains(&s.capacity) {
                return Err(E::Capacity {
                    server: s.name.clone(),
                    capacity: s.capacity,
                });
            }
            servers.push(Server {
                name: s.name.clone(),
                node: index(&format!("server {}", s.name), &s.node)?,
                addr: s.addr,
                capacity: s.capacity,
            });
        }
        let mut populations = Vec::new();
        for p in &raw.populations {
            if !good_name(&p.name) || populations.iter().any(|x: &Population| x.name == p.name) {
                return Err(E::BadPopulation(p.name.clone()));
            }
            if !(0..=1_000_000).contains(&p.demand) {
                return Err(E::Demand {
                    population: p.name.clone(),
                    demand: p.demand,
                });
            }
            populations.push(Population {
                name: p.name.clone(),
                node: index(&format!("population {}", p.name), &p.node)?,
                demand: p.demand,
            });
        }
        if servers.is_empty() || populations.is_empty() {
            return Err(E::Empty);
        }
        let costs = network.costs(cost);
        for p in &populations {
            if let Some(s) = servers.iter().find(|s| costs[p.node][s.node] == i64::MAX) {
                return Err(E::Unreachable {
                    population: p.name.clone(),
                    server: s.name.clone(),
                });
            }
        }
        Ok(Deployment {
            secret: raw.secret,
            network,
            cost,
            costs,
            servers,
            populations,
        })
    }

    /// The cost from each population to each server (all reachable: checked when parsed).
    pub(crate) fn population_costs(&self) -> Vec<Vec<i64>> {
        self.populations
            .iter()
            .map(|p| {
                self.servers
                    .iter()
                    .map(|s| self.costs[p.node][s.node])
                    .collect()
            })
            .collect()
    }
}
