//! Writing files safely: the one place where the library writes to the file system (the
//! command line's `-o FILE`, the TUI's exports and saved presets). The engine's solves never
//! come here.
//!
//! A file is never written in place: the text goes to a new temporary file in the target's
//! folder (created exclusively under a name nobody can predict, so a planted link is refused,
//! not followed), is synced to disk, and only then takes the target's name, so a reader sees
//! the old file or the new one, never half of one. The temporary file is removed on every
//! error; one left by a killed write is removed later ([`remove_stale_temp_files`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a write does when a file of the target's name exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replace it (atomically: a rename over it).
    Replace,
    /// Keep it and write nothing ([`write_atomic_with`] answers `Ok(false)`).
    Keep,
}

/// Writes `text` to `path` atomically, replacing a file of that name. Returns `path`;
/// errors start with it.
pub fn write_atomic(path: &Path, text: &str) -> Result<PathBuf, String> {
    write_atomic_with(path, text, Existing::Replace)?;
    Ok(path.to_path_buf())
}

/// Writes `text` to `path` atomically; with [`Existing::Keep`] an existing file (or link) of
/// that name is left alone and the answer is `Ok(false)`. `Ok(true)` when written; errors
/// start with `path`.
pub fn write_atomic_with(path: &Path, text: &str, existing: Existing) -> Result<bool, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    if existing == Existing::Keep && fs::symlink_metadata(path).is_ok() {
        return Ok(false);
    }
    let tmp = dir.join(temp_name(&name));
    let write = || -> std::io::Result<bool> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        match existing {
            Existing::Replace => fs::rename(&tmp, path).map(|()| true),
            // A hard link fails rather than replace; where the file system has none, an
            // atomic rename onto the name just checked free.
            Existing::Keep => match fs::hard_link(&tmp, path) {
                Ok(()) => fs::remove_file(&tmp).map(|()| true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    fs::remove_file(&tmp).map(|()| false)
                }
                Err(_) => fs::rename(&tmp, path).map(|()| true),
            },
        }
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        fail(e)
    })
}

/// A temporary file name nobody can predict (std's randomly keyed hasher over the time, the
/// process and a counter), so that no link can be planted for it in advance.
fn temp_name(file_name: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!(".{file_name}.{:016x}.tmp", h.finish())
}

/// How old a temporary file must be to count as left behind: a write takes milliseconds, so
/// one this old belongs to a write that was killed (SIGKILL, a power cut).
const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether `name` is one of [`temp_name`]'s names: `.NAME.<16 hex digits>.tmp`.
fn is_temp_name(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    match inner.rsplit_once('.') {
        Some((file, hex)) => {
            !file.is_empty() && hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit())
        }
        None => false,
    }
}

/// Removes from `dir` the temporary files of writes that never finished (a write killed
/// between writing its temporary file and giving it the target's name): files named as
/// [`write_atomic_with`] names them and older than a minute (a younger one may be another
/// instance's write in flight). Returns how many were removed; a folder that cannot
/// be read removes none.
pub fn remove_stale_temp_files(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or_default();
        let plain = meta.file_type().is_file() || meta.file_type().is_symlink();
        if is_temp_name(&name)
            && plain
            && age >= STALE_TEMP_AGE
            && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn fresh(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pipescope-files-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn replace_writes_over_and_keep_leaves_the_old_file() {
        let dir = fresh("modes");
        let path = dir.join("a.txt");
        assert_eq!(write_atomic(&path, "one").unwrap(), path);
        write_atomic(&path, "two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert!(!write_atomic_with(&path, "three", Existing::Keep).unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert!(write_atomic_with(&dir.join("b.txt"), "b", Existing::Keep).unwrap());
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = fresh("fail");
        // The target is a folder: the rename fails after the temporary file was written.
        let target = dir.join("taken");
        fs::create_dir_all(target.join("inside")).unwrap();
        let err = write_atomic(&target, "text").unwrap_err();
        assert!(err.starts_with(&target.display().to_string()), "{err}");
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["taken"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Links planted under predictable temporary names (the process id and a counter, as
    /// an earlier copy of this function used) neither stop a write nor are followed.
    #[cfg(unix)]
    #[test]
    fn planted_links_are_neither_followed_nor_a_stop() {
        let dir = fresh("links");
        let outside = dir.join("outside.txt");
        fs::write(&outside, "precious").unwrap();
        let out = dir.join("out");
        fs::create_dir_all(&out).unwrap();
        for attempt in 0..=100 {
            let name = format!(".a.txt.{}.{attempt}.tmp", std::process::id());
            std::os::unix::fs::symlink(&outside, out.join(name)).unwrap();
        }
        write_atomic(&out.join("a.txt"), "new").unwrap();
        assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "new");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "precious");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names_differ() {
        assert_ne!(temp_name("a.toml"), temp_name("a.toml"));
    }

    #[test]
    fn stale_temp_files_of_killed_writes_are_removed_and_fresh_ones_kept() {
        let dir = fresh("stale");
        let old = dir.join(temp_name("my-a.toml"));
        let fresh_tmp = dir.join(temp_name("my-b.toml"));
        let preset = dir.join("my-a.toml");
        let other = dir.join(".notes.tmp");
        for f in [&old, &fresh_tmp, &preset, &other] {
            fs::write(f, "x").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - 2 * STALE_TEMP_AGE;
        for f in [&old, &preset, &other] {
            fs::File::options()
                .write(true)
                .open(f)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        assert_eq!(remove_stale_temp_files(&dir), 1);
        assert!(!old.exists());
        assert!(fresh_tmp.exists() && preset.exists() && other.exists());
        assert_eq!(remove_stale_temp_files(&dir.join("missing")), 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names_are_recognised_and_nothing_else() {
        assert!(is_temp_name(&temp_name("a.toml")));
        for name in [
            ".notes.tmp",
            "a.toml",
            ".a.toml.xyz.tmp",
            "..0123456789abcdef.tmp",
        ] {
            assert!(!is_temp_name(name), "{name}");
        }
    }
}
