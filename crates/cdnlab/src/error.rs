//! The library's error type. Messages name the thing that is wrong, the bad value and what is
//! allowed, so the binary can print them as they are.

/// Everything the library can refuse.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Error {
    /// A parameter is outside its allowed range or of the wrong kind.
    #[error("parameter `{name}`: {value} is not allowed ({allowed})")]
    Param {
        name: String,
        value: String,
        allowed: String,
    },
    /// A name (policy, experiment, format) that no registry knows.
    #[error("unknown {what} `{name}` (allowed: {allowed})")]
    Unknown {
        what: &'static str,
        name: String,
        allowed: String,
    },
    /// A trace that cannot be read.
    #[error("{0}")]
    Trace(#[from] crate::workload::trace::TraceError),
}

impl Error {
    /// Shorthand for a [`Error::Param`].
    pub fn param(name: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Error::Param {
            name: name.to_string(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}
