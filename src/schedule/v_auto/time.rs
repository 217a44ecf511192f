//! Scores a V-ZB candidate straight from its rows (`evaluate_schedule` in
//! `scheduler/v_auto_schedule.py`): one left-to-right sweep over the slots times every pass
//! by list scheduling, without building a [`Schedule`](crate::schedule::Schedule) first.
//!
//! The candidates that reach scoring place every pass after its dependency (the squeeze and
//! the greedy reordering keep that), so one sweep meets each dependency before the pass that
//! needs it. Each start is `max(device free, dependency end (+ comm across devices))`, the
//! same numbers as `list_timing::time_schedule`; a sweep that meets a pass before its
//! dependency gives up (`None`) and the caller times the schedule the general way.

use super::steps::ix;
#[cfg(test)]
use super::steps::{EMPTY, Rows};
use crate::schedule::ScheduleInput;
use crate::schedule::search_input::cost;

/// Device `d`'s cost of each pass kind in [`ix`] order: F f B b W w (the second chunk's B
/// and W come before the first chunk's, as the V runs back through the device).
fn device_costs(input: &ScheduleInput, d: usize) -> [f64; 6] {
    [
        cost(&input.f, d, 0),
        cost(&input.f, d, 1),
        cost(&input.b, d, 1),
        cost(&input.b, d, 0),
        cost(&input.w, d, 1),
        cost(&input.w, d, 0),
    ]
}

/// The list-scheduling timer fed one pass at a time, in slot order (column by column,
/// devices in order within a column), as [`sweep_span`] and the fused last steps of the
/// search (`score`) use it.
pub(super) struct Sweep {
    p: usize,
    m: usize,
    comm: f64,
    costs: Vec<[f64; 6]>,
    /// end[mb * p + device][kind] for F f B b; NaN while not done.
    end: Vec<[f64; 4]>,
    cnt: Vec<[usize; 6]>,
    free: Vec<f64>,
    first: Vec<f64>,
    last_w: Vec<f64>,
    /// Work still to come per device (all `m` passes of each kind, less those timed).
    left: Vec<f64>,
    /// Whether every cost is finite and not negative (the bound in [`Sweep::cannot_beat`]
    /// needs it).
    costs_ok: bool,
}

impl Sweep {
    /// A timer for `p` devices and `m` micro-batches under `input`'s costs.
    pub(super) fn new(input: &ScheduleInput, p: usize, m: usize) -> Self {
        let costs: Vec<[f64; 6]> = (0..p).map(|d| device_costs(input, d)).collect();
        let costs_ok = costs.iter().flatten().all(|c| c.is_finite() && *c >= 0.0);
        let left = costs
            .iter()
            .map(|c| c.iter().sum::<f64>() * m as f64)
            .collect();
        Self {
            p,
            m,
            comm: input.comm,
            costs,
            end: vec![[f64::NAN; 4]; p * m],
            cnt: vec![[0usize; 6]; p],
            free: vec![0.0; p],
            first: vec![f64::NAN; p],
            last_w: vec![f64::NEG_INFINITY; p],
            left,
            costs_ok,
        }
    }

    /// Times pass `c` (a slot character) on device `i`: it starts when the device is free
    /// and its dependency has ended (plus the transfer time across devices). Says whether
    /// the device waited for the dependency (only a wait raises the bound
    /// [`Sweep::cannot_beat`] checks); `None` when the dependency is not timed yet or the
    /// kind already had `m` passes.
    #[inline]
    pub(super) fn pass(&mut self, i: usize, c: u8) -> Option<bool> {
        let p = self.p;
        let k = ix(c);
        let mb = self.cnt[i][k];
        if mb >= self.m {
            return None;
        }
        self.cnt[i][k] = mb + 1;
        let at = |device: usize, kind: usize| self.end[mb * p + device][kind];
        let (dep, remote) = match c {
            b'F' if i == 0 => (0.0, false),
            b'F' => (at(i - 1, 0), true),
            b'f' if i + 1 == p => (at(i, 0), false),
            b'f' => (at(i + 1, 1), true),
            b'B' if i == 0 => (at(i, 1), false),
            b'B' => (at(i - 1, 2), true),
            b'b' if i + 1 == p => (at(i, 2), false),
            b'b' => (at(i + 1, 3), true),
            b'W' => (at(i, 2), false),
            _ => (at(i, 3), false),
        };
        if dep.is_nan() {
            return None;
        }
        let ready = if remote { dep + self.comm } else { dep };
        let waited = ready > self.free[i];
        let t0 = self.free[i].max(ready);
        let cost = self.costs[i][k];
        let t1 = t0 + cost;
        self.free[i] = t1;
        self.left[i] -= cost;
        if let Some(e) = self.end[mb * p + i].get_mut(k) {
            *e = t1;
        }
        if k < 2 && self.first[i].is_nan() {
            self.first[i] = t0;
        }
        if k >= 4 {
            self.last_w[i] = self.last_w[i].max(t1);
        }
        Some(waited)
    }

