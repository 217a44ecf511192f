//! The file-system edge of the presets: the user's config dir, loading a directory of preset
//! files, and `--preset FILE`. The only part of the engine that reads files; everything it
//! reads goes through [`Catalog::add_text`] / [`Catalog::scenario_from_text`].
//!
//! Hostile folders are survived: only regular files are read (a FIFO or a device is refused
//! before it is opened), each at most [`MAX_FILE_BYTES`]; symbolic links are followed only
//! when they stay inside the folder being loaded, each folder once (by canonical path) and at
//! most [`MAX_DEPTH`] deep; one unreadable sub-folder is reported and the rest still loads.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Catalog, PresetError, PresetInfo};
use crate::scenario::Scenario;

/// The largest preset, theme or profile file read: 1 MiB.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The settings file at the top of the config folder (the UI's `export_dir`): not a preset.
pub const SETTINGS_FILE: &str = "config.toml";

/// How many folders deep a config folder is searched for presets.
pub const MAX_DEPTH: usize = 16;

/// Reads a small text file: a regular file (after following links) of at most
/// [`MAX_FILE_BYTES`], in UTF-8. FIFOs, devices and folders are refused without opening
/// them. The error says why (and names the limit); the caller adds the path.
pub fn read_text_file(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(
            "not a regular file (only regular files are read: FIFOs, devices and folders are not)"
                .into(),
        );
    }
    let too_big = |n: u64| {
        format!(
            "{n} bytes is over the limit of {MAX_FILE_BYTES} bytes (1 MiB) for a preset, theme or profile file"
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))
}

/// `$XDG_CONFIG_HOME/pipescope`, else `$HOME/.config/pipescope` (`None` without either).
pub fn user_config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("pipescope"))
}

/// Whether a `--preset` value names a file rather than a preset.
pub(crate) fn looks_like_path(s: &str) -> bool {
    s.contains('/') || s.contains('\\') || s.ends_with(".toml")
}

/// Reads and resolves a scenario file.
pub(crate) fn scenario_file(catalog: &Catalog, path: &str) -> Result<Scenario, PresetError> {
    let text = read_text_file(Path::new(path))
        .map_err(|e| PresetError::new(path, format!("cannot read the preset file: {e}")))?;
    catalog.scenario_from_text(path, &text)
}

/// A walk of a config folder: where it started (canonical), the folders seen, what it found.
struct Walk {
    root: PathBuf,
    seen_dirs: BTreeSet<PathBuf>,
    seen_files: BTreeSet<PathBuf>,
    files: Vec<PathBuf>,
    errors: Vec<PresetError>,
}

impl Walk {
    fn error(&mut self, path: &Path, message: String) {
        self.errors
            .push(PresetError::new(&path.display().to_string(), message));
    }

    /// Every `*.toml` file under `dir` (sorted so loading is deterministic), except those in
    /// a `themes` folder (the user's config dir keeps themes beside the presets) and the
    /// settings file [`SETTINGS_FILE`] at the top.
    fn dir(&mut self, dir: &Path, depth: usize) {
        if depth > MAX_DEPTH {
            self.error(
                dir,
                format!("not searched: more than {MAX_DEPTH} folders deep"),
            );
            return;
        }
        let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.seen_dirs.insert(canonical) {
            return;
        }
        let read = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => return self.error(dir, format!("cannot read the folder: {e}")),
        };
        let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            self.entry(&path, depth);
        }
    }

    fn entry(&mut self, path: &Path, depth: usize) {
        let Ok(link) = std::fs::symlink_metadata(path) else {
            return;
        };
        let is_toml = path.extension().is_some_and(|e| e == "toml");
        if link.file_type().is_symlink() {
            match std::fs::canonicalize(path) {
                Ok(target) if target.starts_with(&self.root) => {}
                Ok(target) => {
                    return self.error(
                        path,
                        format!(
                            "not followed: the link leads outside the config folder (to {})",
                            target.display()
                        ),
                    );
                }
                Err(e) if is_toml => return self.error(path, format!("broken link: {e}")),
                Err(_) => return,
            }
        }
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.is_dir() {
            if path.file_name().is_some_and(|n| n == "themes") {
                return;
            }
            self.dir(path, depth + 1);
        } else if is_toml {
            if depth == 0 && path.file_name().is_some_and(|n| n == SETTINGS_FILE) {
                // The UI's settings, not a preset.
                return;
            }
            if !meta.is_file() {
                return self.error(path, "not a regular file: not read".into());
            }
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            if self.seen_files.insert(canonical) {
                self.files.push(path.to_path_buf());
            }
        }
    }
}

