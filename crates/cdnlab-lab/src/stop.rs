//! A request to stop long work early, for hosts that can interrupt a call (the Python package
//! turns Ctrl-C into one). The replay checks it between chunks of the trace and the sweeps
//! between cells; what finished is kept (cells are written whole), and the call returns
//! [`Error::Interrupted`]. The command line never sets it: there Ctrl-C ends the process.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks the work in progress to stop.
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}

/// Clears a request (before new work starts).
pub fn clear() {
    STOP.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// An error if a stop was requested.
pub fn check() -> Result<()> {
    if requested() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
