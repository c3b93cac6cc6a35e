//! The steering server's topology file (JSON): metros and the links between them, the edges
//! (name, metro, address, capacity in streams) and the user populations (name, metro, demand),
//! and the secret of the internal endpoints. Read whole and checked; every refusal names what is
//! wrong ([`TopologyError`]). Costs are hop counts over the links (TP-R1).

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Why a topology file is refused.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("{path}: {source}", path = path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {error}", path = path.display())]
    InFile {
        path: PathBuf,
        error: Box<TopologyError>,
    },
    #[error("{0} (expected {{\"secret\", \"metros\", \"links\", \"servers\", \"populations\"}})")]
    Json(serde_json::Error),
    #[error("secret: at least 16 characters are needed")]
    ShortSecret,
    #[error("metros: {0} listed (1 to 1000 are allowed)")]
    MetroCount(usize),
    #[error("metro {0:?}: a distinct name of 1 to 64 letters, digits, - or _")]
    BadMetro(String),
    #[error("{what}: unknown metro {metro:?}")]
    UnknownMetro { what: String, metro: String },
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

/// An edge of the topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub metro: usize,
    pub addr: SocketAddr,
    /// Concurrent streams.
    pub capacity: i64,
}

/// A user population.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Population {
    pub name: String,
    pub metro: usize,
    /// Concurrent streams expected at first.
    pub demand: i64,
}

/// A validated topology file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    pub secret: String,
    pub metros: Vec<String>,
    /// Hops between metros.
    pub hops: Vec<Vec<i64>>,
    pub servers: Vec<Server>,
    pub populations: Vec<Population>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    secret: String,
    metros: Vec<String>,
    links: Vec<(String, String)>,
    servers: Vec<RawServer>,
    populations: Vec<RawPopulation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    metro: String,
    addr: SocketAddr,
    capacity: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPopulation {
    name: String,
    metro: String,
    demand: i64,
}

/// A name: 1 to 64 of letters, digits, '-' and '_' (it goes into paths and queries).
pub(crate) fn good_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Topology {
    /// Reads and checks a topology file; errors name the file and what is wrong.
    pub fn load(path: &Path) -> Result<Self, TopologyError> {
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text).map_err(|e| TopologyError::InFile {
            path: path.to_path_buf(),
            error: Box::new(e),
        })
    }

    /// Parses and checks topology text.
    pub fn parse(text: &str) -> Result<Self, TopologyError> {
        use TopologyError as E;
        let raw: Raw = serde_json::from_str(text).map_err(E::Json)?;
        if raw.secret.chars().count() < 16 {
            return Err(E::ShortSecret);
        }
        let index = |what: &str, m: &str| {
            raw.metros
                .iter()
                .position(|x| x == m)
                .ok_or_else(|| E::UnknownMetro {
                    what: what.to_string(),
                    metro: m.to_string(),
                })
        };
        if raw.metros.is_empty() || raw.metros.len() > 1000 {
            return Err(E::MetroCount(raw.metros.len()));
        }
        for (i, m) in raw.metros.iter().enumerate() {
            if !good_name(m) || raw.metros[..i].contains(m) {
                return Err(E::BadMetro(m.clone()));
            }
        }
        let mut links = Vec::new();
        for (a, b) in &raw.links {
            links.push((index("link", a)?, index("link", b)?));
        }
        let hops = cdnlab::alloc::topology::hops(raw.metros.len(), &links);
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
                metro: index(&s.name, &s.metro)?,
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
                metro: index(&p.name, &p.metro)?,
                demand: p.demand,
            });
        }
        if servers.is_empty() || populations.is_empty() {
            return Err(E::Empty);
        }
        for p in &populations {
            if let Some(s) = servers.iter().find(|s| hops[p.metro][s.metro] == i64::MAX) {
                return Err(E::Unreachable {
                    population: p.name.clone(),
                    server: s.name.clone(),
                });
            }
        }
        Ok(Topology {
            secret: raw.secret,
            metros: raw.metros,
            hops,
            servers,
            populations,
        })
    }

    /// Hops from each population to each server (all reachable: checked when parsed).
    pub(crate) fn costs(&self) -> Vec<Vec<i64>> {
        self.populations
            .iter()
            .map(|p| {
                self.servers
                    .iter()
                    .map(|s| self.hops[p.metro][s.metro])
                    .collect()
            })
            .collect()
    }
}
