//! GPipe: every device runs all its forwards, then all its fused backwards, both in ascending
//! micro-batch order (PyTorch `ScheduleGPipe._get_pipeline_order`, docs/model.md).
//! Every device holds all `m` micro-batches at its peak.

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates GPipe's per-device op order (one chunk per device, fused backward).
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let (p, m) = (input.p, input.m);
    let mut s = Schedule::empty(ScheduleKind::Gpipe, p, m, 1, Placement::Single);
    for ops in &mut s.devices {
        ops.reserve(2 * m as usize);
        ops.extend((0..m).map(|mb| Op::new(OpKind::F, mb, 0)));
        ops.extend((0..m).map(|mb| Op::new(OpKind::BW, mb, 0)));
    }
    Ok(s)
}
