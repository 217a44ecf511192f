//! Pipeline schedules: for every device, the ordered list of ops over micro-batches and
//! chunks. One file per schedule family; [`generate`] dispatches on [`ScheduleKind`].
//!
//! Hand-written schedules' order does not depend on durations; the searched ones
//! (zero-bubble heuristics, V-ZB) take the per-op durations and a memory limit in
//! [`ScheduleInput`], as their sources do. [`inflight`] derives, from an op order alone,
//! how many micro-batch-chunks each device holds at its peak.

mod chimera;
mod dualpipe_v;
mod gis;
mod gpipe;
pub mod inflight;
mod interleaved;
mod list_timing;
mod one_f_one_b;
mod search_input;
mod types;
mod v_auto;
mod v_auto_steps;
mod v_greedy;
mod zb_h1;
mod zb_heuristic;
mod zbv;

pub use types::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the per-device op order of `kind` for the given sizes and durations.
///
/// Every schedule needs at least one device and one micro-batch; each generator states its
/// own further requirements in its error.
pub fn generate(kind: ScheduleKind, input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    if input.p == 0 || input.m == 0 {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!(
                "at least one device and one micro-batch (got p={}, m={})",
                input.p, input.m
            ),
        });
    }
    match kind {
        ScheduleKind::Gpipe => gpipe::generate(input),
        ScheduleKind::OneFOneB => one_f_one_b::generate(input),
        ScheduleKind::Interleaved => interleaved::generate(input),
        ScheduleKind::ZbH1 => zb_h1::generate(input),
        ScheduleKind::ZbH2 | ScheduleKind::ZbAuto => zb_heuristic::generate(kind, input),
        ScheduleKind::ZbV => zbv::generate(input),
        ScheduleKind::VHalf | ScheduleKind::VMin => v_greedy::generate(kind, input),
        ScheduleKind::VZb => v_auto::generate(input),
        ScheduleKind::DualPipeV => dualpipe_v::generate(input),
        ScheduleKind::Chimera => chimera::generate(input),
        ScheduleKind::Gis | ScheduleKind::GisOffload => gis::generate(kind, input),
    }
}
