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

/// A closed set of named choices (a registry: cache policies, size units, GWTW's probe and
/// re-trial rules): every member, its name, and what the set is called in errors.
pub trait Named: Copy + 'static {
    /// What a member is called in messages ("cache policy").
    const WHAT: &'static str;
    /// Every member, in registry order (the first is the default where there is one).
    const ALL: &'static [Self];
    /// The member's name.
    fn name(self) -> &'static str;

    /// The member called `s`, or an error naming the allowed names.
    fn parse_name(s: &str) -> Result<Self, Error> {
        Self::ALL
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::Unknown {
                what: Self::WHAT,
                name: s.into(),
                allowed: Self::ALL
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}
