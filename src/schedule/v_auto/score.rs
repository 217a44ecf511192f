//! The last steps of a V-ZB candidate in one left-to-right pass: the greedy reordering
//! (`reorder`), the W relabelling and the one-sweep timer (`time`) settle,
//! relabel and time each slot in turn, so the search can give up on a candidate as soon as
//! one device's span is sure not to beat the best one found (branch and bound: most
//! candidates are given up a fifth of the way in). Rows as in `steps`.
//!
//! Each step only reads the slots it has not yet passed and writes the slot it settles, so
//! doing them slot by slot gives the rows, checks and span the steps give one after another.
//!
//! The walk starts before the cool-down's squeeze, on the rows that squeeze starts from:
//! they equal its output on their first columns ([`Cooled::kept_columns`]). Only a
//! candidate still in the running when the walk needs a later slot is squeezed; the walk
//! then goes on over the squeezed rows, with its first columns as the walk left them.

use super::finish::check_correctness;
use super::reorder::Reorder;
use super::steps::{Cooled, EMPTY, Rows, peak};
use super::time::Sweep;
use crate::schedule::ScheduleInput;

/// What became of a candidate's last steps.
pub(super) enum Finish {
    /// Dropped where the source fails an assertion: W's cannot be relabelled, the peak
    /// rose above the one before the cool-down, or a pass comes before its dependency.
    Dropped,
    /// Given up: its longest span is sure to be no smaller than the bound given.
    Beaten,
    /// The final rows and their longest span (`None` where the one-sweep timer cannot time
    /// them: the caller times them the general way).
    Done(Rows, Option<f64>),
}

/// Reorders the cool-down's squeezed rows greedily, relabels the W's in the order their
/// B's ran, checks the result as the source does, and scores it; with `bound`, gives up
/// once a device's span is sure to be at least `bound` (the best so far: only a smaller
/// span replaces it). `init_peak` is the peak the reordered rows may not exceed.
pub(super) fn finish(
    mut cooled: Cooled,
    m: usize,
    init_peak: i64,
    input: &ScheduleInput,
    bound: Option<f64>,
) -> Finish {
    let kept = cooled.kept_columns();
    let p = cooled.before.rows.len();
    let mut walk = Walk {
        reorder: Reorder::with_lists(p, cooled.peak(), m, m),
        sweep: Sweep::new(input, p, m),
        timed: true,
        bound,
        m,
        owed: vec![EMPTY; p * 2 * m],
        head: vec![0; p],
        tail: vec![0; p],
    };
    let (rows, lists) = cooled.before.rows_and_lists();
    // The relabelling needs m passes of each kind on every device; the cool-down and the
    // reordering keep the counts.
    if !walk.reorder.has_each_kind(lists, m) {
        return Finish::Dropped;
    }
    let at = match walk.run(rows, lists, (0, 0), kept, kept) {
        Ok(at) => at,
        Err(out) => return out,
    };
    // (The squeeze keeps the counts just checked, and the final check counts again.)
    let Some(mut after) = cooled.squeeze() else {
        return Finish::Dropped;
    };
    // The walk changed only the first `kept` columns, which the squeeze left as they were.
    for (row, walked) in after.rows.iter_mut().zip(&cooled.before.rows) {
        let n = kept.min(row.len()).min(walked.len());
        row[..n].copy_from_slice(&walked[..n]);
    }
    let max_len = after.rows.first().map_or(0, Vec::len);
    let (rows, lists) = after.rows_and_lists();
    if let Err(out) = walk.run(rows, lists, at, max_len, usize::MAX) {
        return out;
    }
    let rows = after.rows;
    if walk.head != walk.tail || peak(&rows) > init_peak || !check_correctness(&rows, m) {
        return Finish::Dropped;
    }
    let span = if walk.timed { walk.sweep.span() } else { None };
    Finish::Done(rows, span)
}

/// The state of the slot-by-slot last steps between slots.
struct Walk {
    reorder: Reorder,
    sweep: Sweep,
    /// Whether every pass so far could be timed in one sweep.
    timed: bool,
    bound: Option<f64>,
    m: usize,
    /// Per device, the W labels owed to the B's met so far (at most 2m), oldest first,
    /// from `head` to `tail`.
    owed: Vec<u8>,
    head: Vec<usize>,
    tail: Vec<usize>,
}

