//! [`ScenarioOverrides`]: the command-line flags (and the TUI's edits) on top of a preset.

use super::presets::{Catalog, budget_bytes};
use super::{InvalidField, Objective, Scenario};
use crate::scenario::ScheduleKind;
use crate::scenario::Strategy;

/// Values that replace a scenario's fields; `None` leaves the field alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioOverrides {
    /// Model preset name (`--model`).
    pub model: Option<String>,
    /// GPU preset name (`--gpu`).
    pub gpu: Option<String>,
    /// Pipeline stages `p`.
    pub pp: Option<u32>,
    /// Tensor-parallel size `t`.
    pub tp: Option<u32>,
    /// Data-parallel size `d`.
    pub dp: Option<u32>,
    /// Sequence parallelism on or off.
    pub sp: Option<bool>,
    /// Micro-batches per iteration `m`.
    pub micro_batches: Option<u32>,
    /// Sequences per micro-batch `b`.
    pub micro_batch_size: Option<u64>,
    /// Sequence length `s`.
    pub seq_len: Option<u64>,
    /// Memory budget per device, GiB.
    pub budget_gib: Option<f64>,
    /// Pipeline schedule.
    pub schedule: Option<ScheduleKind>,
    /// Memory strategy.
    pub strategy: Option<Strategy>,
    /// Virtual chunks per device `v`.
    pub chunks: Option<u32>,
    /// FlashAttention on or off.
    pub flash: Option<bool>,
    /// Partition objective.
    pub objective: Option<Objective>,
    /// Lynx-style overlap of recomputation.
    pub overlap_recompute: Option<bool>,
    /// Memory limit (chunk-activations) of the searched schedules.
    pub mem_limit: Option<f64>,
    /// Group size of `gis`/`gis-offload`.
    pub group_size: Option<u32>,
    /// Chunks offloaded by `gis-offload`.
    pub offload_chunks: Option<u32>,
}

impl ScenarioOverrides {
    /// Whether no field is overridden.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Applies the overrides to `scenario` and validates the result. Model and GPU names
    /// are looked up in `catalog`. When the GPU changes and the budget was the old GPU's
    /// memory (and no budget is given), the budget follows the new GPU's memory. On error
    /// `scenario` may be partly changed; apply to a clone to keep the old one.
    pub fn apply(&self, scenario: &mut Scenario, catalog: &Catalog) -> Result<(), InvalidField> {
        if let Some(name) = &self.model {
            let model = catalog.model(name).ok_or_else(|| {
                InvalidField::new(
                    "model",
                    name,
                    names("a model preset", &catalog.model_names()),
                )
            })?;
            scenario.model = model.clone();
        }
        if let Some(name) = &self.gpu {
            let gpu = catalog.gpu(name).ok_or_else(|| {
                InvalidField::new("gpu", name, names("a GPU preset", &catalog.gpu_names()))
            })?;
            if scenario.plan.memory_budget_bytes == scenario.gpu.memory_bytes() {
                scenario.plan.memory_budget_bytes = gpu.memory_bytes();
            }
            scenario.gpu = gpu.clone();
        }
        let par = &mut scenario.parallel;
        set(&mut par.pp, self.pp);
        set(&mut par.tp, self.tp);
        set(&mut par.dp, self.dp);
        set(&mut par.sequence_parallel, self.sp);
        set(&mut par.chunks, self.chunks);
        let batch = &mut scenario.batch;
        set(&mut batch.micro_batches, self.micro_batches);
        set(&mut batch.micro_batch_size, self.micro_batch_size);
        set(&mut batch.seq_len, self.seq_len);
        let plan = &mut scenario.plan;
        if let Some(gib) = self.budget_gib {
            plan.memory_budget_bytes = budget_bytes("budget_gib", gib)?;
        }
        set(&mut plan.schedule, self.schedule);
        set(&mut plan.strategy, self.strategy);
        set(&mut plan.flash_attention, self.flash);
        set(&mut plan.objective, self.objective);
        set(&mut plan.overlap_recompute, self.overlap_recompute);
        if self.mem_limit.is_some() {
            plan.mem_limit = self.mem_limit;
        }
        if self.group_size.is_some() {
            plan.group_size = self.group_size;
        }
        if self.offload_chunks.is_some() {
            plan.offload_chunks = self.offload_chunks;
        }
        scenario.validate()
    }
}

fn set<T: Copy>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

fn names(what: &str, known: &[&str]) -> String {
    format!("{what}: {}", known.join(", "))
}
