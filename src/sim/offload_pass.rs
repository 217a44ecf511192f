//! The engine's side of PipeOffload's paired copy pass (`po-h`, `po-f`): after the compute
//! timeline, the warm-up forwards are postponed as late as their consumers allow (the
//! source's `postpone_forward_in_warmup`: later forwards hold memory for less time and leave
//! their copies later slots), then each pair of devices gets its copy slots ([`super::paired`]).

use crate::schedule::OpKind;

use super::engine::Engine;
use super::paired::{self, Cell, Device};
use super::types::SimError;

impl Engine<'_> {
    /// Moves every device's warm-up forwards that follow its last chunk's first forward and
    /// precede its first backward as late as possible: each ends one transfer before the
    /// next stage's forward of its micro-batch starts, and before the device's next op; the
    /// first backward keeps one backward's duration of slack before it, as the source does.
    /// Compute never waits longer for it: the makespan does not change. Devices go from the
    /// last to the first, so each sees its successors already moved.
    pub(super) fn postpone_warmup_forwards(&mut self) {
        let sched = self.sched;
        let last_chunk = (self.v as u32).saturating_sub(1);
        for d in (0..sched.p).rev() {
            let di = d as usize;
            let ops = &sched.devices[di];
            let Some(first_b) = ops
                .iter()
                .position(|o| matches!(o.kind, OpKind::B | OpKind::BW))
            else {
                continue;
            };
            let b = self.ops[di][first_b];
            let mut cur = b.start - (b.end - b.start);
            for i in (0..first_b).rev() {
                let op = ops[i];
                if op.kind != OpKind::F || (op.chunk == last_chunk && op.micro_batch == 0) {
                    break;
                }
                let rec = self.ops[di][i];
                let cost = rec.end - rec.start;
                let stage = sched.stage_of(d, op.chunk, op.micro_batch);
                let mut latest = cur - cost;
                if stage + 1 < self.stages {
                    let next = self.cell(stage + 1, op.micro_batch);
                    let (nd, _) = sched.locate(stage + 1, op.micro_batch);
                    let comm = if nd != d { self.comm_at(stage) } else { 0.0 };
                    latest = latest.min(self.f_start(next) - comm - cost);
                } else {
                    latest = f64::NEG_INFINITY;
                }
                if latest > rec.start {
                    self.move_forward(di, i, stage, latest);
                }
                cur = self.ops[di][i].start;
            }
        }
    }

    /// Start of the forward of `cell` (its end less its duration).
    fn f_start(&self, cell: usize) -> f64 {
        let stage = (cell / self.m) as u32;
        let mb = (cell % self.m) as u32;
        let (d, c) = self.sched.locate(stage, mb);
        self.f_end[cell] - self.costs[d as usize * self.v + c as usize].f()
    }

    /// Moves op `i` of device `di` (a forward of `stage`) to start at `start`: its span, its
    /// send, its memory event and its end time.
    fn move_forward(&mut self, di: usize, i: usize, stage: u32, start: f64) {
        let rec = &mut self.ops[di][i];
        let shift = start - rec.start;
        rec.start += shift;
        rec.end += shift;
        let rec = *rec;
        let run = &mut self.runs[di];
        if let Some(s) = run.compute.get_mut(rec.span) {
            s.start += shift;
            s.end += shift;
        }
        if let Some(s) = rec.send.and_then(|k| run.send.get_mut(k)) {
            s.start += shift;
            s.end += shift;
        }
        if let Some(e) = rec.event.and_then(|k| run.events.get_mut(k)) {
            e.t += shift;
        }
        let mb = self.sched.devices[di][i].micro_batch;
        let cell = self.cell(stage, mb);
        self.f_end[cell] = rec.end;
    }

    /// Places the copies of every pair of devices (2k, 2k+1) on PipeOffload's slots; a pair
    /// whose reloads cannot follow their sends makes the run fail, naming the device.
    pub(super) fn place_paired_copies(&mut self) -> Result<(), SimError> {
        let p = self.sched.p as usize;
        // Per device, the chunks that got at least one copy; the slowest copy slot seen.
        let mut copied = vec![vec![false; self.v]; p];
        let (mut candidates, mut slowest) = (0usize, 0.0f64);
        for first in (0..p.saturating_sub(1)).step_by(2) {
            let members = [first, first + 1];
            let lists = members.map(|di| std::mem::take(&mut self.offloadable[di]));
            let devices = [0, 1].map(|k| self.paired_device(members[k], &lists[k]));
            let slot = |pick: fn(&super::op_costs::OpCosts) -> f64| {
                members
                    .iter()
                    .zip(&lists)
                    .flat_map(|(&di, list)| {
                        list.iter()
                            .map(move |&(_, _, c)| (di, c as usize))
                            .collect::<Vec<_>>()
                    })
                    .map(|(di, c)| pick(&self.costs[di * self.v + c]))
                    .fold(0.0, f64::max)
            };
            let (x, solo) = (slot(|c| c.copy), slot(|c| c.copy_solo));
            let start = self.runs[first]
                .compute
                .first()
                .map_or(0.0, |span| span.end);
            let placed =
                paired::place_pair([&devices[0], &devices[1]], start, x, solo).map_err(|e| {
                    SimError::OffloadUnschedulable {
                        device: members[e.member] as u32,
                        copy_s: x,
                    }
                })?;
            slowest = slowest.max(x);
            for (k, placed) in placed.into_iter().enumerate() {
                candidates += lists[k].len();
                for (&(_, _, c), _) in lists[k].iter().zip(&placed).filter(|(_, p)| p.is_some()) {
                    if let Some(x) = copied[members[k]].get_mut(c as usize) {
                        *x = true;
                    }
                }
                self.apply_copies(members[k], &lists[k], placed, true);
            }
        }
        super::offload_checks::check_paired(self.sched.kind, self.v, candidates, &copied, slowest)
    }

    /// Device `di`'s offloadable cells (`list`, in forward order) as the paired pass sees them.
    fn paired_device(&self, di: usize, list: &[(usize, u32, u32)]) -> Device {
        let cells: Vec<Cell> = list
            .iter()
            .map(|&(cell, _, _)| Cell {
                f_end: self.f_end[cell],
                need: self.need[cell],
                b_dur: self.b_end[cell] - self.need[cell],
            })
            .collect();
        let index: std::collections::HashMap<usize, usize> = list
            .iter()
            .enumerate()
            .map(|(i, &(cell, _, _))| (cell, i))
            .collect();
        let b_order = self.sched.devices[di]
            .iter()
            .filter(|o| matches!(o.kind, OpKind::B | OpKind::BW))
            .filter_map(|o| {
                let stage = self.sched.stage_of(di as u32, o.chunk, o.micro_batch);
                index.get(&self.cell(stage, o.micro_batch)).copied()
            })
            .collect();
        Device {
            cells,
            b_order,
            last_end: self.ops[di].last().map_or(0.0, |r| r.end),
        }
    }
}
