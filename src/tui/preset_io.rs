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

/// The models and GPUs of a catalog, sorted by name.
pub fn choices_of(catalog: &Catalog) -> Choices {
    Choices {
        models: catalog
            .model_names()
            .into_iter()
            .filter_map(|n| catalog.model(n).cloned())
            .collect(),
        gpus: catalog
            .gpu_names()
            .into_iter()
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

/// Writes `text` to `dir/file_name` atomically: a temporary file in the same folder, flushed
/// and synced, then renamed over the target. Creates `dir` if needed.
pub fn write_atomic(dir: &Path, file_name: &str, text: &str) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let target = dir.join(file_name);
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, &target)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("{}: {e}", target.display())
    })?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("pipescope-save-{}", std::process::id()));
        let path = write_atomic(&dir, "a.toml", "x = 1\n").unwrap();
        write_atomic(&dir, "a.toml", "x = 2\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 2\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
