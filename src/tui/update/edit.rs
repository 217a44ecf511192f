//! Handlers for editing the scenario: moving between parameters, stepping them, typing
//! numbers.

use super::resolve;
use crate::tui::action::{Action, Effect};
use crate::tui::app::App;
use crate::tui::fields::{self, Field};

/// Longest number the user may type.
const MAX_TYPED: usize = 12;

/// Applies an editing action.
pub(super) fn edit(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::PrevField => move_field(app, -1),
        Action::NextField => move_field(app, 1),
        Action::SelectField(field) => {
            app.field = field;
            app.typing = None;
            Vec::new()
        }
        Action::Decrease => step_field(app, app.field, -1),
        Action::Increase => step_field(app, app.field, 1),
        Action::CycleSchedule(d) => step_field(app, Field::Schedule, d),
        Action::CycleStrategy(d) => step_field(app, Field::Strategy, d),
        Action::CycleModel(d) => step_field(app, Field::Model, d),
        Action::CycleGpu(d) => step_field(app, Field::Gpu, d),
        Action::Type(c) => {
            type_char(app, c);
            Vec::new()
        }
        Action::Backspace => {
            if let Some(t) = app.typing.as_mut() {
                t.pop();
            }
            Vec::new()
        }
        Action::Commit => commit(app),
        _ => Vec::new(),
    }
}

fn move_field(app: &mut App, delta: i32) -> Vec<Effect> {
    let i = Field::ALL.iter().position(|f| *f == app.field).unwrap_or(0);
    let n = Field::ALL.len();
    let j = if delta > 0 {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    app.field = Field::ALL[j];
    app.typing = None;
    Vec::new()
}

fn type_char(app: &mut App, c: char) {
    if !app.field.numeric() {
        app.note = Some(format!("{} takes no number: use ← →", app.field.label()));
    } else if app.typing.as_ref().is_some_and(|t| t.len() >= MAX_TYPED) {
        app.note = Some("number too long".into());
    } else {
        if app.typing.is_none() {
            // A new number: the previous edit's error and notes give way to it.
            app.error = None;
            app.note = None;
        }
        app.typing.get_or_insert_with(String::new).push(c);
    }
}

/// Enter: applies a typed number; without one, opens the details of the selection.
fn commit(app: &mut App) -> Vec<Effect> {
    match app.typing.take() {
        Some(text) if !text.is_empty() => {
            match fields::set_number(&mut app.scenario, app.field, &text) {
                Ok(()) => resolve(app),
                Err(e) => {
                    app.error = Some(e);
                    Vec::new()
                }
            }
        }
        Some(_) => Vec::new(),
        None => super::view::toggle_details(app),
    }
}

fn step_field(app: &mut App, field: Field, delta: i32) -> Vec<Effect> {
    app.field = field;
    app.typing = None;
    app.note = fields::step(&mut app.scenario, field, delta, &app.choices);
    resolve(app)
}
