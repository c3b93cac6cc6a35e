//! cdnlab on real HTTP, on loopback by default: an origin with a synthetic catalogue, caching
//! edges that use the library's cache policies, and users that run the library's
//! Go-With-The-Winner state machine against them. The library decides; this crate only moves
//! bytes.
//!
//! | part | file | what it holds |
//! |---|---|---|
//! | objects | `catalogue.rs` | the synthetic catalogue: sizes and bytes as functions of (seed, id); object ids in paths |
//! | serving | `server.rs` | the accept loop: connection limit, header-read timeout, header size limit, shutdown |
//! | origin | `origin.rs` | `/content/{id}` from the catalogue, `/media/{file}` from the asset, `/player/` pages and reports, with added latency and injected failures |
//! | edge | `edge.rs` | the caching reverse proxy: cache policy, coalesced misses, `Cache-Status`, shaping, streaming sessions with admission |
//! | DHT edges | `dht.rs` | edges as a multi-hash DHT: RBS over HTTP probes, replication, gap removal, hand-over |
//! | steering | `steer.rs` | the Transportation Problem over a metro topology: thresholds on edges, content-steering manifests, re-allocation |
//! | ring file | `ring.rs` | the DHT's members, K, virtual nodes and the internal endpoints' secret |
//! | HTTP semantics | `http.rs` | validators, conditional requests (304) and byte ranges (206, 416), for the origin and the edge |
//! | coalescing | `flight.rs` | one origin fetch per object at a time, shared by concurrent misses, never left behind |
//! | shaping | `shaper.rs` | a token bucket shared by an edge's responses |
//! | warnings | `warn.rs` | failures logged with their reason, rate-limited per kind |
//! | metrics | `metrics.rs` | per-server counters and a latency histogram through the `prometheus` crate |
//! | users | `client.rs` | GWTW users against candidate edges, per-user Zipf catalogues |
//! | demo | `demo.rs` | an origin, N edges and M users on loopback, run for a while, with a timeline |
//! | DHT demo | `demo_dht.rs` | DHT edges under a Zipf load with a flash crowd and a killed edge |
//! | steering demo | `demo_steer.rs` | the reference metros: optimal allocation vs nearest server under the same load |
//! | media | `media.rs` | the VP9 asset's files, and its playlist and MPD rewritten per session with one pathway per edge and content steering |
//! | players | `players.rs` | headless Chromium on the player page, and the pages' reports per session |
//! | players demo | `demo_players.rs` | hls.js or dash.js sessions through three edges, the busiest taken out halfway |

#![forbid(unsafe_code)]

pub mod catalogue;
pub mod client;
pub mod demo;
pub mod demo_dht;
pub mod demo_players;
pub mod demo_steer;
pub mod dht;
pub mod edge;
pub mod flight;
pub mod http;
pub mod media;
pub mod metrics;
pub mod origin;
pub mod players;
pub mod ring;
pub mod server;
pub mod shaper;
pub mod steer;
pub mod warn;

/// What the live servers and clients can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value out of range (from the library's checks or ours).
    #[error(transparent)]
    Config(#[from] cdnlab::Error),
    /// A socket that cannot be bound or read.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// An HTTP client that cannot be built.
    #[error("http client: {0}")]
    Client(String),
}

impl Error {
    /// An I/O error about `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}