impl Catalog {
    /// The built-in presets with the files of `dir` layered on top (errors are kept in
    /// [`Catalog::errors`]; a missing directory is not an error).
    pub fn with_user_dir(dir: &Path) -> Self {
        let mut catalog = Catalog::builtin();
        for e in catalog.load_dir(dir) {
            catalog.push_error(e);
        }
        catalog
    }

    /// The built-in presets with the user's config dir (if any) layered on top.
    pub fn with_user_config() -> Self {
        match user_config_dir() {
            Some(dir) => Self::with_user_dir(&dir),
            None => Self::builtin(),
        }
    }

    /// Loads every `*.toml` file under `dir` (models and GPUs before scenarios, so that a
    /// scenario may name a model defined next to it). Returns one error per bad file; good
    /// files are added and bad ones leave the previous preset of that name in place.
    pub fn load_dir(&mut self, dir: &Path) -> Vec<PresetError> {
        if !dir.exists() {
            return Vec::new();
        }
        let mut walk = Walk {
            root: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
            seen_dirs: BTreeSet::new(),
            seen_files: BTreeSet::new(),
            files: Vec::new(),
            errors: Vec::new(),
        };
        walk.dir(dir, 0);
        let mut texts = Vec::new();
        let mut errors = walk.errors;
        for path in walk.files {
            let name = path.display().to_string();
            match read_text_file(&path) {
                Ok(text) => texts.push((name, text)),
                Err(e) => errors.push(PresetError::new(&name, format!("cannot read: {e}"))),
            }
        }
        errors.extend(self.add_user_texts(&texts));
        errors
    }

    /// Adds several `(path, text)` files: models and GPUs first, then scenarios (so that
    /// order within a directory does not matter). Returns the errors.
    pub fn add_texts(&mut self, files: &[(String, String)]) -> Vec<PresetError> {
        self.add_in_order(files)
            .into_iter()
            .filter_map(|(_, _, result)| result.err())
            .collect()
    }

    /// Adds `files`, models and GPUs first, then scenarios; each file with what became of it.
    pub(super) fn add_in_order<'a>(
        &mut self,
        files: &'a [(String, String)],
    ) -> Vec<(&'a str, &'a str, Result<PresetInfo, PresetError>)> {
        let is_scenario = |text: &str| {
            toml::from_str::<toml::Table>(text)
                .map(|t| t.contains_key("name"))
                .unwrap_or(false)
        };
        let (scenarios, others): (Vec<_>, Vec<_>) =
            files.iter().partition(|(_, text)| is_scenario(text));
        others
            .into_iter()
            .chain(scenarios)
            .map(|(path, text)| (path.as_str(), text.as_str(), self.add_text(path, text)))
            .collect()
    }

    /// Reads one preset file and adds it (`--preset FILE`, or a watcher's changed file).
    /// A file named on the command line is used even when a user file claims its name
    /// (`claims.rs`): it was asked for by its path.
    pub fn add_file(&mut self, path: &Path) -> Result<PresetInfo, PresetError> {
        let name = path.display().to_string();
        let text = read_text_file(path)
            .map_err(|e| PresetError::new(&name, format!("cannot read the preset file: {e}")))?;
        let info = self.add_text(&name, &text)?;
        self.unusable.remove(&(info.kind, info.name.clone()));
        Ok(info)
    }
}
