//! The computation units of each block kind (docs/model.md) with their pieces of work.
//! Each unit is the operator group that produces one saved tensor; its forward cost is the
//! cost of recomputing it. Pieces that produce no saved tensor (the sequence-parallel
//! all-gather, Llama's output projection and residual add) count in the block's times only.
//! This file holds the dense layer blocks and the shared helpers; `mla.rs` multi-head latent
//! attention, `moe.rs` the mixture-of-experts block, `mtp.rs` the multi-token-prediction
//! block, `outer.rs` the embedding and the head.

use super::cost::{InputCast, Machine, Piece, Work};
use super::ring;
use super::tp_comm::{self, Collective};
use super::{Block, BlockKind, CommTimes, Unit, UnitCodec};
use crate::scenario::{Codec, ModelStyle};

/// Sizes per device and micro-batch, as `f64` (exact integers below 2^53). With context
/// parallelism the device holds `s/cp` tokens of each sequence.
#[derive(Debug, Clone, Copy)]
pub struct Dims<'a> {
    /// Tokens of each sequence on the device: `s/cp`.
    pub s: f64,
    /// Context-parallel size `cp`.
    pub cp: f64,
    /// Achieved rate of one hop of the context-parallel ring, bytes/s.
    pub cp_ring_bytes_per_s: f64,
    /// Tensor-parallel collectives pipelined with their GEMMs (Transformer Engine's
    /// userbuffers).
    pub tp_overlap: bool,
    /// Micro-batch size `b`.
    pub b: f64,
    /// Hidden size `h`.
    pub h: f64,
    /// Tokens per micro-batch on the device `sb/cp`.
    pub tokens: f64,
    /// Tokens per device in sequence-sharded regions: `sb/(cp t)` with SP, else `sb/cp`.
    pub tokens_sp: f64,
    /// Query heads per device `a/t`.
    pub heads: f64,
    /// Head dimension `h/a`.
    pub head_dim: f64,
    /// Query width per device `a d / t`.
    pub q_width: f64,
    /// Key (and value) width per device `k d / t`.
    pub kv_width: f64,
    /// FFN width per device `f/t`.
    pub ffn: f64,
    /// Padded vocabulary per device `V/t`.
    pub vocab: f64,
    /// Sequence parallelism.
    pub sp: bool,
    /// FlashAttention.
    pub flash: bool,
    /// GPT or Llama.
    pub style: ModelStyle,
    /// The compression codecs (the profile's one, else the GPU's set).
    pub codecs: &'a [Codec],
    /// An RMSNorm over each head's q and k (Qwen3).
    pub qk_norm: bool,
    /// Multi-head latent attention's widths, when the model has it.
    pub mla: Option<super::mla::MlaDims>,
    /// Each SwiGLU's input kept in fp8 for the backward (Megatron-Core's
    /// `activation_func_fp8_input_store`; [`swiglu_input`]).
    pub act_fp8_store: bool,
}

/// What a unit keeps.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Keep {
    /// Bytes kept.
    pub(super) bytes: f64,
    /// 2-byte elements among them that the compress strategy may quantize.
    pub(super) elems: f64,
    /// Always kept (a block input): no strategy may drop it.
    pub(super) forced: bool,
    /// A GEMM input that the weight-gradient pass (W) still reads after B.
    pub(super) needed_by_w: bool,
    /// Part of core attention: what `selective` recomputes.
    pub(super) core_attention: bool,
    /// Sensitive to activation outliers (only codecs that keep outliers may hold it).
    pub(super) outlier_sensitive: bool,
    /// Kept, but re-run by `selective` with the rest of core attention (attention x V).
    pub(super) selective_rerun: bool,
}

/// A kept bf16 activation of `bytes` (all of it compressible).
pub(super) fn act(bytes: f64) -> Keep {
    Keep {
        bytes,
        elems: bytes / 2.0,
        ..Keep::default()
    }
}

