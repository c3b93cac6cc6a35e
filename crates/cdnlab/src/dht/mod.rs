//! A DHT-based CDN with multiple hash functions (spec `docs/spec/multihash.md`; as implemented:
//! `docs/multihash.md`).
//!
//! | part | file | what it holds |
//! |---|---|---|
//! | hash family | `hash.rs` | h_i(f) and node positions, stable across runs and Rust versions |
//! | ring | `ring.rs` | consistent hashing: successor ownership, virtual nodes, joins, crashes, Chord hops |
//! | lookups | `search.rs` | random binary search (RBS) and the comparison variants |
//! | formulas | `analysis.rs` | E\[probes\], its variance, serve probabilities with gaps, RGR rounds |
//! | gap repair | `repair.rs` | random gap removal and the neighbour check: probe targets, one round as a step machine |
//! | replication | `replication.rs` | the window-end rule of a replica (replicate by the growth rule, leave as the top) as a step machine |
//! | replicas | `store.rs` | which replica of which file is where; CREATE_IF_ABSENT, crashes, hand-over |
//! | baselines | `baselines.rs` | bounded-load consistent hashing, rendezvous, Maglev |
//!
//! The simulator (`crate::sim::multihash`) drives them over time (overload windows, growth and
//! shrink, repair rounds); the live edges (`cdnlab-live`) drive the same rules over HTTP.

pub mod analysis;
pub mod baselines;
pub mod hash;
pub mod repair;
pub mod replication;
pub mod ring;
pub mod search;
pub mod store;
