//! V-ZB's squeeze (`squeeze_without_change_order` in `scheduler/v_auto_schedule.py`): every
//! pass moves to the earliest slot after its predecessor and after the previous pass of its
//! own device, keeping each device's order. Rows as in `steps`.
//!
//! The search squeezes each candidate three times, on rows of thousands of columns that
//! repeat one pattern in their middle. Three things keep that cheap, all exact:
//! - [`Squeezed`] keeps where each pass went, so that [`squeeze_tail`] (after the cool-down,
//!   which edits only the rows' ends) starts from an earlier squeeze's state instead of
//!   rescanning the columns that did not change;
//! - after the warm-up, which edits only the rows' heads, [`squeeze_edited_head`] copies
//!   the rest of the rows from the first squeeze once its scan has caught up with it (see
//!   `rejoin`);
//! - once the scan's state repeats itself one period later, moved by a whole number of
//!   slots, while the input repeats too, the scan of every later period is that period's
//!   moved again: the scan writes those periods at once (see [`Scan::repeat_ahead`]).

use super::steps::{
    EMPTY, NAMES, Rows, SLOTS, common_prefix, first_busy, ix, last_busy, mem_delta,
};

#[path = "squeeze_rejoin.rs"]
mod rejoin;
pub(super) use rejoin::squeeze_edited_head;

/// A squeeze's output rows, with the slot each pass went to.
#[derive(Clone, Debug, Default)]
pub(super) struct Squeezed {
    /// The squeezed rows (cut to the longest).
    pub(super) rows: Rows,
    /// The squeeze's micro-batch count: each kind has at most this many passes per device.
    m: usize,
    /// at[(i * SLOTS + k) * m + c]: the slot of device i's c-th pass of kind k, ascending in
    /// c; -1 past the device's last pass of that kind.
    at: Vec<i32>,
    /// The columns one period of the rows' repeated middle spans, if the squeeze found it.
    period: Option<usize>,
    /// Each device's peak running activation count (as `peaks` counts it), and the first
    /// slot where it is reached (0 for a peak of 0).
    top: Vec<(i64, usize)>,
    /// Periods the squeeze wrote ahead without scanning them (for tests).
    #[cfg(test)]
    pub(super) ahead: usize,
    /// Whether the squeeze copied its rest from an earlier one (for tests).
    #[cfg(test)]
    pub(super) rejoined: bool,
}

impl Squeezed {
    /// The period to look for when squeezing these rows again (after an edit of their
    /// ends): the one this squeeze found, else the building block's.
    pub(super) fn period(&self) -> usize {
        self.period.unwrap_or(SLOTS)
    }

    /// The rows' peak running activation count (`peak` of the rows: a squeeze keeps each
    /// device's passes in their order, and the scan counts them).
    pub(super) fn peak(&self) -> i64 {
        self.top.iter().map(|t| t.0).max().unwrap_or(0)
    }

    /// Whether a squeeze of `rows` with `m` micro-batches may start from this one's state
    /// at a column before which `rows` equal this one's (see [`squeeze_tail`]).
    pub(super) fn reused_by(&self, rows: &Rows, m: usize) -> bool {
        self.m == m && self.rows.len() == rows.len()
    }

    /// Device `i`'s running activation count after the passes this squeeze placed before
    /// column `prefix.len()`, and its peak over those columns with the first slot where it
    /// is reached (0 for a peak of 0); `prefix` holds those columns of a row equal to this
    /// squeeze's row `i` there. The earlier peak is this squeeze's if it was first reached
    /// there, else it is counted again.
    pub(super) fn settled_count(&self, i: usize, prefix: &[u8]) -> (i64, (i64, usize)) {
        let limit = i32::try_from(prefix.len()).unwrap_or(i32::MAX);
        let count = |k: usize| {
            // Each list is ascending, then -1 past the last pass.
            let placed = self
                .slots(i, k)
                .partition_point(|&x| (0..limit).contains(&x));
            placed as i64
        };
        let cur = count(0) + count(1) - count(4) - count(5);
        let top = match self.top.get(i) {
            Some(&(top, at)) if at < prefix.len() => (top, at),
            _ => {
                let (mut cur, mut top) = (0, (0, 0));
                for (j, &c) in prefix.iter().enumerate() {
                    cur += mem_delta(c);
                    if cur > top.0 {
                        top = (cur, j);
                    }
                }
                top
            }
        };
        (cur, top)
    }

