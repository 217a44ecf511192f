//! V-ZB's last reordering step (`reorder_greedily_without_increasing_peak_mem` in
//! `scheduler/v_auto_schedule.py`): left to right, an idle slot takes the first later pass of
//! the same device that can move there. Rows as in `steps`.
//!
//! The source scans forward from every idle slot until it has met each kind of pass once;
//! only the first later pass of each kind can move, so this reads, per device and kind, the
//! list of that kind's slots (a squeeze's [`Squeezed::slots`]) at the first one not yet
//! counted, and picks among those (at most six) candidates as the scan would: the same
//! choice without the scan. [`Reorder`] settles one slot at a time, so the search can time
//! each settled slot at once and give up on a candidate early.

#[cfg(doc)]
use super::squeeze::Squeezed;
#[cfg(test)]
use super::steps::peak;
use super::steps::{EMPTY, Rows, ix, mem_delta};

/// Moves passes into idle slots: an idle slot takes the first later pass of the same device
/// whose dependency is already done (in an earlier slot) and which, for F/f, does not raise
/// the device's activation count to the schedule's peak before the pass's old slot (the
/// search settles slot by slot with [`Reorder`] in `score`; this checks it in tests).
#[cfg(test)]
pub(super) fn reorder_greedily(rows: &mut Rows, m: usize) {
    let max_len = rows.first().map_or(0, Vec::len);
    let (mut reorder, positions) = Reorder::new(rows, m);
    for j in 0..max_len {
        for i in 0..rows.len() {
            reorder.settle(rows, &positions, j, i, usize::MAX);
        }
    }
}

/// The state of [`reorder_greedily`] between slots, so that a caller can settle the slots
/// one at a time (column by column, devices in order) and use each settled slot at once.
///
/// The rows' slot lists are given to each [`Reorder::settle`]: `positions[(i * 6 + k) *
/// stride..][..stride]` holds the slots of device i's passes of kind k as they were before
/// any move, ascending, then -1. A move takes the first pass of its kind not yet counted
/// into the idle slot being settled, and counts it, so the entries a later settle reads
/// (from each kind's count on) are never ones a move changed: the lists stay as given.
pub(super) struct Reorder {
    p: usize,
    peak_mem: i64,
    stride: usize,
    stage_mem: Vec<i64>,
    cnt: Vec<[usize; 6]>,
    /// at[c * p + i][k]: the slot of device i's c-th pass of kind k (-1 before it is met).
    at: Vec<[i32; 6]>,
}

impl Reorder {
    /// The state before the first slot of `rows` (`m` passes of each kind per device), and
    /// the rows' slot lists.
    #[cfg(test)]
    pub(super) fn new(rows: &Rows, m: usize) -> (Self, Vec<i32>) {
        let p = rows.len();
        let mut len = vec![0usize; p * 6];
        for (i, row) in rows.iter().enumerate() {
            for &c in row.iter().filter(|c| **c != EMPTY) {
                len[i * 6 + ix(c)] += 1;
            }
        }
        let stride = len.iter().copied().max().unwrap_or(0);
        let mut positions = vec![-1; p * 6 * stride];
        len.fill(0);
        for (i, row) in rows.iter().enumerate() {
            for (j, &c) in row.iter().enumerate().filter(|(_, c)| **c != EMPTY) {
                let list = i * 6 + ix(c);
                positions[list * stride + len[list]] = i32::try_from(j).unwrap_or(i32::MAX);
                len[list] += 1;
            }
        }
        (Self::with_lists(p, peak(rows), m, stride), positions)
    }

    /// The state before the first slot, for `p` devices of peak `peak_mem`, whose slot
    /// lists will have `stride` entries each.
    pub(super) fn with_lists(p: usize, peak_mem: i64, m: usize, stride: usize) -> Self {
        Self {
            p,
            peak_mem,
            stride,
            stage_mem: vec![0i64; p],
            cnt: vec![[0usize; 6]; p],
            at: vec![[-1i32; 6]; p * m],
        }
    }

    /// Whether every list in `positions` (laid out as [`Reorder`] reads them) holds `n`
    /// slots.
    pub(super) fn has_each_kind(&self, positions: &[i32], n: usize) -> bool {
        positions.len() == self.p * 6 * self.stride
            && positions.chunks_exact(self.stride.max(1)).all(|list| {
                let len = list.partition_point(|&x| x >= 0);
                len == n
            })
    }

