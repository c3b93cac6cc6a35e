//! Prequal's replica selection (Wydrowski, Kleinberg, Rumble, Archer: "Load is not what you
//! should balance: Introducing Prequal", NSDI 2024): choose by requests in flight (RIF) and
//! latency together, not by load alone. Probes report each replica's RIF and its latency
//! estimate; the hot-cold lexicographic rule (HCL) calls a probe *hot* when its RIF exceeds
//! the `q_rif`-quantile of the RIFs in the pool, picks the cold probe of least latency, and
//! only when every probe is hot the one of least RIF. Ties go to the earlier probe.
//!
//! The paper's defaults are reconstructed here as documented options: a quantile of 0.84
//! (hotter than about five probes in six), and probes drawn two at a time.

/// The RIF quantile above which a probe is hot.
pub const DEFAULT_Q_RIF: f64 = 0.84;

/// What a probe of one replica reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// Requests in flight at the replica.
    pub rif: f64,
    /// The replica's latency estimate (any unit; lower is better).
    pub latency: f64,
}

/// The RIF threshold of a pool: its `q_rif`-quantile (nearest rank, the smallest RIF with at
/// least that fraction of the pool at or below it). A probe is hot when its RIF is above it.
pub fn threshold(pool: &[Probe], q_rif: f64) -> f64 {
    let mut rifs: Vec<f64> = pool.iter().map(|p| p.rif).collect();
    rifs.sort_by(f64::total_cmp);
    let rank = ((q_rif * rifs.len() as f64).ceil() as usize).clamp(1, rifs.len().max(1));
    rifs.get(rank - 1).copied().unwrap_or(0.0)
}

/// The probes of `pool` in the order HCL prefers them: cold ones by latency, then hot ones by
/// RIF (then latency). The first is Prequal's choice.
pub fn order(pool: &[Probe], q_rif: f64) -> Vec<usize> {
    let t = threshold(pool, q_rif);
    let mut idx: Vec<usize> = (0..pool.len()).collect();
    idx.sort_by(|&a, &b| {
        let (pa, pb) = (pool[a], pool[b]);
        let (ha, hb) = (pa.rif > t, pb.rif > t);
        ha.cmp(&hb)
            .then_with(|| {
                if ha {
                    pa.rif
                        .total_cmp(&pb.rif)
                        .then(pa.latency.total_cmp(&pb.latency))
                } else {
                    pa.latency.total_cmp(&pb.latency)
                }
            })
            .then(a.cmp(&b))
    });
    idx
}

/// Prequal's choice among `pool` (None for an empty pool).
pub fn choose(pool: &[Probe], q_rif: f64) -> Option<usize> {
    order(pool, q_rif).first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rif: f64, latency: f64) -> Probe {
        Probe { rif, latency }
    }

    /// The cold replica of least latency wins, even against a hot one that is faster; least
    /// RIF decides only when all are hot.
    #[test]
    fn hot_cold_lexicographic() {
        // RIFs 1, 2, 3, 10 (q = 0.75: threshold 3): replica 3 is hot though fastest.
        let pool = [p(1.0, 50.0), p(2.0, 20.0), p(3.0, 30.0), p(10.0, 5.0)];
        assert_eq!(threshold(&pool, 0.75), 3.0);
        assert_eq!(order(&pool, 0.75), [1, 2, 0, 3]);
        // q = 1: nothing is above the largest RIF, so all are cold: least latency.
        assert_eq!(choose(&pool, 1.0), Some(3));
        // All alike in RIF: all cold, by latency.
        assert_eq!(choose(&[p(4.0, 9.0), p(4.0, 3.0)], 0.5), Some(1));
        assert_eq!(choose(&[], 0.84), None);
    }

    /// Against least-loaded (power of d choices on RIF alone), HCL avoids a replica that is
    /// lightly loaded but slow: the case Prequal's paper makes.
    #[test]
    fn a_slow_idle_replica_is_not_chosen() {
        // Seven probes: the 0.84-quantile is the sixth RIF (7), so only RIF 20 is hot.
        let pool = [
            p(0.0, 400.0),
            p(3.0, 10.0),
            p(4.0, 12.0),
            p(5.0, 15.0),
            p(6.0, 11.0),
            p(7.0, 13.0),
            p(20.0, 8.0),
        ];
        assert_eq!(threshold(&pool, DEFAULT_Q_RIF), 7.0);
        let least_loaded = (0..pool.len())
            .min_by(|&a, &b| pool[a].rif.total_cmp(&pool[b].rif))
            .unwrap();
        assert_eq!(least_loaded, 0);
        assert_eq!(choose(&pool, DEFAULT_Q_RIF), Some(1));
    }
}
