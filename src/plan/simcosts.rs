//! From a plan to the simulator's inputs: per (device, chunk) durations and bytes, static and
//! transient memory per device, transfer times and FLOPs (Megatron's MFU convention).

use crate::anatomy::Anatomy;
use crate::sim::{ChunkCosts, SimCosts};

use super::Decision;
use super::decide::DevicePlan;
use super::planner::Plan;
use super::stage::{RecomputeRule, codec_of, layer_extra_flops, layer_extra_s};

/// One chunk's costs and its recomputation FLOPs per micro-batch.
fn chunk_costs(anatomy: &Anatomy, dev: &DevicePlan, range: (usize, usize)) -> (ChunkCosts, f64) {
    let mut c = ChunkCosts::default();
    let mut w_bytes = 0u64;
    let mut recompute_flops = 0.0;
    for (i, kind, decs) in &dev.blocks {
        if *i < range.0 || *i > range.1 {
            continue;
        }
        let b = anatomy.block_of(*kind);
        c.f_s += b.forward_s;
        c.b_s += b.backward_b_s;
        c.w_s += b.backward_w_s;
        c.tp_b_s += b.backward_b_comm_s.min(b.backward_b_s);
        c.tp_w_s += b.backward_w_comm_s.min(b.backward_w_s);
        let layer = kind.is_layer();
        let whole_layer = dev.rule == RecomputeRule::WholeLayer;
        if whole_layer && layer {
            // Under ZeRO-3 the recomputed forward runs on the weights the backward gathers
            // (Megatron-FSDP keeps them gathered through it): it waits for no gather of its
            // own, and the backward's gathers and reduce-scatters hide under it too.
            let (rerun, saved) = whole_layer_rerun(b);
            c.r_s += rerun;
            c.b_s -= saved;
            recompute_flops += b.model_forward_flops;
        }
        for (ui, (u, d)) in b.units.iter().zip(decs).enumerate() {
            let kept = match d {
                Decision::Keep => u.size_bytes,
                Decision::Compress => {
                    let codec = dev
                        .decisions
                        .iter()
                        .find(|k| k.block == Some(*kind) && k.unit == ui)
                        .map_or(0, |k| k.codec);
                    let (bytes, codec_s) = codec_of(u, codec);
                    c.f_s += codec_s / 2.0;
                    c.b_s += codec_s / 2.0;
                    bytes
                }
                Decision::Offload => {
                    c.offload_bytes += u.size_bytes;
                    u.size_bytes
                }
                Decision::Recompute => {
                    if !whole_layer {
                        c.r_s += u.forward_s;
                        recompute_flops += u.forward_flops;
                        // An MLP or MoE input recomputed: its layer is re-run whole.
                        if u.forced {
                            c.r_s += layer_extra_s(anatomy, *kind);
                            recompute_flops += layer_extra_flops(anatomy, *kind);
                        }
                    }
                    0
                }
                Decision::Overlap => {
                    c.r_overlap_s += u.forward_s;
                    recompute_flops += u.forward_flops;
                    0
                }
            };
            if dev.rule == RecomputeRule::CoreAttention && u.selective_rerun {
                c.r_s += u.forward_s;
                recompute_flops += u.forward_flops;
            }
            c.act_bytes += kept;
            if u.needed_by_w && !matches!(d, Decision::Recompute | Decision::Overlap) {
                w_bytes += kept;
            }
        }
    }
    c.b_free_bytes = c.act_bytes.saturating_sub(w_bytes);
    // ZeRO-3: each forward and each backward pass of the chunk starts with a gather that
    // nothing earlier in the pass hides (the blocks carry the rest).
    c.f_s += anatomy.pass_gather_s;
    c.b_s += anatomy.pass_gather_s;
    (c, recompute_flops)
}

/// Per-(device, chunk) activation bytes of a plan that stay on the device from a
/// micro-batch's forward to its backward (the weights of the time-coincident peak). Offloaded
/// copies are not among them: the planner's memory model charges them as staging (two
/// micro-batches' worth, in the device's transient bytes), as the simulator moves them out.
pub fn chunk_act_bytes(anatomy: &Anatomy, plan: &Plan) -> Vec<Vec<u64>> {
    plan.devices
        .iter()
        .map(|d| {
            d.ranges
                .iter()
                .map(|&r| {
                    let c = chunk_costs(anatomy, d, r).0;
                    c.act_bytes.saturating_sub(c.offload_bytes)
                })
                .collect()
        })
        .collect()
}

