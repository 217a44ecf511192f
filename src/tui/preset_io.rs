//! Reading and writing scenario presets for the TUI: parse a watched preset file, render the
//! current scenario as TOML, and save it under a free name (atomically, never over a file).

use std::fs;
use std::path::{Path, PathBuf};

use crate::Scenario;
use crate::files::{Existing, write_atomic_with};
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

/// How many names `save_new` tries (`my-x.toml`, `my-x-2.toml`, ...) before giving up.
pub const MAX_SAVE_NAMES: u32 = 100;

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

/// Saves `text` into `dir` as `file_name`, or, when that file exists, as the first free
/// `stem-N.toml` (a user's file is never replaced: it may hold comments and choices the
/// saved scenario does not); returns the path written. Each name is tried with
/// [`write_atomic_with`] keeping an existing file. Creates `dir` if needed.
pub fn save_new(dir: &Path, file_name: &str, text: &str) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for n in 1..=MAX_SAVE_NAMES {
        let name = candidate(file_name, n);
        let target = dir.join(&name);
        let body = renamed(text, file_name, &name);
        if write_atomic_with(&target, &body, Existing::Keep)? {
            return Ok(target);
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
        let path = save_new(&dir, "my-a.toml", "name = \"my-a\"\nx = 2\n").unwrap();
        assert_eq!(path, dir.join("my-a-2.toml"));
        assert!(fs::read_to_string(&mine).unwrap().contains("hand-written"));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "name = \"my-a-2\"\nx = 2\n"
        );
        let third = save_new(&dir, "my-a.toml", "name = \"my-a\"\n").unwrap();
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
        let path = save_new(&presets, "my-b.toml", "name = \"my-b\"\n").unwrap();
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
}
