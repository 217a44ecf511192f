//! What the worker hands back for one scenario: the engine's [`Outcome`] plus the unit
//! names, sizes and recompute times per block kind that the unit grid shows.

use crate::anatomy::{Anatomy, BlockKind};
use crate::cancel::Cancel;
use crate::{Outcome, Scenario};

/// The units of one block kind, in the block's unit order (the order of
/// [`crate::BlockDecisions::decisions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KindUnits {
    /// Which block kind these units belong to.
    pub kind: BlockKind,
    /// Unit names (`ln_out`, `q`, ...).
    pub names: Vec<String>,
    /// Bytes of one copy per micro-batch, per unit.
    pub size_bytes: Vec<u64>,
    /// Forward time of the producing piece (the cost of recomputing it), per unit.
    pub recompute_s: Vec<f64>,
    /// Whether the unit may be dropped and recomputed (a block's input is always kept),
    /// per unit: the units the `named` strategy's picker offers.
    pub droppable: Vec<bool>,
}

/// One solved scenario as the views need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Solved {
    /// The engine's result.
    pub outcome: Outcome,
    /// Units per block kind (empty when unknown).
    pub units: Vec<KindUnits>,
}

impl Solved {
    /// The units of `kind`, if known.
    pub fn units_of(&self, kind: BlockKind) -> Option<&KindUnits> {
        self.units.iter().find(|u| u.kind == kind)
    }
}

/// A function that solves one scenario (the real engine, or a fixture in tests).
pub type SolveFn = fn(&Scenario) -> Result<Solved, String>;

/// A solver that gives up (with an error) once its token is cancelled.
pub type CancellableSolveFn = fn(&Scenario, &Cancel) -> Result<Solved, String>;

/// The unit tables of an anatomy, one per block kind.
pub fn unit_tables(anatomy: &Anatomy) -> Vec<KindUnits> {
    [
        BlockKind::Embedding,
        BlockKind::Attention,
        BlockKind::Mlp,
        BlockKind::Head,
    ]
    .into_iter()
    .map(|kind| {
        let block = anatomy.block_of(kind);
        KindUnits {
            kind,
            names: block.units.iter().map(|u| u.name.clone()).collect(),
            size_bytes: block.units.iter().map(|u| u.size_bytes).collect(),
            recompute_s: block.units.iter().map(|u| u.forward_s).collect(),
            droppable: block.units.iter().map(|u| !u.forced).collect(),
        }
    })
    .collect()
}

/// Solves with the real engine and collects the unit tables from the anatomy.
pub fn engine_solve(scenario: &Scenario) -> Result<Solved, String> {
    engine_solve_cancellable(scenario, &Cancel::never())
}

/// [`engine_solve`] that stops early once `cancel` is set (what the TUI's worker runs).
pub fn engine_solve_cancellable(scenario: &Scenario, cancel: &Cancel) -> Result<Solved, String> {
    let outcome = crate::solve_cancellable(scenario, cancel).map_err(|e| e.to_string())?;
    let units = Anatomy::build(scenario)
        .map(|a| unit_tables(&a))
        .unwrap_or_default();
    Ok(Solved { outcome, units })
}
