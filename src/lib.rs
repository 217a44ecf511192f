//! pipescope: plan and simulate pipeline-parallel LLM training.
//!
//! Data flows one way (see docs/architecture.md):
//!
//! ```text
//! Scenario ──► Anatomy ──► Schedule ──► Plan ──► Simulation ──► Views (TUI, CLI/JSON)
//! ```
//!
//! The engine's single entry point is [`solve`]: pure, deterministic, no I/O and no threads.
//! An infeasible scenario is an `Ok` [`Outcome`] with `feasible == false` and a reason per
//! stage; `Err` is reserved for invalid input.

pub mod anatomy;
pub mod cancel;
pub mod export;
pub mod files;
pub mod plan;
pub mod reference;
pub mod scenario;
pub mod schedule;
pub mod sim;
pub mod sweep;
#[cfg(feature = "tui")]
pub mod tui;

mod outcome;
mod solve;

pub use cancel::{Cancel, Cancelled};
pub use outcome::{BlockDecisions, Outcome, StageOutcome, UnitCount, UnitTable};
pub use scenario::Scenario;
pub use sim::{AbstractOutcome, AbstractRun, AbstractRunError};
pub use solve::{ScheduleMemo, SolveError, SolveOptions, solve, solve_with};
