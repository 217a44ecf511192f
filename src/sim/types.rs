//! Simulation inputs and outputs.

use serde::Serialize;

/// Durations and memory of one (device, chunk) for one micro-batch.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ChunkCosts {
    /// Forward time.
    pub f_s: f64,
    /// Input-gradient backward time (B; or the whole backward in a fused BW it is `b_s + w_s`).
    pub b_s: f64,
    /// Weight-gradient backward time (W).
    pub w_s: f64,
    /// Recomputation run right before the B/BW that needs it (or overlapped, see
    /// [`SimCosts::overlap_recompute`]).
    pub r_s: f64,
    /// Recomputation placed in the communication windows before the B/BW that needs it
    /// (Lynx): it starts as soon as the device is free after its previous op (filling the
    /// wait for the gradient) and hides under the backward's tensor-parallel collectives
    /// (`tp_b_s`, plus `tp_w_s` in a fused BW); only what exceeds both delays the backward.
    pub r_overlap_s: f64,
    /// Bytes allocated at F and kept until the backward.
    pub act_bytes: u64,
    /// Bytes B frees (all but the weight-GEMM inputs); the rest is freed at W. A fused BW
    /// frees everything.
    pub b_free_bytes: u64,
    /// Bytes moved to host after F and brought back before B (on the copy lane).
    pub offload_bytes: u64,
    /// Bytes of this chunk's cross-node pipeline transfers per micro-batch in each direction:
    /// they pass through the device's PCIe switch on their way to the network card, so each
    /// of its copies carries them too (zero inside a node).
    pub link_bytes: u64,
    /// Tensor-parallel collectives inside `b_s`: with [`SimCosts::overlap_recompute`]
    /// (Lynx) the recomputation hides under them.
    pub tp_b_s: f64,
    /// Tensor-parallel collectives inside `w_s` (hide recomputation only in a fused BW).
    pub tp_w_s: f64,
    /// The MoE all-to-alls' time inside `f_s` that an overlapped forward-backward pair may
    /// hide under its backward's compute (zero unless the all-to-all overlap is on).
    pub a2a_f_s: f64,
    /// The MoE all-to-alls' time inside `b_s` that an overlapped pair may hide under its
    /// forward's compute (zero unless the all-to-all overlap is on).
    pub a2a_b_s: f64,
    /// The chunk's MoE layers as Megatron's combined 1F1B overlaps them layer by layer
    /// (zero unless the all-to-all overlap is on).
    pub moe_split: MoeLayerSplit,
}

/// A chunk's MoE layers split into the pieces Megatron-Core's combined 1F1B puts on its
/// compute and communication streams (`TransformerLayerSchedulePlan.run`): per layer the
/// attention (with the norm ahead of the router) and the experts' compute, beside the
/// dispatch and combine all-to-alls (`a2a_f_s`, `a2a_b_s`, half each).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct MoeLayerSplit {
    /// MoE layers in the chunk.
    pub layers: u32,
    /// Forward of the blocks ahead of those MoE blocks (attention, or an MTP layer's first
    /// block).
    pub attn_f_s: f64,
    /// Input- and weight-gradient backward of those blocks.
    pub attn_bw_s: f64,
    /// Forward of the MoE blocks without their all-to-alls.
    pub mlp_f_s: f64,
    /// Input- and weight-gradient backward of the MoE blocks without their all-to-alls.
    pub mlp_bw_s: f64,
    /// The weight-gradient part of `attn_bw_s`, which Megatron's `--delay-wgrad-compute`
    /// runs after the layer's backward, beside the next layer's combine backward.
    pub attn_w_s: f64,
    /// The weight-gradient part of `mlp_bw_s`, which `--delay-wgrad-compute` runs after the
    /// backward's dispatch is launched, beside it.
    pub mlp_w_s: f64,
    /// Share of the multiprocessors the chunk's all-to-all kernels hold while they run
    /// (0: none), which the compute beside them in a pair does without.
    pub a2a_sm_share: f64,
}

