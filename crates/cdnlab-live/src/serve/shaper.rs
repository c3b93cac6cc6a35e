//! A token bucket shared by all responses of an edge: its total sending rate. A response sends
//! its body in chunks and reserves each chunk's bytes before sending it; reservations queue in
//! arrival order (the bucket goes into debt and each reserver sleeps until its debt is paid),
//! so concurrent streams share the rate about equally, as the video model's bit-rate sharing
//! assumes.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The bucket.
#[derive(Debug)]
pub struct TokenBucket {
    /// Bytes per second.
    rate: f64,
    /// Most tokens saved up.
    burst: f64,
    /// Tokens (negative: debt) and when.
    state: Mutex<Allowance>,
}

impl TokenBucket {
    /// A bucket of `rate` bytes per second that saves up at most `burst` bytes (both >= 1).
    pub fn new(rate: u64, burst: u64) -> Result<Self, cdnlab::Error> {
        if rate == 0 {
            return Err(cdnlab::Error::param(
                "bandwidth",
                0,
                "at least 1 byte per second",
            ));
        }
        if burst == 0 {
            return Err(cdnlab::Error::param("burst", 0, "at least 1 byte"));
        }
        Ok(TokenBucket {
            rate: rate as f64,
            burst: burst as f64,
            state: Mutex::new(Allowance::full(burst as f64, Instant::now())),
        })
    }

    /// How long the caller must wait before sending `n` bytes (reserving them now).
    pub fn reserve(&self, n: u64) -> Duration {
        let mut s = self.state.lock().expect("bucket lock");
        let now = Instant::now();
        let tokens = s.level(self.rate, self.burst, now) - n as f64;
        *s = Allowance { tokens, at: now };
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-tokens / self.rate)
        }
    }

    /// Waits until `n` bytes may be sent.
    pub async fn take(&self, n: u64) {
        let wait = self.reserve(n);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// A token bucket's level without a lock or a queue, for buckets kept per key in a map (per
/// client address, per population): it never goes into debt, a cost it cannot pay is refused.
#[derive(Debug, Clone, Copy)]
pub struct Allowance {
    tokens: f64,
    at: Instant,
}

impl Allowance {
    /// A full bucket of `burst` tokens.
    pub fn full(burst: f64, now: Instant) -> Self {
        Allowance {
            tokens: burst,
            at: now,
        }
    }

    /// Tokens now, refilled at `rate` per second up to `burst`.
    pub fn level(&self, rate: f64, burst: f64, now: Instant) -> f64 {
        (self.tokens + now.saturating_duration_since(self.at).as_secs_f64() * rate).min(burst)
    }

    /// Takes `cost` tokens if there are that many; false (and nothing taken) otherwise.
    pub fn try_take(&mut self, cost: f64, rate: f64, burst: f64, now: Instant) -> bool {
        let level = self.level(rate, burst, now);
        let ok = level >= cost;
        self.tokens = if ok { level - cost } else { level };
        self.at = now;
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reservations beyond the burst wait for their bytes at the rate, in order.
    #[test]
    fn debt_is_paid_at_the_rate() {
        let b = TokenBucket::new(1000, 500).unwrap();
        assert_eq!(b.reserve(500), Duration::ZERO);
        let w1 = b.reserve(1000).as_secs_f64();
        let w2 = b.reserve(1000).as_secs_f64();
        assert!((w1 - 1.0).abs() < 0.01, "{w1}");
        assert!((w2 - 2.0).abs() < 0.01, "{w2}");
        assert!(TokenBucket::new(0, 1).is_err() && TokenBucket::new(1, 0).is_err());
    }

    /// An allowance pays what it holds, refills at its rate up to its burst, never owes.
    #[test]
    fn an_allowance_refuses_what_it_cannot_pay() {
        let t0 = Instant::now();
        let mut a = Allowance::full(3.0, t0);
        assert!((0..3).all(|_| a.try_take(1.0, 2.0, 3.0, t0)));
        assert!(!a.try_take(1.0, 2.0, 3.0, t0));
        let half = t0 + Duration::from_millis(500);
        assert!(a.try_take(1.0, 2.0, 3.0, half));
        assert!(!a.try_take(1.0, 2.0, 3.0, half));
        assert_eq!(a.level(2.0, 3.0, t0 + Duration::from_secs(60)), 3.0);
    }
}
