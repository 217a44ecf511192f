//! The mixture-of-experts block as Megatron-Core's `MoELayer` runs it with the `alltoall`
//! token dispatcher and grouped GEMMs (docs/model.md, "Mixture of experts"):
//!
//! ```text
//! norm -> router (scores, top-k) -> permute (k copies of each token, grouped by expert;
//!      inside DeepEP's dispatch with `--deepep`)
//!      -> dispatch all-to-all over the EP group (-> all-gather over etp) -> sort by local expert
//!      -> fc1 (grouped) -> SwiGLU weighted by the routing probabilities -> fc2 (grouped)
//!      -> unsort (-> reduce-scatter over etp) -> combine all-to-all -> unpermute (sum the k
//!      copies; inside DeepEP's combine with `--deepep`)
//!      + shared experts (a dense SwiGLU MLP over the tensor-parallel ranks) -> residual add
//! ```
//!
//! Each rank routes its own `T` tokens (the sequence shard: attention runs with sequence
//! parallelism), sends `T k` rows and, with balanced routing, its `E/ep` experts receive
//! `N = T k etp` rows (the etp ranks of an expert share their rows). The busiest rank receives
//! `X N`, `X` its load over the mean (from the routing imbalance, `routing.rs`): its expert
//! GEMMs, the tensors it keeps and its all-to-alls scale by `X`. Megatron-Core multiplies the probabilities inside the activation,
//! so the combine keeps nothing for the backward (no combine buffer). The backward mirrors the
//! forward: two more all-to-alls of the same size.

use super::cost::{InputCast, Machine, Piece, Work};
use super::expert_comm::{DeepEpRates, hidden_beside};
use super::tp_comm;
use super::units::{Builder, Dims, Keep, act, add_residual, linear_input, norm, raw, swiglu_input};
use super::{Anatomy, Block, BlockKind};

/// The expert layout and rates a MoE block is costed with, per device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeDims {
    /// Routed experts `E`.
    pub experts: f64,
    /// Experts on each expert-parallel rank `E / ep`.
    pub local_experts: f64,
    /// Experts per token `k`.
    pub top_k: f64,
    /// One expert's inner width on a rank, `f_e / etp`.
    pub expert_ffn: f64,
    /// The shared experts' inner width on a rank, `shared f_e / t` (0 without).
    pub shared_ffn: f64,
    /// Expert tensor-parallel size `etp`.
    pub etp: f64,
    /// The busiest rank's routed load over the mean rank's `X` (1: balanced), from the
    /// busiest expert's by `routing::busiest_rank_load`.
    pub imbalance: f64,
    /// Seconds of the dispatch and of the combine all-to-all per byte each rank sends as
    /// `k` copies of its tokens (balanced).
    pub a2a: DeepEpRates,
    /// Seconds of an all-gather over the `etp` group per gathered byte.
    pub etp_s_per_byte: f64,
    /// The dispatch and combine kernels copy and sum each token's `k` rows themselves
    /// (DeepEP's: its dispatch takes the tokens and their top-k, its combine returns each
    /// token's rows summed), so no separate permute before the dispatch nor sum of the
    /// copies after the combine passes through memory.
    pub fused_copies: bool,
    /// Bytes of a main-gradient element the experts' weight-gradient GEMMs accumulate into
    /// (`grad_bytes`: 4, or 2 with 16-bit gradients).
    pub grad_bytes: f64,
}

/// Seconds only.
fn secs(s: f64) -> Work {
    Work {
        s,
        ..Work::default()
    }
}

