//! Workloads: what is requested, how often, and when.
//!
//! - [`popularity`]: Zipf (any exponent alpha >= 0; alpha = 0 is uniform) and uniform laws, with an
//!   O(1) alias sampler and the exact probabilities (for analytical models such as Che's).
//! - [`arrivals`]: exponential gaps (Poisson arrivals), one uniform draw each.
//! - [`trace`]: requests read from libCacheSim `oracleGeneral` binary traces or CSV files, and
//!   the registry of trace formats ([`trace::Format`]).
//! - [`analysis`]: a trace's characterisation in one pass (objects, one-hit wonders, sizes, Zipf
//!   fit, reuse).

pub mod analysis;
pub mod arrivals;
pub mod popularity;
pub mod trace;

/// One request: which object, how large, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Timestamp in the trace's own unit (seconds in oracleGeneral).
    pub time: u64,
    /// Object id.
    pub id: u64,
    /// Object size in bytes (1 for unit-size workloads).
    pub size: u32,
    /// Time to live from the trace, in its time unit (twr's field, a CSV column); 0: none.
    /// (It sits in the padding after `size`: a request stays 32 bytes.)
    pub ttl: u32,
    /// Index of the next request for the same object, or -1 if there is none.
    pub next_access: i64,
}

impl Request {
    /// A request whose next access is not known yet ([`trace::fill_next_access`] sets it).
    pub fn new(time: u64, id: u64, size: u32) -> Self {
        Request {
            time,
            id,
            size,
            ttl: 0,
            next_access: -1,
        }
    }
}
