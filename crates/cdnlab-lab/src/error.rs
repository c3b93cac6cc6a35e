//! The lab's error: one message naming the file, the place in it, the bad value and what is
//! allowed. The command prints it and exits non-zero; the Python package raises it as an
//! exception; nothing panics on user input.

use std::path::{Path, PathBuf};

/// How the caller names its arguments in errors: command-line flags (`--sample-size`) or Python
/// keyword arguments (`sample_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgStyle {
    #[default]
    Cli,
    Python,
}

impl ArgStyle {
    /// The argument a replay's flag stands for, in this style.
    pub fn arg(self, flag: &str) -> String {
        match (self, flag) {
            // cache-replay's singular flags are lists in Python.
            (ArgStyle::Python, "--size") => "sizes".into(),
            (ArgStyle::Python, "--policy") => "policies".into(),
            _ => self.plain(flag),
        }
    }

    /// The argument a flag stands for, in this style, where Python's keyword is the flag's
    /// name (`--max-size`: `max_size`).
    pub fn plain(self, flag: &str) -> String {
        match self {
            ArgStyle::Cli => flag.to_string(),
            ArgStyle::Python => flag.trim_start_matches("--").replace('-', "_"),
        }
    }
}

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Lib(#[from] cdnlab::Error),
    #[error("{0}")]
    Failed(String),
    /// Stopped on request ([`crate::stop`]).
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// An I/O failure on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A problem with the contents of `path`.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Error::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
