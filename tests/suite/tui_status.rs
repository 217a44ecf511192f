//! The status line answers the last key on its bottom row: a message too long to share a row
//! with the key hints goes below them, not above; `!` keeps the note it shows.

use crate::tui_common;

use pipescope::tui::{Action, Field};
use tui_common::{act, render, solved_app};

/// The last row of the rendered screen.
fn bottom_row(screen: &str) -> String {
    screen
        .lines()
        .filter(|l| !l.trim().is_empty())
        .last()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_long_note_is_on_the_bottom_row_and_stays_under_bang() {
    let mut app = solved_app("gpt3-175b-16k");
    let note = "exported /home/someone/runs/pipescope-1f1b-adapipe.svg, \
                /home/someone/runs/pipescope-1f1b-adapipe.trace.json";
    app.note = Some(note.to_string());
    let screen = render(&mut app, 120, 40).to_string();
    let bottom = bottom_row(&screen);
    assert!(bottom.contains("exported /home/someone"), "{screen}");
    assert!(screen.contains("q quit"), "{screen}");
    act(&mut app, Action::ToggleMessages);
    assert_eq!(app.note.as_deref(), Some(note));
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("exported /home/someone") && !screen.contains("no messages"));
}

#[test]
fn a_reload_error_is_on_the_bottom_row() {
    let mut app = solved_app("gpt3-175b-16k");
    app.reload_errors.insert(
        "/x/live.toml".into(),
        "/x/live.toml:20:17: string values must be quoted, expected literal string".into(),
    );
    let bottom = bottom_row(&render(&mut app, 120, 40).to_string());
    assert!(bottom.contains("live.toml:20:17"), "{bottom}");
}

/// A typed chunk count the schedule ignores is answered in the engine's words, on the
/// bottom row.
#[test]
fn a_typed_chunk_count_the_schedule_ignores_is_said() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::SelectField(Field::Chunks));
    for c in ['5', '0'] {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("chunks 50 changes nothing here"), "{note}");
    let bottom = bottom_row(&render(&mut app, 120, 40).to_string());
    assert!(
        bottom.contains("chunks 50 changes nothing here"),
        "{bottom}"
    );
}
