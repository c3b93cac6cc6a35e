//! A client that always uses one server: the k = 1 baseline (a random server kept forever) and
//! the oracle (the server an optimal assignment gives it).

use super::{Event, Load, Selector};
use crate::rng::Rng;

/// Always `server`.
#[derive(Debug, Clone, Copy)]
pub struct Fixed {
    pub server: u32,
}

impl Selector for Fixed {
    fn targets(&mut self, _load: &dyn Load, _rng: &mut Rng, out: &mut Vec<u32>) {
        out.push(self.server);
    }
    fn observe(&mut self, _server: u32, _value: Option<f64>, _rng: &mut Rng) -> Event {
        Event::None
    }
    fn settled(&self) -> Option<u32> {
        Some(self.server)
    }
}
