//! The tensor-parallel collectives around a sub-layer's GEMMs (docs/model.md, "Tensor
//! parallelism"): what each one moves, which GEMM it runs under, and how much of it the
//! block waits for, as Megatron-LM runs them, or, with `tp_comm_overlap`, as Transformer
//! Engine's userbuffers pipeline them with their GEMMs.
//!
//! Without the overlap (Megatron's own asynchronous collectives): the forward's all-gather of
//! the sequence-parallel norm output and reduce-scatter of the row-parallel output are
//! exposed; in the backward the column-parallel GEMMs hide the re-gather of their saved input
//! under the input-gradient GEMM and the reduce-scatter of the input gradient under the
//! weight-gradient GEMM; the gather of the row-parallel output gradient is exposed.
//!
//! With the overlap, per GEMM as Transformer Engine's defaults set it
//! (`transformer_engine/pytorch/module/base.py`, `initialize_ub`):
//! - `ring_exchange` (the column-parallel forward GEMMs, the row-parallel input-gradient
//!   GEMMs): the all-gather becomes `t - 1` point-to-point steps on copy engines, and each
//!   arrived chunk's GEMM (`1/t` of the tokens) runs while the next chunk moves. With
//!   all-gather time `C` and split GEMM time `G'` the pair takes `max(G', C + G'/t)`.
//! - `pipeline` (the row-parallel forward GEMMs): the GEMM in 4 chunks of the output's
//!   columns, each chunk's reduce-scatter under the next chunk's GEMM, on 16 streaming
//!   multiprocessors taken from the GEMM (`set_sm_margin`): with chunk times `g` (split and
//!   stretched) and `c`, `g + 3 max(g, c) + c` in all.
//!
//! The split GEMMs are timed in groups of the chunks in flight together on Transformer
//! Engine's three compute streams, each group at the GPU's curve for one GEMM of its size
//! ([`Machine::split_gemm_s`]): a smaller GEMM is slower per FLOP.
//! - `bulk` (the column-parallel backward): the same hiding as Megatron's, but the GEMMs lend
//!   16 streaming multiprocessors to the collective.
//!
//! A GEMM that lends `k` of the GPU's `n` multiprocessors has its math stretched by
//! `n / (n - k)` (an upper bound; a memory-bound GEMM loses less). That loss counts as
//! tensor-parallel time: it is what the overlap costs.

use super::cost::{Machine, Piece, Work};
use super::units::Dims;

/// Streaming multiprocessors Transformer Engine's `pipeline` and `bulk` overlaps give their
/// communication kernels (`num_sm` 16 in `initialize_ub`'s defaults).
pub const OVERLAP_SMS: f64 = 16.0;

/// Chunks of a `pipeline` overlap (`num_splits` 4 in `initialize_ub`'s defaults).
const PIPELINE_SPLITS: f64 = 4.0;

/// Compute streams a userbuffers overlap issues its chunks' GEMMs on, round robin
/// (`_NUM_MAX_UB_STREAMS` 3 in `transformer_engine/pytorch/cpp_extensions/gemm.py`; the overlap
/// object keeps `min(3, num_splits)` of them, `comm_gemm_overlap.cpp`): at most this many
/// chunk GEMMs are in flight together.
const UB_STREAMS: f64 = 3.0;

/// A collective around a GEMM: the time it keeps the link busy, and the time the block
/// spends on it (waiting for it, or the GEMM slowed by it), per pass.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Collective {
    /// Link time per pass.
    pub wire: Piece,
    /// Time added to the block per pass.
    pub added: Piece,
}

impl std::ops::Add for Collective {
    type Output = Collective;
    fn add(self, o: Collective) -> Collective {
        Collective {
            wire: self.wire + o.wire,
            added: self.added + o.added,
        }
    }
}

/// The time of a collective `comm` that a GEMM of `hide` seconds covers: only what exceeds
/// it is added.
fn exposed(comm: Work, hide: f64) -> Work {
    Work {
        s: (comm.s - hide).max(0.0),
        ..comm
    }
}

/// Seconds only.
fn secs(s: f64) -> Work {
    Work {
        s,
        ..Work::default()
    }
}

/// A `ring_exchange` all-gather of `comm` under the GEMM `gemm`: `t` GEMMs of one chunk of
/// the tokens each (`split_overlap_ag`), chunk `i` waiting only for its own input, which
/// arrives `C / (t-1)` after the one before. While a chunk's GEMM (`G/t`) outlasts that, the
/// next one starts beside it, up to `UB_STREAMS` in flight: `1 + (G/t) / (C/(t-1))` of them,
/// timed by [`Machine::split_gemm_s`] to `G'`. The pair takes `max(G', C + G'/t)`; the time
/// over the whole GEMM `G` is returned.
fn ring_exchange(m: &Machine, comm: Work, gemm: Work) -> Work {
    let t = m.tp();
    let step = comm.s / (t - 1.0).max(1.0);
    let in_flight = if step > 0.0 {
        (1.0 + gemm.s / t / step).min(UB_STREAMS)
    } else {
        UB_STREAMS
    };
    let split = gemm.s + m.split_gemm_s(gemm, t, in_flight);
    secs((split.max(comm.s + split / t) - gemm.s).max(0.0))
}

