//! Sliding windows of the last `tau` outcomes, with their mean. The window type is the metric a
//! GWTW client compares: [`HitWindow`] for hit rates (one bit an outcome), [`ValueWindow`] for
//! any value such as a bit rate.
//!
//! Rules: GWTW-R2 of docs/spec/gwtw.md.

/// The last `tau` outcomes of one candidate.
pub trait Window: Clone + std::fmt::Debug {
    /// An empty window of `tau >= 1` outcomes.
    fn new(tau: usize) -> Self;
    /// Adds an outcome, dropping the oldest when full.
    fn push(&mut self, v: f64);
    /// Whether it holds `tau` outcomes.
    fn is_full(&self) -> bool;
    /// Number of outcomes held.
    fn len(&self) -> usize;
    /// Whether it holds nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Mean of the outcomes held (NaN when empty).
    fn mean(&self) -> f64;
    /// Forgets every outcome.
    fn clear(&mut self);
}

/// Hit/miss outcomes (a value >= 0.5 is a hit), one bit each. For tau <= 64 the whole window
/// is one word and byte counters, 16 bytes inline, so a client's state stays small and in cache;
/// longer windows live on the heap.
#[derive(Debug, Clone)]
pub enum HitWindow {
    Word {
        bits: u64,
        next: u8,
        len: u8,
        hits: u8,
        tau: u8,
    },
    Words(Box<HitRing>),
}

/// A window longer than one word.
#[derive(Debug, Clone)]
pub struct HitRing {
    bits: Box<[u64]>,
    next: u32,
    len: u32,
    hits: u32,
    tau: u32,
}

/// Position, fill and hit count of a ring of bits.
#[derive(Clone, Copy)]
struct Counts {
    next: u32,
    len: u32,
    hits: u32,
}

/// Puts one outcome into a ring of `tau` bits (bit i of the ring is bit i % 64 of word i / 64),
/// dropping the oldest when full: one implementation for both representations.
#[inline]
fn ring_push(bits: &mut [u64], tau: u32, c: Counts, hit: bool) -> Counts {
    let (w, b) = ((c.next / 64) as usize, c.next % 64);
    let mut c = c;
    if c.len == tau {
        c.hits -= (bits[w] >> b & 1) as u32;
    } else {
        c.len += 1;
    }
    bits[w] = (bits[w] & !(1 << b)) | (u64::from(hit) << b);
    c.hits += u32::from(hit);
    c.next = if c.next + 1 == tau { 0 } else { c.next + 1 };
    c
}

impl HitWindow {
    #[inline]
    fn counts(&self) -> (Counts, u32) {
        match self {
            HitWindow::Word {
                next,
                len,
                hits,
                tau,
                ..
            } => (
                Counts {
                    next: u32::from(*next),
                    len: u32::from(*len),
                    hits: u32::from(*hits),
                },
                u32::from(*tau),
            ),
            HitWindow::Words(r) => (
                Counts {
                    next: r.next,
                    len: r.len,
                    hits: r.hits,
                },
                r.tau,
            ),
        }
    }
}

impl Window for HitWindow {
    fn new(tau: usize) -> Self {
        assert!(
            (1..=u32::MAX as usize).contains(&tau),
            "window length out of range"
        );
        if tau <= 64 {
            HitWindow::Word {
                bits: 0,
                next: 0,
                len: 0,
                hits: 0,
                tau: tau as u8,
            }
        } else {
            HitWindow::Words(Box::new(HitRing {
                bits: vec![0; tau.div_ceil(64)].into_boxed_slice(),
                next: 0,
                len: 0,
                hits: 0,
                tau: tau as u32,
            }))
        }
    }

    #[inline]
    fn push(&mut self, v: f64) {
        let hit = v >= 0.5;
        let (c, tau) = self.counts();
        match self {
            HitWindow::Word {
                bits,
                next,
                len,
                hits,
                ..
            } => {
                // Counters below 2^8: tau <= 64 here.
                let c = ring_push(std::slice::from_mut(bits), tau, c, hit);
                (*next, *len, *hits) = (c.next as u8, c.len as u8, c.hits as u8);
            }
            HitWindow::Words(r) => {
                let c = ring_push(&mut r.bits, tau, c, hit);
                (r.next, r.len, r.hits) = (c.next, c.len, c.hits);
            }
        }
    }

    #[inline]
    fn is_full(&self) -> bool {
        let (c, tau) = self.counts();
        c.len == tau
    }

