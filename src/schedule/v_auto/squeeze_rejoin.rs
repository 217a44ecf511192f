//! The second squeeze of a V-ZB candidate, after the warm-up rewrote the head of each row of
//! the first squeeze's output: the scan of the edited head differs from the first squeeze,
//! but once its state is the first squeeze's state at the same column moved by a whole
//! number of slots, every later pass lands where the first squeeze put it, moved the same
//! way, so the rest of the rows is copied instead of scanned (see [`Scan::rejoin`]).

use super::super::steps::{NAMES, Rows, SLOTS, mem_delta};
use super::{Scan, Squeezed};

/// [`squeeze_state`](super::squeeze_state) of `rows`, which are `before.rows` (a squeeze's
/// output with the same `m`) with an edited head: the scan copies the rest from `before`
/// once it rejoins it. `period` as for `squeeze_state`.
pub(in super::super) fn squeeze_edited_head(
    rows: &Rows,
    m: usize,
    before: &Squeezed,
    period: usize,
) -> Option<Squeezed> {
    let mut scan = Scan::start(rows, m)?;
    // The first column from which every row equals `before`'s.
    let same_from = if before.m == m && before.rows.len() == rows.len() {
        rows.iter()
            .zip(&before.rows)
            .map(|(a, b)| {
                if a.len() == b.len() {
                    a.len() - common_suffix(a, b)
                } else {
                    usize::MAX
                }
            })
            .max()
    } else {
        None
    };
    scan.run(rows, period, same_from.map(|from| (before, from)))?;
    Some(scan.finish())
}