/// A `pipeline` reduce-scatter of `comm` after the GEMM `gemm` (its time `gemm.s`): the GEMM
/// as `PIPELINE_SPLITS` GEMMs of a chunk of the output's columns each (`split_overlap_rs`;
/// they wait for nothing, so `UB_STREAMS` of them run together), on the multiprocessors the
/// collective leaves. The added time over the whole GEMM alone, split and stretch included.
fn pipeline(m: &Machine, comm: Work, gemm: Work) -> Work {
    let split = m.split_gemm_s(gemm, PIPELINE_SPLITS, UB_STREAMS);
    let stretched =
        gemm.s + split + m.sm_margin_s(gemm, OVERLAP_SMS) + split * m.sm_stretch(OVERLAP_SMS);
    let (g, c) = (stretched / PIPELINE_SPLITS, comm.s / PIPELINE_SPLITS);
    let total = g + (PIPELINE_SPLITS - 1.0) * g.max(c) + c;
    secs((total - gemm.s).max(0.0))
}

/// A `bulk` collective `comm` under the GEMM `gemm`: the GEMM's stretch plus what its
/// stretched time cannot hide.
fn bulk(m: &Machine, comm: Work, gemm: Work) -> Work {
    let stretch = m.sm_margin_s(gemm, OVERLAP_SMS);
    secs(stretch + (comm.s - gemm.s - stretch).max(0.0))
}

/// Collectives around a sub-layer's column-parallel GEMMs `col` (the GEMMs that read the
/// norm output; `layer` for a transformer layer's, which Transformer Engine runs: the head's
/// output projection is Megatron's own and never overlapped). Forward: the all-gather of the
/// norm output (SP), already cast to fp8 under the fp8 recipe. Backward: with SP the re-gather
/// of the saved input (under the input-gradient GEMM, charged to W, which needs it) and the
/// reduce-scatter of the input gradient (under the weight-gradient GEMM, charged to B, whose
/// output it is); without SP the all-reduce of the input gradient under the weight-gradient
/// GEMM.
pub fn gather_in(m: &Machine, d: &Dims, col: &Piece, layer: bool) -> Collective {
    let full = 2.0 * d.tokens * d.h;
    let input = if layer {
        m.gathered_bytes_per_element() * d.tokens * d.h
    } else {
        full
    };
    if !d.sp {
        let ar = m.all_reduce(full);
        return Collective {
            wire: Piece {
                b: ar,
                ..Piece::default()
            },
            added: Piece {
                b: exposed(ar, col.w.s),
                ..Piece::default()
            },
        };
    }
    let (ag, rs, again) = (m.gather(input), m.gather(full), m.gather(input));
    let wire = Piece {
        fwd: ag,
        b: rs,
        w: again,
    };
    let added = if layer && d.tp_overlap {
        Piece {
            fwd: ring_exchange(m, ag, col.fwd),
            b: bulk(m, rs, col.w),
            w: bulk(m, again, col.b),
        }
    } else {
        Piece {
            fwd: ag,
            b: exposed(rs, col.w.s),
            w: exposed(again, col.b.s),
        }
    };
    Collective { wire, added }
}

