//! Client-side server selection: where does a user's next request go?
//!
//! A [`Selector`] is fed outcomes (server, value) and says where the next request goes. It knows
//! nothing of the simulator, so the live HTTP client drives the same state machines. The metric
//! a selector compares (hit rate, bit rate) is just the value it is fed; what the "best" value is
//! comes with its configuration.
//!
//! | selector | file | what it does |
//! |---|---|---|
//! | [`gwtw::Gwtw`] | `gwtw.rs` | Go-With-The-Winner: k candidates, windows of tau outcomes, settle on the winner |
//! | [`fixed::Fixed`] | `fixed.rs` | always one server: k = 1 random, or an oracle's assignment |
//! | [`p2c::P2c`] | `p2c.rs` | per request, the less loaded of two random servers (Envoy LEAST_REQUEST, NGINX `random two least_conn`) |
//! | [`prequal::Prequal`] | `prequal.rs` | per request, Prequal's hot-cold rule over a pool of probes: requests in flight and latency together (NSDI'24) |
//!
//! [`window::Window`] holds the last tau outcomes; [`matching`] finds an assignment of users to
//! candidate servers within capacities (the optimum, when one exists).

pub mod analysis;
pub mod fixed;
pub mod gwtw;
pub mod matching;
pub mod p2c;
pub mod prequal;
pub mod window;

use crate::rng::Rng;

crate::registry! {
    /// What a client measures of a server, and so what "best" means (GWTW-R6, GWTW-R7): the cache
    /// hit rate (web) or the delivered bit rate (video). One registry for the simulator's `model`
    /// parameter, the live users' `--model` and the Python package.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Service: "service model" {
        Web => "web": "hit rate: a request's value is 1 on a cache hit, 0 on a miss",
        Video => "video": "bit rate: a stream's value is the rate it is delivered at",
    }
}

/// How loaded each server is now, for selectors that balance load per request.
pub trait Load {
    /// The load of `server` (e.g. requests sent to it in the current slot, or in flight).
    fn load(&self, server: u32) -> u64;
    /// What a probe of `server` reports as its latency (any unit, lower is better), for
    /// Prequal; by default the load itself.
    fn latency(&self, server: u32) -> f64 {
        self.load(server) as f64
    }
}

/// No load information (for selectors that do not use it).
pub struct NoLoad;

impl Load for NoLoad {
    fn load(&self, _server: u32) -> u64 {
        0
    }
}

/// What an observation changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Nothing changed.
    None,
    /// The client settled on this server (ending a trial).
    Settled(u32),
    /// The client left this server to measure its candidates again.
    Retrial(u32),
    /// The client left the first server for the second without a trial
    /// ([`gwtw::Retrial::Move`]).
    Moved(u32, u32),
}

/// A client's server selection.
pub trait Selector {
    /// Appends to `out` the servers the next request goes to: one, or several while probing.
    fn targets(&mut self, load: &dyn Load, rng: &mut Rng, out: &mut Vec<u32>);
    /// Feeds the outcome of a request to `server`: `Some(value)` (hit = 1, miss = 0, or a bit
    /// rate), or `None` for an outcome that must not count (a compulsory warm-up miss).
    fn observe(&mut self, server: u32, value: Option<f64>, rng: &mut Rng) -> Event;
    /// The server the client is settled on, if any.
    fn settled(&self) -> Option<u32>;
}
