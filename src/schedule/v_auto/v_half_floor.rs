//! V-Half's order as a floor under the search's result, so that `v-zb` is never slower
//! than `v-half` on the same costs.
//!
//! The source's candidates are all built for at least 2p micro-batches and then cut, and
//! it ranks them by the longest device span (first F to last W) rather than the makespan;
//! with fewer than 2p micro-batches and uneven costs its winner can end later than V-Half's
//! order (a member of the same building-block family, at about half the memory). So the
//! search's result is timed against V-Half's: V-Half's order is used when it fits the
//! memory limit and ends strictly earlier, or when no candidate of the search fits.

use crate::schedule::inflight::peak_in_flight;
use crate::schedule::list_timing::time_schedule;
use crate::schedule::v_greedy;
use crate::schedule::{Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// The search's result `searched`, or V-Half's order (labelled `v-zb`) where that fits
/// `max_mem` chunk-activations per device and ends strictly earlier under `input`'s costs,
/// or where the search found nothing within the limit. Any other error of the search
/// (cancelled, unsupported sizes) is returned as it is.
pub(super) fn at_least_v_half(
    input: &ScheduleInput,
    max_mem: i64,
    searched: Result<Schedule, ScheduleError>,
) -> Result<Schedule, ScheduleError> {
    let searched_makespan = match &searched {
        Ok(s) => makespan(s, input),
        Err(ScheduleError::NoFit { .. }) => None,
        Err(_) => return searched,
    };
    let Ok(mut half) = v_greedy::generate(ScheduleKind::VHalf, input) else {
        return searched;
    };
    let fits = peak_in_flight(&half)
        .iter()
        .all(|&peak| i64::from(peak) <= max_mem);
    let Some(half_makespan) = makespan(&half, input).filter(|_| fits) else {
        return searched;
    };
    if searched_makespan.is_some_and(|t| t <= half_makespan) {
        return searched;
    }
    half.kind = ScheduleKind::VZb;
    Ok(half)
}

/// The time the last op of `s` ends under `input`'s costs, or `None` if the order
/// deadlocks.
fn makespan(s: &Schedule, input: &ScheduleInput) -> Option<f64> {
    let times = time_schedule(s, input).ok()?;
    Some(times.end.iter().flatten().copied().fold(0.0, f64::max))
}
