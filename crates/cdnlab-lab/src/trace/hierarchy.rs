//! A two-tier cache hierarchy replayed on a trace: requests go to one of several edge caches by
//! a routing rule; an edge's misses go to one parent cache the edges share; the parent's misses
//! go to the origin. Every tier has its own policy, size and admission rule; a TTL rule applies
//! at every tier (a copy stale at the edge is revalidated at the parent, which may hold a fresh
//! one). One configuration per parent size asked for, each replayed in one pass (the tiers in
//! request order), the configurations shared out over threads: results do not depend on the
//! thread count.

use super::replay::{ADMISSION_SEED, SizeSpec, first_pass};
use super::{TraceInput, spare_core, stream};
use crate::error::{ArgStyle, Error, Result};
use crate::plot::Series;
use cdnlab::Named;
use cdnlab::cache::admission::Admission;
use cdnlab::cache::ttl::Ttl;
use cdnlab::cache::{Cache, Capacity, Policy, Unit};
use cdnlab::idmap::mix64;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How a request picks its edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// By a hash of the object id: each object has one edge (the edges split the objects, as
    /// consistent hashing of URLs in a cluster does).
    Hash,
    /// The object id modulo the number of edges (for ids already spread, and for tests).
    Modulo,
    /// Each request to an edge drawn at random (a hash of its index and a seed): clients spread
    /// over the edges whatever they ask for, so popular objects sit in every edge.
    Random,
    /// By a hash of a client field, this column of a CSV trace (1-based): each client has one
    /// edge, as DNS or anycast maps a client to its nearby edge.
    Client(usize),
}

impl Route {
    pub const FORMS: &'static str = "hash (by object id), modulo (id mod edges), random (each \
         request to a random edge) or client:COL (by a hash of column COL of a CSV trace, a \
         client's id or address)";

    pub fn name(self) -> String {
        match self {
            Route::Hash => "hash".into(),
            Route::Modulo => "modulo".into(),
            Route::Random => "random".into(),
            Route::Client(c) => format!("client:{c}"),
        }
    }

    /// The edge of request number `index` (of the whole trace) for object `id`.
    #[inline]
    fn edge(self, id: u64, index: u64, edges: u64) -> usize {
        (match self {
            Route::Hash => mix64(id),
            Route::Modulo => id,
            Route::Random => mix64(index ^ mix64(ROUTE_SEED)),
            Route::Client(_) => unreachable!("routed by the client table"),
        } % edges) as usize
    }

    /// With `client:COL`, every request's edge, from a pass over the CSV's column COL (its
    /// text hashed, as `--csv-id-text` hashes ids, then mixed); None for the other rules.
    fn client_edges(
        self,
        input: &TraceInput,
        edges: u64,
        style: ArgStyle,
    ) -> Result<Option<Vec<u32>>> {
        let Route::Client(col) = self else {
            return Ok(None);
        };
        if input.format != super::Format::Csv {
            return Err(Error::Usage(format!(
                "{} client:{col}: routing by a client field needs a CSV trace (--format csv); \
                 this one is {}",
                style.arg("--route"),
                input.format.name()
            )));
        }
        let mut clients = input.clone();
        clients.csv = super::CsvColumns {
            id: col,
            size: None,
            time: None,
            ttl: None,
            id_is_text: true,
            ..input.csv
        };
        let mut table = Vec::new();
        stream(&clients, false, false, spare_core(1), |reqs| {
            table.extend(reqs.iter().map(|r| (mix64(r.id) % edges) as u32));
        })?;
        Ok(Some(table))
    }
}

/// The seed of random routing.
pub const ROUTE_SEED: u64 = 7;

impl std::str::FromStr for Route {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "hash" => Ok(Route::Hash),
            "modulo" => Ok(Route::Modulo),
            "random" => Ok(Route::Random),
            t if t.starts_with("client:") => match t["client:".len()..].trim().parse::<usize>() {
                Ok(c) if c >= 1 => Ok(Route::Client(c)),
                _ => Err(Error::Usage(format!(
                    "route `{t}`: client:COL takes a CSV column from 1; allowed {}",
                    Route::FORMS
                ))),
            },
            other => Err(Error::Usage(format!(
                "route `{other}`: allowed {}",
                Route::FORMS
            ))),
        }
    }
}

/// One tier's cache: policy, size and admission rule.
#[derive(Debug, Clone)]
pub struct TierSpec {
    pub policy: Policy,
    pub size: SizeSpec,
    pub admission: Admission,
}

/// What to replay.
#[derive(Debug, Clone)]
pub struct HierarchyPlan {
    pub input: TraceInput,
    pub unit: Unit,
    pub edges: usize,
    pub edge: TierSpec,
    pub route: Route,
    /// The parent's policy and admission, and one configuration per size.
    pub parent: TierSpec,
    pub parent_sizes: Vec<SizeSpec>,
    pub ttl: Option<Ttl>,
    pub threads: Option<usize>,
    pub style: ArgStyle,
}

