//! Megatron's interleaved 1F1B with `v` chunks per device (= zero-bubble repo
//! `scheduler/vpp.py` = PyTorch `Interleaved1F1B` when `m` is a multiple of `p`;
//! docs/model.md). Stage `c p + d` is chunk `c` of device `d`.
//!
//! Device `d` numbers its `m v` forwards `k = 0..m v`: the k-th runs chunk `(k div p) mod v`
//! on micro-batch `(k div (p v)) p + k mod p`; the k-th backward runs chunk
//! `v - 1 - (k div p) mod v` on the same micro-batch formula. It runs
//! `min(2 (p - d - 1) + (v - 1) p, m v)` warm-up forwards, then alternates one forward and
//! one fused backward, then drains the backwards.
//!
//! Megatron's combined 1F1B ([`generate_combined`], `--overlap-moe-expert-parallel-comm`):
//! the same order with one more warm-up forward, and every steady-state forward run as one
//! overlapped pair with the backward that follows it, so that the MoE all-to-alls of each
//! half hide under the other half's compute (docs/model.md, "Overlapped all-to-alls").

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the interleaved order; `m` must be a multiple of `p` (as in Megatron).
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    build(ScheduleKind::Interleaved, input, false)
}

/// Megatron-Core's combined 1F1B (`combined_1f1b.py`, chosen by
/// `--overlap-moe-expert-parallel-comm`) for `kind`: `interleaved` as above with one extra
/// warm-up forward on every device (`get_pp_rank_microbatches` adds it so that a steady-state
/// forward never feeds the backward it is paired with), each steady-state forward `k + warmup`
/// paired with backward `k` (`forward_backward_helper_wrapper` hands both to
/// `combined_forward_backward_step`); `1f1b` only on one device (Megatron asserts a virtual
/// pipeline when `p > 1`), where it is `combined_1f1b_schedule_for_no_pipelining`: the first
/// forward alone, then forward `i + 1` paired with backward `i`, then the last backward alone.
/// Warm-up and cool-down ops are never paired.
pub(crate) fn generate_combined(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<Schedule, ScheduleError> {
    match kind {
        ScheduleKind::Interleaved => build(kind, input, true),
        ScheduleKind::OneFOneB if input.p == 1 => build(kind, input, true),
        _ => Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: "interleaved, or one device, for Megatron's combined 1F1B (the \
                          all-to-all overlap needs a virtual pipeline when p > 1)"
                .into(),
        }),
    }
}

