//! The preset picker (`P`): the scenario presets (built in, then the user's files), the model
//! presets and the GPU presets, each in its own section, the current one of each marked.
//! Typing filters them, the arrows move, Enter loads: a scenario replaces the whole scenario,
//! a model or a GPU changes only the model or the GPU. Pure state and rules; the overlay is
//! `view/presets.rs`.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::Scenario;

use super::action::Effect;
use super::app::App;
use super::update::resolve;

/// A scenario preset the picker offers.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetChoice {
    /// Its name (`gpt3-175b-16k`).
    pub name: String,
    /// Its description (may be empty).
    pub description: String,
    /// The scenario it gives.
    pub scenario: Scenario,
    /// The file it came from, for a user preset (watched for changes once loaded); `None`
    /// for a built-in one.
    pub source: Option<PathBuf>,
}

/// The scenario presets of `catalog` as the picker lists them: the built-in ones, then the
/// user's files, each by name (one that does not resolve is left out: its error is on the
/// status line already).
pub fn preset_choices(catalog: &crate::Catalog) -> Vec<PresetChoice> {
    let mut infos = catalog.scenarios();
    infos.sort_by_key(|i| (!i.source.starts_with("builtin:"), i.name.clone()));
    infos
        .into_iter()
        .filter_map(|info| {
            let scenario = catalog.scenario(&info.name).ok()?;
            // Canonical, as the watcher's paths are, so that a reload or a removal finds
            // its entry ([`refresh_choice`]).
            let source = (!info.source.starts_with("builtin:")).then(|| {
                let path = PathBuf::from(&info.source);
                std::fs::canonicalize(&path).unwrap_or(path)
            });
            Some(PresetChoice {
                name: info.name,
                description: info.description,
                scenario,
                source,
            })
        })
        .collect()
}

/// Keeps the picker's list in step with a user preset file that was reloaded or removed
/// while the UI runs: the entries that came from `path` go, and the file's `scenario` (when
/// it is a scenario preset that loaded) comes in under its name, in the list's order (built
/// in first, then the user's, each by name). Without it a preset created after start was
/// missing, a removed one stayed, and an edited one loaded its version of the start.
pub fn refresh_choice(app: &mut App, path: &std::path::Path, scenario: Option<&Scenario>) {
    app.presets.retain(|c| c.source.as_deref() != Some(path));
    if let Some(s) = scenario {
        app.presets
            .retain(|c| c.source.is_none() || c.name != s.name);
        app.presets.push(PresetChoice {
            name: s.name.clone(),
            description: s.description.clone(),
            scenario: s.clone(),
            source: Some(path.to_path_buf()),
        });
        app.presets
            .sort_by_key(|c| (c.source.is_some(), c.name.clone()));
    }
}

/// The picker's state while open: the filter typed and the cursor (an index into
/// `entries`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PresetPicker {
    /// Text typed: an entry is listed when its name or description contains it (any case).
    pub query: String,
    /// The selected entry.
    pub cursor: usize,
}

/// One entry of the picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// A scenario preset: index into [`App::presets`].
    Scenario(usize),
    /// A model: index into the choices' models.
    Model(usize),
    /// A GPU: index into the choices' GPUs.
    Gpu(usize),
}

impl Pick {
    /// The section the entry is listed in.
    pub fn section(self) -> &'static str {
        match self {
            Pick::Scenario(_) => "scenarios",
            Pick::Model(_) => "models (changes only the model)",
            Pick::Gpu(_) => "GPUs (changes only the GPU)",
        }
    }
}

/// The entry's name and description.
pub fn label(app: &App, pick: Pick) -> (String, String) {
    match pick {
        Pick::Scenario(i) => app
            .presets
            .get(i)
            .map(|p| (p.name.clone(), p.description.clone())),
        Pick::Model(i) => app
            .choices
            .models
            .get(i)
            .map(|m| (m.name.clone(), m.description.clone())),
        Pick::Gpu(i) => app
            .choices
            .gpus
            .get(i)
            .map(|g| (g.name.clone(), g.description.clone())),
    }
    .unwrap_or_default()
}

