//! No subcommand: the terminal UI. Builds the scenario from the flags, refuses to start
//! without a terminal (pointing to `plan` and `simulate`), and runs [`pipescope::tui::run`].

use std::io::IsTerminal;
use std::path::PathBuf;

use pipescope::tui::{self, Choices, Theme, fixture};

use super::scenario_args::ScenarioArgs;

/// The user's config folder: `$XDG_CONFIG_HOME/pipescope` or `~/.config/pipescope`.
pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("pipescope"))
}

fn user_themes(dir: Option<&PathBuf>) -> Vec<Theme> {
    let Some(dir) = dir.map(|d| d.join("themes")) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| Theme::parse(&std::fs::read_to_string(p).ok()?, p).ok())
        .collect()
}

/// Opens the TUI on the scenario the flags describe.
pub fn run(args: &ScenarioArgs) -> Result<(), String> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(
            "the interactive view needs a terminal (stdin and stdout are not both one); \
             for text or JSON output use `pipescope plan [FLAGS] [--json]` or \
             `pipescope simulate --schedule NAME -p P -m M [--json]`"
                .into(),
        );
    }
    let fixture_mode = std::env::var_os("PIPESCOPE_FIXTURE").is_some_and(|v| v == "1");
    let scenario = fixture::scenario(args.preset.as_deref().unwrap_or("gpt3-175b-16k"));
    let choices = Choices {
        models: vec![fixture::model_gpt3(), fixture::model_llama70()],
        gpus: vec![fixture::gpu_a100(), fixture::gpu_h100()],
    };
    let config = config_dir();
    let mut watch_dirs: Vec<PathBuf> = config.iter().cloned().collect();
    let preset_source = args
        .preset
        .as_ref()
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    if let Some(dir) = preset_source.as_ref().and_then(|p| p.parent()) {
        watch_dirs.push(dir.to_path_buf());
    }
    let no_color = std::env::var("NO_COLOR").ok();
    tui::run(tui::Options {
        scenario,
        choices,
        preset_source,
        watch_dirs,
        presets_dir: config.as_ref().map(|c| c.join("presets")),
        user_themes: user_themes(config.as_ref()),
        theme: Theme::initial(no_color.as_deref()),
        mouse: true,
        solve: if fixture_mode {
            fixture::solve
        } else {
            tui::solved::engine_solve
        },
    })
}