/// Collectives around a layer's row-parallel GEMM `row` (out-projection, the MLP's second
/// GEMM): the reduce-scatter (SP) or all-reduce of its output in the forward; with SP the
/// gather of the output gradient before its input-gradient GEMM, already cast to fp8 under
/// the fp8 recipe.
pub fn reduce_out(m: &Machine, d: &Dims, row: &Piece) -> Collective {
    let full = 2.0 * d.tokens * d.h;
    if !d.sp {
        let ar = m.all_reduce(full);
        let fwd = Piece {
            fwd: ar,
            ..Piece::default()
        };
        return Collective {
            wire: fwd,
            added: fwd,
        };
    }
    let rs = m.gather(full);
    let ag = m.gather(m.gathered_bytes_per_element() * d.tokens * d.h);
    let wire = Piece {
        fwd: rs,
        b: ag,
        w: Work::default(),
    };
    let added = if d.tp_overlap {
        Piece {
            fwd: pipeline(m, rs, row.fwd),
            b: ring_exchange(m, ag, row.b),
            w: Work::default(),
        }
    } else {
        wire
    };
    Collective { wire, added }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Catalog;

    fn h100() -> crate::scenario::GpuSpec {
        Catalog::builtin()
            .gpu("h100-80gb")
            .cloned()
            .unwrap_or_else(|| crate::scenario::default_scenario().gpu)
    }

    #[test]
    fn ring_exchange_hides_all_but_what_the_last_chunk_cannot() {
        let gpu = h100();
        let m = Machine::new(&gpu, 4);
        // C 1.0, G 2.0, t 4: the ring finishes its last chunk at 3/4 C... G (t-1)/t = 1.5
        // covers C: nothing exposed.
        assert_eq!(ring_exchange(&m, secs(1.0), secs(2.0)).s, 0.0);
        // C 2.0, G 1.0: max(G, C + G/t) = 2.25, so 1.25 over the GEMM.
        assert!((ring_exchange(&m, secs(2.0), secs(1.0)).s - 1.25).abs() < 1e-12);
    }

    #[test]
    fn pipelined_reduce_scatter_by_hand() {
        let gpu = h100();
        let m = Machine::new(&gpu, 4);
        // A GEMM with no FLOPs is not stretched: G 4.0 -> g 1.0; C 2.0 -> c 0.5:
        // 1 + 3 x 1 + 0.5 = 4.5, so 0.5 added (the last chunk's reduce-scatter).
        assert!((pipeline(&m, secs(2.0), secs(4.0)).s - 0.5).abs() < 1e-12);
        // c > g: 1 + 3 x 2 + 2 = 9 with C 8: 5 added.
        assert!((pipeline(&m, secs(8.0), secs(4.0)).s - 5.0).abs() < 1e-12);
    }

    #[test]
    fn split_gemms_run_at_the_size_of_the_chunks_in_flight() {
        let gpu = h100();
        // GPT-3 175B's first MLP GEMM at t 4: 2048 tokens x 12288 x 12288, 618 GFLOP.
        let bf16 = Machine::new(&gpu, 4);
        let g = bf16.gemm(2048.0, 12288.0, 12288.0);
        let f = g.flops;
        // One chunk at a time: four GEMMs of 155 GFLOP at 0.70 against one at 0.72.
        let want = f / 989e12 * (1.0 / 0.70 - 1.0 / 0.72);
        assert!((bf16.split_gemm_s(g, 4.0, 1.0) - want).abs() < 1e-12);
        // Three in flight: 464 GFLOP, 0.72 like the whole; all four or one part: nothing.
        assert_eq!(bf16.split_gemm_s(g, 4.0, 3.0), 0.0);
        assert_eq!(bf16.split_gemm_s(g, 4.0, 4.0), 0.0);
        assert_eq!(bf16.split_gemm_s(g, 1.0, 1.0), 0.0);
        // fp8's curve falls faster: 0.66 whole, 0.61 for three chunks, 0.51 for one.
        let fp8 = Machine::new(&gpu, 4).with_precision(crate::scenario::Precision::Fp8);
        let three = f / 1979e12 * (4.0 / 3.0 * 0.75 / 0.61 - 1.0 / 0.66);
        assert!((fp8.split_gemm_s(g, 4.0, 3.0) - three).abs() < 1e-12);
        let one = f / 1979e12 * (1.0 / 0.51 - 1.0 / 0.66);
        assert!((fp8.split_gemm_s(g, 4.0, 1.0) - one).abs() < 1e-12);
    }

    #[test]
    fn ring_exchange_chunks_in_flight_follow_their_arrivals() {
        let gpu = h100();
        let m = Machine::new(&gpu, 4).with_precision(crate::scenario::Precision::Fp8);
        let g = m.gemm_fp8(2048.0, 12288.0, 12288.0);
        // Every chunk already there: three in flight, nothing exposed but the split.
        let now = ring_exchange(&m, secs(0.0), g).s;
        assert!((now - m.split_gemm_s(g, 4.0, 3.0)).abs() < 1e-15);
        assert!(now > 0.0);
        // Each step four times a chunk's GEMM: 1.25 in flight, 193 GFLOP a group (0.51).
        let step = g.s;
        let slow = ring_exchange(&m, secs(3.0 * step), g).s;
        let split = g.s + m.split_gemm_s(g, 4.0, 1.25);
        assert!((slow - (3.0 * step + split / 4.0 - g.s)).abs() < 1e-15);
        assert!(
            m.split_gemm_s(g, 4.0, 1.25) > m.split_gemm_s(g, 4.0, 3.0),
            "fewer chunks in flight cost more"
        );
    }

    #[test]
    fn lent_multiprocessors_stretch_the_math() {
        let gpu = h100();
        let m = Machine::new(&gpu, 4);
        let g = m.gemm(8192.0, 8192.0, 8192.0);
        let math = g.flops / (989e12 * gpu.efficiency.matrix_at(g.flops));
        // 132 multiprocessors, 16 lent: the math takes 132/116 as long.
        let want = math.min(g.s) * (132.0 / 116.0 - 1.0);
        assert!((m.sm_margin_s(g, OVERLAP_SMS) - want).abs() < 1e-15);
        assert!(want > 0.1 * g.s);
    }
}
