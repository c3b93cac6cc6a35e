//! Optimal allocation for streaming over time (spec: `docs/transport.md`): the experiments that
//! drive `crate::alloc` (the Transportation Problem, its topology and its admission rules).
//!
//! | experiment | file | what it runs |
//! |---|---|---|
//! | `stream` | `stream.rs` | populations streaming from servers under an allocation: blocking against Erlang-B, hops, re-allocation after a demand shift (T1-T3, slack, balance) |
//! | `paths` | `paths.rs` | single- vs multi-source delivery over congested paths, a packet-level model (T4) |
//! | `solver` | `solver.rs` | the network simplex's time against a reference LP solver, cold and warm (T5) |

pub mod paths;
pub mod solver;
pub mod stream;
