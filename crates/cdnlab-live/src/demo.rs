//! The loopback demo (to come in the next step).