    /// Settles slot `j` of device `i` (every earlier slot, and the earlier devices' slot
    /// `j`, are settled): an idle slot takes the first later pass that may move there, and
    /// the pass now in the slot is counted. Only later slots of the row change.
    ///
    /// With a `limit`, the rows are known to be final before that column only: where the
    /// choice would read a pass at or past it, nothing is settled and this says so (`false`).
    #[inline]
    pub(super) fn settle(
        &mut self,
        rows: &mut Rows,
        positions: &[i32],
        j: usize,
        i: usize,
        limit: usize,
    ) -> bool {
        let Some(&id) = rows[i].get(j) else {
            return true;
        };
        if id != EMPTY {
            self.count(i, ix(id), id, j);
            return true;
        }
        // Most often (a hole moving right along a row as each pass moves up by one) the
        // next slot holds a pass that may move: it is the first later pass of its kind and
        // comes before every other kind's, so it wins unless it is an F or f the peak
        // refuses (with only idle slots between, the count there is the device's own).
        if let Some(&id) = rows[i].get(j + 1).filter(|_| j + 1 < limit) {
            let k = ix(id);
            if id != EMPTY
                && self.can_move(i, j, k, self.cnt[i][k])
                && (k >= 2 || self.stage_mem[i] < self.peak_mem)
            {
                rows[i][j] = id;
                rows[i][j + 1] = EMPTY;
                self.count(i, k, id, j);
                return true;
            }
        }
        // The first later pass of each kind that may move here: the earliest F or f and
        // the earliest other kind.
        let (mut forward, mut other) = ((usize::MAX, 0usize), (usize::MAX, 0usize));
        let cnt = &self.cnt[i];
        for k in 0..6 {
            // Every pass before slot `j` is settled and counted, and each list is in slot
            // order, so the first pass of kind k after the idle slot `j` is the one after
            // the `c` counted: the c-th in the list (-1 once there are no more).
            let c = cnt[k];
            if c >= self.stride {
                continue;
            }
            let Ok(q) = usize::try_from(positions[(i * 6 + k) * self.stride + c]) else {
                continue;
            };
            if !self.can_move(i, j, k, c) {
                continue;
            }
            let best = if k < 2 { &mut forward } else { &mut other };
            if q < best.0 {
                *best = (q, k);
            }
        }
        // In slot order, the first candidate that may move wins. Only an F or f can be
        // refused (if the activation count, at its peak over the slots strictly between,
        // would reach the schedule's peak), and a later F or f would pass over those same
        // slots and more, so it would be refused too: the earliest F or f, if it comes
        // before every other kind and is not refused, else the earliest other kind.
        let mut chosen = other;
        if forward.0 < other.0 {
            if forward.0 >= limit {
                return false;
            }
            let (mut mem, mut peak_delta) = (0i64, 0i64);
            for &c in &rows[i][j + 1..forward.0] {
                mem += mem_delta(c);
                peak_delta = peak_delta.max(mem);
            }
            if self.stage_mem[i] + peak_delta < self.peak_mem {
                chosen = forward;
            }
        }
        let (q, k) = chosen;
        if q == usize::MAX {
            return true;
        }
        if q >= limit {
            return false;
        }
        let id = rows[i][q];
        rows[i][j] = id;
        rows[i][q] = EMPTY;
        self.count(i, k, id, j);
        true
    }

    /// Whether device i's c-th pass of kind k (in `FfBbWw` order) may move to slot j: its
    /// dependency is done, in an earlier slot.
    #[inline(always)]
    fn can_move(&self, i: usize, j: usize, k: usize, c: usize) -> bool {
        let p = self.p;
        let done_before = |stage: usize| {
            self.at
                .get(c * p + stage)
                .is_some_and(|a| a[k] > -1 && (a[k] as usize) < j)
        };
        let cnt = &self.cnt[i];
        match k {
            0 | 2 if i > 0 => done_before(i - 1),
            0 => true,
            2 => cnt[1] > c,
            1 | 3 if i + 1 < p => done_before(i + 1),
            1 => cnt[0] > c,
            3 => cnt[2] > c,
            4 => cnt[2] > c,
            _ => cnt[3] > c,
        }
    }

    /// Counts pass `id` (kind `k`) of device `i` in slot `j`.
    #[inline]
    fn count(&mut self, i: usize, k: usize, id: u8, j: usize) {
        let c = self.cnt[i][k];
        self.cnt[i][k] = c + 1;
        if let Some(slot) = self.at.get_mut(c * self.p + i) {
            slot[k] = i32::try_from(j).unwrap_or(i32::MAX);
        }
        self.stage_mem[i] += mem_delta(id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::search::{test_blocks, warmed_up};
    use super::super::steps::process_cooldown;
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
                    let Some(warm) = warmed_up(&block, redundant_m) else {
                        continue;
                    };
                    let cooled = process_cooldown(&warm, redundant_m, peak(&warm.rows));
                    let cooled = cooled.map(|s| s.rows).unwrap_or_default();
                    for input in [warm.rows, cooled] {
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
