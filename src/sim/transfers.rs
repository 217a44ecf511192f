//! Stage-to-stage transfers: when an activation or a gradient sent to another device arrives
//! there, and how long the send holds its sender (docs/model.md, "Stage-to-stage transfers").
//!
//! Three ways, chosen once per simulation:
//! - overlapped: the send runs beside the sender's next ops; it arrives `comm` after the op;
//! - held: the sender waits until its send has ended (blocking sends of schedules that
//!   Megatron-LM does not run);
//! - rendezvous: Megatron-LM's synchronous batched exchange, for its 1F1B and interleaved
//!   schedules. A device exchanges after each op; the exchange that carries a tensor starts
//!   once the sender has finished its op and the receiver has finished the op before the one
//!   that needs it (it posts its receive in the exchange after that op), and both wait for
//!   it. In the interleaved schedule's steady state a forward is followed by a backward
//!   before the exchange, so the forward's output leaves after that backward, in the same
//!   batched exchange as the backward's gradient: the two share the device's network link
//!   and are gathered one after the other, so the output arrives after both transfer times.

use crate::schedule::{OpKind, Schedule, ScheduleKind};

use super::types::{Lane, Span, SpanKind};

/// Not known yet.
const PENDING: f64 = f64::INFINITY;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Overlapped,
    Held,
    Rendezvous,
}

/// Which arrival a transfer fills: the forward output or the gradient of a cell.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// The forward output of this cell, for the next stage.
    Forward(usize),
    /// The input gradient of this cell, for the previous stage.
    Backward(usize),
}

/// One transfer to place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Transfer {
    /// Receiving device.
    pub to: u32,
    /// Cell of the op on the receiving side that reads the tensor.
    pub reader: usize,
    /// When the sender is ready to send.
    pub at: f64,
    /// Transfer time.
    pub comm: f64,
    /// What arrives.
    pub slot: Slot,
    /// Micro-batch and chunk of the sending op (for its span).
    pub mb: u32,
    /// Chunk of the sending op.
    pub chunk: u32,
}

/// The transfer state of one simulation.
pub(crate) struct Transfers {
    mode: Mode,
    f_arrive: Vec<f64>,
    b_arrive: Vec<f64>,
    /// Rendezvous: index of each cell's forward and backward in its device's order.
    f_pos: Vec<u32>,
    b_pos: Vec<u32>,
    /// Rendezvous: compute end of each device's ops, by index.
    op_end: Vec<Vec<f64>>,
    /// Rendezvous: transfers a device waits to start (its receiver is not there yet).
    pending: Vec<Vec<Transfer>>,
    /// Rendezvous: devices waiting on this device's next op.
    waiters: Vec<Vec<u32>>,
    /// Interleaved rendezvous: a forward send waiting for the device's next backward.
    deferred: Vec<Option<Transfer>>,
    /// Interleaved rendezvous: whether the device has steady rounds (a forward paired with
    /// a backward); one that runs every forward in its warm-up exchanges after each op.
    rounds: Vec<bool>,
}

impl Transfers {
    /// The state for `sched`, with blocking sends or not.
    pub fn new(sched: &Schedule, blocking: bool) -> Self {
        let mode = match (blocking, sched.kind) {
            (false, _) => Mode::Overlapped,
            (true, ScheduleKind::OneFOneB | ScheduleKind::Interleaved) => Mode::Rendezvous,
            (true, _) => Mode::Held,
        };
        let m = sched.m as usize;
        let cells = sched.stages() as usize * m;
        let p = sched.p as usize;
        let mut t = Self {
            mode,
            f_arrive: vec![PENDING; cells],
            b_arrive: vec![PENDING; cells],
            f_pos: Vec::new(),
            b_pos: Vec::new(),
            op_end: Vec::new(),
            pending: Vec::new(),
            waiters: Vec::new(),
            deferred: Vec::new(),
            rounds: Vec::new(),
        };
        if mode == Mode::Rendezvous {
            t.f_pos = vec![0; cells];
            t.b_pos = vec![0; cells];
            t.rounds = sched
                .devices
                .iter()
                .map(|ops| {
                    let warmup = ops.iter().take_while(|o| o.kind == OpKind::F).count();
                    let forwards = ops.iter().filter(|o| o.kind == OpKind::F).count();
                    sched.kind == ScheduleKind::Interleaved && warmup < forwards
                })
                .collect();
            for (d, ops) in sched.devices.iter().enumerate() {
                for (i, op) in ops.iter().enumerate() {
                    let stage = sched.stage_of(d as u32, op.chunk, op.micro_batch);
                    let cell = stage as usize * m + op.micro_batch as usize;
                    // An interleaved round (a forward, then a backward, then the exchange)
                    // receives its backward's gradient in the exchange before the round.
                    let round_start = t.rounds[d] && i > 0 && ops[i - 1].kind == OpKind::F;
                    match op.kind {
                        OpKind::F => t.f_pos[cell] = index(i),
                        OpKind::B | OpKind::BW if round_start => t.b_pos[cell] = index(i - 1),
                        OpKind::B | OpKind::BW => t.b_pos[cell] = index(i),
                        OpKind::W => {}
                    }
                }
            }
            t.op_end = sched
                .devices
                .iter()
                .map(|ops| vec![PENDING; ops.len()])
                .collect();
            t.pending = vec![Vec::new(); p];
            t.waiters = vec![Vec::new(); p];
            t.deferred = vec![None; p];
        }
        t
    }

