//! The scenario's vocabulary: the names a scenario is written in (memory strategy, schedule
//! kind), shared by every later stage of the engine. Names and parsing come from one
//! declaration per enum (strum), so help texts list every value and errors suggest near misses.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use strum::VariantArray;

use super::presets::nearest;

/// Parses `text` as one of `T`'s names, or says what is allowed and the nearest name.
pub fn parse_name<T>(what: &str, text: &str) -> Result<T, String>
where
    T: VariantArray + Copy + Into<&'static str>,
{
    let names: Vec<&'static str> = T::VARIANTS.iter().map(|&v| v.into()).collect();
    if let Some(i) = names.iter().position(|n| *n == text) {
        return Ok(T::VARIANTS[i]);
    }
    let hint = nearest(text, &names)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    Err(format!(
        "unknown {what} '{text}'{hint}: expected one of {}",
        names.join(", ")
    ))
}

/// Gives a vocabulary enum (deriving strum's `IntoStaticStr` and `VariantArray`) its list of
/// values, its name, `Display` and `FromStr` (with "did you mean"), all from the one
/// declaration: `what` is the word errors use ("strategy", "schedule", ...).
macro_rules! named_values {
    ($type:ident, $what:literal) => {
        impl $type {
            /// Every value, in declaration order (the order the UI cycles through them).
            pub const ALL: &'static [$type] = <$type as VariantArray>::VARIANTS;

            /// The command-line and preset name.
            pub fn name(self) -> &'static str {
                self.into()
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $type {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                parse_name($what, s)
            }
        }
    };
}

named_values!(Strategy, "strategy");
named_values!(ScheduleKind, "schedule");
named_values!(Objective, "objective");
named_values!(Partition, "partition");
named_values!(Precision, "precision");
named_values!(P2p, "p2p mode");
named_values!(AttentionBackend, "attention backend");
named_values!(Zero, "zero stage");

/// A memory strategy: how a plan trades memory for time.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Keep everything.
    #[strum(serialize = "none")]
    None,
    /// Keep only each layer's input; recompute the whole layer.
    #[strum(serialize = "full")]
    Full,
    /// Megatron's selective recomputation of core attention.
    #[strum(serialize = "selective")]
    Selective,
    /// The best single unit set for every stage that makes the worst stage fit.
    #[strum(serialize = "uniform")]
    Uniform,
    /// Per-stage knapsack, even partition (AdaPipe "even partitioning").
    #[strum(serialize = "adaptive")]
    Adaptive,
    /// Per-stage knapsack nested in the partition DP (AdaPipe).
    #[serde(rename = "adapipe")]
    #[strum(serialize = "adapipe")]
    AdaPipe,
    /// Offload kept tensors to host when the transfer hides between F and B (PipeOffload).
    #[strum(serialize = "offload")]
    Offload,
    /// Keep tensors compressed (Adacc).
    #[strum(serialize = "compress")]
    Compress,
    /// Keep, recompute, compress or offload per unit, nested in the partition DP.
    #[strum(serialize = "unified")]
    Unified,
    /// Recompute exactly the units named by `--recompute-units` (Megatron's
    /// `--recompute-modules`), keep the rest (with no names, keep everything).
    #[strum(serialize = "named")]
    Named,
    /// Lynx's optimal policy: per stage, which units to recompute and whether each runs in
    /// the schedule's communication windows (the wait for the gradient, the backward's
    /// tensor-parallel collectives) or on demand, charged only its exposed time; nested in a
    /// recomputation-aware partition search.
    #[strum(serialize = "lynx")]
    Lynx,
    /// Lynx's heuristic: one such policy per class of identical stages (the most
    /// constrained stage's), on the even partition.
    #[serde(rename = "lynx-heuristic")]
    #[strum(serialize = "lynx-heuristic")]
    LynxHeuristic,
}

impl Strategy {
    /// Whether the strategy searches the partition of layers over stages (the only use of
    /// the partition objective): the others run the even (or balanced) split.
    pub fn searches_partition(self) -> bool {
        matches!(self, Strategy::AdaPipe | Strategy::Unified | Strategy::Lynx)
    }

    /// The strategies for which `pred` holds, comma-separated (for messages).
    pub fn names_where(pred: fn(Strategy) -> bool) -> String {
        let names: Vec<&str> = <Self as strum::VariantArray>::VARIANTS
            .iter()
            .filter(|s| pred(**s))
            .map(|s| <&str>::from(*s))
            .collect();
        names.join(", ")
    }
}

