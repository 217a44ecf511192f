//! Parallel layout, batch and plan settings of a scenario.

use crate::scenario::{
    AttentionBackend, InvalidField, Objective, P2p, Partition, Precision, Strategy, Zero,
};
use crate::scenario::{PipelineLayout, ScheduleKind};

/// Streaming multiprocessors DeepEP's normal (training) kernels run on when the run does not
/// say: 20, as 10 channels of a sending and a receiving multiprocessor each (the DeepSeek-V3
/// technical report, section 3.2.2: "only 20 SMs are sufficient to fully utilize the
/// bandwidths of IB and NVLink"; DeepEP's `Buffer.num_sms` default, and Megatron-Core's
/// when `moe_flex_dispatcher_num_sms` is unset).
pub const DEEPEP_DEFAULT_SMS: u32 = 20;

/// How the model is split over devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallel {
    /// Pipeline stages (devices in the pipeline) `p`.
    pub pp: u32,
    /// Tensor-parallel size `t`.
    pub tp: u32,
    /// Data-parallel size `d`.
    pub dp: u32,
    /// Megatron sequence parallelism (shards norm/dropout activations by `t`).
    pub sequence_parallel: bool,
    /// Virtual chunks per device `v` for the multi-chunk schedules that take it.
    pub chunks: u32,
    /// ZeRO-1 style sharding of optimizer state over the `d x cp` data-parallel ranks
    /// (Megatron's distributed optimizer; on for `zero` 1 and 3).
    pub distributed_optimizer: bool,
    /// ZeRO-3 (Megatron-FSDP): weights and gradients sharded over `d x cp` as well, each
    /// layer gathered when it runs. Implies `distributed_optimizer`, as Megatron-FSDP does.
    pub full_shard: bool,
    /// Context-parallel size `cp`: each sequence split over `cp` ranks (ring attention).
    pub cp: u32,
    /// Bytes per gradient element kept and reduced over `d`: 4 (fp32, Megatron's default)
    /// or 2 (16-bit gradients: 16 bytes/param, half the data-parallel traffic).
    pub grad_bytes: u32,
    /// Bytes per element of each of Adam's two moments: 4 (fp32, Megatron's default) or 2
    /// (bf16, as DeepSeek-V3 trains: its technical report, section 3.3.3, "Low-Precision
    /// Optimizer States"; Megatron's precision-aware optimizer with `--exp-avg-dtype bf16
    /// --exp-avg-sq-dtype bf16`). The fp32 master weights stay.
    pub moment_bytes: u32,
    /// The number format of the transformer layers' GEMMs: bf16, or Transformer Engine's fp8
    /// (needs a GPU with `fp8_tflops`).
    pub precision: Precision,
    /// Expert-parallel size `ep`: the mixture-of-experts layers re-split each stage's GPUs
    /// into `etp x ep x edp` (Megatron-Core's parallel folding); 1 without experts.
    pub ep: u32,
    /// Expert tensor-parallel size `etp`: each routed expert split over `etp` ranks.
    pub etp: u32,
}

impl Parallel {
    /// The ZeRO stage the two sharding switches describe.
    pub fn zero(&self) -> Zero {
        match (self.distributed_optimizer, self.full_shard) {
            (_, true) => Zero::Full,
            (true, false) => Zero::Optimizer,
            (false, false) => Zero::Off,
        }
    }

    /// Sets both sharding switches for `zero`.
    pub fn set_zero(&mut self, zero: Zero) {
        self.distributed_optimizer = zero != Zero::Off;
        self.full_shard = zero == Zero::Full;
    }

    /// The ranks that hold copies of one stage's weights and share its gradient reduction and
    /// ZeRO sharding: `d x cp` (Megatron's data-parallel group with context parallelism).
    pub fn shard_ranks(&self) -> u64 {
        u64::from(self.dp.max(1)) * u64::from(self.cp.max(1))
    }

    /// Why overlapping the data-parallel `what` (the "gradient reduction", the "parameter
    /// all-gather") would do nothing over this layout, when it would: with one rank per stage
    /// (`d x cp = 1`) there is none to overlap. The one wording the command line, the TUI and
    /// the preset files give.
    pub fn overlap_refusal(&self, what: &str) -> Option<String> {
        (self.shard_ranks() <= 1).then(|| {
            format!(
                "d x cp = {} x {} = 1, so there is no data-parallel {what} to overlap and it \
                 would do nothing",
                self.dp, self.cp
            )
        })
    }

    /// The expert data-parallel ranks `edp = t x cp x d / (ep x etp)`: the ranks that hold
    /// copies of the same routed experts, over which their gradients are reduced and (with
    /// the distributed optimizer) their optimizer state is sharded.
    pub fn expert_data_ranks(&self) -> u64 {
        let stage = u64::from(self.tp.max(1)) * self.shard_ranks();
        (stage / (u64::from(self.ep.max(1)) * u64::from(self.etp.max(1)))).max(1)
    }