/// Everything the simulator needs besides the op order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SimCosts {
    /// Per device, per local chunk.
    pub chunks: Vec<Vec<ChunkCosts>>,
    /// Transfer time from stage `s` to stage `s + 1` (and back), per stage boundary of the
    /// model chain; used only when the two stages are on different devices. Shorter than the
    /// chain: the last entry applies to the remaining boundaries; empty: no transfer time.
    pub comm_s: Vec<f64>,
    /// Static memory per device (weights, gradients, optimizer), bytes.
    pub static_bytes: Vec<u64>,
    /// Transient bytes per device on top of kept activations (recompute buffer, logits).
    pub transient_bytes: Vec<u64>,
    /// Host link bandwidth in bytes/s of one device's copies (offload): with PipeOffload's
    /// paired copies (`po-h`, `po-f`), each direction's rate while the pair's two devices
    /// copy in opposite directions at once.
    pub host_bytes_per_s: f64,
    /// With paired copies, the rate of one copy alone on the link (the pair's warm-up sends,
    /// which only go one way); zero or less: `host_bytes_per_s`.
    pub host_solo_bytes_per_s: f64,
    /// Every recomputation is placed in the windows (`r_s` counts as
    /// [`ChunkCosts::r_overlap_s`]): a recomputation may start as soon as the device is
    /// free, overlapping the wait for the incoming gradient (and the transfer that brings
    /// it), instead of right before its B; and it hides under the tensor-parallel
    /// collectives of its backward (`tp_b_s`, plus `tp_w_s` in a fused BW): only what
    /// exceeds them takes compute time.
    pub overlap_recompute: bool,
    /// Blocking stage-to-stage sends (docs/model.md, "Stage-to-stage transfers"): the device
    /// that sends an activation or a gradient to another device waits until the transfer has
    /// ended before its next op, as Megatron-LM's synchronous batched send/receive holds it;
    /// `false`: the send runs beside the sender's next ops.
    pub blocking_sends: bool,
    /// Model FLOPs of one iteration over all devices of the pipeline (for MFU), if known.
    pub model_flops: Option<f64>,
    /// Hardware FLOPs (model + recomputation) of one iteration (for HFU), if known.
    pub hardware_flops: Option<f64>,
    /// Peak FLOP/s of one device (for MFU/HFU), if known.
    pub peak_flops_per_device: Option<f64>,
}

/// In abstract runs with paired copies, a copy alone on the link takes this fraction of a
/// paired copy's time: the zero-bubble repository's `offloading.py` (`solo_offload_time =
/// 0.7 x parallel_offload_time`), close to the A100's measured 19 GB/s each way with both
/// directions busy against 26 GB/s one way alone (docs/model.md).
pub const SOLO_COPY_FRACTION: f64 = 0.7;

impl SimCosts {
    /// Costs of an abstract run (`simulate --costs F,B,W --comm C`) of `schedule`: every op
    /// of every (device, chunk) costs `f`, `b`, `w` (a fused BW `b + w`), every transfer
    /// between devices `comm`, and a micro-batch-chunk weighs one byte from its F until its
    /// W or BW (B frees nothing). Chunks the schedule marks as offloaded move that byte to
    /// the host and back, each copy taking `offload_s` (a paired warm-up send alone on the
    /// link 0.7 of it, the source's factor). No static memory, no FLOPs.
    pub fn abstract_run(
        schedule: &crate::schedule::Schedule,
        f: f64,
        b: f64,
        w: f64,
        comm: f64,
        offload_s: f64,
    ) -> Self {
        let chunks = (0..schedule.p as usize)
            .map(|d| {
                (0..schedule.v as usize)
                    .map(|c| {
                        let off = schedule
                            .offloaded
                            .get(d)
                            .and_then(|row| row.get(c))
                            .copied()
                            .unwrap_or(false);
                        ChunkCosts {
                            f_s: f,
                            b_s: b,
                            w_s: w,
                            r_s: 0.0,
                            r_overlap_s: 0.0,
                            act_bytes: 1,
                            b_free_bytes: 0,
                            offload_bytes: u64::from(off),
                            link_bytes: 0,
                            tp_b_s: 0.0,
                            tp_w_s: 0.0,
                            a2a_f_s: 0.0,
                            a2a_b_s: 0.0,
                            moe_split: MoeLayerSplit::default(),
                        }
                    })
                    .collect()
            })
            .collect();
        Self {
            chunks,
            comm_s: vec![comm],
            static_bytes: vec![0; schedule.p as usize],
            transient_bytes: vec![0; schedule.p as usize],
            host_bytes_per_s: if offload_s > 0.0 {
                1.0 / offload_s
            } else {
                f64::INFINITY
            },
            host_solo_bytes_per_s: if offload_s > 0.0 {
                1.0 / (SOLO_COPY_FRACTION * offload_s)
            } else {
                f64::INFINITY
            },
            overlap_recompute: false,
            blocking_sends: false,
            model_flops: None,
            hardware_flops: None,
            peak_flops_per_device: None,
        }
    }
}

