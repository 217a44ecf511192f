//! What a solve returns: the plan per stage, the simulation and the headline metrics.
//! Field names follow the JSON contract of docs/cli.md.

use std::sync::Arc;

use serde::Serialize;

use crate::anatomy::BlockKind;
use crate::plan::{Decision, Strategy};
use crate::scenario::{P2p, Precision};
use crate::schedule::{Schedule, ScheduleKind};
use crate::sim::Simulation;
use crate::sim::job::TimeBreakdown;

/// Per unit kind of a stage: how many of its blocks keep, recompute, compress or offload it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitCount {
    /// Unit name, prefixed by its block kind where ambiguous (`attention.q`).
    pub name: String,
    /// Bytes of one copy per micro-batch.
    pub size_bytes: u64,
    /// Blocks that keep it.
    pub keep: u32,
    /// Blocks that recompute it.
    pub recompute: u32,
    /// Of those, the blocks that recompute it early in a communication window (Lynx).
    pub overlap: u32,
    /// Blocks that keep it compressed.
    pub compress: u32,
    /// The codec of the compressed copies (one of the GPU's `[[gpu.codecs]]`), when any.
    pub codec: Option<String>,
    /// Blocks that offload it.
    pub offload: u32,
}

/// The computation units of one block kind, in the block's unit order (the order of
/// [`BlockDecisions::decisions`]): what the unit grid names and sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitTable {
    /// Which block kind these units belong to.
    pub kind: BlockKind,
    /// Unit names (`ln_out`, `q`, ...).
    pub names: Vec<String>,
    /// Bytes of one copy per micro-batch, per unit.
    pub size_bytes: Vec<u64>,
    /// Forward time of the producing piece (the cost of recomputing it), per unit.
    pub recompute_s: Vec<f64>,
    /// Whether the unit may be dropped and recomputed (a block's input is always kept),
    /// per unit: the units the `named` strategy may name.
    pub droppable: Vec<bool>,
}

/// The decisions of one block of a stage (for the unit grid).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockDecisions {
    /// Block index in the chain.
    pub block: usize,
    /// Its kind.
    pub kind: BlockKind,
    /// One decision per unit of the block, in the block's unit order.
    pub decisions: Vec<Decision>,
}

/// One device's share of the plan and what the simulation measured for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageOutcome {
    /// Device index.
    pub stage: u32,
    /// First block of the device's first chunk.
    pub first_block: usize,
    /// Last block of the device's first chunk.
    pub last_block: usize,
    /// `[first, last]` block of every chunk of the device.
    pub ranges: Vec<[usize; 2]>,
    /// Attention blocks held.
    pub attention_blocks: u32,
    /// Dense MLP blocks held.
    pub mlp_blocks: u32,
    /// Mixture-of-experts blocks held.
    pub moe_blocks: u32,
    /// Multi-token-prediction blocks (an MTP layer's projection and attention) held.
    pub mtp_blocks: u32,
    /// Weights, gradients and optimizer state, bytes.
    pub static_bytes: u64,
    /// Kept tensors resident on the device at its peak (what is on the host at that moment
    /// not counted), bytes.
    pub activation_bytes: u64,
    /// bf16 weights of `static_bytes` (with the fp8 recipe's cast; with ZeRO-3 the shard plus
    /// the layers gathered at a time), bytes.
    pub weights_bytes: u64,
    /// The routed experts' part of `weights_bytes` (their bf16 weights, with the fp8 recipe's
    /// cast; with ZeRO-3 their shard over the expert data-parallel group), bytes.
    pub expert_weights_bytes: u64,
    /// Gradients of `static_bytes` (fp32, or 16-bit with `--grad-bytes 2`; with ZeRO-3 the
    /// shard plus one layer's unsharded gradient), bytes.
    pub grads_bytes: u64,
    /// Optimizer state of `static_bytes` (fp32 master weights, Adam's moments; sharded over
    /// `d x cp` with the distributed optimizer and ZeRO-3), bytes.
    pub optimizer_bytes: u64,
    /// Peak memory in the simulation, bytes: the figure that decides whether the stage fits
    /// (`feasible`, `infeasible_reason`) and the one the tables show.
    pub peak_memory_bytes: u64,
    /// The planner's estimate of the peak, bytes (whole micro-batch-chunks in flight, so at
    /// or above the simulated peak for multi-chunk schedules); shown beside
    /// `peak_memory_bytes`, never deciding feasibility.
    pub planned_peak_bytes: u64,
    /// Memory budget, bytes.
    pub budget_bytes: u64,
    /// Peak micro-batch-chunks alive at once.
    pub in_flight: u32,
    /// Forward time per micro-batch, summed over the device's chunks.
    pub forward_s: f64,
    /// Backward time per micro-batch (recomputation included), summed over chunks.
    pub backward_s: f64,
    /// Recomputation time per micro-batch, summed over chunks.
    pub recompute_s: f64,
    /// Of `recompute_s`, what the communication windows hide per micro-batch in the
    /// planner's model (Lynx: the mean over the device's backwards); 0 for other strategies.
    pub hidden_recompute_s: f64,
    /// The most bytes of the device's activations held on the host at once (offload).
    pub offload_bytes: u64,
    /// PipeOffload's copy-to-compute ratio `k` of the device's offloaded chunks: one
    /// micro-batch-chunk's round trip to the host (D2H + H2D) over its F + B + W, the largest
    /// over its chunks; absent when it offloads nothing. At most 1, every copy keeps pace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_ratio: Option<f64>,
    /// This device's iteration by cause (the parts of [`Outcome::time_breakdown_s`], for
    /// this device; a device that ends early counts the rest as bubble); adds up to the
    /// iteration time. Computed once per solve, so views read it instead of the timeline.
    pub time_breakdown_s: TimeBreakdown,
    /// Per unit kind, counts of blocks by decision.
    pub units: Vec<UnitCount>,
    /// Per block, its decisions (not in the JSON contract; for the unit grid).
    #[serde(skip)]
    pub blocks: Vec<BlockDecisions>,
}