    /// Whether sends run beside their senders' next ops (no blocking send, no rendezvous):
    /// then a tensor arrives `comm` after its op ends, and nothing else is kept per device.
    pub fn overlapped(&self) -> bool {
        self.mode == Mode::Overlapped
    }

    /// Sets when what `slot` names arrives (a figures-only run, for the cells of the
    /// periods it jumped over).
    pub fn set_arrival(&mut self, slot: Slot, at: f64) {
        match slot {
            Slot::Forward(c) => self.f_arrive[c] = at,
            Slot::Backward(c) => self.b_arrive[c] = at,
        }
    }

    /// When the forward output of `cell` is on the next stage's device.
    pub fn forward_arrival(&self, cell: usize) -> f64 {
        self.f_arrive[cell]
    }

    /// When the input gradient of `cell` is on the previous stage's device.
    pub fn backward_arrival(&self, cell: usize) -> f64 {
        self.b_arrive[cell]
    }

    /// Whether a forward of device `d` sends its output after the backward that follows it
    /// (a steady round of the interleaved schedule), given whether the next op is a backward.
    pub fn defers_forward(&self, d: u32, next_is_backward: bool) -> bool {
        next_is_backward && self.rounds.get(d as usize).copied().unwrap_or(false)
    }

    /// Keeps a forward send of `d` for its next backward's exchange.
    pub fn defer(&mut self, d: u32, transfer: Transfer) {
        self.deferred[d as usize] = Some(transfer);
    }

    /// The forward send `d` kept for this exchange, ready at `at`.
    pub fn take_deferred(&mut self, d: u32, at: f64) -> Option<Transfer> {
        let t = self.deferred.get_mut(d as usize)?.take()?;
        Some(Transfer { at, ..t })
    }

    /// Records that device `d` finished its op number `index` (compute) at `end`; returns the
    /// devices that waited for it.
    pub fn op_done(&mut self, d: u32, index: usize, end: f64) -> Vec<u32> {
        if self.mode != Mode::Rendezvous {
            return Vec::new();
        }
        if let Some(slot) = self.op_end[d as usize].get_mut(index) {
            *slot = end;
        }
        std::mem::take(&mut self.waiters[d as usize])
    }

    /// Places `t` from device `d`, pushing its span onto `spans`: returns when the sender may
    /// go on (`None`: it need not wait) and whether the receiver should be woken; with a
    /// rendezvous whose receiver is not there yet the transfer is kept as pending and
    /// `(None, false)` comes back.
    pub fn send(&mut self, d: u32, t: Transfer, spans: &mut Vec<Span>) -> (Option<f64>, bool) {
        let start = match self.mode {
            Mode::Overlapped | Mode::Held => t.at,
            Mode::Rendezvous => {
                let posted = self.posted(t);
                if posted == PENDING {
                    self.pending[d as usize].push(t);
                    self.waiters[t.to as usize].push(d);
                    return (None, false);
                }
                t.at.max(posted)
            }
        };
        let end = start + t.comm;
        match t.slot {
            Slot::Forward(c) => self.f_arrive[c] = end,
            Slot::Backward(c) => self.b_arrive[c] = end,
        }
        if t.comm > 0.0 {
            spans.push(Span {
                device: d,
                lane: Lane::Send,
                kind: SpanKind::Send,
                micro_batch: t.mb,
                chunk: t.chunk,
                start,
                end,
                paired: false,
            });
        }
        let hold = match self.mode {
            Mode::Overlapped => None,
            Mode::Held => (t.comm > 0.0).then_some(end),
            Mode::Rendezvous => Some(end),
        };
        (hold, true)
    }

    /// Retries device `d`'s pending transfers: the hold of those that could start (when `d`
    /// may go on, at the earliest) and their receivers to wake; [`Transfers::is_waiting`]
    /// says whether some still wait.
    pub fn resolve(&mut self, d: u32, spans: &mut Vec<Span>) -> (Option<f64>, Vec<u32>) {
        if self.mode != Mode::Rendezvous || self.pending[d as usize].is_empty() {
            return (None, Vec::new());
        }
        let list = std::mem::take(&mut self.pending[d as usize]);
        let mut hold: Option<f64> = None;
        let mut woken = Vec::new();
        for t in list {
            let (h, wake) = self.send(d, t, spans);
            if wake {
                woken.push(t.to);
            }
            hold = later(hold, h);
        }
        (hold, woken)
    }

    /// Whether device `d` still waits to start a transfer.
    pub fn is_waiting(&self, d: u32) -> bool {
        self.pending
            .get(d as usize)
            .is_some_and(|list| !list.is_empty())
    }

    /// When the receiver of `t` has posted its receive: the compute end of its op before the
    /// one that reads the tensor (0 when that op is its first).
    fn posted(&self, t: Transfer) -> f64 {
        let pos = match t.slot {
            Slot::Forward(_) => self.f_pos[t.reader],
            Slot::Backward(_) => self.b_pos[t.reader],
        } as usize;
        match pos.checked_sub(1) {
            None => 0.0,
            Some(i) => self.op_end[t.to as usize]
                .get(i)
                .copied()
                .unwrap_or(PENDING),
        }
    }
}

fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The later of two optional times.
pub(crate) fn later(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
#[path = "transfers_tests.rs"]
mod tests;
