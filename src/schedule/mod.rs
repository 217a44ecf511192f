//! Pipeline schedules: for every device, the ordered list of ops over micro-batches and
//! chunks. One file per schedule family; [`generate`] dispatches on [`ScheduleKind`].
//!
//! Hand-written schedules' order does not depend on durations; the searched ones
//! (zero-bubble heuristics, V-ZB) take the per-op durations and a memory limit in
//! [`ScheduleInput`], as their sources do.

mod types;

pub use types::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the per-device op order of `kind` for the given sizes and durations.
pub fn generate(kind: ScheduleKind, input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    Err(ScheduleError::Unsupported {
        schedule: kind,
        requirement: format!("not implemented yet (p={})", input.p),
    })
}