/// One tier of one configuration: what reached it and what it served. The rows of a
/// configuration are `edges` (all edges together), `edge-0`, `edge-1`, ..., `parent` and
/// `origin` (what reached it is what it served).
#[derive(Debug, Clone, Serialize)]
pub struct HierarchyRow {
    pub parent_size: u64,
    pub tier: String,
    pub policy: Option<String>,
    pub size: Option<u64>,
    pub size_unit: &'static str,
    pub requests: u64,
    pub hits: u64,
    pub hit_ratio: f64,
    /// Requests that found their copy stale here (counted as misses).
    pub expired: u64,
    pub bytes: u64,
    pub hit_bytes: u64,
    pub byte_hit_ratio: f64,
    /// Shares of all the trace's requests and bytes this tier served.
    pub served_share: f64,
    pub served_byte_share: f64,
}

/// The column names of [`HierarchyRow`], in order.
pub const HIERARCHY_COLUMNS: [&str; 14] = [
    "parent_size",
    "tier",
    "policy",
    "size",
    "size_unit",
    "requests",
    "hits",
    "hit_ratio",
    "expired",
    "bytes",
    "hit_bytes",
    "byte_hit_ratio",
    "served_share",
    "served_byte_share",
];

/// Counts at one cache.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    requests: u64,
    hits: u64,
    bytes: u64,
    hit_bytes: u64,
}

impl Counts {
    #[inline]
    fn add(&mut self, size: u32, hit: bool) {
        self.requests += 1;
        self.bytes += u64::from(size);
        self.hits += u64::from(hit);
        self.hit_bytes += u64::from(hit) * u64::from(size);
    }
}

/// A replayed configuration.
struct Config {
    parent_size: u64,
    edges: Vec<(Box<dyn Cache + Send>, Counts)>,
    parent: (Box<dyn Cache + Send>, Counts),
    origin: Counts,
}

/// Replays the hierarchy at every parent size; rows in order of the sizes asked for.
pub fn hierarchy(a: &HierarchyPlan) -> Result<Vec<HierarchyRow>> {
    let n = |f: &str| a.style.arg(f);
    if a.edges == 0 {
        return Err(Error::Usage(format!("{} 0: at least 1 edge", n("--edges"))));
    }
    if a.parent_sizes.is_empty() {
        return Err(Error::Usage(format!(
            "{}: give at least one size",
            n("--parent-size")
        )));
    }
    let sized = a.unit == Unit::Bytes;
    let fractions = std::iter::once(&a.edge.size)
        .chain(&a.parent_sizes)
        .any(|s| matches!(s, SizeSpec::Fraction(_)));
    let wss = if fractions {
        first_pass(&a.input, sized, true, None, 0)?.0
    } else {
        None
    };
    let amount = |s: SizeSpec, what: &str| -> Result<u64> {
        let c = match s {
            SizeSpec::Absolute(c) | SizeSpec::Bytes(c) => c,
            SizeSpec::Fraction(f) => {
                let w = wss.expect("counted for fractions");
                ((if sized { w.bytes } else { w.objects }) as f64 * f) as u64
            }
        };
        if c == 0 {
            let shown = match s {
                SizeSpec::Fraction(f) => f.to_string(),
                SizeSpec::Absolute(c) | SizeSpec::Bytes(c) => c.to_string(),
            };
            return Err(Error::Usage(format!(
                "{} {shown}: less than 1 {} (of a working set of {}); give a larger size",
                n(what),
                a.unit.name(),
                wss.map_or(0, |w| if sized { w.bytes } else { w.objects })
            )));
        }
        Ok(c)
    };
    let edge_size = amount(a.edge.size, "--edge-size")?;
    let build = |t: &TierSpec, c: u64| {
        t.policy.build_full(
            Capacity::new(c, a.unit).expect("at least 1"),
            t.admission,
            ADMISSION_SEED,
            a.ttl.clone(),
        )
    };
    let mut configs = Vec::new();
    for &s in &a.parent_sizes {
        let c = amount(s, "--parent-size")?;
        configs.push(Config {
            parent_size: c,
            edges: (0..a.edges)
                .map(|_| (build(&a.edge, edge_size), Counts::default()))
                .collect(),
            parent: (build(&a.parent, c), Counts::default()),
            origin: Counts::default(),
        });
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, configs.len());
    let mut shares: Vec<Vec<(usize, Config)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in configs.into_iter().enumerate() {
        shares[i % threads].push((i, c));
    }
    let edges = a.edges as u64;
    let clients = a.route.client_edges(&a.input, edges, a.style)?;
    let clients = clients.as_deref();
    let offline = a.edge.policy.offline() || a.parent.policy.offline();
    let results: Vec<Result<Vec<(usize, Config)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|mut share| {
                s.spawn(move || {
                    let mut index = 0u64;
                    stream(&a.input, sized, offline, spare_core(threads), |reqs| {
                        for r in reqs {
                            let e = match clients {
                                // The client pass read the same records in the same order.
                                Some(t) => t.get(index as usize).map_or(0, |&e| e as usize),
                                None => a.route.edge(r.id, index, edges),
                            };
                            index += 1;
                            for (_, c) in share.iter_mut() {
                                let (edge, counts) = &mut c.edges[e];
                                let hit = edge.access_req(r);
                                counts.add(r.size, hit);
                                if hit {
                                    continue;
                                }
                                let hit = c.parent.0.access_req(r);
                                c.parent.1.add(r.size, hit);
                                if !hit {
                                    c.origin.add(r.size, true);
                                }
                            }
                        }
                    })?;
                    if let Some(t) = clients.filter(|t| t.len() as u64 != index) {
                        return Err(Error::file(
                            &a.input.path,
                            format!(
                                "the client column gave {} records, the trace {index}",
                                t.len()
                            ),
                        ));
                    }
                    Ok(share)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("hierarchy worker panicked"))
            .collect()
    });
    let mut done = Vec::new();
    for r in results {
        done.extend(r?);
    }
    done.sort_by_key(|(i, _)| *i);
    Ok(done
        .iter()
        .flat_map(|(_, c)| rows(a, c, edge_size))
        .collect())
}

