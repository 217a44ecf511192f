//! The dense table over the regular groups: one cell per capacity unit (bytes divided by the
//! groups' common divisor), filled group by group with the pick of every group at every cell.

use super::run::Scale;
use super::{Arith, Group};

/// Fills `next`/`pick` for an arithmetic group from `table` (all in `unit`s); `next` comes
/// in all infinite.
fn fill_arith(a: &Arith, unit: u64, table: &[f64], next: &mut [f64], pick: &mut [u32]) {
    let cap = table.len() - 1;
    let n = a.n as usize;
    let full = (u64::from(a.n) * a.step / unit) as usize;
    let step = (a.step / unit) as usize;
    let charge = (a.charge / unit) as usize;
    // Keep all n: no charge, no cost. `next` is all infinite here, so a cell takes the value
    // `full` cells below (infinite stays infinite) and the pick where that is finite.
    if full <= cap {
        next[full..].copy_from_slice(&table[..=cap - full]);
        if !pick.is_empty() {
            for (p, &t) in pick[full..].iter_mut().zip(&table[..=cap - full]) {
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
        for c in charge..=cap {
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
    // the later position stays (it replaces the earlier one).
    let len = (cap + 1).div_ceil(step) + 1;
    let mut win: Vec<(usize, f64)> = vec![(0, 0.0); len];
    let nf = n as f64;
    for rho in 0..step.min(cap + 1) {
        let (mut head, mut tail) = (0usize, 0usize);
        let mut q = 0usize;
        let mut qf = 0.0f64; // q as f64, exact
        let mut cp = rho;
        while cp + charge <= cap {
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
            if tail > head {
                let (t, best) = win[head];
                let val = best + (nf - qf) * r;
                let c = cp + charge;
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

/// `next[j] = min(next[j], src[j] + cost)` for every `j`, recording `tag` in `pick[j + off]`
/// where it improves (strictly, so earlier choices win ties, as before). Branch-free so it
/// vectorises; the same additions and comparisons as a plain loop, so the same table.
fn relax(src: &[f64], cost: f64, next: &mut [f64], pick: &mut [u32], off: usize, tag: u32) {
    if pick.is_empty() {
        for (n, &t) in next.iter_mut().zip(src) {
            let v = t + cost;
            *n = if v < *n { v } else { *n };
        }
        return;
    }
    let pick = &mut pick[off..];
    for ((n, p), &t) in next.iter_mut().zip(pick.iter_mut()).zip(src) {
        let v = t + cost;
        let better = v < *n;
        *n = if better { v } else { *n };
        *p = if better { tag } else { *p };
    }
}

/// The filled table: the least cost at every cell over all the regular groups, and every
/// group's pick at every cell up to its `tops` entry (beyond it the pick of that cell).
pub(super) struct Table {
    /// Least cost per cell (infinity where nothing fits).
    pub(super) values: Vec<f64>,
    /// Per regular group, the choice taken at each cell (empty without picks).
    pub(super) picks: Vec<Vec<u32>>,
    /// Per regular group, the last cell filled; cells above it repeat it.
    pub(super) tops: Vec<usize>,
}

/// Fills the dense table over the `regular` groups, in their order.
///
/// Which cells are ever read: only when every regular group is a plain list of choices (no
/// keep-k-of-n fast path, whose sliding window reads every cell), cells above the sum of
/// the groups' largest sizes so far hold the value (and pick) of that sum, because every
/// choice there reads the previous table in its own constant region; cells below the least
/// capacity the combine step asks for (`need_lo`), minus what the later groups can take,
/// are never read. Skipping both computes the same values at every cell read.
pub(super) fn fill_table(
    groups: &[Group],
    fronts: &[Vec<usize>],
    regular: &[usize],
    scale: Scale,
    need_lo: usize,
    want_picks: bool,
) -> Table {
    let (unit, cap_units) = (scale.unit, scale.cap_units);
    let widths: Vec<usize> = regular
        .iter()
        .map(|&g| (groups[g].choices[*fronts[g].last().unwrap_or(&0)].bytes / unit) as usize)
        .collect();
    let plain_lists = regular.iter().all(|&g| groups[g].arith.is_none());
    let mut suffix: usize = widths.iter().sum();
    let mut prefix = 0usize;

    let mut table = vec![0.0f64; cap_units + 1];
    let mut picks: Vec<Vec<u32>> = Vec::with_capacity(regular.len());
    let mut tops: Vec<usize> = Vec::with_capacity(regular.len());
    let mut next = vec![f64::INFINITY; cap_units + 1];
    let mut top = 0usize;
    for (k, &g) in regular.iter().enumerate() {
        suffix -= widths[k];
        prefix += widths[k];
        let (lo, hi) = if plain_lists {
            (need_lo.saturating_sub(suffix), prefix.min(cap_units))
        } else {
            (0, cap_units)
        };
        // The previous table's constant region, written out up to `hi`.
        if top < hi {
            let v = table[top];
            table[top + 1..=hi].fill(v);
        }
        let mut pick = if want_picks {
            vec![u32::MAX; cap_units + 1]
        } else {
            Vec::new()
        };
        if let Some(a) = &groups[g].arith {
            next.fill(f64::INFINITY);
            fill_arith(a, unit, &table, &mut next, &mut pick);
            top = cap_units;
        } else {
            fill_choices(
                &groups[g],
                &fronts[g],
                (lo, hi),
                unit,
                &table,
                &mut next,
                &mut pick,
            );
            top = hi;
        }
        std::mem::swap(&mut table, &mut next);
        picks.push(pick);
        tops.push(top);
    }
    if top < cap_units {
        let v = table[top];
        table[top + 1..].fill(v);
    }
    Table {
        values: table,
        picks,
        tops,
    }
}

/// Fills cells `lo..=hi` of `next` from `table` for a plain list of choices (its Pareto
/// `front`, in byte order).
fn fill_choices(
    group: &Group,
    front: &[usize],
    (lo, hi): (usize, usize),
    unit: u64,
    table: &[f64],
    next: &mut [f64],
    pick: &mut [u32],
) {
    if lo <= hi {
        next[lo..=hi].fill(f64::INFINITY);
    }
    for &c in front {
        let ch = &group.choices[c];
        let w = (ch.bytes / unit) as usize;
        let from = lo.max(w);
        if from > hi {
            break;
        }
        relax(
            &table[from - w..=hi - w],
            ch.cost_s,
            &mut next[from..=hi],
            pick,
            from,
            c as u32,
        );
    }
}
