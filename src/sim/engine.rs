//! The timing pass: list scheduling of every device's op order over the dependency graph of
//! the stage chain (docs/model.md).
//!
//! Each device runs its compute ops in order, one at a time; an op starts when the device is
//! free and its inputs have arrived (plus the transfer time when the producer is on another
//! device). A device that waits on another device's op is parked and woken by the producer,
//! so every op is visited a constant number of times. End times live in flat arrays indexed
//! by `(stage, micro-batch)`; nothing is allocated per op besides the spans themselves.

use crate::schedule::{Op, OpKind, Schedule};

use super::op_costs::{OpCosts, pair_hidden_s};
use super::transfers::{Slot, Transfer, Transfers, later};
use super::types::{BackwardWait, Lane, SimCosts, SimError, Span, SpanKind};

#[path = "engine_copies.rs"]
mod copy_pass;
#[path = "engine_pairs.rs"]
mod pairs;
#[path = "engine_steady.rs"]
mod steady;
pub use pairs::a2a_hidden_s;

/// Where one op of a device ended up, kept for the paired copy pass (`po-h`, `po-f`), which
/// may postpone warm-up forwards: its start (its recomputation's, if one runs right before
/// it) and end, its compute span, its send span and (for an F) its memory event.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpRecord {
    pub start: f64,
    pub end: f64,
    pub span: usize,
    pub send: Option<usize>,
    pub event: Option<usize>,
}

/// A change of a device's memory at one instant.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemEvent {
    /// When.
    pub t: f64,
    /// Change of activation bytes on the device.
    pub bytes: i64,
    /// Change of live micro-batch-chunks.
    pub count: i32,
    /// Change of bytes held on the host.
    pub host: i64,
}

/// Everything the timing pass produces, per device.
#[derive(Debug, Default)]
pub(crate) struct DeviceRun {
    /// Compute-lane spans in start order (F, B, W, BW, R).
    pub compute: Vec<Span>,
    /// Copy-lane spans (D2H, H2D) in start order.
    pub copy: Vec<Span>,
    /// Send-lane spans in start order.
    pub send: Vec<Span>,
    /// Memory changes in the order they were produced (not sorted).
    pub events: Vec<MemEvent>,
    /// The window before each backward, in the device's op order.
    pub waits: Vec<BackwardWait>,
    /// Total compute time.
    pub busy: f64,
    /// Compute time of the ops a figures-only run jumped over (not in `compute`): other
    /// than recomputation, and recomputation.
    pub elided: (f64, f64),
}

/// Not finished yet.
const PENDING: f64 = f64::INFINITY;

pub(super) struct Engine<'a> {
    pub sched: &'a Schedule,
    pub costs: Vec<OpCosts>,
    pub v: usize,
    pub m: usize,
    pub stages: u32,
    comm: &'a [f64],
    tx: Transfers,
    pub f_end: Vec<f64>,
    pub b_end: Vec<f64>,
    /// Per cell, when offloading: start of the first op that reads the kept bytes again.
    pub need: Vec<f64>,
    /// Per device, when offloading: its offloadable `(cell, micro-batch, chunk)` in F order.
    pub offloadable: Vec<Vec<(usize, u32, u32)>>,
    /// Copies placed by the unpaired copy pass (all devices).
    pub placed_copies: usize,
    /// Per device and op, when the schedule's copies are paired: where the op ran.
    pub ops: Vec<Vec<OpRecord>>,
    ptr: Vec<usize>,
    free: Vec<f64>,
    pub runs: Vec<DeviceRun>,
    /// Per device, the index in `sched.pairs` of its next overlapped pair.
    next_pair: Vec<usize>,
    /// Per device, the forward of the pair under way, whose output waits for the pair's end.
    held: Vec<Option<Held>>,
    /// Per device, the op it stops before (a figures-only run simulates a few periods first).
    limit: Vec<usize>,
    /// Per device, while a figures-only run looks for its steady state: each op's end and
    /// the device's compute span count after it.
    log: Vec<Vec<(f64, usize)>>,
    /// The device on which a figures-only run's last try to prove a repeat failed.
    unsettled: usize,
}

