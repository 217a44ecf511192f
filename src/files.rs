//! Writing files safely: the one place where the library writes to the file system (the
//! command line's `-o FILE`, the TUI's exports and saved presets). The engine's solves never
//! come here.
//!
//! A regular file is never written in place: the text goes to a new temporary file in the
//! target's folder (created exclusively under a name nobody can predict, so a planted link is
//! refused, not followed), is synced to disk, and only then takes the target's name, so a
//! reader sees the old file or the new one, never half of one. The temporary file is removed
//! on every error; one left by a killed write is removed later ([`remove_stale_temp_files`]).
//!
//! What the user named is kept as it is: a symbolic link is followed to its target, which is
//! replaced next to itself (the link stays a link); a file that is not a regular file (a
//! terminal or other character device, a FIFO, a socket) is written straight through, as a
//! shell's `>` would, and a failed write there (no space left on `/dev/full`) is an error.

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

/// Writes `text` to `path` atomically, replacing a file of that name (through a symbolic
/// link: the link's target is replaced and the link stays; a device or FIFO is written
/// straight through). Returns `path`; errors start with it.
pub fn write_atomic(path: &Path, text: &str) -> Result<PathBuf, String> {
    write_atomic_with(path, text, Existing::Replace)?;
    Ok(path.to_path_buf())
}

/// Whether `path` names this process's standard output (`/dev/stdout`, `/dev/fd/1`,
/// `/proc/self/fd/1`): the command line writes those as it writes `-o -`, to the descriptor
/// it already holds, because reopening the name would lose an append (`>>`) and start
/// again at the file's beginning.
pub fn is_stdout_alias(path: &Path) -> bool {
    ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|alias| path == Path::new(alias))
}

/// The most symbolic links followed in a row, as the kernel's own limit (40) on Linux.
const MAX_LINKS: usize = 40;

/// Where a write goes once the links of the path the user gave are followed.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A regular file, existing or not, at this path (no link): replaced atomically.
    Regular(PathBuf),
    /// Something that is not a regular file (a character device, a FIFO, a socket, or a
    /// process's own descriptor under `/proc`): opened and written straight through.
    Stream(PathBuf),
}

/// Follows the symbolic links of `path` (a relative link is read from the link's folder) to
/// what a write must open or replace. A link under `/proc` (a process's descriptors: the
/// kernel resolves it, not its text) ends the walk as a [`Target::Stream`].
fn resolve(path: &Path) -> Result<Target, String> {
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Regular(at)),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if at.starts_with("/proc") {
                return Ok(Target::Stream(at));
            }
            let link = fs::read_link(&at).map_err(|e| format!("{}: {e}", path.display()))?;
            at = match at.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
        } else if kind.is_file() {
            return Ok(Target::Regular(at));
        } else if kind.is_dir() {
            return Err(format!("{}: is a folder, not a file", path.display()));
        } else {
            return Ok(Target::Stream(at));
        }
    }
    Err(format!(
        "{}: more than {MAX_LINKS} symbolic links in a row (a loop?)",
        path.display()
    ))
}

/// Writes `text` straight into what `path` opens (a device, a FIFO): no temporary file, no
/// rename; every failed write is the error.
fn write_through(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.flush()
}

/// Writes `text` to `path` atomically; with [`Existing::Keep`] an existing file (or link) of
/// that name is left alone and the answer is `Ok(false)`. `Ok(true)` when written; errors
/// start with `path`. A symbolic link is followed: its target is replaced (the temporary
/// file is made in the target's folder) and the link stays; a device, FIFO or socket is
/// written straight through.
pub fn write_atomic_with(path: &Path, text: &str, existing: Existing) -> Result<bool, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    if path.file_name().is_none() {
        return Err(format!("{}: not a file name", path.display()));
    }
    if existing == Existing::Keep && fs::symlink_metadata(path).is_ok() {
        return Ok(false);
    }
    let target = match resolve(path)? {
        Target::Stream(at) => return write_through(&at, text).map(|()| true).map_err(fail),
        Target::Regular(at) => at,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    // A replaced file keeps its permissions (a script stays executable).
    let old_permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    let tmp = dir.join(temp_name(&name));
    let created = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| cannot_create(path, &dir, &e))?;
    let write = || -> std::io::Result<bool> {
        let mut file = created;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Some(permissions) = old_permissions.clone() {
            fs::set_permissions(&tmp, permissions)?;
        }
        match existing {
            Existing::Replace => fs::rename(&tmp, &target).map(|()| true),
            // A hard link fails rather than replace; where the file system has none, an
            // atomic rename onto the name just checked free.
            Existing::Keep => match fs::hard_link(&tmp, &target) {
                Ok(()) => fs::remove_file(&tmp).map(|()| true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    fs::remove_file(&tmp).map(|()| false)
                }
                Err(_) => fs::rename(&tmp, &target).map(|()| true),
            },
        }
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        fail(e)
    })
}

