//! Optimal server allocation for streaming (spec `shared/spec/transport.md`; as implemented:
//! `docs/transport.md`): the Transportation Problem that assigns server capacity to user
//! populations, and the queueing formula it is checked against.
//!
//! | part | file | what it holds |
//! |---|---|---|
//! | instances | `problem.rs` | supplies, demands, costs; validation; balancing (scale or dummy) |
//! | exact solver | `simplex.rs` | network simplex: integral optimal flows, potentials, deterministic pivots |
//! | initial solutions | `initial.rs` | NW-corner and Vogel, usable as stand-alone (sub-optimal) allocations |
//! | queueing | `erlang.rs` | Erlang-B blocking |

pub mod erlang;
pub mod initial;
pub mod problem;
pub mod simplex;

pub use problem::{Allocation, Problem};
