//! Ranking and the Pareto front of a sweep, and the incumbents that decide, from proven
//! bounds, whether an unsolved configuration can still enter either.
//!
//! A point is (iteration time, peak memory, GPUs); `a` dominates `b` when it is no worse on
//! all three and better on one. The ranked list and the front are in one total order
//! ([`total_order`]), so the answer does not depend on the order in which configurations
//! were solved.

use std::cmp::Ordering;

use super::{Config, Row};

/// One solved feasible configuration as the front sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Iteration time, seconds.
    pub time_s: f64,
    /// Highest device peak, bytes.
    pub peak_bytes: u64,
    /// GPUs of the job.
    pub gpus: u32,
}

impl Point {
    /// Whether `self` dominates `other`: no worse on every axis, better on one.
    pub fn dominates(&self, other: &Point) -> bool {
        self.time_s <= other.time_s
            && self.peak_bytes <= other.peak_bytes
            && self.gpus <= other.gpus
            && (self.time_s < other.time_s
                || self.peak_bytes < other.peak_bytes
                || self.gpus < other.gpus)
    }

    fn of(row: &Row) -> Point {
        Point {
            time_s: row.iteration_time_s,
            peak_bytes: row.peak_memory_bytes,
            gpus: row.config.gpus,
        }
    }
}

/// The sweep's total order (docs/cli.md): iteration time, then peak memory, then the
/// configuration's fields in the order `t, cp, p, d, b, m, chunks, sp, zero, precision,
/// schedule, strategy` (numbers ascending, off before on, names alphabetically).
pub fn total_order(a: &Row, b: &Row) -> Ordering {
    let (x, y) = (&a.config, &b.config);
    a.iteration_time_s
        .total_cmp(&b.iteration_time_s)
        .then(a.peak_memory_bytes.cmp(&b.peak_memory_bytes))
        .then(x.t.cmp(&y.t))
        .then(x.cp.cmp(&y.cp))
        .then(x.p.cmp(&y.p))
        .then(x.d.cmp(&y.d))
        .then(x.b.cmp(&y.b))
        .then(x.m.cmp(&y.m))
        .then(x.chunks.cmp(&y.chunks))
        .then(x.sp.cmp(&y.sp))
        .then(x.zero.level().cmp(&y.zero.level()))
        .then(x.precision.name().cmp(y.precision.name()))
        .then(x.schedule.name().cmp(y.schedule.name()))
        .then(x.strategy.name().cmp(y.strategy.name()))
        .then(x.gpus.cmp(&y.gpus))
}

