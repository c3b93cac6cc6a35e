//! A DHT-based CDN with multiple hash functions (spec `shared/spec/multihash.md`; as implemented:
//! `docs/multihash.md`).
//!
//! | part | file | what it holds |
//! |---|---|---|
//! | hash family | `hash.rs` | h_i(f) and node positions, stable across runs and Rust versions |
//! | ring | `ring.rs` | consistent hashing: successor ownership, virtual nodes, joins, crashes, Chord hops |
//! | lookups | `search.rs` | random binary search (RBS) and the comparison variants |
//! | formulas | `analysis.rs` | E[probes], its variance, serve probabilities with gaps, RGR rounds |
//! | replicas | `store.rs` | which replica of which file is where; CREATE_IF_ABSENT, crashes, hand-over |
//! | baselines | `baselines.rs` | bounded-load consistent hashing, rendezvous, Maglev |
//!
//! The rules that use them over time (overload windows, growth and shrink, random gap removal
//! and its variants) are in the simulator, `crate::sim::multihash`.

pub mod analysis;
pub mod baselines;
pub mod hash;
pub mod ring;
pub mod search;
pub mod store;
