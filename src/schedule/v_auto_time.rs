//! Scores a V-ZB candidate straight from its rows (`evaluate_schedule` in
//! `scheduler/v_auto_schedule.py`): one left-to-right sweep over the slots times every pass
//! by list scheduling, without building a [`Schedule`](super::Schedule) first.
//!
//! The candidates that reach scoring place every pass after its dependency (the squeeze and
//! the greedy reordering keep that), so one sweep meets each dependency before the pass that
//! needs it. Each start is `max(device free, dependency end (+ comm across devices))`, the
//! same numbers as `list_timing::time_schedule`; a sweep that meets a pass before its
//! dependency gives up (`None`) and the caller times the schedule the general way.

use super::ScheduleInput;
use super::search_input::cost;
use super::v_auto_steps::{EMPTY, Rows, ix};

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

/// The longest device span (start of its first forward to the end of its last weight pass)
/// of `rows` with `m` micro-batches under `input`'s costs; `None` when a pass comes before
/// its dependency or a kind has more than `m` passes.
pub(super) fn sweep_span(rows: &Rows, input: &ScheduleInput, m: usize) -> Option<f64> {
    let p = rows.len();
    let len = rows.iter().map(Vec::len).max().unwrap_or(0);
    let costs: Vec<[f64; 6]> = (0..p).map(|d| device_costs(input, d)).collect();
    // end[mb * p + device][kind] for F f B b; NaN while not done.
    let mut end = vec![[f64::NAN; 4]; p * m];
    let mut cnt = vec![[0usize; 6]; p];
    let mut free = vec![0.0f64; p];
    let mut first = vec![f64::NAN; p];
    let mut last_w = vec![f64::NEG_INFINITY; p];
    for j in 0..len {
        for i in 0..p {
            let c = match rows[i].get(j) {
                Some(&c) if c != EMPTY => c,
                _ => continue,
            };
            let k = ix(c);
            let mb = cnt[i][k];
            if mb >= m {
                return None;
            }
            cnt[i][k] = mb + 1;
            let at = |device: usize, kind: usize| end[mb * p + device][kind];
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
            let ready = if remote { dep + input.comm } else { dep };
            let t0 = free[i].max(ready);
            let t1 = t0 + costs[i][k];
            free[i] = t1;
            if let Some(e) = end[mb * p + i].get_mut(k) {
                *e = t1;
            }
            if k < 2 && first[i].is_nan() {
                first[i] = t0;
            }
            if k >= 4 {
                last_w[i] = last_w[i].max(t1);
            }
        }
    }
    let mut span = 0.0f64;
    for (&f, &w) in first.iter().zip(&last_w) {
        if f.is_nan() {
            return None;
        }
        span = span.max(w - f);
    }
    Some(span)
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