/// The interleaved order of `kind` (`v` 1 for `1f1b`), with one more warm-up forward and
/// its steady-state forwards paired with their backwards when `combined`.
fn build(
    kind: ScheduleKind,
    input: &ScheduleInput,
    combined: bool,
) -> Result<Schedule, ScheduleError> {
    let (p, m) = (input.p, input.m);
    let v = kind.chunks(input.v);
    if m % p != 0 {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!("m to be a multiple of p (got p={p}, m={m})"),
        });
    }
    let total = m * v;
    let mb_of = |k: u32| (k / (p * v)) * p + k % p;
    let fwd = |k: u32| Op::new(OpKind::F, mb_of(k), (k / p) % v);
    let bwd = |k: u32| Op::new(OpKind::BW, mb_of(k), v - 1 - (k / p) % v);
    let placement = if v > 1 {
        Placement::Looped
    } else {
        Placement::Single
    };
    let mut s = Schedule::empty(kind, p, m, v, placement);
    for (d, (ops, pairs)) in s.devices.iter_mut().zip(&mut s.pairs).enumerate() {
        let extra = u32::from(combined);
        let warmup = (2 * (p - d as u32 - 1) + (v - 1) * p + extra).min(total);
        ops.reserve(2 * total as usize);
        ops.extend((0..warmup).map(fwd));
        for k in 0..total - warmup {
            if combined {
                pairs.push(ops.len() as u32);
            }
            ops.push(fwd(warmup + k));
            ops.push(bwd(k));
        }
        ops.extend((total - warmup..total).map(bwd));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn input(p: u32, m: u32, v: u32) -> ScheduleInput {
        ScheduleInput::uniform(p, m, v, 1.0, 2.0, 0.0, 0.0)
    }

    #[test]
    fn combined_pairs_every_steady_forward_with_the_next_backward_after_one_more_warm_up() {
        for (p, m, v) in [(2, 4, 2), (4, 8, 2), (4, 4, 3), (3, 9, 2), (2, 2, 4)] {
            let plain = generate(&input(p, m, v)).unwrap();
            let comb = generate_combined(ScheduleKind::Interleaved, &input(p, m, v)).unwrap();
            let total = (m * v) as usize;
            for d in 0..p as usize {
                let (a, b) = (&plain.devices[d], &comb.devices[d]);
                // The same ops; each device's forwards and backwards keep their order.
                assert_eq!(a.len(), b.len());
                let of = |ops: &[Op], k: OpKind| -> Vec<Op> {
                    ops.iter().copied().filter(|o| o.kind == k).collect()
                };
                assert_eq!(of(a, OpKind::F), of(b, OpKind::F));
                assert_eq!(of(a, OpKind::BW), of(b, OpKind::BW));
                // One more warm-up forward (all of them when they are fewer than that):
                // the forwards before the first backward, less the first steady one.
                let warm_plain = (2 * (p - d as u32 - 1) + (v - 1) * p).min(m * v) as usize;
                let warm = (warm_plain + 1).min(total);
                let leading = |ops: &[Op]| ops.iter().take_while(|o| o.kind == OpKind::F).count();
                assert_eq!(leading(a), (warm_plain + 1).min(total));
                assert_eq!(leading(b), (warm + 1).min(total));
                // Every steady-state forward opens a pair with the backward after it.
                let pairs = &comb.pairs[d];
                assert_eq!(pairs.len(), total - warm);
                for (j, &i) in pairs.iter().enumerate() {
                    let i = i as usize;
                    assert_eq!(i, warm + 2 * j);
                    assert_eq!(b[i].kind, OpKind::F);
                    assert_eq!(b[i + 1].kind, OpKind::BW);
                    // The two halves are independent: never the same micro-batch-chunk,
                    // and the backward's own forward ran before the pair.
                    let (f, bw) = (b[i], b[i + 1]);
                    assert!((f.micro_batch, f.chunk) != (bw.micro_batch, bw.chunk));
                    let own = b.iter().position(|o| {
                        o.kind == OpKind::F
                            && o.micro_batch == bw.micro_batch
                            && o.chunk == bw.chunk
                    });
                    assert!(own.unwrap() < i);
                }
            }
            assert!(plain.pairs.iter().all(Vec::is_empty));
            // Memory: the extra warm-up forward holds what the plain order holds at its
            // first steady forward, and a pair's backward frees as its forward fills, so
            // the peak in flight does not grow (it would by one per device if the pair's
            // forward counted before its backward).
            assert_eq!(comb.peak_in_flight(), plain.peak_in_flight());
            assert_eq!(comb.live_vectors(), plain.live_vectors());
        }
    }

    #[test]
    fn one_device_is_megatrons_no_pipelining_combined_schedule() {
        // F0, (F1 B0), (F2 B1), (F3 B2), B3: the first forward and the last backward alone.
        let s = generate_combined(ScheduleKind::OneFOneB, &input(1, 4, 1)).unwrap();
        let ops: Vec<(OpKind, u32)> = s.devices[0]
            .iter()
            .map(|o| (o.kind, o.micro_batch))
            .collect();
        use OpKind::{BW, F};
        assert_eq!(
            ops,
            [
                (F, 0),
                (F, 1),
                (BW, 0),
                (F, 2),
                (BW, 1),
                (F, 3),
                (BW, 2),
                (BW, 3)
            ]
        );
        assert_eq!(s.pairs[0], [1, 3, 5]);
        assert_eq!(s.kind, ScheduleKind::OneFOneB);
        // Megatron refuses the overlap for a plain 1F1B pipeline, and so does this.
        assert!(generate_combined(ScheduleKind::OneFOneB, &input(2, 4, 1)).is_err());
        assert!(generate_combined(ScheduleKind::Gpipe, &input(1, 4, 1)).is_err());
    }
}
