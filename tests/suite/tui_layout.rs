//! The layout field's one-line editor (docs/cli.md, "The terminal UI"): Enter opens it on
//! the layout's text, every key types into it (no global shortcut fires), the cursor keys
//! edit in place, Esc cancels, Enter applies a layout that parses and fits (the plan
//! re-solves) or shows the parser's column and reason and keeps the last good layout; an
//! empty text returns to the partition's split.

#![allow(clippy::unwrap_used)]

use crate::tui_common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pipescope::Strategy;
use pipescope::tui::{Action, Effect, Field, update};
use tui_common::{act, render, solved_app};

/// The llama fixture (80 layers on p 4) with a strategy that takes a given split.
fn app() -> pipescope::tui::App {
    let mut app = solved_app("llama2-70b-4k");
    app.scenario.plan.strategy = Strategy::Full;
    let effects = pipescope::tui::resolve(&mut app);
    tui_common::run_effects(&mut app, effects);
    act(&mut app, Action::SelectField(Field::Layout));
    app
}

fn key(app: &mut pipescope::tui::App, code: KeyCode) -> Vec<Effect> {
    update(app, Action::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn type_text(app: &mut pipescope::tui::App, text: &str) {
    for c in text.chars() {
        assert!(key(app, KeyCode::Char(c)).is_empty(), "{c:?}");
    }
}

fn edited(app: &pipescope::tui::App) -> String {
    app.layout_edit
        .as_ref()
        .map(|e| e.text())
        .unwrap_or_default()
}

const GOOD: &str = "Et*19|t*20|t*20|t*21L";

#[test]
fn enter_opens_the_editor_and_global_keys_type_into_it() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    assert_eq!(edited(&app), "");
    assert!(app.details.is_none(), "Enter on layout opened the details");
    // q, ?, s, o and digits are characters here: nothing quits, opens or cycles.
    let schedule = app.scenario.plan.schedule;
    type_text(&mut app, "q?so1");
    assert!(!app.quit && !app.help && !app.sweep.open);
    assert_eq!(app.scenario.plan.schedule, schedule);
    assert_eq!(edited(&app), "q?so1");
    // Esc cancels: the layout stays as it was, the editor closes.
    key(&mut app, KeyCode::Esc);
    assert!(app.layout_edit.is_none());
    assert_eq!(app.scenario.plan.layout, None);
    // Outside the editor q quits again.
    assert_eq!(key(&mut app, KeyCode::Char('q')), vec![Effect::Quit]);
}

/// A bracketed paste goes in whole at the cursor (its line break left out); outside the
/// editor a paste does nothing (no key of it runs a command).
#[test]
fn a_paste_goes_in_at_the_cursor() {
    let mut app = app();
    let before = app.scenario.clone();
    assert!(update(&mut app, Action::Paste("q\n".into())).is_empty());
    assert!(!app.quit && app.scenario == before);
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, "EL");
    key(&mut app, KeyCode::Left);
    assert!(update(&mut app, Action::Paste("t*19|t*20|t*20|t*21\n".into())).is_empty());
    assert_eq!(edited(&app), GOOD);
    assert_eq!(app.layout_edit.as_ref().unwrap().cursor(), GOOD.len() - 1);
}

#[test]
fn the_cursor_keys_edit_in_place() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, "Et|tL");
    key(&mut app, KeyCode::Left);
    key(&mut app, KeyCode::Left);
    type_text(&mut app, "*2");
    assert_eq!(edited(&app), "Et|*2tL");
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Delete);
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Backspace);
    assert_eq!(edited(&app), "|*2tL");
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Backspace);
    assert_eq!(edited(&app), "|*2t");
    // ^U clears; Up, Down, Tab and F-keys do nothing.
    for code in [KeyCode::Up, KeyCode::Down, KeyCode::Tab, KeyCode::F(2)] {
        key(&mut app, code);
    }
    assert_eq!(edited(&app), "|*2t");
    assert_eq!(app.field, Field::Layout);
    update(
        &mut app,
        Action::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    assert_eq!(edited(&app), "");
}

#[test]
fn a_good_layout_applies_and_resolves_and_an_empty_one_returns_to_the_partition() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, GOOD);
    let generation = app.generation;
    let effects = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(effects.first(), Some(Effect::Solve(job)) if job.scenarios[0].plan.layout.is_some()),
        "{effects:?}"
    );
    assert!(app.generation > generation);
    assert!(app.layout_edit.is_none() && app.error.is_none());
    assert_eq!(
        app.scenario.plan.layout.as_ref().map(|l| l.text()),
        Some(GOOD)
    );
    assert_eq!(Field::Layout.value(&app.scenario), GOOD);
    // Reopened on its text; cleared and applied, the partition splits again.
    key(&mut app, KeyCode::Enter);
    assert_eq!(edited(&app), GOOD);
    update(
        &mut app,
        Action::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    let effects = key(&mut app, KeyCode::Enter);
    assert!(matches!(effects.first(), Some(Effect::Solve(_))));
    assert_eq!(app.scenario.plan.layout, None);
    assert!(app.note.as_deref().unwrap_or("").contains("partition"));
}