/// The error of a write whose temporary file could not be made in `dir`: the folder is
/// missing, or takes no new files (a read-only or virtual file system such as `/proc`, no
/// permission), said as such rather than as the bare "No such file or directory".
fn cannot_create(path: &Path, dir: &Path, e: &std::io::Error) -> String {
    match fs::metadata(dir) {
        Err(_) => format!(
            "{}: cannot write it: the folder {} does not exist",
            path.display(),
            dir.display()
        ),
        Ok(meta) if !meta.is_dir() => format!(
            "{}: cannot write it: {} is not a folder",
            path.display(),
            dir.display()
        ),
        Ok(_) => format!(
            "{}: cannot write it: the folder {} takes no new files ({e}); give a path in a \
             folder you can write to",
            path.display(),
            dir.display()
        ),
    }
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

    /// A folder that takes no new files (`/proc`) or does not exist is said as such.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_unwritable_folder_is_named() {
        let e = write_atomic(Path::new("/proc/pipescope-test.json"), "x").unwrap_err();
        assert!(
            e.starts_with(
                "/proc/pipescope-test.json: cannot write it: the folder /proc takes no new files"
            ),
            "{e}"
        );
        let e = write_atomic(Path::new("/proc/version"), "x").unwrap_err();
        assert!(e.contains("the folder /proc takes no new files"), "{e}");
        let dir = fresh("missing");
        let missing = dir.join("no-such-folder").join("a.txt");
        let e = write_atomic(&missing, "x").unwrap_err();
        assert!(e.contains("no-such-folder does not exist"), "{e}");
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

    /// A symbolic link (absolute, relative, or dangling) stays a link: the write replaces
    /// its target, next to the target.
    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_its_target_is_written() {
        let dir = fresh("symlink");
        let real_dir = dir.join("real");
        fs::create_dir_all(&real_dir).unwrap();
        let real = real_dir.join("real.svg");
        fs::write(&real, "old").unwrap();
        let link = dir.join("link.svg");
        std::os::unix::fs::symlink("real/real.svg", &link).unwrap();
        write_atomic(&link, "new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        // No temporary file is left in either folder.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        assert_eq!(fs::read_dir(&real_dir).unwrap().count(), 1);
        // A link to a file not yet made makes the file and keeps the link.
        let dangling = dir.join("later.svg");
        std::os::unix::fs::symlink(real_dir.join("made.svg"), &dangling).unwrap();
        write_atomic(&dangling, "made").unwrap();
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(real_dir.join("made.svg")).unwrap(),
            "made"
        );
        // A loop of links is an error, not a hang.
        let (a, b) = (dir.join("loop-a"), dir.join("loop-b"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let err = write_atomic(&a, "x").unwrap_err();
        assert!(err.contains("symbolic links"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A replaced file keeps its permissions.
    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = fresh("mode");
        let script = dir.join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
        write_atomic(&script, "new").unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A FIFO is written through to its reader and stays a FIFO (made with the system's
    /// `mkfifo`; skipped where there is none).
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_through_and_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt;
        let dir = fresh("fifo");
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A character device is written through and a failed write is an error: `/dev/full`
    /// answers "no space left" and stays the device it is.
    #[cfg(target_os = "linux")]
    #[test]
    fn dev_full_is_an_error_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let full = Path::new("/dev/full");
        let is_device =
            |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device());
        if !is_device(full) {
            return;
        }
        let err = write_atomic(full, "text").unwrap_err();
        assert!(err.starts_with("/dev/full: "), "{err}");
        assert!(is_device(full));
    }

    #[test]
    fn stdout_aliases_are_recognised() {
        for alias in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            assert!(is_stdout_alias(Path::new(alias)), "{alias}");
        }
        for other in ["stdout", "/dev/stderr", "./dev/stdout", "/dev/fd/10"] {
            assert!(!is_stdout_alias(Path::new(other)), "{other}");
        }
    }

    /// A link into `/proc` (a process's own descriptors) is written through, not resolved
    /// by its text.
    #[cfg(target_os = "linux")]
    #[test]
    fn proc_links_are_streams() {
        assert_eq!(
            resolve(Path::new("/proc/self/exe")).unwrap(),
            Target::Stream(PathBuf::from("/proc/self/exe"))
        );
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
