//! The file side of the pure update: saving the scenario as a preset (the runner writes
//! it) and applying hot-reloaded presets and themes. No I/O here either.

use super::action::{Effect, Reload};
use super::app::App;
use super::update::resolve;

/// `w`: the scenario as preset TOML under a `my-` name, for the runner to write.
pub(super) fn save(app: &mut App) -> Vec<Effect> {
    let base: String = app
        .scenario
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "custom".into()
    } else {
        base
    };
    let stem = if base.starts_with("my-") {
        base
    } else {
        format!("my-{base}")
    };
    let file_name = format!("{stem}.toml");
    // The saved preset gets its own name, so it does not shadow the one it came from.
    let mut scenario = app.scenario.clone();
    scenario.name = stem;
    match super::preset_io::to_toml(&scenario) {
        Ok(text) => vec![Effect::Save { file_name, text }],
        Err(e) => {
            app.error = Some(e);
            Vec::new()
        }
    }
}

/// A watched file changed: apply a good theme or preset, or record its error (the last
/// good version stays).
pub(super) fn reloaded(app: &mut App, reload: Reload) -> Vec<Effect> {
    match reload {
        Reload::Theme(path, Ok(theme)) => {
            app.reload_errors.remove(&path);
            app.note = Some(format!("reloaded {}", path.display()));
            let theme = *theme;
            if app.theme.name == theme.name {
                app.theme = theme.clone();
            }
            match app.themes.iter_mut().find(|t| t.name == theme.name) {
                Some(t) => *t = theme,
                None => app.themes.push(theme),
            }
            Vec::new()
        }
        Reload::Preset(path, Ok(parsed)) => {
            app.reload_errors.remove(&path);
            let parsed = *parsed;
            if !parsed.choices.models.is_empty() {
                app.choices = parsed.choices;
            }
            match parsed.scenario {
                Some(scenario) if app.preset_source.as_ref() == Some(&path) => {
                    app.note = Some(format!("reloaded {}", path.display()));
                    app.scenario = scenario;
                    resolve(app)
                }
                _ => Vec::new(),
            }
        }
        Reload::Theme(path, Err(e)) | Reload::Preset(path, Err(e)) => {
            app.reload_errors.insert(path, e);
            Vec::new()
        }
    }
}
