//! The interactive terminal UI (the default `tui` feature; the engine never imports it):
//! app state, actions, a pure update function, a solver worker thread and views that only
//! read state.
//!
//! - `app`: the state ([`App`]); `action`: the one [`Action`] enum and the [`Effect`]s;
//!   `update`: [`update`]`(&mut App, Action) -> Vec<Effect>`, pure.
//! - `view`: one file per screen region (layout diagram there), drawn by [`draw`];
//!   `widgets`: the Gantt and stacked-bar widgets that write cells.
//! - `worker`: latest-wins solver thread; `sweep_worker`: the sweep view's thread (`sweep`
//!   holds its state); `watch`: hot reload of presets and themes; `terminal`: raw mode /
//!   alternate screen / mouse guard, synchronized draws.
//! - `picker`: the `named` strategy's units picker.
//! - [`fixture`]: hand-built scenarios and a synthetic solver for tests and benchmarks.
//!
//! The loop ([`run`]) blocks on one channel fed by the input thread, the worker and the
//! watcher; it drains everything queued, updates, and draws only when something changed.
//! There is no frame timer: an idle app does not wake up. The modules are private; what the
//! binary starts and tests drive is listed below.

mod action;
mod app;
mod export;
mod fields;
mod fields_budget;
mod fields_count;
mod fields_experts;
mod fields_guard;
mod fields_job;
mod fields_moe;
mod fields_notes;
mod fields_run;
mod fields_step;
pub mod fixture;
mod keymap;
mod lesson;
mod line_edit;
mod location;
mod picker;
mod preset_io;
mod presets;
mod solved;
mod story;
mod sweep;
mod sweep_worker;
mod terminal;
mod theme;
mod update;
mod update_files;
mod view;
mod watch;
mod widgets;
mod worker;

// What the binary starts and what tests drive: the state, the actions and the pure update,
// the views' entry point, the solvers and the sweep, themes, presets and exports. Each item
// at this one path.
pub use action::{Action, Effect, Job, JobKind, JobResult, Reload};
pub use app::{App, Details, Mode, Viewport};
pub use export::write_files;
pub use fields::{Choices, Field};
pub use keymap::action_for;
pub use lesson::{LESSON, LessonRun, textbook};
pub use line_edit::{LineEdit, LineOp};
pub use picker::{Entry as PickerEntry, entries as picker_entries};
pub use preset_io::{ParsedPreset, choices_of};
pub use presets::{Pick, PresetChoice, PresetPicker, preset_choices};
pub use solved::{CancellableSolveFn, SolveFn, Solved, engine_solve, engine_solve_cancellable};
pub use sweep::{
    Previous as SweepPrevious, SweepEvent, SweepFn, SweepInputs, SweepJob, SweepState,
    changes as sweep_changes, engine_sweep,
};
pub use sweep_worker::{REMEMBERED as SWEEPS_REMEMBERED, SweepWorker};
pub use theme::{Colors, Glyphs, Theme};
pub use update::{resolve, update};
pub use view::{draw, format, layout::regions, params::first_shown};
pub use worker::Solver;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;

use crossterm::event::{self, Event, MouseButton, MouseEventKind};

use crate::Scenario;

/// Everything the TUI starts from.
pub struct Options {
    /// The scenario to open.
    pub scenario: Scenario,
    /// Models and GPUs to cycle through.
    pub choices: Choices,
    /// The preset file the scenario came from (reloaded when it changes).
    pub preset_source: Option<PathBuf>,
    /// The scenario preset the scenario was loaded from (`None`: flags alone).
    pub preset_name: Option<String>,
    /// The scenario presets the preset picker (`P`) offers.
    pub presets: Vec<PresetChoice>,
    /// Folders (watched recursively) and files (watched alone) for preset and theme changes.
    pub watch_dirs: Vec<PathBuf>,
    /// The user's presets folder (where `w` saves).
    pub presets_dir: Option<PathBuf>,
    /// User themes found at start.
    pub user_themes: Vec<Theme>,
    /// User theme files that did not load at start, with their errors (`file:line:column`).
    pub theme_errors: Vec<(PathBuf, String)>,
    /// Theme to start with.
    pub theme: Theme,
    /// Capture the mouse.
    pub mouse: bool,
    /// The solver (the engine, cancellable, or the fixture in tests).
    pub solve: worker::Solver,
    /// The sweep of the sweep view (the engine's, or the fixture in tests).
    pub sweep: sweep::SweepFn,
}

fn mouse_action(m: event::MouseEvent) -> Option<Action> {
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
        MouseEventKind::ScrollUp => Some(Action::Scroll(m.column, m.row, 1)),
        MouseEventKind::ScrollDown => Some(Action::Scroll(m.column, m.row, -1)),
        _ => None,
    }
}