    /// The rows, and all the slot lists (list `i * SLOTS + k` is [`Squeezed::slots`]`(i, k)`).
    pub(super) fn rows_and_lists(&mut self) -> (&mut Rows, &[i32]) {
        (&mut self.rows, &self.at)
    }

    /// The slots of device `i`'s passes of kind `k` (in [`ix`] order), ascending, padded to
    /// `m` entries with -1.
    pub(super) fn slots(&self, i: usize, k: usize) -> &[i32] {
        let at = (i * SLOTS + k) * self.m;
        &self.at[at..at + self.m]
    }
}

/// `squeeze_without_change_order`: every pass moves to the earliest slot after its
/// predecessor (previous device for F/B, next device for f/b) and after the previous pass
/// of its own device, keeping each device's order; rows are cut to the longest. `None` is
/// an assertion the source fails: a pass met before its predecessor in the scan (column by
/// column: upper-case passes from the first device down, then lower-case from the last
/// up), more than `m` passes of a kind, or a row shorter than the first.
#[cfg(test)]
pub(super) fn squeeze(rows: &Rows, m: usize) -> Option<Rows> {
    squeeze_state(rows, m, SLOTS).map(|s| s.rows)
}

/// [`squeeze`], keeping where each pass went; `period` is the number of columns in which
/// the input's middle likely repeats (one of each kind of pass per device in each period),
/// the period of the repeated building block for the first squeeze.
pub(super) fn squeeze_state(rows: &Rows, m: usize, period: usize) -> Option<Squeezed> {
    let mut scan = Scan::start(rows, m)?;
    scan.run(rows, period, None)?;
    Some(scan.finish())
}

/// [`squeeze`] of `rows` with `m` micro-batches, where `rows` equal `before.rows` on their
/// first `settled` columns and `before` is a squeeze's output (the state is reused where
/// `before` was squeezed with the same `m`).
///
/// The scan of those columns would leave each of their passes in its slot (a squeeze leaves
/// its own output as it is, and the scan of a column depends only on the columns before
/// it), so the state it reaches there is read off `before`, and the scan goes on from there.
pub(super) fn squeeze_tail(
    rows: &Rows,
    m: usize,
    before: &Squeezed,
    settled: usize,
) -> Option<Squeezed> {
    let mut scan = Scan::start(rows, m)?;
    let period = before.period();
    if !before.reused_by(rows, m) {
        scan.run(rows, period, None)?;
        return Some(scan.finish());
    }
    let settled = settled.min(scan.max_len).min(scan.hi + 1);
    let limit = i32::try_from(settled).unwrap_or(i32::MAX);
    for (i, row) in rows.iter().enumerate() {
        let mut next = 0;
        for k in 0..SLOTS {
            let list = before.slots(i, k);
            let c = list.partition_point(|&x| (0..limit).contains(&x));
            let at = (i * SLOTS + k) * m;
            scan.at[at..at + c].copy_from_slice(&list[..c]);
            scan.cnt[i * SLOTS + k] = c;
            if let Some(&last) = list[..c].last() {
                next = next.max(last as usize + 1);
            }
        }
        scan.next[i] = next;
        let n = settled.min(row.len());
        scan.out[i][..n].copy_from_slice(&row[..n]);
        (scan.cur[i], scan.top[i]) = before.settled_count(i, &row[..n]);
    }
    scan.lo = scan.lo.max(settled);
    scan.run(rows, period, None)?;
    Some(scan.finish())
}

/// Which half of a column's scan meets a slot: upper-case passes (F, B, W) on the way down
/// the devices, lower-case ones (f, b, w) on the way back up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Idle,
    Upper,
    Lower,
}

/// [`Case`] as a table over bytes.
const CASE: [Case; 256] = {
    let mut t = [Case::Idle; 256];
    let mut k = 0;
    while k < NAMES.len() {
        t[NAMES[k] as usize] = if k % 2 == 0 { Case::Upper } else { Case::Lower };
        k += 1;
    }
    t
};