/// Every schedule pipescope knows, named as on the command line (docs/model.md).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum ScheduleKind {
    /// All forwards, then all backwards.
    #[serde(rename = "gpipe")]
    #[strum(serialize = "gpipe")]
    Gpipe,
    /// One-forward-one-backward (PipeDream-flush / DAPPLE).
    #[serde(rename = "1f1b")]
    #[strum(serialize = "1f1b")]
    OneFOneB,
    /// Megatron's interleaved 1F1B with `v` chunks per device.
    #[serde(rename = "interleaved")]
    #[strum(serialize = "interleaved")]
    Interleaved,
    /// Zero-bubble ZB-H1 (handcrafted, 1F1B memory).
    #[serde(rename = "zb-h1")]
    #[strum(serialize = "zb-h1")]
    ZbH1,
    /// Zero-bubble heuristic with memory limit 2p (ZB-2P).
    #[serde(rename = "zb-h2")]
    #[strum(serialize = "zb-h2")]
    ZbH2,
    /// Zero-bubble heuristic with a user memory limit (default p).
    #[serde(rename = "zb-auto")]
    #[strum(serialize = "zb-auto")]
    ZbAuto,
    /// Zero-bubble V schedule (2 chunks, V-shape).
    #[serde(rename = "zb-v")]
    #[strum(serialize = "zb-v")]
    ZbV,
    /// Controllable-memory V-Half.
    #[serde(rename = "v-half")]
    #[strum(serialize = "v-half")]
    VHalf,
    /// Controllable-memory V-Min.
    #[serde(rename = "v-min")]
    #[strum(serialize = "v-min")]
    VMin,
    /// Controllable-memory V-ZB (building-block search).
    #[serde(rename = "v-zb")]
    #[strum(serialize = "v-zb")]
    VZb,
    /// DeepSeek DualPipe-V.
    #[serde(rename = "dualpipe-v")]
    #[strum(serialize = "dualpipe-v")]
    DualPipeV,
    /// DeepSeek DualPipe: two copies of the stages traversed in opposite directions, half
    /// the micro-batches fed from each end.
    #[serde(rename = "dualpipe")]
    #[strum(serialize = "dualpipe")]
    DualPipe,
    /// Chimera: two 1F1B pipelines in opposite directions.
    #[serde(rename = "chimera")]
    #[strum(serialize = "chimera")]
    Chimera,
    /// Group-interleaved 1F1B (PipeOffload's GIS).
    #[serde(rename = "gis")]
    #[strum(serialize = "gis")]
    Gis,
    /// GIS with PipeOffload's activation offload pass.
    #[serde(rename = "gis-offload")]
    #[strum(serialize = "gis-offload")]
    GisOffload,
    /// PipeOffload's PO-H: the uniform-repeating building block with the shortest useful
    /// group, the longest-lived half of every device's chunks offloaded on one copy stream
    /// that a pair of devices interleaves.
    #[serde(rename = "po-h")]
    #[strum(serialize = "po-h")]
    PoH,
    /// PipeOffload's PO-F: as PO-H with every chunk offloaded.
    #[serde(rename = "po-f")]
    #[strum(serialize = "po-f")]
    PoF,
}

impl ScheduleKind {
    /// Chunks per device this schedule runs with, given the user's `--chunks`.
    pub fn chunks(self, requested: u32) -> u32 {
        match self {
            ScheduleKind::Interleaved
            | ScheduleKind::Gis
            | ScheduleKind::GisOffload
            | ScheduleKind::PoH
            | ScheduleKind::PoF => requested.max(2),
            ScheduleKind::ZbV
            | ScheduleKind::VHalf
            | ScheduleKind::VMin
            | ScheduleKind::VZb
            | ScheduleKind::DualPipeV
            | ScheduleKind::DualPipe
            | ScheduleKind::Chimera => 2,
            _ => 1,
        }
    }

    /// Whether the user's chunk count (`--chunks`, `parallel.chunks`) sets this schedule's
    /// chunks per device (at least 2); the others run a fixed count ([`ScheduleKind::chunks`]).
    pub fn takes_chunks(self) -> bool {
        matches!(
            self,
            ScheduleKind::Interleaved
                | ScheduleKind::Gis
                | ScheduleKind::GisOffload
                | ScheduleKind::PoH
                | ScheduleKind::PoF
        )
    }

    /// Whether the schedule's two chunks per device are two copies of the same `p` stages,
    /// one per direction (`chimera`, `dualpipe`), rather than a model cut into `2p` stages:
    /// a chunk count does not describe them, so `--chunks` is refused for them.
    pub fn replicates_stages(self) -> bool {
        matches!(self, ScheduleKind::Chimera | ScheduleKind::DualPipe)
    }

