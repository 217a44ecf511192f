//! Files that change under the running UI, as the status line tells them: a broken theme
//! that is not on screen does not hide the refusal of a later edit, a newer file error goes
//! first again, and a deleted file takes its error (and its theme's place in the `T` cycle)
//! with it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pipescope::tui::{Action, App, Field, Reload, Theme};

use crate::tui_common::{act, render, solved_app};

fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The status line (the bottom row of a 200-column screen).
fn status(app: &mut App) -> String {
    let screen = render(app, 200, 40).to_string();
    screen
        .lines()
        .rev()
        .find(|l| l.trim_matches(['"', ' ']).len() > 1)
        .unwrap_or_default()
        .to_string()
}

fn theme_error(app: &mut App, path: &str, e: &str) {
    act(
        app,
        Action::Reloaded(Box::new(Reload::Theme(path.into(), Err(e.into())))),
    );
}

/// Types `text` into the selected field and presses Enter.
fn type_in(app: &mut App, field: Field, text: &str) {
    act(app, Action::SelectField(field));
    for c in text.chars() {
        act(app, key(KeyCode::Char(c)));
    }
    act(app, key(KeyCode::Enter));
}

#[test]
fn an_edit_refused_after_a_file_error_goes_first_and_a_deleted_theme_takes_its_error_away() {
    let mut app = solved_app("gpt3");
    let path = "/cfg/pipescope/themes/mytheme.toml";
    theme_error(
        &mut app,
        path,
        "themes/mytheme.toml:9:1: unknown field `fowrard`",
    );
    assert!(app.themes.iter().any(|t| t.name == "mytheme"));
    assert!(status(&mut app).contains("mytheme.toml:9:1"));
    // The edit is newer than the file error: its refusal is on the status line.
    // 150 stages pass the scenario's checks but not the fixture solver's (one layer per stage).
    type_in(&mut app, Field::Stages, "150");
    let line = status(&mut app);
    assert!(line.contains("invalid parallel.pp = 150"), "{line}");
    assert!(line.contains("1 file has an error (! shows all)"), "{line}");
    // A file error newer than the edit goes first again.
    theme_error(&mut app, path, "themes/mytheme.toml:3:1: unknown field `x`");
    let line = status(&mut app);
    assert!(line.contains("mytheme.toml:3:1"), "{line}");
    // Deleted: the error goes, the theme leaves the cycle, and the edit's refusal is back.
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Removed(
            path.into(),
            Some("mytheme".into()),
        ))),
    );
    assert!(app.reload_errors.is_empty());
    assert!(!app.themes.iter().any(|t| t.name == "mytheme"));
    let note = app.note.clone().unwrap();
    assert!(note.contains("mytheme.toml was removed"), "{note}");
    assert!(note.contains("left the T cycle"), "{note}");
    let line = status(&mut app);
    assert!(line.contains("invalid parallel.pp = 150"), "{line}");
    assert!(!line.contains("file has an error"), "{line}");
    type_in(&mut app, Field::Stages, "149");
    let line = status(&mut app);
    assert!(line.contains("invalid parallel.pp = 149"), "{line}");
    assert!(!line.contains("file has an error"), "{line}");
}

#[test]
fn the_settings_file_is_reported_as_settings_and_a_deleted_builtin_override_restores_it() {
    let mut app = solved_app("gpt3");
    let settings = "/cfg/pipescope/config.toml";
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Settings(
            settings.into(),
            Err("pipescope/config.toml:1:14: invalid type: integer `5`, expected a path".into()),
        ))),
    );
    let line = status(&mut app);
    assert!(line.contains("config.toml:1:14"), "{line}");
    assert!(!line.contains("not a preset"), "{line}");
    // No last good version stands in for the settings: `e` reads the file when it exports.
    assert!(
        line.contains("e refuses to export until it is fixed"),
        "{line}"
    );
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Settings(settings.into(), Ok(())))),
    );
    assert!(app.reload_errors.is_empty());
    // A user file that replaced a built-in theme: deleting it brings the built-in back.
    let mut red = Theme::builtin("dark");
    red.colors.forward = ratatui::style::Color::Red;
    let dark = "/cfg/pipescope/themes/dark.toml";
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Theme(dark.into(), Ok(Box::new(red))))),
    );
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Removed(dark.into(), Some("dark".into())))),
    );
    let cycled = app.themes.iter().find(|t| t.name == "dark").unwrap();
    assert_eq!(cycled.colors.forward, Theme::builtin("dark").colors.forward);
}

/// The notes of a reloaded or removed file name it as its error does (`presets/mine.toml`),
/// not by an absolute path that pushes the key hints off a narrow status line.
#[test]
fn reload_and_removal_notes_name_the_file_without_its_absolute_path() {
    let mut app = solved_app("gpt3");
    let path = std::path::PathBuf::from("/home/someone/.config/pipescope/presets/mine.toml");
    app.preset_source = Some(path.clone());
    let mut edited = pipescope::tui::fixture::scenario("gpt3");
    edited.batch.micro_batches = 7;
    let parsed = pipescope::tui::ParsedPreset {
        scenario: Some(edited),
        choices: pipescope::tui::Choices::default(),
    };
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(path.clone(), Ok(Box::new(parsed))))),
    );
    assert_eq!(app.scenario.batch.micro_batches, 7);
    let note = app.note.clone().unwrap();
    assert_eq!(note, "reloaded presets/mine.toml");
    let line = status(&mut app);
    assert!(line.contains("reloaded presets/mine.toml"), "{line}");
    assert!(!line.contains("/home/someone"), "{line}");
    let theme = "/home/someone/.config/pipescope/themes/mine.toml";
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Theme(
            theme.into(),
            Ok(Box::new(Theme::builtin("dark"))),
        ))),
    );
    assert_eq!(app.note.as_deref(), Some("reloaded themes/mine.toml"));
    let settings = "/home/someone/.config/pipescope/config.toml";
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Settings(settings.into(), Ok(())))),
    );
    let note = app.note.clone().unwrap();
    assert!(note.starts_with("reloaded pipescope/config.toml"), "{note}");
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Removed(path, None))),
    );
    let note = app.note.clone().unwrap();
    assert!(note.starts_with("presets/mine.toml was removed"), "{note}");
}
