//! The partition search's stage-time oracle: the time of a stage holding a block range
//! (its exposed recomputation only, for `lynx`: a recomputation-aware partition),
//! memoised by (stage, block counts), with the knapsack's cheap bounds (memoised too) so that
//! the search asks for few exact knapsack solves; and the search itself.

use crate::cancel::Cancel;
use crate::plan::partition::{self, RangeTime};
use crate::plan::stage::{self, BlockCounts, KnapsackMode, StageEnv};
use crate::scenario::Objective;

use super::{PlanRequest, comm_in_out, mode_for, windows_for};
use crate::plan::Strategy;

/// The memoised oracle: stage time for a range, keyed by (stage, block counts), with the
/// knapsack's cheap bounds (memoised too) so that the search asks for few exact solves.
struct Oracle<'r, 'a> {
    req: &'r PlanRequest<'a>,
    layers: usize,
    memo: Vec<Option<Option<RangeTime>>>,
    bounds: Vec<Option<(f64, f64)>>,
    cancel: &'r Cancel,
    /// Set once `cancel` is seen set: from then on every range "does not fit" without a
    /// solve, so the search winds down at once (its answer is then thrown away).
    cancelled: bool,
}

/// Relative slack put on the bounds so that floating-point rounding (the bounds and the exact
/// solve add the same times in other orders) can never make a bound cross the exact time.
const BOUND_SLACK: f64 = 1e-9;

impl Oracle<'_, '_> {
    fn key(&self, s: usize, c: BlockCounts) -> Option<usize> {
        let d = c.mlp as i64 - c.attention as i64 + 1;
        if !(0..=2).contains(&d) || c.attention as usize > self.layers {
            return None;
        }
        let mut k = s;
        k = k * (self.layers + 1) + c.attention as usize;
        k = k * 3 + d as usize;
        k = k * 2 + c.embedding as usize;
        k = k * 2 + c.head as usize;
        Some(k)
    }

    fn env(&self, s: usize, c: BlockCounts) -> (StageEnv, KnapsackMode) {
        let env = StageEnv {
            in_flight: self.req.in_flight.get(s).copied().unwrap_or(1).max(1),
            budget_bytes: self.req.budget_bytes,
            logits: c.head > 0,
        };
        let mut mode = mode_for(self.req, c, env.in_flight);
        // `unified` inside the partition DP: keep, recompute and offload (fast, exact in
        // memory); compression is decided on the chosen partitions only.
        mode.compress = false;
        (env, mode)
    }

    /// The stage's time with `added` seconds of recomputation per micro-batch.
    fn with_added(&self, s: usize, c: BlockCounts, added: f64) -> RangeTime {
        let a = self.req.anatomy;
        let (mut f, mut b) = (0.0, 0.0);
        for &k in &stage::KINDS {
            let blk = a.block_of(k);
            let n = f64::from(c.of(k));
            f += n * blk.forward_s;
            b += n * (blk.backward_b_s + blk.backward_w_s);
        }
        let (out, back) = comm_in_out(self.req, s);
        RangeTime {
            forward_s: f + out,
            backward_s: b + added + back,
        }
    }

    fn compute(&self, s: usize, c: BlockCounts) -> Option<RangeTime> {
        let (env, mode) = self.env(s, c);
        let added = if self.req.strategy == Strategy::Lynx {
            let windows = windows_for(self.req, s, c);
            stage::lynx_knapsack(self.req.anatomy, c, &env, &windows)?.added_s
        } else {
            stage::knapsack_added_in(&self.req.cache, self.req.anatomy, c, &env, mode)?
        };
        Some(self.with_added(s, c, added))
    }

