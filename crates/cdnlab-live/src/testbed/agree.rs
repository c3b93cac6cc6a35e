//! Emulation against simulation: the claims of kind "emulation" (docs/testbed.md#agreement).
//! Each experiment runs in the testbed and in the simulator with the same parameters and
//! states, per case, whether the two agree within a tolerance written before the run.

use serde::{Deserialize, Serialize};

/// One case of one claim.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Agreement {
    /// The experiment kind (`gwtw-video`, ...).
    pub experiment: String,
    /// The claim's id (`EMU-GWTW-1`, ...; docs/testbed.md#agreement).
    pub claim: String,
    /// Which case of it (`k=2`, a user, ...).
    pub case: String,
    /// What the emulated run measured.
    pub emulated: String,
    /// What the simulator predicts for it, as the tolerance applies to it.
    pub simulated: String,
    /// The tolerance, as written before the run.
    pub tolerance: String,
    pub agree: bool,
}

/// The verdict of a set of cases: every case agrees.
pub fn all_agree(rows: &[Agreement]) -> bool {
    rows.iter().all(|r| r.agree)
}
