//! One configuration's solve as a sweep runs it: stopped as soon as a proven bound keeps it
//! out of the answer. The plain sweep (`evaluate.rs`) and the UI's cached sweep
//! (`incremental.rs`) both solve through here, so they cut the same solves at the same
//! points and answer alike.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::front::{Incumbents, Point};
use super::{Row, Status, workers};
use crate::anatomy::Anatomy;
use crate::cancel::Cancel;
use crate::scenario::Scenario;
use crate::solve::{SolveError, SolveOptions, solve_on_until_front};

/// How far (relative) a solve's floor before the search must rise above the time bound it was
/// ordered by for the solve to be put off to the sweep's second pass.
const DEFER_ABOVE: f64 = 0.01;

/// What a cut solve reads besides its row: the sweep's memory budget, whether it is
/// exhaustive (then nothing is cut), its cancel token, the tokens of one iteration (for the
/// row's throughput), the incumbents so far and, in the first pass, the flag a put-off
/// solve raises.
pub(super) struct CutSolve<'a> {
    pub budget: u64,
    pub exhaustive: bool,
    pub cancel: &'a Cancel,
    pub tokens: f64,
    pub incumbents: &'a Mutex<Incumbents>,
    pub defer: Option<&'a AtomicBool>,
}

impl CutSolve<'_> {
    /// Solves `scenario` (the configuration of `row`) with `options`, stopping as soon as a
    /// peak over the budget, or a proven floor of its time (against the incumbents, or
    /// against every step of their front), keeps it out of the answer: the row then stays
    /// [`Status::Pruned`], unsolved. In the first pass a floor before the search well above
    /// the bound the row was ordered by puts it off to the second pass (the `defer` flag).
    pub fn solve(
        &self,
        scenario: &Scenario,
        anatomy: &Anatomy,
        row: &Row,
        options: &SolveOptions,
    ) -> Row {
        let mut out = row.clone();
        out.solved = true;
        let start = Instant::now();
        let floor = |time_s: f64, peak_bytes: u64| Point {
            time_s: time_s.max(row.time_bound_s),
            peak_bytes: peak_bytes.max(row.memory_bound_bytes),
            gpus: row.config.gpus,
        };
        // A peak above the budget is an infeasible outcome, which enters no answer either.
        let stop = |time_s: f64, peak_bytes: u64| {
            !self.exhaustive
                && (peak_bytes > self.budget
                    || !self
                        .incumbents
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .can_enter(&floor(time_s, peak_bytes)))
        };
        // The same against every step of the front, on a copy of the incumbents.
        let front = |time_s: f64, peak_bytes: u64, below: &mut dyn FnMut(u64) -> f64| {
            if self.exhaustive {
                return false;
            }
            if let Some(d) = self.defer
                && time_s > row.time_bound_s * (1.0 + DEFER_ABOVE)
            {
                d.store(true, Ordering::Relaxed);
                return true;
            }
            let now = self
                .incumbents
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            !now.can_enter_below(&floor(time_s, peak_bytes), self.budget, below)
        };
        let result = solve_on_until_front(scenario, anatomy, options, Some(&stop), Some(&front));
        out.solve_time_s = start.elapsed().as_secs_f64();
        match result {
            Err(SolveError::Cancelled(_)) if !self.cancel.is_cancelled() => {
                out.solved = false;
                out.status = Status::Pruned;
            }
            Ok(o) => workers::fill_from_outcome(&mut out, o, self.tokens),
            Err(e) => out.status = Status::Invalid(e.to_string()),
        }
        out
    }
}
