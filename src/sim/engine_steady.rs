//! The figures-only run: simulate the warm-up and a few steady periods, prove that the run
//! repeats itself there, jump over the periods that follow, and simulate the rest.
//!
//! With overlapped sends, no host copies and no overlapped pairs, every op's end is a
//! max-plus function of the ends it reads (its device's previous op, the op whose output it
//! takes, plus the transfer time), and the order repeats (`period`). So when the ends of
//! `lag` consecutive periods on every device are those of the periods before, shifted by
//! one time `T` (up to rounding), every later period of the stretch is the one before
//! shifted by `T`: an op of a later period reads only ops at most `lag` periods back, all
//! of them already shifted copies. The run then writes the ends that the ops after the jump
//! read (what the skipped periods produced, shifted by whole periods), adds the skipped
//! periods' compute time, and goes on. The peaks come out exactly: without copies a
//! device's memory changes in its op order, every steady period changes it by zero, and the
//! skipped periods walk the same levels as the last simulated one. Times agree with the
//! full run up to rounding: the check allows a few units in the last place per op, and a
//! max-plus map does not stretch a difference, so `k` skipped periods move a time by at
//! most `k` times that.

use super::super::transfers::Slot;
use super::super::types::SpanKind;
use super::{Engine, MemEvent, PENDING};
use crate::schedule::OpKind;
use crate::schedule::period::{Period, Positions};

/// Steady periods tried after the first one the dependencies allow, before giving up (the
/// full run goes on from where the tries stopped). A run with unlike stage costs may take
/// a few hundred periods to settle into its cycle (V-shapes at p 8 do).
const TRIES: usize = 400;

/// Longest cycle, in periods, that a run is tried for.
const CYCLES: usize = 6;

/// A write the jump makes: the end of a skipped op that an op after the jump reads.
struct Write {
    device: usize,
    index: usize,
    end: f64,
}

