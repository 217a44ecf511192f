//! The file-system edge of the presets: the user's config dir, loading a directory of preset
//! files, and `--preset FILE`. The only part of the engine that reads files; everything it
//! reads goes through [`Catalog::add_text`] / [`Catalog::scenario_from_text`].

use std::path::{Path, PathBuf};

use super::{Catalog, PresetError, PresetInfo};
use crate::scenario::Scenario;

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
    let text = std::fs::read_to_string(path)
        .map_err(|e| PresetError::new(path, format!("cannot read the preset file: {e}")))?;
    catalog.scenario_from_text(path, &text)
}

/// Every `*.toml` file under `dir` (recursively, sorted so loading is deterministic), except
/// those in a `themes` folder: the user's config dir keeps themes beside the presets.
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "themes") {
                continue;
            }
            toml_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    Ok(())
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
        let mut files = Vec::new();
        if !dir.exists() {
            return Vec::new();
        }
        if let Err(e) = toml_files(dir, &mut files) {
            return vec![PresetError::new(
                &dir.display().to_string(),
                format!("cannot read the directory: {e}"),
            )];
        }
        let mut texts = Vec::new();
        let mut errors = Vec::new();
        for path in files {
            let name = path.display().to_string();
            match std::fs::read_to_string(&path) {
                Ok(text) => texts.push((name, text)),
                Err(e) => errors.push(PresetError::new(&name, format!("cannot read: {e}"))),
            }
        }
        errors.extend(self.add_texts(&texts));
        errors
    }

    /// Adds several `(path, text)` files: models and GPUs first, then scenarios (so that
    /// order within a directory does not matter). Returns the errors.
    pub fn add_texts(&mut self, files: &[(String, String)]) -> Vec<PresetError> {
        let mut errors = Vec::new();
        let mut later = Vec::new();
        for (path, text) in files {
            let is_scenario = toml::from_str::<toml::Table>(text)
                .map(|t| t.contains_key("name"))
                .unwrap_or(false);
            if is_scenario {
                later.push((path, text));
            } else if let Err(e) = self.add_text(path, text) {
                errors.push(e);
            }
        }
        for (path, text) in later {
            if let Err(e) = self.add_text(path, text) {
                errors.push(e);
            }
        }
        errors
    }

    /// Reads one preset file and adds it (`--preset FILE`, or a watcher's changed file).
    pub fn add_file(&mut self, path: &Path) -> Result<PresetInfo, PresetError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| PresetError::new(&name, format!("cannot read the preset file: {e}")))?;
        self.add_text(&name, &text)
    }
}
