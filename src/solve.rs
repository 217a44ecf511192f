//! The engine's entry point.

use crate::outcome::Outcome;
use crate::scenario::{InvalidField, Scenario};
use crate::schedule::ScheduleError;
use crate::sim::SimError;

/// Why a scenario could not be solved (invalid input; infeasibility is not an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// A scenario field holds a value that is not allowed.
    #[error(transparent)]
    Invalid(#[from] InvalidField),
    /// The schedule does not support these sizes.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The simulation failed (a bug in a schedule generator).
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// Plans and simulates `scenario`: pure, deterministic, single-threaded.
pub fn solve(scenario: &Scenario) -> Result<Outcome, SolveError> {
    let _ = scenario;
    Err(SolveError::Invalid(InvalidField::new(
        "solve",
        "-",
        "not implemented yet",
    )))
}