/// A SwiGLU's input of `elements` (its fc1 output, both halves) as the backward keeps it,
/// with what keeping it costs beyond the SwiGLU's own passes: bf16 (2 bytes an element,
/// nothing more); with Megatron-Core's `activation_func_fp8_input_store` an fp8 copy (1
/// byte an element) that the fused SwiGLU writes beside its output and casts back to bf16
/// before its backward (read 1, write 2 an element). Megatron's `bias_swiglu_impl` and
/// `weighted_bias_swiglu_impl` save `input.to(float8_e4m3fn)`; DeepSeek-V3 caches the
/// experts' SwiGLU inputs in fp8 the same way (its technical report, section 3.3.3).
pub(super) fn swiglu_input(m: &Machine, d: &Dims, elements: f64) -> (Keep, Piece) {
    if d.act_fp8_store {
        (raw(elements), m.elementwise(elements, 3.0 * elements))
    } else {
        (act(2.0 * elements), Piece::default())
    }
}

/// A kept tensor of `bytes` that the codec does not compress (masks, token ids).
pub(super) fn raw(bytes: f64) -> Keep {
    Keep {
        bytes,
        ..Keep::default()
    }
}

/// Collects a block's units in forward order and its pieces' costs, then becomes a [`Block`].
pub(super) struct Builder<'a> {
    m: &'a Machine<'a>,
    codecs: &'a [Codec],
    kind: BlockKind,
    units: Vec<Unit>,
    /// Sum of the units' pieces.
    units_total: Piece,
    /// Pieces that are no unit's.
    pub(super) other: Piece,
    /// Tensor-parallel collectives among them (their added time counted in `other` too).
    tp: Collective,
    /// Context parallelism's K/V exchange (its exposed time is inside a unit's piece).
    cp: Collective,
    /// The expert-parallel all-to-alls (their time is inside the pieces that run them).
    ep: Collective,
    /// Model FLOPs of one forward (MFU's numerator, causal s^2 term halved).
    pub(super) model_flops: f64,
}

impl<'a> Builder<'a> {
    /// An empty block of `kind` costed on `m`, compressing with `d`'s codec.
    pub(super) fn new(m: &'a Machine<'a>, d: &Dims<'a>, kind: BlockKind) -> Self {
        Self {
            m,
            codecs: d.codecs,
            kind,
            units: Vec::with_capacity(10),
            units_total: Piece::default(),
            other: Piece::default(),
            tp: Collective::default(),
            cp: Collective::default(),
            ep: Collective::default(),
            model_flops: 0.0,
        }
    }

    /// Adds the unit `name` that keeps `keep` and whose producing work is `piece`, with its
    /// compressed size and codec time. A unit with nothing the codec shrinks (masks, token
    /// ids) keeps its size and costs no codec time; the planner never compresses it.
    pub(super) fn unit(&mut self, name: &str, keep: Keep, piece: Piece) {
        let codecs: Vec<Option<UnitCodec>> = self
            .codecs
            .iter()
            .map(|c| self.compress(c, &keep))
            .collect();
        let first = codecs.first().copied().flatten();
        let (compressed, codec) = first.map_or((keep.bytes, 0.0), |c| {
            (c.compressed_bytes as f64, c.codec_s)
        });
        self.units_total += piece;
        self.units.push(Unit {
            name: name.to_string(),
            size_bytes: keep.bytes.round() as u64,
            forced: keep.forced,
            forward_flops: piece.fwd.flops,
            forward_bytes: piece.fwd.bytes,
            forward_s: piece.fwd.s,
            backward_s: piece.b.s + piece.w.s,
            needed_by_w: keep.needed_by_w,
            core_attention: keep.core_attention,
            selective_rerun: keep.selective_rerun,
            named: false,
            compressed_bytes: compressed.round() as u64,
            codec_s: codec,
            outlier_sensitive: keep.outlier_sensitive,
            codecs,
        });
    }

