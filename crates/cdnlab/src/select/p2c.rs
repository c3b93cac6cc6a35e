//! Per-request power of two choices on least load: each request goes to the less loaded of two
//! distinct random servers (ties to the first drawn), as Envoy's LEAST_REQUEST and NGINX's
//! `random two least_conn` do. It balances load but has no affinity: a user's objects spread over
//! every server.

use super::{Event, Load, Selector};
use crate::rng::Rng;
use rand::RngExt;

/// Power of two choices over servers `0..n` (n >= 2).
#[derive(Debug, Clone, Copy)]
pub struct P2c {
    pub n: u32,
}

impl Selector for P2c {
    fn targets(&mut self, load: &dyn Load, rng: &mut Rng, out: &mut Vec<u32>) {
        let a = rng.random_range(0..self.n);
        let mut b = rng.random_range(0..self.n - 1);
        if b >= a {
            b += 1;
        }
        out.push(if load.load(b) < load.load(a) { b } else { a });
    }
    fn observe(&mut self, _server: u32, _value: Option<f64>, _rng: &mut Rng) -> Event {
        Event::None
    }
    fn settled(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Loads(Vec<u64>);
    impl Load for Loads {
        fn load(&self, s: u32) -> u64 {
            self.0[s as usize]
        }
    }

    /// Sending n requests to n servers one by one, updating loads, keeps the maximum load at
    /// O(log log n) (here <= 4 for n = 10^4; one random choice gives about 7).
    #[test]
    fn balances_like_two_choices() {
        let n = 10_000;
        let mut loads = Loads(vec![0; n]);
        let mut p = P2c { n: n as u32 };
        let mut rng = crate::rng::stream(5, 0, 0);
        let mut out = Vec::new();
        for _ in 0..n {
            out.clear();
            p.targets(&loads, &mut rng, &mut out);
            loads.0[out[0] as usize] += 1;
        }
        assert!(
            *loads.0.iter().max().unwrap() <= 4,
            "{:?}",
            loads.0.iter().max()
        );
    }
}
