//! The dense table over the regular groups: one cell per capacity unit (bytes divided by the
//! groups' common divisor), filled group by group with the pick of every group at every cell.

use super::run::Scale;
use super::scratch::Scratch;
use super::{Arith, Group};

/// Above this many choices a keep-k-of-n group is filled with a sliding-window minimum (one
/// pass over the cells, whatever n) instead of one vectorised pass per choice: a pass costs
/// a few instructions per cell, the window a few dozen.
const PASSES_MAX_CHOICES: usize = 24;

/// How one regular group's cells are filled.
enum Fill {
    /// One `relax` pass per choice, in this order (earlier choices win ties).
    Passes(Vec<usize>),
    /// The keep-k-of-n sliding window ([`fill_arith`]).
    Window(Arith),
}

impl Fill {
    /// The fill of `group` with its Pareto `front` (in byte order). A keep-k-of-n group
    /// takes "keep all" first (it wins ties, then fewer kept copies win), as the window does.
    fn of(group: &Group, front: &[usize]) -> Fill {
        match group.arith {
            Some(a) if front.len() > PASSES_MAX_CHOICES => Fill::Window(a),
            Some(a) => {
                let all = a.n as usize;
                let mut order = Vec::with_capacity(front.len());
                order.extend(front.iter().copied().filter(|&c| c == all));
                order.extend(front.iter().copied().filter(|&c| c != all));
                Fill::Passes(order)
            }
            None => Fill::Passes(front.to_vec()),
        }
    }

    /// The most cells below a written cell that this fill reads (its largest choice read).
    fn reach(&self, group: &Group, unit: u64) -> usize {
        match self {
            Fill::Passes(order) => order
                .iter()
                .map(|&c| (group.choices[c].bytes / unit) as usize)
                .max()
                .unwrap_or(0),
            Fill::Window(a) => {
                let full = (u64::from(a.n) * a.step / unit) as usize;
                let partial = (a.charge / unit) as usize
                    + (a.n as usize).saturating_sub(1) * (a.step / unit) as usize;
                full.max(if a.n > 0 { partial } else { 0 })
            }
        }
    }
}

/// Fills cells `lo..=hi` of `next`/`pick` for an arithmetic group from `table` (all in
/// `unit`s), reading `table` only from `lo` minus the group's reach; `next` comes in
/// infinite over `lo..=hi`.
fn fill_arith(
    a: &Arith,
    unit: u64,
    (lo, hi): (usize, usize),
    table: &[f64],
    next: &mut [f64],
    pick: &mut [u32],
) {
    let n = a.n as usize;
    let full = (u64::from(a.n) * a.step / unit) as usize;
    let step = (a.step / unit) as usize;
    let charge = (a.charge / unit) as usize;
    // Keep all n: no charge, no cost. `next` is all infinite here, so a cell takes the value
    // `full` cells below (infinite stays infinite) and the pick where that is finite.
    let from = lo.max(full);
    if from <= hi {
        next[from..=hi].copy_from_slice(&table[from - full..=hi - full]);
        if !pick.is_empty() {
            for (p, &t) in pick[from..=hi]
                .iter_mut()
                .zip(&table[from - full..=hi - full])
            {
                *p = if t < f64::INFINITY { a.n } else { *p };
            }
        }
    }
    if n == 0 {
        return;
    }
    let r = a.unit_cost;
    if step == 0 {
        // Every partial choice weighs `charge`; the best keeps n - 1.
        for c in lo.max(charge)..=hi {
            let v = table[c - charge] + r;
            if v < next[c] {
                next[c] = v;
                if let Some(p) = pick.get_mut(c) {
                    *p = a.n - 1;
                }
            }
        }
        return;
    }
    // Partial: keep k < n. For c' = c - charge in residue class rho (mod step), position q:
    // min over t in [q - n + 1, q] of table[rho + t step] + t r, plus (n - q) r. The window's
    // candidates (position, value) sit in `win[head..tail]`, values rising; among equal values
    // the later position stays (it replaces the earlier one). Each class starts n - 1
    // positions before its first written cell, so the window at a written cell holds exactly
    // what it would hold had the class started at 0.
    let len = (hi + 1).div_ceil(step) + 1;
    let mut win: Vec<(usize, f64)> = vec![(0, 0.0); len];
    let nf = n as f64;
    for rho in 0..step.min(hi + 1) {
        let (mut head, mut tail) = (0usize, 0usize);
        let first = lo.saturating_sub(charge + rho).div_ceil(step);
        let mut q = first.saturating_sub(n - 1);
        let mut qf = q as f64; // exact: q is small
        let mut cp = rho + q * step;
        while cp + charge <= hi {
            let v = table[cp] + qf * r;
            if v.is_finite() {
                while tail > head && win[tail - 1].1 >= v {
                    tail -= 1;
                }
                win[tail] = (q, v);
                tail += 1;
            }
            while tail > head && win[head].0 + n <= q {
                head += 1;
            }
            let c = cp + charge;
            if tail > head && c >= lo {
                let (t, best) = win[head];
                let val = best + (nf - qf) * r;
                if val < next[c] {
                    next[c] = val;
                    if let Some(p) = pick.get_mut(c) {
                        *p = u32::try_from(q - t).unwrap_or(0);
                    }
                }
            }
            q += 1;
            qf += 1.0;
            cp += step;
        }
    }
}

