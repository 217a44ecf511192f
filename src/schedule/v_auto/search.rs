//! The search loop (`schedule` in `scheduler/v_auto_schedule.py`) and its first steps.
//!
//! Enumerates device 0's 6-slot pattern (F at 0; f, B, b anywhere else; W/w in the next free
//! slot after B/b) and uniform device-to-device offsets `[k, -1, k, -1]` (k = 1..5) in two
//! regimes (the first `len_0` devices use one, the rest another), builds each building
//! block, repeats it, clears invalid copies, squeezes, reorders the warm-up, drops the
//! redundant micro-batches, reorders the cool-down, fills holes greedily without raising the
//! peak, and keeps the candidates within the memory limit (chunk-activations, default 2p).
//! The one with the smallest longest device span under the given costs wins.

use std::collections::HashMap;

use super::finish::{release_w, remove_redundancy};
use super::score::{Finish, finish};
use super::squeeze::{Squeezed, squeeze_edited_head, squeeze_state};
use super::steps::{
    Cooled, EMPTY, Rows, SLOTS, clear_invalid, cleared_peak, cooldown, process_warmup, repeat,
};
use super::time::exact_work_bound;
use super::v_half_floor::at_least_v_half;
use crate::cancel::Cancel;
use crate::schedule::list_timing::time_schedule;
use crate::schedule::search_input::{check_basic, check_v_shape, mem_limit, op, schedule};
use crate::schedule::{
    Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind,
};

const OFFSETS: [[i64; 4]; 5] = [
    [1, -1, 1, -1],
    [2, -1, 2, -1],
    [3, -1, 3, -1],
    [4, -1, 4, -1],
    [5, -1, 5, -1],
];

/// Generates `v-zb`, checking `cancel` between candidates (each takes at most milliseconds
/// within the size limit): the search's winner, or V-Half's order where that is faster
/// (see [`at_least_v_half`]).
pub(crate) fn generate(input: &ScheduleInput, cancel: &Cancel) -> Result<Schedule, ScheduleError> {
    let searched = search(input, cancel, true, true);
    match mem_limit(ScheduleKind::VZb, input, 2.0 * f64::from(input.p)) {
        Ok(limit) => at_least_v_half(input, whole_peak(limit), searched),
        Err(_) => searched,
    }
}

/// The largest whole peak within `limit` chunk-activations (peaks are whole numbers, so a
/// fractional limit rounds down).
fn whole_peak(limit: f64) -> i64 {
    limit.floor().clamp(-1.0, 1e9) as i64
}

/// The search; with `stop_early`, it stops at a candidate no later one can beat (see
/// [`exact_work_bound`]), and with `prune`, it gives up on a candidate once its span is sure
/// not to beat the best so far (see [`finish`]): both give the result of trying them all.
fn search(
    input: &ScheduleInput,
    cancel: &Cancel,
    stop_early: bool,
    prune: bool,
) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::VZb;
    check_basic(kind, input)?;
    check_v_shape(kind, input)?;
    let (p, m) = (input.p as usize, input.m as usize);
    let limit = mem_limit(kind, input, 2.0 * p as f64)?;
    let max_mem = whole_peak(limit);
    let two_p = 2 * p as i64;
    let mut best: Option<(f64, Rows)> = None;
    // Peaks reported for the repeated rows already tried (keyed by the first slots that
    // `clear_invalid` gives, which describe the rows whole).
    let mut seen = HashMap::new();
    // A candidate scoring this cannot be beaten: the search stops there.
    let floor = exact_work_bound(input, p, m).filter(|_| stop_early);
    'search: for pattern0 in starting_patterns() {
        for (i0, &offset0) in OFFSETS.iter().enumerate() {
            for &offset1 in &OFFSETS[..=i0] {
                for len0 in 1..p {
                    // With both regimes equal every len_0 builds the same block, and the
                    // source's result for it repeats: only the first can count.
                    if offset0 == offset1 && len0 > 1 {
                        break;
                    }
                    cancel.check()?;
                    let Some(block) = building_block(pattern0, offset0, offset1, len0, p) else {
                        continue;
                    };
                    let (rows, peak_mem) =
                        by_building_block(p, m, &block, two_p.min(max_mem), &mut seen);
                    if peak_mem > two_p || peak_mem > max_mem {
                        break;
                    }
                    let Some((rows, init_peak)) = rows else {
                        continue;
                    };
                    let bound = best.as_ref().map(|(b, _)| *b).filter(|_| prune);
                    let Finish::Done(rows, span) = finish(rows, m, init_peak, input, bound) else {
                        continue;
                    };
                    let span = span.or_else(|| longest_span(&to_schedule(input, &rows), input));
                    let Some(span) = span else { continue };
                    if best.as_ref().is_none_or(|(b, _)| span < *b) {
                        best = Some((span, rows));
                        if floor.is_some_and(|f| span <= f) {
                            break 'search;
                        }
                    }
                }
            }
        }
    }
    best.map(|(_, rows)| to_schedule(input, &rows))
        .ok_or(ScheduleError::NoFit {
            schedule: kind,
            limit,
        })
}