impl Walk {
    /// Settles, relabels and times the slots from `(column, device)` `from` up to column
    /// `to`, reading the rows as final before column `limit` only; gives where it stopped
    /// when it needed a later slot (`to` where it did not), or the candidate's fate where it
    /// is dropped or beaten. `positions`: the rows' slot lists (see [`Reorder`]).
    #[inline]
    fn run(
        &mut self,
        rows: &mut Rows,
        positions: &[i32],
        from: (usize, usize),
        to: usize,
        limit: usize,
    ) -> Result<(usize, usize), Finish> {
        let (p, m) = (rows.len(), self.m);
        let (mut j, mut first) = from;
        while j < to {
            for i in first..p {
                if !self.reorder.settle(rows, positions, j, i, limit) {
                    return Ok((j, i));
                }
                let Some(slot) = rows[i].get_mut(j) else {
                    continue;
                };
                let c = match *slot {
                    EMPTY => continue,
                    b'B' | b'b' => {
                        let Some(label) = self.owed.get_mut(i * 2 * m + self.tail[i]) else {
                            return Err(Finish::Dropped);
                        };
                        *label = if *slot == b'B' { b'W' } else { b'w' };
                        self.tail[i] += 1;
                        *slot
                    }
                    b'W' | b'w' => {
                        if self.head[i] == self.tail[i] {
                            return Err(Finish::Dropped);
                        }
                        *slot = self.owed[i * 2 * m + self.head[i]];
                        self.head[i] += 1;
                        *slot
                    }
                    c => c,
                };
                if self.timed {
                    match self.sweep.pass(i, c) {
                        None => self.timed = false,
                        // Only a wait raises the bound (see `cannot_beat`).
                        Some(true) if self.bound.is_some_and(|b| self.sweep.cannot_beat(i, b)) => {
                            return Err(Finish::Beaten);
                        }
                        Some(_) => {}
                    }
                }
            }
            first = 0;
            j += 1;
        }
        Ok((j, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::super::finish::relabel_w;
    use super::super::reorder::reorder_greedily;
    use super::super::search::{cooled_down, test_blocks, warmed_up};
    use super::super::steps::cooldown;
    use super::super::time::sweep_span;
    use super::*;

    /// The source's steps one after another.
    fn step_by_step(mut rows: Rows, m: usize, init_peak: i64, input: &ScheduleInput) -> Finish {
        reorder_greedily(&mut rows, m);
        if relabel_w(&mut rows, m).is_none()
            || peak(&rows) > init_peak
            || !check_correctness(&rows, m)
        {
            return Finish::Dropped;
        }
        let span = sweep_span(&rows, input, m);
        Finish::Done(rows, span)
    }

    /// Slot by slot gives what the steps give one after another, on cooled-down rows of
    /// every block, as the search builds them and straight from the warm-up's rows (and on
    /// rows straight after the warm-up, which more often fail); the walk starts before the
    /// cool-down's squeeze wherever there is one.
    #[test]
    fn fused_steps_match_the_steps_in_turn() {
        let (mut compared, mut done, mut lazy) = (0, 0, 0);
        for p in 2..7 {
            for m in [1, 2, 3, 5, 9, 14] {
                let redundant_m = m.max(2 * p);
                let input = ScheduleInput::uniform(p as u32, m as u32, 2, 1.3, 0.7, 1.9, 0.25);
                for block in test_blocks(p) {
                    let Some(warm) = warmed_up(&block, redundant_m) else {
                        continue;
                    };
                    let init_peak = peak(&warm.rows);
                    let mut cases = vec![(Cooled::squeezed(warm.clone(), m), init_peak)];
                    cases.extend(cooldown(warm, m, init_peak).map(|c| (c, init_peak)));
                    // The rows the search itself gives the last steps (for m below 2p,
                    // cut to m micro-batches before their cool-down).
                    cases.extend(cooled_down(&block, m));
                    for (cooled, init_peak) in cases {
                        let Some(rows) = cooled.squeeze() else {
                            assert!(matches!(
                                finish(cooled, m, init_peak, &input, None),
                                Finish::Dropped
                            ));
                            continue;
                        };
                        lazy += usize::from(cooled.kept_columns() > 0);
                        let slow = step_by_step(rows.rows, m, init_peak, &input);
                        let fused = finish(cooled, m, init_peak, &input, None);
                        match (fused, slow) {
                            (Finish::Dropped, Finish::Dropped) => {}
                            (Finish::Done(a, x), Finish::Done(b, y)) => {
                                assert_eq!((a, x), (b, y), "p={p} m={m} block {block:?}");
                                done += 1;
                            }
                            _ => panic!("p={p} m={m} block {block:?}: outcomes differ"),
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(
            compared > 1000 && done > 600 && lazy > 1000,
            "{compared} {done} {lazy}"
        );
    }
}