    /// Whether device `i`'s span, once every pass is timed, is sure to be at least `best`
    /// (so the candidate cannot replace a best of `best`: only a smaller span does).
    /// The answer is sound whenever it is asked, so checking only after a pass that waited
    /// (as the search does) can only give up later, never wrongly: without a wait the
    /// device's free time grows by the pass's cost and its work left falls by as much, so
    /// the bound moves by rounding alone.
    ///
    /// The device's last pass is a weight pass (each B has its W after it, or the candidate
    /// is dropped) and ends no earlier than the device is free now plus the work it has
    /// left. In floating point each later end is rounded from a sum of non-negative terms,
    /// so it loses at most a relative `n u` (n passes, u = 2^-53: below 3e-9 for the 2^25
    /// passes the size limits allow), as does the work left, summed the same way; the
    /// margin of 1e-6 of the times covers that many times over.
    #[inline]
    pub(super) fn cannot_beat(&self, i: usize, best: f64) -> bool {
        let (first, reach) = (self.first[i], self.free[i] + self.left[i]);
        self.costs_ok && !first.is_nan() && reach - first - 1e-6 * (reach + first) > best
    }

    /// The longest device span, from the start of its first forward to the end of its last
    /// weight pass; `None` if a device has no forward.
    pub(super) fn span(&self) -> Option<f64> {
        let mut span = 0.0f64;
        for (&f, &w) in self.first.iter().zip(&self.last_w) {
            if f.is_nan() {
                return None;
            }
            span = span.max(w - f);
        }
        Some(span)
    }
}

/// The longest device span (start of its first forward to the end of its last weight pass)
/// of `rows` with `m` micro-batches under `input`'s costs; `None` when a pass comes before
/// its dependency or a kind has more than `m` passes (the search runs [`Sweep`] itself,
/// slot by slot; this checks it in tests).
#[cfg(test)]
pub(super) fn sweep_span(rows: &Rows, input: &ScheduleInput, m: usize) -> Option<f64> {
    let p = rows.len();
    let len = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut sweep = Sweep::new(input, p, m);
    for j in 0..len {
        for (i, row) in rows.iter().enumerate() {
            match row.get(j) {
                Some(&c) if c != EMPTY => {
                    sweep.pass(i, c)?;
                }
                _ => continue,
            }
        }
    }
    sweep.span()
}

/// A score no candidate can go below, when the sweep's arithmetic is exact: the most work
/// one device holds (`m` passes of each of its six kinds). Every pass of a device lies between
/// its first forward and its last weight pass, so a device's span is its work plus its idle
/// time. `None` unless every cost and the transfer time are whole multiples of 2^-32 and
/// every time the sweep can reach stays below 2^20: then every sum and difference the
/// scorer forms is exact, and a candidate scoring this bound cannot be beaten (a tie never
/// replaces the best), which lets the search stop there.
pub(super) fn exact_work_bound(input: &ScheduleInput, p: usize, m: usize) -> Option<f64> {
    const SCALE: f64 = 4_294_967_296.0; // 2^32
    const MAX_TIME: f64 = 1_048_576.0; // 2^20
    let exact = |x: f64| x.is_finite() && x >= 0.0 && (x * SCALE).fract() == 0.0;
    if !exact(input.comm) {
        return None;
    }
    let mut bound = 0.0f64;
    let mut total = 0.0f64;
    for d in 0..p {
        let costs = device_costs(input, d);
        if !costs.iter().all(|&c| exact(c) && c < MAX_TIME) {
            return None;
        }
        let work: f64 = costs.iter().sum::<f64>() * m as f64;
        bound = bound.max(work);
        total += work + 6.0 * m as f64 * input.comm;
        if total >= MAX_TIME {
            return None;
        }
    }
    Some(bound)
}