    fn len(&self) -> usize {
        self.counts().0.len as usize
    }

    #[inline]
    fn mean(&self) -> f64 {
        let c = self.counts().0;
        f64::from(c.hits) / f64::from(c.len)
    }

    fn clear(&mut self) {
        match self {
            HitWindow::Word {
                next, len, hits, ..
            } => (*next, *len, *hits) = (0, 0, 0),
            HitWindow::Words(r) => (r.next, r.len, r.hits) = (0, 0, 0),
        }
    }
}

/// The last `tau` values. Values are stored as f32 (hits are 0/1, bit rates need no more), and
/// the sum is recomputed from the values every `tau` pushes so rounding cannot drift.
#[derive(Debug, Clone)]
pub struct ValueWindow {
    vals: Box<[f32]>,
    next: usize,
    len: usize,
    sum: f64,
    since_exact: usize,
}

impl Window for ValueWindow {
    fn new(tau: usize) -> Self {
        assert!(tau >= 1, "window length must be at least 1");
        ValueWindow {
            vals: vec![0.0; tau].into_boxed_slice(),
            next: 0,
            len: 0,
            sum: 0.0,
            since_exact: 0,
        }
    }

    #[inline]
    fn push(&mut self, v: f64) {
        let v = v as f32;
        let tau = self.vals.len();
        if self.len == tau {
            self.sum -= f64::from(self.vals[self.next]);
        } else {
            self.len += 1;
        }
        self.vals[self.next] = v;
        self.sum += f64::from(v);
        self.next = if self.next + 1 == tau {
            0
        } else {
            self.next + 1
        };
        self.since_exact += 1;
        if self.since_exact == tau {
            self.since_exact = 0;
            self.sum = self.vals[..self.len].iter().map(|&x| f64::from(x)).sum();
        }
    }

    #[inline]
    fn is_full(&self) -> bool {
        self.len == self.vals.len()
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn mean(&self) -> f64 {
        self.sum / self.len as f64
    }

    fn clear(&mut self) {
        self.next = 0;
        self.len = 0;
        self.sum = 0.0;
        self.since_exact = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_tau_values() {
        keeps_last::<ValueWindow>();
        keeps_last::<HitWindow>();
    }

    fn keeps_last<W: Window>() {
        let mut w = W::new(3);
        assert!(w.is_empty() && w.mean().is_nan());
        for v in [1.0, 0.0, 1.0] {
            w.push(v);
        }
        assert!(w.is_full());
        assert!((w.mean() - 2.0 / 3.0).abs() < 1e-12);
        w.push(1.0); // drops the first 1.0
        assert!((w.mean() - 2.0 / 3.0).abs() < 1e-12);
        w.push(1.0); // drops the 0.0
        assert_eq!(w.mean(), 1.0);
        w.clear();
        assert!(w.is_empty());
    }

    proptest::proptest! {
        /// Both windows give the mean of the last tau outcomes, against a plain vector, for
        /// lengths inside one word, at its edge and beyond.
        #[test]
        fn windows_match_a_vector(tau in 1usize..140, hits in proptest::collection::vec(proptest::bool::ANY, 0..400)) {
            let (mut h, mut v) = (HitWindow::new(tau), ValueWindow::new(tau));
            let mut all = Vec::new();
            for (i, &x) in hits.iter().enumerate() {
                if i % 97 == 96 {
                    h.clear();
                    v.clear();
                    all.clear();
                }
                let x = f64::from(u8::from(x));
                h.push(x);
                v.push(x);
                all.push(x);
                let last = &all[all.len().saturating_sub(tau)..];
                let mean = last.iter().sum::<f64>() / last.len() as f64;
                proptest::prop_assert_eq!(h.len(), last.len());
                proptest::prop_assert!((h.mean() - mean).abs() < 1e-12);
                proptest::prop_assert!((v.mean() - mean).abs() < 1e-6);
                proptest::prop_assert_eq!(h.is_full(), last.len() == tau);
            }
        }
    }

    #[test]
    fn no_drift_over_long_runs() {
        let mut w = ValueWindow::new(7);
        for i in 0..100_000 {
            w.push(if i % 3 == 0 { 2.0 / 3.0 } else { 0.1 });
        }
        for _ in 0..7 {
            w.push(1.0);
        }
        assert_eq!(w.mean(), 1.0);
    }
}
