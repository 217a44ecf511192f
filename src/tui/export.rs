//! The `e` key: export what is on screen (the shown outcome: main, or the story's step) in
//! the four formats of `pipescope export`, to files in the current folder named after the
//! schedule and strategy; the status line says where they went.

use std::path::{Path, PathBuf};

use crate::export::svg::Palette;
use crate::export::{self, Run};
use crate::{Outcome, Scenario};

use super::action::Effect;
use super::app::App;

/// The files of one export: `(file name, text)`, for the outcome of `scenario`: the SVG
/// figure, the Perfetto trace, the Megatron-LM launch script and, when torch has the
/// schedule, the torchtitan CSV.
pub fn files(scenario: &Scenario, outcome: &Outcome) -> Vec<(String, String)> {
    let kind = outcome.schedule;
    let run = Run::planned(outcome);
    let stem = format!("pipescope-{kind}-{}", outcome.strategy);
    let mut out = vec![
        (
            format!("{stem}.svg"),
            export::svg::export(&run, &Palette::light()),
        ),
        (format!("{stem}.trace.json"), export::perfetto::export(&run)),
    ];
    if let Ok(script) = export::megatron::export(scenario, outcome) {
        out.push((format!("{stem}.megatron.sh"), script));
    }
    if let Ok(csv) = export::torchtitan::export(&outcome.op_order) {
        out.push((format!("{stem}.torchtitan.csv"), csv));
    }
    out
}

/// `e`: the export effect for what is shown, or a note when nothing is solved yet.
pub(super) fn export(app: &mut App) -> Vec<Effect> {
    match (app.shown(), app.solved_scenario.as_ref()) {
        (Some(solved), Some(scenario)) => vec![Effect::Export(files(scenario, &solved.outcome))],
        _ => {
            app.note = Some("nothing to export yet: the plan is still being solved".into());
            Vec::new()
        }
    }
}

/// The user's settings for the UI, `config.toml` in the config folder
/// (`$XDG_CONFIG_HOME/pipescope/config.toml`). Every key is optional.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct UiConfig {
    /// The folder `e` writes into (default: the current folder).
    export_dir: Option<PathBuf>,
}

/// Where `e` writes: `export_dir` from `config.toml` in `config_dir` when it is set, else the
/// current folder. A broken `config.toml` is an error with `file:line:column`, so the user
/// learns why the files did not go where they asked.
pub fn export_dir(config_dir: Option<&Path>) -> Result<PathBuf, String> {
    let here = PathBuf::from(".");
    let Some(path) = config_dir.map(|d| d.join("config.toml")) else {
        return Ok(here);
    };
    if !path.exists() {
        return Ok(here);
    }
    let text = crate::scenario::presets::read_text_file(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let config: UiConfig =
        toml::from_str(&text).map_err(|e| super::location::located(&path, &text, &e))?;
    Ok(config.export_dir.unwrap_or(here))
}

/// Writes `files` into `dir`, each atomically; the paths written, or the first error.
pub fn write_files(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>, String> {
    files
        .iter()
        .map(|(name, text)| crate::files::write_atomic(&dir.join(name), text))
        .collect()
}

/// The status line after an export.
pub(super) fn exported(app: &mut App, result: Result<Vec<PathBuf>, String>) -> Vec<Effect> {
    match result {
        Ok(paths) => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            app.note = Some(format!("exported {}", names.join(", ")));
        }
        Err(e) => app.error = Some(format!("could not export: {e}")),
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn config_dir(text: Option<&str>) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pipescope-export-dir-{}-{}",
            std::process::id(),
            text.map_or(0, str::len)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.toml");
        match text {
            Some(t) => std::fs::write(&file, t).unwrap(),
            None => {
                let _ = std::fs::remove_file(&file);
            }
        }
        dir
    }

    #[test]
    fn the_export_folder_comes_from_the_config_or_is_the_current_one() {
        assert_eq!(export_dir(None).unwrap(), PathBuf::from("."));
        let none = config_dir(None);
        assert_eq!(export_dir(Some(&none)).unwrap(), PathBuf::from("."));
        let set = config_dir(Some("export_dir = \"/tmp/figures\"\n"));
        assert_eq!(
            export_dir(Some(&set)).unwrap(),
            PathBuf::from("/tmp/figures")
        );
    }

    #[test]
    fn a_broken_config_is_reported_with_its_location() {
        let dir = config_dir(Some("export_dir = 3\nnope = 1\n"));
        let err = export_dir(Some(&dir)).unwrap_err();
        assert!(err.contains("config.toml:1:"), "{err}");
    }
}