#[test]
fn a_bad_layout_shows_the_column_and_reason_and_keeps_the_last_good_one() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, GOOD);
    key(&mut app, KeyCode::Enter);
    let good = app.scenario.clone();
    for (bad, column) in [
        ("Et*19|t*2x|t*20|t*21L", 10),    // not a layer
        ("Et*19|t*20|t*20L", 17),         // three stages for four
        ("Et*20|t*20|t*20|t*21L", 22),    // 81 layers for 80
        ("(t|)*99999999999999999999", 1), // a count past any limit
        ("t*", 2),                        // `*` without a count
    ] {
        key(&mut app, KeyCode::Enter);
        update(
            &mut app,
            Action::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
        );
        type_text(&mut app, bad);
        let effects = key(&mut app, KeyCode::Enter);
        assert!(effects.is_empty(), "{bad}: {effects:?}");
        let err = app.error.clone().unwrap_or_default();
        assert!(err.starts_with("layout: column "), "{bad}: {err}");
        // The editor stays open on the text, the cursor near the column named.
        assert_eq!(edited(&app), bad);
        let cursor = app.layout_edit.as_ref().unwrap().cursor();
        let named: usize = err
            .split("column ")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert_eq!(cursor, named - 1, "{bad}: {err}");
        let _ = column;
        // The last good layout is the one in force.
        assert_eq!(app.scenario, good, "{bad}");
        key(&mut app, KeyCode::Esc);
        assert!(app.error.is_none());
    }
    // A strategy that searches its own split refuses a layout, saying so.
    app.scenario.plan.strategy = Strategy::AdaPipe;
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    let err = app.error.clone().unwrap_or_default();
    assert!(
        err.contains("a layout needs a strategy that keeps its split; adapipe chooses its own"),
        "{err}"
    );
}

#[test]
fn the_help_overlay_lists_the_editor_keys() {
    let mut app = app();
    act(&mut app, Action::ToggleHelp);
    act(&mut app, Action::FilterHelp);
    type_text(&mut app, "Layout editor");
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("Layout editor (⏎ on layout)"), "{screen}");
    // The keys' column, then the words.
    assert!(
        screen.contains("← → Home ^A End ^E ⌫ Del ^U ⏎ Esc"),
        "{screen}"
    );
    for words in ["Esc cancels", "^U clears"] {
        assert!(screen.contains(words), "{words}: {screen}");
    }
}

#[test]
fn editor_with_an_error_80x24() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, "Et*19|t*2x|t*20|t*21L");
    key(&mut app, KeyCode::Enter);
    // The reason is shown whole while the editor is open (`!` would type into it), even at
    // 80x24 where other long messages take one line.
    let screen = render(&mut app, 80, 24).to_string();
    assert!(screen.contains("repeats a group)"), "{screen}");
    assert_snapshot!(screen);
}

#[test]
fn editor_open_200x60() {
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, GOOD);
    key(&mut app, KeyCode::Home);
    assert_snapshot!(render(&mut app, 200, 60));
}

/// End to end at 80x24: the editor in a real terminal takes `q` as a character (the UI does
/// not quit), shows a bad layout's column and reason, applies a good one, and `q` quits once
/// the editor is closed.
#[test]
fn in_tmux_the_layout_editor_keeps_q_and_applies_a_layout() {
    use crate::tmux_common::{Tmux, skip_without_tmux, temp_dir};
    if skip_without_tmux() {
        return;
    }
    let home = temp_dir("layout-e2e");
    let home_s = home.display().to_string();
    let t = Tmux::start(
        &["--strategy", "full", "-p", "4"],
        &[("XDG_CONFIG_HOME", &home_s), ("PIPESCOPE_FIXTURE", "1")],
        80,
        24,
    );
    t.wait_for("the first solve", |s| {
        s.contains("stages p") && s.contains("iter")
    });
    // From `stages p` down to `layout`.
    let down = Field::ALL.iter().position(|f| *f == Field::Layout).unwrap()
        - Field::ALL.iter().position(|f| *f == Field::Stages).unwrap();
    t.keys(&vec!["j"; down]);
    t.wait_text("│layout    – (none)");
    t.keys(&["Enter"]);
    t.wait_text("⏎ apply · Esc cancel");
    t.burst(&["-l", "Et*23|t*24|q"]);
    t.keys(&["Enter"]);
    let screen = t.wait_text("column 12: 'q' is not a layer");
    assert!(t.alive(), "{screen}");
    // ^U clears; a layout of the 96 layers on 4 stages applies and solves.
    t.keys(&["C-u"]);
    t.burst(&["-l", "Et*23|t*24|t*24|t*25L"]);
    t.keys(&["Enter"]);
    t.wait_text("layout applied, 4 stages");
    let screen = t.wait_text("│layout    Et*23|t*24|…");
    assert!(screen.contains("│partition – (layout)"), "{screen}");
    t.keys(&["q"]);
    t.wait_exit(crate::tmux_common::TIMEOUT);
    assert!(!t.alive());
    let _ = std::fs::remove_dir_all(home);
}

/// The cursor is drawn: its cell stands out from the selected (reversed) row, at the start
/// after Home and after the text's end after End.
#[test]
fn the_cursor_cell_stands_out_from_the_row() {
    use ratatui::style::Modifier;
    let mut app = app();
    key(&mut app, KeyCode::Enter);
    type_text(&mut app, "Et|tL");
    for (code, at) in [(KeyCode::Home, 0u16), (KeyCode::End, 5)] {
        key(&mut app, code);
        let backend = render(&mut app, 120, 40);
        let buf = backend.buffer();
        let area = buf.area;
        let (x0, y) = (0..area.height)
            .find_map(|y| {
                let row: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
                row.find("│layout    ")
                    .map(|i| (row[..i].chars().count() as u16 + 11, y))
            })
            .expect("the layout row");
        let reversed = |x: u16| buf[(x, y)].modifier.contains(Modifier::REVERSED);
        assert!(
            !reversed(x0 + at),
            "{code:?}: the cursor cell is not set apart"
        );
        assert!(
            buf[(x0 + at, y)].modifier.contains(Modifier::UNDERLINED),
            "{code:?}"
        );
        let other = if at == 0 { 1 } else { 0 };
        assert!(reversed(x0 + other), "{code:?}: the rest of the row");
    }
}
