//! The functions of the exports that touch the file system: writing a file atomically for
//! the command line (`-o FILE`, which replaces the file the user named), and writing a new
//! file that never replaces one for the TUI (`e`).

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `text` to `path` atomically: a new temporary file in the same folder (created
/// exclusively), then renamed over `path`. Returns `path`; errors start with it.
pub fn write_atomic(path: &Path, text: &str) -> Result<PathBuf, String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    };
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(path.to_path_buf())
}

/// Writes `text` to `path` only if nothing is there: a temporary file in the same folder
/// (created exclusively), then hard-linked to `path`, which fails rather than replace a file
/// (where the file system has no hard links, an atomic rename onto the name just checked
/// free). Returns `Ok(true)` when written, `Ok(false)` when `path` exists; errors start
/// with the path.
pub fn write_new(path: &Path, text: &str) -> Result<bool, String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(false);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.{}.{attempt}.new.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    };
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(_) => std::fs::rename(&tmp, path).map(|()| true),
        });
    let _ = std::fs::remove_file(&tmp);
    written.map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn write_new_never_replaces_a_file() {
        let dir = std::env::temp_dir().join(format!("pipescope-write-new-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.svg");
        assert!(write_new(&path, "first").unwrap());
        assert!(!write_new(&path, "second").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
