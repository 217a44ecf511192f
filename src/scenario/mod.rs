//! The scenario: what is trained (model), where (GPU), how it is split (parallel layout),
//! with which batch, and with which plan settings (schedule, strategy, budget).
//!
//! A `Scenario` is built from presets plus overrides and validated once
//! ([`Scenario::validate`]); everything downstream may assume it is valid.
//! [`presets`] loads the TOML presets, [`ScenarioOverrides`] applies command-line flags and
//! TUI edits, and [`to_toml`] writes a scenario back as a preset.

mod budget;
mod codec;
mod codecs;
mod default;
mod gpu;
pub(crate) mod magnitude;
mod model;
mod overrides;
pub mod params;
mod pipeline_layout;
pub mod presets;
mod profile;
pub mod ranges;
mod settings;
mod to_toml;
mod units;
mod validate;
mod validate_job;
mod validate_moe;
mod vocabulary;

/// A typed budget or reserve in GiB as bytes, checked (the TUI's fields take them).
#[cfg(feature = "tui")]
pub(crate) use budget::{budget_bytes, reserve_bytes};
pub use codec::CodecSpec;
pub use codecs::{Codec, builtin_codecs, codecs_from_tables};
pub use default::{DEFAULT_SCENARIO, default_scenario};
pub use gpu::{AttentionKernel, EfficiencyCurve, Fp8Recipe, GpuSpec};
pub use model::{ExpertGroups, MlaSpec, ModelSpec, ModelStyle, MoeSpec};
pub use overrides::ScenarioOverrides;
pub use pipeline_layout::{LayoutError, LayoutLayer, LayoutStage, PipelineLayout};
pub use presets::{Catalog, PresetError, PresetInfo, PresetKind};
pub use profile::{MeasuredProfile, UnitMeasurement};
pub use settings::{Batch, DEEPEP_DEFAULT_SMS, Parallel, PlanSettings, micro_batches_for};
pub use to_toml::{model_description, to_toml};
pub use units::GIB;
pub use validate::limits;
#[cfg(test)]
pub(crate) use validate::validate_model;
pub(crate) use validate_job::check_moe_a2a_overlap;
pub use validate_job::{DataParallelUse, data_parallel_refusal, grad_overlap_refusal};
pub use vocabulary::{
    AttentionBackend, Objective, P2p, Partition, Precision, ScheduleKind, Strategy, Zero,
};

/// One complete, validated description of a training set-up to plan and simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Name shown in the UI (the scenario preset's name, or "custom").
    pub name: String,
    /// One line saying what this set-up is.
    pub description: String,
    /// The transformer being trained.
    pub model: ModelSpec,
    /// The accelerator every device is.
    pub gpu: GpuSpec,
    /// Pipeline, tensor and data parallel layout.
    pub parallel: Parallel,
    /// Sequence length, micro-batch size and number of micro-batches.
    pub batch: Batch,
    /// Schedule, memory strategy, budget and planner options.
    pub plan: PlanSettings,
    /// Measured per-unit times and sizes that replace the cost model's estimates.
    pub profile: Option<MeasuredProfile>,
}

/// An input value that is not allowed, with the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field} = {}: {allowed}", shown(value))]
pub struct InvalidField {
    /// Dotted path of the field, e.g. `parallel.tp`.
    pub field: String,
    /// The offending value as the user wrote it.
    pub value: String,
    /// What would have been accepted.
    pub allowed: String,
}

/// The most characters of a value an error quotes; a longer one is cut, with its length.
const MAX_SHOWN_CHARS: usize = 60;

/// A value as an error shows it: as written, `''` when it is empty (so `= :` never appears),
/// or its first [`MAX_SHOWN_CHARS`] characters and its length when longer (a pasted 100,000
/// characters would bury the message).
fn shown(value: &str) -> String {
    let n = value.chars().count();
    if value.is_empty() {
        "''".into()
    } else if n > MAX_SHOWN_CHARS {
        let head: String = value.chars().take(MAX_SHOWN_CHARS).collect();
        format!("{head}… ({n} characters)")
    } else {
        value.to_string()
    }
}

impl InvalidField {
    /// Builds the error for `field` holding `value`, explaining what is `allowed`.
    pub fn new(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}
