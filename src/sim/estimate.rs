//! Closed-form estimates of a non-interleaved 1F1B iteration with unequal stages, beside the
//! simulation (which is the ground truth):
//!
//! - [`classic_estimate`]: `(m - 1) max_s T_s + sum_s T_s`, the planner's partition objective
//!   (docs/model.md);
//! - [`adapipe_recurrence`]: AdaPipe's artifact recurrence (docs/model.md),
//!   transcribed verbatim, including its over-estimate when `n < p - 1`; [`AdaPipeItem`]
//!   with [`AdaPipeItem::last`] and [`AdaPipeItem::extend`] are its two steps, for a
//!   partition DP that nests them.

/// `(m - 1) max_s T_s + sum_s T_s` for per-stage times `T_s` (forward + backward of one
/// micro-batch, transfers included); 0 for no stage or no micro-batch.
pub fn classic_estimate(stage_times: &[f64], m: u32) -> f64 {
    if stage_times.is_empty() || m == 0 {
        return 0.0;
    }
    let max = stage_times
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = stage_times.iter().sum();
    f64::from(m - 1) * max + sum
}

/// One state of AdaPipe's recurrence: the suffix of stages `st..p` (docs/model.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaPipeItem {
    /// Predicted iteration time of the suffix (`steady + warm + cool`).
    pub main: f64,
    /// Steady-state bottleneck `max (F + B)` over the suffix.
    pub iter: f64,
    /// Steady-phase time carried to the upstream stage.
    pub steady: f64,
    /// Warm-up time carried to the upstream stage.
    pub warm: f64,
    /// Cool-down time carried to the upstream stage.
    pub cool: f64,
}

impl AdaPipeItem {
    /// The base case: the last stage, with forward `f` and backward `b` per micro-batch and
    /// `n` micro-batches.
    pub fn last(f: f64, b: f64, n: u32) -> Self {
        let it = f + b;
        if n == 1 {
            return Self {
                main: it,
                iter: it,
                steady: it,
                warm: 0.0,
                cool: 0.0,
            };
        }
        Self {
            main: f64::from(n) * it,
            iter: it,
            steady: (f64::from(n) - 2.0) * it,
            warm: it,
            cool: it,
        }
    }

    /// Prepends stage `st` (of `p`) with forward `f` and backward `b` to the suffix `self`
    /// (which starts at stage `st + 1`), for `n` micro-batches. `st` must be below `p`; a
    /// larger one is treated as the last stage (depth 0) rather than underflowing.
    pub fn extend(&self, st: u32, p: u32, f: f64, b: f64, n: u32) -> Self {
        let cur = f + b;
        let mx = cur.max(self.iter);
        let kk = i64::from(n) - i64::from(p) + i64::from(st);
        let depth = if kk >= 0 {
            f64::from(p.saturating_sub(st).saturating_sub(1))
        } else {
            f64::from(n) - 1.0
        };
        let steady = if kk >= 0 { mx * kk as f64 } else { self.steady };
        let warm = f + (f * depth).max(self.warm);
        let cool = b + (b * depth).max(self.cool);
        let main = steady + warm + cool;
        if kk >= 1 {
            let (warm, cool) = if cur >= mx {
                (warm + b, cool + f)
            } else {
                (warm + mx - b, cool + mx - f)
            };
            Self {
                main,
                iter: mx,
                steady: steady - mx,
                warm,
                cool,
            }
        } else {
            Self {
                main,
                iter: mx,
                steady: steady + f + b,
                warm,
                cool,
            }
        }
    }
}

/// AdaPipe's predicted 1F1B iteration time for a fixed partition with per-stage forward
/// `f[s]` and backward `b[s]` times and `n` micro-batches; 0 for no stage. Stages beyond the
/// shorter of the two slices are ignored.
pub fn adapipe_recurrence(f: &[f64], b: &[f64], n: u32) -> f64 {
    let p = f.len().min(b.len());
    if p == 0 || n == 0 {
        return 0.0;
    }
    let mut item = AdaPipeItem::last(f[p - 1], b[p - 1], n);
    for st in (0..p - 1).rev() {
        item = item.extend(st as u32, p as u32, f[st], b[st], n);
    }
    item.main
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `extend` with a stage index at or past `p` (a caller's mistake) used to underflow
    /// `u32` and panic; it now treats the stage as the last one.
    #[test]
    fn extend_past_the_last_stage_does_not_panic() {
        let last = AdaPipeItem::last(1.0, 2.0, 8);
        for st in [3, 4, u32::MAX] {
            let item = last.extend(st, 4, 1.0, 2.0, 8);
            assert!(item.main.is_finite());
        }
    }
}
