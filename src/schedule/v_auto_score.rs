//! The last steps of a V-ZB candidate in one left-to-right pass: the greedy reordering
//! (`v_auto_reorder`), the W relabelling and the one-sweep timer (`v_auto_time`) settle,
//! relabel and time each slot in turn, so the search can give up on a candidate as soon as
//! one device's span is sure not to beat the best one found (branch and bound: most
//! candidates are given up a fifth of the way in). Rows as in `v_auto_steps`.
//!
//! Each step only reads the slots it has not yet passed and writes the slot it settles, so
//! doing them slot by slot gives the rows, checks and span the steps give one after another.

use super::ScheduleInput;
use super::v_auto_finish::check_correctness;
use super::v_auto_reorder::Reorder;
use super::v_auto_squeeze::Squeezed;
use super::v_auto_steps::{EMPTY, Rows, peak};
use super::v_auto_time::Sweep;

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

/// Reorders a squeeze's output rows greedily, relabels the W's in the order their B's ran,
/// checks the result as the source does, and scores it; with `bound`, gives up once a
/// device's span is sure to be at least `bound` (the best so far: only a smaller span
/// replaces it). `init_peak` is the peak the reordered rows may not exceed.
pub(super) fn finish(
    squeezed: Squeezed,
    m: usize,
    init_peak: i64,
    input: &ScheduleInput,
    bound: Option<f64>,
) -> Finish {
    let (mut reorder, mut rows) = Reorder::squeezed(squeezed, m);
    let p = rows.len();
    let max_len = rows.first().map_or(0, Vec::len);
    // The relabelling needs m passes of each kind on every device; reordering keeps counts.
    if !reorder.has_each_kind(m) {
        return Finish::Dropped;
    }
    let mut sweep = Sweep::new(input, p, m);
    let mut timed = true;
    // Per device, the W labels owed to the B's met so far (at most 2m), oldest first.
    let mut owed = vec![EMPTY; p * 2 * m];
    let (mut head, mut tail) = (vec![0usize; p], vec![0usize; p]);
    for j in 0..max_len {
        for i in 0..p {
            reorder.settle(&mut rows, j, i);
            let Some(slot) = rows[i].get_mut(j) else {
                continue;
            };
            let c = match *slot {
                EMPTY => continue,
                b'B' | b'b' => {
                    let Some(label) = owed.get_mut(i * 2 * m + tail[i]) else {
                        return Finish::Dropped;
                    };
                    *label = if *slot == b'B' { b'W' } else { b'w' };
                    tail[i] += 1;
                    *slot
                }
                b'W' | b'w' => {
                    if head[i] == tail[i] {
                        return Finish::Dropped;
                    }
                    *slot = owed[i * 2 * m + head[i]];
                    head[i] += 1;
                    *slot
                }
                c => c,
            };
            if timed {
                match sweep.pass(i, c) {
                    None => timed = false,
                    // Only a wait raises the bound (see `cannot_beat`).
                    Some(true) if bound.is_some_and(|b| sweep.cannot_beat(i, b)) => {
                        return Finish::Beaten;
                    }
                    Some(_) => {}
                }
            }
        }
    }
    if head != tail || peak(&rows) > init_peak || !check_correctness(&rows, m) {
        return Finish::Dropped;
    }
    let span = if timed { sweep.span() } else { None };
    Finish::Done(rows, span)
}

#[cfg(test)]
mod tests {
    use super::super::v_auto::{cooled_down, test_blocks, warmed_up};
    use super::super::v_auto_finish::relabel_w;
    use super::super::v_auto_reorder::reorder_greedily;
    use super::super::v_auto_steps::process_cooldown;
    use super::super::v_auto_time::sweep_span;
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
    /// rows straight after the warm-up, which more often fail).
    #[test]
    fn fused_steps_match_the_steps_in_turn() {
        let (mut compared, mut done) = (0, 0);
        for p in 2..7 {
            for m in [1, 2, 3, 5, 9, 14] {
                let redundant_m = m.max(2 * p);
                let input = ScheduleInput::uniform(p as u32, m as u32, 2, 1.3, 0.7, 1.9, 0.25);
                for block in test_blocks(p) {
                    let Some(warm) = warmed_up(&block, redundant_m) else {
                        continue;
                    };
                    let init_peak = peak(&warm.rows);
                    let cooled = process_cooldown(&warm, m, init_peak).unwrap_or_default();
                    let mut cases = vec![(warm, init_peak), (cooled, init_peak)];
                    // The rows the search itself gives the last steps (for m below 2p,
                    // cut to m micro-batches before their cool-down).
                    cases.extend(cooled_down(&block, m));
                    for (rows, init_peak) in cases {
                        let slow = step_by_step(rows.rows.clone(), m, init_peak, &input);
                        let fused = finish(rows, m, init_peak, &input, None);
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
        assert!(compared > 1000 && done > 600, "{compared} {done}");
    }
}