    /// What `codec` makes of a unit keeping `keep`, or `None` when it may not hold it: it
    /// shrinks nothing (masks, token ids), or the unit is outlier-sensitive and the codec
    /// keeps no outliers. Quantizing in F and dequantizing in B cost the codec's
    /// throughput over the 2n original bytes each way, or HBM passes (read 2n, write the
    /// compressed form; and the reverse).
    fn compress(&self, codec: &Codec, keep: &Keep) -> Option<UnitCodec> {
        let n = keep.elems;
        let small = codec.compressed_bytes(n);
        if n <= 0.0 || small >= 2.0 * n || (keep.outlier_sensitive && !codec.keeps_outliers()) {
            return None;
        }
        let codec_s = match codec.spec.gbps {
            Some(gbps) => 2.0 * (2.0 * n) / (gbps * 1e9),
            None => 2.0 * self.m.mem(2.0 * n + small).s,
        };
        Some(UnitCodec {
            compressed_bytes: (keep.bytes - 2.0 * n + small).round() as u64,
            codec_s,
        })
    }

    /// Adds the block's forced input `name` of `bytes` (no work of its own).
    pub(super) fn input(&mut self, name: &str, bytes: f64) {
        let keep = Keep {
            forced: true,
            ..raw(bytes)
        };
        self.unit(name, keep, Piece::default());
    }

    /// Adds a tensor-parallel collective (its added time to the block's times).
    pub(super) fn collective(&mut self, c: Collective) {
        self.other += c.added;
        self.tp = self.tp + c;
    }

    /// Records the K/V exchange of context parallelism, whose exposed time a unit's piece
    /// already carries.
    fn cp_exchange(&mut self, wire: Piece, exposed: Piece) {
        self.cp = self.cp
            + Collective {
                wire,
                added: exposed,
            };
    }

    /// Records expert-parallel communication `wire` (link time per pass) of which the
    /// pieces already carry `added`.
    pub(super) fn ep_exchange(&mut self, wire: Piece, added: Piece) {
        self.ep = self.ep + Collective { wire, added };
    }

    /// The finished block with its times (units plus other pieces) and static memory.
    pub(super) fn finish(self, params: u64, static_bytes: u64) -> Block {
        let total = self.units_total + self.other;
        Block {
            kind: self.kind,
            forward_s: total.fwd.s,
            backward_b_s: total.b.s,
            backward_w_s: total.w.s,
            backward_b_comm_s: self.tp.added.b.s,
            backward_w_comm_s: self.tp.added.w.s,
            // What the backward's GEMMs hide (link time the block does not wait for).
            backward_b_hidden_s: (self.tp.wire.b.s - self.tp.added.b.s).max(0.0),
            backward_w_hidden_s: (self.tp.wire.w.s - self.tp.added.w.s).max(0.0),
            tp_comm: comm_times(&self.tp),
            cp_comm: comm_times(&self.cp),
            dp_comm: CommTimes::default(),
            ep_comm: comm_times(&self.ep),
            expert_params: 0,
            model_forward_flops: self.model_flops,
            fp8_weight_bytes: 0,
            params,
            static_bytes,
            units: self.units,
        }
    }
}

/// A collective's per-pass times as the block reports them.
fn comm_times(c: &Collective) -> CommTimes {
    CommTimes {
        forward_s: c.wire.fwd.s,
        forward_added_s: c.added.fwd.s,
        backward_s: c.wire.b.s + c.wire.w.s,
        backward_added_s: c.added.b.s + c.added.w.s,
    }
}

