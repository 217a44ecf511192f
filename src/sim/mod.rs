//! Event simulation of a schedule with per-op durations: every op gets a start and an end,
//! every device a memory curve over time, and the run its metrics.
//!
//! Timing model: `reference/schedules.md` section 0 (list scheduling along the global stage
//! chain, transfers only between different devices); memory model: DESIGN.md section 3.

mod types;

pub use types::{
    ChunkCosts, DeviceMetrics, Lane, MemoryCurve, SimCosts, SimError, Simulation, Span, SpanKind,
    Timeline,
};

use crate::schedule::Schedule;

/// Simulates `schedule` with `costs`.
pub fn simulate(schedule: &Schedule, costs: &SimCosts) -> Result<Simulation, SimError> {
    let _ = (schedule, costs);
    Err(SimError::Deadlock {
        device: 0,
        op: "not implemented yet".into(),
    })
}