/// Indices of the `k` first feasible rows in the [`total_order`] (fastest first).
pub fn ranked(rows: &[Row], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].feasible()).collect();
    idx.sort_by(|&a, &b| total_order(&rows[a], &rows[b]).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

/// Whether two simulated times are the same up to floating-point noise (a relative
/// difference of at most 1e-9): what a table shows as a tie.
pub fn same_time(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// `idx` (in the sweep's total order) cut into runs of configurations that differ only in their
/// strategy and have the same iteration time ([`same_time`]) and peak memory: one line of a
/// table each
/// (the JSON keeps every configuration).
pub fn tie_groups(rows: &[Row], idx: &[usize]) -> Vec<Vec<usize>> {
    let same = |a: &Row, b: &Row| {
        let strategy = a.config.strategy;
        same_time(a.iteration_time_s, b.iteration_time_s)
            && a.peak_memory_bytes == b.peak_memory_bytes
            && Config {
                strategy,
                ..b.config
            } == a.config
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in idx {
        match groups.last_mut() {
            Some(g) if g.last().is_some_and(|&j| same(&rows[j], &rows[i])) => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// Indices of the feasible rows that no other feasible row dominates, in the
/// [`total_order`] (fastest first).
pub fn pareto(rows: &[Row]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].feasible()).collect();
    // Sorted by time then peak then GPUs, a row can only be dominated by one before it.
    idx.sort_by(|&a, &b| {
        let (pa, pb) = (Point::of(&rows[a]), Point::of(&rows[b]));
        pa.time_s
            .total_cmp(&pb.time_s)
            .then(pa.peak_bytes.cmp(&pb.peak_bytes))
            .then(pa.gpus.cmp(&pb.gpus))
            .then(a.cmp(&b))
    });
    let mut front: Vec<usize> = Vec::new();
    for &i in &idx {
        let p = Point::of(&rows[i]);
        if !front.iter().any(|&j| Point::of(&rows[j]).dominates(&p)) {
            front.push(i);
        }
    }
    front.sort_by(|&a, &b| total_order(&rows[a], &rows[b]).then(a.cmp(&b)));
    front
}

/// What has been solved so far, for deciding whether an unsolved configuration can enter.
#[derive(Debug, Clone, Default)]
pub struct Incumbents {
    /// The `k` smallest feasible times, ascending.
    fastest: Vec<f64>,
    /// The non-dominated feasible points.
    front: Vec<Point>,
    k: usize,
}

impl Incumbents {
    /// Empty, for a ranked list of `k` (at least 1: the best is always asked for).
    pub fn new(k: usize) -> Self {
        Self {
            fastest: Vec::new(),
            front: Vec::new(),
            k: k.max(1),
        }
    }

    /// Adds a solved feasible point.
    pub fn add(&mut self, p: Point) {
        let at = self.fastest.partition_point(|&t| t <= p.time_s);
        if at < self.k {
            self.fastest.insert(at, p.time_s);
            self.fastest.truncate(self.k);
        }
        if self.front.iter().any(|q| q.dominates(&p) || *q == p) {
            return;
        }
        self.front.retain(|q| !p.dominates(q));
        self.front.push(p);
    }

    /// Whether a configuration whose time, peak and GPUs are at least `bound` could still be
    /// in the ranked list or on the front. `false` is a proof: `k` solved ones are strictly
    /// faster, and a solved one dominates it whatever its exact figures are.
    pub fn can_enter(&self, bound: &Point) -> bool {
        let in_top = self.fastest.len() < self.k
            || self.fastest.last().is_none_or(|&kth| kth >= bound.time_s);
        in_top || !self.front.iter().any(|q| q.dominates(bound))
    }

    /// [`Incumbents::can_enter`] for a configuration whose time, peak and GPUs are at least
    /// `bound`, whose peak is at most `budget_bytes` (more does not fit, and enters nothing),
    /// and whose time, were its peak at most `P` bytes, would be at least `below(P)` (infinite
    /// where no plan reaches so low a peak). Its possible peaks `[bound, budget]` are cut at
    /// the peaks of the front's points: on each piece `[lo, hi]` its time is at least
    /// `below(hi)`, and the fastest point with a peak of at most `lo` dominates every point
    /// the configuration could have there when it is faster than that (or as fast, with a
    /// lower peak or fewer GPUs). `false` is a proof: `k` solved ones are strictly faster, and
    /// every peak it could have is dominated so.
    pub fn can_enter_below(
        &self,
        bound: &Point,
        budget_bytes: u64,
        below: &mut dyn FnMut(u64) -> f64,
    ) -> bool {
        if self.can_enter_top(bound.time_s) {
            return true;
        }
        if bound.peak_bytes > budget_bytes {
            return false;
        }
        let mut steps: Vec<Point> = self
            .front
            .iter()
            .filter(|q| q.gpus <= bound.gpus && q.peak_bytes <= budget_bytes)
            .copied()
            .collect();
        steps.sort_by(|a, b| {
            a.peak_bytes
                .cmp(&b.peak_bytes)
                .then(a.time_s.total_cmp(&b.time_s))
        });
        let mut lo = bound.peak_bytes;
        let mut best: Option<Point> = None;
        let mut next = 0;
        loop {
            while let Some(q) = steps.get(next).filter(|q| q.peak_bytes <= lo) {
                if best.is_none_or(|b| q.time_s < b.time_s) {
                    best = Some(*q);
                }
                next += 1;
            }
            let hi = steps
                .get(next)
                .map_or(budget_bytes, |q| q.peak_bytes.saturating_sub(1))
                .min(budget_bytes);
            let time = bound.time_s.max(below(hi));
            // Infinite: no plan has a peak in `[lo, hi]`.
            if time.is_finite() {
                let dominated = best.is_some_and(|q| {
                    q.time_s < time
                        || (q.time_s <= time && (q.peak_bytes < lo || q.gpus < bound.gpus))
                });
                if !dominated {
                    return true;
                }
            }
            if hi >= budget_bytes {
                return false;
            }
            lo = hi + 1;
        }
    }

    /// Whether a time of at least `time_s` may still be in the ranked list.
    fn can_enter_top(&self, time_s: f64) -> bool {
        self.fastest.len() < self.k || self.fastest.last().is_none_or(|&kth| kth >= time_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(t: f64, m: u64) -> Point {
        Point {
            time_s: t,
            peak_bytes: m,
            gpus: 8,
        }
    }

    #[test]
    fn dominance_needs_one_strict_axis() {
        assert!(pt(1.0, 5).dominates(&pt(1.0, 6)));
        assert!(!pt(1.0, 5).dominates(&pt(1.0, 5)));
        assert!(!pt(1.0, 7).dominates(&pt(2.0, 6)));
    }

    #[test]
    fn incumbents_prune_only_what_is_beaten_twice() {
        let mut inc = Incumbents::new(1);
        assert!(inc.can_enter(&pt(9.0, 9)));
        inc.add(pt(1.0, 10));
        inc.add(pt(2.0, 5));
        // Slower than the best and dominated by (2.0, 5).
        assert!(!inc.can_enter(&pt(3.0, 6)));
        // Could tie the best exactly (bound equals it): may enter the ranked list.
        assert!(inc.can_enter(&pt(1.0, 20)));
        // Less memory than anything solved: may be on the front.
        assert!(inc.can_enter(&pt(5.0, 4)));
        // Exactly equal to a front point: not dominated, may enter.
        assert!(inc.can_enter(&pt(2.0, 5)));
    }
}