    /// Lower and upper bounds of the stage's total time (infinite where they say "does not
    /// fit" / "no information"), widened by [`BOUND_SLACK`].
    fn compute_bounds(&self, s: usize, c: BlockCounts) -> (f64, f64) {
        let (env, mode) = self.env(s, c);
        let b = if self.req.strategy == Strategy::Lynx {
            let windows = windows_for(self.req, s, c);
            stage::lynx_bounds(self.req.anatomy, c, &env, &windows)
        } else {
            stage::knapsack_added_bounds(self.req.anatomy, c, &env, mode)
        };
        let total = |added: f64| {
            if added.is_finite() {
                self.with_added(s, c, added).total()
            } else {
                f64::INFINITY
            }
        };
        let (lo, hi) = (total(b.lower_s), total(b.upper_s));
        // An infinite bound stays infinite (`inf - inf` would be NaN, which no test rejects).
        let lo = if lo.is_finite() {
            lo - BOUND_SLACK * lo.abs()
        } else {
            lo
        };
        (lo, hi + BOUND_SLACK * hi.abs())
    }

    fn bounds_of(&mut self, stage: usize, first: usize, last: usize) -> (f64, f64) {
        let c = BlockCounts::of_range(self.req.anatomy, first, last);
        let key = self.key(stage, c);
        self.bounds_keyed(stage, c, key)
    }

    fn bounds_keyed(&mut self, stage: usize, c: BlockCounts, key: Option<usize>) -> (f64, f64) {
        if let Some(v) = key.and_then(|k| self.bounds[k]) {
            return v;
        }
        let v = self.compute_bounds(stage, c);
        if let Some(k) = key {
            self.bounds[k] = Some(v);
        }
        v
    }
}

impl partition::RangeOracle for Oracle<'_, '_> {
    fn lower_bound(&mut self, stage: usize, first: usize, last: usize) -> f64 {
        self.bounds_of(stage, first, last).0
    }

    fn upper_bound(&mut self, stage: usize, first: usize, last: usize) -> f64 {
        self.bounds_of(stage, first, last).1
    }

    fn bounds(&mut self, stage: usize, first: usize, last: usize) -> (f64, f64) {
        self.bounds_of(stage, first, last)
    }

    fn time(&mut self, stage: usize, first: usize, last: usize) -> Option<RangeTime> {
        let c = BlockCounts::of_range(self.req.anatomy, first, last);
        let key = self.key(stage, c);
        if let Some(v) = key.and_then(|k| self.memo[k]) {
            return v;
        }
        // An infinite lower bound says the range cannot fit: no exact solve needed.
        if self.bounds_keyed(stage, c, key).0 == f64::INFINITY {
            return None;
        }
        // Before each exact solve (the search's costly step): has the solve been cancelled?
        self.cancelled = self.cancelled || self.cancel.is_cancelled();
        if self.cancelled {
            return None;
        }
        let v = self.compute(stage, c);
        if let Some(k) = key {
            self.memo[k] = Some(v);
        }
        v
    }
}

/// The best partitions (up to `keep`), or `None` when `cancel` was set during the search.
pub(super) fn search(
    req: &PlanRequest,
    keep: usize,
    cancel: &Cancel,
) -> Option<Vec<partition::Partition>> {
    let layers = req.anatomy.layers as usize;
    let p = req.stages;
    let mut oracle = Oracle {
        req,
        layers,
        memo: vec![None; p * (layers + 1) * 3 * 4],
        bounds: vec![None; p * (layers + 1) * 3 * 4],
        cancel,
        cancelled: false,
    };
    let found = search_with(&mut oracle, keep);
    (!oracle.cancelled).then_some(found)
}

fn search_with(oracle: &mut Oracle, keep: usize) -> Vec<partition::Partition> {
    let req = oracle.req;
    let p = req.stages;
    let n = req.anatomy.num_blocks();
    match req.objective {
        Objective::AdaPipe => partition::best_adapipe(oracle, p, n, req.m)
            .into_iter()
            .collect(),
        Objective::Estimate => {
            let a = req.anatomy;
            let mut lb = 0.0;
            for i in 0..n {
                let b = a.block(i);
                lb += b.forward_s + b.backward_b_s + b.backward_w_s;
            }
            for s in 0..p {
                let (o, b) = comm_in_out(req, s);
                lb += o + b;
            }
            partition::best_estimate(oracle, p, n, req.m, lb, keep)
        }
    }
}
