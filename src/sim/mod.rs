//! Event simulation of a schedule with per-op durations: every op gets a start and an end,
//! every device a memory curve over time, and the run its metrics; plus closed-form
//! estimates ([`estimate`]) to compare against.
//!
//! Timing model: docs/model.md (list scheduling along the global stage
//! chain, transfers only between different devices); memory model: docs/model.md.
//!
//! Details the model fixes:
//! - a recomputation `R` (when `r_s > 0`) is its own compute span right before the B/BW that
//!   needs it, started once the incoming gradient is there; an overlapped one
//!   (`r_overlap_s`, Lynx; all of `r_s` too with [`SimCosts::overlap_recompute`]) starts as
//!   soon as the device is free after the previous op, overlapping the wait for the gradient
//!   (and so the pipeline transfer that brings it), and hides under the tensor-parallel
//!   collectives of its backward (`tp_b_s`, plus `tp_w_s` when B and W are fused): its span
//!   is only what exceeds them. [`backward_waits`] reports each backward's window;
//! - offloaded bytes (`offload_bytes > 0`) never delay compute (PipeOffload's rule): the
//!   copies are fitted around the compute timeline afterwards (the `copies` module). A
//!   micro-batch-chunk goes to the host only when its forward-to-backward gap holds the
//!   round trip and the device's single copy lane has a slot for the D2H after the F and for
//!   the H2D before the recomputation or backward that reads the bytes; otherwise it stays
//!   resident. The bytes leave when the D2H ends and come back when the H2D starts; copy
//!   time is `offload_bytes / host_bytes_per_s` (zero when the bandwidth is not positive and
//!   finite);
//! - memory per device: `act_bytes` at F start, `b_free_bytes` freed at B end, the rest at W
//!   end, everything at BW end (frees before allocations at equal times); the peak memory is
//!   static + peak activations + the transient;
//! - a SEND span (producer's send lane) covers each transfer between two devices when the
//!   transfer time is positive; sends do not queue behind each other. With
//!   [`SimCosts::blocking_sends`] the sender waits for its send, and on Megatron's own
//!   schedules the send also waits for its receiver (the `transfers` module); an interleaved
//!   steady round's one exchange carries two tensors, so its forward output takes both
//!   transfer times.

mod abstract_run;
mod chunk_sync;
pub mod collectives;
mod copies;
mod engine;
pub mod estimate;
pub mod job;
mod metrics;
mod offload_checks;
mod offload_pass;
mod op_costs;
mod paired;
mod transfers;
mod types;

#[cfg(test)]
#[path = "figures_tests.rs"]
mod figures_tests;
mod validate;

pub use abstract_run::{AbstractOutcome, AbstractRun, AbstractRunError};
pub use engine::a2a_hidden_s;
pub use types::{
    BackwardWait, ChunkCosts, DeviceMetrics, Lane, MemoryCurve, MoeLayerSplit, SimCosts, SimError,
    Simulation, Span, SpanKind, Timeline,
};

use crate::schedule::Schedule;

/// Simulates `schedule` with `costs`.
///
/// Errors: [`SimError::Shape`] when the costs do not cover the schedule's devices and chunks,
/// a duration is negative or not finite, or the schedule does not hold exactly one F and one
/// backward per (stage, micro-batch); [`SimError::TooLong`] when the durations are finite
/// but their sum is not; [`SimError::Deadlock`] when the order waits on an op that can
/// never run.
pub fn simulate(schedule: &Schedule, costs: &SimCosts) -> Result<Simulation, SimError> {
    validate::check(schedule, costs)?;
    let runs = engine::run(schedule, costs, false)?;
    Ok(metrics::finish(schedule, costs, runs))
}

/// [`simulate`] for callers that need the figures only (a sweep ranking configurations):
/// where the order repeats itself in a steady state, the run simulates a few periods,
/// proves that they repeat, and jumps over the rest, so its cost hardly grows with the
/// micro-batch count. The makespan, every device's busy time, bubble rate, peaks and
/// in-flight count, MFU and HFU, and (through [`Simulation::elided`]) the job's breakdown
/// are those of [`simulate`], the peaks exactly and the times up to rounding (well within
/// 1e-9 relative); the timeline, memory curves and backward waits leave out the periods it
/// jumped over. It runs in full, and returns exactly what [`simulate`] returns, when it
/// cannot prove the repetition: blocking sends, host copies, overlapped pairs, Chimera,
/// too few micro-batches.
///
/// Errors: as [`simulate`].
pub fn simulate_figures(schedule: &Schedule, costs: &SimCosts) -> Result<Simulation, SimError> {
    validate::check(schedule, costs)?;
    let runs = engine::run(schedule, costs, true)?;
    Ok(metrics::finish(schedule, costs, runs))
}

/// The window before every backward of every device (in each device's op order) when
/// `schedule` runs with `costs`: how long the compute lane waits for the gradient, and how
/// much the recomputation delays the backward. What Lynx's planner places recomputation in.
///
/// Errors: as [`simulate`].
pub fn backward_waits(
    schedule: &Schedule,
    costs: &SimCosts,
) -> Result<Vec<Vec<BackwardWait>>, SimError> {
    validate::check(schedule, costs)?;
    let runs = engine::run(schedule, costs, false)?;
    Ok(runs.into_iter().map(|r| r.waits).collect())
}
