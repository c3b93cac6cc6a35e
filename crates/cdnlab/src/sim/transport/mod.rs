//! Optimal allocation for streaming over time (spec: `docs/transport.md`): the experiments that
//! drive `crate::alloc` (the Transportation Problem, its topology and its admission rules).
//!
//! | experiment | file | what it runs |
//! |---|---|---|
//! | `stream` | `stream.rs` | populations streaming from servers under an allocation: blocking against Erlang-B, hops, re-allocation after a demand shift (T1-T3, slack, balance) |
//! | `paths` | `paths.rs` | single- vs multi-source delivery over congested paths, a packet-level model (T4) |
//! | `backbone`, `backbone-series` | `backbone.rs` | the same model on real networks (SNDlib, the Topology Zoo): optimal vs nearest vs sharing, the gap and what predicts it (T1); demand that moves through the day, with and without re-allocation (T3) |
//! | `solver` | `solver.rs` | the network simplex's time against a reference LP solver, cold and warm (T5) |

pub mod backbone;
pub mod paths;
pub mod solver;
pub mod stream;
