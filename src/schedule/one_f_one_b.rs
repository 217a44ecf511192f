//! 1F1B (PipeDream-flush / DAPPLE), as in the zero-bubble repo's `basic1f1b.py` and Megatron
//! (docs/model.md): device `d` runs `min(p - d - 1, m)` warm-up forwards, then
//! alternates one forward and one fused backward, then drains the remaining backwards.
//! Device `d` holds `min(p - d, m)` micro-batches at its peak.

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates 1F1B's per-device op order (one chunk per device, fused backward).
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let (p, m) = (input.p, input.m);
    let mut s = Schedule::empty(ScheduleKind::OneFOneB, p, m, 1, Placement::Single);
    for (d, ops) in s.devices.iter_mut().enumerate() {
        let warmup = (p - d as u32 - 1).min(m);
        ops.reserve(2 * m as usize);
        ops.extend((0..warmup).map(|mb| Op::new(OpKind::F, mb, 0)));
        for i in 0..m - warmup {
            ops.push(Op::new(OpKind::F, warmup + i, 0));
            ops.push(Op::new(OpKind::BW, i, 0));
        }
        ops.extend((m - warmup..m).map(|mb| Op::new(OpKind::BW, mb, 0)));
    }
    Ok(s)
}
