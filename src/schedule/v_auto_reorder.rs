//! V-ZB's last reordering step (`reorder_greedily_without_increasing_peak_mem` in
//! `scheduler/v_auto_schedule.py`): left to right, an idle slot takes the first later pass of
//! the same device that can move there. Rows as in `v_auto_steps`.
//!
//! The source scans forward from every idle slot until it has met each kind of pass once;
//! only the first later pass of each kind can move, so this keeps, per device and kind, the
//! positions of that kind's passes and a cursor to the first one after the current slot, and
//! looks at those (at most six) candidates in slot order: the same choice without the scan.

use super::v_auto_steps::{EMPTY, Rows, ix, mem_delta, peak};

/// Moves passes into idle slots: an idle slot takes the first later pass of the same device
/// whose dependency is already done (in an earlier slot) and which, for F/f, does not raise
/// the device's activation count to the schedule's peak before the pass's old slot.
pub(super) fn reorder_greedily(rows: &mut Rows, m: usize) {
    let p = rows.len();
    let peak_mem = peak(rows);
    let max_len = rows.first().map_or(0, Vec::len);
    // positions[i][k]: slots of kind k on device i, ascending; next[i][k]: the first of
    // them after the slot being filled.
    let mut positions = vec![[(); 6].map(|()| Vec::new()); p];
    for (i, row) in rows.iter().enumerate() {
        for (j, &c) in row.iter().enumerate().filter(|(_, c)| **c != EMPTY) {
            positions[i][ix(c)].push(j);
        }
    }
    let mut next = vec![[0usize; 6]; p];
    let mut stage_mem = vec![0i64; p];
    let mut cnt = vec![[0usize; 6]; p];
    let mut at = vec![[-1i64; 6]; p * m];
    for j in 0..max_len {
        for i in 0..p {
            let Some(&id) = rows[i].get(j) else { continue };
            if id != EMPTY {
                let c = cnt[i][ix(id)];
                cnt[i][ix(id)] = c + 1;
                if let Some(slot) = at.get_mut(c * p + i) {
                    slot[ix(id)] = j as i64;
                }
                stage_mem[i] += mem_delta(id);
                continue;
            }
            // The first later pass of each kind that may move here, in slot order.
            let c_of = |k: usize| cnt[i][k];
            let done_before = |stage: usize, k: usize, c: usize| {
                at.get(c * p + stage)
                    .is_some_and(|a| a[k] > -1 && a[k] < j as i64)
            };
            let mut movable = [(usize::MAX, 0usize); 6];
            let mut n = 0;
            for k in 0..6 {
                let list = &positions[i][k];
                while next[i][k] < list.len() && list[next[i][k]] <= j {
                    next[i][k] += 1;
                }
                if next[i][k] >= list.len() {
                    continue;
                }
                let c = c_of(k);
                // Kinds in `FfBbWw` order: F f B b W w.
                let can_move = match k {
                    0 | 2 if i > 0 => done_before(i - 1, k, c),
                    0 => true,
                    2 => c_of(1) > c,
                    1 | 3 if i + 1 < p => done_before(i + 1, k, c),
                    1 => c_of(0) > c,
                    3 => c_of(2) > c,
                    4 => c_of(2) > c,
                    _ => c_of(3) > c,
                };
                if can_move {
                    movable[n] = (list[next[i][k]], k);
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            let movable = &mut movable[..n];
            movable.sort_unstable();
            // Running activation change and its peak over the slots after j (lazily).
            let (mut scanned, mut mem, mut peak_delta) = (j + 1, 0i64, 0i64);
            for &(q, k) in movable.iter() {
                let id = rows[i][q];
                let c = cnt[i][k];
                if mem_delta(id) > 0 {
                    // The peak of the running change over the slots strictly between.
                    while scanned < q {
                        mem += mem_delta(rows[i][scanned]);
                        peak_delta = peak_delta.max(mem);
                        scanned += 1;
                    }
                    if stage_mem[i] + peak_delta >= peak_mem {
                        continue;
                    }
                }
                rows[i][j] = id;
                rows[i][q] = EMPTY;
                positions[i][k][next[i][k]] = j;
                next[i][k] += 1;
                cnt[i][k] = c + 1;
                if let Some(slot) = at.get_mut(c * p + i) {
                    slot[k] = j as i64;
                }
                stage_mem[i] += mem_delta(id);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::v_auto::test_blocks;
    use super::super::v_auto_steps::{
        clear_invalid, process_cooldown, process_warmup, repeat, squeeze,
    };
    use super::*;

    /// The source's step as written: scan forward from every idle slot.
    #[allow(clippy::needless_range_loop)]
    fn reorder_by_scan(rows: &mut Rows, m: usize) {
        let p = rows.len();
        let peak_mem = peak(rows);
        let max_len = rows.first().map_or(0, Vec::len);
        let ix = |c: u8| b"FfBbWw".iter().position(|&x| x == c).unwrap_or(0);
        let mut last = vec![[-1i64; 6]; p];
        for (i, row) in rows.iter().enumerate() {
            for (j, &c) in row.iter().enumerate().filter(|(_, c)| **c != b' ') {
                last[i][ix(c)] = j as i64;
            }
        }
        let mut stage_mem = vec![0i64; p];
        let mut cnt = vec![[0usize; 6]; p];
        let mut at = vec![[-1i64; 6]; p * m];
        let delta = |c: u8| match c {
            b'F' | b'f' => 1,
            b'W' | b'w' => -1,
            _ => 0,
        };
        for j in 0..max_len {
            for i in 0..p {
                let id = rows[i][j];
                if id != b' ' {
                    let c = cnt[i][ix(id)];
                    cnt[i][ix(id)] = c + 1;
                    if let Some(slot) = at.get_mut(c * p + i) {
                        slot[ix(id)] = j as i64;
                    }
                    stage_mem[i] += delta(id);
                    continue;
                }
                let mut available = [false; 6];
                for (k, a) in available.iter_mut().enumerate() {
                    *a = last[i][k] > j as i64;
                }
                let (mut mem_delta, mut peak_delta) = (0i64, 0i64);
                for k in j + 1..max_len {
                    if !available.iter().any(|&a| a) {
                        break;
                    }
                    let id = rows[i][k];
                    mem_delta += delta(id);
                    let prev_peak = peak_delta;
                    peak_delta = peak_delta.max(mem_delta);
                    if id == b' ' || !available[ix(id)] {
                        continue;
                    }
                    available[ix(id)] = false;
                    if delta(id) > 0 && stage_mem[i] + prev_peak >= peak_mem {
                        continue;
                    }
                    let c = cnt[i][ix(id)];
                    let done_before = |stage: usize, kind: u8| {
                        at.get(c * p + stage)
                            .is_some_and(|a| a[ix(kind)] > -1 && a[ix(kind)] < j as i64)
                    };
                    let can_move = match id {
                        b'F' | b'B' if i > 0 => done_before(i - 1, id),
                        b'B' => cnt[i][ix(b'f')] > c,
                        b'f' | b'b' if i + 1 < p => done_before(i + 1, id),
                        b'f' => cnt[i][ix(b'F')] > c,
                        b'b' => cnt[i][ix(b'B')] > c,
                        b'W' => cnt[i][ix(b'B')] > c,
                        b'w' => cnt[i][ix(b'b')] > c,
                        _ => true,
                    };
                    if !can_move {
                        continue;
                    }
                    rows[i][j] = id;
                    rows[i][k] = b' ';
                    cnt[i][ix(id)] = c + 1;
                    if let Some(slot) = at.get_mut(c * p + i) {
                        slot[ix(id)] = j as i64;
                    }
                    stage_mem[i] += delta(id);
                    break;
                }
            }
        }
    }

    #[test]
    fn cursors_choose_what_the_forward_scan_chooses() {
        let mut compared = 0;
        for p in 2..7 {
            for m in [1, 2, 3, 5, 9, 14] {
                let redundant_m = m.max(2 * p);
                for block in test_blocks(p) {
                    let mut rows = repeat(&block, redundant_m);
                    let Some(()) = clear_invalid(&mut rows, redundant_m) else {
                        continue;
                    };
                    let Some(mut rows) = squeeze(&rows, redundant_m) else {
                        continue;
                    };
                    if process_warmup(&mut rows, redundant_m).is_none() {
                        continue;
                    }
                    let Some(warm) = squeeze(&rows, redundant_m) else {
                        continue;
                    };
                    let mut cooled = warm.clone();
                    let cooled = process_cooldown(&mut cooled, redundant_m).unwrap_or_default();
                    for input in [warm, cooled] {
                        let (mut fast, mut slow) = (input.clone(), input);
                        reorder_greedily(&mut fast, redundant_m);
                        reorder_by_scan(&mut slow, redundant_m);
                        assert_eq!(fast, slow, "p={p} m={m} block {block:?}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }
}
