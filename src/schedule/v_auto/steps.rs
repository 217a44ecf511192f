//! The repeat-squeeze-reorder steps of V-ZB's building-block search
//! (`scheduler/v_auto_schedule.py`), on per-device rows of slot characters:
//! `F`/`f` forward of chunk 0/1, `B`/`b` input-gradient backward of chunk 1/0 (the V's
//! second half first), `W`/`w` their weight-gradient passes, space for an idle slot.
//! `None` from a step is an assertion the source would fail: the candidate is dropped.

/// One row of slot characters per device.
pub(super) type Rows = Vec<Vec<u8>>;

use super::squeeze::{Squeezed, squeeze_tail};
#[cfg(test)]
pub(super) use super::squeeze::{squeeze, squeeze_state};

/// Kinds of pass per device: F, B and W of each of the two chunks (`FfBbWw`).
pub(super) const SLOTS: usize = 6;
/// The pass characters in [`ix`] order.
pub(super) const NAMES: &[u8; SLOTS] = b"FfBbWw";
/// The character of an idle slot in a row.
pub(super) const EMPTY: u8 = b' ';

/// Index of a pass character in `FfBbWw` (anything else reads as `w`).
#[inline]
pub(super) fn ix(c: u8) -> usize {
    usize::from(IX[usize::from(c)])
}

/// `ix` as a table over bytes.
const IX: [u8; 256] = {
    let mut t = [5u8; 256];
    let mut k = 0;
    while k < NAMES.len() {
        t[NAMES[k] as usize] = k as u8;
        k += 1;
    }
    t
};

/// Change in held chunk-activations when a pass runs: +1 for F/f, -1 for W/w.
#[inline]
pub(super) fn mem_delta(c: u8) -> i64 {
    i64::from(DELTA[usize::from(c)])
}

/// `mem_delta` as a table over bytes.
const DELTA: [i8; 256] = {
    let mut t = [0i8; 256];
    t[b'F' as usize] = 1;
    t[b'f' as usize] = 1;
    t[b'W' as usize] = -1;
    t[b'w' as usize] = -1;
    t
};

/// Idle slots compared a block at a time (rows start and end with long idle stretches).
const IDLE: [u8; 32] = [EMPTY; 32];

/// The first slot of `row` with a pass.
pub(super) fn first_busy(row: &[u8]) -> Option<usize> {
    let idle = row
        .chunks_exact(IDLE.len())
        .take_while(|c| *c == IDLE)
        .count();
    let from = idle * IDLE.len();
    row[from..]
        .iter()
        .position(|&c| c != EMPTY)
        .map(|k| from + k)
}

/// How many bytes of `row` are `byte`, eight at a time: a byte of `x ^ byte-repeated` is
/// zero exactly where `row` holds `byte`, and the bit trick below sets the top bit of
/// exactly those bytes (adding 0x7f to the low seven bits carries into the top bit of every
/// byte that is not zero, and cannot carry across bytes).
pub(super) fn count_byte(row: &[u8], byte: u8) -> usize {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let repeated = u64::from_ne_bytes([byte; 8]);
    let chunks = row.chunks_exact(8);
    let rest = chunks.remainder();
    let mut n = 0;
    for chunk in chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_ne_bytes(word) ^ repeated;
        n += (!(((x & LOW) + LOW) | x | LOW)).count_ones() as usize;
    }
    n + rest.iter().filter(|&&c| c == byte).count()
}

/// The last slot of `row` with a pass.
pub(super) fn last_busy(row: &[u8]) -> Option<usize> {
    let idle = row
        .rchunks_exact(IDLE.len())
        .take_while(|c| *c == IDLE)
        .count();
    let to = row.len() - idle * IDLE.len();
    row[..to].iter().rposition(|&c| c != EMPTY)
}

/// Peak running activation count per device (F/f +1, W/w -1).
pub(super) fn peaks(rows: &Rows) -> Vec<i64> {
    rows.iter()
        .map(|row| {
            let (mut cur, mut peak) = (0, 0);
            // Idle slots at either end change nothing.
            let busy = first_busy(row).zip(last_busy(row));
            for &c in busy.map_or(&[][..], |(lo, hi)| &row[lo..=hi]) {
                cur += mem_delta(c);
                peak = peak.max(cur);
            }
            peak
        })
        .collect()
}

