//! A `BufRead` that counts the lines it has handed out, so a streaming reader can say where it
//! found a problem.

use std::io::{BufRead, Read, Result};

/// Wraps a reader; [`Lines::line`] is the 1-based line of the next byte to be read.
pub(crate) struct Lines<R> {
    inner: R,
    newlines: u64,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(inner: R) -> Self {
        Lines { inner, newlines: 0 }
    }

    /// The line the next byte is on.
    pub(crate) fn line(&self) -> u64 {
        self.newlines + 1
    }
}

impl<R: BufRead> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.inner.read(buf)?;
        self.newlines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Lines<R> {
    fn fill_buf(&mut self) -> Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            let amt = amt.min(buf.len());
            self.newlines += buf[..amt].iter().filter(|&&b| b == b'\n').count() as u64;
        }
        self.inner.consume(amt);
    }
}
