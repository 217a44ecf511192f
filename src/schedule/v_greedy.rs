//! V-Half and V-Min (controllable-memory V-shapes): the zero-bubble repo's
//! `scheduler/zbv_greedy.py`. A stable per-device pattern of slots for F, f (chunk 1
//! forward), B (chunk 1 input-gradient backward) and b (chunk 0 backward) is repeated every 6
//! slots; W's fill the next empty slots (`put_w`); then warm-up and cool-down ops are moved to
//! the earliest free slot that keeps their dependencies and does not raise the peak memory,
//! first with W's in place, then without (`reorder`), each pass squeezed by unit-time eager
//! execution; finally W's are re-inserted split per chunk. The order does not depend on the
//! real costs (the source uses unit costs), so `input`'s durations are ignored.
//!
//! Slot arithmetic lives in [`Grid`]: flat arrays, one occupancy row per device.

use super::search_input::{check_basic, check_v_shape, op, schedule};
use super::{OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

const EMPTY: u32 = u32::MAX;
/// Memory effect of each op type F, f, B, b, W, w in chunk-activations.
const MEM: [i64; 6] = [1, 1, 0, 0, -1, -1];

/// Generates `v-half` or `v-min`.
pub(crate) fn generate(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<Schedule, ScheduleError> {
    check_basic(kind, input)?;
    check_v_shape(kind, input)?;
    let (p, m) = (input.p as usize, input.m as usize);
    let pattern = if kind == ScheduleKind::VMin {
        pattern_v_min(p)
    } else {
        pattern_v_half(p)
    };
    let grid = Grid::from_pattern(&pattern, m);
    let r1 = reorder(&grid, true).first_four();
    let r2 = reorder(&r1, false).first_four().put_w(true);
    let devices = (0..p)
        .map(|d| {
            r2.row(d)
                .iter()
                .filter(|&&c| c != EMPTY)
                .map(|&c| {
                    let (ty, mb) = r2.decode(c);
                    // Types: 0 F chunk 0, 1 F chunk 1, 2 B chunk 1, 3 B chunk 0, 4 W chunk 1,
                    // 5 W chunk 0 (the source's B/W chunk index is flipped).
                    let (kind, chunk) = match ty {
                        0 => (OpKind::F, 0),
                        1 => (OpKind::F, 1),
                        2 => (OpKind::B, 1),
                        3 => (OpKind::B, 0),
                        4 => (OpKind::W, 1),
                        _ => (OpKind::W, 0),
                    };
                    op(kind, mb, chunk)
                })
                .collect()
        })
        .collect();
    Ok(schedule(kind, input, 2, Placement::VShape, devices))
}

/// V-Min's slots of F, f, B, b for micro-batch 0 on device `i`.
fn pattern_v_min(p: usize) -> Vec<[usize; 4]> {
    let interval = if p.is_multiple_of(3) { 2 } else { 0 };
    (0..p)
        .map(|i| {
            [
                i,
                2 * p - i - 1,
                2 * p + interval + i,
                4 * p + interval - i - 1,
            ]
        })
        .collect()
}

/// V-Half's slots of F, f, B, b for micro-batch 0 on device `i`.
fn pattern_v_half(p: usize) -> Vec<[usize; 4]> {
    let interval = if p.is_multiple_of(2) { 3 } else { 0 };
    (0..p)
        .map(|i| {
            [
                2 * i,
                3 * p - i - 2,
                3 * p + interval + 2 * i - 1,
                6 * p + interval - i - 2,
            ]
        })
        .collect()
}

/// Slot positions of every op and the inverse occupancy. Type lists: F, f, B, b (m each),
/// then either one W list (2m, W's of both chunks in slot order) or W and w (m each).
/// `slot[d * per_dev + off[t] + k]`; `occ[d * len + slot]` is `t * 2m + k` or [`EMPTY`].
#[derive(Debug, Clone)]
struct Grid {
    p: usize,
    m: usize,
    lens: Vec<usize>,
    off: Vec<usize>,
    per_dev: usize,
    len: usize,
    slot: Vec<usize>,
    occ: Vec<u32>,
}

impl Grid {
    fn from_pattern(pattern: &[[usize; 4]], m: usize) -> Grid {
        let p = pattern.len();
        let mut slot = Vec::with_capacity(p * 4 * m);
        for pat in pattern {
            for &x in pat {
                slot.extend((0..m).map(|k| x + 6 * k));
            }
        }
        Grid::from_slots(p, m, vec![m; 4], slot)
    }

    fn from_slots(p: usize, m: usize, lens: Vec<usize>, slot: Vec<usize>) -> Grid {
        let off: Vec<usize> = lens
            .iter()
            .scan(0, |acc, &l| {
                let o = *acc;
                *acc += l;
                Some(o)
            })
            .collect();
        let per_dev: usize = lens.iter().sum();
        let len = slot.iter().copied().max().unwrap_or(0) + 1;
        let mut occ = vec![EMPTY; p * len];
        for d in 0..p {
            for (t, (&o, &l)) in off.iter().zip(&lens).enumerate() {
                for k in 0..l {
                    occ[d * len + slot[d * per_dev + o + k]] = (t * 2 * m + k) as u32;
                }
            }
        }
        Grid {
            p,
            m,
            lens,
            off,
            per_dev,
            len,
            slot,
            occ,
        }
    }

    fn index(&self, d: usize, t: usize, k: usize) -> usize {
        d * self.per_dev + self.off[t] + k
    }

    fn at(&self, d: usize, t: usize, k: usize) -> usize {
        self.slot[self.index(d, t, k)]
    }

    fn row(&self, d: usize) -> &[u32] {
        &self.occ[d * self.len..(d + 1) * self.len]
    }

    fn decode(&self, code: u32) -> (usize, usize) {
        let c = code as usize;
        (c / (2 * self.m), c % (2 * self.m))
    }

    /// Moves op (`d`, `t`, `k`) to slot `to` (which must be empty and in range).
    fn move_op(&mut self, d: usize, t: usize, k: usize, to: usize) {
        let i = self.index(d, t, k);
        let from = self.slot[i];
        self.occ[d * self.len + to] = self.occ[d * self.len + from];
        self.occ[d * self.len + from] = EMPTY;
        self.slot[i] = to;
    }

    /// The grid restricted to F, f, B, b (the source's `schedule[:4]`).
    fn first_four(&self) -> Grid {
        let mut slot = Vec::with_capacity(self.p * 4 * self.m);
        for d in 0..self.p {
            let base = d * self.per_dev;
            slot.extend_from_slice(&self.slot[base..base + 4 * self.m]);
        }
        Grid::from_slots(self.p, self.m, vec![self.m; 4], slot)
    }

    /// `put_w`: each B/b makes a W pending, placed in the next empty slot (with `split`, a
    /// W of B's chunk before a w of b's chunk); the rest go after the last op. Returns a grid
    /// with one W list of 2m, or (`split`) W and w lists of m each.
    fn put_w(&self, split: bool) -> Grid {
        let m = self.m;
        let lens = if split {
            vec![m; 6]
        } else {
            vec![m, m, m, m, 2 * m]
        };
        let per_dev = 6 * m;
        let mut slot = vec![0; self.p * per_dev];
        for d in 0..self.p {
            let base = d * per_dev;
            slot[base..base + 4 * m]
                .copy_from_slice(&self.slot[d * self.per_dev..d * self.per_dev + 4 * m]);
            let bound = (0..4).map(|t| self.at(d, t, m - 1)).max().unwrap_or(0);
            let mut pending = [0usize; 2];
            let mut placed = [0usize; 2];
            let mut put = |w: usize, at: usize| {
                slot[base + 4 * m + w * m + placed[w]] = at;
                placed[w] += 1;
            };
            for (i, &code) in self.row(d).iter().enumerate().take(bound + 1) {
                if code != EMPTY {
                    let (t, _) = self.decode(code);
                    if t == 2 || t == 3 {
                        pending[if split { t - 2 } else { 0 }] += 1;
                    }
                } else if let Some(w) = (0..2).find(|&w| pending[w] > 0) {
                    put(w, i);
                    pending[w] -= 1;
                }
            }
            let mut i = bound;
            for (w, left) in pending.iter().enumerate() {
                for _ in 0..*left {
                    i += 1;
                    put(w, i);
                }
            }
        }
        Grid::from_slots(self.p, m, lens, slot)
    }

    /// `mem_of_stage`: peak of the running activation count along device `d`'s slots. With
    /// W's in the grid they free one each; without, every empty slot frees one pending W.
    fn mem_peak(&self, d: usize) -> i64 {
        let has_w = self.has_w();
        let (mut cur, mut peak, mut pending) = (0i64, 0i64, 0u32);
        for &code in self.row(d) {
            self.mem_step(code, has_w, &mut cur, &mut pending);
            peak = peak.max(cur);
        }
        peak
    }

    /// Whether the grid holds W lists (else every empty slot frees one pending W).
    fn has_w(&self) -> bool {
        self.lens.len() > 4
    }

    /// One slot of [`Grid::mem_peak`]'s walk: the running count `cur` and the W's `pending`
    /// after the slot holding `code`.
    fn mem_step(&self, code: u32, has_w: bool, cur: &mut i64, pending: &mut u32) {
        if code != EMPTY {
            let (t, _) = self.decode(code);
            *cur += MEM[t];
            if t == 2 || t == 3 {
                *pending += 1;
            }
        } else if !has_w && *pending > 0 {
            *cur -= 1;
            *pending -= 1;
        }
    }

    /// `eager_execution_time` with unit costs and no transfer time: each op starts when the
    /// previous op of its device, its predecessor in the chain, the previous type of the same
    /// micro-batch (f after F, B after f, b after B) and the previous micro-batch of its type
    /// are done. Returns the grid with every op at its start time.
    fn eager_unit(&self) -> Grid {
        let p = self.p;
        let mut end = vec![0usize; p * self.per_dev];
        let mut dev_free = vec![0usize; p];
        let idx = |d: usize, t: usize, k: usize| self.index(d, t, k);
        for s in 0..self.len {
            for d in 0..p {
                let code = self.occ[d * self.len + s];
                if code == EMPTY {
                    continue;
                }
                let (t, k) = self.decode(code);
                let mut ready = dev_free[d];
                if (t == 0 || t == 2) && d > 0 {
                    ready = ready.max(end[idx(d - 1, t, k)]);
                }
                if (t == 1 || t == 3) && d + 1 < p {
                    ready = ready.max(end[idx(d + 1, t, k)]);
                }
                if t > 0 && t < 4 {
                    ready = ready.max(end[idx(d, t - 1, k)]);
                }
                if k > 0 {
                    ready = ready.max(end[idx(d, t, k - 1)]);
                }
                end[idx(d, t, k)] = ready + 1;
                dev_free[d] = ready + 1;
            }
        }
        let start = end.iter().map(|e| e.saturating_sub(1)).collect();
        Grid::from_slots(p, self.m, self.lens.clone(), start)
    }

    /// Slot of the `k`-th backward (B or b, in slot order) on device `d`.
    fn kth_backward(&self, d: usize, k: usize) -> usize {
        let (mut i, mut j) = (0, 0);
        loop {
            let a = (i < self.lens[2]).then(|| self.at(d, 2, i));
            let b = (j < self.lens[3]).then(|| self.at(d, 3, j));
            let next = match (a, b) {
                (Some(x), Some(y)) if x <= y => {
                    i += 1;
                    x
                }
                (Some(x), None) => {
                    i += 1;
                    x
                }
                (_, Some(y)) => {
                    j += 1;
                    y
                }
                (None, None) => return 0,
            };
            if i + j > k {
                return next;
            }
        }
    }
}

/// The source's `reorder`: walk the ops in slot order; warm-up ops (before device 0's first
/// b; only when `consider_w`) and cool-down ops (after the first last-micro-batch F) move to
/// the earliest free slot after their dependencies that keeps the device's peak memory at
/// most the grid's starting peak; steady-phase ops stay. Returns the squeezed grid with one
/// W list.
fn reorder(grid4: &Grid, consider_w: bool) -> Grid {
    let mut g = if consider_w {
        grid4.put_w(false)
    } else {
        grid4.clone()
    };
    let (p, m) = (g.p, g.m);
    let current_mem = (0..p).map(|d| g.mem_peak(d)).max().unwrap_or(0);
    let original = g.occ.clone();
    let mut walks: Vec<MemWalk> = (0..p).map(|d| MemWalk::of(&g, d)).collect();
    let mut phase = 0;
    for s in 0..g.len {
        for d in 0..p {
            let code = original[d * g.len + s];
            if code == EMPTY {
                continue;
            }
            let (t, k) = g.decode(code);
            if t == 3 && d == 0 && phase == 0 {
                phase = 1;
            }
            if phase == 1 {
                if t == 0 && k == m - 1 {
                    phase = 2;
                }
                continue;
            }
            if phase == 0 && !consider_w {
                continue;
            }
            // Earliest slot after every dependency (as slots, not times).
            let mut deps: Option<usize> = None;
            let mut need = |x: usize| deps = Some(deps.map_or(x, |y| y.max(x)));
            if (t == 0 || t == 2) && d > 0 {
                need(g.at(d - 1, t, k));
            }
            if (t == 1 || t == 3) && d + 1 < p {
                need(g.at(d + 1, t, k));
            }
            if t > 0 && t < 4 {
                need(g.at(d, t - 1, k));
            }
            if t == 4 {
                need(g.kth_backward(d, k));
            }
            if k > 0 {
                need(g.at(d, t, k - 1));
            }
            let first = deps.map_or(0, |x| x + 1);
            for to in first..s {
                if g.occ[d * g.len + to] != EMPTY {
                    continue;
                }
                g.move_op(d, t, k, to);
                if walks[d].peaks_within(&g, d, to, s, current_mem) {
                    walks[d].refresh(&g, d, to, s);
                    break;
                }
                g.move_op(d, t, k, s);
            }
        }
    }
    let g = if consider_w { g } else { g.put_w(false) };
    g.eager_unit()
}

/// Slots per block of [`MemWalk`]'s block maxima.
const BLOCK: usize = 64;

/// [`Grid::mem_peak`]'s walk along one device's row, kept slot by slot so that a trial move
/// is judged without walking the whole row again: the state after each slot, and the highest
/// level of each block of [`BLOCK`] slots. A move from slot `s` to an earlier `to` leaves the
/// walk before `to` as it was, and once the walk after `s` is back in a state it had before
/// the move, it goes on exactly as before; so the new peak is the highest of the old walk
/// before `to`, the stretch walked in between, and the old walk after it.
/// [`MemWalk::peaks_within`] answers exactly what `mem_peak(d) <= limit` answers (a test
/// compares them on random moves), at the cost of that stretch and the block maxima.
struct MemWalk {
    /// Running count after each slot.
    cur: Vec<i64>,
    /// Pending W's after each slot.
    pending: Vec<u32>,
    /// Highest running count in each block of slots.
    block_max: Vec<i64>,
}

impl MemWalk {
    /// The walk of device `d`'s row.
    fn of(g: &Grid, d: usize) -> MemWalk {
        let has_w = g.has_w();
        let (mut cur, mut pending) = (0i64, 0u32);
        let mut w = MemWalk {
            cur: Vec::with_capacity(g.len),
            pending: Vec::with_capacity(g.len),
            block_max: Vec::new(),
        };
        for &code in g.row(d) {
            g.mem_step(code, has_w, &mut cur, &mut pending);
            w.cur.push(cur);
            w.pending.push(pending);
        }
        w.block_max = w
            .cur
            .chunks(BLOCK)
            .map(|c| c.iter().copied().max().unwrap_or(i64::MIN))
            .collect();
        w
    }

    /// The state before slot `i`.
    fn before(&self, i: usize) -> (i64, u32) {
        match i.checked_sub(1) {
            Some(j) => (self.cur[j], self.pending[j]),
            None => (0, 0),
        }
    }

    /// Highest running count over slots `a..b` (`i64::MIN` when empty).
    fn range_max(&self, a: usize, b: usize) -> i64 {
        let mut high = i64::MIN;
        let mut i = a;
        while i < b {
            if i.is_multiple_of(BLOCK) && i + BLOCK <= b {
                high = high.max(self.block_max[i / BLOCK]);
                i += BLOCK;
            } else {
                high = high.max(self.cur[i]);
                i += 1;
            }
        }
        high
    }

    /// Walks row `d` of `g` from slot `to` on until, at or after slot `s`, it reaches a state
    /// the kept walk has at the same slot; calls `seen(slot, state)` for each slot walked,
    /// stopping early when it returns false. Returns the slot where the walks met (or the
    /// row's length) and whether it ran to the end.
    fn walk_from(
        &self,
        g: &Grid,
        d: usize,
        (to, s): (usize, usize),
        mut seen: impl FnMut(usize, i64, u32) -> bool,
    ) -> Option<usize> {
        let has_w = g.has_w();
        let (mut cur, mut pending) = self.before(to);
        for (i, &code) in g.row(d).iter().enumerate().skip(to) {
            g.mem_step(code, has_w, &mut cur, &mut pending);
            if i >= s && cur == self.cur[i] && pending == self.pending[i] {
                return Some(i);
            }
            if !seen(i, cur, pending) {
                return None;
            }
        }
        Some(g.len)
    }

    /// Whether `mem_peak(d) <= limit` for the grid `g`, whose row `d` differs from the kept
    /// walk only by one op moved from slot `s` to the earlier slot `to`.
    fn peaks_within(&self, g: &Grid, d: usize, to: usize, s: usize, limit: i64) -> bool {
        if self.range_max(0, to).max(0) > limit {
            return false;
        }
        match self.walk_from(g, d, (to, s), |_, cur, _| cur <= limit) {
            Some(met) => self.range_max(met, g.len) <= limit,
            None => false,
        }
    }

    /// Takes in the move of [`MemWalk::peaks_within`] (now kept in `g`).
    fn refresh(&mut self, g: &Grid, d: usize, to: usize, s: usize) {
        let mut changed = Vec::new();
        let met = self
            .walk_from(g, d, (to, s), |i, cur, pending| {
                changed.push((i, cur, pending));
                true
            })
            .unwrap_or(g.len);
        for (i, cur, pending) in changed {
            self.cur[i] = cur;
            self.pending[i] = pending;
        }
        for blk in to / BLOCK..met.div_ceil(BLOCK).min(self.block_max.len()) {
            let end = ((blk + 1) * BLOCK).min(g.len);
            self.block_max[blk] = self.cur[blk * BLOCK..end]
                .iter()
                .copied()
                .max()
                .unwrap_or(i64::MIN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept walk judges every trial move exactly as walking the whole row does, with W's
    /// in the grid and without, for moves that are kept and moves that are undone.
    #[test]
    fn the_kept_walk_judges_moves_as_the_full_walk() {
        let mut seed = 11u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n.max(1)
        };
        let mut judged = 0;
        for (p, m) in [(2, 3), (4, 8), (5, 7), (8, 16), (16, 40)] {
            for with_w in [false, true] {
                let four = Grid::from_pattern(&pattern_v_half(p), m);
                let mut g = if with_w { four.put_w(false) } else { four };
                let mut walks: Vec<MemWalk> = (0..p).map(|d| MemWalk::of(&g, d)).collect();
                for _ in 0..400 {
                    let d = next(p);
                    let s = next(g.len);
                    let code = g.occ[d * g.len + s];
                    if code == EMPTY || s == 0 {
                        continue;
                    }
                    let to = next(s);
                    if g.occ[d * g.len + to] != EMPTY {
                        continue;
                    }
                    let (t, k) = g.decode(code);
                    g.move_op(d, t, k, to);
                    let peak = g.mem_peak(d);
                    for limit in peak - 2..=peak + 1 {
                        assert_eq!(
                            walks[d].peaks_within(&g, d, to, s, limit),
                            peak <= limit,
                            "p {p} m {m} w {with_w} device {d} {s} -> {to} limit {limit}"
                        );
                        judged += 1;
                    }
                    if next(2) == 0 {
                        walks[d].refresh(&g, d, to, s);
                        let fresh = MemWalk::of(&g, d);
                        assert_eq!(walks[d].cur, fresh.cur);
                        assert_eq!(walks[d].pending, fresh.pending);
                        assert_eq!(walks[d].block_max, fresh.block_max);
                    } else {
                        g.move_op(d, t, k, s);
                    }
                }
            }
        }
        assert!(judged > 1000, "only {judged} moves judged");
    }
}