/// A squeeze in progress: the rows it writes and where each pass went.
struct Scan {
    p: usize,
    m: usize,
    /// The first row's length: the columns scanned.
    max_len: usize,
    /// The first column to scan and the last with a pass.
    lo: usize,
    hi: usize,
    /// Whether the rows have no pass at all.
    idle: bool,
    out: Rows,
    /// cnt[i * SLOTS + k]: passes of kind k placed on device i.
    cnt: Vec<usize>,
    /// As in [`Squeezed`]; -1 for a pass not placed yet.
    at: Vec<i32>,
    /// The first free slot of each device.
    next: Vec<usize>,
    /// Each device's running activation count, and its peak so far with the first slot
    /// where it was reached.
    cur: Vec<i64>,
    top: Vec<(i64, usize)>,
    /// The slots one period moves by, once the scan has repeated a period.
    period: Option<usize>,
    /// Periods written ahead.
    #[cfg(test)]
    ahead: usize,
    /// Whether the scan rejoined an earlier squeeze and copied the rest from it.
    #[cfg(test)]
    rejoined: bool,
}

/// The scan's counts and free slots at a column boundary.
struct Snapshot {
    column: usize,
    cnt: Vec<usize>,
    next: Vec<usize>,
}

impl Scan {
    /// The state before the first column of `rows`; `None` if a row is shorter than the
    /// first.
    fn start(rows: &Rows, m: usize) -> Option<Self> {
        let p = rows.len();
        let max_len = rows.first().map_or(0, Vec::len);
        if rows.iter().any(|r| r.len() < max_len) {
            return None;
        }
        // Columns with no pass change nothing: scan from the first busy one to the last.
        let lo = rows
            .iter()
            .filter_map(|row| first_busy(&row[..max_len]))
            .min()
            .unwrap_or(usize::MAX);
        let hi = rows
            .iter()
            .filter_map(|row| last_busy(&row[..max_len]))
            .max()
            .unwrap_or(0);
        Some(Self {
            p,
            m,
            max_len,
            idle: lo > hi,
            lo,
            hi,
            out: rows.iter().map(|r| vec![EMPTY; r.len()]).collect(),
            cnt: vec![0; p * SLOTS],
            at: vec![-1; p * SLOTS * m],
            next: vec![0; p],
            cur: vec![0; p],
            top: vec![(0, 0); p],
            period: None,
            #[cfg(test)]
            ahead: 0,
            #[cfg(test)]
            rejoined: false,
        })
    }

    /// Scans columns `lo..=hi`, writing ahead whole periods of `period` columns where the
    /// scan repeats itself; with `earlier` (a squeeze's output, and the column from which
    /// `rows` equal its rows), copies the rest from it once the scan rejoins it (see
    /// [`Scan::rejoin`]).
    fn run(
        &mut self,
        rows: &Rows,
        period: usize,
        earlier: Option<(&Squeezed, usize)>,
    ) -> Option<()> {
        let p = self.p;
        // The state at the last column boundary checked for a repeat.
        let mut last = Snapshot {
            column: self.lo,
            cnt: self.cnt.clone(),
            next: self.next.clone(),
        };
        // The devices with a lower-case pass in the column being scanned, first device first
        // (the first `lowers` entries).
        let mut lower = vec![0usize; p];
        let mut j = self.lo;
        while j <= self.hi {
            if period > 0 && j == last.column + period {
                if earlier.is_some_and(|(before, from)| j >= from && self.rejoin(before, j)) {
                    break;
                }
                j = self.repeat_ahead(rows, &last, j);
                last.column = j;
                last.cnt.copy_from_slice(&self.cnt);
                last.next.copy_from_slice(&self.next);
                if j > self.hi {
                    break;
                }
            }
            // Upper-case passes from the first device down, then lower-case from the last
            // up (the devices the first scan met them on, taken back in reverse).
            let mut lowers = 0;
            for (i, row) in rows.iter().enumerate() {
                let id = row[j];
                match CASE[usize::from(id)] {
                    Case::Upper => self.place(i, id)?,
                    Case::Lower => {
                        lower[lowers] = i;
                        lowers += 1;
                    }
                    Case::Idle => {}
                }
            }
            for &i in lower[..lowers].iter().rev() {
                self.place(i, rows[i][j])?;
            }
            j += 1;
        }
        Some(())
    }