/// A mixture-of-experts sub-layer on the busiest expert-parallel rank.
pub fn moe(m: &Machine, d: &Dims, e: &MoeDims, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Moe);
    let (ts, h) = (d.tokens_sp, d.h);
    k.input("input", 2.0 * ts * h);
    // The norm's output is the router's, the permutation's and the shared experts' input.
    k.unit(
        "norm_out",
        Keep {
            needed_by_w: true,
            ..act(2.0 * ts * h)
        },
        norm(m, d),
    );
    // Router: scores of every expert in fp32, top-k; its logits, scores and routing map are
    // kept (about 13 bytes an expert and token).
    let router =
        m.linear(ts, h, e.experts) + m.elementwise(16.0 * ts * e.experts, 16.0 * ts * e.experts);
    k.unit("router", raw(13.0 * ts * e.experts), router);

    let sent = ts * e.top_k;
    let mean_rows = sent * e.etp;
    let rows = mean_rows * e.imbalance;
    // The dispatch sends each row in bf16 with its fp32 probability; the busiest rank
    // receives X times the mean. With etp > 1 the rows are then gathered over the etp group
    // (their gradients reduce-scattered in the backward).
    let dispatch_s = e.imbalance * e.a2a.dispatch_s_per_byte * (2.0 * sent * h + 4.0 * sent)
        + e.etp_s_per_byte * 2.0 * rows * h;
    let permute = if e.fused_copies {
        Piece::default()
    } else {
        m.elementwise(2.0 * ts * h + 2.0 * sent * h, 2.0 * sent * h + 2.0 * ts * h)
    };
    let sort = m.elementwise(4.0 * rows * h, 4.0 * rows * h);
    let dispatch_comm = Piece {
        fwd: secs(dispatch_s),
        b: secs(dispatch_s),
        w: Work::default(),
    };
    k.ep_exchange(dispatch_comm, dispatch_comm);
    let elems = rows * h;
    let dispatched = if m.fp8() {
        Keep {
            needed_by_w: true,
            ..raw(elems + 4.0 * rows)
        }
    } else {
        Keep {
            bytes: 2.0 * elems + 4.0 * rows,
            elems,
            needed_by_w: true,
            ..Keep::default()
        }
    };
    let mut dispatch = permute + sort + dispatch_comm;
    dispatch.fwd += m.input_cast(elems);
    k.unit("dispatched", dispatched, dispatch);

    let (fe, groups) = (e.expert_ffn, e.local_experts);
    let fc1 = m.grouped_linear(rows, h, 2.0 * fe, groups, e.grad_bytes);
    let (keep, store) = swiglu_input(m, d, 2.0 * rows * fe);
    k.unit("fc1_out", keep, fc1);
    let mut swiglu =
        m.elementwise(6.0 * rows * fe + 4.0 * rows, 10.0 * rows * fe + 4.0 * rows) + store;
    swiglu.fwd += m.input_cast(rows * fe);
    k.unit("act_out", linear_input(m, rows * fe), swiglu);
    let fc2 = m.grouped_linear(rows, fe, h, groups, e.grad_bytes);
    k.other += fc2;
    k.model_flops += 3.0 * 2.0 * mean_rows * h * fe;

    // Combine: un-sort, reduce-scatter over etp (in fp32), the all-to-all back, and the sum
    // of each token's k copies.
    let combine_s =
        e.imbalance * e.a2a.combine_s_per_byte * 2.0 * sent * h + e.etp_s_per_byte * 4.0 * rows * h;
    let combine_comm = Piece {
        fwd: secs(combine_s),
        b: secs(combine_s),
        w: Work::default(),
    };
    k.ep_exchange(combine_comm, combine_comm);
    let unpermute = if e.fused_copies {
        Piece::default()
    } else {
        m.elementwise(2.0 * sent * h + 2.0 * ts * h, 2.0 * ts * h + 2.0 * sent * h)
    };
    k.other += sort + unpermute + combine_comm;

    if e.shared_ffn > 0.0 {
        let (t, fs) = (d.tokens, e.shared_ffn);
        let fc1s = m.layer_linear(t, h, 2.0 * fs, InputCast::FromNorm);
        k.collective(tp_comm::gather_in(m, d, &fc1s, true));
        k.model_flops += fc1s.fwd.flops;
        let (keep, store) = swiglu_input(m, d, 2.0 * t * fs);
        k.unit("shared_fc1_out", keep, fc1s);
        let mut sw = m.elementwise(6.0 * t * fs, 10.0 * t * fs) + store;
        sw.fwd += m.input_cast(t * fs);
        k.unit("shared_act_out", linear_input(m, t * fs), sw);
        let fc2s = m.layer_linear(t, fs, h, InputCast::Elsewhere);
        k.model_flops += fc2s.fwd.flops;
        k.other += fc2s;
        k.collective(tp_comm::reduce_out(m, d, &fc2s));
    }
    add_residual(&mut k, m, d);
    k.finish(params, static_bytes)
}

