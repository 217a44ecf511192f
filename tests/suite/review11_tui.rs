//! Session 11's review of the TUI as a user finds it: the sweep view picks and edits a
//! parameter without being left (Tab / Shift-Tab, then ← → or digits).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use pipescope::tui::{Action, App, Effect, Field, update};

use crate::tui_common::{open_and_answer, solved_app, sweep_job};

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    update(app, Action::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// In the sweep view ↑↓ pick a row; Tab and ⇧Tab pick the parameter, and ← → edit it
/// there: the view stays open and sweeps the edited scenario.
#[test]
fn the_sweep_view_picks_and_edits_a_parameter_without_being_left() {
    let mut app = solved_app("gpt3-175b-16k");
    update(&mut app, Action::SelectField(Field::GlobalBatch));
    open_and_answer(&mut app);
    let effects = key(&mut app, KeyCode::Tab);
    assert_eq!(app.field, Field::SeqLen);
    assert!(
        sweep_job(&effects).is_none(),
        "picking a parameter edits nothing"
    );
    let seq = app.scenario.batch.seq_len;
    let effects = key(&mut app, KeyCode::Right);
    assert!(app.sweep.open);
    assert!(app.scenario.batch.seq_len > seq);
    let (_, inputs) = sweep_job(&effects).expect("the edit sweeps again");
    assert_eq!(inputs.base.batch.seq_len, app.scenario.batch.seq_len);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.field, Field::GlobalBatch);
    // ↑↓ still pick rows, not parameters.
    key(&mut app, KeyCode::Down);
    assert_eq!(app.field, Field::GlobalBatch);
}

/// The lesson edits its own p and m only (its panel says "lesson: p, m"): entering it
/// selects p, and ↑↓ move between p and m, so that ← → never edit the scenario under it
/// (they used to reach `tensor t` and change the explorer's scenario unseen).
#[test]
fn the_lesson_moves_between_its_own_p_and_m() {
    let mut app = solved_app("gpt3-175b-16k");
    update(&mut app, Action::SelectField(Field::Tp));
    update(&mut app, Action::ToggleLesson);
    assert_eq!(app.field, Field::Stages);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.field, Field::MicroBatches);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.field, Field::Stages);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.field, Field::MicroBatches);
    let tp = app.scenario.parallel.tp;
    for _ in 0..5 {
        key(&mut app, KeyCode::Down);
        key(&mut app, KeyCode::Right);
    }
    assert_eq!(app.scenario.parallel.tp, tp);
    // Out of the lesson, the whole panel again.
    update(&mut app, Action::ToggleLesson);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert!(!matches!(app.field, Field::Stages | Field::MicroBatches));
}