    /// At column boundary `j`, one period after `last`: if the state is `last`'s moved by
    /// one micro-batch and `shift` slots, places the passes of the periods ahead in which
    /// the input repeats, and gives the boundary after them (`j` if it does not repeat).
    ///
    /// Why that is exact: each device placed one pass of each kind in the last period, and
    /// each later slot is a maximum of earlier slots plus one. If the input's columns from
    /// `j` repeat those of the last period, and every slot the scan can still read (each
    /// device's next free slot, and the neighbours' passes of micro-batches it has not
    /// reached) is the one a period earlier plus `shift`, with the micro-batch one higher,
    /// then the scan of the next period does what the last one did, one micro-batch higher
    /// and `shift` slots later, and leaves the state moved once more: so on for every
    /// period in which the input repeats. The checks the scan makes on the way (a
    /// predecessor placed) move with it; the two that do not (at most `m` passes of a kind,
    /// slots inside the row) bound the periods written, and the scan meets them itself.
    /// Each period adds one F, f, W and w to each device, so the running activation counts
    /// repeat too, and their peaks stay.
    fn repeat_ahead(&mut self, rows: &Rows, last: &Snapshot, j: usize) -> usize {
        let (p, m, period) = (self.p, self.m, j - last.column);
        if self.next[0] < last.next[0] {
            return j;
        }
        let shift = self.next[0] - last.next[0];
        let moved = |(&now, &then): (&usize, &usize)| now == then + shift;
        if shift == 0 || !self.next.iter().zip(&last.next).all(moved) {
            return j;
        }
        if !self
            .cnt
            .iter()
            .zip(&last.cnt)
            .all(|(&now, &then)| now == then + 1)
        {
            return j;
        }
        let Ok(shift32) = i32::try_from(shift) else {
            return j;
        };
        if !self.pending_reads_are(|from, k, c| {
            c.checked_sub(1).map(|b| self.slot(from, k, b) + shift32)
        }) {
            return j;
        }
        // Periods ahead within the counts and the rows, then where the input repeats.
        self.period = Some(shift);
        let mut ahead = self.cnt.iter().map(|&c| m - c.min(m)).min().unwrap_or(0);
        for (out, &next) in self.out.iter().zip(&self.next) {
            ahead = ahead.min(out.len().saturating_sub(next) / shift);
        }
        let end = self.hi + 1;
        for row in rows {
            if ahead == 0 {
                return j;
            }
            let want = (ahead * period).min(end - j);
            let same = common_prefix(&row[j..j + want], &row[j - period..j - period + want]);
            ahead = ahead.min(same / period);
        }
        if ahead == 0 {
            return j;
        }
        for i in 0..p {
            let mut lasts = [0i32; SLOTS];
            for (k, last) in lasts.iter_mut().enumerate() {
                let base = (i * SLOTS + k) * m;
                let c = self.cnt[i * SLOTS + k];
                let from = self.at[base + c - 1];
                *last = from;
                for (t, slot) in self.at[base + c..base + c + ahead].iter_mut().enumerate() {
                    *slot = from + shift32 * (t as i32 + 1);
                }
                self.cnt[i * SLOTS + k] = c + ahead;
            }
            write_periods(&mut self.out[i], self.next[i], shift, ahead, &lasts);
            self.next[i] += shift * ahead;
        }
        #[cfg(test)]
        {
            self.ahead += ahead;
        }
        j + period * ahead
    }

