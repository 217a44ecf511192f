//! Handlers for what comes back from the worker threads: solves and saved presets.

use std::path::PathBuf;

use crate::tui::action::{JobKind, JobResult};
use crate::tui::app::{App, STORY};

/// Takes a job's results, unless a newer edit has been sent since.
pub(super) fn solved(app: &mut App, result: JobResult) {
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

/// A preset was written, or could not be.
pub(super) fn saved(app: &mut App, result: Result<PathBuf, String>) {
    match result {
        Ok(path) => {
            app.clear_output_error();
            app.note = Some(format!("saved {}", path.display()));
        }
        Err(e) => app.error = Some(format!("{}{e}", crate::tui::app::SAVE_ERROR)),
    }
}
