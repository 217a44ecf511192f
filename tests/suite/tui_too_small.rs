//! A terminal below the minimum size shows only "terminal too small (q quits)": keys edit
//! nothing there (an edit would change the scenario unseen); q and Ctrl-C still quit.

use crate::tui_common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pipescope::tui::{Action, Effect, update};
use tui_common::{render, solved_app};

fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// At 40x12, `+ + s 7 ⏎ m o P w` used to step the selected field, cycle the schedule and the
/// model, type a value, open the sweep and the picker and save a preset, none of it shown.
#[test]
fn keys_do_nothing_while_the_terminal_is_too_small_except_quit() {
    let mut app = solved_app("gpt3-175b-16k");
    let screen = render(&mut app, 40, 12).to_string();
    assert!(screen.contains("terminal too small"), "{screen}");
    let before = app.scenario.clone();
    let keys = [
        KeyCode::Char('+'),
        KeyCode::Char('+'),
        KeyCode::Char('s'),
        KeyCode::Char('m'),
        KeyCode::Char('7'),
        KeyCode::Enter,
        KeyCode::Char('o'),
        KeyCode::Char('P'),
        KeyCode::Char('w'),
        KeyCode::Char('c'),
        KeyCode::Down,
    ];
    for code in keys {
        let effects = update(&mut app, key(code));
        assert!(effects.is_empty(), "{code:?}: {effects:?}");
    }
    assert_eq!(app.scenario, before);
    assert!(!app.sweep.open && app.preset_picker.is_none() && app.typing.is_none());
    // Back at a usable size the keys work again.
    render(&mut app, 80, 24);
    assert!(!update(&mut app, key(KeyCode::Char('s'))).is_empty());
    assert_ne!(app.scenario, before);
    // Too small again: q still quits.
    render(&mut app, 59, 24);
    let effects = update(&mut app, key(KeyCode::Char('q')));
    assert_eq!(effects, vec![Effect::Quit]);
}
