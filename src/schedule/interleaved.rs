//! Schedule generator (to be written).

use super::{Schedule, ScheduleError, ScheduleInput};

/// Generates the schedule's per-device op order.
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let _ = input;
    Err(ScheduleError::Unsupported {
        schedule: super::ScheduleKind::Gpipe,
        requirement: "an implementation".into(),
    })
}
