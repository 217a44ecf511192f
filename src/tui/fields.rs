//! The editable parameters of the left panel: their labels, how they are shown, and how a
//! step (left/right, +/-) or a typed number changes the scenario.
//!
//! To add a parameter: a variant of [`Field`], its place in [`Field::ALL`] (the panel,
//! the mouse, compare's change list and the field cycle follow that list; the panel scrolls
//! when the fields outnumber its rows), and its arms in [`Field::label`], [`Field::value`],
//! [`step`] and, for a number, [`set_number`]. The MoE fields' rules are in `fields_moe.rs`,
//! the job flags' (sends, connections, the overlaps) in `fields_job.rs`, those of the rows
//! only a mixture of experts shows ([`Field::shown`]) in `fields_experts.rs`, the run options
//! (attention backend, Adam moments, fp8 activation-input store) in `fields_run.rs`.

use crate::plan::Strategy;
use crate::scenario::{GpuSpec, ModelSpec, Objective, Partition, Precision, Scenario, Zero};
use crate::schedule::ScheduleKind;

use crate::scenario::GIB;

use super::fields_budget::{change_gpu, set_reserve};
use super::fields_count::{count_range, count_value, set_count};
use super::fields_experts as experts;
use super::fields_guard as guard;
use super::fields_job as job;
use super::fields_moe as moe;
pub use super::fields_notes::unused_note;
use super::fields_run as run;
use super::fields_step::{cycle, cycle_by_name, step_doubling, step_linear, to_u32};

/// One editable parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// Model preset.
    Model,
    /// GPU preset.
    Gpu,
    /// Pipeline stages `p`.
    Stages,
    /// Tensor parallel `t`.
    Tp,
    /// Data parallel `d`.
    Dp,
    /// Context-parallel size `cp` (each sequence split over `cp` ranks).
    Cp,
    /// ZeRO stage over the `d x cp` data-parallel ranks: 0, 1 (the distributed optimizer)
    /// or 3 (weights, gradients and optimizer state sharded).
    Zero,
    /// Number format of the layers' GEMMs: bf16 or fp8.
    Precision,
    /// Sequence parallelism on/off.
    SequenceParallel,
    /// Micro-batches per iteration `m`.
    MicroBatches,
    /// Micro-batch size `b`.
    MicroBatchSize,
    /// Sequence length `s`.
    SeqLen,
    /// Memory budget per device, GiB.
    Budget,
    /// GiB of each GPU's memory kept free: the budget is the GPU's memory less it (and it
    /// is kept when the GPU changes).
    Reserve,
    /// Pipeline schedule.
    Schedule,
    /// Memory strategy.
    Strategy,
    /// Virtual chunks per device.
    Chunks,
    /// Sequences per iteration over all replicas, `B = m x b x d` (an edit sets `m`).
    GlobalBatch,
    /// FlashAttention (fused core attention) on/off.
    Flash,
    /// Layer split of the baselines and non-partitioning strategies (even, balanced).
    Partition,
    /// The pipeline layout in Megatron's `--pipeline-model-parallel-layout` grammar: the
    /// layers of every virtual stage, typed into a one-line editor (none: the partition's
    /// split).
    Layout,
    /// Objective of the partition DP (estimate, adapipe).
    Objective,
    /// Megatron's overlap of the data-parallel gradient reduction with the backward on/off.
    OverlapGradReduce,
    /// Bytes per gradient element kept and reduced: 4 (fp32) or 2 (16-bit).
    GradBytes,
    /// Bytes per Adam moment element: 4 (fp32) or 2 (bf16) (`--moment-bytes`).
    MomentBytes,
    /// The attention's FlashAttention kernels: cuDNN's or FlashAttention-2
    /// (`--attention-backend`).
    AttentionBackend,
    /// The SwiGLU input kept in fp8 on/off (`--activation-func-fp8-input-store`; a SwiGLU
    /// model only).
    Fp8InputStore,
    /// Expert-parallel size `ep` of a mixture of experts (fixed at 1 for a dense model).
    Ep,
    /// Routing imbalance of a mixture of experts: the busiest expert's tokens over the mean.
    Imbalance,
    /// The MoE all-to-all overlap of the overlapped forward-backward pairs (DualPipe's, and
    /// Megatron's combined 1F1B on interleaved) on/off.
    A2aOverlap,
    /// Stage-to-stage sends: overlapped or blocking (`--p2p`).
    P2p,
    /// The run's `CUDA_DEVICE_MAX_CONNECTIONS` (`--device-max-connections`).
    DeviceConnections,
    /// The distributed optimizer's parameter all-gather overlapped with the next forward on/off.
    ParamGather,
    /// Tensor-parallel collectives pipelined with their GEMMs on/off (`--tp-comm-overlap`).
    TpOverlap,
    /// Expert tensor-parallel size `etp` (a mixture of experts only).
    Etp,
    /// DeepEP's all-to-all kernels on/off (a mixture of experts only).
    Deepep,
    /// Multi-token-prediction layers (a mixture of experts only).
    Mtp,
}

