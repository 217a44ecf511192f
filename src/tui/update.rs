//! The pure update function: applies one [`Action`] to the [`App`] and returns the
//! [`Effect`]s the runner must carry out. No I/O, no threads, no clock.

use crossterm::event::{KeyCode, KeyModifiers};

use crate::plan::Strategy;

use super::action::{Action, Effect, Job, JobKind, JobResult};
use super::app::{App, Mode, STORY, Viewport};
use super::fields::{self, Field};
use super::keymap;
use super::update_files::{reloaded, save};
use super::view::layout::{self, Hit};

/// Zoom factor of one key press or wheel notch.
const ZOOM: f64 = 1.5;
/// Fraction of the visible width one pan moves.
const PAN: f64 = 0.25;

/// Applies `action` to `app`.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    app.dirty = true;
    // A note is a passing remark: the next thing the user does replaces it (a scroll or a
    // click that hits nothing keeps it, as does anything from the worker or the watcher).
    if !matches!(
        action,
        Action::Solved(_)
            | Action::Reloaded(_)
            | Action::Saved(_)
            | Action::Exported(_)
            | Action::Resize(..)
            | Action::Key(_)
            | Action::Scroll(..)
            | Action::Click(..)
    ) {
        app.note = None;
    }
    match action {
        Action::Quit => {
            app.quit = true;
            vec![Effect::Quit]
        }
        Action::Close => {
            if app.help {
                app.help = false;
                app.help_query.clear();
                app.help_typing = false;
            } else if app.typing.is_some() {
                app.typing = None;
            } else if app.mode != Mode::Normal {
                app.mode = Mode::Normal;
                return resolve(app);
            } else {
                app.note = None;
                app.error = None;
            }
            Vec::new()
        }
        Action::ToggleHelp => {
            app.help = !app.help;
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
        Action::Key(key) => {
            if app.help && app.help_typing && !key.modifiers.contains(KeyModifiers::CONTROL) {
                return help_filter_key(app, key.code);
            }
            match keymap::action_for(key) {
                Some(a) => update(app, a),
                None => {
                    app.dirty = false;
                    Vec::new()
                }
            }
        }
        Action::PrevField | Action::NextField => {
            let i = Field::ALL.iter().position(|f| *f == app.field).unwrap_or(0);
            let n = Field::ALL.len();
            let j = if action == Action::NextField {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            };
            app.field = Field::ALL[j];
            app.typing = None;
            Vec::new()
        }
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
            if !app.field.numeric() {
                app.note = Some(format!("{} takes no number: use ← →", app.field.label()));
            } else if app.typing.as_ref().is_some_and(|t| t.len() >= 12) {
                app.note = Some("number too long".into());
            } else {
                if app.typing.is_none() {
                    // A new number: the previous edit's error and notes give way to it.
                    app.error = None;
                    app.note = None;
                }
                app.typing.get_or_insert_with(String::new).push(c);
            }
            Vec::new()
        }
        Action::Backspace => {
            if let Some(t) = app.typing.as_mut() {
                t.pop();
            }
            Vec::new()
        }
        Action::Commit => match app.typing.take() {
            Some(text) if !text.is_empty() => {
                match fields::set_number(&mut app.scenario, app.field, &text) {
                    Ok(()) => resolve(app),
                    Err(e) => {
                        app.error = Some(e);
                        Vec::new()
                    }
                }
            }
            _ => Vec::new(),
        },
        Action::PrevStage | Action::NextStage => {
            let p = app.devices();
            app.stage = if action == Action::NextStage {
                (app.stage + 1) % p
            } else {
                (app.stage + p - 1) % p
            };
            Vec::new()
        }
        Action::SelectStage(s) => {
            app.stage = s.min(app.devices() - 1);
            Vec::new()
        }
        Action::ZoomIn => zoom(app, 1.0 / ZOOM, 0.5),
        Action::ZoomOut => zoom(app, ZOOM, 0.5),
        Action::ZoomAt(at, dir) => zoom(app, if dir > 0 { 1.0 / ZOOM } else { ZOOM }, at),
        Action::PanLeft | Action::PanRight if app.viewport.span >= 1.0 => {
            app.note = Some("the whole iteration is in view: z zooms in, then H L pan".into());
            Vec::new()
        }
        Action::PanLeft => {
            app.viewport = app.viewport.pan(-PAN);
            Vec::new()
        }
        Action::PanRight => {
            app.viewport = app.viewport.pan(PAN);
            Vec::new()
        }
        Action::Fit => {
            app.viewport = Viewport::FIT;
            Vec::new()
        }
        Action::ToggleCompare => {
            app.mode = match app.mode {
                Mode::Compare { .. } => Mode::Normal,
                _ => Mode::Compare {
                    other: default_other(app.scenario.plan.strategy),
                },
            };
            app.compare = None;
            resolve(app)
        }
        Action::CycleCompare => match app.mode {
            Mode::Compare { other } => {
                let i = Strategy::ALL.iter().position(|s| *s == other).unwrap_or(0);
                let n = Strategy::ALL.len();
                // The next strategy that differs from side A's (comparing A with itself
                // shows nothing).
                let next = (1..=n)
                    .map(|k| Strategy::ALL[(i + k) % n])
                    .find(|s| *s != app.scenario.plan.strategy)
                    .unwrap_or(other);
                app.mode = Mode::Compare { other: next };
                resolve(app)
            }
            _ => {
                app.note = Some("b cycles the other side in compare mode (c)".into());
                Vec::new()
            }
        },
        Action::ToggleStory => {
            app.mode = match app.mode {
                Mode::Story { .. } => Mode::Normal,
                _ => Mode::Story { step: 0 },
            };
            resolve(app)
        }
        Action::StoryNext | Action::StoryPrev => {
            if let Mode::Story { step } = app.mode {
                let step = if action == Action::StoryNext {
                    (step + 1).min(STORY.len() - 1)
                } else {
                    step.saturating_sub(1)
                };
                app.mode = Mode::Story { step };
            } else {
                app.note = Some("n / p step through story mode (t)".into());
            }
            Vec::new()
        }
        Action::SavePreset => save(app),
        Action::Export => super::export::export(app),
        Action::Exported(result) => super::export::exported(app, result),
        Action::CycleTheme => {
            let n = app.themes.len().max(1);
            let i = app
                .themes
                .iter()
                .position(|t| t.name == app.theme.name)
                .unwrap_or(0);
            if let Some(t) = app.themes.get((i + 1) % n) {
                app.theme = t.clone();
                app.note = Some(format!("theme {}", app.theme.name));
            }
            Vec::new()
        }
        Action::ToggleMouse => {
            app.mouse = !app.mouse;
            app.note = Some(if app.mouse {
                "mouse captured: click selects, wheel zooms (v releases it)".into()
            } else {
                "mouse released: the terminal selects text (v captures it again)".into()
            });
            vec![Effect::Mouse(app.mouse)]
        }
        Action::Suspend => vec![Effect::Suspend],
        Action::Click(x, y) => click(app, x, y),
        Action::Scroll(x, y, dir) => match layout::hit(app, x, y) {
            Some(Hit::Gantt { at, .. }) => zoom(app, if dir > 0 { 1.0 / ZOOM } else { ZOOM }, at),
            _ => {
                app.dirty = false;
                Vec::new()
            }
        },
        Action::Resize(w, h) => {
            app.size = (w, h);
            Vec::new()
        }
        Action::Solved(result) => {
            solved(app, result);
            Vec::new()
        }
        Action::Reloaded(reload) => reloaded(app, *reload),
        Action::Saved(result) => {
            match result {
                Ok(path) => app.note = Some(format!("saved {}", path.display())),
                Err(e) => app.error = Some(format!("could not save the preset: {e}")),
            }
            Vec::new()
        }
    }
}

