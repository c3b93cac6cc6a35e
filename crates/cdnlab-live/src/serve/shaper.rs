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
    state: Mutex<(f64, Instant)>,
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
            state: Mutex::new((burst as f64, Instant::now())),
        })
    }

    /// How long the caller must wait before sending `n` bytes (reserving them now).
    pub fn reserve(&self, n: u64) -> Duration {
        let mut s = self.state.lock().expect("bucket lock");
        let now = Instant::now();
        let (tokens, last) = *s;
        let tokens = (tokens + now.duration_since(last).as_secs_f64() * self.rate).min(self.burst)
            - n as f64;
        *s = (tokens, now);
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
}