impl Field {
    /// Every field, top to bottom.
    pub const ALL: [Field; 37] = [
        Field::Model,
        Field::Gpu,
        Field::Stages,
        Field::Tp,
        Field::Dp,
        Field::SequenceParallel,
        Field::MicroBatches,
        Field::MicroBatchSize,
        Field::GlobalBatch,
        Field::SeqLen,
        Field::Budget,
        Field::Reserve,
        Field::Schedule,
        Field::Strategy,
        Field::Chunks,
        Field::Zero,
        Field::Cp,
        Field::Precision,
        Field::Flash,
        Field::Partition,
        Field::Layout,
        Field::Objective,
        Field::OverlapGradReduce,
        Field::ParamGather,
        Field::TpOverlap,
        Field::P2p,
        Field::DeviceConnections,
        Field::GradBytes,
        Field::MomentBytes,
        Field::AttentionBackend,
        Field::Fp8InputStore,
        Field::Ep,
        Field::Etp,
        Field::Imbalance,
        Field::A2aOverlap,
        Field::Deepep,
        Field::Mtp,
    ];

    /// Short label shown in the panel.
    pub fn label(self) -> &'static str {
        match self {
            Field::Model => "model",
            Field::Gpu => "gpu",
            Field::Stages => "stages p",
            Field::Tp => "tensor t",
            Field::Dp => "data d",
            Field::Cp => "ctx cp",
            Field::Zero => "zero",
            Field::Precision => "prec",
            Field::SequenceParallel => "seq par",
            Field::MicroBatches => "micro m",
            Field::MicroBatchSize => "mb size",
            Field::SeqLen => "seq len",
            Field::Budget => "budget",
            Field::Reserve => "reserve",
            Field::Schedule => "schedule",
            Field::Strategy => "strategy",
            Field::Chunks => "chunks",
            Field::GlobalBatch => "global B",
            Field::Flash => "flash",
            Field::Partition => "partition",
            Field::Layout => "layout",
            Field::Objective => "objective",
            Field::OverlapGradReduce => "overlap",
            Field::GradBytes => "grad size",
            Field::MomentBytes => "adam mom",
            Field::AttentionBackend => "attn",
            Field::Fp8InputStore => "fp8 store",
            Field::Ep => "expert ep",
            Field::Imbalance => "imbalance",
            Field::A2aOverlap => "a2a ovl",
            Field::P2p => "p2p",
            Field::DeviceConnections => "dev conns",
            Field::ParamGather => "param ag",
            Field::TpOverlap => "tp ovl",
            Field::Etp => "expert tp",
            Field::Deepep => "deepep",
            Field::Mtp => "mtp",
        }
    }

    /// Whether a typed number sets this field.
    pub fn numeric(self) -> bool {
        !matches!(
            self,
            Field::Model
                | Field::Gpu
                | Field::Zero
                | Field::Precision
                | Field::SequenceParallel
                | Field::Schedule
                | Field::Strategy
                | Field::Flash
                | Field::Partition
                | Field::Layout
                | Field::Objective
                | Field::OverlapGradReduce
                | Field::A2aOverlap
                | Field::P2p
                | Field::ParamGather
                | Field::TpOverlap
                | Field::Deepep
                | Field::AttentionBackend
                | Field::Fp8InputStore
        )
    }

    /// The field's current value as shown.
    pub fn value(self, sc: &Scenario) -> String {
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        match self {
            Field::Model => sc.model.name.clone(),
            Field::Gpu => sc.gpu.name.clone(),
            Field::Stages => sc.parallel.pp.to_string(),
            Field::Tp => sc.parallel.tp.to_string(),
            Field::Dp => sc.parallel.dp.to_string(),
            Field::Cp => sc.parallel.cp.to_string(),
            Field::Zero => match sc.parallel.zero() {
                Zero::Off => "0",
                Zero::Optimizer => "1 dist opt",
                Zero::Full => "3 full",
            }
            .into(),
            Field::Precision => sc.parallel.precision.name().into(),
            Field::SequenceParallel => if sc.parallel.sequence_parallel {
                "on"
            } else {
                "off"
            }
            .into(),
            Field::MicroBatches => sc.batch.micro_batches.to_string(),
            Field::MicroBatchSize => sc.batch.micro_batch_size.to_string(),
            Field::SeqLen => sc.batch.seq_len.to_string(),
            Field::Budget => format!("{:.1} GiB", sc.plan.memory_budget_bytes as f64 / GIB),
            Field::Reserve => match sc.plan.reserve_bytes {
                Some(r) => format!("{:.1} GiB", r as f64 / GIB),
                None => "– (budget)".into(),
            },
            Field::Schedule => sc.plan.schedule.name().into(),
            Field::Strategy => sc.plan.strategy.name().into(),
            Field::Chunks => {
                let used = sc.plan.schedule.chunks(sc.parallel.chunks);
                if sc.plan.schedule.replicates_stages() {
                    format!("{} (2 copies)", sc.parallel.chunks)
                } else if used == sc.parallel.chunks {
                    used.to_string()
                } else {
                    format!("{} (uses {used})", sc.parallel.chunks)
                }
            }
            Field::GlobalBatch => global_batch(sc).to_string(),
            Field::Flash => on(sc.plan.flash_attention),
            // A layout replaces the partition (the layout row below shows it).
            Field::Partition => match &sc.plan.layout {
                Some(_) => "– (layout)".into(),
                None => sc.plan.partition.name().into(),
            },
            Field::Layout => match &sc.plan.layout {
                Some(layout) => layout.text().to_string(),
                None => "– (none)".into(),
            },
            Field::Objective => sc.plan.objective.name().into(),
            Field::OverlapGradReduce => on(sc.plan.overlap_grad_reduce),
            Field::GradBytes => format!("{} bytes", sc.parallel.grad_bytes),
            Field::MomentBytes => format!("{} bytes", sc.parallel.moment_bytes),
            Field::AttentionBackend => sc.plan.attention_backend.name().into(),
            Field::Fp8InputStore => on(sc.plan.activation_func_fp8_input_store),
            Field::Ep => moe::ep_value(sc),
            Field::Imbalance => moe::imbalance_value(sc),
            Field::A2aOverlap => moe::a2a_value(sc),
            Field::P2p => job::p2p_value(sc),
            Field::DeviceConnections => job::connections_value(sc),
            Field::ParamGather => job::param_gather_value(sc),
            Field::TpOverlap => job::tp_overlap_value(sc),
            Field::Etp => sc.parallel.etp.to_string(),
            Field::Deepep => on(sc.plan.deepep),
            Field::Mtp => sc.model.mtp_layers.to_string(),
        }
    }
}

