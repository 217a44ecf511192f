//! Notes on an edit that changes nothing the schedule runs (the chunks of a schedule that
//! runs a fixed number of them), for the status line.

use crate::scenario::Scenario;
use crate::schedule::ScheduleKind;

use super::fields::Field;

/// Why an edit of `field` changes nothing the schedule runs, if it does not: the chunks of a
/// schedule that runs a fixed number of them or holds two copies of its stages (the value is
/// kept for the schedules that take it, and the status line says so).
pub fn unused_note(sc: &Scenario, field: Field) -> Option<String> {
    let kind = sc.plan.schedule;
    let (asked, used) = (sc.parallel.chunks, kind.chunks(sc.parallel.chunks));
    if field != Field::Chunks || (asked == used && !kind.replicates_stages()) {
        return None;
    }
    Some(if kind.replicates_stages() {
        format!(
            "chunks {asked} changes nothing here: {kind} holds two copies of the p stages per \
             device (chunks sets {})",
            ScheduleKind::names_where(ScheduleKind::takes_chunks)
        )
    } else if kind.takes_chunks() {
        format!("chunks {asked}: {kind} runs at least 2 chunks per device, so it runs {used}")
    } else {
        format!(
            "chunks {asked} changes nothing here: {kind} always runs {used} per device \
             (chunks sets {})",
            ScheduleKind::names_where(ScheduleKind::takes_chunks)
        )
    })
}
