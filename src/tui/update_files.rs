//! The file side of the pure update: saving the scenario as a preset (the runner writes
//! it) and applying hot-reloaded presets and themes. No I/O here either.

use super::action::{Effect, Reload};
use super::app::App;
use super::fields::Field;
use super::update::resolve;
use crate::Scenario;

/// The longest file-name stem `w` gives a preset (far below any file system's limit).
const MAX_STEM_CHARS: usize = 80;

/// `text` as a file-name stem: lower-case letters, digits and dots, every other run of
/// characters one `-`, no leading dot or dash (no hidden file, no `..`), at most
/// [`MAX_STEM_CHARS`]; `custom` when nothing is left.
fn file_stem_of(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out
        .trim_start_matches(['.', '-'])
        .chars()
        .take(MAX_STEM_CHARS)
        .collect();
    let out = out.trim_end_matches(['.', '-']);
    if out.is_empty() {
        "custom".into()
    } else {
        out.to_string()
    }
}

/// The name and description a saved preset gets: its own when the scenario still holds the
/// model, GPU and GPU count of the preset it came from (`reference`), else ones made from
/// what it holds, so that a preset holding DeepSeek-V3 on 1,024 H100s is not saved under
/// GPT-3's name and description.
fn saved_identity(scenario: &Scenario, reference: Option<&Scenario>) -> (String, String) {
    let same = reference.is_some_and(|r| {
        r.model.name == scenario.model.name
            && r.gpu.name == scenario.gpu.name
            && r.parallel.gpus() == scenario.parallel.gpus()
    });
    if same {
        return (scenario.name.clone(), scenario.description.clone());
    }
    let gpus = scenario.parallel.gpus();
    (
        format!("{}-{}-{gpus}", scenario.model.name, scenario.gpu.name),
        format!(
            "{} on {gpus} {} GPUs (saved from the UI, started from {})",
            scenario.model.name, scenario.gpu.name, scenario.name
        ),
    )
}