    /// GPUs of the job, `t x cp x p x d`.
    pub fn gpus(&self) -> u64 {
        u64::from(self.tp) * u64::from(self.cp) * u64::from(self.pp) * u64::from(self.dp)
    }
}

/// The batch of one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Sequence length `s` in tokens.
    pub seq_len: u64,
    /// Sequences per micro-batch `b`.
    pub micro_batch_size: u64,
    /// Micro-batches per iteration `m` (per data-parallel replica).
    pub micro_batches: u32,
}

/// The micro-batches per iteration of a global batch: `m = B / (b x d)` for `global`
/// sequences, micro-batches of `b` sequences and `d` data-parallel replicas; refused (as the
/// `global_batch` field, saying what is allowed) when that is not a whole number from 1 to
/// `u32::MAX`. The one place this rule is written: the `--global-batch` flag, a preset's
/// `global_batch`, the UI's `global B` field and the sweep's enumeration all use it.
pub fn micro_batches_for(global: u64, b: u64, d: u32) -> Result<u32, InvalidField> {
    let allowed = match b.checked_mul(u64::from(d)).filter(|&n| n > 0) {
        Some(per_step) if global > 0 && global.is_multiple_of(per_step) => {
            match u32::try_from(global / per_step) {
                Ok(m) => return Ok(m),
                Err(_) => format!("at most {} x {per_step} sequences", u32::MAX),
            }
        }
        Some(per_step) => format!(
            "a positive multiple of micro_batch_size x dp ({b} x {d} = {per_step} sequences)"
        ),
        None => format!(
            "a positive multiple of micro_batch_size x dp ({b} x {d}, which must be from 1 to {})",
            u64::MAX
        ),
    };
    Err(InvalidField::new("global_batch", global, allowed))
}

impl Batch {
    /// Sequences per iteration over `d` data-parallel replicas, `m x b x d` (saturating):
    /// the inverse of [`micro_batches_for`].
    pub fn global_batch(&self, d: u32) -> u64 {
        u64::from(self.micro_batches)
            .saturating_mul(self.micro_batch_size)
            .saturating_mul(u64::from(d))
    }
}