/// Whether the entry is what the scenario holds now: the scenario preset it was loaded from
/// (none for a scenario made from flags alone), its model, its GPU.
pub fn current(app: &App, pick: Pick) -> bool {
    let (name, _) = label(app, pick);
    match pick {
        Pick::Scenario(_) => app.preset_name.as_deref() == Some(name.as_str()),
        Pick::Model(_) => app.scenario.model.name == name,
        Pick::Gpu(_) => app.scenario.gpu.name == name,
    }
}

/// The entries the filter `query` keeps, scenarios first, then models, then GPUs.
pub fn entries(app: &App, query: &str) -> Vec<Pick> {
    let query = query.to_lowercase();
    let all = (0..app.presets.len())
        .map(Pick::Scenario)
        .chain((0..app.choices.models.len()).map(Pick::Model))
        .chain((0..app.choices.gpus.len()).map(Pick::Gpu));
    all.filter(|&p| {
        let (name, description) = label(app, p);
        query.is_empty()
            || name.to_lowercase().contains(&query)
            || description.to_lowercase().contains(&query)
    })
    .collect()
}

/// `P`: opens the picker on the current scenario preset (or the first entry).
pub fn open(app: &mut App) -> Vec<Effect> {
    let list = entries(app, "");
    let cursor = list
        .iter()
        .position(|&p| matches!(p, Pick::Scenario(_)) && current(app, p))
        .unwrap_or(0);
    app.preset_picker = Some(PresetPicker {
        query: String::new(),
        cursor,
    });
    Vec::new()
}

/// A key while the picker is open: arrows move, Enter loads, Esc closes, Backspace and
/// printable characters edit the filter. `None`: the key is not the picker's (a Ctrl
/// chord, which the keymap then reads: Ctrl-C still quits).
pub fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
    let picker = app.preset_picker.as_mut()?;
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return None;
    }
    match key.code {
        KeyCode::Esc => app.preset_picker = None,
        KeyCode::Up => picker.cursor = picker.cursor.saturating_sub(1),
        KeyCode::Down => picker.cursor += 1,
        KeyCode::PageUp => picker.cursor = picker.cursor.saturating_sub(10),
        KeyCode::PageDown => picker.cursor += 10,
        KeyCode::Backspace => {
            picker.query.pop();
            picker.cursor = 0;
        }
        KeyCode::Char(c) if !c.is_control() => {
            picker.query.push(c);
            picker.cursor = 0;
        }
        KeyCode::Enter => {
            let (query, cursor) = (picker.query.clone(), picker.cursor);
            let list = entries(app, &query);
            let pick = list.get(cursor.min(list.len().saturating_sub(1))).copied();
            return Some(match pick {
                Some(p) => {
                    app.preset_picker = None;
                    load(app, p)
                }
                None => Vec::new(),
            });
        }
        _ => {}
    }
    // The cursor stays on an entry.
    if let Some(picker) = app.preset_picker.as_ref() {
        let n = entries(app, &picker.query).len();
        let cursor = picker.cursor.min(n.saturating_sub(1));
        if let Some(p) = app.preset_picker.as_mut() {
            p.cursor = cursor;
        }
    }
    Some(Vec::new())
}

/// Loads `pick`: a scenario preset replaces the scenario (and is the preset watched for
/// changes when it is a file); a model or a GPU changes only that.
fn load(app: &mut App, pick: Pick) -> Vec<Effect> {
    app.error = None;
    match pick {
        Pick::Scenario(i) => {
            let Some(choice) = app.presets.get(i).cloned() else {
                return Vec::new();
            };
            app.scenario = choice.scenario.clone();
            app.preset_base = Some(choice.scenario);
            app.preset_source = choice.source;
            app.note = Some(format!("loaded the scenario preset {}", choice.name));
            app.preset_name = Some(choice.name);
        }
        Pick::Model(i) => {
            let Some(model) = app.choices.models.get(i).cloned() else {
                return Vec::new();
            };
            app.note = Some(format!(
                "model {} → {} (the rest of the scenario kept)",
                app.scenario.model.name, model.name
            ));
            app.scenario.model = model;
        }
        Pick::Gpu(i) => {
            let Some(gpu) = app.choices.gpus.get(i).cloned() else {
                return Vec::new();
            };
            let was = app.scenario.gpu.name.clone();
            let name = gpu.name.clone();
            let budget = super::fields_budget::change_gpu(&mut app.scenario, gpu);
            app.note = Some(format!("gpu {was} → {name}; {budget}"));
        }
    }
    resolve(app)
}
