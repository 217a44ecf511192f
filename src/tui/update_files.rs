//! The file side of the pure update: saving the scenario as a preset (the runner writes
//! it) and applying hot-reloaded presets and themes. No I/O here either.

use super::action::{Effect, Reload};
use super::app::App;
use super::fields::Field;
use super::update::resolve;
use crate::Scenario;

/// `w`: the scenario as preset TOML under a `my-` name, for the runner to write.
pub(super) fn save(app: &mut App) -> Vec<Effect> {
    let base: String = app
        .scenario
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "custom".into()
    } else {
        base
    };
    let stem = if base.starts_with("my-") {
        base
    } else {
        format!("my-{base}")
    };
    let file_name = format!("{stem}.toml");
    // The saved preset gets its own name, so it does not shadow the one it came from.
    let mut scenario = app.scenario.clone();
    scenario.name = stem;
    match super::preset_io::to_toml(&scenario) {
        Ok(text) => vec![Effect::Save { file_name, text }],
        Err(e) => {
            app.error = Some(e);
            Vec::new()
        }
    }
}

/// A watched file changed: apply a good theme or preset, or record its error (the last
/// good version stays).
pub(super) fn reloaded(app: &mut App, reload: Reload) -> Vec<Effect> {
    match reload {
        Reload::Theme(path, Ok(theme)) => {
            app.reload_errors.remove(&path);
            app.note = Some(format!("reloaded {}", path.display()));
            let theme = *theme;
            if app.theme.name == theme.name {
                app.theme = theme.clone();
            }
            match app.themes.iter_mut().find(|t| t.name == theme.name) {
                Some(t) => *t = theme,
                None => app.themes.push(theme),
            }
            Vec::new()
        }
        Reload::Preset(path, Ok(parsed)) => {
            app.reload_errors.remove(&path);
            let parsed = *parsed;
            if !parsed.choices.models.is_empty() {
                app.choices = parsed.choices;
            }
            match parsed.scenario {
                Some(scenario) if app.preset_source.as_ref() == Some(&path) => {
                    let base = app.preset_base.replace(scenario.clone());
                    let (merged, kept) = match base {
                        Some(base) => keep_edits(&base, &app.scenario, scenario),
                        None => (scenario, Vec::new()),
                    };
                    app.note = Some(if kept.is_empty() {
                        format!("reloaded {}", path.display())
                    } else {
                        format!(
                            "reloaded {}, kept your edits: {}",
                            path.display(),
                            kept.join(", ")
                        )
                    });
                    if merged == app.scenario {
                        app.dirty = true;
                        return Vec::new();
                    }
                    app.scenario = merged;
                    resolve(app)
                }
                _ => Vec::new(),
            }
        }
        Reload::Theme(path, Err(e)) | Reload::Preset(path, Err(e)) => {
            app.reload_errors.insert(path, e);
            Vec::new()
        }
    }
}

/// Three-way merge of a reloaded preset: starts from the file's new `theirs` and keeps every
/// field the user changed since the file was last read (`ours` differs from `base`).
/// Returns the merged scenario and the labels of the kept fields.
pub(super) fn keep_edits(
    base: &Scenario,
    ours: &Scenario,
    theirs: Scenario,
) -> (Scenario, Vec<&'static str>) {
    let mut merged = theirs;
    let mut kept = Vec::new();
    macro_rules! keep {
        ($label:expr, $($f:ident).+) => {
            if ours.$($f).+ != base.$($f).+ {
                merged.$($f).+ = ours.$($f).+.clone();
                kept.push($label);
            }
        };
    }
    keep!(Field::Model.label(), model);
    keep!(Field::Gpu.label(), gpu);
    keep!(Field::Stages.label(), parallel.pp);
    keep!(Field::Tp.label(), parallel.tp);
    keep!(Field::Dp.label(), parallel.dp);
    keep!(Field::SequenceParallel.label(), parallel.sequence_parallel);
    keep!(Field::Chunks.label(), parallel.chunks);
    keep!(Field::MicroBatches.label(), batch.micro_batches);
    keep!(Field::MicroBatchSize.label(), batch.micro_batch_size);
    keep!(Field::SeqLen.label(), batch.seq_len);
    keep!(Field::Budget.label(), plan.memory_budget_bytes);
    keep!(Field::Reserve.label(), plan.reserve_bytes);
    keep!(Field::Schedule.label(), plan.schedule);
    keep!(Field::Strategy.label(), plan.strategy);
    keep!("recompute units", plan.recompute_units);
    keep!(Field::DistOpt.label(), parallel.distributed_optimizer);
    keep!(Field::Flash.label(), plan.flash_attention);
    keep!(Field::Partition.label(), plan.partition);
    keep!(Field::Objective.label(), plan.objective);
    keep!(Field::OverlapGradReduce.label(), plan.overlap_grad_reduce);
    keep!(Field::GradBytes.label(), parallel.grad_bytes);
    (merged, kept)
}
