//! A small list-scheduling timer for the searched schedules (docs/model.md
//! section 0): each device runs its ops in order, an op starts when the device is free and
//! its dependency along the global stage chain has ended (plus `comm` when that dependency
//! ran on another device). The real simulator lives in `crate::sim`; this one exists so the
//! searches can score candidate orders without depending on it.

use super::search_input::cost;
use super::{OpKind, Schedule, ScheduleInput};

/// Start and end time of every op of a schedule, indexed like `Schedule::devices`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpTimes {
    /// `start[device][position]`.
    pub start: Vec<Vec<f64>>,
    /// `end[device][position]`.
    pub end: Vec<Vec<f64>>,
}

/// Why an order could not be timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimingError {
    /// An op references a micro-batch, chunk or device outside the schedule's sizes.
    OutOfRange,
    /// No device can make progress: the order waits on itself.
    Deadlock,
}

/// Duration of `kind` on (`device`, `chunk`) under `input`'s costs.
pub(crate) fn cost_of(input: &ScheduleInput, kind: OpKind, device: usize, chunk: usize) -> f64 {
    match kind {
        OpKind::F => cost(&input.f, device, chunk),
        OpKind::B => cost(&input.b, device, chunk),
        OpKind::W => cost(&input.w, device, chunk),
        OpKind::BW => cost(&input.b, device, chunk) + cost(&input.w, device, chunk),
    }
}

/// Times `schedule` with the durations of `input` by list scheduling.
pub(crate) fn time_schedule(
    schedule: &Schedule,
    input: &ScheduleInput,
) -> Result<OpTimes, TimingError> {
    let p = schedule.p as usize;
    let m = schedule.m as usize;
    let stages = schedule.stages() as usize;
    // Flat end-time tables per (stage, micro-batch): forward and input-gradient backward
    // (a fused BW counts as the backward); NaN while not done.
    let mut f_end = vec![f64::NAN; stages * m];
    let mut b_end = vec![f64::NAN; stages * m];
    let mut b_dev = vec![usize::MAX; stages * m];
    let mut f_dev = vec![usize::MAX; stages * m];
    let mut start: Vec<Vec<f64>> = schedule
        .devices
        .iter()
        .map(|d| vec![0.0; d.len()])
        .collect();
    let mut end = start.clone();
    let mut pos = vec![0usize; p];
    let mut free = vec![0.0f64; p];
    let total: usize = schedule.devices.iter().map(Vec::len).sum();
    let mut done = 0usize;
    while done < total {
        let mut progressed = false;
        for d in 0..p.min(schedule.devices.len()) {
            let ops = &schedule.devices[d];
            while pos[d] < ops.len() {
                let op = ops[pos[d]];
                let mb = op.micro_batch as usize;
                if mb >= m || op.chunk >= schedule.v {
                    return Err(TimingError::OutOfRange);
                }
                let s = schedule.stage_of(d as u32, op.chunk, op.micro_batch) as usize;
                if s >= stages {
                    return Err(TimingError::OutOfRange);
                }
                let idx = s * m + mb;
                // (dependency end, device it ran on)
                let (dep_end, dep_dev) = match op.kind {
                    OpKind::F if s == 0 => (0.0, d),
                    OpKind::F => (f_end[idx - m], f_dev[idx - m]),
                    OpKind::B | OpKind::BW if s + 1 == stages => (f_end[idx], f_dev[idx]),
                    OpKind::B | OpKind::BW => (b_end[idx + m], b_dev[idx + m]),
                    OpKind::W => (b_end[idx], d),
                };
                if dep_end.is_nan() {
                    break;
                }
                let ready = if dep_dev == d {
                    dep_end
                } else {
                    dep_end + input.comm
                };
                let t0 = free[d].max(ready);
                let t1 = t0 + cost_of(input, op.kind, d, op.chunk as usize);
                start[d][pos[d]] = t0;
                end[d][pos[d]] = t1;
                free[d] = t1;
                match op.kind {
                    OpKind::F => {
                        f_end[idx] = t1;
                        f_dev[idx] = d;
                    }
                    OpKind::B | OpKind::BW => {
                        b_end[idx] = t1;
                        b_dev[idx] = d;
                    }
                    OpKind::W => {}
                }
                pos[d] += 1;
                done += 1;
                progressed = true;
            }
        }
        if !progressed {
            return Err(TimingError::Deadlock);
        }
    }
    Ok(OpTimes { start, end })
}
