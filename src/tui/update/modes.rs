//! Handlers for overlays and modes: help, Esc, compare and story.

use crossterm::event::KeyCode;

use super::resolve;
use crate::plan::Strategy;
use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Mode, STORY};
use crate::tui::fields::Field;
use crate::tui::lesson::{self, LESSON};

/// Longest help filter.
const MAX_QUERY: usize = 32;

/// Esc, `?` and `/`.
pub(super) fn overlay(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Close => close(app),
        Action::ToggleHelp => {
            app.help = !app.help;
            app.help_scroll = 0;
            app.help_query.clear();
            app.help_typing = false;
            Vec::new()
        }
        Action::FilterHelp => {
            if app.help {
                app.help_typing = true;
            } else {
                app.note = Some("/ filters the help: press ? first".into());
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// Esc closes the innermost thing open.
fn close(app: &mut App) -> Vec<Effect> {
    if app.layout_edit.is_some() {
        super::layout::cancel(app);
    } else if app.help {
        app.help = false;
        app.help_query.clear();
        app.help_typing = false;
    } else if app.messages {
        app.messages = false;
    } else if app.picker.is_some() {
        app.picker = None;
    } else if app.typing.is_some() {
        app.typing = None;
    } else if app.sweep.open {
        app.sweep.open = false;
    } else if app.details.is_some() {
        app.details = None;
    } else if app.mode != Mode::Normal {
        app.mode = Mode::Normal;
        app.pinned = None;
        app.compare = None;
        app.lesson = None;
        return resolve(app);
    } else {
        app.note = None;
        app.error = None;
    }
    Vec::new()
}

/// A key typed into the help filter: characters extend it, Backspace shortens it, Enter
/// keeps it and gives the keys back, Esc clears it.
pub(super) fn help_filter_key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    match code {
        KeyCode::Char(c) if app.help_query.chars().count() < MAX_QUERY => app.help_query.push(c),
        KeyCode::Backspace => {
            app.help_query.pop();
        }
        KeyCode::Enter => app.help_typing = false,
        KeyCode::Esc => {
            app.help_query.clear();
            app.help_typing = false;
        }
        _ => app.dirty = false,
    }
    Vec::new()
}

/// `c` and `b`. Entering compare pins the scenario as side A; side B (the one edited from
/// then on) starts equal to it. Leaving keeps B.
pub(super) fn compare(app: &mut App, action: Action) -> Vec<Effect> {
    match (action, app.mode) {
        (Action::ToggleCompare, Mode::Compare) => {
            app.mode = Mode::Normal;
            app.pinned = None;
            app.compare = None;
            resolve(app)
        }
        (Action::ToggleCompare, _) => {
            // B starts as A and changes only when the user changes it.
            app.pinned = Some(app.scenario.clone());
            app.mode = Mode::Compare;
            app.compare = None;
            app.note = Some("A pinned; B starts equal to A: edit B (b cycles B's strategy)".into());
            resolve(app)
        }
        (Action::CycleCompare, Mode::Compare) => {
            let a = app.pinned.as_ref().map(|p| p.plan.strategy);
            let b = app.scenario.plan.strategy;
            let i = Strategy::ALL.iter().position(|s| *s == b).unwrap_or(0);
            let n = Strategy::ALL.len();
            // The next strategy that differs from side A's (comparing A with itself
            // shows nothing).
            app.scenario.plan.strategy = (1..=n)
                .map(|k| Strategy::ALL[(i + k) % n])
                .find(|s| Some(*s) != a)
                .unwrap_or(b);
            resolve(app)
        }
        _ => {
            app.note = Some("b cycles side B's strategy in compare mode (c)".into());
            Vec::new()
        }
    }
}

fn toggle_story_from_lesson(app: &mut App) -> Vec<Effect> {
    app.mode = Mode::Story { step: 0 };
    app.lesson = None;
    resolve(app)
}

/// `i`: into the lesson (from any mode) or out of it.
pub(super) fn toggle_lesson(app: &mut App) -> Vec<Effect> {
    app.mode = match app.mode {
        Mode::Lesson { .. } => Mode::Normal,
        _ => Mode::Lesson { step: 0 },
    };
    app.pinned = None;
    app.compare = None;
    app.details = None;
    app.lesson_scroll = 0;
    // The lesson's own sizes are the fields it edits: the selection starts on p there.
    if matches!(app.mode, Mode::Lesson { .. })
        && !matches!(app.field, Field::Stages | Field::MicroBatches)
    {
        app.field = Field::Stages;
        app.typing = None;
    }
    refresh_lesson(app);
    resolve(app)
}

/// Simulates the lesson's step when the mode, step or sizes changed since the last run.
pub(super) fn refresh_lesson(app: &mut App) {
    let Mode::Lesson { step } = app.mode else {
        app.lesson = None;
        return;
    };
    let (p, m) = app.lesson_size;
    let current = app
        .lesson
        .as_ref()
        .is_some_and(|r| (r.step, r.p, r.m) == (step, p, m));
    if !current {
        app.lesson = Some(lesson::run(step, p, m));
    }
}

/// `t`, `n` and `p` (in the lesson, `n` and `p` step through it).
pub(super) fn story(app: &mut App, action: Action) -> Vec<Effect> {
    if let Mode::Lesson { step } = app.mode {
        let step = match action {
            Action::StoryNext => (step + 1).min(LESSON.len() - 1),
            Action::StoryPrev => step.saturating_sub(1),
            _ => return toggle_story_from_lesson(app),
        };
        app.mode = Mode::Lesson { step };
        app.lesson_scroll = 0;
        refresh_lesson(app);
        return Vec::new();
    }
    match (action, app.mode) {
        (Action::ToggleStory, mode) => {
            app.mode = match mode {
                Mode::Story { .. } => Mode::Normal,
                _ => Mode::Story { step: 0 },
            };
            resolve(app)
        }
        (Action::StoryNext, Mode::Story { step }) => {
            app.mode = Mode::Story {
                step: (step + 1).min(STORY.len() - 1),
            };
            Vec::new()
        }
        (Action::StoryPrev, Mode::Story { step }) => {
            app.mode = Mode::Story {
                step: step.saturating_sub(1),
            };
            Vec::new()
        }
        _ => {
            app.note = Some("n / p step through story mode (t)".into());
            Vec::new()
        }
    }
}