/// The norm at the start of a sub-layer (or of the head): its output `name` is kept (the
/// next GEMM's input, so needed by W; sharded by t with SP), then gathered for the
/// column-parallel GEMM `col` when sequence parallelism is on. For a transformer layer's
/// GEMM (`layer`) under the fp8 recipe, the norm emits its output in fp8 and that is what
/// is kept: 1 byte an element (Transformer Engine's `LayerNormLinear`).
pub(super) fn norm_then_gather(
    k: &mut Builder,
    m: &Machine,
    d: &Dims,
    name: &str,
    col: &Piece,
    layer: bool,
) {
    let elems = d.tokens_sp * d.h;
    let keep = if layer && m.fp8() {
        Keep {
            needed_by_w: true,
            outlier_sensitive: true,
            ..raw(elems)
        }
    } else {
        Keep {
            needed_by_w: true,
            outlier_sensitive: true,
            ..act(2.0 * elems)
        }
    };
    k.unit(name, keep, norm(m, d));
    k.collective(tp_comm::gather_in(m, d, col, layer));
}

/// What a bf16 tensor of `elements` that feeds a layer's linear layer keeps: itself (2
/// bytes an element), or under the fp8 recipe only its fp8 cast (1 byte, the linear layer's
/// saved input; nothing else needs it).
pub(super) fn linear_input(m: &Machine, elements: f64) -> Keep {
    if m.fp8() {
        Keep {
            needed_by_w: true,
            ..raw(elements)
        }
    } else {
        Keep {
            needed_by_w: true,
            ..act(2.0 * elements)
        }
    }
}

/// Norm (LayerNorm or RMSNorm) over the sequence-sharded activations: read + write forward,
/// read input, gradient, write gradient backward.
pub(super) fn norm(m: &Machine, d: &Dims) -> Piece {
    let x = 2.0 * d.tokens_sp * d.h;
    m.elementwise(2.0 * x, 3.0 * x)
}

/// Residual add (and for GPT the bias-dropout-add writing a 1-byte mask) at the end of a
/// sub-layer, with the gradient add of the residual branch in the backward. The GPT mask is
/// its own unit whose recomputation regenerates it from the saved RNG state (one 1-byte
/// write, as Megatron and the zero-bubble fork do), not the GEMM before it.
pub(super) fn add_residual(k: &mut Builder, m: &Machine, d: &Dims) {
    let e = d.tokens_sp * d.h;
    match d.style {
        ModelStyle::Gpt => {
            k.other += m.elementwise(6.0 * e, 5.0 * e + 6.0 * e);
            let mask = Piece {
                fwd: m.mem(e),
                ..Piece::default()
            };
            k.unit("out_dropout_mask", raw(e), mask);
        }
        ModelStyle::Llama => k.other += m.elementwise(6.0 * e, 6.0 * e),
    }
}

/// An attention sub-layer.
pub fn attention(m: &Machine, d: &Dims, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Attention);
    k.input("input", 2.0 * d.tokens_sp * d.h);
    attention_body(&mut k, m, d);
    k.finish(params, static_bytes)
}

