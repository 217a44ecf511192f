//! No subcommand: the terminal UI. Builds the scenario from the flags, refuses to start
//! without a terminal (pointing to `plan` and `simulate`), and runs [`pipescope::tui::run`].
//!
//! `PIPESCOPE_FIXTURE=1` swaps the engine for the TUI's synthetic fixture solver (for tests
//! of the interface that must not depend on the engine's numbers).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use pipescope::tui::{self, Theme, fixture};

use super::scenario_args::ScenarioArgs;
use pipescope::{read_text_file, user_config_dir};

/// The user's theme files: those that load, and the others with their errors (they stay in
/// the `T` cycle with the error shown, instead of vanishing).
fn user_themes(dir: Option<&PathBuf>) -> (Vec<Theme>, Vec<(PathBuf, String)>) {
    let Some(dir) = dir.map(|d| d.join("themes")) else {
        return (Vec::new(), Vec::new());
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let (mut themes, mut errors) = (Vec::new(), Vec::new());
    for p in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let parsed = read_text_file(p)
            .map_err(|e| format!("{}: cannot read the theme: {e}", p.display()))
            .and_then(|text| Theme::parse(&text, p));
        match parsed {
            Ok(t) => themes.push(t),
            Err(e) => errors.push((p.clone(), e)),
        }
    }
    (themes, errors)
}

/// The refusal `plan` gives for a scenario whose model cannot be built as the flags ask
/// (recompute units the model does not have, ...), with the flags named as `plan` names
/// them; `Ok` where `plan` would go on to solve.
fn refuse_as_plan_does(scenario: &pipescope::Scenario) -> Result<(), String> {
    pipescope::Anatomy::build(scenario)
        .map(|_| ())
        .map_err(|e| super::scenario_args::name_flags(&e.to_string()))
}

/// Opens the TUI on the scenario the flags describe.
pub fn run(args: &ScenarioArgs) -> Result<(), super::Stop> {
    // The flags first, refused as `plan` refuses them (before the terminal is asked for):
    // the UI never opens on a scenario the command line would not plan.
    let (scenario, catalog) = args.to_tui_scenario()?;
    refuse_as_plan_does(&scenario)?;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(
            "the interactive view needs a terminal (stdin and stdout are not both one); \
             for text or JSON output use `pipescope plan [FLAGS] [--json]` or \
             `pipescope simulate --schedule NAME -p P -m M [--json]`"
                .to_string()
                .into(),
        );
    }
    // A test hook: debug (and test) builds only, so a release build always shows the engine.
    let fixture_mode =
        cfg!(debug_assertions) && std::env::var_os("PIPESCOPE_FIXTURE").is_some_and(|v| v == "1");
    let scenario_name = scenario.name.clone();
    let config = user_config_dir();
    // The file the scenario came from, reloaded when it changes: `--preset FILE`, or the
    // user preset file that defines the named scenario.
    let preset_source = match &args.source.preset {
        Some(p) if Path::new(p).is_file() => std::fs::canonicalize(p).ok(),
        _ => catalog
            .scenarios()
            .into_iter()
            .find(|i| i.name == scenario.name && !i.source.starts_with("builtin:"))
            .and_then(|i| std::fs::canonicalize(i.source).ok()),
    };
    // Canonical paths, so that the watcher's event paths compare equal to `preset_source`.
    let mut watch_dirs: Vec<PathBuf> = config
        .iter()
        // A missing folder is watched for (hot reload starts when it is created).
        .map(|c| std::fs::canonicalize(c).unwrap_or_else(|_| c.clone()))
        .collect();
    // A `--preset FILE` outside the config folder: that file alone is watched.
    if let Some(file) = preset_source.as_ref()
        && !watch_dirs.iter().any(|w| file.starts_with(w))
    {
        watch_dirs.push(file.clone());
    }
    let no_color = std::env::var("NO_COLOR").ok();
    let (user_themes, theme_errors) = user_themes(config.as_ref());
    if let Some(presets) = config.as_ref().map(|c| c.join("presets")) {
        pipescope::remove_stale_temp_files(&presets);
    }
    tui::run(tui::Options {
        scenario,
        choices: tui::choices_of(&catalog),
        preset_source,
        // A scenario made from flags alone came from no preset: the picker marks none. With
        // no flag at all the UI opens on the default preset as it is: the picker marks it.
        preset_name: (args.source.preset.is_some() || args.is_empty()).then_some(scenario_name),
        presets: tui::preset_choices(&catalog),
        watch_dirs,
        presets_dir: config.as_ref().map(|c| c.join("presets")),
        user_themes,
        theme_errors,
        theme: Theme::initial(no_color.as_deref()),
        // PIPESCOPE_NO_MOUSE=1 leaves the mouse to the terminal (text selection); `v` toggles.
        mouse: std::env::var_os("PIPESCOPE_NO_MOUSE").is_none_or(|v| v.is_empty() || v == "0"),
        solve: if fixture_mode {
            tui::Solver::Plain(fixture::solve)
        } else {
            tui::Solver::Cancellable(tui::engine_solve_cancellable)
        },
        sweep: if fixture_mode {
            fixture::sweep::slow_sweep
        } else {
            tui::engine_sweep
        },
    })
    // What fails once the UI runs is the terminal's doing, not the input's.
    .map_err(super::Stop::Failed)
}
