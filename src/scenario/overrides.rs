//! [`ScenarioOverrides`]: the command-line flags (and the TUI's edits) on top of a preset.

use super::budget::budget_of;
use super::presets::{Catalog, PresetKind};
use super::{
    AttentionBackend, GIB, InvalidField, Objective, P2p, Partition, PipelineLayout, Precision,
    Scenario, Zero,
};
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
    /// FlashAttention's kernels: cuDNN's fused attention or FlashAttention-2.
    pub attention_backend: Option<AttentionBackend>,
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
    /// `CUDA_DEVICE_MAX_CONNECTIONS` of the run.
    pub device_max_connections: Option<u32>,
    /// Distributed optimizer (ZeRO-1 over `d x cp`) on or off: an alias of `zero` 1 and 0.
    pub distributed_optimizer: Option<bool>,
    /// ZeRO stage (0, 1 or 3); given with `distributed_optimizer`, they must agree.
    pub zero: Option<Zero>,
    /// Context-parallel size `cp`.
    pub cp: Option<u32>,
    /// Expert-parallel size `ep`.
    pub ep: Option<u32>,
    /// Expert tensor-parallel size `etp`.
    pub etp: Option<u32>,
    /// The busiest expert's tokens over the mean (>= 1).
    pub routing_imbalance: Option<f64>,
    /// DeepEP's node-deduplicated all-to-alls on or off.
    pub deepep: Option<bool>,
    /// Multi-token-prediction layers of the model (replaces the preset's depth).
    pub mtp_layers: Option<u32>,
    /// The distributed optimizer's parameter all-gather overlapped with the next forward.
    pub overlap_param_gather: Option<bool>,
    /// The MoE all-to-alls of an overlapped pair hidden under the other half's compute.
    pub moe_a2a_overlap: Option<bool>,
    /// Tensor-parallel collectives pipelined with their GEMMs (Transformer Engine).
    pub tp_comm_overlap: Option<bool>,
    /// Overlap of the data-parallel gradient reduction with the backward on or off.
    pub overlap_grad_reduce: Option<bool>,
    /// Layer split of the baselines and non-partitioning strategies.
    pub partition: Option<Partition>,
    /// Whether stage-to-stage sends block their sender.
    pub p2p: Option<P2p>,
    /// Pipeline layout in Megatron's grammar (an empty text clears it).
    pub layout: Option<String>,
    /// Sequences per iteration over all replicas; sets `m = B / (b d)`.
    pub global_batch: Option<u64>,
    /// Memory kept free per device, GiB (budget = the GPU's memory minus it).
    pub reserve_gib: Option<f64>,
    /// Bytes per gradient element (2 or 4).
    pub grad_bytes: Option<u32>,
    /// Bytes per element of Adam's moments (2 or 4).
    pub moment_bytes: Option<u32>,
    /// Each SwiGLU's input kept in fp8 for the backward.
    pub activation_func_fp8_input_store: Option<bool>,
    /// Number format of the transformer layers' GEMMs (bf16 or fp8).
    pub precision: Option<Precision>,
    /// Units the `named` strategy recomputes.
    pub recompute_units: Option<Vec<String>>,
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
            unusable(catalog, PresetKind::Model, "model", name)?;
            let model = catalog.model(name).ok_or_else(|| {
                InvalidField::new(
                    "model",
                    name,
                    names("a model preset", name, &catalog.model_names()),
                )
            })?;
            scenario.model = model.clone();
        }
        if let Some(name) = &self.gpu {
            unusable(catalog, PresetKind::Gpu, "gpu", name)?;
            let gpu = catalog.gpu(name).ok_or_else(|| {
                InvalidField::new(
                    "gpu",
                    name,
                    names("a GPU preset", name, &catalog.gpu_names()),
                )
            })?;
            if self.budget_gib.is_some() || self.reserve_gib.is_some() {
                // The budget flags below set the budget on the new GPU.
                scenario.gpu = gpu.clone();
            } else {
                let reserve = scenario.plan.reserve_bytes.unwrap_or(0) as f64 / GIB;
                let budget = scenario.plan.memory_budget_bytes as f64 / GIB;
                let capped = scenario.change_gpu(gpu.clone()).map_err(|_| {
                    InvalidField::new(
                        "gpu",
                        name,
                        format!(
                            "a GPU with more memory than the scenario's reserve \
                             ({reserve:.1} GiB); or set reserve_gib or budget_gib"
                        ),
                    )
                })?;
                if capped.is_some() {
                    return Err(InvalidField::new(
                        "gpu",
                        name,
                        format!(
                            "a GPU with at least the scenario's absolute budget of {budget:.1} GiB \
                             ({name} has {} GiB); or set budget_gib or reserve_gib",
                            gpu.memory_gib
                        ),
                    ));
                }
            }
        }
        let par = &mut scenario.parallel;
        set(&mut par.pp, self.pp);
        set(&mut par.tp, self.tp);
        set(&mut par.dp, self.dp);
        set(&mut par.sequence_parallel, self.sp);
        set(&mut par.chunks, self.chunks);
        match (self.zero, self.distributed_optimizer) {
            (Some(z), Some(d)) if d != (z != Zero::Off) => {
                return Err(InvalidField::new(
                    "parallel.distributed_optimizer",
                    d,
                    format!(
                        "{} to agree with parallel.zero = {} (the distributed optimizer is zero \
                         1, and zero 3 includes it): give one of the two",
                        !d,
                        z.level()
                    ),
                ));
            }
            (Some(z), _) => par.set_zero(z),
            (None, Some(d)) => par.set_zero(if d { Zero::Optimizer } else { Zero::Off }),
            (None, None) => {}
        }
        set(&mut par.cp, self.cp);
        set(&mut par.ep, self.ep);
        set(&mut par.etp, self.etp);
        set(&mut scenario.model.mtp_layers, self.mtp_layers);
        set(&mut par.grad_bytes, self.grad_bytes);
        set(&mut par.moment_bytes, self.moment_bytes);
        set(&mut par.precision, self.precision);
        let batch = &mut scenario.batch;
        set(&mut batch.micro_batches, self.micro_batches);
        set(&mut batch.micro_batch_size, self.micro_batch_size);
        set(&mut batch.seq_len, self.seq_len);
        if let Some(global) = self.global_batch {
            // A zero b or d counts as 1 here: validation then names that field itself.
            batch.micro_batches =
                super::micro_batches_for(global, batch.micro_batch_size.max(1), par.dp.max(1))?;
            if let Some(m) = self.micro_batches.filter(|&m| m != batch.micro_batches) {
                return Err(InvalidField::new(
                    "global_batch",
                    global,
                    format!(
                        "a global batch that agrees with micro_batches ({m}): B = m x b x d = {}",
                        super::Batch {
                            micro_batches: m,
                            ..*batch
                        }
                        .global_batch(par.dp)
                    ),
                ));
            }
        }
        let plan = &mut scenario.plan;
        if self.budget_gib.is_some() || self.reserve_gib.is_some() {
            let (budget, reserve) = budget_of(
                self.budget_gib,
                self.reserve_gib,
                &scenario.gpu,
                ("budget_gib", "reserve_gib"),
            )?;
            plan.memory_budget_bytes = budget;
            plan.reserve_bytes = reserve;
        }
        set(&mut plan.partition, self.partition);
        set(&mut plan.p2p, self.p2p);
        if let Some(text) = &self.layout {
            plan.layout = if text.is_empty() {
                None
            } else {
                Some(
                    PipelineLayout::parse(text)
                        .map_err(|e| InvalidField::new("plan.layout", text, e.to_string()))?,
                )
            };
        }
        if let Some(units) = &self.recompute_units {
            plan.recompute_units = units.clone();
        }
        set(&mut plan.overlap_grad_reduce, self.overlap_grad_reduce);
        set(&mut plan.overlap_param_gather, self.overlap_param_gather);
        set(&mut plan.moe_a2a_overlap, self.moe_a2a_overlap);
        set(&mut plan.tp_comm_overlap, self.tp_comm_overlap);
        set(&mut plan.routing_imbalance, self.routing_imbalance);
        set(&mut plan.deepep, self.deepep);
        set(
            &mut plan.activation_func_fp8_input_store,
            self.activation_func_fp8_input_store,
        );
        set(&mut plan.schedule, self.schedule);
        set(&mut plan.strategy, self.strategy);
        set(&mut plan.flash_attention, self.flash);
        set(&mut plan.attention_backend, self.attention_backend);
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
        set(
            &mut plan.device_max_connections,
            self.device_max_connections,
        );
        if let Some(global) = self.global_batch {
            interleaved_global_batch(scenario, global)?;
        }
        scenario.validate()
    }
}

