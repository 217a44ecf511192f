//! The steady state of an op order, found from the order alone: where every device repeats
//! the same ops, `delta` micro-batches later, and how far back (in such periods) an op reads
//! what another op produced. The simulator's figures-only run (`sim`'s `engine_steady`)
//! uses it to simulate a few periods, prove that the run repeats itself there, and jump
//! over the rest; each schedule keeps its own (`Schedule::steady_state_kept`).
//!
//! A device's period is `len` ops (its ops of `delta` micro-batches). On device `d` the ops
//! from `start` on repeat: op `start + k len + i` is op `start + i` with its micro-batch
//! `k delta` higher, for periods `k < count`. A dependency is the F of the stage before (an
//! F reads), the B of the stage after or the F of the same stage on the last stage (a B or BW
//! reads), or the B of the same cell (a W reads); the device's previous op is one too.

use crate::schedule::{Op, OpKind, Placement, Schedule};

/// Where a position lies relative to its device's periodic stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Before,
    In(usize),
    After,
}

/// The periodic stretch of an op order (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Period {
    /// Micro-batches one period moves on.
    pub delta: u32,
    /// Per device, ops per period.
    pub len: Vec<usize>,
    /// Per device, the first op of period 0.
    pub start: Vec<usize>,
    /// The first period from which every dependency of an op in the stretch lies in the
    /// stretch too (on its own device).
    pub first: usize,
    /// Periods (from 0) in which every op repeats and reads only ops of the stretch.
    pub count: usize,
    /// The most periods an op in the stretch reads back (at least 1: its device's previous
    /// op).
    pub lag: usize,
    /// The most periods an op in the stretch reads ahead (an op of a later period on
    /// another device, whose stretch starts elsewhere in its order).
    pub lead: usize,
}

/// Fewest periods in the stretch worth a figures-only run (fewer: the full run is as quick).
const MIN_PERIODS: usize = 12;

impl Period {
    /// Position of device `d`'s op number `i` relative to its stretch.
    fn place(&self, d: usize, i: usize) -> Where {
        let (s, l) = (self.start[d], self.len[d]);
        if i < s {
            Where::Before
        } else {
            let k = (i - s) / l;
            if k < self.count {
                Where::In(k)
            } else {
                Where::After
            }
        }
    }

    /// The period of device `d`'s op number `i`, if it lies in the stretch.
    pub fn of(&self, d: usize, i: usize) -> Option<usize> {
        match self.place(d, i) {
            Where::In(k) => Some(k),
            _ => None,
        }
    }

    /// First op of period `k` on device `d`.
    pub fn at(&self, d: usize, k: usize) -> usize {
        self.start[d] + k * self.len[d]
    }

    /// The same stretch seen in periods of `c` periods, from period `offset` on (at least
    /// [`Period::first`]): what a run that repeats itself only every `c` periods repeats.
    /// `None` when `offset` is before `first`.
    pub fn scaled(&self, c: usize, offset: usize) -> Option<Period> {
        if offset < self.first || c == 0 {
            return None;
        }
        Some(Period {
            delta: self.delta * c as u32,
            len: self.len.iter().map(|l| l * c).collect(),
            start: (0..self.len.len()).map(|d| self.at(d, offset)).collect(),
            first: 0,
            count: self.count.saturating_sub(offset) / c,
            lag: self.lag.div_ceil(c),
            lead: self.lead.div_ceil(c),
        })
    }
}

/// Where each (stage, micro-batch) cell's F and backward (B or BW) run: their index in the
/// op list of the device that runs the cell (`Schedule::locate`).
pub(crate) struct Positions {
    m: usize,
    f: Vec<u32>,
    b: Vec<u32>,
}

impl Positions {
    /// The positions of `sched`'s ops (which passed the simulator's shape check).
    pub fn of(sched: &Schedule) -> Positions {
        let m = sched.m as usize;
        let cells = sched.stages() as usize * m;
        let mut f = vec![u32::MAX; cells];
        let mut b = vec![u32::MAX; cells];
        for (d, ops) in sched.devices.iter().enumerate() {
            for (i, op) in ops.iter().enumerate() {
                let stage = sched.stage_of(d as u32, op.chunk, op.micro_batch) as usize;
                let cell = stage * m + op.micro_batch as usize;
                match op.kind {
                    OpKind::F => f[cell] = i as u32,
                    OpKind::B | OpKind::BW => b[cell] = i as u32,
                    OpKind::W => {}
                }
            }
        }
        Positions { m, f, b }
    }

    /// The op that `op` (at `stage`) reads besides its device's previous op, as
    /// `(device, index)`; `None` for a first-stage F.
    pub fn producer(&self, sched: &Schedule, op: Op, stage: u32) -> Option<(u32, u32)> {
        let mb = op.micro_batch;
        let at = |list: &[u32], s: u32| {
            (
                sched.locate(s, mb).0,
                list[s as usize * self.m + mb as usize],
            )
        };
        let last = sched.stages() - 1;
        match op.kind {
            OpKind::F if stage == 0 => None,
            OpKind::F => Some(at(&self.f, stage - 1)),
            OpKind::B | OpKind::BW if stage == last => Some(at(&self.f, stage)),
            OpKind::B | OpKind::BW => Some(at(&self.b, stage + 1)),
            OpKind::W => Some(at(&self.b, stage)),
        }
    }
}

/// What the figures-only run reads of a schedule's order: where its ops lie and its steady
/// state. It depends on the order alone, so a schedule keeps it (`order_facts`) for every
/// run of it.
pub(crate) struct SteadyState {
    /// Where each cell's F and backward run.
    pub positions: Positions,
    /// The periodic stretch.
    pub period: Period,
}