/// Device 0's patterns: F at slot 0, f, B, b at distinct slots 1..5, W/w after B/b.
fn starting_patterns() -> Vec<[i64; 6]> {
    let mut out = Vec::with_capacity(60);
    for ff in 1..6 {
        for b in 1..6 {
            for bb in 1..6 {
                if ff == b || ff == bb || b == bb {
                    continue;
                }
                out.push(fill_w([0, ff, b, bb, -1, -1]));
            }
        }
    }
    out
}

/// `fill_w_in_building_block`: W (w) in the first free slot at or after B (b), cyclically.
fn fill_w(mut pattern: [i64; 6]) -> [i64; 6] {
    let mut used = [false; SLOTS];
    for &v in pattern.iter().filter(|v| **v >= 0) {
        used[v as usize] = true;
    }
    for (v, vw) in [(2, 4), (3, 5)] {
        for j in 0..SLOTS as i64 {
            let pos = ((pattern[v] + j) % SLOTS as i64) as usize;
            if !used[pos] {
                pattern[vw] = pos as i64;
                used[pos] = true;
                break;
            }
        }
    }
    pattern
}

/// `get_building_block`: each next device's F, f, B, b slots shifted by the offsets.
fn building_block(
    pattern0: [i64; 6],
    offset0: [i64; 4],
    offset1: [i64; 4],
    len0: usize,
    p: usize,
) -> Option<Vec<[i64; 6]>> {
    let mut block = vec![pattern0];
    for i in 0..p - 1 {
        let last = block[i];
        let offset = if i < len0 { offset0 } else { offset1 };
        let mut new = [-1i64; 6];
        let mut used = [false; SLOTS];
        for (v, &o) in offset.iter().enumerate() {
            let pos = (last[v] + o + SLOTS as i64).rem_euclid(SLOTS as i64);
            if std::mem::replace(&mut used[pos as usize], true) {
                return None;
            }
            new[v] = pos;
        }
        block.push(fill_w(new));
    }
    Some(block)
}

/// `schedule_by_building_block` up to its last steps ([`finish`]): the rows with the peak
/// they may not exceed (if the candidate survives so far), and the peak the source reports
/// for it. The last steps only drop candidates with a peak of at most that limit, which
/// the search treats as any other dropped candidate: they are left to the caller.
///
/// Different blocks often leave the same rows once the invalid copies are cleared; every
/// later step depends on those rows alone, so a repeat reports the peak remembered in
/// `seen` and no rows (its span would tie the first one's, and a tie never replaces the
/// best).
fn by_building_block(
    p: usize,
    m: usize,
    block: &[[i64; 6]],
    max_mem: i64,
    seen: &mut HashMap<Vec<u32>, i64>,
) -> (Option<(Cooled, i64)>, i64) {
    let two_p = 2 * p as i64;
    let redundant_m = m.max(2 * p);
    let mut rows = repeat(block, redundant_m);
    let Some(key) = clear_invalid(&mut rows, redundant_m) else {
        return (None, 0);
    };
    if let Some(&reported) = seen.get(&key) {
        return (None, reported);
    }
    let init_peak = cleared_peak(&key, rows.first().map_or(0, Vec::len), redundant_m);
    let (rows, reported) = if (m == redundant_m && init_peak > max_mem) || init_peak > two_p {
        (None, init_peak)
    } else {
        match build(p, m, redundant_m, rows, init_peak, max_mem) {
            Ok(rows) => (Some(rows), 0),
            Err(reported) => (None, reported),
        }
    };
    seen.insert(key, reported);
    (rows, reported)
}