/// Interleaved 1F1B needs `m` to be a multiple of `p`: where `m` came from the global batch,
/// the global batch is refused, with how `m` follows from it and the nearest global batches
/// that work.
fn interleaved_global_batch(s: &Scenario, global: u64) -> Result<(), InvalidField> {
    let p = u64::from(s.parallel.pp.max(1));
    let m = u64::from(s.batch.micro_batches);
    if s.plan.schedule != super::ScheduleKind::Interleaved || m % p == 0 {
        return Ok(());
    }
    let (b, d) = (
        s.batch.micro_batch_size.max(1),
        u64::from(s.parallel.dp.max(1)),
    );
    let step = p * b * d;
    let below = (m / p) * step;
    let nearest = if below > 0 {
        format!("{below} or {}", below + step)
    } else {
        step.to_string()
    };
    Err(InvalidField::new(
        "global_batch",
        global,
        format!(
            "with the interleaved schedule, a global batch whose m = B / (b x d) is a multiple \
             of p ({p}): here m = {global} / ({b} x {d}) = {m}; {nearest} would do"
        ),
    ))
}

fn set<T: Copy>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// Refuses a model or GPU name that a user file claims but cannot give (broken, or defined
/// twice), naming the file.
fn unusable(
    catalog: &Catalog,
    kind: PresetKind,
    field: &str,
    name: &str,
) -> Result<(), InvalidField> {
    match catalog.unusable(kind, name) {
        Some(e) => Err(InvalidField::new(
            field,
            name,
            format!("a preset that loads: {e}"),
        )),
        None => Ok(()),
    }
}

/// "a model preset (did you mean 'llama3-8b'?): gpt-21b, ..." for an unknown `name`.
fn names(what: &str, name: &str, known: &[&str]) -> String {
    let hint = super::presets::nearest(name, known)
        .map(|k| format!(" (did you mean '{k}'?)"))
        .unwrap_or_default();
    format!("{what}{hint}: {}", known.join(", "))
}
