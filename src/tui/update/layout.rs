//! The layout field's editor: Enter on the field opens a one-line editor on the layout's
//! text; while it is open every key goes to it (a `q` is a character, not Quit); Enter
//! parses the text with the engine's parser and checks it against the scenario, and applies
//! it (the plan re-solves) or shows the parser's column and reason with the cursor put
//! there, the last good layout staying in force; Esc closes it and changes nothing. An empty
//! text returns to the partition's split.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::resolve;
use crate::scenario::{Partition, PipelineLayout};
use crate::tui::action::{Action, Effect};
use crate::tui::app::App;
use crate::tui::keymap;
use crate::tui::line_edit::{LineEdit, MAX_CHARS};

/// What a key press means while the editor is open: its own keys, a character typed, ^C
/// and ^Z as everywhere; nothing for any other key.
pub(super) fn editor_action(key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if let Some(a) = keymap::context_action_for(keymap::EDITOR_KEYS, key) {
        return Some(a);
    }
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if plain => Some(Action::InsertChar(c)),
        _ if !plain => {
            keymap::action_for(key).filter(|a| matches!(a, Action::Quit | Action::Suspend))
        }
        _ => None,
    }
}

/// Opens the editor on the scenario's layout (empty when the partition splits).
pub(super) fn open(app: &mut App) -> Vec<Effect> {
    let text = app
        .scenario
        .plan
        .layout
        .as_ref()
        .map(|l| l.text().to_string())
        .unwrap_or_default();
    app.layout_edit = Some(LineEdit::new(&text));
    app.typing = None;
    app.error = None;
    Vec::new()
}

/// A cursor move or deletion, or a typed character.
pub(super) fn edit(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(e) = app.layout_edit.as_mut() else {
        app.dirty = false;
        return Vec::new();
    };
    match action {
        Action::EditLine(op) => {
            e.apply(op);
        }
        Action::InsertChar(c) => {
            if !e.insert(c) && !c.is_control() {
                app.note = Some(format!("layout: at most {MAX_CHARS} characters"));
            }
        }
        Action::Paste(text) => {
            // Line breaks and other control characters are left out without a word (a
            // copied line often ends in one); text past the limit is said.
            if !e.insert_str(&text) && e.chars().len() >= MAX_CHARS {
                app.note = Some(format!(
                    "layout: the paste was cut at {MAX_CHARS} characters"
                ));
            }
        }
        _ => app.dirty = false,
    }
    Vec::new()
}

/// Esc: closes the editor; the layout stays as it was.
pub(super) fn cancel(app: &mut App) {
    app.layout_edit = None;
    app.error = None;
    app.note = Some("layout unchanged".into());
}

/// Enter: applies the text as the layout (empty: none), or says where it goes wrong.
pub(super) fn commit(app: &mut App) -> Vec<Effect> {
    let Some(edit) = app.layout_edit.as_mut() else {
        return Vec::new();
    };
    let text = edit.text();
    // The error names the column; the text itself is on the editor's line.
    let mut next = app.scenario.clone();
    if text.trim().is_empty() {
        next.plan.layout = None;
    } else {
        match PipelineLayout::parse(&text) {
            Ok(layout) => next.plan.layout = Some(layout),
            Err(e) => {
                edit.set_cursor(e.column.saturating_sub(1));
                app.error = Some(format!("layout: {e}"));
                return Vec::new();
            }
        }
    }
    // A layout is the whole split: partition balanced gives way to it.
    let gave_way = next.plan.layout.is_some() && next.plan.partition != Partition::Even;
    if gave_way {
        next.plan.partition = Partition::Even;
    }
    if let Err(e) = crate::plan::split::check_layout(&next) {
        if let Some(column) = column_of(&e.allowed) {
            edit.set_cursor(column.saturating_sub(1));
        }
        app.error = Some(format!("layout: {}", e.allowed));
        return Vec::new();
    }
    app.scenario = next;
    app.layout_edit = None;
    app.error = None;
    let stages = app.scenario.plan.layout.as_ref().map(|l| l.stages().len());
    app.note = Some(match stages {
        None => format!(
            "layout cleared: the partition splits ({})",
            app.scenario.plan.partition
        ),
        Some(n) if gave_way => {
            format!("layout applied, {n} stages (partition even: the layout is the whole split)")
        }
        Some(n) => format!("layout applied, {n} stages"),
    });
    resolve(app)
}

/// The column an engine message points at (`column 7: ...`), if it does.
fn column_of(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("column ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}