/// Runs the TUI until the user quits. The caller checks that a terminal is attached.
pub fn run(opts: Options) -> Result<(), String> {
    let (tx, rx) = mpsc::channel::<Action>();
    let mut app = App::new(opts.scenario, opts.choices, opts.theme);
    app.mouse = opts.mouse;
    app.preset_source = opts.preset_source;
    app.preset_name = opts.preset_name;
    app.presets = opts.presets;
    app.preset_base = app.preset_source.as_ref().map(|_| app.scenario.clone());
    for t in opts.user_themes {
        match app.themes.iter_mut().find(|x| x.name == t.name) {
            Some(x) => *x = t,
            None => app.themes.push(t),
        }
    }
    for (path, e) in opts.theme_errors {
        update_files::theme_failed(&mut app, path, e);
    }
    let worker_tx = tx.clone();
    let worker = worker::Worker::start(opts.solve, move |r| {
        let _ = worker_tx.send(Action::Solved(r));
    });
    let sweep_tx = tx.clone();
    let mut sweeper = sweep_worker::SweepWorker::start(opts.sweep, move |e| {
        let _ = sweep_tx.send(Action::Sweep(Box::new(e)));
    });
    let watch_tx = tx.clone();
    let _watch = match watch::start(&opts.watch_dirs, move |r| {
        let _ = watch_tx.send(Action::Reloaded(Box::new(r)));
    }) {
        Ok(h) => Some(h),
        Err(e) => {
            app.note = Some(format!("hot reload off: {e}"));
            None
        }
    };
    let (_guard, mut term) =
        terminal::TerminalGuard::enter(opts.mouse).map_err(|e| format!("terminal: {e}"))?;
    if let Ok(size) = term.size() {
        app.size = (size.width, size.height);
    }
    let signal_tx = tx.clone();
    if let Err(e) = terminal::handle_signals(move || {
        if let Ok((w, h)) = crossterm::terminal::size() {
            let _ = signal_tx.send(Action::Resize(w, h));
        }
    }) {
        app.note = Some(format!("signals not handled: {e}"));
    }
    let input_tx = tx;
    thread::Builder::new()
        .name("pipescope-input".into())
        .spawn(move || {
            loop {
                let action = match event::read() {
                    // Mapped in `update`, which knows whether the help filter takes it.
                    Ok(Event::Key(k)) if k.kind != event::KeyEventKind::Release => {
                        Some(Action::Key(k))
                    }
                    Ok(Event::Mouse(m)) => mouse_action(m),
                    Ok(Event::Resize(w, h)) => Some(Action::Resize(w, h)),
                    Ok(Event::Paste(text)) => Some(Action::Paste(text)),
                    Ok(_) => None,
                    Err(_) => break,
                };
                if let Some(a) = action
                    && input_tx.send(a).is_err()
                {
                    break;
                }
            }
        })
        .map_err(|e| format!("input thread: {e}"))?;
    let presets_dir = opts.presets_dir;
    // A test hook: debug (and test) builds only.
    let panic_test = cfg!(debug_assertions)
        && std::env::var_os("PIPESCOPE_PANIC_TEST").is_some_and(|v| v == "1");
    // Effects run in the order they were produced: several edits drained at once submit
    // their solves oldest first, so the newest one is the job left pending.
    let mut pending: VecDeque<Effect> = update::resolve(&mut app).into();
    loop {
        while let Some(effect) = pending.pop_front() {
            match effect {
                Effect::Solve(job) => worker.submit(job),
                // A remembered answer comes back at once and is shown in this very frame.
                Effect::Sweep(job) => {
                    if let Some(answer) = sweeper.submit(*job) {
                        pending.extend(update::update(&mut app, Action::Sweep(Box::new(answer))));
                    }
                }
                Effect::SweepAhead(inputs) => sweeper.sweep_ahead(inputs),
                Effect::CancelSweep => sweeper.cancel(),
                Effect::Quit => app.quit = true,
                Effect::Mouse(on) => {
                    if let Err(e) = terminal::set_mouse(on) {
                        app.error = Some(format!("mouse: {e}"));
                    }
                }
                Effect::Suspend => {
                    // A fresh terminal (empty previous frame) repaints every cell.
                    match terminal::suspend() {
                        Ok(t) => term = t,
                        Err(e) => app.error = Some(format!("suspend: {e}")),
                    }
                    app.dirty = true;
                }
                Effect::Export(files) => {
                    let config = crate::scenario::presets::user_config_dir();
                    let result = export::export_dir(config.as_deref())
                        .and_then(|dir| export::write_files(&dir, &files))
                        .map(|paths| {
                            let cwd = std::env::current_dir().ok();
                            let home = std::env::var_os("HOME").map(PathBuf::from);
                            paths
                                .iter()
                                .map(|p| export::as_user_types(p, cwd.as_deref(), home.as_deref()))
                                .collect()
                        });
                    pending.extend(update::update(&mut app, Action::Exported(result)));
                }
                Effect::Save { file_name, text } => {
                    let result = match &presets_dir {
                        Some(dir) => preset_io::save_new(dir, &file_name, &text),
                        None => Err("no config folder (set XDG_CONFIG_HOME or HOME)".into()),
                    };
                    pending.extend(update::update(&mut app, Action::Saved(result)));
                }
            }
        }
        if app.quit {
            break;
        }
        if app.dirty {
            terminal::draw_synced(&mut term, |f| view::draw(f, &app))
                .map_err(|e| format!("draw: {e}"))?;
            app.dirty = false;
            // Test hook: a panic with the terminal in TUI mode (the e2e test checks that
            // the panic hook restores it).
            if panic_test {
                panic!("PIPESCOPE_PANIC_TEST: deliberate panic after a draw");
            }
        }
        let Ok(first) = rx.recv() else { break };
        pending.extend(update::update(&mut app, first));
        while let Ok(next) = rx.try_recv() {
            pending.extend(update::update(&mut app, next));
        }
        // Back from a stop (SIGTSTP, then SIGCONT): draw every cell again.
        if terminal::take_repaint() {
            term = terminal::fresh().map_err(|e| format!("terminal: {e}"))?;
            app.dirty = true;
        }
    }
    Ok(())
}