/// The ZeRO stages the zero field cycles through.
const ZERO_STAGES: &[Zero] = &[Zero::Off, Zero::Optimizer, Zero::Full];

/// The number formats the precision field cycles through.
const PRECISIONS: &[Precision] = &[Precision::Bf16, Precision::Fp8];

/// Sequences per iteration over all replicas, `m x b x d`.
pub fn global_batch(sc: &Scenario) -> u64 {
    u64::from(sc.batch.micro_batches)
        .saturating_mul(sc.batch.micro_batch_size)
        .saturating_mul(u64::from(sc.parallel.dp))
}

/// The presets the model and GPU fields cycle through.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choices {
    /// Model presets.
    pub models: Vec<ModelSpec>,
    /// GPU presets.
    pub gpus: Vec<GpuSpec>,
}

/// Moves `field` one step up (`delta > 0`) or down. Returns a note for the status bar when
/// the step also changed something else (the budget follows a new GPU), or was refused (the
/// data-parallel rule of [`guard::guarded`] among others).
pub fn step(sc: &mut Scenario, field: Field, delta: i32, choices: &Choices) -> Option<String> {
    // A count stops at its largest value: a step past it is said in the field's words
    // (not the engine's key and a value nobody typed).
    let largest = count_range(field).map(|r| r.max as u64);
    if let (Some(max), Some(v)) = (largest, count_value(sc, field))
        && delta > 0
        && v >= max
    {
        return Some(format!("{} is at its largest, {max}", field.label()));
    }
    let note = guard::guarded(sc, field, |sc| step_unguarded(sc, field, delta, choices))
        .unwrap_or_else(Some);
    if let (Some(max), Some(v)) = (largest, count_value(sc, field))
        && v > max
    {
        set_count(sc, field, max);
    }
    note
}

