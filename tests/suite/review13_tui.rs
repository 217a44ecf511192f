//! Session 13's review of the TUI as a user finds it in tmux: a typed lesson size past its
//! limit is said, the sweep list's header is never cut inside a word, and the help's scroll
//! marks read as words.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pipescope::tui::{Action, App, Field};

use crate::tui_common::{act, open_and_answer, render, solved_app};

fn lesson() -> App {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleLesson);
    app
}

fn type_number(app: &mut App, text: &str) {
    for c in text.chars() {
        act(app, Action::Type(c));
    }
    act(app, Action::Commit);
}

/// The lesson takes p from 1 to 16: a typed 1000 at p 16 stays 16 and says why (it was
/// silently dropped: the note came only when the value changed), as a typed 20 at p 4 does.
#[test]
fn a_lesson_size_typed_past_its_limit_is_said_even_at_the_limit() {
    let mut app = lesson();
    assert_eq!(app.field, Field::Stages);
    type_number(&mut app, "20");
    assert_eq!(app.lesson_size.0, 16);
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("the lesson takes 1 to 16"), "{note}");
    app.note = None;
    type_number(&mut app, "1000");
    assert_eq!(app.lesson_size.0, 16);
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("the lesson takes 1 to 16"), "{note}");
    // A step up at the limit says it too.
    app.note = None;
    act(&mut app, Action::Increase);
    assert_eq!(app.lesson_size.0, 16);
    assert!(app.note.is_some());
    // 0 is taken as 1, and said.
    app.note = None;
    type_number(&mut app, "0");
    assert_eq!(app.lesson_size.0, 1);
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("the lesson takes 1 to 16"), "{note}");
}

/// The ranked list's header gives way to the page position ("1/40") by whole column
/// names: at 80x24 it read "iter    G… 1/40" and at 60x20 "ite… 1/40".
#[test]
fn the_sweep_list_header_is_not_cut_inside_a_word() {
    for (w, h) in [(60, 20), (80, 24), (100, 30)] {
        let mut app = solved_app("gpt3-175b-16k");
        open_and_answer(&mut app);
        let screen = render(&mut app, w, h).to_string();
        let header = screen
            .lines()
            .find(|l| l.contains("t×cp×p×d"))
            .unwrap_or_else(|| panic!("{w}x{h}: no list header\n{screen}"));
        assert!(!header.contains('…'), "{w}x{h}: {header}\n{screen}");
    }
}

/// The help's title says where the page is with its arrows apart from the dot before
/// them ("· ↑↓ 12–31 of 66", not "·↑↓").
#[test]
fn the_help_title_scroll_marks_stand_apart() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleHelp);
    act(&mut app, Action::HelpScroll(5));
    let screen = render(&mut app, 80, 24).to_string();
    assert!(screen.contains("· ↑↓ 6–"), "{screen}");
    assert!(!screen.contains("·↑"), "{screen}");
}

/// A digit typed on a field that takes none says so, over an earlier edit's error: in the
/// sweep view a refused `tensor t = '0'` stayed on the status line while digits typed on
/// `gpu` did nothing visible.
#[test]
fn a_digit_on_a_field_without_numbers_is_said_over_an_earlier_error() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::SelectField(Field::Tp));
    type_number(&mut app, "0");
    assert!(app.error.is_some());
    act(&mut app, Action::SelectField(Field::Gpu));
    act(&mut app, Action::Type('9'));
    let screen = render(&mut app, 100, 30).to_string();
    assert!(screen.contains("gpu takes no number"), "{screen}");
    assert!(!screen.contains("tensor t = '0'"), "{screen}");
}

/// A model name longer than the value column starts right after its label, so that it reads
/// whole at 80 columns: `llama3.1-405b` read `llama3.1-40…`, `qwen3-235b-a22b`
/// `qwen3-235b-…`.
#[test]
fn a_long_model_name_reads_whole_in_the_parameters_panel_at_80_columns() {
    for name in ["llama3.1-405b", "qwen3-235b-a22b"] {
        let mut app = solved_app("gpt3-175b-16k");
        app.scenario.model.name = name.to_string();
        let screen = render(&mut app, 80, 24).to_string();
        let row = screen
            .lines()
            .find(|l| l.contains("│model"))
            .unwrap_or_else(|| panic!("no model row\n{screen}"));
        assert!(row.contains(&format!("model {name}")), "{row}");
        // The other rows keep their column.
        assert!(screen.contains("│gpu       a100-80gb"), "{screen}");
    }
}

/// `U` undoes the last edit, then the one before, and says when there is nothing left; a
/// key's edit is one step (not the actions it leads to), and an action that edits nothing
/// is none.
#[test]
fn u_undoes_the_edits_one_by_one() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key = |app: &mut App, c: char| {
        act(
            app,
            Action::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
        );
    };
    let mut app = solved_app("gpt3-175b-16k");
    let start = app.scenario.clone();
    act(&mut app, Action::SelectField(Field::Stages));
    key(&mut app, '+');
    assert_eq!(app.scenario.parallel.pp, 9);
    act(&mut app, Action::SelectField(Field::MicroBatches));
    type_number(&mut app, "32");
    assert_eq!(app.scenario.batch.micro_batches, 32);
    // Moving between fields and opening help edit nothing: not steps to undo.
    key(&mut app, 'j');
    key(&mut app, '?');
    key(&mut app, '?');
    key(&mut app, 'U');
    assert_eq!(app.scenario.batch.micro_batches, 64);
    assert_eq!(app.scenario.parallel.pp, 9);
    assert!(app.note.clone().unwrap_or_default().contains("undid"));
    key(&mut app, 'U');
    assert_eq!(app.scenario, start);
    key(&mut app, 'U');
    assert_eq!(app.scenario, start);
    assert_eq!(app.note.as_deref(), Some("nothing to undo"));
    // The undone scenario is solved again.
    let screen = render(&mut app, 100, 30).to_string();
    assert!(screen.contains("stages p  8"), "{screen}");
}
