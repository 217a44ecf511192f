//! Input checks and helpers shared by the searched schedules (zero-bubble heuristics, ZB-V,
//! V-Half/V-Min, V-ZB, GIS).

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Checks the sizes every searched schedule needs: `p >= 1`, `m >= 1`, and cost grids with
/// one finite, non-negative entry per device (chunks beyond a row's length reuse its first).
pub(crate) fn check_basic(kind: ScheduleKind, input: &ScheduleInput) -> Result<(), ScheduleError> {
    let unsupported = |requirement: String| ScheduleError::Unsupported {
        schedule: kind,
        requirement,
    };
    if input.p == 0 {
        return Err(unsupported("p >= 1 (got p=0)".into()));
    }
    if input.m == 0 {
        return Err(unsupported(format!("m >= 1 (got m=0, p={})", input.p)));
    }
    for (name, grid) in [("f", &input.f), ("b", &input.b), ("w", &input.w)] {
        if grid.len() < input.p as usize || grid.iter().any(Vec::is_empty) {
            return Err(unsupported(format!(
                "a {name} cost for each of the {} devices (got {} rows)",
                input.p,
                grid.len()
            )));
        }
        if let Some(x) = grid.iter().flatten().find(|x| !x.is_finite() || **x < 0.0) {
            return Err(unsupported(format!(
                "finite non-negative {name} costs (got {x})"
            )));
        }
    }
    if !input.comm.is_finite() || input.comm < 0.0 {
        return Err(unsupported(format!(
            "a finite non-negative comm time (got {})",
            input.comm
        )));
    }
    Ok(())
}

/// The memory limit in chunk-activations: `input.mem_limit` if given (it must be finite),
/// else `default`.
pub(crate) fn mem_limit(
    kind: ScheduleKind,
    input: &ScheduleInput,
    default: f64,
) -> Result<f64, ScheduleError> {
    match input.mem_limit {
        None => Ok(default),
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!("a finite mem_limit (got {x})"),
        }),
    }
}

/// Cost of one op of `kind` on `device`, chunk `chunk` (a row shorter than `chunk + 1`
/// reuses its first entry).
pub(crate) fn cost(grid: &[Vec<f64>], device: usize, chunk: usize) -> f64 {
    grid.get(device)
        .and_then(|row| row.get(chunk).or_else(|| row.first()))
        .copied()
        .unwrap_or(0.0)
}

/// Builds an op.
pub(crate) fn op(kind: OpKind, micro_batch: usize, chunk: u32) -> Op {
    Op {
        kind,
        micro_batch: micro_batch as u32,
        chunk,
    }
}

/// Wraps per-device op lists into a [`Schedule`] with nothing offloaded.
pub(crate) fn schedule(
    kind: ScheduleKind,
    input: &ScheduleInput,
    v: u32,
    placement: Placement,
    devices: Vec<Vec<Op>>,
) -> Schedule {
    Schedule {
        kind,
        p: input.p,
        m: input.m,
        v,
        placement,
        offloaded: vec![vec![false; v as usize]; input.p as usize],
        pairs: vec![Vec::new(); input.p as usize],
        devices,
        facts: Default::default(),
    }
}

/// The V-shape requirement shared by ZB-V, V-Half, V-Min and V-ZB: two devices at least.
pub(crate) fn check_v_shape(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<(), ScheduleError> {
    if input.p < 2 {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!("p >= 2 devices for a V-shape (got p={})", input.p),
        });
    }
    Ok(())
}
