//! The roofline cost model (docs/model.md): every piece of work is FLOPs on the
//! matrix unit and bytes through HBM, timed as `flops / (peak x eff(flops)) +
//! bytes / (bandwidth x eff(bytes))` with the GPU's size-dependent efficiency steps.
//! The two terms add (Calculon's "no overlap" processing mode, the one its A100 file was
//! validated with) rather than taking their maximum: a kernel's prologue/epilogue traffic
//! is not hidden behind its math. Collectives use ring costs on the tensor-parallel link at
//! the link efficiency. Under the fp8 recipe the transformer layers' linear GEMMs run at
//! the fp8 peak on their own efficiency curve, with Transformer Engine's casts as
//! memory-bound passes; FlashAttention has curves of its own (both default to the GEMM
//! curve).

use std::ops::{Add, AddAssign, Mul};

use crate::scenario::{AttentionBackend, AttentionKernel, EfficiencyCurve, GpuSpec, Precision};

/// Work of one piece in one direction: FLOPs, HBM bytes and the resulting seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved through HBM.
    pub bytes: f64,
    /// Seconds.
    pub s: f64,
}

impl Add for Work {
    type Output = Work;
    fn add(self, o: Work) -> Work {
        Work {
            flops: self.flops + o.flops,
            bytes: self.bytes + o.bytes,
            s: self.s + o.s,
        }
    }
}

impl AddAssign for Work {
    fn add_assign(&mut self, o: Work) {
        *self = *self + o;
    }
}

impl Mul<f64> for Work {
    type Output = Work;
    fn mul(self, k: f64) -> Work {
        Work {
            flops: self.flops * k,
            bytes: self.bytes * k,
            s: self.s * k,
        }
    }
}

/// A piece of a block: its forward, its input-gradient backward (B) and its weight-gradient
/// backward (W).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Piece {
    /// Forward work.
    pub fwd: Work,
    /// Backward for the input gradient.
    pub b: Work,
    /// Backward for the weight gradient.
    pub w: Work,
}

impl Add for Piece {
    type Output = Piece;
    fn add(self, o: Piece) -> Piece {
        Piece {
            fwd: self.fwd + o.fwd,
            b: self.b + o.b,
            w: self.w + o.w,
        }
    }
}

impl AddAssign for Piece {
    fn add_assign(&mut self, o: Piece) {
        *self = *self + o;
    }
}

impl Mul<f64> for Piece {
    type Output = Piece;
    fn mul(self, k: f64) -> Piece {
        Piece {
            fwd: self.fwd * k,
            b: self.b * k,
            w: self.w * k,
        }
    }
}

/// Where a layer linear's fp8 input cast is charged (see [`Machine::layer_linear`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputCast {
    /// The input comes from a norm that emits it in fp8 (Transformer Engine's
    /// `LayerNormLinear`): no cast, but the saved fp8 input is transposed for the weight
    /// gradient.
    FromNorm,
    /// The input's cast is charged to the piece that makes the input, or to another part of
    /// the same fused GEMM.
    Elsewhere,
}

/// The device's rates, ready for the cost functions.
#[derive(Debug, Clone, Copy)]
pub struct Machine<'a> {
    peak_flops: f64,
    hbm_bytes_per_s: f64,
    eff: &'a EfficiencyCurve,
    /// Tensor-parallel group size.
    t: f64,
    /// Bandwidth of the tensor-parallel group's links, bytes/s, efficiency applied.
    tp_bytes_per_s: f64,
    /// Dense fp8 peak, FLOP/s (0 without fp8 tensor cores).
    fp8_peak_flops: f64,
    /// The transformer layers' linear GEMMs run in fp8 (Transformer Engine's recipe).
    fp8: bool,
    /// Streaming multiprocessors (0 when the GPU's preset does not say).
    sms: f64,
    /// FlashAttention runs as the `flash-attn` package's FlashAttention-2, not cuDNN's.
    flash2: bool,
}