/// The largest device peak.
pub(super) fn peak(rows: &Rows) -> i64 {
    peaks(rows).into_iter().max().unwrap_or(0)
}

/// `init_repeated_schedule`: each device's 6-slot pattern repeated `4p + m + 1` times.
pub(super) fn repeat(block: &[[i64; 6]], m: usize) -> Rows {
    let p = block.len();
    block
        .iter()
        .map(|pos| {
            let mut pattern = [EMPTY; SLOTS];
            for (i, &v) in pos.iter().enumerate() {
                if let Ok(v) = usize::try_from(v) {
                    pattern[v] = NAMES[i];
                }
            }
            pattern.repeat(4 * p + m + 1)
        })
        .collect()
}

fn clear_from(row: &mut [u8], pos: i64, step: i64) {
    let mut pos = pos;
    while let Some(slot) = usize::try_from(pos).ok().filter(|&x| x < row.len()) {
        row[slot] = EMPTY;
        pos += step * SLOTS as i64;
    }
}

/// `clear_invalid_index`: walking F down, f up, B down, b up from slot 6, each device's
/// first pass of that kind at or after the running index becomes micro-batch 0: earlier
/// copies and copies from micro-batch m on are cleared (with the W/w that follows a B/b).
///
/// Gives each device's first slot of each kind (`[i * SLOTS + k]`, kinds in [`ix`] order)
/// after the clearing, which describes the rows whole: the rows repeat their block every
/// `SLOTS` slots, and a kind that was cleared keeps the copies from its first slot (at
/// least `SLOTS`) until m of them or the row's end, one that was not keeps them all (its
/// first slot is below `SLOTS`).
pub(super) fn clear_invalid(rows: &mut Rows, m: usize) -> Option<Vec<u32>> {
    let p = rows.len();
    let mut firsts = vec![u32::MAX; p * SLOTS];
    for (i, row) in rows.iter().enumerate() {
        for (j, &c) in row
            .iter()
            .take(SLOTS)
            .enumerate()
            .filter(|(_, c)| **c != EMPTY)
        {
            firsts[i * SLOTS + ix(c)] = j as u32;
        }
    }
    let mut first = |i: usize, kind: u8, at: usize| -> Option<()> {
        firsts[i * SLOTS + ix(kind)] = u32::try_from(at).ok()?;
        Some(())
    };
    let mut index = SLOTS;
    for id in *b"FfBb" {
        let order: Vec<usize> = if id == b'F' || id == b'B' {
            (0..p).collect()
        } else {
            (0..p).rev().collect()
        };
        for i in order {
            for _ in 0..SLOTS {
                if *rows[i].get(index)? == id {
                    first(i, id, index)?;
                    let (at, span) = (index as i64, (SLOTS * m) as i64);
                    clear_from(&mut rows[i], at - SLOTS as i64, -1);
                    clear_from(&mut rows[i], at + span, 1);
                    index += 1;
                    if id == b'B' || id == b'b' {
                        let w = if id == b'B' { b'W' } else { b'w' };
                        for k in 0..SLOTS {
                            if *rows[i].get(index + k)? == w {
                                first(i, w, index + k)?;
                                let at = (index + k) as i64;
                                clear_from(&mut rows[i], at - SLOTS as i64, -1);
                                clear_from(&mut rows[i], at + span, 1);
                                break;
                            }
                        }
                    }
                    break;
                }
                index += 1;
            }
        }
    }
    Some(firsts)
}

