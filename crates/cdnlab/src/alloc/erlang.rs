//! Erlang-B: the blocking probability of an Erlang loss system (Poisson arrivals, any holding
//! time distribution) with `servers` circuits offered `load` Erlangs.
//!
//! Rules: TP-R7 of docs/spec/transport.md.

/// E(A, 0) = 1, E(A, k) = A E(A, k - 1) / (k + A E(A, k - 1)): numerically stable for any k.
pub fn erlang_b(load: f64, servers: u64) -> f64 {
    let mut b = 1.0;
    for k in 1..=servers {
        b = load * b / (k as f64 + load * b);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // E(1, 1) = 0.5, E(2, 2) = 0.4, E(10, 10) = 0.21458 (tables); E(90, 100) = 0.026957 from
        // the closed form (A^N / N!) / sum (A^k / k!) in log space.
        assert_eq!(erlang_b(1.0, 1), 0.5);
        assert!((erlang_b(2.0, 2) - 0.4).abs() < 1e-12);
        assert!((erlang_b(10.0, 10) - 0.214_582).abs() < 1e-6);
        assert!((erlang_b(90.0, 100) - 0.026_957_38).abs() < 1e-8);
        assert_eq!(erlang_b(5.0, 0), 1.0);
        assert_eq!(erlang_b(0.0, 3), 0.0);
    }
}
