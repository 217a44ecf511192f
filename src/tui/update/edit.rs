//! Handlers for editing the scenario: moving between parameters, stepping them, typing
//! numbers.

use super::resolve;
use crate::Strategy;
use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Mode};
use crate::tui::fields::{self, Field};
use crate::tui::lesson;

/// Longest number the user may type.
const MAX_TYPED: usize = 12;

/// Applies an editing action.
pub(super) fn edit(app: &mut App, action: Action) -> Vec<Effect> {
    if let Some(effects) = lesson_edit(app, &action) {
        return effects;
    }
    match action {
        Action::PrevField => move_field(app, -1),
        Action::NextField => move_field(app, 1),
        Action::SelectField(field) => {
            app.field = field;
            app.typing = None;
            app.layout_edit = None;
            Vec::new()
        }
        Action::Decrease => step_field(app, app.field, -1),
        Action::Increase => step_field(app, app.field, 1),
        Action::CycleSchedule(d) => cycle_field(app, Field::Schedule, d),
        Action::CycleStrategy(d) => cycle_field(app, Field::Strategy, d),
        Action::CycleModel(d) => cycle_field(app, Field::Model, d),
        Action::CycleGpu(d) => cycle_field(app, Field::Gpu, d),
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
    // The cycle runs over the rows shown (the expert rows only for a mixture of experts);
    // from a field no longer shown it goes to its neighbour in the full list. In the lesson
    // only its own sizes, p and m, take edits (the panel's title says so): the cycle is
    // those two, so that ← → never edit a scenario the lesson does not show.
    let fields = if matches!(app.mode, Mode::Lesson { .. }) {
        vec![Field::Stages, Field::MicroBatches]
    } else {
        Field::shown_in(&app.scenario)
    };
    let n = fields.len().max(1);
    let j = match fields.iter().position(|f| *f == app.field) {
        Some(i) if delta > 0 => (i + 1) % n,
        Some(i) => (i + n - 1) % n,
        None => {
            let at = Field::ALL.iter().position(|f| *f == app.field).unwrap_or(0);
            let after = fields
                .iter()
                .position(|f| Field::ALL.iter().position(|g| g == f).unwrap_or(0) > at)
                .unwrap_or(0);
            if delta > 0 {
                after
            } else {
                (after + n - 1) % n
            }
        }
    };
    app.field = fields.get(j).copied().unwrap_or(Field::Model);
    app.typing = None;
    Vec::new()
}

fn type_char(app: &mut App, c: char) {
    if !app.field.numeric() {
        // Said over an earlier edit's error, which would hide it on the status line.
        app.error = None;
        app.note = Some(format!(
            "{} takes no number: ← → (or +/-) step through its choices",
            app.field.label()
        ));
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

/// Enter: applies a typed number or the layout being edited; on the layout field, opens its
/// editor; otherwise opens the details of the selection.
fn commit(app: &mut App) -> Vec<Effect> {
    if app.layout_edit.is_some() {
        return super::layout::commit(app);
    }
    if app.field == Field::Layout && app.typing.is_none() {
        return super::layout::open(app);
    }
    match app.typing.take() {
        Some(text) if !text.is_empty() => {
            let before = app.scenario.clone();
            let result = fields::set_number(&mut app.scenario, app.field, &text)
                .and_then(|()| refuse_invalid(&before, &app.scenario, app.field, &text));
            match result {
                Ok(()) => {
                    app.note = fields::unused_note(&app.scenario, app.field);
                    resolve(app)
                }
                Err(e) => {
                    // The field goes back to its last good value, so that the next edit is
                    // solved (and answered) on its own.
                    app.scenario = before;
                    app.error = Some(e);
                    Vec::new()
                }
            }
        }
        Some(_) => Vec::new(),
        None => super::view::toggle_details(app),
    }
}

/// A typed number that turns a valid scenario into one the engine would refuse (a global
/// batch whose micro-batch count is out of range, more stages than blocks): the error names
/// the field the user typed into first, then what it made invalid, and the value kept.
/// A scenario that was already invalid (loaded from elsewhere) takes any edit: it may be the
/// way out.
fn refuse_invalid(
    before: &crate::Scenario,
    after: &crate::Scenario,
    field: Field,
    text: &str,
) -> Result<(), String> {
    if before.validate().is_err() {
        return Ok(());
    }
    let Err(e) = after.validate() else {
        return Ok(());
    };
    Err(format!(
        "{label} = '{text}' refused: it makes {} = {} ({}); {label} stays {}",
        e.field,
        e.value,
        e.allowed,
        field.value(before),
        label = field.label(),
    ))
}

/// In the lesson, `stages p` and `micro m` edit the lesson's own sizes (← → or a typed
/// number); None when `action` is not such an edit.
fn lesson_edit(app: &mut App, action: &Action) -> Option<Vec<Effect>> {
    if !matches!(app.mode, Mode::Lesson { .. }) {
        return None;
    }
    let (max, current) = match app.field {
        Field::Stages => (lesson::MAX_P, app.lesson_size.0),
        Field::MicroBatches => (lesson::MAX_M, app.lesson_size.1),
        _ => return None,
    };
    let value = match action {
        Action::Increase => current + 1,
        Action::Decrease => current.saturating_sub(1),
        Action::Commit => match app.typing.take().map(|t| t.parse::<u32>()) {
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                app.error = Some(format!(
                    "{}: a whole number from 1 to {max}",
                    app.field.label()
                ));
                return Some(Vec::new());
            }
            None => return None,
        },
        _ => return None,
    };
    let asked = value;
    let value = value.clamp(1, max);
    // Said where the value reaches a limit, and where the one asked for is past it (also
    // when it stays where it was: a typed 1000 at p 16).
    if asked != value || (value != current && (value == max || value == 1)) {
        app.note = Some(format!(
            "{} {value} (the lesson takes 1 to {max})",
            app.field.label()
        ));
    }
    if app.field == Field::Stages {
        app.lesson_size.0 = value;
    } else {
        app.lesson_size.1 = value;
    }
    super::modes::refresh_lesson(app);
    Some(Vec::new())
}

/// `s a m g` (and capitals): steps a field from anywhere and says which one it changed.
fn cycle_field(app: &mut App, field: Field, delta: i32) -> Vec<Effect> {
    let effects = step_field(app, field, delta);
    let said = format!("{} → {}", field.label(), field.value(&app.scenario));
    app.note = Some(match app.note.take() {
        Some(more) => format!("{said}; {more}"),
        None => said,
    });
    effects
}

fn step_field(app: &mut App, field: Field, delta: i32) -> Vec<Effect> {
    app.field = field;
    app.typing = None;
    app.note = fields::step(&mut app.scenario, field, delta, &app.choices);
    if field == Field::Strategy && app.scenario.plan.strategy == Strategy::Named {
        let units = &app.scenario.plan.recompute_units;
        app.note = Some(if units.is_empty() {
            "named recomputes the units picked with u (none yet: it keeps every unit)".into()
        } else {
            format!("named recomputes {} (u picks others)", units.join(", "))
        });
    }
    resolve(app)
}

/// `u` and the picker's keys: open or close it, move its cursor, toggle a unit (which
/// makes the strategy `named` when it is not, and says so).
pub(super) fn picker(app: &mut App, action: Action) -> Vec<Effect> {
    let entries = app
        .solved
        .as_ref()
        .map(crate::tui::picker::entries)
        .unwrap_or_default();
    match action {
        Action::TogglePicker => {
            app.picker = match (app.picker, entries.is_empty()) {
                (Some(_), _) => None,
                (None, true) => {
                    app.note = Some("the units are known once the scenario is solved".into());
                    None
                }
                (None, false) => Some(0),
            };
            Vec::new()
        }
        Action::PickerMove(delta) => {
            if let Some(i) = app.picker {
                let n = entries.len().max(1) as i64;
                app.picker = Some((i as i64 + i64::from(delta)).rem_euclid(n) as usize);
            }
            Vec::new()
        }
        Action::PickerToggle => {
            let Some(i) = app.picker else {
                return Vec::new();
            };
            let Some(entry) = entries.get(i) else {
                return Vec::new();
            };
            let on = crate::tui::picker::toggle(&mut app.scenario, &entries, i);
            let what = format!(
                "{} {}",
                entry.qualified(),
                if on { "recomputed" } else { "kept" }
            );
            let was = app.scenario.plan.strategy;
            app.note = Some(if was == Strategy::Named {
                what
            } else {
                app.scenario.plan.strategy = Strategy::Named;
                format!("{what}; strategy {was} → named (it recomputes the units picked)")
            });
            resolve(app)
        }
        _ => Vec::new(),
    }
}