/// The units of an attention sub-layer after its input (multi-head or grouped-query
/// attention, or multi-head latent attention when the model has it), its out-projection and
/// its residual add.
pub(super) fn attention_body(k: &mut Builder, m: &Machine, d: &Dims) {
    if let Some(mla) = d.mla {
        super::mla::body(k, m, d, &mla);
        return;
    }
    let norm_name = match d.style {
        ModelStyle::Gpt => "ln_out",
        ModelStyle::Llama => "norm_out",
    };
    let rope = |width: f64| match d.style {
        ModelStyle::Llama => m.elementwise(4.0 * d.tokens * width, 4.0 * d.tokens * width),
        ModelStyle::Gpt => Piece::default(),
    };
    // One fused QKV GEMM, split by output so that q, k and v are units of their own; the
    // fp8 input's transpose is charged once, with q. (Each part is timed as a GEMM of its
    // own size, which the A100 calibration was set with.)
    let q_lin = m.layer_linear(d.tokens, d.h, d.q_width, InputCast::FromNorm);
    let k_lin = m.layer_linear(d.tokens, d.h, d.kv_width, InputCast::Elsewhere);
    let (rq, rk) = (rope(d.q_width), rope(d.kv_width));
    let (q, kk) = (q_lin + rq, k_lin + rk);
    let v = m.layer_linear(d.tokens, d.h, d.kv_width, InputCast::Elsewhere);
    norm_then_gather(k, m, d, norm_name, &(q + kk + v), true);
    k.model_flops += q.fwd.flops + kk.fwd.flops + v.fwd.flops;
    // The softmax's inputs: QK^T and the exponential amplify their quantization errors.
    let sensitive = |bytes: f64| Keep {
        outlier_sensitive: true,
        ..act(bytes)
    };
    if d.qk_norm {
        // Qwen3's QK-norm: the per-head RMSNorms of q and k run after the QKV GEMM and before
        // RoPE, so the GEMM's q and k outputs are kept for the norms' backward, beside the
        // normed q and k core attention reads.
        let head_norm = |width: f64| {
            let x = 2.0 * d.tokens * width;
            m.elementwise(2.0 * x, 3.0 * x)
        };
        k.unit("q_proj", act(2.0 * d.tokens * d.q_width), q_lin);
        k.unit("k_proj", act(2.0 * d.tokens * d.kv_width), k_lin);
        k.unit(
            "q",
            sensitive(2.0 * d.tokens * d.q_width),
            head_norm(d.q_width) + rq,
        );
        k.unit(
            "k",
            sensitive(2.0 * d.tokens * d.kv_width),
            head_norm(d.kv_width) + rk,
        );
    } else {
        k.unit("q", sensitive(2.0 * d.tokens * d.q_width), q);
        k.unit("k", sensitive(2.0 * d.tokens * d.kv_width), kk);
    }
    k.unit("v", act(2.0 * d.tokens * d.kv_width), v);
    core_attention(k, m, d, d.q_width);
    let out = m.layer_linear(d.tokens, d.q_width, d.h, InputCast::Elsewhere);
    k.model_flops += out.fwd.flops;
    k.other += out;
    k.collective(tp_comm::reduce_out(m, d, &out));
    add_residual(k, m, d);
}

