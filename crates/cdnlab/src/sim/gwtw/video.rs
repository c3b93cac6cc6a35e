//! The video service: server s has bandwidth B_s; the l streams it carries in a slot share it
//! equally, each getting min(r_max, B_s / l), optionally rounded down to a bit-rate ladder.
//!
//! Rules: GWTW-R7 of docs/spec/gwtw.md.

use super::{Latency, Population, Service, SlotLoad};
use crate::rng::Rng;
use crate::select::window::ValueWindow;
use rand::RngExt;

/// Rungs of the ladder: r_max / 2^i for i below this.
pub const LADDER_RUNGS: i32 = 5;

/// Video service state.
pub struct Video {
    bandwidth: Vec<f64>,
    r_max: f64,
    ladder: bool,
    order: Vec<u32>,
    /// Every user's targets this slot, and where each user's start.
    targets: Vec<u32>,
    start: Vec<u32>,
    pub(super) streams: SlotLoad,
}

impl Video {
    /// Servers of the given bandwidths.
    pub fn new(bandwidth: Vec<f64>, r_max: f64, ladder: bool) -> Self {
        let n = bandwidth.len();
        Video {
            bandwidth: bandwidth.clone(),
            r_max,
            ladder,
            order: Vec::new(),
            targets: Vec::new(),
            start: Vec::new(),
            streams: SlotLoad::new(n, Latency::Share { bandwidth, r_max }),
        }
    }

    /// The rate of one stream among `l` on a server of bandwidth `b`.
    pub fn rate(&self, b: f64, l: u64) -> f64 {
        let share = (b / l as f64).min(self.r_max);
        if !self.ladder {
            return share;
        }
        (0..LADDER_RUNGS)
            .map(|i| self.r_max / f64::from(1 << i))
            .find(|&rung| rung <= share + 1e-12)
            .unwrap_or(0.0)
    }
}

impl Service<ValueWindow> for Video {
    fn best(&self) -> f64 {
        self.r_max
    }

    fn slot(
        &mut self,
        pop: &mut Population<ValueWindow>,
        rng: &mut Rng,
        served: &mut [f64],
    ) -> u64 {
        let m = pop.clients.len();
        if self.order.len() != m {
            self.order = (0..m as u32).collect();
            self.start = vec![0; m + 1];
        }
        // Random order, so per-request balancers see users in no fixed sequence.
        for i in (1..m).rev() {
            let j = rng.random_range(0..=i);
            self.order.swap(i, j);
        }
        self.streams.requests.fill(0);
        self.targets.clear();
        for idx in 0..m {
            let u = self.order[idx] as usize;
            let from = self.targets.len();
            self.start[u] = from as u32;
            pop.targets(u, &self.streams, rng, &mut self.targets);
            for &s in &self.targets[from..] {
                self.streams.requests[s as usize] += 1;
            }
        }
        for idx in 0..m {
            let u = self.order[idx] as usize;
            let from = self.start[u] as usize;
            let to = if idx + 1 < m {
                self.start[self.order[idx + 1] as usize] as usize
            } else {
                self.targets.len()
            };
            let mut best = 0.0f64;
            for i in from..to {
                let s = self.targets[i] as usize;
                let rate = self.rate(self.bandwidth[s], self.streams.requests[s]);
                best = best.max(rate);
                pop.observe(u, s as u32, None, Some(rate), rng);
            }
            served[u] = best;
        }
        self.targets.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_shares_capped_and_laddered() {
        let v = Video::new(vec![2.0], 1.0, false);
        assert_eq!(v.rate(2.0, 1), 1.0);
        assert_eq!(v.rate(2.0, 2), 1.0);
        assert!((v.rate(2.0, 3) - 2.0 / 3.0).abs() < 1e-12);
        let l = Video::new(vec![2.0], 1.0, true);
        assert_eq!(l.rate(2.0, 3), 0.5);
        assert_eq!(l.rate(2.0, 5), 0.25);
        assert_eq!(l.rate(2.0, 100), 0.0);
    }
}
