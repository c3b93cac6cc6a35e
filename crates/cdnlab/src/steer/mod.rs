//! Steering video sessions by what their players experience.
//!
//! - [`cmcd`]: CTA-5004 Common Media Client Data, the report a player sends with every request
//!   (buffer, measured throughput, bitrate, starvation), parsed and checked.
//! - [`tally`]: one pathway's sessions aggregated from their reports (starvation rate,
//!   throughput and bitrate spread), one vote per session and bounded in memory.
//!
//! The Transportation Problem's own rule for spreading a population's sessions over its
//! servers is [`crate::alloc::steering`] (TP-R8).

pub mod cmcd;
pub mod player;
pub mod policy;
pub mod tally;
