//! Pipeline schedules: for every device, the ordered list of ops over micro-batches and
//! chunks. One file per schedule family; [`generate`] dispatches on [`ScheduleKind`].
//!
//! Hand-written schedules' order does not depend on durations; the searched ones
//! (zero-bubble heuristics, V-ZB) take the per-op durations and a memory limit in
//! [`ScheduleInput`], as their sources do. `inflight` derives, from an op order alone,
//! how many micro-batch-chunks each device holds at its peak.

mod chimera;
mod dual_steps;
mod dualpipe;
mod dualpipe_v;
mod gis;
mod gpipe;
mod inflight;
mod interleaved;
mod kind;
mod list_timing;
mod one_f_one_b;
mod order_facts;
mod packed;
pub(crate) mod period;
mod po;
mod search_input;
mod types;
mod v_auto;
mod v_greedy;
mod zb_h1;
mod zb_heuristic;
mod zbv;
mod zbv_rerun;
mod zbv_snap;

use crate::cancel::Cancel;

pub use inflight::InFlight;
pub(crate) use packed::PackedSchedule;
pub(crate) use po::offloaded_chunks as po_offloaded_chunks;
pub use types::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Deterministic draws for the schedule tests' random cases: from `seed` (xorshift), each
/// call gives a number below its argument (0 for 0).
#[cfg(test)]
pub(crate) fn test_draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    }
}

/// Generates the per-device op order of `kind` for the given sizes and durations.
///
/// Every schedule needs at least one device and one micro-batch, and at most
/// [`MAX_CELLS`] (stage, micro-batch) cells ([`check_size`]); each generator states its own
/// further requirements in its error.
pub fn generate(kind: ScheduleKind, input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    generate_cancellable(kind, input, &Cancel::never())
}

/// [`generate`] that gives up with [`ScheduleError::Cancelled`] once `cancel` is set (checked
/// before starting and between the candidates of the slow searches).
pub fn generate_cancellable(
    kind: ScheduleKind,
    input: &ScheduleInput,
    cancel: &Cancel,
) -> Result<Schedule, ScheduleError> {
    cancel.check()?;
    check_size(kind, input.p, input.m, input.v)?;
    match kind {
        ScheduleKind::Gpipe => gpipe::generate(input),
        ScheduleKind::OneFOneB | ScheduleKind::Interleaved
            if input.combined_1f1b && kind.pairs_under_a2a_overlap(input.p) =>
        {
            interleaved::generate_combined(kind, input)
        }
        ScheduleKind::OneFOneB => one_f_one_b::generate(input),
        ScheduleKind::Interleaved => interleaved::generate(input),
        ScheduleKind::ZbH1 => zb_h1::generate(input),
        ScheduleKind::ZbH2 | ScheduleKind::ZbAuto => zb_heuristic::generate(kind, input),
        ScheduleKind::ZbV => zbv::generate(input),
        ScheduleKind::VHalf | ScheduleKind::VMin => v_greedy::generate(kind, input),
        ScheduleKind::VZb => v_auto::generate(input, cancel),
        ScheduleKind::DualPipeV => dualpipe_v::generate(input),
        ScheduleKind::DualPipe => dualpipe::generate(input),
        ScheduleKind::Chimera => chimera::generate(input),
        ScheduleKind::Gis | ScheduleKind::GisOffload => gis::generate(kind, input),
        ScheduleKind::PoH | ScheduleKind::PoF => po::generate(kind, input),
    }
}

/// Largest `p x m x chunks` a schedule may have (131,072 micro-batch-chunks: p 8 with m
/// 16,384, p 64 with m 2,048, p 128 with two chunks and m 512). A solve keeps every op of the
/// simulation and its memory curves, several hundred bytes a micro-batch-chunk, and a
/// comparison holds one per strategy: at this limit a plan takes about 100 MB and a second,
/// a nine-strategy comparison under 1 GB (docs/model.md, "Sizes"); four times more took 3.4 GB.
pub const MAX_CELLS: u64 = 1 << 17;

/// Most devices a schedule may have: generation and simulation then finish within seconds
/// and a few hundred MB for every schedule (at p 65536 a schedule's tables alone would take
/// tens of GB).
pub const MAX_STAGES: u32 = 1024;

/// Largest `p x p x m x chunks` for `v-half` and `v-min`, whose greedy search grows with
/// p squared times m (at this limit it takes seconds: benches/search.rs).
pub const MAX_V_GREEDY_WORK: u64 = 1 << 26;

/// Largest `p x p x max(m, 2p)` for `v-zb`, whose search time grows with this product: it
/// tries a few hundred building blocks and, for each, orders about 6 max(m, 2p) slots on
/// each of the p devices (fewer than 2p micro-batches are ordered as 2p, then cut). The
/// limit admits the V-shape paper's largest pure-pipeline run (p 40 with m 160) and p up to
/// 50 (p 50 with m up to 104, p 32 with m up to 256); what one search costs there is
/// measured in `benches/search.rs` and docs/model.md.
pub const MAX_V_ZB_WORK: u64 = 1 << 18;

/// Checks that `p` devices, `m` micro-batches and the chunks `kind` runs with for a request
/// of `v` are at least one each, `p` at most [`MAX_STAGES`], at most [`MAX_CELLS`] cells
/// together, and within the search limits of the slow schedules ([`MAX_V_GREEDY_WORK`],
/// [`MAX_V_ZB_WORK`]), so that what is accepted finishes in seconds.
/// Call it before allocating per-(device, chunk) inputs from user-given sizes.
pub fn check_size(kind: ScheduleKind, p: u32, m: u32, v: u32) -> Result<(), ScheduleError> {
    let chunks = kind.chunks(v);
    let cells = u64::from(p) * u64::from(m) * u64::from(chunks);
    let refuse = |requirement: String| {
        Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement,
        })
    };
    if p == 0 || m == 0 {
        return refuse(format!(
            "at least one device and one micro-batch (got p={p}, m={m})"
        ));
    }
    if p > MAX_STAGES {
        return refuse(format!("at most {MAX_STAGES} devices (got p={p})"));
    }
    if cells > MAX_CELLS {
        return refuse(format!(
            "p x m x chunks at most {MAX_CELLS} micro-batch-chunks (MAX_CELLS: a solve keeps \
             every op, so this keeps a plan within seconds and a few hundred MB; got {p} x \
             {m} x {chunks} = {cells}): fewer micro-batches or stages"
        ));
    }
    let work = u64::from(p) * cells;
    let v_zb_slots = u64::from(m.max(p.saturating_mul(2)));
    let v_zb_work = u64::from(p) * u64::from(p) * v_zb_slots;
    match kind {
        ScheduleKind::VHalf | ScheduleKind::VMin if work > MAX_V_GREEDY_WORK => refuse(format!(
            "p x p x m x chunks at most {MAX_V_GREEDY_WORK} for its search to finish in \
             seconds (got {p} x {p} x {m} x {chunks} = {work})"
        )),
        ScheduleKind::VZb if v_zb_work > MAX_V_ZB_WORK => refuse(format!(
            "p x p x max(m, 2p) at most {MAX_V_ZB_WORK} for its search to finish in seconds \
             (got {p} x {p} x {v_zb_slots} = {v_zb_work})"
        )),
        _ => Ok(()),
    }
}
