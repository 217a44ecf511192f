//! The `e` key: export what is on screen (the shown outcome: main, or the story's step) in
//! the four formats of `pipescope export`, to files in the current folder (or `export_dir`)
//! named after the schedule and strategy, never replacing a file (a later export takes the
//! next number, `-2`, `-3` ...); the status line gives the paths.

use std::path::{Path, PathBuf};

use crate::export::svg::Palette;
use crate::export::{self, Run};
use crate::files::{Existing, write_atomic_with};
use crate::{Outcome, Scenario};

use super::action::Effect;
use super::app::App;

/// The files of one export: `(file name, text)`, for the outcome of `scenario`: the SVG
/// figure, the Perfetto trace, the Megatron-LM launch script and, when torch has the
/// schedule, the torchtitan CSV; then the formats left out, each with why.
pub fn files(scenario: &Scenario, outcome: &Outcome) -> (Vec<(String, String)>, Vec<String>) {
    let kind = outcome.schedule;
    let run = Run::planned(outcome);
    let stem = format!("pipescope-{kind}-{}", outcome.strategy);
    let mut out = vec![
        (
            format!("{stem}.svg"),
            export::svg::export_with(
                &run,
                &Palette::light(),
                export::svg::Extras {
                    memory_limit: Some(scenario.plan.memory_budget_bytes as f64),
                },
            ),
        ),
        (format!("{stem}.trace.json"), export::perfetto::export(&run)),
    ];
    let mut left_out = Vec::new();
    match export::megatron::export(scenario, outcome) {
        Ok(script) => out.push((format!("{stem}.megatron.sh"), script)),
        Err(e) => left_out.push(format!("megatron ({})", first_clause(&e.to_string()))),
    }
    match export::torchtitan::export(&outcome.op_order) {
        Ok(csv) => out.push((format!("{stem}.torchtitan.csv"), csv)),
        Err(e) => left_out.push(format!("torchtitan ({})", first_clause(e.reason))),
    }
    (out, left_out)
}