/// `next[j] = min(next[j], src[j] + cost)` for every `j` (strictly: an earlier choice keeps
/// a tie). Branch-free, so it vectorises; the choice taken at a cell is found again by
/// [`Table::pick`] only where the trace back asks.
fn relax(src: &[f64], cost: f64, next: &mut [f64]) {
    for (n, &t) in next.iter_mut().zip(src) {
        let v = t + cost;
        *n = if v < *n { v } else { *n };
    }
}

/// One regular group's part of the filled table.
struct Filled {
    /// How its cells were filled.
    fill: Fill,
    /// The table it read (the groups before it), valid from its `lo` up to `top` (empty
    /// for the window, whose picks are kept instead).
    input: Vec<f64>,
    /// The sliding window's pick at each cell up to `top` (empty for passes, which
    /// [`Table::pick`] redoes at one cell instead).
    picks: Vec<u32>,
    /// The last cell filled; cells above it repeat it.
    top: usize,
}

/// The filled table: the least cost at every cell over all the regular groups, and what
/// each group needs to tell its pick at a cell.
pub(super) struct Table {
    /// Least cost per cell (infinity where nothing fits).
    pub(super) values: Vec<f64>,
    /// Per regular group, in fill order.
    filled: Vec<Filled>,
}

impl Table {
    /// Gives the table's buffers back to `scratch` for the next solve.
    pub(super) fn recycle(self, scratch: &mut Scratch) {
        scratch.give_values(self.values);
        for f in self.filled {
            scratch.give_values(f.input);
            scratch.give_picks(f.picks);
        }
    }

    /// The choice regular group `k` (of `group`) takes at `cell`: the first in its fill order
    /// with the least cost there, found by the same additions and comparisons as the fill.
    /// `None` when no choice reaches a finite cost there.
    pub(super) fn pick(&self, k: usize, group: &Group, unit: u64, cell: usize) -> Option<usize> {
        let f = self.filled.get(k)?;
        let cell = cell.min(f.top);
        match &f.fill {
            Fill::Window(_) => f
                .picks
                .get(cell)
                .filter(|&&p| p != u32::MAX)
                .map(|&p| p as usize),
            Fill::Passes(order) => {
                let mut best: Option<(f64, usize)> = None;
                for &c in order {
                    let ch = &group.choices[c];
                    let Some(from) = cell.checked_sub((ch.bytes / unit) as usize) else {
                        continue;
                    };
                    let v = f.input[from] + ch.cost_s;
                    if v < best.map_or(f64::INFINITY, |(b, _)| b) {
                        best = Some((v, c));
                    }
                }
                best.map(|(_, c)| c)
            }
        }
    }
}

