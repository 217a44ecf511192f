//! A cheap lower bound of a stage knapsack's least added time on `x` whole layers, at one
//! in-flight count and budget, that never falls as `x` grows: what the floors before the
//! partition search ask many times per solve, where exact knapsacks would cost more than the
//! search they try to spare.
//!
//! The knapsack's linear relaxation ([`stage::knapsack_added_bounds`]) is a lower bound of its
//! least added time. That least time itself never falls as the stage holds more layers (a
//! plan for more layers, restricted to fewer, fits and costs no more), so the largest
//! relaxation over `0..=x` layers is still at most the least time on `x` layers: a lower bound
//! that grows with `x`, as the floors' searches need.

use crate::anatomy::BlockKind;
use crate::plan::planner::PlanRequest;
use crate::plan::stage::{self, BlockCounts, KnapsackMode, StageEnv};

/// The bound of the module docs for one layer kind, in-flight count and budget, filled on
/// demand.
pub(crate) struct LayerAdded {
    kinds: [BlockKind; 2],
    env: StageEnv,
    /// Entry `x`: the largest relaxation over `0..=x` layers (infinite where none fits).
    grown: Vec<f64>,
}

impl LayerAdded {
    /// The bound for layers of `kinds` at `in_flight` (at least 1) under `budget_bytes`.
    pub(crate) fn new(kinds: [BlockKind; 2], in_flight: u32, budget_bytes: u64) -> Self {
        Self {
            kinds,
            env: StageEnv {
                in_flight: in_flight.max(1),
                budget_bytes,
                logits: false,
            },
            grown: vec![0.0],
        }
    }

    /// A lower bound of the least added time per micro-batch on `x` layers, never less than
    /// on fewer (infinite where even the relaxation does not fit).
    pub(crate) fn at(&mut self, req: &PlanRequest, x: u32) -> f64 {
        let x = x as usize;
        while self.grown.len() <= x {
            let k = self.grown.len() as u32;
            let mut counts = BlockCounts::default();
            counts.add_layers(self.kinds, k);
            let b = stage::knapsack_added_bounds(
                req.anatomy,
                counts,
                &self.env,
                KnapsackMode::default(),
            );
            let lower = if b.lower_s.is_nan() {
                0.0
            } else {
                b.lower_s.max(0.0)
            };
            let before = self.grown.last().copied().unwrap_or(0.0);
            self.grown.push(before.max(lower));
        }
        self.grown[x]
    }
}