impl<'a> Machine<'a> {
    /// The rates of `gpu` for a tensor-parallel group of `t` (inside a node when
    /// `t <= node_gpus`, else over the inter-node network).
    pub fn new(gpu: &'a GpuSpec, t: u32) -> Self {
        let (link_gbps, link_eff) = if t <= gpu.node_gpus {
            (gpu.link_gbps, gpu.efficiency.link)
        } else {
            (gpu.inter_node_gbps, gpu.efficiency.network_link())
        };
        Self {
            peak_flops: gpu.bf16_tflops * 1e12,
            hbm_bytes_per_s: gpu.hbm_gbps * 1e9,
            eff: &gpu.efficiency,
            t: f64::from(t),
            tp_bytes_per_s: link_gbps * 1e9 * link_eff,
            fp8_peak_flops: gpu.fp8_tflops.unwrap_or(0.0) * 1e12,
            fp8: false,
            sms: f64::from(gpu.sms.unwrap_or(0)),
            flash2: false,
        }
    }

    /// Tensor-parallel group size `t`.
    pub fn tp(&self) -> f64 {
        self.t
    }

    /// Time a transformer layer's linear GEMM work `w` loses when `lent` of the GPU's
    /// streaming multiprocessors run communication kernels beside it: its math (at the
    /// layers' precision) stretched by `sms / (sms - lent)`. An upper bound: a GEMM bound by
    /// memory loses less. 0 on a GPU whose multiprocessors are not known.
    pub fn sm_margin_s(&self, w: Work, lent: f64) -> f64 {
        if self.sms <= lent || w.flops <= 0.0 {
            return 0.0;
        }
        self.layer_math_s(w.flops).min(w.s) * self.sm_stretch(lent)
    }

    /// The fraction by which math loses time when `lent` of the GPU's streaming
    /// multiprocessors run communication kernels beside it: `sms / (sms - lent) - 1`; 0 on a
    /// GPU whose multiprocessors are not known.
    pub fn sm_stretch(&self, lent: f64) -> f64 {
        if self.sms <= lent {
            return 0.0;
        }
        self.sms / (self.sms - lent) - 1.0
    }

    /// The math time of a transformer layer's linear GEMM of `flops` at the layers'
    /// precision, on the efficiency its own size gets on the GPU's curve.
    fn layer_math_s(&self, flops: f64) -> f64 {
        if flops <= 0.0 {
            0.0
        } else if self.fp8 {
            flops / (self.fp8_peak_flops * self.eff.matrix_fp8_at(flops))
        } else {
            flops / (self.peak_flops * self.eff.matrix_at(flops))
        }
    }

    /// Time a transformer layer's linear GEMM work `w` loses when it runs as `parts` equal
    /// GEMMs of which `in_flight` run together (Transformer Engine's userbuffers overlaps
    /// issue each chunk's GEMM on one of a few compute streams, so the chunks in flight fill
    /// one another's last waves): the parts, taken `in_flight` at a time, each group at the
    /// efficiency of one GEMM of its combined size, against the whole GEMM. Nothing for one
    /// part or when all are in flight.
    pub fn split_gemm_s(&self, w: Work, parts: f64, in_flight: f64) -> f64 {
        if parts <= 1.0 || w.flops <= 0.0 {
            return 0.0;
        }
        let group = in_flight.clamp(1.0, parts);
        let split = parts / group * self.layer_math_s(w.flops * group / parts);
        (split - self.layer_math_s(w.flops)).max(0.0)
    }

    /// The same machine running the transformer layers' linear GEMMs in `precision` (fp8
    /// only where the GPU has an fp8 peak; validation refuses fp8 without one).
    pub fn with_precision(mut self, precision: Precision) -> Self {
        self.fp8 = precision.is_fp8() && self.fp8_peak_flops > 0.0;
        self
    }

    /// The same machine with FlashAttention's kernels from `backend`.
    pub fn with_attention_backend(mut self, backend: AttentionBackend) -> Self {
        self.flash2 = backend == AttentionBackend::Flash2;
        self
    }

    /// Efficiency of FlashAttention's `kernel` (of the backend this machine runs).
    fn attention_eff(&self, kernel: AttentionKernel, pair_flops: f64, flops: f64) -> f64 {
        if self.flash2 {
            self.eff.flash2_at(kernel, pair_flops, flops)
        } else {
            self.eff.cudnn_at(kernel, pair_flops, flops)
        }
    }

