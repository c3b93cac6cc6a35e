//! Optimal server allocation for streaming (spec `docs/spec/transport.md`; as implemented:
//! `docs/transport.md`): the Transportation Problem that assigns server capacity to user
//! populations, and the queueing formula it is checked against. "Allocation" here is the
//! paper's word: capacity allocated to populations, not memory allocation.
//!
//! | part | file | what it holds |
//! |---|---|---|
//! | instances | `problem.rs` | supplies, demands, costs; validation; balancing (scale or dummy); sparse allocations; random instances |
//! | exact solver | `simplex.rs` | network simplex: integral optimal flows, potentials, deterministic pivots, warm starts (dual phase) |
//! | cost scans | `scan.rs` | the solver's vectorised row scans: pricing, arcs of a given reduced cost (AVX2 when present) |
//! | reference | `lp.rs` | the same problem as a plain LP for a general solver (good_lp + microlp) |
//! | reference | `lemon.rs` | the same problem as a min-cost flow for LEMON's network simplex (mcmf) |
//! | initial solutions | `initial.rs` | NW-corner and Vogel, usable as stand-alone (sub-optimal) allocations |
//! | queueing | `erlang.rs` | Erlang-B blocking |
//! | topology | `topology.rs` | metros, links, hop costs; the reference instance (R1, R15, the shift) and random instances |
//! | admission | `admission.rs` | thresholds from an allocation method, CP-1 / CP-2 with slack sharing, the re-allocation rule |
//! | steering | `steering.rs` | a population's sessions spread over its servers as the allocation's shares say |

pub mod admission;
pub mod erlang;
pub mod initial;
pub mod lemon;
pub mod lp;
pub mod problem;
mod scan;
pub mod simplex;
pub mod steering;
pub mod topology;

pub use problem::{Allocation, Problem};