/// The first clause of a reason (to its first `;` or sentence end): the status line's share.
fn first_clause(reason: &str) -> &str {
    let end = [reason.find("; "), reason.find(". ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(reason.len());
    &reason[..end]
}

/// `e`: the export effect for what is shown, or a note when nothing is solved yet.
pub(super) fn export(app: &mut App) -> Vec<Effect> {
    match (app.shown(), app.solved_scenario.as_ref()) {
        (Some(solved), Some(scenario)) => {
            let (files, left_out) = files(scenario, &solved.outcome);
            app.export_left_out = left_out;
            vec![Effect::Export(files)]
        }
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
    Ok(parse_settings(&path, &text)?.unwrap_or(here))
}

/// Reads the settings file `path` holding `text`: its `export_dir` if set, or the error with
/// `file:line:column` (the file watcher reports it when the file is saved, `e` when it
/// exports).
pub fn parse_settings(path: &Path, text: &str) -> Result<Option<PathBuf>, String> {
    let config: UiConfig =
        toml::from_str(text).map_err(|e| super::location::located(path, text, &e))?;
    Ok(config.export_dir)
}

/// How many numbered names (`stem.svg`, `stem-2.svg`, ...) an export tries before giving up.
pub const MAX_EXPORT_NAMES: u32 = 100;

/// The `n`th name of `file_name` (`pipescope-1f1b-full.trace.json`, then
/// `pipescope-1f1b-full-2.trace.json`, ...): the number goes before the first dot.
pub fn numbered(file_name: &str, n: u32) -> String {
    if n <= 1 {
        return file_name.to_string();
    }
    match file_name.split_once('.') {
        Some((stem, rest)) => format!("{stem}-{n}.{rest}"),
        None => format!("{file_name}-{n}"),
    }
}

/// Writes `files` into `dir` without replacing any file: all under the first number `n`
/// for which none of their names exists yet (`stem.svg`, else `stem-2.svg` ..., the same
/// number for every file of the export), each written atomically keeping an existing file
/// ([`Existing::Keep`]). The paths written (absolute when the folder can be resolved), or
/// the first error.
pub fn write_files(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>, String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut written = Vec::new();
    let mut left: Vec<&(String, String)> = files.iter().collect();
    for n in 1..=MAX_EXPORT_NAMES {
        let taken = left
            .iter()
            .any(|(name, _)| std::fs::symlink_metadata(dir.join(numbered(name, n))).is_ok());
        if taken {
            continue;
        }
        let mut raced = Vec::new();
        for file in left {
            let path = dir.join(numbered(&file.0, n));
            if write_atomic_with(&path, &file.1, Existing::Keep)? {
                written.push(path);
            } else {
                // Created meanwhile by someone else: this one takes the next free number.
                raced.push(file);
            }
        }
        left = raced;
        if left.is_empty() {
            return Ok(written);
        }
    }
    Err(format!(
        "{}: {} and {} other numbered names are taken; remove some",
        dir.display(),
        left.first().map_or("", |f| f.0.as_str()),
        MAX_EXPORT_NAMES - 1
    ))
}

/// How the export note names a file written at `path`: relative to the working directory
/// `cwd` when it lies inside it (`gpt3.svg`, `figures/gpt3.svg`, as the reload notes name
/// files short), else from the home folder (`~/figures/gpt3.svg`), else as it is.
pub fn as_user_types(path: &Path, cwd: Option<&Path>, home: Option<&Path>) -> PathBuf {
    let plain: PathBuf = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if plain.is_relative() {
        return plain;
    }
    if let Some(rest) = cwd.and_then(|c| plain.strip_prefix(c).ok())
        && !rest.as_os_str().is_empty()
    {
        return rest.to_path_buf();
    }
    if let Some(rest) = home.and_then(|h| plain.strip_prefix(h).ok())
        && !rest.as_os_str().is_empty()
    {
        return Path::new("~").join(rest);
    }
    plain
}

/// The status line after an export: every path written (and, when the names took a
/// number, that the earlier files were kept).
pub(super) fn exported(app: &mut App, result: Result<Vec<PathBuf>, String>) -> Vec<Effect> {
    match result {
        Ok(paths) => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            let numbered = paths.iter().any(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split_once('.'))
                    .is_some_and(|(stem, _)| {
                        stem.rsplit_once('-')
                            .is_some_and(|(_, k)| k.parse::<u32>().is_ok_and(|k| k >= 2))
                    })
            });
            let kept = if numbered {
                " (earlier exports of these names kept)"
            } else {
                ""
            };
            let left_out = match app.export_left_out.as_slice() {
                [] => String::new(),
                list => format!("; left out: {}", list.join(", ")),
            };
            app.clear_output_error();
            app.note = Some(format!("exported {}{kept}{left_out}", names.join(", ")));
        }
        Err(e) => app.error = Some(format!("{}{e}", crate::tui::app::EXPORT_ERROR)),
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The note names files as the user would type them from where pipescope runs.
    #[test]
    fn the_note_names_files_from_the_working_directory() {
        let (cwd, home) = (Path::new("/work/run"), Path::new("/home/ada"));
        let at = |p: &str| as_user_types(Path::new(p), Some(cwd), Some(home));
        assert_eq!(at("./gpt3.svg"), PathBuf::from("gpt3.svg"));
        assert_eq!(at("/work/run/gpt3.svg"), PathBuf::from("gpt3.svg"));
        assert_eq!(
            at("/work/run/figs/gpt3.svg"),
            PathBuf::from("figs/gpt3.svg")
        );
        assert_eq!(
            at("/home/ada/figs/gpt3.svg"),
            PathBuf::from("~/figs/gpt3.svg")
        );
        assert_eq!(
            at("/tmp/figs/gpt3.svg"),
            PathBuf::from("/tmp/figs/gpt3.svg")
        );
        assert_eq!(
            as_user_types(Path::new("/tmp/gpt3.svg"), None, None),
            PathBuf::from("/tmp/gpt3.svg")
        );
    }

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
