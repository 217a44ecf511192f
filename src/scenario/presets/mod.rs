//! Presets: models, GPUs and scenarios as TOML (docs/cli.md). The built-in files are
//! embedded; the user's config dir and `--preset FILE` are layered on top (later files win by
//! name). Parsing works on `(path, text)` pairs ([`Catalog::add_text`]) so that it is
//! testable and usable from a watcher thread; only `files.rs` touches the file system.

mod builtin;
mod claims;
mod error;
mod files;
mod resolve;
mod schema;
mod toml_error;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Serialize;

/// Where a byte offset of a file is (the TUI locates theme errors with it).
#[cfg(feature = "tui")]
pub(crate) use error::line_column;
pub use error::{PresetError, nearest};
/// The UI's settings file name (the file watcher tells it apart from the presets).
#[cfg(feature = "tui")]
pub use files::SETTINGS_FILE;
pub use files::{MAX_DEPTH, MAX_FILE_BYTES, read_text_file, user_config_dir};

use super::{GpuSpec, ModelSpec, Scenario};
use schema::{GpuFile, ModelFile, ScenarioToml};

/// What a preset file describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PresetKind {
    /// A `[model]` table.
    Model,
    /// A `[gpu]` table.
    Gpu,
    /// A scenario (top-level `name`, model, GPU, parallel layout, batch, plan).
    Scenario,
}

/// One listed preset: its name, description and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PresetInfo {
    /// Model, GPU or scenario.
    #[serde(skip)]
    pub kind: PresetKind,
    /// The preset's `name` key.
    pub name: String,
    /// Its `description` key (empty when absent).
    pub description: String,
    /// `builtin:presets/...` or the file path it was loaded from.
    pub source: String,
}

#[derive(Debug, Clone)]
struct Entry<T> {
    value: T,
    info: PresetInfo,
}

/// All known presets: the built-in ones plus whatever was layered on top.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    models: BTreeMap<String, Entry<ModelSpec>>,
    gpus: BTreeMap<String, Entry<GpuSpec>>,
    scenarios: BTreeMap<String, Entry<ScenarioToml>>,
    errors: Vec<PresetError>,
    /// Names user files claim but cannot give (`claims.rs`), with the reason.
    unusable: BTreeMap<(PresetKind, String), PresetError>,
}

static BUILTIN: OnceLock<Catalog> = OnceLock::new();

impl Catalog {
    /// A catalog with no presets.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The embedded presets (parsed once per process, then cloned).
    pub fn builtin() -> Self {
        builtin_catalog().clone()
    }

    /// Errors met while loading files into this catalog (built-in files: none, by test).
    pub fn errors(&self) -> &[PresetError] {
        &self.errors
    }

    /// Records an error met while loading (for the UI to show).
    pub fn push_error(&mut self, e: PresetError) {
        self.errors.push(e);
    }

    /// Parses one preset file's text and adds it, replacing a preset of the same kind and
    /// name. On error the catalog is unchanged (the last good preset stays).
    pub fn add_text(&mut self, file: &str, text: &str) -> Result<PresetInfo, PresetError> {
        self.add_text_unlocated(file, text)
            .map_err(|e| e.locate(text))
    }

    fn add_text_unlocated(&mut self, file: &str, text: &str) -> Result<PresetInfo, PresetError> {
        let kind = detect_kind(file, text)?;
        let to_err = |e: toml::de::Error| PresetError::from_toml(file, text, &e);
        let inv = |e: crate::scenario::InvalidField| PresetError::invalid(file, &e);
        let info = |kind, name: &str, description: &str| PresetInfo {
            kind,
            name: name.to_string(),
            description: description.to_string(),
            source: file.to_string(),
        };
        match kind {
            PresetKind::Model => {
                let parsed: ModelFile = toml::from_str(text).map_err(to_err)?;
                let value = resolve::model_spec(&parsed.model).map_err(inv)?;
                let info = info(kind, &value.name, &value.description);
                self.models.insert(
                    value.name.clone(),
                    Entry {
                        value,
                        info: info.clone(),
                    },
                );
                Ok(info)
            }
            PresetKind::Gpu => {
                let parsed: GpuFile = toml::from_str(text).map_err(to_err)?;
                let value = resolve::gpu_spec(&parsed.gpu).map_err(inv)?;
                let info = info(kind, &value.name, &value.description);
                self.gpus.insert(
                    value.name.clone(),
                    Entry {
                        value,
                        info: info.clone(),
                    },
                );
                Ok(info)
            }
            PresetKind::Scenario => {
                let value: ScenarioToml = toml::from_str(text).map_err(to_err)?;
                // Resolve now so that a broken scenario is reported when it is loaded.
                self.resolve(file, &value)?;
                let info = info(
                    kind,
                    &value.name,
                    value.description.as_deref().unwrap_or_default(),
                );
                self.scenarios.insert(
                    value.name.clone(),
                    Entry {
                        value,
                        info: info.clone(),
                    },
                );
                Ok(info)
            }
        }
    }