/// `w`: the scenario as preset TOML under a `my-` name, for the runner to write.
pub(super) fn save(app: &mut App) -> Vec<Effect> {
    let reference = app
        .preset_base
        .clone()
        .or_else(|| crate::Catalog::builtin().scenario(&app.scenario.name).ok());
    let (name, description) = saved_identity(&app.scenario, reference.as_ref());
    let base = file_stem_of(&name);
    let stem = if base.starts_with("my-") {
        base
    } else {
        format!("my-{base}")
    };
    let file_name = format!("{stem}.toml");
    // The saved preset gets its own name, so it does not shadow the one it came from.
    let mut scenario = app.scenario.clone();
    scenario.name = stem;
    scenario.description = description;
    // The model's description follows the model the scenario holds (an edit such as `mtp`
    // changes it), not the preset it started from.
    scenario.model.description = crate::scenario::model_description(&scenario.model);
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
            app.note = Some(format!("reloaded {}", shown(&path)));
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
            if parsed.scenario.is_some() {
                super::presets::refresh_choice(app, &path, parsed.scenario.as_ref());
            }
            match parsed.scenario {
                Some(scenario) if app.preset_source.as_ref() == Some(&path) => {
                    let base = app.preset_base.replace(scenario.clone());
                    let (merged, kept) = match base {
                        Some(base) => keep_edits(&base, &app.scenario, scenario),
                        None => (scenario, Vec::new()),
                    };
                    app.note = Some(if kept.is_empty() {
                        format!("reloaded {}", shown(&path))
                    } else {
                        format!(
                            "reloaded {}, kept your edits: {}",
                            shown(&path),
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
        // A new error goes before an older note and an older error on the status line.
        Reload::Theme(path, Err(e)) => {
            app.note = None;
            app.error_at_reload = app.error.clone();
            theme_failed(app, path, e);
            Vec::new()
        }
        Reload::Preset(path, Err(e)) | Reload::Settings(path, Err(e)) => {
            app.note = None;
            app.error_at_reload = app.error.clone();
            app.reload_errors.insert(path, e);
            Vec::new()
        }
        Reload::Settings(path, Ok(())) => {
            app.reload_errors.remove(&path);
            app.note = Some(format!(
                "reloaded {} (the UI's settings: e reads them)",
                shown(&path)
            ));
            Vec::new()
        }
        Reload::Removed(path, theme) => {
            removed(app, &path, theme);
            Vec::new()
        }
    }
}

/// A file read before is gone: its error goes; a theme it held leaves the `T` cycle (a
/// built-in theme it replaced comes back), the theme on screen stays until `T`; a preset
/// it held stays loaded as it was.
fn removed(app: &mut App, path: &std::path::Path, theme: Option<String>) {
    app.reload_errors.remove(path);
    // Its scenario preset leaves the picker (the scenario on screen stays).
    super::presets::refresh_choice(app, path, None);
    let mut note = format!("{} was removed", shown(path));
    if let Some(name) = theme {
        if super::theme::BUILTIN.iter().any(|(n, _)| *n == name) {
            let builtin = super::theme::Theme::builtin(&name);
            if let Some(t) = app.themes.iter_mut().find(|t| t.name == name) {
                *t = builtin;
            }
            note.push_str(&format!("; theme {name} is the built-in one again"));
        } else if app.themes.iter().any(|t| t.name == name) {
            app.themes.retain(|t| t.name != name);
            note.push_str(&format!("; theme {name} left the T cycle"));
        }
    } else if app.preset_source.as_deref() == Some(path) {
        note.push_str("; the scenario stays as it was last loaded");
    }
    app.note = Some(note);
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

/// How a note names a watched file: its folder and name (`presets/mine.toml`,
/// `pipescope/config.toml`), as the status line shows a file's error, not the absolute path.
fn shown(path: &std::path::Path) -> String {
    let mut parts: Vec<String> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .take(2)
        .collect();
    parts.reverse();
    parts.join("/")
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
    keep!(Field::Layout.label(), plan.layout);
    keep!(Field::Objective.label(), plan.objective);
    keep!(Field::OverlapGradReduce.label(), plan.overlap_grad_reduce);
    keep!(Field::GradBytes.label(), parallel.grad_bytes);
    keep!(Field::MomentBytes.label(), parallel.moment_bytes);
    keep!(Field::AttentionBackend.label(), plan.attention_backend);
    keep!(
        Field::Fp8InputStore.label(),
        plan.activation_func_fp8_input_store
    );
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn file_stems_are_safe_file_names() {
        assert_eq!(file_stem_of("DeepSeek-V3 on H100"), "deepseek-v3-on-h100");
        assert_eq!(file_stem_of("../../etc/passwd"), "etc-passwd");
        assert_eq!(file_stem_of(".hidden"), "hidden");
        assert_eq!(file_stem_of("//"), "custom");
        assert_eq!(file_stem_of(&"x".repeat(500)).len(), MAX_STEM_CHARS);
        assert_eq!(file_stem_of("llama3.1-8b"), "llama3.1-8b");
    }

    /// The saved model's description follows its shape once an edit changed it (DeepSeek-V3
    /// without its MTP layer is not described with "1 MTP"), and stays the preset's otherwise.
    #[test]
    fn a_saved_model_is_described_as_it_is() {
        let catalog = crate::Catalog::builtin();
        let mut sc = catalog.scenario("gpt3-175b-16k").unwrap();
        sc.model = catalog.model("deepseek-v3").unwrap().clone();
        let unchanged = sc.model.description.clone();
        assert!(unchanged.contains("1 MTP"), "{unchanged}");
        let saved = |sc: &Scenario| {
            let mut app = crate::tui::App::new(
                sc.clone(),
                crate::tui::Choices {
                    models: Vec::new(),
                    gpus: Vec::new(),
                },
                crate::tui::Theme::builtin("dark"),
            );
            match save(&mut app).pop() {
                Some(Effect::Save { text, .. }) => {
                    let back = crate::Catalog::empty()
                        .scenario_from_text("saved.toml", &text)
                        .unwrap();
                    back.model.description
                }
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(saved(&sc), unchanged);
        sc.model.mtp_layers = 0;
        let description = saved(&sc);
        assert!(
            !description.contains("1 MTP") && description.contains("no MTP"),
            "{description}"
        );
        assert!(
            description.starts_with("deepseek-v3: 61 layers (3 dense)"),
            "{description}"
        );
    }

    /// A scenario that no longer holds its preset's model is named and described from what
    /// it holds; one that does keeps its preset's name and description.
    #[test]
    fn a_saved_preset_is_named_from_what_it_holds() {
        let catalog = crate::Catalog::builtin();
        let start = catalog.scenario("gpt3-175b-16k").unwrap();
        assert_eq!(
            saved_identity(&start, Some(&start)),
            (start.name.clone(), start.description.clone())
        );
        let mut moe = start.clone();
        moe.model = catalog.model("deepseek-v3").unwrap().clone();
        moe.gpu = catalog.gpu("h100-80gb").unwrap().clone();
        let gpus = moe.parallel.gpus();
        let (name, description) = saved_identity(&moe, Some(&start));
        assert_eq!(name, format!("deepseek-v3-h100-80gb-{gpus}"));
        assert!(
            description.starts_with(&format!("deepseek-v3 on {gpus} h100-80gb GPUs"))
                && !description.contains("GPT-3"),
            "{description}"
        );
        // No preset to compare with: named from what it holds.
        assert_eq!(
            saved_identity(&start, None).0,
            format!("gpt3-175b-a100-80gb-{}", start.parallel.gpus())
        );
    }
}
