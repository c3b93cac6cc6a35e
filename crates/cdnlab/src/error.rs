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
    Trace(#[from] TraceError),
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

/// Why a trace cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TraceError {
    #[error("empty trace: no requests in it")]
    Empty,
    #[error(
        "truncated {format} trace: {bytes} bytes is not a multiple of the {record}-byte record \
         ({records} whole records, then {trailing} stray bytes)"
    )]
    Truncated {
        format: &'static str,
        record: u64,
        bytes: u64,
        records: u64,
        trailing: u64,
    },
    #[error(
        "corrupt {format} record {record} (byte offset {offset}): {field} = {value} \
         ({allowed})"
    )]
    Corrupt {
        format: &'static str,
        record: usize,
        offset: usize,
        field: &'static str,
        value: String,
        allowed: &'static str,
    },
    #[error("CSV line {line}: {message}")]
    Csv { line: u64, message: String },
}

/// Why a topology file is refused: the problem, and the line it was found on when the reader
/// knows it (the caller adds the file's name).
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{}{problem}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct TopologyError {
    pub line: Option<u64>,
    pub problem: Problem,
}

impl TopologyError {
    /// A problem found on `line`.
    pub fn at(line: u64, problem: Problem) -> Self {
        TopologyError {
            line: Some(line),
            problem,
        }
    }

    /// A problem of the whole file.
    pub fn whole(problem: Problem) -> Self {
        TopologyError {
            line: None,
            problem,
        }
    }
}

/// What is wrong with a topology file.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Problem {
    /// The file is not in the format it is read as.
    #[error("{0}")]
    Syntax(String),
    #[error(
        "node {node} has no coordinates (every node needs a position: lengths, delays and \
             plots come from it; --drop-uncoordinated drops such nodes and their links, as the \
             Topology Zoo gives none for its external nodes)"
    )]
    NoCoordinates { node: String },
    #[error("{what} names node {node}, which the file does not declare")]
    Dangling { what: String, node: String },
    #[error("{what} {id} declared twice (first on line {first_line})")]
    Duplicate {
        what: &'static str,
        id: String,
        first_line: u64,
    },
    #[error("{field} = {value} ({allowed})")]
    Value {
        field: String,
        value: String,
        allowed: String,
    },
    #[error("no nodes: the file declares none (or none with coordinates)")]
    Empty,
    #[error("{0}")]
    Io(String),
}