    /// Whether the schedule can run overlapped forward-backward pairs, one micro-batch's
    /// forward with another's backward as one unit, under which the MoE all-to-all overlap
    /// (`plan.moe_a2a_overlap`) hides each half's all-to-alls under the other half's
    /// compute: `dualpipe` and `dualpipe-v` always pair, `interleaved` and `1f1b` (on one
    /// device only) pair when the overlap runs them as Megatron's combined 1F1B.
    pub fn pairs_forward_backward(self) -> bool {
        matches!(
            self,
            ScheduleKind::DualPipe
                | ScheduleKind::DualPipeV
                | ScheduleKind::Interleaved
                | ScheduleKind::OneFOneB
        )
    }

    /// Whether the MoE all-to-all overlap runs this schedule as Megatron-Core's combined
    /// 1F1B (`--overlap-moe-expert-parallel-comm`): `interleaved`, and `1f1b` on one device.
    pub fn runs_combined_1f1b(self) -> bool {
        matches!(self, ScheduleKind::Interleaved | ScheduleKind::OneFOneB)
    }

    /// Whether this schedule on `p` devices runs overlapped pairs when the MoE all-to-all
    /// overlap is on: `dualpipe`, `dualpipe-v`, `interleaved`, and `1f1b` only at `p` 1
    /// (Megatron's combined 1F1B needs a virtual pipeline on more devices).
    pub fn pairs_under_a2a_overlap(self, p: u32) -> bool {
        self.pairs_forward_backward() && (self != ScheduleKind::OneFOneB || p == 1)
    }

    /// Whether a memory limit (`--mem-limit`, `plan.mem_limit`) shapes this schedule's order:
    /// the searched schedules `zb-auto`, `zb-v` and `v-zb` (`zb-h2`'s limit is 2p by its
    /// definition).
    pub fn takes_mem_limit(self) -> bool {
        matches!(
            self,
            ScheduleKind::ZbAuto | ScheduleKind::ZbV | ScheduleKind::VZb
        )
    }

    /// Whether a group size (`--group-size`, `plan.group_size`) applies: `gis`, `gis-offload`
    /// and PipeOffload's `po-h` and `po-f` (all built from GIS's groups).
    pub fn takes_group_size(self) -> bool {
        matches!(
            self,
            ScheduleKind::Gis | ScheduleKind::GisOffload | ScheduleKind::PoH | ScheduleKind::PoF
        )
    }

    /// Whether a count of chunks to offload (`--offload-chunks`, `plan.offload_chunks`)
    /// applies: `gis-offload` only (`po-h` and `po-f` choose their chunks by lifespan). The
    /// schedules that offload at all are [`ScheduleKind::offloads`]'s.
    pub fn takes_offload_chunks(self) -> bool {
        self == ScheduleKind::GisOffload
    }

    /// The names of the schedules for which `pred` holds, comma separated (for messages).
    pub fn names_where(pred: fn(ScheduleKind) -> bool) -> String {
        let names: Vec<&str> = Self::ALL
            .iter()
            .filter(|k| pred(**k))
            .map(|k| k.name())
            .collect();
        names.join(", ")
    }

    /// Whether the backward is split into B (input gradient) and W (weight gradient).
    pub fn splits_backward(self) -> bool {
        !matches!(
            self,
            ScheduleKind::Gpipe
                | ScheduleKind::OneFOneB
                | ScheduleKind::Interleaved
                | ScheduleKind::Chimera
        )
    }
}

/// Which pipeline-time estimate the partition DP minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::IntoStaticStr, strum::VariantArray)]
pub enum Objective {
    /// `(m - 1) max_s T_s + sum_s T_s`, solved exactly (docs/model.md).
    #[default]
    #[strum(serialize = "estimate")]
    Estimate,
    /// AdaPipe's own warm-up/steady/cool-down recurrence (docs/model.md).
    #[strum(serialize = "adapipe")]
    AdaPipe,
}

/// How the baselines and the non-partitioning strategies split the layers over stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::IntoStaticStr, strum::VariantArray)]
pub enum Partition {
    /// Megatron's default: `L/p` layers each, embedding on the first stage, head on the last.
    #[default]
    #[strum(serialize = "even")]
    Even,
    /// Megatron's `account-for-embedding/loss-in-pipeline-split`: the embedding and the head
    /// each count as one layer (over all `p x v` virtual stages with chunks).
    #[strum(serialize = "balanced")]
    Balanced,
}