fn step_unguarded(
    sc: &mut Scenario,
    field: Field,
    delta: i32,
    choices: &Choices,
) -> Option<String> {
    match field {
        Field::Model => {
            if let Some(m) = cycle_by_name(&choices.models, &sc.model.name, |m| &m.name, delta) {
                sc.model = m;
            }
        }
        Field::Gpu => {
            if let Some(g) = cycle_by_name(&choices.gpus, &sc.gpu.name, |g| &g.name, delta) {
                return Some(change_gpu(sc, g));
            }
        }
        Field::Stages => {
            sc.parallel.pp = to_u32(step_linear(u64::from(sc.parallel.pp), delta, 1));
        }
        Field::Tp => {
            let node = sc.gpu.node_gpus.max(1);
            let next = to_u32(step_doubling(u64::from(sc.parallel.tp), delta, 1));
            if delta > 0 && next > node {
                // Tensor parallelism stays inside a node (its collectives need NVLink).
                sc.parallel.tp = sc.parallel.tp.max(node);
                return Some(format!(
                    "tensor t stops at the node size, {node} GPUs of {} (type a number to go past)",
                    sc.gpu.name
                ));
            }
            sc.parallel.tp = next;
        }
        Field::Dp => sc.parallel.dp = to_u32(step_doubling(u64::from(sc.parallel.dp), delta, 1)),
        Field::Cp => sc.parallel.cp = to_u32(step_doubling(u64::from(sc.parallel.cp), delta, 1)),
        Field::Zero => {
            let z = cycle(ZERO_STAGES, &sc.parallel.zero(), delta)?;
            if let Some(reason) = z.refusal_over(sc.parallel.dp, sc.parallel.cp) {
                // The command line's rule and words: sharding over one rank does nothing.
                return Some(format!(
                    "zero {}: {reason}; set data d or ctx cp above 1 first",
                    z.level()
                ));
            }
            sc.parallel.set_zero(z);
        }
        Field::Precision => {
            let p = cycle(PRECISIONS, &sc.parallel.precision, delta)?;
            if p.is_fp8() && sc.gpu.fp8_tflops.is_none() {
                // Refused here rather than left for the engine: the step would only fail.
                return Some(format!(
                    "fp8 needs a GPU with fp8 tensor cores: {} has none (choose an H100 or later)",
                    sc.gpu.name
                ));
            }
            sc.parallel.precision = p;
        }
        Field::SequenceParallel => sc.parallel.sequence_parallel = !sc.parallel.sequence_parallel,
        Field::MicroBatches => {
            sc.batch.micro_batches =
                to_u32(step_linear(u64::from(sc.batch.micro_batches), delta, 1));
        }
        Field::MicroBatchSize => {
            sc.batch.micro_batch_size = step_linear(sc.batch.micro_batch_size, delta, 1);
        }
        Field::SeqLen => sc.batch.seq_len = step_doubling(sc.batch.seq_len, delta, 128),
        Field::Budget => {
            // One GiB from the value as it is (not rounded first), so that a step back
            // returns to it: a preset's 4.5 GiB stays reachable.
            let gib_bytes: i128 = 1 << 30;
            let next = i128::from(sc.plan.memory_budget_bytes) + i128::from(delta) * gib_bytes;
            let memory = sc.gpu.memory_bytes();
            let bytes = u64::try_from(next.max(gib_bytes))
                .unwrap_or(memory)
                .min(memory);
            if sc.set_absolute_budget(bytes).is_ok() && delta > 0 && bytes == memory {
                return Some(format!(
                    "the budget stops at the GPU's memory, {:.1} GiB of {}",
                    memory as f64 / GIB,
                    sc.gpu.name
                ));
            }
        }
        Field::Reserve => {
            let memory = sc.gpu.memory_bytes();
            let now = sc
                .plan
                .reserve_bytes
                .unwrap_or_else(|| memory.saturating_sub(sc.plan.memory_budget_bytes));
            // One GiB from the value as it is, as for the budget.
            let gib = (now as f64 / GIB + f64::from(delta)).max(0.0);
            return set_reserve(sc, gib).err();
        }
        Field::Schedule => {
            if let Some(s) = cycle(ScheduleKind::ALL, &sc.plan.schedule, delta) {
                sc.plan.schedule = s;
            }
        }
        Field::Strategy => {
            if let Some(s) = cycle(Strategy::ALL, &sc.plan.strategy, delta) {
                sc.plan.strategy = s;
            }
        }
        Field::Chunks => {
            sc.parallel.chunks = to_u32(step_linear(u64::from(sc.parallel.chunks), delta, 1));
            return unused_note(sc, field);
        }
        Field::GlobalBatch => {
            // One micro-batch more or less per replica: B moves by b x d.
            sc.batch.micro_batches =
                to_u32(step_linear(u64::from(sc.batch.micro_batches), delta, 1));
            return Some(format!(
                "global B {} = m {} x b {} x d {} (the step changes m)",
                global_batch(sc),
                sc.batch.micro_batches,
                sc.batch.micro_batch_size,
                sc.parallel.dp
            ));
        }
        Field::Flash => sc.plan.flash_attention = !sc.plan.flash_attention,
        Field::Partition => {
            if let Some(p) = cycle(Partition::ALL, &sc.plan.partition, delta) {
                sc.plan.partition = p;
            }
        }
        Field::Layout => {
            return Some(
                "layout: ⏎ opens its editor (Megatron's grammar, e.g. Et*3|t*4|t*4|t*4L; \
                 empty: the partition)"
                    .into(),
            );
        }
        Field::Objective => {
            if let Some(o) = cycle(Objective::ALL, &sc.plan.objective, delta) {
                sc.plan.objective = o;
            }
        }
        Field::OverlapGradReduce => sc.plan.overlap_grad_reduce = !sc.plan.overlap_grad_reduce,
        Field::GradBytes => {
            sc.parallel.grad_bytes = if sc.parallel.grad_bytes == 4 { 2 } else { 4 };
        }
        Field::MomentBytes => return run::step_moments(sc),
        Field::AttentionBackend => return run::step_attention(sc, delta),
        Field::Fp8InputStore => return run::toggle_fp8_store(sc),
        Field::Ep => return moe::step_ep(sc, delta),
        Field::Imbalance => return moe::step_imbalance(sc, delta),
        Field::A2aOverlap => return moe::toggle_a2a(sc),
        Field::Etp => return experts::step_etp(sc, delta),
        Field::Deepep => return experts::toggle_deepep(sc),
        Field::Mtp => return experts::step_mtp(sc, delta),
        Field::P2p => return job::step_p2p(sc),
        Field::DeviceConnections => return job::step_connections(sc, delta),
        Field::ParamGather => return job::toggle_param_gather(sc),
        Field::TpOverlap => return job::toggle_tp_overlap(sc),
    }
    None
}