/// The window before one backward (B or BW) of a device, as a run measured it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct BackwardWait {
    /// Micro-batch of the backward.
    pub micro_batch: u32,
    /// Local chunk of the backward.
    pub chunk: u32,
    /// Idle time of the compute lane before it: from the end of the device's previous op to
    /// the arrival of the gradient (0 when the gradient is there first).
    pub wait_s: f64,
    /// How much later the backward started because of its recomputation (the exposed
    /// recomputation).
    pub delay_s: f64,
}

/// Which lane of a device a span runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Lane {
    /// The compute stream: F, B, W, BW, R; one at a time.
    Compute,
    /// The host copy stream: D2H and H2D.
    Copy,
    /// Outgoing point-to-point transfers.
    Send,
    /// Collectives inside the compute ops (context parallelism's K/V exchange, ZeRO-3's
    /// gathers and reduce-scatters), drawn where they keep the link busy.
    Comm,
}

/// What a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum SpanKind {
    /// Forward.
    F,
    /// Input-gradient backward.
    B,
    /// Weight-gradient backward.
    W,
    /// Fused backward.
    BW,
    /// Recomputation before a backward.
    R,
    /// Device-to-host offload copy.
    D2H,
    /// Host-to-device reload copy.
    H2D,
    /// Point-to-point send to another device.
    #[serde(rename = "SEND")]
    Send,
    /// Context parallelism's K/V exchange round the ring (comm lane).
    #[serde(rename = "KV")]
    Kv,
    /// ZeRO-3's all-gather of a chunk's weights (comm lane).
    #[serde(rename = "AG")]
    Gather,
    /// ZeRO-3's reduce-scatter of a chunk's gradients (comm lane).
    #[serde(rename = "RS")]
    Scatter,
    /// Expert parallelism's dispatch and combine all-to-alls of a chunk's MoE layers (comm
    /// lane).
    #[serde(rename = "A2A")]
    A2a,
}

/// One timed op.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Span {
    /// Device it runs on.
    pub device: u32,
    /// Lane of the device.
    pub lane: Lane,
    /// What it is.
    pub kind: SpanKind,
    /// Micro-batch.
    pub micro_batch: u32,
    /// Local chunk.
    pub chunk: u32,
    /// Start time (seconds, or cost units in abstract runs).
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Whether the span is one half of an overlapped forward-backward pair (DualPipe,
    /// DualPipe-V): the forward's partner is the next compute span of its device, the
    /// backward's the one before (a recomputation span may sit between them).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paired: bool,
}

/// Every span of a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Timeline {
    /// Devices.
    pub devices: u32,
    /// Spans, sorted by device, lane, start.
    pub spans: Vec<Span>,
    /// End of the last span.
    pub makespan: f64,
}

impl Timeline {
    /// The overlapped forward-backward pairs as `(forward, backward)` indices into
    /// [`Timeline::spans`], in device and time order: each paired forward with the next
    /// paired backward of its device's compute lane (a recomputation span may sit between
    /// them). Empty for schedules that pair nothing.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut open: Option<usize> = None;
        for (i, s) in self.spans.iter().enumerate() {
            if s.lane != Lane::Compute || !s.paired {
                continue;
            }
            match (s.kind, open) {
                (SpanKind::F, _) => open = Some(i),
                (SpanKind::B | SpanKind::BW, Some(f)) if self.spans[f].device == s.device => {
                    out.push((f, i));
                    open = None;
                }
                _ => {}
            }
        }
        out
    }
}

/// Memory of one device over time.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MemoryCurve {
    /// Device.
    pub device: u32,
    /// Static bytes under the curve.
    pub static_bytes: u64,
    /// `(time, activation bytes on the device)` after each change, in time order.
    pub points: Vec<(f64, u64)>,
    /// `(time, bytes held on the host)` after each change.
    pub host_points: Vec<(f64, u64)>,
}