/// [`peak`] of the rows [`clear_invalid`] left (rows of `len` slots, `m` micro-batches),
/// from the first slots it gave, without scanning them: each kind of each row holds copies
/// every `SLOTS` slots from its first slot, up to `m` of them if it was cleared (first slot
/// at least `SLOTS`) and up to the row's end in any case.
///
/// On the F's (or f's) of one row, the count of each kind's copies so far is a clamped
/// line in the F's index (`t + d` held between 0 and that kind's copies), so the running
/// count is piecewise linear there, and its largest value lies at an end or where a clamp
/// starts or stops: only those indices are counted. The running count rises only at an F
/// or f, so its peak is the largest count just after one (or 0).
pub(super) fn cleared_peak(firsts: &[u32], len: usize, m: usize) -> i64 {
    const SIGNED: [(usize, i64); 4] = [(0, 1), (1, 1), (4, -1), (5, -1)];
    let mut best = 0;
    for row in firsts.chunks_exact(SLOTS) {
        let copies = |k: usize| -> (i64, i64) {
            let first = row[k] as usize;
            let fit = len.saturating_sub(first).div_ceil(SLOTS);
            let n = if first >= SLOTS { fit.min(m) } else { fit };
            (first as i64, n as i64)
        };
        for rise in [0, 1] {
            let (at, n) = copies(rise);
            if n == 0 {
                continue;
            }
            // Kind k's copies up to the t-th copy of `rise` number clamp(t + d_k, 0, n_k).
            let lines = SIGNED.map(|(k, sign)| {
                let (first, n_k) = copies(k);
                ((at - first).div_euclid(SLOTS as i64) + 1, n_k, sign)
            });
            let count = |t: i64| -> i64 {
                lines
                    .iter()
                    .map(|&(d, n_k, sign)| sign * (t + d).clamp(0, n_k))
                    .sum()
            };
            let kinks = lines.iter().flat_map(|&(d, n_k, _)| [-d, n_k - d]);
            for t in [0, n - 1].into_iter().chain(kinks) {
                if (0..n).contains(&t) {
                    best = best.max(count(t));
                }
            }
        }
    }
    best
}

/// `process_warmup_without_increasing_peak_mem`: everything before each device's first b is
/// rewritten as `2(p-1-i)` slots of F's, `i+1` (F f) pairs, then (B W f-or-F) triples, with
/// the F/f counts bounded by the peak (at most 2p). `peak_mem` is the rows' [`peak`] (the
/// search knows it: a squeeze keeps each device's passes and their order).
pub(super) fn process_warmup(rows: &mut Rows, m: usize, peak_mem: i64) -> Option<()> {
    let p = rows.len();
    let peak_mem = peak_mem.min(2 * p as i64) as usize;
    for (i, row) in rows.iter_mut().enumerate() {
        let cnt_ff = (i + 1).min(peak_mem / 2).min(m);
        let cnt_f = peak_mem.saturating_sub(cnt_ff).min(m);
        let (mut c_f, mut c_ff, mut c_b, mut c_w) = (0, 0, 0, 0);
        for slot in row.iter_mut() {
            match *slot {
                b'F' => c_f += 1,
                b'f' => c_ff += 1,
                b'B' => c_b += 1,
                b'W' => c_w += 1,
                b'b' => break,
                EMPTY => {}
                _ => return None,
            }
            *slot = EMPTY;
        }
        let mut j = i;
        let (mut u_f, mut u_ff, mut u_b, mut u_w) = (0, 0, 0, 0);
        let mut set = |j: usize, c: u8| -> Option<()> {
            *row.get_mut(j)? = c;
            Some(())
        };
        for _ in 0..2 * (p - 1 - i) {
            if u_f < cnt_f && u_f < c_f {
                set(j, b'F')?;
                u_f += 1;
            }
            j += 1;
        }
        for _ in 0..=i {
            if u_f < cnt_f && u_f < c_f {
                set(j, b'F')?;
                u_f += 1;
            }
            j += 1;
            if u_ff < cnt_ff && u_ff < c_ff {
                set(j, b'f')?;
                u_ff += 1;
            }
            j += 1;
        }
        while u_f < c_f || u_ff < c_ff || u_b < c_b || u_w < c_w {
            if u_b < c_b {
                set(j, b'B')?;
                u_b += 1;
            }
            j += 1;
            if u_w < c_w {
                set(j, b'W')?;
                u_w += 1;
            }
            j += 1;
            if u_ff < c_ff {
                if u_ff >= u_f {
                    return None;
                }
                set(j, b'f')?;
                u_ff += 1;
            } else if u_f < c_f {
                set(j, b'F')?;
                u_f += 1;
            }
            j += 1;
        }
    }
    Some(())
}

