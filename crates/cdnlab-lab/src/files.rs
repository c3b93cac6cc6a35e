//! Writing results: every file is written whole to a temporary name in the same folder and then
//! renamed over the target, so an interrupted run never leaves a half-written file.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Creates `dir` (and parents), with a clear error if it cannot be made or written to.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let probe = dir.join(".cdnlab-write-test");
    std::fs::write(&probe, b"")
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|e| Error::file(dir, format!("output folder is not writable: {e}")))
}

/// Removes the temporaries of [`write_atomic`] that a killed run left in `dir` (its finished
/// files are whole; these never are).
pub fn remove_stale_temporaries(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| n.starts_with('.') && n.ends_with(".tmp")) {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = match dir {
        Some(d) => d.join(format!(".{name}.{}.tmp", std::process::id())),
        None => format!(".{name}.{}.tmp", std::process::id()).into(),
    };
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Reads a whole file, naming it in the error.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Reads a whole UTF-8 file.
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read(path)?).map_err(|e| Error::file(path, format!("not UTF-8 text: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        std::fs::write(d.path().join(".a.csv.99.tmp"), b"half").unwrap();
        remove_stale_temporaries(d.path()).unwrap();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        let e = write_atomic(&d.path().join("missing/x"), b"").unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }
}