    /// Whether each neighbour's slot a later pass still reads is the one `expected` gives
    /// for (device, kind, micro-batch), where it gives one: the previous device's F and B
    /// and the next device's f and b, from the reader's own count on (the ends of the V
    /// read only whether a pass is placed, which the counts say).
    fn pending_reads_are(&self, expected: impl Fn(usize, usize, usize) -> Option<i32>) -> bool {
        let p = self.p;
        for i in 0..p {
            for (k, from) in [(0, i.wrapping_sub(1)), (2, i.wrapping_sub(1))]
                .into_iter()
                .chain([(1, i + 1), (3, i + 1)])
            {
                if from >= p {
                    continue;
                }
                for c in self.cnt[i * SLOTS + k]..self.cnt[from * SLOTS + k] {
                    if expected(from, k, c).is_some_and(|want| self.slot(from, k, c) != want) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The rows cut to the longest, with the slots.
    fn finish(mut self) -> Squeezed {
        if self.idle {
            // No pass at all: the rows come out empty.
            self.out.iter_mut().for_each(Vec::clear);
        } else {
            let new_len = self.next.iter().copied().max().unwrap_or(0);
            for row in &mut self.out {
                row.truncate(new_len);
            }
        }
        Squeezed {
            rows: self.out,
            m: self.m,
            at: self.at,
            period: self.period,
            top: self.top,
            #[cfg(test)]
            ahead: self.ahead,
            #[cfg(test)]
            rejoined: self.rejoined,
        }
    }

    /// The slot of device `i`'s c-th pass of kind `k` (-1 if not placed yet).
    #[inline(always)]
    fn slot(&self, i: usize, k: usize, c: usize) -> i32 {
        self.at[(i * SLOTS + k) * self.m + c]
    }

    /// Places pass `id` of device `i` in the earliest slot after the device's previous pass
    /// and after its predecessor: F/B after the previous device's, f/b after the next
    /// device's; at the ends of the V, after the same micro-batch's f (device 0's B), F (the
    /// last device's f) or B (its b), which must be placed already. `None` where the source
    /// fails an assertion: an m+1-th pass, a predecessor not placed yet, or a slot past the
    /// row's end.
    #[inline(always)]
    fn place(&mut self, i: usize, id: u8) -> Option<()> {
        let (p, m) = (self.p, self.m);
        let k = ix(id);
        let c = self.cnt[i * SLOTS + k];
        if c >= m {
            return None;
        }
        let next = self.next[i];
        let index = match k {
            // Device 0's F comes first in its row; its B after its own f.
            0 if i == 0 => next,
            2 if i == 0 => {
                if self.slot(0, 1, c) < 0 {
                    return None;
                }
                next
            }
            0 | 2 => after(self.slot(i - 1, k, c), next)?,
            // The last device's f and b after its own F and B.
            1 | 3 if i + 1 == p => {
                if self.slot(i, k - 1, c) < 0 {
                    return None;
                }
                next
            }
            1 | 3 => after(self.slot(i + 1, k, c), next)?,
            _ => next,
        };
        *self.out[i].get_mut(index)? = id;
        self.cnt[i * SLOTS + k] = c + 1;
        self.at[(i * SLOTS + k) * m + c] = i32::try_from(index).ok()?;
        self.next[i] = index + 1;
        self.cur[i] += mem_delta(id);
        if self.cur[i] > self.top[i].0 {
            self.top[i] = (self.cur[i], index);
        }
        Some(())
    }
}

/// Writes `ahead` more periods of `shift` slots into an output row whose first free slot is
/// `next`, where the last period placed each kind's pass in slot `lasts[k]` (the passes of
/// a later period go `shift` slots further each time). Where the period before `next`
/// holds just those passes, it is copied (doubling the copied stretch each time), else
/// the passes are written one by one.
fn write_periods(row: &mut [u8], next: usize, shift: usize, ahead: usize, lasts: &[i32; SLOTS]) {
    let start = next.saturating_sub(shift);
    let window = start as i64..next as i64;
    let just_those = next >= shift
        && lasts.iter().all(|&l| window.contains(&i64::from(l)))
        && row[start..next].iter().filter(|&&c| c != EMPTY).count() == SLOTS;
    if just_those {
        let total = shift * (ahead + 1);
        let mut filled = shift;
        while filled < total {
            let n = filled.min(total - filled);
            row.copy_within(start..start + n, start + filled);
            filled += n;
        }
        return;
    }
    for (&from, &name) in lasts.iter().zip(NAMES) {
        for t in 1..=ahead {
            row[from as usize + shift * t] = name;
        }
    }
}

/// The slot after predecessor slot `dep` (`None` if it is not placed), and not before `next`.
#[inline(always)]
fn after(dep: i32, next: usize) -> Option<usize> {
    let dep = usize::try_from(dep).ok()?;
    Some((dep + 1).max(next))
}

#[cfg(test)]
mod tests {
    use super::super::search::test_blocks;
    use super::super::steps::{clear_invalid, peak, process_warmup, repeat};
    use super::*;

    /// Writing repeated periods ahead gives the rows and slots of scanning every column, on
    /// the input of the search's first and second squeezes with many micro-batches (where
    /// the rows repeat for long), and it does write ahead there.
    #[test]
    fn periods_written_ahead_are_those_a_scan_gives() {
        let (mut compared, mut ahead) = (0, 0);
        for p in 2..9 {
            for m in [24, 61] {
                for block in test_blocks(p) {
                    let mut rows = repeat(&block, m);
                    if clear_invalid(&mut rows, m).is_none() {
                        continue;
                    }
                    let scanned = squeeze_state(&rows, m, 0);
                    let first = squeeze_state(&rows, m, SLOTS);
                    assert_eq!(
                        first.as_ref().map(|s| (&s.rows, &s.at)),
                        scanned.as_ref().map(|s| (&s.rows, &s.at)),
                        "p={p} m={m} block {block:?}"
                    );
                    compared += 1;
                    let Some(first) = first else { continue };
                    assert_eq!(first.peak(), peak(&first.rows));
                    ahead += usize::from(first.ahead > 0);
                    let mut warm = first.rows.clone();
                    let peak_mem = peak(&warm);
                    if process_warmup(&mut warm, m, peak_mem).is_none() {
                        continue;
                    }
                    let period = first.period();
                    let second = squeeze_state(&warm, m, period);
                    let scanned = squeeze_state(&warm, m, 0);
                    assert_eq!(
                        second.as_ref().map(|s| (&s.rows, &s.at)),
                        scanned.as_ref().map(|s| (&s.rows, &s.at)),
                        "p={p} m={m} block {block:?} (after the warm-up)"
                    );
                    compared += 1;
                    if let Some(second) = &second {
                        assert_eq!(second.peak(), peak(&second.rows));
                    }
                    ahead += second.is_some_and(|s| s.ahead > 0) as usize;
                }
            }
        }
        assert!(compared > 10_000 && ahead > 5_000, "{compared} {ahead}");
    }

    /// Writing periods ahead gives the row that writing each pass gives: by copying the
    /// last period where it holds just its passes, and also where a stray pass in it
    /// rules the copy out.
    #[test]
    fn periods_written_ahead_are_the_passes_one_by_one() {
        let mut compared = 0;
        for shift in 6..12usize {
            for offset in 0..shift {
                // One period: each kind once, spread over `shift` slots, ending at `next`.
                let next = 3 * shift + offset;
                let mut lasts = [0i32; SLOTS];
                let mut row = vec![EMPTY; next + shift * 9];
                for (k, last) in lasts.iter_mut().enumerate() {
                    let at = next - shift + (k * shift) / SLOTS;
                    row[at] = NAMES[k];
                    // An older pass of the kind, a period earlier.
                    row[at - shift] = NAMES[k];
                    *last = at as i32;
                }
                let mut stray = row.clone();
                if let Some(idle) = stray[next - shift..next].iter().position(|&c| c == EMPTY) {
                    stray[next - shift + idle] = b'F';
                }
                for ahead in [1, 2, 5, 8] {
                    for row in [&row, &stray] {
                        let mut fast = row.clone();
                        write_periods(&mut fast, next, shift, ahead, &lasts);
                        let mut slow = row.clone();
                        for (&from, &name) in lasts.iter().zip(NAMES) {
                            for t in 1..=ahead {
                                slow[from as usize + shift * t] = name;
                            }
                        }
                        assert_eq!(fast, slow, "shift {shift} offset {offset} ahead {ahead}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 300, "{compared}");
    }

    /// Squeezing the end of rows from an earlier squeeze's state gives a full squeeze's
    /// result, also when that squeeze had another micro-batch count (then nothing is
    /// reused).
    #[test]
    fn the_tail_squeeze_is_a_full_squeeze() {
        let mut compared = 0;
        for p in 2..7 {
            for m in [3, 2 * p, 40] {
                for block in test_blocks(p).into_iter().step_by(7) {
                    let mut rows = repeat(&block, m);
                    if clear_invalid(&mut rows, m).is_none() {
                        continue;
                    }
                    let Some(before) = squeeze_state(&rows, m, SLOTS) else {
                        continue;
                    };
                    // Edit the end of the rows: drop the last pass of every row.
                    let mut edited = before.rows.clone();
                    let mut settled = usize::MAX;
                    for row in &mut edited {
                        if let Some(last) = row.iter().rposition(|&c| c != EMPTY) {
                            row[last] = EMPTY;
                            settled = settled.min(last);
                        }
                    }
                    for n in [m, m - 1, m + 1] {
                        let full = squeeze_state(&edited, n, 0).map(|s| (s.rows, s.at));
                        let tail = squeeze_tail(&edited, n, &before, settled);
                        if let Some(tail) = &tail {
                            assert_eq!(tail.peak(), peak(&tail.rows), "p={p} m={m} n={n}");
                        }
                        assert_eq!(tail.map(|s| (s.rows, s.at)), full, "p={p} m={m} n={n}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 500, "{compared}");
    }
}