/// Python-style index into a row: negative counts from the end.
fn py_index(len: usize, index: i64) -> Option<usize> {
    let i = if index < 0 { len as i64 + index } else { index };
    usize::try_from(i).ok().filter(|&x| x < len)
}

/// `process_cooldown`: after the last f, each device keeps `(peak+1)/2` b's and up to
/// `min(i+1, peak - that)` B's at fixed tight positions, W's are cleared from the tail and
/// re-added in the free slots after the last remaining W (or appended); then squeeze.
///
/// `rows` come out of a squeeze (in the search, with `m` micro-batches), with [`peak`]
/// `peak_mem`: the edits only touch the rows' ends, so the last squeeze starts from the
/// first column an edit changed.
#[cfg(test)]
pub(super) fn process_cooldown(rows: &Squeezed, m: usize, peak_mem: i64) -> Option<Squeezed> {
    cooldown(rows.clone(), m, peak_mem)?.squeeze()
}

/// A candidate's rows after the cool-down's edits, before their squeeze. The search's last
/// steps squeeze them only once they need the rows' ends (see `score`): most
/// candidates are given up before.
pub(super) struct Cooled {
    /// The squeeze whose rows' ends the cool-down edited.
    pub(super) before: Squeezed,
    /// `before.rows` with the edits: equal to them on the first `settled` columns.
    edited: Rows,
    settled: usize,
    m: usize,
}

impl Cooled {
    /// Rows already squeezed, with nothing left to edit (the squeeze leaves them as they are).
    #[cfg(test)]
    pub(super) fn squeezed(rows: Squeezed, m: usize) -> Self {
        let edited = rows.rows.clone();
        let settled = edited.first().map_or(0, Vec::len);
        Self {
            before: rows,
            edited,
            settled,
            m,
        }
    }

    /// The squeeze of the edited rows: `process_cooldown`'s result.
    pub(super) fn squeeze(&self) -> Option<Squeezed> {
        squeeze_tail(&self.edited, self.m, &self.before, self.settled)
    }

    /// The first columns on which the squeeze's rows equal `before.rows`, on every device:
    /// the squeeze starts at column `settled`, and places each device's passes from there
    /// after its last pass before it, so every slot before that stays as it is.
    pub(super) fn kept_columns(&self) -> usize {
        if !self.before.reused_by(&self.edited, self.m) {
            return 0;
        }
        self.before
            .rows
            .iter()
            .map(|row| last_busy(&row[..self.settled.min(row.len())]).map_or(0, |j| j + 1))
            .min()
            .unwrap_or(0)
    }

    /// The squeeze's [`peak`]: the edited rows' (a squeeze keeps each device's passes in
    /// their order), counted on from the state at column `settled` that `before` gives.
    pub(super) fn peak(&self) -> i64 {
        let mut peak = 0;
        for (i, row) in self.edited.iter().enumerate() {
            let settled = self.settled.min(row.len());
            let (mut cur, top) = self.before.settled_count(i, &row[..settled]);
            let mut top = top.0;
            for &c in &row[settled..] {
                cur += mem_delta(c);
                top = top.max(cur);
            }
            peak = peak.max(top);
        }
        peak
    }
}

/// `process_cooldown` up to its squeeze: the edited rows, or `None` where the source fails
/// an assertion.
pub(super) fn cooldown(rows: Squeezed, m: usize, peak_mem: i64) -> Option<Cooled> {
    let mut edited = rows.rows.clone();
    cooldown_edit(&mut edited, &rows, m, peak_mem)?;
    let settled = edited
        .iter()
        .zip(&rows.rows)
        .map(|(a, b)| common_prefix(a, b))
        .min()
        .unwrap_or(0);
    Some(Cooled {
        before: rows,
        edited,
        settled,
        m,
    })
}

