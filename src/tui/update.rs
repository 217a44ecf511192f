//! The pure update function: applies one [`Action`] to the [`App`] and returns the
//! [`Effect`]s the runner must carry out. No I/O, no threads, no clock.
//!
//! [`update`] only routes: each group of actions has its handler file, `edit` (parameters
//! and typing), `view` (stages, zoom, mouse, theme, details), `modes` (help, compare, story,
//! close) and `results` (solves and saves coming back).

mod edit;
mod layout;
mod modes;
mod results;
mod sweep;
mod view;

use crossterm::event::KeyModifiers;

use super::action::{Action, Effect, Job, JobKind};
use super::app::{App, Mode, STORY};
use super::keymap;
use super::update_files::{reloaded, save};

/// Applies `action` to `app`.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let key = matches!(action, Action::Key(_));
    // The scenario before a user's action, kept for `U` when the action changes it (the
    // actions a key leads to run inside it and are the same edit).
    let before = (!app.applying && undoable(&action)).then(|| {
        app.applying = true;
        app.scenario.clone()
    });
    let mut effects = dispatch(app, action);
    if let Some(before) = before {
        app.applying = false;
        if !std::mem::take(&mut app.undid) && before != app.scenario {
            if app.undo.len() >= UNDO_DEPTH {
                app.undo.remove(0);
            }
            app.undo.push(before);
        }
    }
    if !key {
        // An edit that changed what the sweep answers cancels it (a key's action already
        // went through here).
        effects.extend(sweep::after_edit(app));
        effects.extend(sweep::ahead(app));
    }
    effects
}

/// The key's action in the context open (help, messages or units picker overlay, sweep
/// view, details, lesson), if that binds it.
fn context_action(app: &App, key: crossterm::event::KeyEvent) -> Option<Action> {
    if app.help {
        keymap::context_action_for(keymap::HELP_KEYS, key)
    } else if app.messages {
        keymap::context_action_for(keymap::MESSAGE_KEYS, key)
    } else if app.picker.is_some() {
        keymap::context_action_for(keymap::PICKER_KEYS, key)
    } else if app.sweep.open && app.typing.is_none() {
        keymap::context_action_for(keymap::SWEEP_KEYS, key)
    } else if app.details.is_some() && app.typing.is_none() {
        keymap::context_action_for(keymap::DETAILS_KEYS, key)
    } else if matches!(app.mode, super::app::Mode::Lesson { .. }) {
        keymap::context_action_for(keymap::LESSON_KEYS, key)
    } else {
        None
    }
}

fn dispatch(app: &mut App, action: Action) -> Vec<Effect> {
    app.dirty = true;
    if clears_note(&action) {
        app.note = None;
    }
    match action {
        Action::Quit => {
            app.quit = true;
            vec![Effect::Quit]
        }
        // Below the minimum size the screen shows only "terminal too small (q quits)": a
        // key that edited there would change the scenario unseen.
        Action::Key(key) if too_small(app) => {
            match keymap::action_for(key).filter(|a| matches!(a, Action::Quit | Action::Suspend)) {
                Some(a) => update(app, a),
                None => {
                    app.dirty = false;
                    Vec::new()
                }
            }
        }
        Action::Key(key) if app.layout_edit.is_some() => match layout::editor_action(key) {
            Some(a) => update(app, a),
            None => {
                app.dirty = false;
                Vec::new()
            }
        },
        Action::Key(key) if app.preset_picker.is_some() && !app.help => {
            match super::presets::key(app, key) {
                Some(effects) => effects,
                None => match keymap::action_for(key) {
                    Some(a) => update(app, a),
                    None => {
                        app.dirty = false;
                        Vec::new()
                    }
                },
            }
        }
        Action::Key(key) => {
            if app.help && app.help_typing && !key.modifiers.contains(KeyModifiers::CONTROL) {
                return modes::help_filter_key(app, key.code);
            }
            match context_action(app, key).or_else(|| keymap::action_for(key)) {
                Some(a) => update(app, a),
                None => {
                    app.dirty = false;
                    Vec::new()
                }
            }
        }
        Action::Close | Action::ToggleHelp | Action::FilterHelp => modes::overlay(app, action),
        Action::ToggleCompare | Action::CycleCompare => modes::compare(app, action),
        Action::ToggleStory | Action::StoryNext | Action::StoryPrev => modes::story(app, action),
        Action::ToggleLesson => modes::toggle_lesson(app),
        Action::OpenSweep | Action::SweepSelect(_) | Action::SweepLoad => sweep::sweep(app, action),
        Action::Sweep(e) => {
            sweep::event(app, *e);
            Vec::new()
        }
        Action::OpenPresets => super::presets::open(app),
        Action::TogglePicker | Action::PickerMove(_) | Action::PickerToggle => {
            edit::picker(app, action)
        }
        Action::ToggleMessages => {
            app.messages = !app.messages;
            app.messages_scroll = 0;
            Vec::new()
        }
        Action::MessagesScroll(delta) => {
            let s = i32::from(app.messages_scroll) + delta;
            app.messages_scroll = u16::try_from(s.clamp(0, 1000)).unwrap_or(0);
            Vec::new()
        }
        Action::LessonScroll(delta) => {
            let s = i32::from(app.lesson_scroll) + delta;
            app.lesson_scroll = u16::try_from(s.clamp(0, 100)).unwrap_or(0);
            Vec::new()
        }
        Action::HelpScroll(delta) => {
            // Clamped at the end, so that PgUp after too many PgDn scrolls at once.
            let end = i32::from(crate::tui::view::help::max_scroll(app, app.size));
            let s = i32::from(app.help_scroll) + delta;
            app.help_scroll = u16::try_from(s.clamp(0, end)).unwrap_or(0);
            Vec::new()
        }
        Action::PrevField
        | Action::NextField
        | Action::SelectField(_)
        | Action::Decrease
        | Action::Increase
        | Action::CycleSchedule(_)
        | Action::CycleStrategy(_)
        | Action::CycleModel(_)
        | Action::CycleGpu(_)
        | Action::Type(_)
        | Action::Backspace
        | Action::Commit => edit::edit(app, action),
        Action::EditLine(_) | Action::InsertChar(_) | Action::Paste(_) => layout::edit(app, action),
        Action::SavePreset => save(app),
        Action::Undo => undo(app),
        Action::Export => super::export::export(app),
        Action::Exported(result) => super::export::exported(app, result),
        Action::Reloaded(reload) => reloaded(app, *reload),
        Action::Solved(result) => {
            results::solved(app, result);
            Vec::new()
        }
        Action::Saved(result) => {
            results::saved(app, result);
            Vec::new()
        }
        other => view::view(app, other),
    }
}