    /// Parses a scenario file's text and resolves it against this catalog without adding it.
    pub fn scenario_from_text(&self, file: &str, text: &str) -> Result<Scenario, PresetError> {
        let value: ScenarioToml =
            toml::from_str(text).map_err(|e| PresetError::from_toml(file, text, &e))?;
        self.resolve(file, &value).map_err(|e| e.locate(text))
    }

    /// The scenario preset called `name_or_path`, or, when no preset has that name and it
    /// looks like a path (contains `/` or ends in `.toml`), the scenario in that file.
    /// A user file that claims the name and cannot give it makes the name unusable
    /// (`claims.rs`); a built-in scenario names built-in models and GPUs (a user preset of the
    /// same name is used where it is named, not inside the built-in scenarios).
    pub fn scenario(&self, name_or_path: &str) -> Result<Scenario, PresetError> {
        if let Some(e) = self.unusable(PresetKind::Scenario, name_or_path) {
            return Err(e);
        }
        if let Some(e) = self.scenarios.get(name_or_path) {
            if e.info.source.starts_with(builtin::PREFIX) {
                return builtin_catalog().resolve(&e.info.source, &e.value);
            }
            return self.resolve(&e.info.source, &e.value);
        }
        if files::looks_like_path(name_or_path) {
            return files::scenario_file(self, name_or_path);
        }
        // No file is involved: name the setting instead, and say that a path works too.
        let message =
            resolve::unknown_name("scenario preset", name_or_path, &self.scenario_names());
        Err(PresetError::new(
            "preset",
            format!("{message} (or a path to a .toml file)"),
        ))
    }

    /// The model preset called `name`.
    pub fn model(&self, name: &str) -> Option<&ModelSpec> {
        self.models.get(name).map(|e| &e.value)
    }

    /// The GPU preset called `name`.
    pub fn gpu(&self, name: &str) -> Option<&GpuSpec> {
        self.gpus.get(name).map(|e| &e.value)
    }

    /// Model preset names, sorted.
    pub fn model_names(&self) -> Vec<&str> {
        self.models.keys().map(String::as_str).collect()
    }

    /// GPU preset names, sorted.
    pub fn gpu_names(&self) -> Vec<&str> {
        self.gpus.keys().map(String::as_str).collect()
    }

    /// Scenario preset names, sorted.
    pub fn scenario_names(&self) -> Vec<&str> {
        self.scenarios.keys().map(String::as_str).collect()
    }

    /// Model presets with their descriptions, sorted by name.
    pub fn models(&self) -> Vec<PresetInfo> {
        self.models.values().map(|e| e.info.clone()).collect()
    }

    /// GPU presets with their descriptions, sorted by name.
    pub fn gpus(&self) -> Vec<PresetInfo> {
        self.gpus.values().map(|e| e.info.clone()).collect()
    }

    /// Scenario presets with their descriptions, sorted by name.
    pub fn scenarios(&self) -> Vec<PresetInfo> {
        self.scenarios.values().map(|e| e.info.clone()).collect()
    }
}

/// The embedded presets, parsed once per process.
fn builtin_catalog() -> &'static Catalog {
    BUILTIN.get_or_init(|| {
        let mut c = Catalog::empty();
        for (path, text) in builtin::FILES {
            if let Err(e) = c.add_text(path, text) {
                c.errors.push(e);
            }
        }
        c
    })
}

/// Whether a preset text is a model file, a GPU file or a scenario.
fn detect_kind(file: &str, text: &str) -> Result<PresetKind, PresetError> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| PresetError::from_toml(file, text, &e))?;
    if table.contains_key("name") {
        return Ok(PresetKind::Scenario);
    }
    let is_table = |k: &str| table.get(k).is_some_and(toml::Value::is_table);
    if is_table("model") && !table.contains_key("gpu") {
        return Ok(PresetKind::Model);
    }
    if is_table("gpu") && !table.contains_key("model") {
        return Ok(PresetKind::Gpu);
    }
    Err(PresetError::at(
        file,
        text,
        0,
        "not a preset: expected a [model] table, a [gpu] table, or a scenario with a top-level `name`",
    ))
}
