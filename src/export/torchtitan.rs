//! torch.distributed.pipelining's schedule CSV in its `compute_only` form (what
//! `_PipelineScheduleRuntime._load_csv` reads and torchtitan's `pipeline_parallel_schedule_csv`
//! points at): one row per rank, its actions in execution order, each
//! `{stage}{F|I|W|B}{microbatch}`: `F` forward, `I` input-gradient backward, `W`
//! weight-gradient backward, `B` fused backward. A schedule that splits the backward writes
//! I and W, never B (a fused backward it runs here and there, as ZB-H1's first stage does,
//! becomes I followed by W). Stages are global virtual stages: looped `chunk x p + rank`, V-shape
//! `rank` for chunk 0 and `2p - 1 - rank` for chunk 1 (torch's `style="v"`); micro-batches
//! count from 0 as torch does.
//!
//! Refused: Chimera (a stage lives on two ranks, one replica per direction; torch places
//! each stage on one rank) and gis-offload (its host copies have no torch action; export
//! `gis` for the same compute order).

use crate::schedule::{OpKind, Schedule, ScheduleKind};

/// Why a schedule has no torch equivalent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("torchtitan export of schedule {schedule}: {reason}")]
pub struct Unsupported {
    /// The schedule asked for.
    pub schedule: ScheduleKind,
    /// Why torch cannot run it, and what to export instead.
    pub reason: &'static str,
}

/// Whether `kind` has a torch.distributed.pipelining equivalent; the reason when not.
pub fn supported(kind: ScheduleKind) -> Result<(), Unsupported> {
    let reason = match kind {
        ScheduleKind::Chimera => {
            "chimera replicates every stage on two ranks (one per direction); torch places each \
             stage on exactly one rank. Allowed: every other schedule except gis-offload, \
             po-h and po-f"
        }
        ScheduleKind::GisOffload => {
            "gis-offload's host copies have no torch action; export --schedule gis for the same \
             compute order"
        }
        ScheduleKind::PoH | ScheduleKind::PoF => {
            "PipeOffload's host copies have no torch action; export --schedule gis with \
             --group-size set to the same group for the same compute order"
        }
        _ => return Ok(()),
    };
    Err(Unsupported {
        schedule: kind,
        reason,
    })
}

/// The torch action letter of an op kind.
pub fn action_letter(kind: OpKind) -> char {
    match kind {
        OpKind::F => 'F',
        OpKind::B => 'I',
        OpKind::W => 'W',
        OpKind::BW => 'B',
    }
}

/// The `compute_only` CSV of `schedule`, one line per rank.
pub fn export(schedule: &Schedule) -> Result<String, Unsupported> {
    supported(schedule.kind)?;
    let split = schedule.kind.splits_backward();
    let mut out = String::with_capacity(schedule.op_count() * 8);
    for (rank, ops) in schedule.devices.iter().enumerate() {
        let mut cells: Vec<String> = Vec::with_capacity(ops.len() * 2);
        for op in ops {
            let stage = schedule.stage_of(rank as u32, op.chunk, op.micro_batch);
            let mb = op.micro_batch;
            if split && op.kind == OpKind::BW {
                // A split schedule never writes B: its fused backward is I then W.
                cells.push(format!("{stage}I{mb}"));
                cells.push(format!("{stage}W{mb}"));
            } else {
                cells.push(format!("{stage}{}{mb}", action_letter(op.kind)));
            }
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    Ok(out)
}