    /// Whether the transformer layers' linear GEMMs run in fp8.
    pub fn fp8(&self) -> bool {
        self.fp8
    }

    /// Matrix-unit work of `flops` that moves `bytes`: compute time plus memory time (or
    /// the larger of the two where the GPU's kernels overlap them).
    pub fn compute(&self, flops: f64, bytes: f64) -> Work {
        let tc = if flops > 0.0 {
            flops / (self.peak_flops * self.eff.matrix_at(flops))
        } else {
            0.0
        };
        self.kernel(flops, bytes, tc)
    }

    /// A matrix-unit kernel of `flops` moving `bytes` whose math takes `math_s`: the math
    /// plus the memory time, or the larger of the two where the GPU overlaps them.
    fn kernel(&self, flops: f64, bytes: f64, math_s: f64) -> Work {
        let tm = self.mem(bytes).s;
        let s = if self.eff.gemm_memory_overlap {
            math_s.max(tm)
        } else {
            math_s + tm
        };
        Work { flops, bytes, s }
    }

    /// Memory-bound (elementwise) work moving `bytes`.
    pub fn mem(&self, bytes: f64) -> Work {
        let s = if bytes > 0.0 {
            bytes / (self.hbm_bytes_per_s * self.eff.memory_at(bytes))
        } else {
            0.0
        };
        Work {
            flops: 0.0,
            bytes,
            s,
        }
    }

    /// A bf16 GEMM `[m, k] x [k, n]`.
    pub fn gemm(&self, m: f64, k: f64, n: f64) -> Work {
        self.compute(2.0 * m * k * n, 2.0 * (m * k + k * n + m * n))
    }

    /// A linear layer `[m, k] x [k, n]` with its backward: B = `dY W^T`, W = `X^T dY`.
    pub fn linear(&self, m: f64, k: f64, n: f64) -> Piece {
        Piece {
            fwd: self.gemm(m, k, n),
            b: self.gemm(m, n, k),
            w: self.gemm(k, m, n),
        }
    }

    /// An fp8 GEMM `[m, k] x [k, n]`: 1-byte operands, a 2-byte output, at the fp8 peak
    /// on the fp8 efficiency curve.
    pub fn gemm_fp8(&self, m: f64, k: f64, n: f64) -> Work {
        let flops = 2.0 * m * k * n;
        let tc = flops / (self.fp8_peak_flops * self.eff.matrix_fp8_at(flops));
        self.kernel(flops, m * k + k * n + 2.0 * m * n, tc)
    }

    /// A transformer layer's linear layer `[m, k] x [k, n]` as Transformer Engine runs it:
    /// in bf16 as [`Machine::linear`]; under the fp8 recipe its three GEMMs (forward, input
    /// gradient, weight gradient) in fp8, plus the output gradient cast and transposed in
    /// the backward (read 2 bytes, write 1 + 1 an element) and, for `InputCast::FromNorm`,
    /// the saved fp8 input transposed for the weight gradient (read 1, write 1). A bf16
    /// input's own cast is charged where the input is made ([`Machine::input_cast`]).
    pub fn layer_linear(&self, m: f64, k: f64, n: f64, input: InputCast) -> Piece {
        if !self.fp8 {
            return self.linear(m, k, n);
        }
        let transpose = match input {
            InputCast::FromNorm => self.mem(2.0 * m * k),
            InputCast::Elsewhere => Work::default(),
        };
        Piece {
            fwd: self.gemm_fp8(m, k, n),
            b: self.gemm_fp8(m, n, k) + self.mem(4.0 * m * n),
            w: self.gemm_fp8(k, m, n) + transpose,
        }
    }