/// The steps after the first peak check up to the cool-down's edits (its squeeze is left to
/// the last steps): the rows and the peak the last steps may not exceed, or `Err(peak)` to
/// drop the candidate with the peak the source reports (0 where the source would fail an
/// assertion instead; the last steps drop a candidate whose last squeeze fails, which the
/// source reports the same way).
fn build(
    p: usize,
    m: usize,
    redundant_m: usize,
    rows: Rows,
    init_peak: i64,
    max_mem: i64,
) -> Result<(Cooled, i64), i64> {
    let mut squeezed = warm_up(&rows, redundant_m, init_peak).ok_or(0)?;
    let mut init_peak = init_peak;
    let pk = squeezed.peak();
    let mut cooldown_peak = pk;
    if pk > init_peak {
        return Err(init_peak);
    }
    if m < redundant_m {
        let period = squeezed.period();
        let mut rows = squeezed.rows;
        remove_redundancy(&mut rows, m);
        if m <= p && 2 * m as i64 <= max_mem {
            release_w(&mut rows, (2 * p as i64).min(pk));
        }
        let len = rows.iter().map(Vec::len).max().unwrap_or(0);
        for row in &mut rows {
            row.resize(len, EMPTY);
        }
        squeezed = squeeze_state(&rows, m, period).ok_or(0)?;
        init_peak = squeezed.peak();
        if init_peak > max_mem {
            return Err(init_peak);
        }
        cooldown_peak = init_peak;
    }
    let cooled = cooldown(squeezed, m, cooldown_peak).ok_or(0)?;
    Ok((cooled, init_peak))
}

/// The first squeeze, the warm-up and the second squeeze of repeated, cleared rows with
/// `m` micro-batches and peak `init_peak` (a squeeze keeps each device's passes in their
/// order, and so its peak), or `None` where a step fails as the source would.
fn warm_up(rows: &Rows, m: usize, init_peak: i64) -> Option<Squeezed> {
    let first = squeeze_state(rows, m, SLOTS)?;
    // The squeezed rows repeat every `period` columns in their middle, as the next
    // squeeze's input does after the warm-up, which edits only the rows' heads.
    let period = first.period();
    let mut rows = first.rows.clone();
    process_warmup(&mut rows, m, init_peak)?;
    squeeze_edited_head(&rows, m, &first, period)
}

/// The rows as per-device ops: F/f forward of chunk 0/1, B/b backward of chunk 1/0, W/w
/// their weight passes; micro-batches numbered per kind in slot order.
fn to_schedule(input: &ScheduleInput, rows: &Rows) -> Schedule {
    let devices = rows
        .iter()
        .map(|row| {
            let mut cnt = [0usize; 6];
            row.iter()
                .filter_map(|&c| {
                    let (k, kind, chunk) = match c {
                        b'F' => (0, OpKind::F, 0),
                        b'f' => (1, OpKind::F, 1),
                        b'B' => (2, OpKind::B, 1),
                        b'b' => (3, OpKind::B, 0),
                        b'W' => (4, OpKind::W, 1),
                        b'w' => (5, OpKind::W, 0),
                        _ => return None,
                    };
                    cnt[k] += 1;
                    Some(op(kind, cnt[k] - 1, chunk))
                })
                .collect::<Vec<Op>>()
        })
        .collect();
    schedule(ScheduleKind::VZb, input, 2, Placement::VShape, devices)
}

/// `evaluate_schedule`: the longest device span, from the start of its first F to the end
/// of its last W, under the input's costs; `None` if the order deadlocks.
fn longest_span(s: &Schedule, input: &ScheduleInput) -> Option<f64> {
    let t = time_schedule(s, input).ok()?;
    let mut span = 0.0f64;
    for (d, ops) in s.devices.iter().enumerate() {
        let first = ops.iter().position(|o| o.kind == OpKind::F)?;
        let last_w = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind == OpKind::W)
            .map(|(k, _)| t.end[d][k])
            .fold(f64::NEG_INFINITY, f64::max);
        span = span.max(last_w - t.start[d][first]);
    }
    Some(span)
}

/// Every building block `generate` tries for `p` devices (for tests of the steps).
#[cfg(test)]
pub(super) fn test_blocks(p: usize) -> Vec<Vec<[i64; 6]>> {
    let mut out = Vec::new();
    for pattern0 in starting_patterns() {
        for (i0, &offset0) in OFFSETS.iter().enumerate() {
            for &offset1 in &OFFSETS[..=i0] {
                for len0 in 1..p {
                    out.extend(building_block(pattern0, offset0, offset1, len0, p));
                }
            }
        }
    }
    out
}

/// A building block's rows after the first steps (repeat, clear, squeeze, warm-up, squeeze),
/// or `None` where a step rejects it: the input of the later steps' tests.
#[cfg(test)]
pub(super) fn warmed_up(block: &[[i64; 6]], m: usize) -> Option<super::squeeze::Squeezed> {
    let mut rows = repeat(block, m);
    clear_invalid(&mut rows, m)?;
    warm_up(&rows, m, super::steps::peak(&rows))
}

