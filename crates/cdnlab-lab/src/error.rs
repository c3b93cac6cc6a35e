//! The lab's error: one message naming the file, the place in it, the bad value and what is
//! allowed. The command prints it and exits non-zero; the Python package raises it as an
//! exception; nothing panics on user input.

use std::path::{Path, PathBuf};

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
