//! Whole-layer recomputation as a knapsack choice: a stage may recompute some of its complete
//! layers (attention block and the MLP or MoE block after it) whole, keeping only the layer's
//! input, as `full` does for every layer. Without it a knapsack strategy always keeps the MLP
//! block's input and cannot reach `full`'s memory. The knapsack is solved for each count of
//! such layers (the other copies of every unit kind split as before) and the best answer
//! kept; a recomputed layer costs its two blocks' forwards, the units' own forwards plus
//! what produces no saved tensor (the out-projections, collectives, residual adds).

use crate::anatomy::{Anatomy, BlockKind};

use super::BlockCounts;

/// How many complete layers of each kind a stage recomputes whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FullLayers {
    /// Attention + dense-MLP layers.
    pub mlp: u32,
    /// Attention + MoE layers.
    pub moe: u32,
}

impl FullLayers {
    /// No layer recomputed whole.
    pub const NONE: FullLayers = FullLayers { mlp: 0, moe: 0 };

    /// Every complete layer of the stage recomputed whole: the least memory.
    pub fn all(counts: BlockCounts) -> Self {
        FullLayers {
            mlp: counts.mlp_layers,
            moe: counts.moe_layers,
        }
    }

    /// Every choice the stage allows other than [`FullLayers::NONE`].
    pub fn options(counts: BlockCounts) -> impl Iterator<Item = FullLayers> {
        (0..=counts.mlp_layers)
            .flat_map(move |mlp| (0..=counts.moe_layers).map(move |moe| FullLayers { mlp, moe }))
            .filter(|f| *f != FullLayers::NONE)
    }

    /// Copies of a unit of block `kind` that these layers recompute: every optional unit of
    /// their attention blocks, and every unit of their MLP or MoE blocks (the input too).
    pub fn copies(self, kind: BlockKind, forced: bool) -> u32 {
        match kind {
            BlockKind::Attention if !forced => self.mlp + self.moe,
            BlockKind::Mlp => self.mlp,
            BlockKind::Moe => self.moe,
            _ => 0,
        }
    }

    /// Time of recomputing these layers whole, per micro-batch.
    pub fn cost_s(self, anatomy: &Anatomy) -> f64 {
        f64::from(self.mlp) * layer_s(anatomy, BlockKind::Mlp)
            + f64::from(self.moe) * layer_s(anatomy, BlockKind::Moe)
    }
}

/// The forward of one attention + `follower` layer: what recomputing it whole costs.
fn layer_s(anatomy: &Anatomy, follower: BlockKind) -> f64 {
    anatomy.block_of(BlockKind::Attention).forward_s + anatomy.block_of(follower).forward_s
}

/// The least time any choice with a layer recomputed whole adds (infinite when the stage
/// has no complete layer): a lower bound of every such choice.
pub fn least_layer_s(anatomy: &Anatomy, counts: BlockCounts) -> f64 {
    let mut least = f64::INFINITY;
    if counts.mlp_layers > 0 {
        least = least.min(layer_s(anatomy, BlockKind::Mlp));
    }
    if counts.moe_layers > 0 {
        least = least.min(layer_s(anatomy, BlockKind::Moe));
    }
    least
}

/// What one attention + `follower` layer recomputed whole costs beyond the forwards of its
/// units (each counted where its copy is recomputed): the work that keeps no tensor. The
/// cost model adds it once per recomputed input of an MLP or MoE block.
pub fn layer_extra_s(anatomy: &Anatomy, follower: BlockKind) -> f64 {
    let units_s = |kind: BlockKind, with_input: bool| -> f64 {
        anatomy
            .block_of(kind)
            .units
            .iter()
            .filter(|u| with_input || !u.forced)
            .map(|u| u.forward_s)
            .sum()
    };
    layer_s(anatomy, follower) - units_s(BlockKind::Attention, false) - units_s(follower, true)
}

/// The model FLOPs of [`layer_extra_s`]'s work (for the hardware FLOPs of a plan).
pub fn layer_extra_flops(anatomy: &Anatomy, follower: BlockKind) -> f64 {
    let units = |kind: BlockKind, with_input: bool| -> f64 {
        anatomy
            .block_of(kind)
            .units
            .iter()
            .filter(|u| with_input || !u.forced)
            .map(|u| u.forward_flops)
            .sum()
    };
    let att = anatomy.block_of(BlockKind::Attention);
    let f = anatomy.block_of(follower);
    (att.model_forward_flops + f.model_forward_flops
        - units(BlockKind::Attention, false)
        - units(follower, true))
    .max(0.0)
}
