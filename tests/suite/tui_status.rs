//! The status bar answers the last key: a note (what `e` wrote, why a typed chunk count
//! changes nothing) is shown there, and `!` keeps it (opening the overlay is no new action).

use crate::tui_common;

use pipescope::tui::{Action, Field};
use tui_common::{act, render, solved_app};

/// The status bar's rows: the last `n` rows of the rendered screen, joined.
fn status_rows(screen: &str, n: usize) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[test]
fn a_long_note_is_on_the_status_bar_and_stays_under_bang() {
    let mut app = solved_app("gpt3-175b-16k");
    let note = "exported /home/someone/runs/pipescope-1f1b-adapipe.svg, \
                /home/someone/runs/pipescope-1f1b-adapipe.trace.json";
    app.note = Some(note.to_string());
    let screen = render(&mut app, 120, 40).to_string();
    assert!(
        status_rows(&screen, 3).contains("exported /home/someone"),
        "{screen}"
    );
    assert!(screen.contains("q quit"), "{screen}");
    act(&mut app, Action::ToggleMessages);
    assert_eq!(app.note.as_deref(), Some(note));
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("exported /home/someone") && !screen.contains("no messages"));
}

/// A typed chunk count the schedule ignores is answered in the engine's words.
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
    let screen = render(&mut app, 120, 40).to_string();
    assert!(
        status_rows(&screen, 3).contains("chunks 50 changes nothing here"),
        "{screen}"
    );
}

const LONG_ERROR: &str = "a very long error message that says many things about why this \
    did not work, with a path /home/someone/very/long/path/presets/mine.toml:3:9 and more \
    words after it to wrap several rows at eighty columns wide";

/// At 80x24 a long message takes one line of its own, cut at a word with "… ! shows all",
/// above the hints' line: it no longer wraps over three rows and pushes the panels up (the
/// Gantt and the memory rows keep their place). In compare mode the B line that repeats it
/// is cut with an ellipsis too.
#[test]
fn a_long_error_gets_one_line_above_the_hints_at_80x24() {
    let mut app = solved_app("gpt3-175b-16k");
    app.error = Some(LONG_ERROR.into());
    let screen = render(&mut app, 80, 24).to_string();
    let rows: Vec<&str> = screen.lines().collect();
    let (msg, hints) = (rows[rows.len() - 2], rows[rows.len() - 1]);
    assert!(
        msg.contains("✗ a very long error") && msg.contains("… ! shows all"),
        "{screen}"
    );
    assert!(
        hints.contains("q quit") && !hints.contains("error"),
        "{screen}"
    );
    // The row above the message is the panels' bottom border.
    assert!(rows[rows.len() - 3].contains("└"), "{screen}");
    insta::assert_snapshot!("long_error_80x24", screen);
    act(&mut app, Action::ToggleCompare);
    app.error = Some(LONG_ERROR.into());
    let screen = render(&mut app, 80, 24).to_string();
    let b = screen.lines().nth(1).unwrap_or_default().to_string();
    assert!(b.contains("a very long") && b.contains('…'), "{screen}");
    insta::assert_snapshot!("long_error_compare_80x24", screen);
}
