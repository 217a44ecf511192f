//! A measured profile: per-unit and per-block times and sizes that replace the cost
//! model's estimates (parsed and applied by `anatomy`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One measured unit or block figure from a profile file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitMeasurement {
    /// Forward seconds (for a unit: its recompute cost).
    pub forward_s: f64,
    /// Backward seconds.
    pub backward_s: f64,
    /// Saved bytes per micro-batch (units only; blocks ignore it).
    pub size_bytes: Option<u64>,
}

/// A measured profile that replaces cost-model estimates, keyed `"<block kind>.<unit>"`
/// (e.g. `"attention.q"`), or `"<block kind>"` for a whole block's forward/backward.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MeasuredProfile {
    /// Where the figures came from (GPU, software, date).
    pub source: String,
    /// Figures by key.
    pub entries: BTreeMap<String, UnitMeasurement>,
    /// The compression codec measured with the profile (a `[codec]` table); replaces the
    /// GPU's.
    #[serde(default)]
    pub codec: Option<super::CodecSpec>,
}
