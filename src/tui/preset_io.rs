//! Reading and writing scenario presets for the TUI: parse a watched preset file, render the
//! current scenario as TOML, and write it atomically (temp file + rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Scenario;
use crate::scenario::{Catalog, PresetKind};

use super::fields::Choices;

/// A preset file the watcher parsed: a scenario, or a model/GPU preset (which only changes
/// the choices).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedPreset {
    /// The scenario, when the file is a scenario preset.
    pub scenario: Option<Scenario>,
    /// Models and GPUs after the change.
    pub choices: Choices,
}

/// The models and GPUs of a catalog, sorted by name (without the names a broken or
/// duplicate user file makes unusable).
pub fn choices_of(catalog: &Catalog) -> Choices {
    Choices {
        models: catalog
            .model_names()
            .into_iter()
            .filter(|n| catalog.unusable(PresetKind::Model, n).is_none())
            .filter_map(|n| catalog.model(n).cloned())
            .collect(),
        gpus: catalog
            .gpu_names()
            .into_iter()
            .filter(|n| catalog.unusable(PresetKind::Gpu, n).is_none())
            .filter_map(|n| catalog.gpu(n).cloned())
            .collect(),
    }
}

/// Parses a preset file against the built-in presets and the user's config folder; errors
/// read `file:line:column: message`.
pub fn parse_preset(path: &Path, text: &str) -> Result<ParsedPreset, String> {
    let mut catalog = Catalog::with_user_config();
    let file = path.display().to_string();
    let info = catalog.add_text(&file, text).map_err(|e| e.to_string())?;
    let scenario = match info.kind {
        PresetKind::Scenario => Some(catalog.scenario(&info.name).map_err(|e| e.to_string())?),
        PresetKind::Model | PresetKind::Gpu => None,
    };
    Ok(ParsedPreset {
        scenario,
        choices: choices_of(&catalog),
    })
}

/// The scenario as a preset file.
pub fn to_toml(scenario: &Scenario) -> Result<String, String> {
    Ok(crate::scenario::to_toml(scenario))
}

/// How many names `write_atomic` tries (`my-x.toml`, `my-x-2.toml`, ...) before giving up.
pub const MAX_SAVE_NAMES: u32 = 100;

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

/// How old a temporary file of a save must be to count as left behind: a save takes
/// milliseconds, so one this old belongs to a save that was killed (SIGKILL, a power cut).
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether `name` is the name of a save's temporary file (`.my-x.toml.<hex>.tmp`).
fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".toml.")
}

/// Removes from `dir` the temporary files of saves that never finished (a save killed
/// between writing its temporary file and linking it): hidden `.NAME.toml.*.tmp` files
/// older than [`STALE_TEMP_AGE`] (a younger one may be another instance's save in
/// flight). Returns how many were removed; a folder that cannot be read removes none.
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

/// The `n`th candidate name for `file_name` (`my-x.toml`, then `my-x-2.toml`, ...).
fn candidate(file_name: &str, n: u32) -> String {
    if n <= 1 {
        return file_name.to_string();
    }
    let stem = file_name.strip_suffix(".toml").unwrap_or(file_name);
    format!("{stem}-{n}.toml")
}

/// `text` with its top-level `name = "<old stem>"` line naming the new file's stem, so that
/// a preset saved under a new name does not shadow the one it would have replaced.
fn renamed(text: &str, file_name: &str, target: &str) -> String {
    let stem = |f: &str| f.strip_suffix(".toml").unwrap_or(f).to_string();
    let old = format!("name = \"{}\"", stem(file_name));
    let new = format!("name = \"{}\"", stem(target));
    let mut done = false;
    let mut out: String = text
        .lines()
        .map(|l| {
            if !done && l == old {
                done = true;
                new.clone()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Writes `text` into `dir` as `file_name`, or, when that file exists, as the first free
/// `stem-N.toml` (an existing file is never replaced, issue 14); returns the path written.
/// The temporary file is created exclusively (create-new, so a planted link is refused, not
/// followed) under an unpredictable name in the same folder, synced, then linked to the
/// target atomically (a hard link fails rather than replace; where the file system has
/// none, an atomic rename onto the name just checked free). Creates `dir` if needed.
pub fn write_atomic(dir: &Path, file_name: &str, text: &str) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for n in 1..=MAX_SAVE_NAMES {
        let name = candidate(file_name, n);
        let target = dir.join(&name);
        if fs::symlink_metadata(&target).is_ok() {
            continue;
        }
        let tmp = dir.join(temp_name(&name));
        let body = renamed(text, file_name, &name);
        let write = || -> std::io::Result<bool> {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            f.write_all(body.as_bytes())?;
            f.sync_all()?;
            match fs::hard_link(&tmp, &target) {
                Ok(()) => {
                    fs::remove_file(&tmp)?;
                    Ok(true)
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    fs::remove_file(&tmp)?;
                    Ok(false)
                }
                Err(_) => fs::rename(&tmp, &target).map(|()| true),
            }
        };
        match write() {
            Ok(true) => return Ok(target),
            Ok(false) => continue,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(format!("{}: {e}", target.display()));
            }
        }
    }
    Err(format!(
        "{}: {file_name} and {} other names are taken (at most {MAX_SAVE_NAMES} are tried); remove some",
        dir.display(),
        MAX_SAVE_NAMES - 1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_kept_and_the_save_takes_a_new_name() {
        let dir = std::env::temp_dir().join(format!("pipescope-save-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let mine = dir.join("my-a.toml");
        fs::write(&mine, "# hand-written, with comments\nname = \"my-a\"\n").unwrap();
        let path = write_atomic(&dir, "my-a.toml", "name = \"my-a\"\nx = 2\n").unwrap();
        assert_eq!(path, dir.join("my-a-2.toml"));
        assert!(fs::read_to_string(&mine).unwrap().contains("hand-written"));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "name = \"my-a-2\"\nx = 2\n"
        );
        let third = write_atomic(&dir, "my-a.toml", "name = \"my-a\"\n").unwrap();
        assert_eq!(third, dir.join("my-a-3.toml"));
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 3);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = std::env::temp_dir().join(format!("pipescope-link-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let presets = dir.join("presets");
        fs::create_dir_all(&presets).unwrap();
        let outside = dir.join("outside.txt");
        fs::write(&outside, "precious\n").unwrap();
        // A link under the target name and one under the old predictable temp name.
        std::os::unix::fs::symlink(&outside, presets.join("my-b.toml")).unwrap();
        std::os::unix::fs::symlink(
            &outside,
            presets.join(format!(".my-b.toml.{}.tmp", std::process::id())),
        )
        .unwrap();
        let path = write_atomic(&presets, "my-b.toml", "name = \"my-b\"\n").unwrap();
        assert_eq!(path, presets.join("my-b-2.toml"));
        assert_eq!(fs::read_to_string(&outside).unwrap(), "precious\n");
        assert!(
            !fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temp_files_of_killed_saves_are_removed_and_fresh_ones_kept() {
        let dir = std::env::temp_dir().join(format!("pipescope-stale-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let old = dir.join(temp_name("my-a.toml"));
        let fresh = dir.join(temp_name("my-b.toml"));
        let preset = dir.join("my-a.toml");
        let other = dir.join(".notes.tmp");
        for f in [&old, &fresh, &preset, &other] {
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
        assert!(fresh.exists() && preset.exists() && other.exists());
        assert_eq!(remove_stale_temp_files(&dir.join("missing")), 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names_differ() {
        assert_ne!(temp_name("a.toml"), temp_name("a.toml"));
    }
}