/// Core attention of `d`'s heads (FlashAttention's `core_attn`, or the materialised softmax,
/// its dropout and the context), whose output is `out_width` wide per token: QK^T and
/// attention x V, `2 b s^2 (a/t) d` FLOPs each (`d` the mean of the two products' head widths
/// where they differ, as in MLA). Model FLOPs halve the s^2 term for the causal mask
/// (Megatron's MFU convention). With context parallelism `d.s` is the rank's s/cp tokens,
/// and the rank runs cp ring steps of that size: 1/cp of the whole causal attention.
pub(super) fn core_attention(k: &mut Builder, m: &Machine, d: &Dims, out_width: f64) {
    let bmm_flops = 2.0 * d.b * d.heads * d.s * d.s * d.head_dim;
    k.model_flops += d.cp * bmm_flops;
    let scores = d.b * d.heads * d.s * d.s;
    let context = d.tokens * out_width;
    if d.flash {
        // FlashAttention computes only the unmasked half; backward 2.5x the forward. Under
        // the fp8 recipe the out-projection keeps an fp8 cast of the output besides the bf16
        // output FlashAttention's backward reads (delayed scaling cannot reuse it).
        let io = 2.0 * d.tokens * (2.0 * d.q_width + 2.0 * d.kv_width) + 4.0 * d.heads * d.s * d.b;
        let pairs = d.b * d.heads;
        let diagonal = m.flash_attention(bmm_flops, io, pairs);
        let off = m.flash_attention_unmasked(bmm_flops, io, pairs);
        let ring = ring::ring_attention(m, d, diagonal, off);
        k.cp_exchange(ring.wire, ring.exposed);
        let mut piece = ring.piece;
        piece.fwd += m.input_cast(context);
        let fp8_copy = if m.fp8() { context } else { 0.0 };
        let keep = Keep {
            bytes: 2.0 * context + 4.0 * d.heads * d.s * d.b + fp8_copy,
            elems: context,
            needed_by_w: true,
            core_attention: true,
            ..Keep::default()
        };
        k.unit("core_attn", keep, piece);
    } else {
        let qk_io = 2.0 * d.tokens * (d.q_width + d.q_width) + 2.0 * scores;
        let qk = m.compute(bmm_flops, qk_io);
        let softmax = Piece {
            fwd: qk + m.mem(4.0 * scores),
            b: qk * 2.0 + m.mem(6.0 * scores),
            w: Work::default(),
        };
        k.unit(
            "softmax_out",
            Keep {
                core_attention: true,
                ..act(2.0 * scores)
            },
            softmax,
        );
        if d.style == ModelStyle::Gpt {
            let keep = Keep {
                bytes: 3.0 * scores,
                elems: scores,
                core_attention: true,
                ..Keep::default()
            };
            k.unit(
                "attn_dropout",
                keep,
                m.elementwise(5.0 * scores, 5.0 * scores),
            );
        }
        let av_io = 2.0 * scores + 2.0 * d.tokens * (d.q_width + d.q_width);
        let av = m.compute(bmm_flops, av_io);
        // The context leaves attention x V as [b, heads, s, d] and is permuted to [s, b, h]
        // (a read and a write of it), and its gradient is permuted back.
        let permute = m.mem(2.0 * 2.0 * context);
        let piece = Piece {
            fwd: av + permute + m.input_cast(context),
            b: av * 2.0 + permute,
            w: Work::default(),
        };
        let keep = Keep {
            selective_rerun: true,
            ..linear_input(m, context)
        };
        k.unit("context", keep, piece);
    }
}

/// An MLP sub-layer.
pub fn mlp(m: &Machine, d: &Dims, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Mlp);
    let x = 2.0 * d.tokens_sp * d.h;
    k.input("input", x);
    let fe = d.tokens * d.ffn;
    match d.style {
        ModelStyle::Gpt => {
            let fc1 = m.layer_linear(d.tokens, d.h, d.ffn, InputCast::FromNorm);
            norm_then_gather(&mut k, m, d, "ln_out", &fc1, true);
            k.model_flops += fc1.fwd.flops;
            k.unit("fc1_out", act(2.0 * fe), fc1);
            let mut gelu = m.elementwise(4.0 * fe, 6.0 * fe);
            gelu.fwd += m.input_cast(fe);
            k.unit("gelu_out", linear_input(m, fe), gelu);
            let fc2 = m.layer_linear(d.tokens, d.ffn, d.h, InputCast::Elsewhere);
            k.model_flops += fc2.fwd.flops;
            k.other += fc2;
            k.collective(tp_comm::reduce_out(m, d, &fc2));
            add_residual(&mut k, m, d);
        }
        ModelStyle::Llama => {
            let gate_up = m.layer_linear(d.tokens, d.h, 2.0 * d.ffn, InputCast::FromNorm);
            norm_then_gather(&mut k, m, d, "norm_out", &gate_up, true);
            k.model_flops += gate_up.fwd.flops;
            let (keep, store) = swiglu_input(m, d, 2.0 * fe);
            k.unit("gate_up", keep, gate_up);
            let mut swiglu = m.elementwise(6.0 * fe, 10.0 * fe) + store;
            swiglu.fwd += m.input_cast(fe);
            k.unit("swiglu_out", linear_input(m, fe), swiglu);
            let down = m.layer_linear(d.tokens, d.ffn, d.h, InputCast::Elsewhere);
            k.model_flops += down.fwd.flops;
            k.other += down;
            k.collective(tp_comm::reduce_out(m, d, &down));
            add_residual(&mut k, m, d);
        }
    }
    k.finish(params, static_bytes)
}