/// How many leading bytes `a` and `b` share (compared 32 at a time, then one by one).
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut same = 0;
    while same + 32 <= n && a[same..same + 32] == b[same..same + 32] {
        same += 32;
    }
    same + a[same..]
        .iter()
        .zip(&b[same..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// [`process_cooldown`] before its squeeze: the rows (a copy of `squeezed.rows`) edited in
/// place. The source scans each row back from its end for the last f, B's, b's and W's;
/// `squeezed` lists those slots, so they are read off its lists instead.
fn cooldown_edit(rows: &mut Rows, squeezed: &Squeezed, m: usize, peak_mem: i64) -> Option<()> {
    let p = rows.len();
    if peak_mem > 2 * p as i64 {
        return None;
    }
    let max_bb = (((peak_mem + 1) / 2) as usize).min(m);
    let max_b = (peak_mem as usize).saturating_sub(max_bb).min(m);
    let mut starting_index: i64 = -1;
    for (i, row) in rows.iter_mut().enumerate() {
        // Device i's slots of kind k, ascending.
        let slots = |k: usize| {
            let list = squeezed.slots(i, k);
            &list[..list.partition_point(|&x| x >= 0)]
        };
        // From the end: the last f, and the last B's and b's (up to their counts) cleared.
        let last_ff = slots(1).last().map_or(-1, |&j| i64::from(j));
        let mut clear_last = |list: &[i32], most: usize| {
            let n = most.min(list.len());
            for &j in &list[list.len() - n..] {
                row[j as usize] = EMPTY;
            }
            n
        };
        let c_b = clear_last(slots(2), (i + 1).min(max_b));
        let c_bb = clear_last(slots(3), max_bb);
        // Then W's and w's cleared from the end, latest first, until there are as many as
        // B's and b's cleared and at least the peak in all.
        let (ws, wws) = (slots(4), slots(5));
        let (mut c_w, mut c_ww) = (0usize, 0usize);
        while c_w < c_b || c_ww < c_bb || ((c_w + c_ww) as i64) < peak_mem {
            let w = ws.len().checked_sub(c_w + 1).map(|k| ws[k]);
            let ww = wws.len().checked_sub(c_ww + 1).map(|k| wws[k]);
            let (slot, count) = match (w, ww) {
                (None, None) => break,
                (Some(w), Some(ww)) if ww > w => (ww, &mut c_ww),
                (Some(w), _) => (w, &mut c_w),
                (None, Some(ww)) => (ww, &mut c_ww),
            };
            row[slot as usize] = EMPTY;
            *count += 1;
        }
        if i == 0 {
            starting_index = last_ff;
        }
        let (ii, pp) = (i as i64, p as i64);
        for k in 0..c_bb as i64 {
            let at = py_index(row.len(), starting_index - ii + 2 * pp - 2 * k)?;
            if row[at] != EMPTY {
                return None;
            }
            row[at] = b'b';
        }
        for k in 0..c_b as i64 {
            let at = py_index(row.len(), starting_index + 1 + ii - 2 * k)?;
            row[at] = b'B';
        }
    }
    // Put W's back after the last remaining one.
    for row in rows.iter_mut() {
        let last_w = row.iter().rposition(|&c| c == b'W' || c == b'w');
        // Up to the last W nothing is put back: only the B's and W's are counted there.
        let from = last_w.map_or(0, |l| l + 1);
        let head = &row[..from];
        let c = |kind: u8| count_byte(head, kind) as i64;
        let (mut c_w, mut c_ww) = (c(b'B') - c(b'W'), c(b'b') - c(b'w'));
        for (j, slot) in row.iter_mut().enumerate().skip(from) {
            match *slot {
                b'B' => c_w += 1,
                b'b' => c_ww += 1,
                b'W' => c_w -= 1,
                b'w' => c_ww -= 1,
                _ => {}
            }
            if *slot == EMPTY && last_w.is_none_or(|l| j > l) {
                if c_w > 0 {
                    *slot = b'W';
                    c_w -= 1;
                } else if c_ww > 0 {
                    *slot = b'w';
                    c_ww -= 1;
                }
            }
        }
        row.extend(std::iter::repeat_n(b'W', c_w.max(0) as usize));
        row.extend(std::iter::repeat_n(b'w', c_ww.max(0) as usize));
    }
    let max_len = rows.iter().map(Vec::len).max().unwrap_or(0);
    for row in rows.iter_mut() {
        row.resize(max_len, EMPTY);
    }
    Some(())
}

#[cfg(test)]
#[path = "steps_tests.rs"]
mod tests;