/// What to plan and how.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanSettings {
    /// Pipeline schedule.
    pub schedule: ScheduleKind,
    /// Memory strategy.
    pub strategy: Strategy,
    /// Memory budget per device in bytes (the GPU's memory minus the reserve when not given).
    pub memory_budget_bytes: u64,
    /// Memory kept free, bytes, when the budget follows the GPU (`budget = GPU memory -
    /// reserve`, kept when the GPU changes); `None` for an absolute budget.
    pub reserve_bytes: Option<u64>,
    /// Units the `named` strategy recomputes (`ln_out`, or `mlp.gelu_out` for one block kind).
    pub recompute_units: Vec<String>,
    /// Layer split of the baselines and the non-partitioning strategies.
    pub partition: Partition,
    /// Whether a stage-to-stage send holds its sender (`blocking`, Megatron-LM's 2021-2022
    /// runs) or runs beside its next ops (`overlapped`, the default).
    pub p2p: P2p,
    /// Pipeline layout in Megatron's grammar (each virtual stage's layers); `None`: the
    /// split follows `partition`.
    pub layout: Option<PipelineLayout>,
    /// Megatron's bucketed overlap of the data-parallel gradient reduction with the backward.
    pub overlap_grad_reduce: bool,
    /// Megatron's `--overlap-param-gather`: the distributed optimizer's all-gather of the
    /// updated weights overlapped with the next iteration's first forward (needs `zero` 1 or
    /// 3 and `overlap_grad_reduce`).
    pub overlap_param_gather: bool,
    /// In a schedule's overlapped forward-backward pairs (DualPipe's), each half's MoE
    /// all-to-alls run under the other half's compute (needs a MoE model and a schedule
    /// that pairs).
    pub moe_a2a_overlap: bool,
    /// Megatron's `--tp-comm-overlap`: the tensor-parallel collectives pipelined with their
    /// GEMMs as Transformer Engine's userbuffers run them (needs sequence parallelism).
    pub tp_comm_overlap: bool,
    /// The busiest expert's tokens over the mean (>= 1; 1 is balanced routing, as the
    /// published force-balanced benchmarks run): scales the busiest expert-parallel rank's
    /// expert work, memory and all-to-all traffic.
    pub routing_imbalance: f64,
    /// The expert all-to-alls as DeepEP runs them (Megatron's `flex` dispatcher with
    /// `--moe-enable-deepep`): a token crosses the network once per destination node and is
    /// forwarded to its experts there over NVLink, instead of once per expert.
    pub deepep: bool,
    /// Streaming multiprocessors the expert all-to-all's kernels run on with `deepep`
    /// (Megatron-Core's `moe_flex_dispatcher_num_sms`, formerly `--moe-deepep-num-sms` and
    /// `moe_hybridep_num_sms`; [`DEEPEP_DEFAULT_SMS`] when not given): the share of the GPU
    /// the compute beside an overlapped all-to-all cannot use (docs/model.md, "Overlapped
    /// all-to-alls"). File only (`plan.flex_dispatcher_num_sms`).
    pub flex_dispatcher_num_sms: u32,
    /// Megatron-Core's `activation_func_fp8_input_store`: each SwiGLU's input (the dense
    /// MLP's, the shared and the routed experts' fc1 output) kept for the backward in fp8,
    /// 1 byte an element, and cast back before the backward (DeepSeek-V3's technical report,
    /// section 3.3.3, "Low-Precision Activation").
    pub activation_func_fp8_input_store: bool,
    /// FlashAttention (fused core attention) instead of a materialised softmax.
    pub flash_attention: bool,
    /// Which FlashAttention kernels run it: cuDNN's fused attention (the default) or the
    /// `flash-attn` package's FlashAttention-2 (`NVTE_FUSED_ATTN=0`).
    pub attention_backend: AttentionBackend,
    /// Partition DP objective.
    pub objective: Objective,
    /// Lynx: let recomputation overlap the wait for the incoming gradient.
    pub overlap_recompute: bool,
    /// Memory limit in chunk-activations for the searched schedules (`None`: the source's default).
    pub mem_limit: Option<f64>,
    /// Group size of `gis`/`gis-offload` (`None`: p).
    pub group_size: Option<u32>,
    /// Chunks offloaded by `gis-offload` (`None`: 1).
    pub offload_chunks: Option<u32>,
    /// The training run's `CUDA_DEVICE_MAX_CONNECTIONS`: Megatron runs the backward's
    /// tensor-parallel collectives under its GEMMs only at 1, which orders each collective's
    /// launch before the GEMM; above 1 (the zero-bubble runtime, which PipeOffload builds on,
    /// requires at least 8 to overlap its pipeline transfers) they run exposed.
    pub device_max_connections: u32,
    /// Megatron's gradient accumulation fusion (on by default since Megatron-LM of February
    /// 2022): each weight-gradient GEMM accumulates into the gradient it adds to. Off, each
    /// micro-batch's 16-bit weight gradient is added to the accumulated one by a separate
    /// memory-bound pass, as Megatron-LM of 2021 ran it (PyTorch's autograd accumulating
    /// `param.grad`; `--no-gradient-accumulation-fusion` today).
    pub gradient_accumulation_fusion: bool,
    /// Megatron's `--cross-entropy-loss-fusion`: on (the default), the loss is costed as a
    /// cast of the logits to fp32, one fp32 pass and the cast back; off, as Megatron-Core's
    /// unfused vocabulary-parallel cross-entropy runs it, four more passes over the fp32
    /// logits in the forward and one more in the backward (docs/model.md, "Mixtures of
    /// experts": the ModelZoo's 2025 Qwen3-235B runs trained without the flag).
    pub cross_entropy_loss_fusion: bool,
    /// Megatron-LM's `--align-grad-reduce` (on by default; NeMo's distributed Adam always
    /// works this way): with the overlapped gradient reduction, the interleaved schedule
    /// reduces each model chunk's gradients as one unit, launched the stage's pipeline rank
    /// of backward steps after the chunk's last backward (docs/model.md, "The whole job").
    /// Off (`--no-align-grad-reduce`, and NeMo 2.0, whose data-parallel configuration has no
    /// such field), each bucket's reduction starts as soon as its gradients are ready.
    pub align_grad_reduce: bool,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn micro_batches_are_the_global_batch_over_b_times_d_when_whole() {
        assert_eq!(micro_batches_for(512, 2, 8), Ok(32));
        assert_eq!(micro_batches_for(512, 3, 8).ok(), None);
        assert_eq!(micro_batches_for(0, 1, 1).ok(), None);
        assert_eq!(micro_batches_for(8, 0, 1).ok(), None);
        assert_eq!(micro_batches_for(u64::MAX, u64::MAX, 2).ok(), None);
        assert_eq!(micro_batches_for(1 << 40, 1, 1).ok(), None);
        // A refusal names the field and says what is allowed.
        let e = micro_batches_for(512, 3, 8).unwrap_err();
        assert_eq!(e.field, "global_batch");
        assert_eq!(
            e.allowed,
            "a positive multiple of micro_batch_size x dp (3 x 8 = 24 sequences)"
        );
        assert!(
            micro_batches_for(1 << 40, 1, 1)
                .unwrap_err()
                .allowed
                .starts_with("at most 4294967295 x 1")
        );
        let batch = Batch {
            seq_len: 2048,
            micro_batch_size: 2,
            micro_batches: 32,
        };
        assert_eq!(batch.global_batch(8), 512);
        assert_eq!(micro_batches_for(batch.global_batch(8), 2, 8), Ok(32));
    }
}