/// A building block's rows after the cool-down as the search builds them for `m`
/// micro-batches on `p` devices with the default memory limit (the redundant micro-batches
/// dropped where m is below 2p), with the peak the last steps may not exceed, or `None`
/// where a step rejects it: the input of the last steps' tests.
#[cfg(test)]
pub(super) fn cooled_down(block: &[[i64; 6]], m: usize) -> Option<(Cooled, i64)> {
    let p = block.len();
    let redundant_m = m.max(2 * p);
    let mut rows = repeat(block, redundant_m);
    let firsts = clear_invalid(&mut rows, redundant_m)?;
    let init_peak = cleared_peak(&firsts, rows.first().map_or(0, Vec::len), redundant_m);
    if init_peak > 2 * p as i64 {
        return None;
    }
    build(p, m, redundant_m, rows, init_peak, 2 * p as i64).ok()
}

#[cfg(test)]
mod tests {
    use super::super::time::sweep_span;
    use super::*;

    /// The one-sweep scorer gives the list-scheduling timer's span, to the bit, on every
    /// candidate the search builds.
    #[test]
    fn the_sweep_scores_like_the_list_timer() {
        let mut compared = 0;
        for p in 2..7usize {
            for m in [1usize, 2, 3, 5, 9, 14] {
                for (f, b, w, comm) in [(1.0, 1.0, 1.0, 0.0), (1.3, 0.7, 1.9, 0.25)] {
                    let input = ScheduleInput::uniform(p as u32, m as u32, 2, f, b, w, comm);
                    let mut seen = HashMap::new();
                    for block in test_blocks(p) {
                        let (rows, _) = by_building_block(p, m, &block, 2 * p as i64, &mut seen);
                        let Some((rows, init_peak)) = rows else {
                            continue;
                        };
                        let Finish::Done(rows, fused) = finish(rows, m, init_peak, &input, None)
                        else {
                            continue;
                        };
                        let slow = longest_span(&to_schedule(&input, &rows), &input);
                        assert_eq!(sweep_span(&rows, &input, m), slow, "p={p} m={m}");
                        assert_eq!(fused, slow, "p={p} m={m}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 500, "{compared}");
    }

    /// Stopping at the work bound picks the schedule the full search picks, and the bound
    /// is only used where the scorer's arithmetic is exact.
    #[test]
    fn stopping_at_the_work_bound_changes_nothing() {
        let cancel = Cancel::default();
        let mut stopped = 0;
        for p in 2..7u32 {
            for m in [1u32, 2, 3, 4, 7, 2 * p, 3 * p] {
                for (f, b, w, comm) in [(1.0, 1.0, 1.0, 0.0), (0.5, 1.25, 0.75, 0.25)] {
                    for limit in [None, Some(f64::from(p) + 1.0), Some(f64::from(3 * p))] {
                        let mut input = ScheduleInput::uniform(p, m, 2, f, b, w, comm);
                        input.mem_limit = limit;
                        let fast = search(&input, &cancel, true, false);
                        let full = search(&input, &cancel, false, false);
                        assert_eq!(fast, full, "p={p} m={m} costs {f},{b},{w} limit {limit:?}");
                        let bound = exact_work_bound(&input, p as usize, m as usize);
                        let span = fast.ok().and_then(|s| longest_span(&s, &input));
                        stopped += usize::from(span.is_some() && span == bound);
                    }
                }
            }
        }
        assert!(stopped > 20, "{stopped}");
        let odd = ScheduleInput::uniform(4, 8, 2, 1.0, 1.1, 0.9, 0.0);
        assert_eq!(exact_work_bound(&odd, 4, 8), None);
        let unit = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        assert_eq!(exact_work_bound(&unit, 4, 8), Some(48.0));
    }

    /// Giving up on candidates that cannot beat the best so far picks the schedule that
    /// scoring every candidate picks, over uneven costs per device and chunk, transfer
    /// times and memory limits (the costs that make the search try every block).
    #[test]
    fn pruning_changes_nothing() {
        let cancel = Cancel::default();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |lo: f64, hi: f64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            lo + (hi - lo) * (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut found = 0;
        for p in 2..8u32 {
            for m in [1u32, 3, p, 2 * p, 3 * p + 1] {
                for round in 0..3 {
                    let mut input = ScheduleInput::uniform(p, m, 2, 1.0, 1.1, 0.9, 0.0);
                    if round > 0 {
                        for grid in [&mut input.f, &mut input.b, &mut input.w] {
                            for cost in grid.iter_mut().flatten() {
                                *cost = draw(0.2, 3.0);
                            }
                        }
                        input.comm = draw(0.0, 0.5);
                    }
                    if round == 2 {
                        input.mem_limit = Some(f64::from(p) + draw(0.0, f64::from(p)));
                    }
                    let pruned = search(&input, &cancel, true, true);
                    let full = search(&input, &cancel, false, false);
                    assert_eq!(pruned, full, "p={p} m={m} round {round}");
                    found += usize::from(full.is_ok());
                }
            }
        }
        assert!(found > 60, "{found}");
    }
}