/// The strategy compare mode starts with on the other side.
fn default_other(current: Strategy) -> Strategy {
    if current == Strategy::Full {
        Strategy::AdaPipe
    } else {
        Strategy::Full
    }
}

/// A key typed into the help filter: characters extend it, Backspace shortens it, Enter
/// keeps it and gives the keys back, Esc clears it.
fn help_filter_key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    match code {
        KeyCode::Char(c) if app.help_query.chars().count() < 32 => app.help_query.push(c),
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

fn step_field(app: &mut App, field: Field, delta: i32) -> Vec<Effect> {
    app.field = field;
    app.typing = None;
    app.note = fields::step(&mut app.scenario, field, delta, &app.choices);
    resolve(app)
}

fn zoom(app: &mut App, factor: f64, at: f64) -> Vec<Effect> {
    app.viewport = app.viewport.zoom(factor, at);
    Vec::new()
}

/// A new generation and the job that solves what the current mode shows.
pub fn resolve(app: &mut App) -> Vec<Effect> {
    app.generation += 1;
    app.solving = true;
    let mut scenarios = vec![app.scenario.clone()];
    let kind = match app.mode {
        Mode::Normal => JobKind::Main,
        Mode::Compare { other } => {
            let mut b = app.scenario.clone();
            b.plan.strategy = other;
            scenarios.push(b);
            JobKind::Compare
        }
        Mode::Story { .. } => {
            for s in STORY {
                let mut step = app.scenario.clone();
                step.plan.strategy = s;
                scenarios.push(step);
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

fn solved(app: &mut App, result: JobResult) {
    if result.generation != app.generation {
        app.dirty = false;
        return;
    }
    app.solving = false;
    let mut results = result.results.into_iter();
    match results.next() {
        Some(Ok(s)) => {
            app.error = None;
            app.stage = app.stage.min((s.outcome.stages.len() as u32).max(1) - 1);
            app.solved = Some(s);
            // The generation matches, so the scenario is the one this result solved.
            app.solved_scenario = Some(app.scenario.clone());
        }
        Some(Err(e)) => app.error = Some(e),
        None => {}
    }
    match result.kind {
        JobKind::Main => {}
        JobKind::Compare => app.compare = results.next(),
        JobKind::Story => {
            app.story = (0..STORY.len()).map(|_| results.next()).collect();
        }
    }
}

fn click(app: &mut App, x: u16, y: u16) -> Vec<Effect> {
    match layout::hit(app, x, y) {
        Some(Hit::Field(f)) => {
            app.field = f;
            app.typing = None;
        }
        Some(Hit::Stage(s)) | Some(Hit::Gantt { stage: s, .. }) => app.stage = s,
        None => app.dirty = false,
    }
    Vec::new()
}