/// The result of [`crate::solve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Whether every stage fits its budget.
    pub feasible: bool,
    /// Per-stage reasons when not feasible ("stage 0 needs 93.1 GiB, budget 80.0 GiB").
    pub infeasible_reason: Option<String>,
    /// Simulated iteration time.
    pub iteration_time_s: f64,
    /// `1 - busy / (p x makespan)`.
    pub bubble_rate: f64,
    /// Model FLOPs utilisation, 0..1 (`None` when infeasible).
    pub mfu: Option<f64>,
    /// Hardware FLOPs utilisation (recomputation included), 0..1 (`None` when infeasible).
    pub hfu: Option<f64>,
    /// GPUs of the job, `t x cp x p x d`.
    pub gpus: u64,
    /// Tensor-parallel size `t`.
    pub tp: u32,
    /// Context-parallel size `cp` (each sequence split over `cp` ranks).
    pub cp: u32,
    /// Pipeline stages `p`.
    pub pp: u32,
    /// Data-parallel size `d` (replicas of the pipeline).
    pub dp: u32,
    /// ZeRO stage over the `d x cp` data-parallel ranks: 0, 1 (distributed optimizer) or 3
    /// (Megatron-FSDP).
    pub zero: u8,
    /// Expert-parallel size `ep` (1 for a dense model).
    pub ep: u32,
    /// Expert tensor-parallel size `etp` (1 for a dense model).
    pub etp: u32,
    /// Sequences per iteration over all replicas, `m x b x d`.
    pub global_batch: u64,
    /// Tokens trained per second by the whole job.
    pub tokens_per_s: f64,
    /// `tokens_per_s` per GPU.
    pub tokens_per_s_per_gpu: f64,
    /// Exposed time of the device that finishes last, by cause; adds up to
    /// `iteration_time_s`.
    pub time_breakdown_s: TimeBreakdown,
    /// Strategy used.
    pub strategy: Strategy,
    /// Schedule used.
    pub schedule: ScheduleKind,
    /// Number format of the transformer layers' GEMMs (`bf16` or `fp8`).
    pub precision: Precision,
    /// Pipeline layout the run used, in Megatron's grammar (`None`: the `partition` split).
    pub layout: Option<String>,
    /// Whether stage-to-stage sends blocked their sender (`blocking`) or not (`overlapped`).
    pub p2p: P2p,
    /// Iteration time of 1F1B with full recomputation on the scenario's own layer split.
    pub baseline_iteration_time_s: f64,
    /// `baseline_iteration_time_s / iteration_time_s` (`None` when infeasible).
    pub speedup: Option<f64>,
    /// The partition DP's estimate of the iteration time (before simulation).
    pub estimated_iteration_time_s: f64,
    /// Measured wall time of the solve (the only field that varies between runs).
    pub solve_time_s: f64,
    /// Remarks for the user (e.g. that `adapipe` equals `adaptive` on Chimera's replicas).
    pub notes: Vec<String>,
    /// One entry per device.
    pub stages: Vec<StageOutcome>,
    /// The full simulation (timeline and memory curves); not in the JSON contract.
    #[serde(skip)]
    pub simulation: Simulation,
    /// The schedule that was simulated: every device's op order (what the exports draw);
    /// not in the JSON contract. Shared with the memo of generated schedules it may come
    /// from (a sweep's solves do not copy it).
    #[serde(skip)]
    pub op_order: Arc<Schedule>,
    /// The units of every block kind of the model (embedding, attention, MLP, head); not in
    /// the JSON contract.
    #[serde(skip)]
    pub unit_tables: Vec<UnitTable>,
}

impl Outcome {
    /// The pipeline's bubble: each device's idle share of its iteration (its
    /// `time_breakdown_s.bubble`), averaged over the devices. Unlike [`Outcome::bubble_rate`]
    /// it leaves out the end-of-iteration steps (gradient reduction, parameter gather,
    /// optimizer), which are not idle time, so one stage has no bubble; it is the figure
    /// beside each stage's own `bubble` (`bubble_rate` when there are no stages).
    pub fn pipeline_bubble_rate(&self) -> f64 {
        let shares: Vec<f64> = self
            .stages
            .iter()
            .map(|s| s.time_breakdown_s)
            .filter(|b| b.total() > 0.0)
            .map(|b| b.bubble / b.total())
            .collect();
        if shares.is_empty() {
            return self.bubble_rate;
        }
        shares.iter().sum::<f64>() / shares.len() as f64
    }

    /// The highest simulated peak of any device, bytes (0 with no stages).
    pub fn max_peak_memory_bytes(&self) -> u64 {
        self.stages
            .iter()
            .map(|s| s.peak_memory_bytes)
            .max()
            .unwrap_or(0)
    }

    /// The units of block kind `kind`, if known.
    pub fn units_of(&self, kind: BlockKind) -> Option<&UnitTable> {
        self.unit_tables.iter().find(|u| u.kind == kind)
    }
}
