//! # cdnlab: CDN server selection and load balancing
//!
//! This crate is the pure half of cdnlab: every model and algorithm, and nothing that touches a
//! file, a socket, a clock or a terminal. The experiment machinery (crate `cdnlab-lab`), the
//! `cdnlab` command (crate `cdnlab-cli`) and the live servers (crate `cdnlab-live`) are built on
//! it, so the simulator and the real servers run the same code. The specifications in
//! docs/spec/ number each paper's rules (GWTW-R1, MH-R1, TP-R1, ...); each module says which it
//! implements.
//!
//! ## Layout
//! - [`rng`]: deterministic random streams, one per (master seed, cell, replication).
//! - [`idmap`]: the open-addressing maps from object id to a dense slot that the caches, the
//!   selectors, the DHT store and the trace analysis share, and the prefetch hint.
//! - [`workload`]: catalogues, popularity laws (Zipf, uniform), Poisson arrivals, trace readers.
//! - [`cache`]: one [`cache::Cache`] trait, one file per eviction policy (LRU, FIFO, LFU,
//!   S3-FIFO as libCacheSim and as its paper, SIEVE, CLOCK, ARC, 2Q, SLRU, W-TinyLFU, GDSF,
//!   LFUDA, Belady, LIRS as libCacheSim and as its paper), one-pass LRU miss-ratio curves
//!   ([`cache::mrc`]: stack distances, SHARDS), the Che approximation, and a registry from
//!   config names to policies ([`cache::Policy`]).
//! - [`select`]: client-side server selection behind one [`select::Selector`] trait:
//!   Go-With-The-Winner, k = 1 / oracle (fixed server), per-request power of two choices, and the
//!   b-matching that finds an optimal assignment.
//! - [`dht`]: the multi-hash DHT CDN: the hash family, the ring, random binary search, the
//!   window-end replication rule and random gap removal (as step machines that the simulator and
//!   the live edges both drive), the replica store, the spec's formulas, and the production
//!   baselines behind one [`dht::baselines::Placement`] trait.
//! - [`alloc`]: optimal allocation of server capacity for streaming (the paper's word, not
//!   memory allocation): the Transportation Problem (network simplex,
//!   warm starts, NW corner and Vogel), the metro topology, admission under thresholds (CP-1,
//!   CP-2, slack sharing, re-allocation), Erlang-B, and the content-steering rule that spreads
//!   a population's sessions over its servers as the allocation's shares say
//!   ([`alloc::steering`]).
//! - [`steer`]: steering video sessions by what players report: CTA-5004 CMCD parsed and
//!   checked, and each pathway's reports aggregated one vote per session.
//! - [`topology`]: the one network type (nodes, links with capacity, length, delay and loss,
//!   demand matrices and series) with streaming readers for Topology Zoo GML and GraphML,
//!   SNDlib native and XML and topohub's JSON, graph functions (hops, shortest paths, carried
//!   traffic, costs) and the committed networks built in ([`topology::catalog`]).
//! - [`stats`]: running moments, confidence intervals, line fits, binomial and Poisson tails,
//!   rank correlation.
//! - [`error`]: the one error type, [`Error`].
//! - [`named`]: [`Named`], the registry every named choice (cache policy, trace format, probe
//!   rule, search strategy, allocation policy, ...) is declared with once: its members, their
//!   names, one line on each, and `FromStr`. Experiments list `T::NAMES` as a parameter's
//!   choices and the command builds `--help` from `T::ABOUT`, so the allowed names, the parser,
//!   the help and the error message cannot drift apart.
//! - [`sim`]: experiments. An [`sim::Experiment`] declares its parameters (with ranges) and metrics
//!   and computes one replication of one cell from a parameter set and an RNG; the registry maps
//!   scenario names to experiments, so the runner never names a concrete model.
//!
//! ## Examples
//!
//! `examples/` has four programs (`cargo run --release -p cdnlab --example NAME`):
//! `replay_trace` (policies on a trace), `gwtw_selector` (the [`select::gwtw::Gwtw`] selector
//! driven against your own servers through the [`select::Selector`] trait), `tp_warm` (a
//! Transportation Problem, its duals and a warm re-allocation) and `run_experiment` (an
//! experiment's replications from [`sim::find`], with a confidence interval). The shortest:
//!
//! ```
//! use cdnlab::cache::{Capacity, Policy};
//! use cdnlab::workload::popularity::{Law, Sampler};
//!
//! // An LRU cache of 100 objects under Zipf(0.8) requests over 1000 objects.
//! let sampler = Sampler::new(Law::Zipf { alpha: 0.8 }, 1000)?;
//! let mut rng = cdnlab::rng::stream(42, 0, 0);
//! let mut cache = Policy::Lru.build(Capacity::objects(100)?);
//! let hits = (0..100_000)
//!     .filter(|_| cache.access(sampler.sample(&mut rng) as u64, 1))
//!     .count();
//! // The Che approximation predicts the long-run hit ratio.
//! let che = cdnlab::cache::che::lru_hit_ratio(&Law::Zipf { alpha: 0.8 }.pmf(1000)?, 100.0)?;
//! assert!((hits as f64 / 100_000.0 - che).abs() < 0.02);
//! # Ok::<(), cdnlab::Error>(())
//! ```
//!
//! ## Design rules
//! - Determinism: a result is a function of (scenario, seed). Nothing reads the clock or a global
//!   RNG; hash-table iteration order never reaches an output.
//! - Hot paths (one simulated request) allocate nothing: caches are flat arrays indexed by dense
//!   slot ids, with a private open-addressing index from object id to slot.
//! - Errors are typed ([`Error`]); bad input never panics.
//! - Strategies the engines switch between per request are enums (GWTW's `Client`, the
//!   multi-hash search [`dht::search::Strategy`]) or a small trait where their state differs
//!   ([`dht::baselines::Placement`]); `bench/gwtw.sh` and `bench/multihash.sh` measure that the
//!   request loops stay as fast.

// Unsafe code only where a measured hot path needs it, each site allowed and justified.
#![deny(unsafe_code)]

pub mod alloc;
pub mod cache;
pub mod dht;
pub mod error;
pub mod idmap;
pub mod named;
pub mod rng;
pub mod select;
pub mod sim;
pub mod stats;
pub mod steer;
pub mod topology;
pub mod workload;

pub use error::Error;
pub use named::Named;