/// How stage-to-stage sends (activations forward, gradients back) meet the compute
/// (docs/model.md, "Stage-to-stage transfers").
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum P2p {
    /// As Megatron-LM ran them in its published 2021-2022 runs: each exchange is a batched
    /// send/receive followed by a device synchronisation, so the sender waits until its send
    /// has ended before its next op.
    #[strum(serialize = "blocking")]
    Blocking,
    /// Sends run beside the sender's next ops (Megatron-Core's `--overlap-p2p-comm`, the
    /// default of today's interleaved schedule); only the receiver waits for them.
    #[default]
    #[strum(serialize = "overlapped")]
    Overlapped,
}

/// Which FlashAttention kernels run the attention's core (docs/model.md, "Attention
/// backends"): Transformer Engine picks cuDNN's fused attention on Hopper and Blackwell
/// unless the run sets `NVTE_FUSED_ATTN=0`, in which case it runs the `flash-attn` package
/// (FlashAttention-2 in the containers of 2024).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum AttentionBackend {
    /// cuDNN's fused attention (Transformer Engine's default where cuDNN supports the shape):
    /// the GPU's `attention*` efficiency steps.
    #[default]
    #[strum(serialize = "cudnn")]
    Cudnn,
    /// The `flash-attn` package's FlashAttention-2 (`NVTE_FUSED_ATTN=0`, Megatron-Core's
    /// `--attention-backend flash`): the GPU's `flash2_attention*` steps, or its `attention*`
    /// steps where the preset has none.
    #[strum(serialize = "flash2")]
    Flash2,
}

/// The number format the transformer layers' GEMMs run in (docs/model.md, "FP8").
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum Precision {
    /// Every GEMM in bf16 (mixed precision: fp32 master weights and optimizer).
    #[default]
    #[serde(rename = "bf16")]
    #[strum(serialize = "bf16")]
    Bf16,
    /// Transformer Engine's fp8 recipe (delayed scaling, hybrid E4M3/E5M2): the linear
    /// layers' forward, input-gradient and weight-gradient GEMMs in fp8 at the GPU's
    /// `fp8_tflops`; attention's core, norms, residuals, the embedding and the output layer
    /// stay bf16.
    #[serde(rename = "fp8")]
    #[strum(serialize = "fp8")]
    Fp8,
}

impl Precision {
    /// Whether the transformer layers' linear GEMMs run in fp8.
    pub fn is_fp8(self) -> bool {
        self == Precision::Fp8
    }
}

/// How the data-parallel ranks (`d x cp` of them) share the model's state (docs/model.md,
/// "Sharding"): ZeRO's stages as Megatron runs them.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum Zero {
    /// Plain data parallelism: every rank holds the whole state of its stage.
    #[default]
    #[serde(rename = "0")]
    #[strum(serialize = "0")]
    Off,
    /// ZeRO-1, Megatron's distributed optimizer: fp32 master weights and Adam's moments
    /// sharded; gradients reduce-scattered and the updated weights all-gathered.
    #[serde(rename = "1")]
    #[strum(serialize = "1")]
    Optimizer,
    /// ZeRO-3 as Megatron-FSDP runs it (`optim_grads_params`): weights, gradients and the
    /// optimizer sharded; each layer gathered before its forward and again before its
    /// backward, its gradient reduce-scattered after.
    #[serde(rename = "3")]
    #[strum(serialize = "3")]
    Full,
}

impl Zero {
    /// The stage as a number (0, 1 or 3), as `--zero` and the JSON write it.
    pub fn level(self) -> u8 {
        match self {
            Zero::Off => 0,
            Zero::Optimizer => 1,
            Zero::Full => 3,
        }
    }

    /// Whether this stage changes anything over `shard_ranks` data-parallel ranks (`d x cp`):
    /// zero 1 and 3 shard over them, so with one rank there is nothing to shard and they
    /// would run as plain data parallelism. The one place this rule is written: the sweep
    /// rejects such combinations and the command line refuses `--zero` there.
    pub fn applies_over(self, shard_ranks: u64) -> bool {
        self == Zero::Off || shard_ranks > 1
    }

    /// Why this stage is refused over `dp x cp` data-parallel ranks, when it is
    /// ([`Zero::applies_over`]): the one wording the command line and the TUI give.
    pub fn refusal_over(self, dp: u32, cp: u32) -> Option<String> {
        let ranks = u64::from(dp.max(1)) * u64::from(cp.max(1));
        (!self.applies_over(ranks)).then(|| {
            format!(
                "d x cp = {dp} x {cp} = 1, so there is nothing to shard and it would do nothing \
                 (zero 1 and 3 shard over the d x cp data-parallel ranks)"
            )
        })
    }
}