/// Per-device results.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DeviceMetrics {
    /// Device.
    pub device: u32,
    /// Total compute-lane busy time.
    pub busy: f64,
    /// `1 - busy / makespan`.
    pub bubble_rate: f64,
    /// Peak of static + activations + transient, bytes.
    pub peak_memory_bytes: u64,
    /// Peak activation bytes.
    pub peak_activation_bytes: u64,
    /// Peak micro-batch-chunks alive at once.
    pub peak_in_flight: u32,
}

/// The simulation's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Simulation {
    /// Every span.
    pub timeline: Timeline,
    /// One curve per device.
    pub memory: Vec<MemoryCurve>,
    /// One entry per device.
    pub devices: Vec<DeviceMetrics>,
    /// Iteration time.
    pub makespan: f64,
    /// `1 - total busy / (p makespan)`.
    pub bubble_rate: f64,
    /// Model FLOPs utilisation, if FLOPs are known.
    pub mfu: Option<f64>,
    /// Hardware FLOPs utilisation, if FLOPs are known.
    pub hfu: Option<f64>,
    /// The job's end-of-iteration steps (gradient reduction, tied embedding, optimizer),
    /// when the solve added them.
    pub job: Option<super::job::JobTimes>,
    /// Per device, the compute time of the steady periods a figures-only run
    /// ([`super::simulate_figures`]) jumped over, which its timeline leaves out: other than
    /// recomputation, and recomputation. Empty after a full run.
    #[serde(skip)]
    pub elided: Vec<(f64, f64)>,
}

/// Why a simulation could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The op order waits on something that never happens.
    #[error("schedule deadlocks: device {device} waits forever at {op}")]
    Deadlock {
        /// Device that is stuck.
        device: u32,
        /// The op it waits at.
        op: String,
    },
    /// The costs do not match the schedule's shape.
    #[error("costs do not match the schedule: {0}")]
    Shape(String),
    /// PipeOffload's paired copies cannot be placed: a reload would have to start before its
    /// copy to the host has ended (the source's "Unable to schedule offload").
    #[error(
        "offload cannot be scheduled on device {device}: copies of {copy_s:.4} each way are \
         too slow for the gaps between forward and backward (a reload would start before its \
         copy to the host ended); offload fewer chunks (po-h instead of po-f), or give the \
         host link more bandwidth"
    )]
    OffloadUnschedulable {
        /// The device whose reload would come too early.
        device: u32,
        /// One copy's time (seconds, or cost units in abstract runs).
        copy_s: f64,
    },
    /// A schedule that offloads by itself (`po-h`, `po-f`, `gis-offload`) whose copies are
    /// too slow for any of its micro-batch-chunks: every one stays resident, so the run
    /// would be the schedule without its offload.
    #[error(
        "offload cannot be scheduled: no copy fits (one copy {copy_s:.4} each way is too slow \
         for every gap between a forward and its backward), so nothing would be offloaded; \
         give the host link more bandwidth or shorter copies"
    )]
    NothingOffloaded {
        /// One copy's time (seconds, or cost units in abstract runs).
        copy_s: f64,
    },
    /// `po-f` whose copies fit only on the chunks `po-h` offloads: every other chunk's
    /// micro-batches live too briefly for its copy slots, so it would run as `po-h`.
    #[error(
        "po-f cannot offload every chunk: with copies of {copy_s:.4} each way no device copies \
         more than {most} of its {v} chunks, what po-h offloads (the others' gaps between \
         forward and backward are within three copy periods); run po-h"
    )]
    FullOffloadUnplaced {
        /// One copy's time (seconds, or cost units in abstract runs).
        copy_s: f64,
        /// Chunks per device po-h offloads.
        most: usize,
        /// Chunks per device.
        v: usize,
    },
    /// Every duration is finite but together they overflow `f64`: op end times would
    /// become infinite (and look like ops that never ran).
    #[error(
        "durations too large: all ops and transfers together take {total_s:e}, more than f64 \
         holds; scale the costs down"
    )]
    TooLong {
        /// The sum of every op's and transfer's duration (infinite).
        total_s: f64,
    },
}
