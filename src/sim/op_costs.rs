//! Each (device, chunk)'s op durations, recomputation and activation sizes, copied once from
//! [`SimCosts`] into a flat table that the timing pass (`engine`) reads per op: the integer
//! byte counts it adds up, the copy time of what it offloads, and where the recomputation
//! goes (before the backward, or into the windows with `overlap_recompute`).

use super::types::{MoeLayerSplit, SimCosts};
use crate::anatomy::hidden_beside;

/// One (device, chunk)'s op durations and activation sizes, copied once into a flat table.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OpCosts {
    /// Forward time.
    pub(super) f: f64,
    /// Backward (input gradient) time.
    pub(super) b: f64,
    /// Weight-gradient time.
    pub(super) w: f64,
    /// Recomputation on demand, right before the backward.
    pub(super) r: f64,
    /// Recomputation in the windows before the backward (Lynx).
    pub(super) r_overlap: f64,
    /// Activation bytes the forward keeps.
    pub(super) act: i64,
    /// Bytes the backward frees (the rest goes with the weight gradient).
    pub(super) b_free: i64,
    /// Bytes offloaded to the host.
    pub(super) off: i64,
    /// Time of one offload copy of those bytes (and the cross-node transfers its link
    /// carries) while the link carries the other direction too, or alone outside the paired
    /// pass.
    pub(super) copy: f64,
    /// The same copy alone on the link (the paired pass's warm-up sends).
    pub(super) copy_solo: f64,
    /// Tensor-parallel collectives of the backward (what overlapped recomputation hides under).
    pub(super) tp_b: f64,
    /// Tensor-parallel collectives of the weight gradient.
    pub(super) tp_w: f64,
    /// All-to-all time inside `f` that an overlapped pair hides under its backward.
    pub(super) a2a_f: f64,
    /// All-to-all time inside `b` that an overlapped pair hides under its forward.
    pub(super) a2a_b: f64,
    /// The chunk's MoE layers as Megatron's combined 1F1B overlaps them.
    pub(super) split: MoeLayerSplit,
}

/// What an overlapped pair of the forward costing `f` and the backward costing `b` (its
/// whole duration `b_dur`, with W when fused) hides of their all-to-alls.
///
/// `per_layer` (Megatron-Core's combined 1F1B, `TransformerLayerSchedulePlan.run`): the
/// forward's layer `i` runs beside the backward's layer `n - 1 - i` for the first
/// `n = min(L_F, L_B)` MoE layers of each, in four steps, each as long as the longer of its
/// compute and its communication, with the weight gradients where `--delay-wgrad-compute`
/// (which the export writes with the overlap) puts them:
///
/// ```text
/// comm:    combine_B       | dispatch_F | dispatch_B    | combine_F
/// compute: (attn_W') attn_F | mlp_B      | mlp_W + mlp_F | attn_B
/// ```
///
/// The experts' W runs after the backward's dispatch is launched, beside it; the attention's
/// W after the layer, beside the next layer pair's combine backward (`attn_W'`, none in the
/// first layer pair; the last one runs after the pairs, hiding nothing). So a layer pair
/// hides `min(c_B, a_F [+ a_W]) + min(d_F, m_B - m_W) + min(d_B, m_W + m_F) + min(c_F, a_B -
/// a_W)` (per-layer means of the chunks' [`MoeLayerSplit`]s, `a_B` and `m_B` with their W;
/// dispatch and combine half of each direction's all-to-alls). The layers left over run
/// alone. Otherwise (DualPipe's pairs, or chunks without the split), the forward's
/// all-to-alls hide under the backward's compute without its own, and the backward's under
/// the forward's, as DualPipe's overlapped forward-backward chunk interleaves them.
pub(super) fn pair_hidden_s(f: &OpCosts, b: &OpCosts, b_dur: f64, per_layer: bool) -> f64 {
    let (lf, lb) = (f.split.layers, b.split.layers);
    if per_layer && lf > 0 && lb > 0 {
        let (nf, nb) = (f64::from(lf), f64::from(lb));
        let (a_f, m_f, half_f) = (
            f.split.attn_f_s / nf,
            f.split.mlp_f_s / nf,
            f.a2a_f / (2.0 * nf),
        );
        let (a_b, m_b, half_b) = (
            b.split.attn_bw_s / nb,
            b.split.mlp_bw_s / nb,
            b.a2a_b / (2.0 * nb),
        );
        let a_w = (b.split.attn_w_s / nb).clamp(0.0, a_b.max(0.0));
        let m_w = (b.split.mlp_w_s / nb).clamp(0.0, m_b.max(0.0));
        let (sf, sb) = (f.split.a2a_sm_share, b.split.a2a_sm_share);
        let n = f64::from(lf.min(lb));
        let steps_2_to_4 = hidden_beside(half_f, m_b - m_w, sf)
            + hidden_beside(half_b, m_w + m_f, sb)
            + hidden_beside(half_f, a_b - a_w, sf);
        let step_1 =
            hidden_beside(half_b, a_f, sb) + (n - 1.0) * hidden_beside(half_b, a_f + a_w, sb);
        return (n * steps_2_to_4 + step_1).min(b_dur);
    }
    let f_compute = (f.f - f.a2a_f).max(0.0);
    let b_compute = (b_dur - b.a2a_b).max(0.0);
    hidden_beside(f.a2a_f, b_compute, f.split.a2a_sm_share)
        + hidden_beside(b.a2a_b, f_compute, b.split.a2a_sm_share)
}