/// A forward that has run, with its stage: handed on at once, or, for the first half of an
/// overlapped pair, held until the pair's end.
#[derive(Debug, Clone, Copy)]
struct Held {
    op: Op,
    stage: u32,
}

/// Runs the timing pass. The schedule must have passed `validate::check`. With `figures`,
/// the steady periods the run proves to repeat are jumped over (`engine_steady`): every
/// figure comes out as in the full run, but those periods' spans, memory events and waits
/// are left out.
pub(crate) fn run(
    sched: &Schedule,
    costs: &SimCosts,
    figures: bool,
) -> Result<Vec<DeviceRun>, SimError> {
    let p = sched.p as usize;
    let v = sched.v as usize;
    let m = sched.m as usize;
    let stages = sched.stages();
    let (table, any_offload) = OpCosts::table(costs, p, v);
    let cells = stages as usize * m;
    let offload_cells = if any_offload { cells } else { 0 };
    let paired = any_offload && sched.kind.pairs_host_copies();
    let mut e = Engine {
        sched,
        costs: table,
        v,
        m,
        stages,
        comm: &costs.comm_s,
        tx: Transfers::new(sched, costs.blocking_sends),
        f_end: vec![PENDING; cells],
        b_end: vec![PENDING; cells],
        need: vec![PENDING; offload_cells],
        offloadable: vec![Vec::new(); if any_offload { p } else { 0 }],
        placed_copies: 0,
        ops: if paired {
            sched
                .devices
                .iter()
                .map(|o| Vec::with_capacity(o.len()))
                .collect()
        } else {
            Vec::new()
        },
        ptr: vec![0; p],
        free: vec![0.0; p],
        next_pair: vec![0; p],
        held: vec![None; p],
        limit: vec![usize::MAX; p],
        log: Vec::new(),
        unsettled: 0,
        runs: sched
            .devices
            .iter()
            .map(|ops| {
                // Each op sends at most once: no regrowing (and copying) on the way. A
                // figures-only run keeps a few periods and grows as it needs.
                let n = if figures { 0 } else { ops.len() };
                DeviceRun {
                    compute: Vec::with_capacity(n),
                    send: Vec::with_capacity(n),
                    events: Vec::with_capacity(n),
                    ..DeviceRun::default()
                }
            })
            .collect(),
    };
    if figures && !paired && !any_offload {
        e.run_skipping();
    } else {
        e.drain();
    }
    if let Some(d) = (0..p).find(|&d| e.tx.is_waiting(d as u32)) {
        return Err(SimError::Deadlock {
            device: d as u32,
            op: "a blocking send whose receiver never comes".into(),
        });
    }
    if let Some(d) = (0..p).find(|&d| e.ptr[d] < sched.devices[d].len()) {
        let op = sched.devices[d][e.ptr[d]];
        return Err(SimError::Deadlock {
            device: d as u32,
            op: format!(
                "{:?} of micro-batch {} chunk {}",
                op.kind, op.micro_batch, op.chunk
            ),
        });
    }
    if paired {
        e.postpone_warmup_forwards();
        e.place_paired_copies()?;
    } else if any_offload {
        e.place_copies();
        e.check_own_offload()?;
    }
    Ok(e.runs)
}