/// How many trailing bytes `a` and `b` share (compared 32 at a time, then one by one).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut same = 0;
    while same + 32 <= n && a[n - same - 32..n - same] == b[n - same - 32..n - same] {
        same += 32;
    }
    same + a[..n - same]
        .iter()
        .rev()
        .zip(b[..n - same].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

impl Scan {
    /// At column boundary `j` of rows that equal `before.rows` from `j` on: if every device
    /// has placed the passes `before` holds before column `j`, and the slots the scan can
    /// still read (each device's next free slot, and the neighbours' passes of the
    /// micro-batches it has not reached) are `before`'s moved by the same `shift` slots
    /// (not later), places every remaining pass at its slot in `before` moved by `shift`,
    /// and says so; else changes nothing.
    ///
    /// Why that is exact: a squeeze leaves its own output as it is, so in `before` every
    /// pass sits at the maximum of the slots the scan rule reads (the device's next free
    /// slot, its predecessor's slot plus one) and the scan meets its predecessor first. From
    /// column `j` on this scan reads the same columns in the same order; if what it reads
    /// is `before`'s moved by `shift`, so is each slot it writes, by induction over the
    /// passes in scan order, and each check on the way (a predecessor placed, at most `m`
    /// passes of a kind, a slot inside the row, as the move is not to the right) holds as
    /// it held for `before`.
    pub(super) fn rejoin(&mut self, before: &Squeezed, j: usize) -> bool {
        let p = self.p;
        let Some(then_0) = self.then_next(before, 0, j) else {
            return false;
        };
        let Some(shift) = then_0.checked_sub(self.next[0]) else {
            return false;
        };
        for i in 1..p {
            if self
                .then_next(before, i, j)
                .and_then(|t| t.checked_sub(shift))
                != Some(self.next[i])
            {
                return false;
            }
        }
        let Ok(shift32) = i32::try_from(shift) else {
            return false;
        };
        // The neighbours' slots a later pass reads.
        if !self.pending_reads_are(|from, k, c| Some(before.slots(from, k)[c] - shift32)) {
            return false;
        }
        for i in 0..p {
            let then = self.next[i] + shift;
            let mut gained = 0;
            let mut next = self.next[i];
            for (k, &name) in NAMES.iter().enumerate() {
                let list = before.slots(i, k);
                let from = self.cnt[i * SLOTS + k];
                let to = list.partition_point(|&x| x >= 0);
                let base = (i * SLOTS + k) * self.m;
                for (slot, &was) in self.at[base + from..base + to]
                    .iter_mut()
                    .zip(&list[from..to])
                {
                    *slot = was - shift32;
                }
                if let Some(&last) = list[from..to].last() {
                    next = next.max(last as usize + 1 - shift);
                }
                gained += mem_delta(name) * (to - from) as i64;
                self.cnt[i * SLOTS + k] = to;
            }
            let row = &before.rows[i][then..];
            self.out[i][then - shift..then - shift + row.len()].copy_from_slice(row);
            self.next[i] = next;
            // The running count goes on as `before`'s did from the same count.
            let (top, first) = before.top[i];
            if top > self.top[i].0 {
                if first >= then {
                    self.top[i] = (top, first - shift);
                } else {
                    let mut cur = self.cur[i];
                    for (s, &c) in row.iter().enumerate() {
                        cur += mem_delta(c);
                        if cur > self.top[i].0 {
                            self.top[i] = (cur, then - shift + s);
                        }
                    }
                }
            }
            self.cur[i] += gained;
        }
        if self.period.is_none() {
            self.period = before.period;
        }
        #[cfg(test)]
        {
            self.rejoined = true;
        }
        true
    }

    /// Device `i`'s next free slot in `before` once its passes before column `j` are
    /// placed, if `before` holds before `j` exactly the passes this scan has placed.
    fn then_next(&self, before: &Squeezed, i: usize, j: usize) -> Option<usize> {
        let limit = i32::try_from(j).ok()?;
        let mut next = 0;
        for k in 0..SLOTS {
            let list = before.slots(i, k);
            let c = self.cnt[i * SLOTS + k];
            if list.get(c).is_some_and(|&x| (0..limit).contains(&x)) {
                return None;
            }
            if c > 0 {
                let last = list[c - 1];
                if !(0..limit).contains(&last) {
                    return None;
                }
                next = next.max(last as usize + 1);
            }
        }
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::search::test_blocks;
    use super::super::super::steps::{EMPTY, clear_invalid, peak, process_warmup, repeat};
    use super::super::squeeze_state;
    use super::*;

    /// What a squeeze gives that later steps read: rows, slots, peaks.
    type Parts<'a> = (&'a Rows, &'a Vec<i32>, &'a Vec<(i64, usize)>);

    /// A squeeze's [`Parts`].
    fn parts(s: &Option<Squeezed>) -> Option<Parts<'_>> {
        s.as_ref().map(|s| (&s.rows, &s.at, &s.top))
    }

    /// The first squeeze of a block's repeated rows, if it succeeds.
    fn first_squeeze(block: &[[i64; 6]], m: usize) -> Option<(Rows, Squeezed)> {
        let mut rows = repeat(block, m);
        clear_invalid(&mut rows, m)?;
        let first = squeeze_state(&rows, m, SLOTS)?;
        Some((rows, first))
    }

    /// After the warm-up, rejoining the first squeeze gives the rows, slots and peaks of
    /// scanning every column, over every block of p 2-8, and it rejoins in most of them.
    #[test]
    fn rejoining_after_the_warm_up_gives_a_full_scan() {
        let (mut compared, mut rejoined) = (0, 0);
        for p in 2..9 {
            for m in [1, 5, 2 * p, 24, 61] {
                for block in test_blocks(p) {
                    let Some((_, first)) = first_squeeze(&block, m) else {
                        continue;
                    };
                    let mut warm = first.rows.clone();
                    let peak_mem = peak(&warm);
                    if process_warmup(&mut warm, m, peak_mem).is_none() {
                        continue;
                    }
                    let copied = squeeze_edited_head(&warm, m, &first, first.period());
                    let scanned = squeeze_state(&warm, m, 0);
                    assert_eq!(parts(&copied), parts(&scanned), "p={p} m={m} {block:?}");
                    compared += 1;
                    rejoined += copied.is_some_and(|s| s.rejoined) as usize;
                }
            }
        }
        assert!(
            compared > 20_000 && rejoined * 2 > compared,
            "{compared} {rejoined}"
        );
    }

    /// Rows edited at random (passes swapped, or moved into idle slots, anywhere in random
    /// rows) give what a full scan gives, whether the scan rejoins, fails or moves the rest
    /// (edits near the column where the scan could rejoin test its checks of the slots it
    /// has still to read).
    #[test]
    fn rejoining_after_random_head_edits_gives_a_full_scan() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut draw = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n.max(1) as u64) as usize
        };
        let (mut compared, mut rejoined, mut moved) = (0, 0, 0);
        for p in 2..7 {
            for m in [3, 2 * p, 30] {
                let blocks = test_blocks(p);
                for block in blocks.iter().cycle().take(blocks.len() * 2) {
                    let Some((_, first)) = first_squeeze(block, m) else {
                        continue;
                    };
                    let mut rows = first.rows.clone();
                    let len = rows[0].len();
                    for _ in 0..1 + draw(4) {
                        let row = &mut rows[draw(p)];
                        let (a, b) = (draw(len), draw(len));
                        if draw(2) == 0 || row[b] == EMPTY || row[a] == EMPTY {
                            row.swap(a, b);
                        }
                    }
                    let copied = squeeze_edited_head(&rows, m, &first, first.period());
                    let scanned = squeeze_state(&rows, m, 0);
                    assert_eq!(parts(&copied), parts(&scanned), "p={p} m={m} {rows:?}");
                    compared += 1;
                    if let Some(s) = &copied {
                        rejoined += usize::from(s.rejoined);
                        moved += usize::from(s.rejoined && s.rows[0].len() < len);
                    }
                }
            }
        }
        assert!(
            compared > 1_000 && rejoined > 200 && moved > 10,
            "{compared} {rejoined} {moved}"
        );
    }
}
