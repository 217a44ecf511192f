//! What the worker hands back for one scenario: the engine's [`Outcome`], which carries
//! everything the views draw (the unit tables of the unit grid included).

use crate::anatomy::BlockKind;
use crate::cancel::Cancel;
use crate::{Outcome, Scenario, UnitTable};

/// One solved scenario as the views need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Solved {
    /// The engine's result.
    pub outcome: Outcome,
}

impl Solved {
    /// The units of `kind`, if known.
    pub fn units_of(&self, kind: BlockKind) -> Option<&UnitTable> {
        self.outcome.units_of(kind)
    }
}

/// A function that solves one scenario (the real engine, or a fixture in tests).
pub type SolveFn = fn(&Scenario) -> Result<Solved, String>;

/// A solver that gives up (with an error) once its token is cancelled.
pub type CancellableSolveFn = fn(&Scenario, &Cancel) -> Result<Solved, String>;

/// Solves with the real engine.
pub fn engine_solve(scenario: &Scenario) -> Result<Solved, String> {
    engine_solve_cancellable(scenario, &Cancel::never())
}

/// [`engine_solve`] that stops early once `cancel` is set (what the TUI's worker runs).
pub fn engine_solve_cancellable(scenario: &Scenario, cancel: &Cancel) -> Result<Solved, String> {
    let options = crate::SolveOptions {
        cancel: cancel.clone(),
        ..Default::default()
    };
    let outcome = crate::solve_with(scenario, &options).map_err(|e| e.to_string())?;
    Ok(Solved { outcome })
}
