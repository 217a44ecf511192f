//! Shared helpers of the TUI tests: an app on a fixture scenario whose solves run
//! synchronously with the fixture solver, and rendering into a TestBackend.

#![allow(dead_code)]

use pipescope::tui::{
    Action, App, Choices, Effect, JobResult, SolveFn, SweepEvent, SweepInputs, Theme, draw,
    fixture, resolve, update,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The fixture choices.
pub fn choices() -> Choices {
    Choices {
        models: vec![fixture::model_gpt3(), fixture::model_llama70()],
        gpus: vec![fixture::gpu_a100(), fixture::gpu_h100()],
    }
}

/// Carries out effects: solves jobs with the fixture solver right away.
pub fn run_effects(app: &mut App, effects: Vec<Effect>) {
    run_effects_with(app, effects, fixture::solve);
}

/// Carries out effects: solves jobs with `solve` right away.
pub fn run_effects_with(app: &mut App, effects: Vec<Effect>, solve: SolveFn) {
    for e in effects {
        if let Effect::Solve(job) = e {
            let results = job.scenarios.iter().map(solve).collect();
            let more = update(
                app,
                Action::Solved(JobResult {
                    generation: job.generation,
                    kind: job.kind,
                    results,
                }),
            );
            run_effects_with(app, more, solve);
        }
    }
}

/// Applies an action and runs its effects.
pub fn act(app: &mut App, action: Action) {
    let effects = update(app, action);
    run_effects(app, effects);
}

/// An app on fixture scenario `name`, solved, theme `dark`, no solve time shown.
pub fn solved_app(name: &str) -> App {
    let mut app = App::new(fixture::scenario(name), choices(), Theme::builtin("dark"));
    app.show_solve_time = false;
    let effects = resolve(&mut app);
    run_effects(&mut app, effects);
    app
}

/// Renders `app` at `w`x`h` and returns the backend (its Display shows the cells).
pub fn render(app: &mut App, w: u16, h: u16) -> TestBackend {
    app.size = (w, h);
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal.backend().clone()
}

/// The sweep job of `effects`, if one was asked for.
pub fn sweep_job(effects: &[Effect]) -> Option<(u64, SweepInputs)> {
    effects.iter().find_map(|e| match e {
        Effect::Sweep(job) => Some((job.generation, job.inputs.clone())),
        _ => None,
    })
}

/// Opens the sweep view and answers its sweep with the fixture's fixed result (its last
/// progress report, then the answer).
pub fn open_and_answer(app: &mut App) {
    let effects = update(app, Action::OpenSweep);
    let (generation, inputs) = sweep_job(&effects).expect("opening sweeps");
    let result = fixture::sweep::result(&inputs.base, inputs.gpus, inputs.global_batch);
    update(
        app,
        Action::Sweep(Box::new(SweepEvent::Progress {
            generation,
            done: 40,
            total: 40,
        })),
    );
    update(
        app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation,
            result: Ok(Box::new(result)),
        })),
    );
}
