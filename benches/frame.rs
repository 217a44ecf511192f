//! One edit, its solve and a full frame drawn into a 200x60 TestBackend on the default
//! preset (`gpt3-175b-16k`, real engine): the latency a user feels between a key press and the new screen (goal < 16 ms).
//! The solve runs inline here (in the app it runs on the worker thread). Also a frame of
//! the sweep view with the engine's sweep of that scenario.

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::tui::{
    Action, App, Effect, Field, JobResult, SolveFn, SweepEvent, Theme, choices_of, draw,
    engine_solve, engine_sweep, fixture, update,
};
use pipescope::{Catalog, default_scenario};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The binary's allocator (src/main.rs), so that the bench measures what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn setup() -> (App, SolveFn, &'static str) {
    let catalog = Catalog::builtin();
    let scenario = default_scenario();
    let (solve, which): (SolveFn, _) = if engine_solve(&scenario).is_ok() {
        (engine_solve, "engine")
    } else {
        (fixture::solve, "fixture")
    };
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.field = Field::MicroBatches;
    app.size = (200, 60);
    (app, solve, which)
}

fn step(app: &mut App, solve: SolveFn, action: Action) {
    for effect in update(app, action) {
        if let Effect::Solve(job) = effect {
            let results = job.scenarios.iter().map(solve).collect();
            update(
                app,
                Action::Solved(JobResult {
                    generation: job.generation,
                    kind: job.kind,
                    results,
                }),
            );
        }
    }
}

fn frame(c: &mut Criterion) {
    let (mut app, solve, which) = setup();
    let Ok(mut terminal) = Terminal::new(TestBackend::new(200, 60));
    step(&mut app, solve, Action::Fit);
    let mut up = true;
    c.bench_function(&format!("edit + solve + frame 200x60 ({which})"), |b| {
        b.iter(|| {
            step(
                &mut app,
                solve,
                if up {
                    Action::Increase
                } else {
                    Action::Decrease
                },
            );
            up = !up;
            let _ = terminal.draw(|f| draw(f, &app));
        })
    });
    c.bench_function("frame only 200x60", |b| {
        b.iter(|| {
            let _ = terminal.draw(|f| draw(f, &app));
        })
    });
    // The sweep view with the engine's answer for the default scenario (thousands of
    // configurations, the feasible ones plotted).
    let mut generation = 0;
    for effect in update(&mut app, Action::OpenSweep) {
        if let Effect::Sweep(job) = effect {
            generation = job.generation;
            let cancel = pipescope::Cancel::never();
            let space = job.inputs.space();
            let result = engine_sweep(
                &job.inputs.base,
                &space,
                &pipescope::SweepCache::default(),
                &|_, _| {},
                &cancel,
            )
            .unwrap_or_else(|_| fixture::sweep::result(&job.inputs.base, 64, 64));
            update(
                &mut app,
                Action::Sweep(Box::new(SweepEvent::Done {
                    generation,
                    result: Ok(Box::new(result)),
                })),
            );
        }
    }
    assert!(generation > 0 && app.sweep.answer().is_some());
    c.bench_function("sweep view frame 200x60", |b| {
        b.iter(|| {
            let _ = terminal.draw(|f| draw(f, &app));
        })
    });
}

/// A frame of the main view at 4,096 micro-batches (`tiny-4x8`, real engine): what is drawn
/// per frame must stay linear in the ops (the timeline is walked once for the Gantt; every
/// derived figure comes computed with the outcome), so this stays in the milliseconds.
fn frame_large_m(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let Ok(mut scenario) = catalog.scenario("tiny-4x8") else {
        return;
    };
    scenario.batch.micro_batches = 4096;
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.size = (200, 60);
    for effect in pipescope::tui::resolve(&mut app) {
        if let Effect::Solve(job) = effect {
            let results = job.scenarios.iter().map(engine_solve).collect();
            update(
                &mut app,
                Action::Solved(JobResult {
                    generation: job.generation,
                    kind: job.kind,
                    results,
                }),
            );
        }
    }
    assert!(app.solved.is_some(), "tiny-4x8 at m 4096 solves");
    let Ok(mut terminal) = Terminal::new(TestBackend::new(200, 60));
    c.bench_function("frame only 200x60, m 4096", |b| {
        b.iter(|| {
            let _ = terminal.draw(|f| draw(f, &app));
        })
    });
}

criterion_group!(benches, frame, frame_large_m);
criterion_main!(benches);