    /// A grouped GEMM: `groups` GEMMs `[m/groups, k] x [k, n]` (one per local expert, the
    /// rows split evenly) in one kernel, at the grouped-GEMM efficiency of one group's FLOPs
    /// (`grouped_matrix`, a small expert's GEMM being slower than one large GEMM); under the
    /// fp8 recipe at the fp8 peak on the fp8 curve at that size, with 1-byte operands.
    pub fn grouped_gemm(&self, m: f64, k: f64, n: f64, groups: f64) -> Work {
        let flops = 2.0 * m * k * n;
        let per_group = flops / groups.max(1.0);
        let weights = groups.max(1.0) * k * n;
        if flops <= 0.0 {
            return Work::default();
        }
        if self.fp8 {
            let tc = flops / (self.fp8_peak_flops * self.eff.matrix_fp8_at(per_group));
            return self.kernel(flops, m * k + weights + 2.0 * m * n, tc);
        }
        let tc = flops / (self.peak_flops * self.eff.grouped_at(per_group));
        self.kernel(flops, 2.0 * (m * k + weights + m * n), tc)
    }

    /// The routed experts' linear layer as Transformer Engine's `GroupedLinear` runs it:
    /// `m` rows over `groups` experts, `[., k] x [k, n]` each, with its input-gradient and
    /// weight-gradient grouped GEMMs ([`Machine::grouped_wgrad`], accumulating into main
    /// gradients of `grad_bytes`); under the fp8 recipe the output gradient is cast and
    /// transposed in the backward as for [`Machine::layer_linear`].
    pub fn grouped_linear(&self, m: f64, k: f64, n: f64, groups: f64, grad_bytes: f64) -> Piece {
        let cast = if self.fp8 {
            self.mem(4.0 * m * n)
        } else {
            Work::default()
        };
        Piece {
            fwd: self.grouped_gemm(m, k, n, groups),
            b: self.grouped_gemm(m, n, k, groups) + cast,
            w: self.grouped_wgrad(m, k, n, groups, grad_bytes),
        }
    }

    /// The weight-gradient grouped GEMM of [`Machine::grouped_linear`]: `groups` GEMMs
    /// `X_g^T dY_g` (`[k, m/groups] x [m/groups, n]`), at the grouped efficiency of one
    /// group's FLOPs. Its operands are the `m` rows of `X` and of `dY` (2 bytes an element,
    /// 1 under the fp8 recipe); its outputs, one `[k, n]` gradient per expert, are
    /// accumulated into the main gradients as Megatron-Core runs it (gradient accumulation
    /// fusion, on by default: `TEGroupedLinear` passes `fuse_wgrad_accumulation`, and
    /// Transformer Engine's `GroupedLinear` hands each weight's `main_grad` to the grouped
    /// GEMM as its output with `accumulate`), so each gradient element is read and written
    /// at `grad_bytes` (fp32: 4, or 2 with `--grad-reduce-in-bf16`).
    pub fn grouped_wgrad(&self, m: f64, k: f64, n: f64, groups: f64, grad_bytes: f64) -> Work {
        let flops = 2.0 * m * k * n;
        if flops <= 0.0 {
            return Work::default();
        }
        let per_group = flops / groups.max(1.0);
        let grads = 2.0 * grad_bytes * groups.max(1.0) * k * n;
        if self.fp8 {
            let tc = flops / (self.fp8_peak_flops * self.eff.matrix_fp8_at(per_group));
            return self.kernel(flops, m * k + m * n + grads, tc);
        }
        let tc = flops / (self.peak_flops * self.eff.grouped_at(per_group));
        self.kernel(flops, 2.0 * (m * k + m * n) + grads, tc)
    }

    /// The fp8 cast of a bf16 tensor of `elements` that feeds a layer's linear layer (read
    /// 2 bytes, write the fp8 data and its transpose, 1 + 1): nothing in bf16.
    pub fn input_cast(&self, elements: f64) -> Work {
        if self.fp8 {
            self.mem(4.0 * elements)
        } else {
            Work::default()
        }
    }

    /// FlashAttention of `flops` in the forward (the causal half) moving `bytes`, over
    /// `problems` independent (sequence, head) pairs; its backward recomputes the scores:
    /// 2.5 times the FLOPs and twice the bytes. Each runs at the bf16 peak on the attention
    /// curves, which are keyed by the FLOPs of one (sequence, head) pair: a FlashAttention
    /// kernel's efficiency is set by the length of the rows each thread block walks (the
    /// sequence), not by how many pairs run beside each other.
    pub fn flash_attention(&self, flops: f64, bytes: f64, problems: f64) -> Piece {
        let pair = flops / problems.max(1.0);
        self.flash(
            flops,
            bytes,
            self.attention_eff(AttentionKernel::Forward, pair, flops),
            self.attention_eff(AttentionKernel::Backward, 2.5 * pair, 2.5 * flops),
        )
    }