/// How many edits `U` can undo.
const UNDO_DEPTH: usize = 100;

/// Whether `action` is the user's and may edit the scenario (the worker's, the watcher's
/// and the terminal's reports are not undone: a reloaded preset file is the file's edit).
fn undoable(action: &Action) -> bool {
    !matches!(
        action,
        Action::Undo
            | Action::Solved(_)
            | Action::Sweep(_)
            | Action::Reloaded(_)
            | Action::Saved(_)
            | Action::Exported(_)
            | Action::Resize(..)
            | Action::Scroll(..)
    )
}

/// `U`: the scenario before the last edit, solved again (and swept, with the sweep view
/// open); a note says so, or that there is nothing to undo.
fn undo(app: &mut App) -> Vec<Effect> {
    let Some(previous) = app.undo.pop() else {
        app.note = Some("nothing to undo".into());
        return Vec::new();
    };
    app.scenario = previous;
    app.undid = true;
    app.typing = None;
    app.layout_edit = None;
    app.note = Some(match app.undo.len() {
        0 => "undid the last edit".to_string(),
        n => format!("undid the last edit ({n} more to undo)"),
    });
    resolve(app)
}

/// Whether the terminal is below the size the views need (they show only a message then).
fn too_small(app: &App) -> bool {
    let (width, height) = app.size;
    super::view::layout::too_small(ratatui::layout::Rect::new(0, 0, width, height))
}

/// A note is a passing remark: the next thing the user does replaces it (a scroll or a
/// click that hits nothing keeps it, as does anything from the worker or the watcher).
fn clears_note(action: &Action) -> bool {
    !matches!(
        action,
        Action::Solved(_)
            | Action::Sweep(_)
            | Action::Reloaded(_)
            | Action::Saved(_)
            | Action::Exported(_)
            | Action::ToggleMessages
            | Action::MessagesScroll(_)
            | Action::Resize(..)
            | Action::Key(_)
            | Action::Scroll(..)
            | Action::Click(..)
    )
}

/// A new generation and the job that solves what the current mode shows.
pub fn resolve(app: &mut App) -> Vec<Effect> {
    app.generation += 1;
    app.solving = true;
    let mut scenarios = vec![app.scenario.clone()];
    let kind = match app.mode {
        Mode::Normal => JobKind::Main,
        Mode::Compare => {
            scenarios.push(app.pinned.clone().unwrap_or_else(|| app.scenario.clone()));
            JobKind::Compare
        }
        Mode::Lesson { .. } => JobKind::Main,
        Mode::Story { .. } => {
            for s in STORY {
                scenarios.push(s.scenario(&app.scenario));
            }
            JobKind::Story
        }
    };
    vec![Effect::Solve(Job {
        generation: app.generation,
        kind,
        scenarios,
    })]
}
