//! The memory strategies (docs/model.md) and per-unit decisions.

use serde::{Deserialize, Serialize};

pub use crate::scenario::Strategy;

/// What happens to one unit of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Kept in device memory until the backward.
    Keep,
    /// Dropped and recomputed before the backward.
    Recompute,
    /// Kept compressed.
    Compress,
    /// Moved to host memory and brought back before the backward.
    Offload,
    /// Dropped and recomputed early, in a communication window before the backward (the
    /// wait for the gradient, the backward's tensor-parallel collectives), as Lynx places it.
    Overlap,
}

impl Decision {
    /// One-letter glyph for the unit grid: K, R, C, O, H (recomputed hidden in a window).
    pub fn glyph(self) -> char {
        match self {
            Decision::Keep => 'K',
            Decision::Recompute => 'R',
            Decision::Compress => 'C',
            Decision::Offload => 'O',
            Decision::Overlap => 'H',
        }
    }
}