impl Anatomy {
    /// The anatomy the planner estimates with where the simulation hides the MoE
    /// all-to-alls in overlapped forward-backward pairs (`--moe-a2a-overlap`); `None`
    /// without all-to-alls. A layer's forward pairs with another micro-batch's backward of a
    /// layer (docs/model.md, "Overlapped all-to-alls"). With `per_layer` (Megatron's combined
    /// 1F1B) the pair runs in four steps, each as long as the longer of its compute and its
    /// communication: the backward's combine beside the forward's attention (and the
    /// previous layer's attention W), the forward's dispatch beside the backward's expert
    /// input gradient, the backward's dispatch beside its expert W and the forward's expert
    /// compute, the forward's combine beside the backward's attention input gradient
    /// (dispatch and combine each half of a direction's all-to-alls; the weight gradients
    /// where `--delay-wgrad-compute` puts them, every layer counted with a previous one). Otherwise (DualPipe)
    /// the forward's all-to-alls `a_F` hide under the partner layer's backward compute (the
    /// MoE and attention blocks' B and W without the all-to-alls) and the backward's `a_B`
    /// under its forward compute, each up to what that compute covers. In both, an
    /// all-to-all that holds a share of the multiprocessors (DeepEP's, `ep_comm_sm_share`)
    /// hides at most the rest of its time (`expert_comm::hidden_beside`). The MoE block's
    /// input-gradient backward is shortened by the hidden sum (its forward by what B cannot
    /// give), so a stage's estimate `F + B + W` is the pair time the simulation gives when
    /// every micro-batch is paired (the warm-up and cool-down ops, unpaired, are where the
    /// estimate is optimistic).
    pub fn for_a2a_overlap(&self, per_layer: bool) -> Option<Anatomy> {
        let (m, att) = (&self.moe, &self.attention);
        let (a_f, a_b) = (m.ep_comm.forward_added_s, m.ep_comm.backward_added_s);
        if a_f + a_b <= 0.0 {
            return None;
        }
        let moe_bw = (m.backward_b_s + m.backward_w_s - a_b).max(0.0);
        let moe_f = (m.forward_s - a_f).max(0.0);
        let (att_bw, att_f) = (att.backward_b_s + att.backward_w_s, att.forward_s);
        let share = self.ep_comm_sm_share;
        let hide = |comm: f64, compute: f64| hidden_beside(comm, compute, share);
        let hidden = if per_layer {
            let (half_f, half_b) = (a_f / 2.0, a_b / 2.0);
            // The weight gradients where `--delay-wgrad-compute` runs them: the experts' W
            // beside the backward's dispatch, the attention's W beside the next layer
            // pair's combine backward.
            let att_w = att.backward_w_s.clamp(0.0, att_bw);
            let moe_w = m.backward_w_s.clamp(0.0, moe_bw);
            hide(half_b, att_f + att_w)
                + hide(half_f, moe_bw - moe_w)
                + hide(half_b, moe_w + moe_f)
                + hide(half_f, att_bw - att_w)
        } else {
            hide(a_f, moe_bw + att_bw) + hide(a_b, moe_f + att_f)
        };
        // At most `a_F + a_B`, which the forward and the input-gradient backward hold.
        let from_b = hidden.min(m.backward_b_s);
        let mut out = self.clone();
        out.moe.backward_b_s = m.backward_b_s - from_b;
        out.moe.forward_s = (m.forward_s - (hidden - from_b)).max(0.0);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::anatomy::Anatomy;
    use crate::scenario::{Catalog, ScenarioOverrides};

    fn anatomy(model: &str, ep: u32) -> Anatomy {
        anatomy_with(model, ep, false)
    }

    /// `model` on 64 H100s (t 1, p 4, d 16) at `ep`, with DeepEP where `deepep`.
    fn anatomy_with(model: &str, ep: u32, deepep: bool) -> Anatomy {
        let c = Catalog::builtin();
        let mut s = c.scenario("korthikanti-22b").unwrap();
        ScenarioOverrides {
            model: Some(model.into()),
            gpu: Some("h100-80gb".into()),
            seq_len: Some(4096),
            micro_batch_size: Some(1),
            tp: Some(1),
            sp: Some(false),
            pp: Some(4),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        s.parallel.dp = 16;
        s.parallel.ep = ep;
        s.plan.deepep = deepep;
        Anatomy::build(&s).unwrap()
    }

    #[test]
    fn deepep_copies_tokens_itself_and_its_multiprocessors_cap_what_a_pair_hides() {
        let plain = anatomy("qwen3-30b-a3b", 16);
        let mut with = anatomy_with("qwen3-30b-a3b", 16, true);
        // No permute before the dispatch: the dispatched rows' producer moves fewer bytes.
        let bytes = |a: &Anatomy| {
            let u = a.moe.units.iter().find(|u| u.name == "dispatched").unwrap();
            u.forward_bytes
        };
        let (t, h, k) = (4096.0, 2048.0, 8.0);
        let permute = 2.0 * t * h + 2.0 * t * k * h;
        assert!((bytes(&plain) - bytes(&with) - permute).abs() < 1.0);
        // DeepEP's 20 of 132 multiprocessors: a pair hides at most 112/132 of the all-to-alls.
        assert_eq!(plain.ep_comm_sm_share, 0.0);
        assert!((with.ep_comm_sm_share - 20.0 / 132.0).abs() < 1e-15);
        let ep = with.moe.ep_comm;
        let before = with.moe.forward_s + with.moe.backward_b_s;
        let o = with.for_a2a_overlap(true).unwrap();
        let hidden = before - (o.moe.forward_s + o.moe.backward_b_s);
        assert!(hidden > 0.0);
        assert!(hidden <= 112.0 / 132.0 * (ep.forward_added_s + ep.backward_added_s) + 1e-12);
        // With the share taken away, the same pair hides more.
        with.ep_comm_sm_share = 0.0;
        let o = with.for_a2a_overlap(true).unwrap();
        assert!(before - (o.moe.forward_s + o.moe.backward_b_s) > hidden);
    }

    #[test]
    fn the_expert_weight_gradient_reads_and_writes_the_main_gradients() {
        let c = Catalog::builtin();
        let gpu = c.gpu("h100-80gb").unwrap();
        let m = crate::anatomy::cost::Machine::new(gpu, 1);
        // Qwen3-235B-A22B's fc1 at t 4, ep 8: 8192 rows over 16 experts, 4096 -> 3072.
        let (rows, h, n, g) = (8192.0, 4096.0, 3072.0, 16.0);
        let fp32 = m.grouped_wgrad(rows, h, n, g, 4.0);
        let bf16 = m.grouped_wgrad(rows, h, n, g, 2.0);
        // Operands once (2 bytes an element), each expert's [h, n] gradient read and written.
        let operands = 2.0 * (rows * h + rows * n);
        assert!((fp32.bytes - operands - 8.0 * g * h * n).abs() < 1.0);
        assert!((fp32.bytes - bf16.bytes - 4.0 * g * h * n).abs() < 1.0);
        assert_eq!(fp32.flops, 2.0 * rows * h * n);
        // Sixteen fp32 gradients of 12.6 M elements (1.6 GB) outlast the math here.
        assert!(fp32.s >= m.mem(fp32.bytes).s);
        assert!(fp32.s > bf16.s);
        // The block charges it as its weight-gradient backward.
        let p = m.grouped_linear(rows, h, n, g, 4.0);
        assert_eq!(p.w, fp32);
    }

    #[test]
    fn the_planners_anatomy_takes_off_what_a_layer_pair_hides() {
        let a = anatomy("qwen3-30b-a3b", 16);
        let o = a.for_a2a_overlap(false).unwrap();
        let (m, att) = (&a.moe, &a.attention);
        let (a_f, a_b) = (m.ep_comm.forward_added_s, m.ep_comm.backward_added_s);
        assert!(a_f > 0.0 && a_b > 0.0);
        let b_c = m.backward_b_s + m.backward_w_s - a_b + att.backward_b_s + att.backward_w_s;
        let f_c = m.forward_s - a_f + att.forward_s;
        let hidden = a_f.min(b_c) + a_b.min(f_c);
        let before = m.forward_s + m.backward_b_s + m.backward_w_s;
        let after = o.moe.forward_s + o.moe.backward_b_s + o.moe.backward_w_s;
        assert!(hidden > 0.0);
        assert!(
            (before - after - hidden).abs() <= 1e-12 * before,
            "{before} {after} {hidden}"
        );
        // Megatron's combined 1F1B: four steps of a layer pair, each hiding the shorter of
        // its compute and its all-to-all (dispatch and combine half each), the weight
        // gradients delayed: the attention's beside the next combine backward, the experts'
        // beside the backward's dispatch.
        let p = a.for_a2a_overlap(true).unwrap();
        let (att_f, att_b, att_w) = (att.forward_s, att.backward_b_s, att.backward_w_s);
        let (moe_f, moe_b) = (m.forward_s - a_f, m.backward_b_s - a_b);
        let moe_w = m.backward_w_s;
        assert!(att_w > 0.0 && moe_w > 0.0);
        let steps = (a_b / 2.0).min(att_f + att_w)
            + moe_b.min(a_f / 2.0)
            + (moe_w + moe_f).min(a_b / 2.0)
            + (a_f / 2.0).min(att_b);
        let after = p.moe.forward_s + p.moe.backward_b_s + p.moe.backward_w_s;
        assert!((before - after - steps).abs() <= 1e-12 * before);
        assert!(steps <= hidden + 1e-15);
        // Nothing else changes.
        assert_eq!(o.moe.backward_w_s, m.backward_w_s);
        assert_eq!(o.attention, a.attention);
        // Without all-to-alls (ep 1, or a dense model) there is nothing to take off.
        assert!(anatomy("qwen3-30b-a3b", 1).for_a2a_overlap(false).is_none());
        assert!(anatomy("llama3-8b", 1).for_a2a_overlap(true).is_none());
    }
}
