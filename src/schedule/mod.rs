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
mod kind;
mod list_timing;
mod one_f_one_b;
mod search_input;
mod types;
mod v_auto;
mod v_auto_finish;
mod v_auto_steps;
mod v_greedy;
mod zb_h1;
mod zb_heuristic;
mod zbv;

pub use types::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates the per-device op order of `kind` for the given sizes and durations.
///
/// Every schedule needs at least one device and one micro-batch, and at most
/// [`MAX_CELLS`] (stage, micro-batch) cells ([`check_size`]); each generator states its own
/// further requirements in its error.
pub fn generate(kind: ScheduleKind, input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    check_size(kind, input.p, input.m, input.v)?;
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

/// Largest `p x m x chunks` a schedule may have (about 4 million micro-batch-chunks).
pub const MAX_CELLS: u64 = 1 << 22;

/// Checks that `p` devices, `m` micro-batches and the chunks `kind` runs with for a request
/// of `v` are at least one each and at most [`MAX_CELLS`] cells together. Call it before
/// allocating per-(device, chunk) inputs from user-given sizes.
pub fn check_size(kind: ScheduleKind, p: u32, m: u32, v: u32) -> Result<(), ScheduleError> {
    let chunks = kind.chunks(v);
    let cells = u64::from(p) * u64::from(m) * u64::from(chunks);
    if p == 0 || m == 0 || cells > MAX_CELLS {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!(
                "at least one device and one micro-batch and at most {MAX_CELLS} \
                 micro-batch-chunks in all (got p={p}, m={m}, chunks={chunks})"
            ),
        });
    }
    Ok(())
}
