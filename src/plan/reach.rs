//! Exact reachability for the partition search at a bottleneck `b`: which block positions
//! the stages before (forward) or after (backward) a boundary can reach with every stage
//! time `<= b`.
//!
//! Stage times differ per stage (each holds its own number of micro-batches), so "every
//! stage takes the longest range that fits" is not exact: a long first stage can leave the
//! next stage a block it cannot afford. Both passes here rest only on monotonicity under
//! range inclusion, which makes the furthest end reachable from a start non-decreasing in
//! the start; each maximal run of reachable positions then costs one galloping search plus a
//! look-up per position in the precomputed single-block times.

use super::partition::{RangeOracle, fits_within, gallop};

/// Per stage and block, the time of that block alone (`inf` when it does not fit), computed
/// once per search so that the passes below test single blocks without the oracle.
pub(super) fn single_block_times<O: RangeOracle>(o: &mut O, p: usize, n: usize) -> Vec<Vec<f64>> {
    (0..p)
        .map(|s| {
            (0..n)
                .map(|a| o.time(s, a, a).map_or(f64::INFINITY, |t| t.total()))
                .collect()
        })
        .collect()
}

/// Maximal runs `[x, y]` of `true` in `set`.
fn runs(set: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < set.len() {
        if set[i] {
            let x = i;
            while i + 1 < set.len() && set[i + 1] {
                i += 1;
            }
            out.push((x, i));
        }
        i += 1;
    }
    out
}

fn single_fits(single: &[Vec<f64>], s: usize, a: usize, b: f64) -> bool {
    single[s][a] <= b
}

/// `after[s][a]`: stages `s..p` can hold blocks `a..n` (each at least one block) with every
/// time `<= b`. `after[p]` is true at `n` only. Stage 0 can start the whole chain iff
/// `after[0][0]`.
pub(super) fn backward<O: RangeOracle>(
    o: &mut O,
    p: usize,
    n: usize,
    b: f64,
    single: &[Vec<f64>],
) -> Vec<Vec<bool>> {
    let mut after = vec![vec![false; n + 1]; p + 1];
    after[p][n] = true;
    for s in (0..p).rev() {
        for (x, y) in runs(&after[s + 1]) {
            // Ending right before an end e in [x, y] with a single block: starts x-1 ..= y-1.
            let lo = x.saturating_sub(1).max(s);
            for (a, slot) in after[s].iter_mut().enumerate().take(y).skip(lo) {
                *slot |= single_fits(single, s, a, b);
            }
            // Ending right before x with a longer range: starts from the least one that fits.
            if x >= 2 && x - 2 >= s {
                let longest = gallop(x - s, 1, |len| fits_within(o, s, x - len, x - 1, b));
                if let Some(len) = longest {
                    after[s][x - len..x - 1].fill(true);
                }
            }
        }
    }
    after
}

/// `before[s][a]`: stages `0..s` can hold blocks `0..a` with every time `<= b`, leaving at
/// least one block for each later stage. `before[0]` is true at 0 only.
pub(super) fn forward<O: RangeOracle>(
    o: &mut O,
    p: usize,
    n: usize,
    b: f64,
    single: &[Vec<f64>],
) -> Vec<Vec<bool>> {
    let mut before = vec![vec![false; n + 1]; p];
    before[0][0] = true;
    for s in 0..p.saturating_sub(1) {
        // Stage s + 1 may start at most at n - (p - 1 - s), leaving a block per later stage.
        let last_start = n - (p - 1 - s);
        for (x, y) in runs(&before[s]) {
            for a in x..=y.min(last_start - 1) {
                if single_fits(single, s, a, b) {
                    before[s + 1][a + 1] = true;
                }
            }
            if y + 1 < last_start {
                let room = last_start - y;
                if let Some(len) = gallop(room, 1, |len| fits_within(o, s, y, y + len - 1, b)) {
                    before[s + 1][y + 2..=y + len].fill(true);
                }
            }
        }
    }
    before
}

/// The least stage time above `b` of a range that could be the first one above `b` in some
/// partition: from every start reachable at `b`, the shortest range that exceeds `b` (the
/// last stage's range is forced). Every partition whose bottleneck exceeds `b` has it at
/// least this large, so the search visits no bottleneck past a better one. Exact: the
/// candidates are ranked by the oracle's lower bound and timed exactly in that order until
/// no lower bound left can beat the least time found.
pub(super) fn next_breakpoint<O: RangeOracle>(
    o: &mut O,
    p: usize,
    n: usize,
    b: f64,
    before: &[Vec<bool>],
) -> f64 {
    // (lower bound, stage, first, last) of every range above `b` that may set the minimum.
    let mut cands: Vec<(f64, usize, usize, usize)> = Vec::new();
    for (s, starts) in before.iter().enumerate() {
        if s + 1 == p {
            for a in (0..n).filter(|&a| starts[a]) {
                if !fits_within(o, s, a, n - 1, b) {
                    cands.push((o.lower_bound(s, a, n - 1), s, a, n - 1));
                }
            }
            continue;
        }
        let last_end = n - (p - s); // leave a block for each later stage
        let mut end = 0usize; // furthest end known to fit from the current start (sweep)
        for a in (0..=last_end).filter(|&a| starts[a]) {
            let mut e = end.max(a);
            if !fits_within(o, s, a, e, b) {
                // Only possible when e == a (the start's own block exceeds b).
                cands.push((o.lower_bound(s, a, a), s, a, a));
                continue;
            }
            while e < last_end && fits_within(o, s, a, e + 1, b) {
                e += 1;
            }
            end = e;
            if e < last_end {
                cands.push((o.lower_bound(s, a, e + 1), s, a, e + 1));
            }
        }
    }
    cands.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut next = f64::INFINITY;
    for (lb, s, a, e) in cands {
        if lb >= next {
            break;
        }
        let t = o.time(s, a, e).map_or(f64::INFINITY, |t| t.total());
        if t.is_finite() && t > b {
            next = next.min(t);
        }
    }
    next
}