impl OpCosts {
    /// Forward time.
    pub(super) fn f(&self) -> f64 {
        self.f
    }

    /// The table for `p` devices of `v` chunks, indexed `d * v + chunk`, and whether any
    /// chunk offloads.
    pub(super) fn table(costs: &SimCosts, p: usize, v: usize) -> (Vec<OpCosts>, bool) {
        let bw = costs.host_bytes_per_s;
        let solo_bw = if costs.host_solo_bytes_per_s > 0.0 {
            costs.host_solo_bytes_per_s
        } else {
            bw
        };
        let copy_time = |bytes: u64, rate: f64| {
            if bytes > 0 && rate > 0.0 && rate.is_finite() {
                bytes as f64 / rate
            } else {
                0.0
            }
        };
        let mut table = Vec::with_capacity(p * v);
        let mut any_offload = false;
        for d in 0..p {
            for c in 0..v {
                let cc = &costs.chunks[d][c];
                let off = i64::try_from(cc.offload_bytes).unwrap_or(i64::MAX);
                any_offload |= off > 0;
                // A copy's link also carries the chunk's cross-node transfers.
                let carried = if cc.offload_bytes > 0 {
                    cc.offload_bytes.saturating_add(cc.link_bytes)
                } else {
                    0
                };
                // With `overlap_recompute` every recomputation goes to the windows.
                let (r, r_overlap) = if costs.overlap_recompute {
                    (0.0, cc.r_s + cc.r_overlap_s)
                } else {
                    (cc.r_s, cc.r_overlap_s)
                };
                table.push(OpCosts {
                    f: cc.f_s,
                    b: cc.b_s,
                    w: cc.w_s,
                    r,
                    r_overlap,
                    act: i64::try_from(cc.act_bytes).unwrap_or(i64::MAX),
                    b_free: i64::try_from(cc.b_free_bytes).unwrap_or(i64::MAX),
                    off,
                    copy: copy_time(carried, bw),
                    copy_solo: copy_time(carried, solo_bw),
                    tp_b: cc.tp_b_s,
                    tp_w: cc.tp_w_s,
                    a2a_f: cc.a2a_f_s.clamp(0.0, cc.f_s.max(0.0)),
                    a2a_b: cc.a2a_b_s.clamp(0.0, (cc.b_s + cc.w_s).max(0.0)),
                    split: cc.moe_split,
                });
            }
        }
        (table, any_offload)
    }
}