/// The rows of one configuration.
fn rows(a: &HierarchyPlan, c: &Config, edge_size: u64) -> Vec<HierarchyRow> {
    let ratio = |x: u64, y: u64| x as f64 / y.max(1) as f64;
    let total: Counts = c.edges.iter().fold(Counts::default(), |mut t, (_, e)| {
        t.requests += e.requests;
        t.hits += e.hits;
        t.bytes += e.bytes;
        t.hit_bytes += e.hit_bytes;
        t
    });
    let row =
        |tier: String, spec: Option<(&TierSpec, u64)>, k: &Counts, expired: u64| HierarchyRow {
            parent_size: c.parent_size,
            tier,
            policy: spec.map(|(t, _)| t.policy.name().to_string()),
            size: spec.map(|(_, s)| s),
            size_unit: a.unit.name(),
            requests: k.requests,
            hits: k.hits,
            hit_ratio: ratio(k.hits, k.requests),
            expired,
            bytes: k.bytes,
            hit_bytes: k.hit_bytes,
            byte_hit_ratio: ratio(k.hit_bytes, k.bytes),
            served_share: ratio(k.hits, total.requests),
            served_byte_share: ratio(k.hit_bytes, total.bytes),
        };
    let edge_expired: u64 = c.edges.iter().map(|(e, _)| e.expired().0).sum();
    let mut out = vec![row(
        "edges".into(),
        Some((&a.edge, edge_size)),
        &total,
        edge_expired,
    )];
    for (i, (e, k)) in c.edges.iter().enumerate() {
        out.push(row(
            format!("edge-{i}"),
            Some((&a.edge, edge_size)),
            k,
            e.expired().0,
        ));
    }
    out.push(row(
        "parent".into(),
        Some((&a.parent, c.parent_size)),
        &c.parent.1,
        c.parent.0.expired().0,
    ));
    out.push(row("origin".into(), None, &c.origin, 0));
    out
}

/// Draws where requests and bytes are served (edges, parent, origin) against the parent's size
/// (log axis), as an SVG at `svg_path` and the PNG beside it; returns the files written.
pub fn draw(a: &HierarchyPlan, rows: &[HierarchyRow], svg_path: &Path) -> Result<Vec<PathBuf>> {
    let mut series = Vec::new();
    for (dash, bytes) in [(0, false), (1, true)] {
        for tier in ["edges", "parent", "origin"] {
            series.push(Series {
                label: format!("{tier}, {}", if bytes { "bytes" } else { "requests" }),
                points: rows
                    .iter()
                    .filter(|r| r.tier == tier)
                    .map(|r| {
                        let y = if bytes {
                            r.served_byte_share
                        } else {
                            r.served_share
                        };
                        (r.parent_size as f64, y, f64::NAN, f64::NAN)
                    })
                    .collect(),
                dash,
            });
        }
    }
    let name = a.input.path.file_name().map_or_else(
        || a.input.path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let chart = crate::plot::Chart::shares(
        format!(
            "{name}: {} {} edges ({}) and a {} parent",
            a.edges,
            a.edge.policy.name(),
            a.route.name(),
            a.parent.policy.name()
        ),
        &format!("parent size ({})", a.unit.name()),
        "share served",
        series,
    );
    crate::plot::write_chart(&chart, svg_path, crate::plot::Format::Both, 2.0)
}
