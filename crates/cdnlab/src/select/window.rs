//! A sliding window of the last `tau` outcomes with its mean.

/// The last `tau` values. Values are stored as f32 (hits are 0/1, bit rates need no more), and
/// the sum is recomputed from the values every `tau` pushes so rounding cannot drift.
#[derive(Debug, Clone)]
pub struct Window {
    vals: Box<[f32]>,
    next: usize,
    len: usize,
    sum: f64,
    since_exact: usize,
}

impl Window {
    /// An empty window of `tau >= 1` values.
    pub fn new(tau: usize) -> Self {
        assert!(tau >= 1, "window length must be at least 1");
        Window {
            vals: vec![0.0; tau].into_boxed_slice(),
            next: 0,
            len: 0,
            sum: 0.0,
            since_exact: 0,
        }
    }

    /// Adds a value, dropping the oldest when full.
    #[inline]
    pub fn push(&mut self, v: f64) {
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

    /// Whether it holds `tau` values.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.vals.len()
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Mean of the values held (NaN when empty).
    #[inline]
    pub fn mean(&self) -> f64 {
        self.sum / self.len as f64
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
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
        let mut w = Window::new(3);
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

    #[test]
    fn no_drift_over_long_runs() {
        let mut w = Window::new(7);
        for i in 0..100_000 {
            w.push(if i % 3 == 0 { 2.0 / 3.0 } else { 0.1 });
        }
        for _ in 0..7 {
            w.push(1.0);
        }
        assert_eq!(w.mean(), 1.0);
    }
}
