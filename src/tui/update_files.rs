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
            let was_broken = app.reload_errors.remove(&path).is_some();
            app.note = Some(format!("reloaded {}", path.display()));
            let theme = *theme;
            // The stand-in of a file that did not load goes, once the file names another theme.
            let stem = file_stem(&path);
            if was_broken && stem != theme.name {
                app.themes.retain(|t| t.name != stem);
            }
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
        // A new error goes before an older note on the status line.
        Reload::Theme(path, Err(e)) => {
            app.note = None;
            theme_failed(app, path, e);
            Vec::new()
        }
        Reload::Preset(path, Err(e)) => {
            app.note = None;
            app.reload_errors.insert(path, e);
            Vec::new()
        }
    }
}

/// A user theme file that does not load: its error stays on the status line until it is
/// fixed, and the theme stays in the `T` cycle (its last good version, or, when it never
/// loaded, the `dark` theme under the file's name, so that it does not vanish).
pub(crate) fn theme_failed(app: &mut App, path: std::path::PathBuf, e: String) {
    let stem = file_stem(&path);
    if !app.themes.iter().any(|t| t.name == stem) {
        let mut stand_in = super::theme::Theme::builtin("dark");
        stand_in.name = stem;
        app.themes.push(stand_in);
    }
    app.reload_errors.insert(path, e);
}

fn file_stem(path: &std::path::Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
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
    keep!(Field::Schedule.label(), plan.schedule);
    keep!(Field::Strategy.label(), plan.strategy);
    keep!("recompute units", plan.recompute_units);
    keep!(Field::Cp.label(), parallel.cp);
    if ours.parallel.zero() != base.parallel.zero() {
        merged.parallel.set_zero(ours.parallel.zero());
        kept.push(Field::Zero.label());
    }
    keep!(Field::Precision.label(), parallel.precision);
    keep!(Field::Flash.label(), plan.flash_attention);
    keep!(Field::Partition.label(), plan.partition);
    keep!(Field::Objective.label(), plan.objective);
    keep!(Field::OverlapGradReduce.label(), plan.overlap_grad_reduce);
    keep!(Field::GradBytes.label(), parallel.grad_bytes);
    keep!(Field::Ep.label(), parallel.ep);
    keep!(Field::Imbalance.label(), plan.routing_imbalance);
    keep!(Field::A2aOverlap.label(), plan.moe_a2a_overlap);
    keep!(Field::P2p.label(), plan.p2p);
    keep!(
        Field::DeviceConnections.label(),
        plan.device_max_connections
    );
    keep!(Field::ParamGather.label(), plan.overlap_param_gather);
    keep!(Field::TpOverlap.label(), plan.tp_comm_overlap);
    // The budget and the reserve are one setting (`scenario::budget`): kept together, and a
    // reserve's budget follows the merged GPU.
    let (o, b) = (&ours.plan, &base.plan);
    if o.memory_budget_bytes != b.memory_budget_bytes || o.reserve_bytes != b.reserve_bytes {
        merged.plan.memory_budget_bytes = o.memory_budget_bytes;
        merged.plan.reserve_bytes = o.reserve_bytes;
        kept.push(Field::Budget.label());
    }
    let gpu = merged.gpu.clone();
    if merged.change_gpu(gpu).is_err() {
        // A reserve the merged GPU cannot keep: nothing is kept free.
        let _ = merged.keep_free(0);
    }
    (merged, kept)
}
