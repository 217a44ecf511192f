//! The memory strategies (DESIGN.md section 4) and per-unit decisions.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A memory strategy: how a plan trades memory for time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Keep everything.
    None,
    /// Keep only each layer's input; recompute the whole layer.
    Full,
    /// Megatron's selective recomputation of core attention.
    Selective,
    /// The best single unit set for every stage that makes the worst stage fit.
    Uniform,
    /// Per-stage knapsack, even partition (AdaPipe "even partitioning").
    Adaptive,
    /// Per-stage knapsack nested in the partition DP (AdaPipe).
    #[serde(rename = "adapipe")]
    AdaPipe,
    /// Offload kept tensors to host when the transfer hides between F and B (PipeOffload).
    Offload,
    /// Keep tensors compressed (Adacc).
    Compress,
    /// Keep, recompute, compress or offload per unit, nested in the partition DP.
    Unified,
}

impl Strategy {
    /// Every strategy, in the order the UI cycles through them.
    pub const ALL: [Strategy; 9] = [
        Strategy::None,
        Strategy::Full,
        Strategy::Selective,
        Strategy::Uniform,
        Strategy::Adaptive,
        Strategy::AdaPipe,
        Strategy::Offload,
        Strategy::Compress,
        Strategy::Unified,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Full => "full",
            Strategy::Selective => "selective",
            Strategy::Uniform => "uniform",
            Strategy::Adaptive => "adaptive",
            Strategy::AdaPipe => "adapipe",
            Strategy::Offload => "offload",
            Strategy::Compress => "compress",
            Strategy::Unified => "unified",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Strategy::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown strategy '{s}': expected one of {}",
                    names.join(", ")
                )
            })
    }
}

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
}

impl Decision {
    /// One-letter glyph for the unit grid: K, R, C, O.
    pub fn glyph(self) -> char {
        match self {
            Decision::Keep => 'K',
            Decision::Recompute => 'R',
            Decision::Compress => 'C',
            Decision::Offload => 'O',
        }
    }
}