/// Fills the dense table over the `regular` groups, in their order.
///
/// Which cells are ever read. Let a group's reach be the most cells below a written cell
/// that its fill reads (its largest choice read), and group k's window `lo..=hi` be:
/// - `lo`: the least capacity the combine step asks for (`need_lo`) minus the reaches of the
///   groups after k. The trace back and every later group read group k's table no lower, and
///   group k's own cells from `lo` read the previous table only from its `lo`.
/// - `hi`: the reaches of groups 0..=k together. Above it every choice reads the previous
///   table in its own constant region, so each cell holds the value (and pick) of `hi` and
///   is left unwritten. This holds only for fills whose value at a cell is the same sum at
///   every cell (`relax` passes), not for the sliding window, which adds its costs in an
///   order that depends on the cell: with a window group, `hi` is the last cell for all.
///
/// Both restrictions compute the same values at every cell read as a full fill.
pub(super) fn fill_table(
    groups: &[Group],
    fronts: &[Vec<usize>],
    regular: &[usize],
    scale: Scale,
    need_lo: usize,
    want_picks: bool,
    scratch: &mut Scratch,
) -> Table {
    let (unit, cap_units) = (scale.unit, scale.cap_units);
    let fills: Vec<Fill> = regular
        .iter()
        .map(|&g| Fill::of(&groups[g], &fronts[g]))
        .collect();
    let reaches: Vec<usize> = fills
        .iter()
        .zip(regular)
        .map(|(f, &g)| f.reach(&groups[g], unit))
        .collect();
    let constant_tops = !fills.iter().any(|f| matches!(f, Fill::Window(_)));
    let mut suffix: usize = reaches.iter().sum();
    let mut prefix = 0usize;

    let mut table = scratch.values(cap_units + 1, 0.0);
    let mut filled: Vec<Filled> = Vec::with_capacity(regular.len());
    // Buffers come from `scratch` and go back there (fresh large buffers cost the kernel's
    // page zeroing); without picks the previous table is not kept.
    let mut top = 0usize;
    for (k, (&g, fill)) in regular.iter().zip(fills).enumerate() {
        suffix -= reaches[k];
        prefix += reaches[k];
        let hi = if constant_tops {
            prefix.min(cap_units)
        } else {
            cap_units
        };
        let lo = need_lo.saturating_sub(suffix).min(hi);
        // The previous table's constant region, written out up to `hi`.
        if top < hi {
            let v = table[top];
            table[top + 1..=hi].fill(v);
        }
        let mut next = scratch.values(cap_units + 1, f64::INFINITY);
        let mut picks = Vec::new();
        match &fill {
            Fill::Window(a) => {
                if want_picks {
                    picks = scratch.picks(hi + 1, u32::MAX);
                }
                fill_arith(a, unit, (lo, hi), &table, &mut next, &mut picks);
            }
            Fill::Passes(order) => {
                fill_choices(&groups[g], order, (lo, hi), unit, &table, &mut next);
            }
        }
        top = hi;
        let mut input = std::mem::replace(&mut table, next);
        if want_picks {
            if matches!(fill, Fill::Window(_)) {
                scratch.give_values(std::mem::take(&mut input));
            }
            filled.push(Filled {
                fill,
                input,
                picks,
                top,
            });
        } else {
            scratch.give_values(input);
        }
    }
    if top < cap_units {
        let v = table[top];
        table[top + 1..].fill(v);
    }
    Table {
        values: table,
        filled,
    }
}

/// Fills cells `lo..=hi` of `next` from `table` with one pass per choice, in `order` (the
/// first of equal costs stays); `next` comes in infinite over `lo..=hi`.
fn fill_choices(
    group: &Group,
    order: &[usize],
    (lo, hi): (usize, usize),
    unit: u64,
    table: &[f64],
    next: &mut [f64],
) {
    for &c in order {
        let ch = &group.choices[c];
        let w = (ch.bytes / unit) as usize;
        let from = lo.max(w);
        if from > hi {
            continue;
        }
        relax(&table[from - w..=hi - w], ch.cost_s, &mut next[from..=hi]);
    }
}