impl Engine<'_> {
    /// Runs the whole order, jumping over the steady periods it proves to repeat.
    pub(super) fn run_skipping(&mut self) {
        let simple = self.tx.overlapped() && self.sched.pairs.iter().all(Vec::is_empty);
        if simple && let Some(steady) = self.sched.steady_state_kept() {
            self.try_jump(&steady.period, &steady.positions);
        }
        self.limit.iter_mut().for_each(|l| *l = usize::MAX);
        self.log = Vec::new();
        self.drain();
    }

    /// Simulates period by period until `lag` periods repeat (or, as a max-plus run may,
    /// `lag` runs of `c` periods, for `c` up to [`CYCLES`]), then jumps; stops trying
    /// (leaving the run where it is, to go on in full) after [`TRIES`] periods.
    fn try_jump(&mut self, base: &Period, pos: &Positions) {
        // Every period of the stretch holds the same ops (kinds and chunks), so all change
        // the memory alike, and so do runs of `c` of them: when one does not leave it as
        // it found it, no try can jump.
        if !self.steady_memory(base, base.first) {
            return;
        }
        self.log = vec![Vec::new(); self.sched.p as usize];
        self.limit.iter_mut().for_each(|l| *l = 0);
        for from in base.first..=base.first + TRIES {
            for c in 1..=CYCLES {
                let Some(per) = base.scaled(c, from) else {
                    continue;
                };
                if self.attempt(&per, pos) {
                    return;
                }
            }
        }
    }

    /// Runs on to where periods `0 ..= lag` of `per` are simulated and, when period
    /// `1 ..= lag` repeat the ones before, jumps; returns whether it did.
    fn attempt(&mut self, per: &Period, pos: &Positions) -> bool {
        let p = self.sched.p as usize;
        let last = per.lag;
        // Devices run `lead` periods further, for the ops of period `last` that read
        // ahead; one period at least to jump over, and one simulated after it.
        let ahead = last + 1 + per.lead;
        if ahead + 2 > per.count {
            return false;
        }
        for d in 0..p {
            self.limit[d] = self.limit[d].max(per.at(d, ahead));
        }
        self.drain();
        let reached = (0..p).all(|d| self.log[d].len() >= per.at(d, last + 1));
        if !reached {
            return false;
        }
        match self.shift(per, 0, last) {
            Some(t) => self.jump(per, pos, last, t),
            None => false,
        }
    }

    /// The time `T` by which periods `from + 1 ..= last` repeat periods `from .. last` on
    /// every device, if they do (up to rounding). The devices are asked from the one that
    /// failed the last try on (the one still settling, as a rule), which changes nothing but
    /// how soon a failing try stops.
    fn shift(&mut self, per: &Period, from: usize, last: usize) -> Option<f64> {
        let i0 = per.at(0, from);
        let t = self.log[0][i0 + per.len[0]].0 - self.log[0][i0].0;
        if !(t.is_finite() && t >= 0.0) {
            return None;
        }
        let p = self.log.len();
        for d in (self.unsettled..p).chain(0..self.unsettled) {
            let (log, len) = (&self.log[d], per.len[d]);
            // Rounding: half a unit in the last place per op along a period, with room.
            let ulps = (16 + 2 * len) as f64 * f64::EPSILON;
            let differs = (per.at(d, from)..per.at(d, last)).any(|i| {
                let (a, b) = (log[i].0, log[i + len].0);
                (b - a - t).abs() > ulps * b.abs()
            });
            if differs {
                self.unsettled = d;
                return None;
            }
        }
        Some(t)
    }

    /// Whether period `k` leaves every device's kept bytes and live count as it found
    /// them (then every repeat of it walks the same levels).
    fn steady_memory(&self, per: &Period, k: usize) -> bool {
        (0..self.sched.p as usize)
            .all(|d| self.memory_change(d, per.at(d, k)..per.at(d, k + 1)) == (0, 0))
    }

    /// How device `d`'s ops `ops` change its kept bytes and live count.
    fn memory_change(&self, d: usize, ops: std::ops::Range<usize>) -> (i64, i32) {
        let (mut bytes, mut count) = (0i64, 0i32);
        for op in &self.sched.devices[d][ops] {
            let c = &self.costs[d * self.v + op.chunk as usize];
            let (b, n) = match op.kind {
                OpKind::F => (c.act, 1),
                OpKind::B => (-c.b_free, 0),
                OpKind::BW => (-c.act, -1),
                OpKind::W => (c.b_free - c.act, -1),
            };
            bytes += b;
            count += n;
        }
        (bytes, count)
    }

    /// The end of device `d`'s op number `i`: logged, or (in a skipped period) that of its
    /// repeat in period `last` shifted by `t` per period.
    fn end_of(&self, per: &Period, last: usize, t: f64, d: usize, i: usize) -> Option<f64> {
        if let Some(&(end, _)) = self.log[d].get(i) {
            return Some(end);
        }
        let k = per.of(d, i)?;
        let back = k.checked_sub(last)?;
        let (end, _) = *self.log[d].get(i - back * per.len[d])?;
        Some(end + back as f64 * t)
    }

    /// Jumps from where the devices stopped (after period `last`, the last one checked) to
    /// the start of the stretch's last period: the ends the ops from there on read, the
    /// devices' clocks and the compute time skipped. Changes nothing (and returns false)
    /// when some end it needs is not known or a device is already past that start.
    fn jump(&mut self, per: &Period, pos: &Positions, last: usize, t: f64) -> bool {
        let p = self.sched.p as usize;
        let resume = per.count - 1;
        let mut writes = Vec::new();
        let mut devices = Vec::with_capacity(p);
        for d in 0..p {
            let cut = per.at(d, resume);
            let Some(clock) = self.end_of(per, last, t, d, cut - 1) else {
                return false;
            };
            // From where this device stopped (inside period `k`, perhaps at its start) up to
            // the resume: the rest of period `k`, then whole periods, each the repeat of
            // the same ops in period `last`.
            let stopped = self.log[d].len();
            let Some(k) = per.of(d, stopped).filter(|&k| k < resume && k > last) else {
                return false;
            };
            let shift = (k - last) * per.len[d];
            let rest = self.compute_of(d, stopped - shift..per.at(d, k + 1) - shift);
            let whole = self.compute_of(d, per.at(d, last)..per.at(d, last + 1));
            let n = (resume - k - 1) as f64;
            // The rest of period `k` changes the memory (whole periods do not): one event
            // at the resume brings the level to where the skipped ops leave it; the levels
            // in between are those of period `last`.
            let change = self.memory_change(d, stopped..per.at(d, k + 1));
            let elided = (rest.0 + n * whole.0, rest.1 + n * whole.1);
            devices.push((clock, elided, change));
            for &op in &self.sched.devices[d][cut..] {
                let stage = self.sched.stage_of(d as u32, op.chunk, op.micro_batch);
                let Some((pd, pi)) = pos.producer(self.sched, op, stage) else {
                    continue;
                };
                let (pd, pi) = (pd as usize, pi as usize);
                if pi >= per.at(pd, resume) || pi < self.log[pd].len() {
                    // Run after the jump, or before it: the run itself keeps its end.
                    continue;
                }
                let Some(end) = self.end_of(per, last, t, pd, pi) else {
                    return false;
                };
                writes.push(Write {
                    device: pd,
                    index: pi,
                    end,
                });
            }
        }
        for w in writes {
            self.write_end(w);
        }
        for (d, (clock, elided, (bytes, count))) in devices.into_iter().enumerate() {
            let run = &mut self.runs[d];
            run.busy += elided.0 + elided.1;
            run.elided = elided;
            if (bytes, count) != (0, 0) {
                run.events.push(MemEvent {
                    t: clock,
                    bytes,
                    count,
                    host: 0,
                });
            }
            self.free[d] = clock;
            self.ptr[d] = per.at(d, resume);
        }
        true
    }

    /// Compute time of the spans of device `d`'s (simulated) ops `ops`: other than
    /// recomputation, and recomputation.
    fn compute_of(&self, d: usize, ops: std::ops::Range<usize>) -> (f64, f64) {
        let mark = |i: usize| match i.checked_sub(1) {
            Some(j) => self.log[d][j].1,
            None => 0,
        };
        let spans = &self.runs[d].compute[mark(ops.start)..mark(ops.end)];
        spans.iter().fold((0.0, 0.0), |(o, r), s| {
            if s.kind == SpanKind::R {
                (o, r + (s.end - s.start))
            } else {
                (o + (s.end - s.start), r)
            }
        })
    }

    /// Stores the end of a skipped op where the ops that read it look: its own cell, and
    /// the arrival on the other device.
    fn write_end(&mut self, w: Write) {
        let op = self.sched.devices[w.device][w.index];
        let d = w.device as u32;
        let stage = self.sched.stage_of(d, op.chunk, op.micro_batch);
        let cell = self.cell(stage, op.micro_batch);
        match op.kind {
            OpKind::F => {
                self.f_end[cell] = w.end;
                if stage + 1 < self.stages && self.sched.locate(stage + 1, op.micro_batch).0 != d {
                    let at = w.end + self.comm_at(stage);
                    self.tx.set_arrival(Slot::Forward(cell), at);
                }
            }
            OpKind::B | OpKind::BW => {
                self.b_end[cell] = w.end;
                if stage > 0 && self.sched.locate(stage - 1, op.micro_batch).0 != d {
                    let at = w.end + self.comm_at(stage - 1);
                    self.tx.set_arrival(Slot::Backward(cell), at);
                }
            }
            OpKind::W => {}
        }
        debug_assert!(w.end < PENDING);
    }
}
