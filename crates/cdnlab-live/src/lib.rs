//! cdnlab on real HTTP, on loopback by default: an origin with a synthetic catalogue, caching
//! edges that use the library's cache policies, and users that run the library's
//! Go-With-The-Winner state machine against them. The library decides; this crate only moves
//! bytes.
//!
//! | part | where | what it holds |
//! |---|---|---|
//! | serving | `serve/` | what every server shares: the accept loop (connection limit, header-read timeout, header size limit, shutdown, secrets), HTTP semantics (validators, 304, byte ranges), one origin fetch per object at a time (`flight`), a token-bucket shaper, Prometheus metrics, rate-limited warnings |
//! | content | `catalogue.rs`, `media.rs` | the synthetic catalogue (sizes and bytes as functions of (seed, id)); the VP9 asset, its playlist and MPD rewritten per session with one pathway per edge and content steering |
//! | origin | `origin.rs` | `/content/{id}` from the catalogue, `/media/{file}` from the asset, `/player/` pages and reports, with added latency and injected failures |
//! | edge | `edge.rs` | the caching reverse proxy: cache policy, coalesced misses, `Cache-Status`, shaping, streaming sessions with admission |
//! | DHT edges | `dht/` | edges as a multi-hash DHT: RBS over HTTP probes, replication, gap removal, hand-over; `dht/ring.rs` the ring file (members, K, virtual nodes, secret) |
//! | steering | `steer/` | the Transportation Problem over a metro topology: thresholds on edges, content-steering manifests, re-allocation |
//! | sessions | `session.rs` | streaming-session tokens: minted and signed (HMAC-SHA256) by the steering server, checked by the edges |
//! | users | `client.rs` | GWTW users against candidate edges, per-user Zipf catalogues |
//! | players | `players.rs` | headless Chromium on the player page, and the pages' reports per session |
//! | testbed | `testbed/` | the emulated multi-host testbed: namespaces, links with rate, delay, jitter, loss and queue, the userspace link element, probes |
//! | demos | `demo/` | what `cdnlab live demo` runs: GWTW users (`demo/mod.rs`), the DHT under a flash crowd and a killed edge (`demo/dht.rs`), optimal allocation vs nearest server (`demo/steer.rs`), real players through three edges (`demo/players.rs`) |

// Unsafe code only where the testbed calls the system (`testbed/sys.rs`, which allows it).
#![deny(unsafe_code)]

pub mod catalogue;
pub mod client;
pub mod demo;
pub mod dht;
pub mod edge;
pub mod media;
pub mod origin;
pub mod players;
pub mod serve;
pub mod session;
pub mod steer;
pub mod testbed;

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
    /// A file with a value that cannot be used: the file, the field and what is allowed.
    #[error("{}: {message}", path.display())]
    File {
        path: std::path::PathBuf,
        message: String,
    },
    /// A testbed that cannot be built or run (docs/testbed.md).
    #[error("testbed: {0}")]
    Testbed(String),
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