impl Engine<'_> {
    /// Advances every device until none can go on.
    fn drain(&mut self) {
        let mut queue: Vec<u32> = (0..self.sched.p).rev().collect();
        let mut queued = vec![true; queue.len()];
        while let Some(d) = queue.pop() {
            queued[d as usize] = false;
            self.advance(d, &mut queue, &mut queued);
        }
    }

    pub(super) fn comm_at(&self, boundary: u32) -> f64 {
        match self.comm.len() {
            0 => 0.0,
            n => self.comm[(boundary as usize).min(n - 1)],
        }
    }

    pub(super) fn cell(&self, stage: u32, mb: u32) -> usize {
        stage as usize * self.m + mb as usize
    }

    /// Time at which the inputs of op `kind` at `stage` for `mb` on device `d` are there
    /// (`PENDING` when a producer has not run yet).
    fn ready_at(&self, d: u32, kind: OpKind, stage: u32, mb: u32) -> f64 {
        match kind {
            OpKind::F => {
                if stage == 0 {
                    return 0.0;
                }
                let cell = self.cell(stage - 1, mb);
                let (pd, _) = self.sched.locate(stage - 1, mb);
                if pd != d {
                    self.tx.forward_arrival(cell)
                } else {
                    self.f_end[cell]
                }
            }
            OpKind::B | OpKind::BW => {
                if stage + 1 == self.stages {
                    return self.f_end[self.cell(stage, mb)];
                }
                let cell = self.cell(stage + 1, mb);
                let (pd, _) = self.sched.locate(stage + 1, mb);
                if pd != d {
                    self.tx.backward_arrival(cell)
                } else {
                    self.b_end[cell]
                }
            }
            OpKind::W => self.b_end[self.cell(stage, mb)],
        }
    }

    /// Runs device `d`'s ops until it must wait for another device.
    fn advance(&mut self, d: u32, queue: &mut Vec<u32>, queued: &mut [bool]) {
        let di = d as usize;
        let sched = self.sched;
        let ops = &sched.devices[di];
        loop {
            // A device whose blocking send waits for its receiver goes on only after it.
            let (hold, woken) = self.tx.resolve(d, &mut self.runs[di].send);
            if let Some(h) = hold {
                self.free[di] = self.free[di].max(h);
            }
            for q in woken {
                wake(q, queue, queued);
            }
            if self.tx.is_waiting(d) || self.ptr[di] >= ops.len().min(self.limit[di]) {
                return;
            }
            let op = ops[self.ptr[di]];
            let stage = self.sched.stage_of(d, op.chunk, op.micro_batch);
            let mut ready = self.ready_at(d, op.kind, stage, op.micro_batch);
            if ready == PENDING {
                return;
            }
            let pair_start = self.pair_starts_here(di);
            if pair_start {
                // An overlapped pair starts once the inputs of both its ops are there.
                ready = ready.max(self.partner_ready(d, self.ptr[di] + 1));
                if ready == PENDING {
                    return;
                }
                self.next_pair[di] += 1;
            }
            let c = self.costs[di * self.v + op.chunk as usize];
            let cell = self.cell(stage, op.micro_batch);
            let mb = op.micro_batch;
            let chunk = op.chunk;
            let mut start = self.free[di].max(ready);
            let end;
            let marks = (
                self.runs[di].compute.len(),
                self.runs[di].send.len(),
                self.runs[di].events.len(),
            );
            // When the device may run its next op, if a blocking send holds it past `end`.
            let mut hold = None;
            match op.kind {
                OpKind::F => {
                    end = start + c.f;
                    self.push_compute(d, SpanKind::F, mb, chunk, start, end);
                    // In Megatron's combined 1F1B the paired forward's layers fill as the
                    // backward's free: its activations count from the pair's end, after the
                    // backward's (schedule/inflight.rs has the same convention).
                    if !(pair_start && self.sched.kind.runs_combined_1f1b()) {
                        self.runs[di].events.push(MemEvent {
                            t: start,
                            bytes: c.act,
                            count: 1,
                            host: 0,
                        });
                    }
                    if c.off > 0 {
                        self.offloadable[di].push((cell, mb, chunk));
                    }
                    if pair_start {
                        // Its output leaves with its partner's, at the pair's end.
                        self.mark_paired(di);
                        self.held[di] = Some(Held { op, stage });
                    } else {
                        let next_is_backward = ops
                            .get(self.ptr[di] + 1)
                            .is_some_and(|o| matches!(o.kind, OpKind::B | OpKind::BW));
                        let f = Held { op, stage };
                        hold = later(
                            hold,
                            self.forward_done(d, f, end, next_is_backward, queue, queued),
                        );
                    }
                }
                OpKind::B | OpKind::BW => {
                    let free = self.free[di];
                    let unhindered = start;
                    // Overlapped recomputation: from the moment the device is free, hidden
                    // first under the backward's collectives, then in the wait for the
                    // gradient; its span is what the collectives do not hide.
                    let mut first_read = f64::INFINITY;
                    if c.r_overlap > 0.0 {
                        let comm = match op.kind {
                            OpKind::BW => c.tp_b + c.tp_w,
                            _ => c.tp_b,
                        };
                        let visible = (c.r_overlap - comm).max(0.0);
                        if visible > 0.0 {
                            self.push_compute(d, SpanKind::R, mb, chunk, free, free + visible);
                        }
                        first_read = free;
                        start = (free + visible).max(ready);
                    }
                    // On-demand recomputation: right before the backward.
                    if c.r > 0.0 {
                        self.push_compute(d, SpanKind::R, mb, chunk, start, start + c.r);
                        first_read = first_read.min(start);
                        start += c.r;
                    }
                    if c.off > 0 {
                        self.need[cell] = first_read.min(start);
                    }
                    self.runs[di].waits.push(BackwardWait {
                        micro_batch: mb,
                        chunk,
                        wait_s: (ready - free).max(0.0),
                        delay_s: start - unhindered,
                    });
                    let (kind, dur, freed, count) = if op.kind == OpKind::B {
                        (SpanKind::B, c.b, c.b_free, 0)
                    } else {
                        (SpanKind::BW, c.b + c.w, c.act, -1)
                    };
                    // The backward half of an overlapped pair: what the pair hides of the
                    // two halves' all-to-alls comes off its end.
                    let dur = match self.held[di] {
                        Some(f) => {
                            let fc = self.costs[di * self.v + f.op.chunk as usize];
                            let per_layer = self.sched.kind.runs_combined_1f1b();
                            dur - pair_hidden_s(&fc, &c, dur, per_layer)
                        }
                        None => dur,
                    };
                    end = start + dur;
                    self.b_end[cell] = end;
                    self.push_compute(d, kind, mb, chunk, start, end);
                    self.runs[di].events.push(MemEvent {
                        t: end,
                        bytes: -freed,
                        count,
                        host: 0,
                    });
                    let mut gradient_comm = 0.0;
                    if stage > 0 {
                        let (nd, _) = self.sched.locate(stage - 1, mb);
                        if nd != d {
                            let t = Transfer {
                                to: nd,
                                reader: self.cell(stage - 1, mb),
                                at: end,
                                comm: self.comm_at(stage - 1),
                                slot: Slot::Backward(cell),
                                mb,
                                chunk,
                            };
                            gradient_comm = t.comm;
                            hold = later(hold, self.transfer(d, t, queue, queued));
                        }
                    }
                    if let Some(mut t) = self.tx.take_deferred(d, end) {
                        // One batched exchange carries both tensors: they leave through the
                        // device's one network link and are gathered one after the other.
                        t.comm += gradient_comm;
                        hold = later(hold, self.transfer(d, t, queue, queued));
                    }
                }
                OpKind::W => {
                    end = start + c.w;
                    self.push_compute(d, SpanKind::W, mb, chunk, start, end);
                    self.runs[di].events.push(MemEvent {
                        t: end,
                        bytes: -(c.act - c.b_free),
                        count: -1,
                        host: 0,
                    });
                }
            }
            if !pair_start && let Some(f) = self.held[di].take() {
                // The pair's end: its backward is the last compute span, and the held
                // forward's output leaves now.
                self.mark_paired(di);
                if self.sched.kind.runs_combined_1f1b() {
                    let fc = self.costs[di * self.v + f.op.chunk as usize];
                    self.runs[di].events.push(MemEvent {
                        t: end,
                        bytes: fc.act,
                        count: 1,
                        host: 0,
                    });
                }
                let next_is_backward = ops
                    .get(self.ptr[di] + 1)
                    .is_some_and(|o| matches!(o.kind, OpKind::B | OpKind::BW));
                hold = later(
                    hold,
                    self.forward_done(d, f, end, next_is_backward, queue, queued),
                );
            }
            self.free[di] = hold.unwrap_or(end);
            for q in self.tx.op_done(d, self.ptr[di], end) {
                wake(q, queue, queued);
            }
            self.ptr[di] += 1;
            if !self.ops.is_empty() {
                self.record(di, op.kind, marks, end);
            }
            if let Some(log) = self.log.get_mut(di) {
                log.push((end, self.runs[di].compute.len()));
            }
        }
    }

    /// The forward `f` on device `d` hands its output on at `at`: its end time for a next
    /// stage on the same device, else a transfer to the next stage's device (`next_is_backward`:
    /// whether the device's next op is a backward, for the rendezvous exchange). Returns when
    /// `d` may go on if the send holds it.
    fn forward_done(
        &mut self,
        d: u32,
        f: Held,
        at: f64,
        next_is_backward: bool,
        queue: &mut Vec<u32>,
        queued: &mut [bool],
    ) -> Option<f64> {
        let (mb, chunk, stage) = (f.op.micro_batch, f.op.chunk, f.stage);
        let cell = self.cell(stage, mb);
        self.f_end[cell] = at;
        if stage + 1 >= self.stages {
            return None;
        }
        let (nd, _) = self.sched.locate(stage + 1, mb);
        if nd == d {
            return None;
        }
        let t = Transfer {
            to: nd,
            reader: self.cell(stage + 1, mb),
            at,
            comm: self.comm_at(stage),
            slot: Slot::Forward(cell),
            mb,
            chunk,
        };
        if self.tx.defers_forward(d, next_is_backward) {
            self.tx.defer(d, t);
            None
        } else {
            self.transfer(d, t, queue, queued)
        }
    }

    /// Keeps where the op just run on device `di` ended up (`marks`: the lengths of its
    /// compute, send and event lists before it ran).
    fn record(&mut self, di: usize, kind: OpKind, marks: (usize, usize, usize), end: f64) {
        let run = &self.runs[di];
        let (spans, sends, events) = marks;
        let Some(first) = run.compute.get(spans) else {
            return;
        };
        self.ops[di].push(OpRecord {
            start: first.start,
            end,
            span: run.compute.len() - 1,
            send: (run.send.len() > sends).then(|| run.send.len() - 1),
            event: (kind == OpKind::F).then_some(events),
        });
    }

    fn push_compute(&mut self, d: u32, kind: SpanKind, mb: u32, chunk: u32, start: f64, end: f64) {
        let run = &mut self.runs[d as usize];
        run.busy += end - start;
        run.compute
            .push(span(d, Lane::Compute, kind, mb, chunk, start, end));
    }

    pub(super) fn push_copy(
        &mut self,
        d: u32,
        kind: SpanKind,
        mb: u32,
        chunk: u32,
        start: f64,
        end: f64,
    ) {
        self.runs[d as usize]
            .copy
            .push(span(d, Lane::Copy, kind, mb, chunk, start, end));
    }

    /// Places a transfer from `d` and wakes its receiver; returns when `d` may go on if
    /// the send holds it.
    fn transfer(
        &mut self,
        d: u32,
        t: Transfer,
        queue: &mut Vec<u32>,
        queued: &mut [bool],
    ) -> Option<f64> {
        let (hold, woke) = self.tx.send(d, t, &mut self.runs[d as usize].send);
        if woke {
            wake(t.to, queue, queued);
        }
        hold
    }
}

fn wake(d: u32, queue: &mut Vec<u32>, queued: &mut [bool]) {
    if !queued[d as usize] {
        queued[d as usize] = true;
        queue.push(d);
    }
}

fn span(d: u32, lane: Lane, kind: SpanKind, mb: u32, chunk: u32, start: f64, end: f64) -> Span {
    Span {
        device: d,
        lane,
        kind,
        micro_batch: mb,
        chunk,
        start,
        end,
        paired: false,
    }
}