/// Sets a numeric `field` from typed text. Errors name the field, the value and what is
/// allowed; validation beyond "a number" is the engine's (and the data-parallel rule's, as
/// for a step).
pub fn set_number(sc: &mut Scenario, field: Field, text: &str) -> Result<(), String> {
    guard::guarded(sc, field, |sc| set_number_unguarded(sc, field, text))
        .map_err(|e| format!("{} = '{text}': {e}", field.label()))?
}

fn set_number_unguarded(sc: &mut Scenario, field: Field, text: &str) -> Result<(), String> {
    let bad = |allowed: &str| format!("{} = '{text}': {allowed}", field.label());
    if field == Field::Budget {
        let gib: f64 = text
            .trim()
            .parse()
            .map_err(|_| bad("expected a number of GiB"))?;
        let bytes = crate::scenario::budget_bytes("budget", gib)
            .map_err(|_| bad("expected a positive number of GiB"))?;
        return sc.set_absolute_budget(bytes).map_err(|e| bad(&e.allowed));
    }
    if field == Field::Reserve {
        let gib: f64 = text
            .trim()
            .parse()
            .map_err(|_| bad("expected a number of GiB"))?;
        return set_reserve(sc, gib).map_err(|e| bad(&e));
    }
    match field {
        Field::Ep => return moe::set_ep(sc, text).map_err(|e| bad(&e)),
        Field::Imbalance => return moe::set_imbalance(sc, text).map_err(|e| bad(&e)),
        Field::Etp => return experts::set_etp(sc, text).map_err(|e| bad(&e)),
        Field::MomentBytes => return run::set_moments(sc, text).map_err(|e| bad(&e)),
        Field::Mtp => return experts::set_mtp(sc, text).map_err(|e| bad(&e)),
        Field::DeviceConnections => {
            return job::set_connections(sc, text).map_err(|e| bad(&e));
        }
        _ => {}
    }
    let range = count_range(field);
    let n: u64 = text.trim().parse().map_err(|_| match range {
        Some(r) => bad(&r.allowed()),
        None => bad("expected a whole number"),
    })?;
    if field == Field::GradBytes {
        if n != 2 && n != 4 {
            return Err(bad("2 (16-bit gradients) or 4 (fp32)"));
        }
        sc.parallel.grad_bytes = n as u32;
        return Ok(());
    }
    if field == Field::GlobalBatch {
        let m = crate::scenario::micro_batches_for(n, sc.batch.micro_batch_size, sc.parallel.dp)
            .map_err(|e| bad(&e.allowed))?;
        sc.batch.micro_batches = m;
        return Ok(());
    }
    let Some(range) = range else {
        return Err(format!("{} takes no number: use left/right", field.label()));
    };
    range.check_count(n).map_err(|e| bad(&e.allowed))?;
    if count_value(sc, field).is_none() {
        return Err(format!("{} takes no number: use left/right", field.label()));
    }
    set_count(sc, field, n);
    Ok(())
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