/// Options of the simulation that do not come from the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimOptions {
    /// Micro-batches per iteration.
    pub m: u32,
    /// Lynx: overlap recomputation with the wait for the gradient.
    pub overlap_recompute: bool,
    /// Peak FLOP/s of one device.
    pub peak_flops_per_device: f64,
    /// Whether each micro-batch visits only one of two model replicas (Chimera).
    pub replicated: bool,
    /// Whether a stage-to-stage send holds its sender until it ends.
    pub blocking_sends: bool,
    /// Whether an overlapped forward-backward pair hides one half's MoE all-to-alls under
    /// the other half's compute (DualPipe's overlap).
    pub moe_a2a_overlap: bool,
}

/// The simulator's inputs for `plan`, with `comm_s` per boundary of the chain.
pub fn sim_costs(anatomy: &Anatomy, plan: &Plan, comm_s: &[f64], opt: SimOptions) -> SimCosts {
    let mut chunks = Vec::with_capacity(plan.devices.len());
    let mut recompute_flops = 0.0;
    for d in &plan.devices {
        let mut row = Vec::with_capacity(d.ranges.len());
        for &r in &d.ranges {
            let (mut c, rf) = chunk_costs(anatomy, d, r);
            recompute_flops += rf;
            if opt.moe_a2a_overlap {
                // What each op's all-to-alls add to it: what an overlapped pair can hide.
                for i in r.0..=r.1 {
                    let ep = &anatomy.block(i).ep_comm;
                    c.a2a_f_s += ep.forward_added_s;
                    c.a2a_b_s += ep.backward_added_s;
                }
                c.moe_split = moe_split(anatomy, r);
            }
            row.push(c);
        }
        chunks.push(row);
    }
    let mf = f64::from(opt.m);
    let model: f64 = (0..anatomy.num_blocks())
        .map(|i| 3.0 * anatomy.block(i).model_forward_flops)
        .sum::<f64>()
        * mf;
    let share = if opt.replicated { 0.5 } else { 1.0 };
    SimCosts {
        chunks,
        comm_s: comm_s.to_vec(),
        static_bytes: plan.devices.iter().map(|d| d.costs.static_bytes).collect(),
        transient_bytes: plan
            .devices
            .iter()
            .map(|d| {
                d.costs
                    .transient_bytes
                    .saturating_sub(2 * d.costs.offload_bytes)
            })
            .collect(),
        host_bytes_per_s: anatomy.host_bytes_per_s,
        host_solo_bytes_per_s: 0.0,
        overlap_recompute: opt.overlap_recompute,
        blocking_sends: opt.blocking_sends,
        model_flops: Some(model),
        hardware_flops: Some(model + recompute_flops * mf * share),
        peak_flops_per_device: Some(opt.peak_flops_per_device),
    }
}

/// The MoE layers of blocks `range` as Megatron's combined 1F1B splits them: each MoE block
/// with its all-to-alls taken out, and the block ahead of it (its attention) when that is in
/// the range too.
fn moe_split(anatomy: &Anatomy, range: (usize, usize)) -> crate::sim::MoeLayerSplit {
    let mut out = crate::sim::MoeLayerSplit {
        a2a_sm_share: anatomy.ep_comm_sm_share,
        ..Default::default()
    };
    for i in range.0..=range.1 {
        let b = anatomy.block(i);
        if b.kind != crate::anatomy::BlockKind::Moe {
            continue;
        }
        let ep = &b.ep_comm;
        out.layers += 1;
        out.mlp_f_s += (b.forward_s - ep.forward_added_s).max(0.0);
        out.mlp_bw_s += (b.backward_b_s + b.backward_w_s - ep.backward_added_s).max(0.0);
        out.mlp_w_s += b.backward_w_s;
        if i > range.0 {
            let a = anatomy.block(i - 1);
            out.attn_f_s += a.forward_s;
            out.attn_bw_s += a.backward_b_s + a.backward_w_s;
            out.attn_w_s += a.backward_w_s;
        }
    }
    out
}

/// A block recomputed with its whole layer: the recomputed forward's time, and what of the
/// backward's exposed ZeRO-3 gathers and reduce-scatters hides under it. Under ZeRO-3 the
/// recomputed forward runs on the weights the backward gathers (Megatron-FSDP's root
/// pre-backward hook marks every module so that the recomputation neither reshards nor
/// prefetches: `megatron_fsdp.py`, `_root_pre_backward`, `_post_forward`), so it waits for
/// no gather of its own, and the next layer's gather and the last one's reduce-scatter run
/// under it as under the backward. Without ZeRO-3 it is the block's forward, hiding nothing.
pub(crate) fn whole_layer_rerun(b: &crate::anatomy::Block) -> (f64, f64) {
    let rerun = b.forward_s - b.dp_comm.forward_added_s.min(b.forward_s);
    let saved = rerun
        .min(b.dp_comm.backward_added_s)
        .min(b.backward_b_s)
        .max(0.0);
    (rerun, saved)
}