    /// FlashAttention without a mask (context parallelism's off-diagonal ring steps) of
    /// `flops` moving `bytes` over `problems` pairs, on the unmasked attention curves.
    pub fn flash_attention_unmasked(&self, flops: f64, bytes: f64, problems: f64) -> Piece {
        let pair = flops / problems.max(1.0);
        self.flash(
            flops,
            bytes,
            self.attention_eff(AttentionKernel::UnmaskedForward, pair, flops),
            self.attention_eff(AttentionKernel::UnmaskedBackward, 2.5 * pair, 2.5 * flops),
        )
    }

    /// FlashAttention's forward of `flops` and its backward (2.5 times the FLOPs, twice the
    /// bytes) at the efficiencies `fwd_eff` and `bwd_eff` of the bf16 peak.
    fn flash(&self, flops: f64, bytes: f64, fwd_eff: f64, bwd_eff: f64) -> Piece {
        let at = |f: f64, eff: f64| {
            if f > 0.0 {
                f / (self.peak_flops * eff)
            } else {
                0.0
            }
        };
        let back = 2.5 * flops;
        Piece {
            fwd: self.kernel(flops, bytes, at(flops, fwd_eff)),
            b: self.kernel(back, 2.0 * bytes, at(back, bwd_eff)),
            w: Work::default(),
        }
    }

    /// Bytes per element of the tensors the layers' column-parallel GEMMs gather with
    /// sequence parallelism (their input in the forward and for the weight gradient, the
    /// output gradient of the row-parallel ones): 1 under the fp8 recipe, which gathers them
    /// already cast, else 2.
    pub fn gathered_bytes_per_element(&self) -> f64 {
        if self.fp8 { 1.0 } else { 2.0 }
    }

    /// An elementwise piece: forward moves `fwd_bytes`, its backward (B) `bwd_bytes`.
    pub fn elementwise(&self, fwd_bytes: f64, bwd_bytes: f64) -> Piece {
        Piece {
            fwd: self.mem(fwd_bytes),
            b: self.mem(bwd_bytes),
            w: Work::default(),
        }
    }

    /// Ring all-reduce of `bytes` over the tensor-parallel group: `2 (t-1)/t bytes / bw`.
    pub fn all_reduce(&self, bytes: f64) -> Work {
        self.link(2.0 * (self.t - 1.0) / self.t * bytes)
    }

    /// Ring all-gather or reduce-scatter whose full (gathered) tensor is `bytes`:
    /// `(t-1)/t bytes / bw`.
    pub fn gather(&self, bytes: f64) -> Work {
        self.link((self.t - 1.0) / self.t * bytes)
    }

    fn link(&self, wire_bytes: f64) -> Work {
        if self.t <= 1.0 {
            return Work::default();
        }
        Work {
            flops: 0.0,
            bytes: 0.0,
            s: wire_bytes / self.tp_bytes_per_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::default_scenario;

    #[test]
    fn roofline_and_rings() {
        let gpu = default_scenario().gpu;
        let m = Machine::new(&gpu, 8);
        // 2 * 8192^3 = 1.1e12 FLOPs: the A100 preset's top step, 0.86 of 312 TFLOP/s.
        let g = m.gemm(8192.0, 8192.0, 8192.0);
        let tm = g.bytes / (2039e9 * 0.75);
        assert!((g.s - g.flops / (312e12 * 0.86) - tm).abs() < 1e-12);
        // 1 GB elementwise: 0.75 of 2039 GB/s.
        assert!((m.mem(1e9).s - 1e9 / (2039e9 * 0.75)).abs() < 1e-12);
        // All-reduce is twice a reduce-scatter.
        assert!((m.all_reduce(1e8).s - 2.0 * m.gather(1e8).s).abs() < 1e-15);
        assert_eq!(Machine::new(&gpu, 1).all_reduce(1e8).s, 0.0);
    }
}