impl SteadyState {
    /// The steady state of `sched` (which passed the simulator's shape check), if it has
    /// one worth a jump ([`find`]).
    pub fn of(sched: &Schedule) -> Option<SteadyState> {
        if sched.placement == Placement::Chimera {
            return None;
        }
        let positions = Positions::of(sched);
        let period = find(sched, &positions)?;
        Some(SteadyState { positions, period })
    }
}

/// Whether op `b` is op `a` with its micro-batch `delta` higher.
fn repeats(a: Op, b: Op, delta: u32) -> bool {
    a.kind == b.kind
        && a.chunk == b.chunk
        && a.micro_batch.checked_add(delta) == Some(b.micro_batch)
}

/// The fewest ops after which the middle of `ops` repeats itself `delta` micro-batches
/// later (looked for up to a few ops per micro-batch and chunk).
fn period_len(ops: &[Op], delta: u32) -> Option<usize> {
    let mid = ops.len() / 2;
    let chunks = ops
        .iter()
        .map(|o| o.chunk)
        .max()
        .map_or(1, |c| c as usize + 1);
    (1..=4 * chunks * delta as usize).find(|&len| {
        (mid..mid + len).all(|i| ops.get(i + len).is_some_and(|&b| repeats(ops[i], b, delta)))
    })
}

/// The longest stretch `[s, t)` of positions `i` where op `i + len` repeats op `i`.
fn longest_run(ops: &[Op], len: usize, delta: u32) -> (usize, usize) {
    let (mut best, mut cur) = ((0, 0), 0);
    for i in 0..ops.len().saturating_sub(len) {
        if repeats(ops[i], ops[i + len], delta) {
            if i + 1 - cur > best.1 - best.0 {
                best = (cur, i + 1);
            }
        } else {
            cur = i + 1;
        }
    }
    best
}

/// The steady state of `sched` (see the module doc), or `None` when it has none long enough
/// to be worth it: a Chimera placement (stages depend on the micro-batch), every device's op
/// count not a multiple of `m`, no `delta` up to `2 p v` under which all devices repeat for
/// [`MIN_PERIODS`] periods.
pub(crate) fn find(sched: &Schedule, pos: &Positions) -> Option<Period> {
    if sched.placement == Placement::Chimera || sched.devices.is_empty() {
        return None;
    }
    let most = (2 * sched.p * sched.v).min(sched.m / MIN_PERIODS as u32);
    let (delta, len) = (1..=most).find_map(|delta| {
        let len: Option<Vec<usize>> = sched
            .devices
            .iter()
            .map(|ops| period_len(ops, delta))
            .collect();
        Some((delta, len?))
    })?;
    let mut start = Vec::with_capacity(len.len());
    let mut count = usize::MAX;
    for (ops, &l) in sched.devices.iter().zip(&len) {
        let (s, t) = longest_run(ops, l, delta);
        start.push(s);
        count = count.min((t - s) / l + 1);
    }
    let mut period = Period {
        delta,
        len,
        start,
        first: 0,
        count,
        lag: 1,
        lead: 0,
    };
    if count < MIN_PERIODS {
        return None;
    }
    // Dependencies: the lag within the stretch, the periods before which an op may read
    // before the stretch, and the period from which one reads after it.
    let (mut first, mut end, mut lag, mut lead) = (0, period.count, 1, 0);
    for (d, ops) in sched.devices.iter().enumerate() {
        for (i, &op) in ops.iter().enumerate() {
            let Where::In(k) = period.place(d, i) else {
                continue;
            };
            let stage = sched.stage_of(d as u32, op.chunk, op.micro_batch);
            if let Some((pd, pi)) = pos.producer(sched, op, stage) {
                match period.place(pd as usize, pi as usize) {
                    Where::Before => first = first.max(k + 1),
                    Where::After => end = end.min(k),
                    Where::In(j) => {
                        lag = lag.max(k.saturating_sub(j));
                        lead = lead.max(j.saturating_sub(k));
                    }
                }
            }
        }
    }
    period.first = first;
    period.count = end;
    period.lag = lag;
    period.lead = lead;
    (period.count >= first + MIN_PERIODS).then_some(period)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{ScheduleInput, ScheduleKind, generate};

    /// 1F1B repeats one F and one B per micro-batch on every device, from the device's
    /// first steady F; an op reads at most one period back.
    #[test]
    fn one_f_one_b_repeats_every_micro_batch() {
        let s = generate(
            ScheduleKind::OneFOneB,
            &ScheduleInput::uniform(4, 64, 1, 1.0, 2.0, 0.0, 0.0),
        )
        .unwrap();
        let pos = Positions::of(&s);
        let per = find(&s, &pos).unwrap();
        assert_eq!(per.delta, 1);
        assert_eq!(per.len, vec![2; 4]);
        // Device d warms up with p - 1 - d forwards.
        assert_eq!(per.start, vec![3, 2, 1, 0]);
        assert!(per.lag >= 1 && per.lag <= 2, "{per:?}");
        assert!(per.count > 50, "{per:?}");
    }

    /// Too few micro-batches: no stretch worth a figures-only run.
    #[test]
    fn short_runs_have_none() {
        let s = generate(
            ScheduleKind::OneFOneB,
            &ScheduleInput::uniform(4, 8, 1, 1.0, 2.0, 0.0, 0.0),
        )
        .unwrap();
        assert!(find(&s, &Positions::of(&s)).is_none());
    }
}
