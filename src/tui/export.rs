//! The `e` key: export what is on screen (the shown outcome: main, or the story's step) in
//! the four formats of `pipescope export`, to files in the current folder named after the
//! schedule and strategy; the status line says where they went.

use std::path::{Path, PathBuf};

use crate::export::svg::Palette;
use crate::export::{self, Run, Units};
use crate::{Outcome, Scenario};

use super::action::Effect;
use super::app::App;

/// The files of one export: `(file name, text)`, for the outcome of `scenario`: the SVG
/// figure, the Perfetto trace, the Megatron-LM arguments and, when torch has the
/// schedule, the torchtitan CSV.
pub fn files(scenario: &Scenario, outcome: &Outcome) -> Vec<(String, String)> {
    let kind = outcome.schedule;
    let v = kind.chunks(scenario.parallel.chunks);
    let sched = export::schedule_of(kind, scenario.batch.micro_batches, v, &outcome.simulation);
    let run = Run {
        schedule: &sched,
        simulation: &outcome.simulation,
        units: Units::Seconds,
    };
    let stem = format!("pipescope-{kind}-{}", outcome.strategy);
    let mut out = vec![
        (
            format!("{stem}.svg"),
            export::svg::export(&run, &Palette::light()),
        ),
        (format!("{stem}.trace.json"), export::perfetto::export(&run)),
        (
            format!("{stem}.megatron.txt"),
            export::megatron::export(scenario, outcome),
        ),
    ];
    if let Ok(csv) = export::torchtitan::export(&sched) {
        out.push((format!("{stem}.torchtitan.csv"), csv));
    }
    out
}

/// `e`: the export effect for what is shown, or a note when nothing is solved yet.
pub(super) fn export(app: &mut App) -> Vec<Effect> {
    match (app.shown(), app.solved_scenario.as_ref()) {
        (Some(solved), Some(scenario)) => vec![Effect::Export(files(scenario, &solved.outcome))],
        _ => {
            app.note = Some("nothing to export yet: the plan is still being solved".into());
            Vec::new()
        }
    }
}

/// Writes `files` into `dir`, each atomically; the paths written, or the first error.
pub fn write_files(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>, String> {
    files
        .iter()
        .map(|(name, text)| export::write_atomic(&dir.join(name), text))
        .collect()
}

/// The status line after an export.
pub(super) fn exported(app: &mut App, result: Result<Vec<PathBuf>, String>) -> Vec<Effect> {
    match result {
        Ok(paths) => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            app.note = Some(format!("exported {}", names.join(", ")));
        }
        Err(e) => app.error = Some(format!("could not export: {e}")),
    }
    Vec::new()
}
