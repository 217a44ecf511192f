//! Megatron's interleaved 1F1B with `v` chunks per device (= zero-bubble repo
//! `scheduler/vpp.py` = PyTorch `Interleaved1F1B` when `m` is a multiple of `p`;
//! docs/model.md). Stage `c p + d` is chunk `c` of device `d`.
//!
//! Device `d` numbers its `m v` forwards `k = 0..m v`: the k-th runs chunk `(k div p) mod v`
//! on micro-batch `(k div (p v)) p + k mod p`; the k-th backward runs chunk
//! `v - 1 - (k div p) mod v` on the same micro-batch formula. It runs
//! `min(2 (p - d - 1) + (v - 1) p, m v)` warm-up forwards, then alternates one forward and
//! one fused backward, then drains the backwards.

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the interleaved order; `m` must be a multiple of `p` (as in Megatron).
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::Interleaved;
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
    let mut s = Schedule::empty(kind, p, m, v, Placement::Looped);
    for (d, ops) in s.devices.iter_mut().enumerate() {
        let warmup = (2 * (p - d as u32 - 1) + (v - 1) * p).min(total);
        ops.reserve(2 * total as usize);
        ops.extend((0..warmup).map(fwd));
        for k in 0..total - warmup {
            ops.push(fwd(warmup + k));
            ops.push(bwd(k));
        }
        ops.extend((total - warmup..total).map(bwd));
    }
    Ok(s)
}
