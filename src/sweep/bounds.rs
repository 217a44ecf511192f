//! Proven lower bounds of a configuration's iteration time and highest device peak, from its
//! anatomy alone (no plan, no schedule, no simulation).
//!
//! **Time.** Every op of a device runs on it one after another, and every block of the chain
//! runs its forward and backward (B + W) for every micro-batch on some device, at least as
//! long as the anatomy says (recomputation, compression and transfers only add). So the
//! devices are busy for at least `m x W` in total, `W` the per-micro-batch work of the whole
//! chain, and the busiest one for at least `m x W / p`; and the device holding the head for at
//! least `m x` the head's work. Chimera's replicated stages split the micro-batches between the
//! two copies, so its total is the same. Recomputation that a strategy always does (every
//! layer's forward for `full`, core attention for `selective`) is part of that work. Whole-job costs that the engine may add after the
//! pipeline (gradient reduction, optimizer step) only lengthen the iteration.
//!
//! **Memory.** Every device holds its blocks' static memory (weights, gradients, optimizer
//! state) for the whole iteration; just before the first backward of micro-batch 0 on a device,
//! every chunk it holds still keeps micro-batch 0's tensors (a backward needs every later
//! stage's forward first, and backwards of earlier stages follow it). So the highest peak is at
//! least the average over devices of static + one micro-batch's minimum kept bytes, where
//! the minimum is what the strategy can never drop (all units for `none`, all but core attention
//! for `selective`, the attention input for `full` and the knapsack strategies, nothing for the
//! offloading and compressing ones or under `gis-offload`). The device with the head also
//! holds the head's static memory and the logits transient at the loss.
//!
//! The sweep test checks both bounds against `solve` over many configurations.

use crate::anatomy::{Anatomy, Block};
use crate::scenario::{ScheduleKind, Strategy};

use super::Config;

/// Relative slack for floating-point summation order (the simulator adds the same durations
/// in another order).
const TIME_SLACK: f64 = 1e-9;

/// The bounds of one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Lower bound of the iteration time, seconds.
    pub time_s: f64,
    /// Lower bound of the highest device peak, bytes.
    pub peak_bytes: u64,
}

fn work(b: &Block) -> f64 {
    b.forward_s + b.backward_b_s + b.backward_w_s
}

/// Bytes of one micro-batch that `strategy` never drops from a layer block.
fn min_kept(block: &Block, strategy: Strategy, attention: bool) -> u64 {
    match strategy {
        Strategy::None => block.all_units_bytes(),
        Strategy::Selective => block
            .units
            .iter()
            .filter(|u| !u.core_attention)
            .map(|u| u.size_bytes)
            .sum(),
        Strategy::Full | Strategy::Uniform | Strategy::Adaptive | Strategy::AdaPipe => {
            if attention { block.forced_bytes() } else { 0 }
        }
        // `named` keeps what the user does not name; its names are not known here, so 0.
        Strategy::Offload | Strategy::Compress | Strategy::Unified | Strategy::Named => 0,
    }
}

/// Recomputation per micro-batch that `strategy` always does, whatever the budget: every
/// layer's forward for `full`, core attention for `selective` (none when recomputation
/// overlaps the wait for the gradient, where it may hide).
fn fixed_recompute_s(anatomy: &Anatomy, strategy: Strategy, overlap_recompute: bool) -> f64 {
    if overlap_recompute {
        return 0.0;
    }
    let layers = f64::from(anatomy.layers);
    match strategy {
        Strategy::Full => layers * (anatomy.attention.forward_s + anatomy.mlp.forward_s),
        Strategy::Selective => {
            let core = |b: &Block| -> f64 {
                b.units
                    .iter()
                    .filter(|u| u.core_attention)
                    .map(|u| u.forward_s)
                    .sum()
            };
            layers * (core(&anatomy.attention) + core(&anatomy.mlp))
        }
        _ => 0.0,
    }
}

/// The bounds of `config` with `anatomy` (built for its t, p, d, b, sp and optimizer);
/// `overlap_recompute` is the scenario's Lynx flag.
pub fn bounds(config: &Config, anatomy: &Anatomy, overlap_recompute: bool) -> Bounds {
    let layers = f64::from(anatomy.layers);
    let p = u64::from(config.p.max(1));
    let m = f64::from(config.m);
    let chain_work = work(&anatomy.embedding)
        + layers * (work(&anatomy.attention) + work(&anatomy.mlp))
        + work(&anatomy.head)
        + fixed_recompute_s(anatomy, config.strategy, overlap_recompute);
    let time = (m * chain_work / p as f64).max(m * work(&anatomy.head));
    let l = u64::from(anatomy.layers);
    let statics = anatomy.embedding.static_bytes
        + l * (anatomy.attention.static_bytes + anatomy.mlp.static_bytes)
        + anatomy.head.static_bytes;
    let kept = if config.schedule == ScheduleKind::GisOffload {
        0
    } else {
        l * (min_kept(&anatomy.attention, config.strategy, true)
            + min_kept(&anatomy.mlp, config.strategy, false))
    };
    let average = (statics + kept).div_ceil(p);
    let head = anatomy.head.static_bytes + anatomy.logits_transient_bytes;
    let largest = anatomy
        .embedding
        .static_bytes
        .max(anatomy.attention.static_bytes)
        .max(anatomy.mlp.static_bytes);
    Bounds {
        time_s: time * (1.0 - TIME_SLACK),
        peak_bytes: average.max(head).max(largest),
    }
}
