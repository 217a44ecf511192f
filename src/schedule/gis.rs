//! Schedule generator (to be written).

use super::{Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the schedule's per-device op order.
pub(crate) fn generate(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<Schedule, ScheduleError> {
    let _ = input;
    Err(ScheduleError::Unsupported {
        schedule: kind,
        requirement: "an implementation".into(),
    })
}
