//! ZeRO-3 as Megatron-FSDP runs it (`--use-megatron-fsdp --data-parallel-sharding-strategy
//! optim_grads_params`; docs/model.md, "Sharding"): weights, gradients and optimizer state
//! sharded over the `D = d x cp` ranks that hold a stage, and each transformer layer (the FSDP
//! unit) gathered while it runs.
//!
//! What Megatron-FSDP does (`megatron/core/distributed/fsdp/src/megatron_fsdp/
//! megatron_fsdp.py`): a layer's weights are all-gathered before its forward and released
//! after it (`_post_forward`), all-gathered again before its backward, and its gradient
//! reduce-scattered after its backward, on every micro-batch (`grad_reduce_every_bprop` for
//! the sharded strategies; with gradient accumulation nothing stays gathered between
//! micro-batches). The next layer's gather is prefetched under the current layer's work
//! (double buffering); gathers and reduce-scatters share one communicator, so in the backward
//! the gather of the next layer and the reduce-scatter of the previous one queue under the
//! current layer's backward. A recomputed forward keeps the weights it gathers for the
//! backward that follows. The embedding and the output layer are no FSDP units: they are
//! gathered once and stay gathered through the iteration; their gradients are
//! reduce-scattered after each backward as well.
//!
//! So, per micro-batch and layer in steady state, `max(0, AG - F)` of the forward and
//! `max(0, AG + RS - (B + W))` of the backward are exposed (shared between the layer's two
//! blocks in proportion to their weights); the first layer of each forward and backward pass
//! of a chunk has nothing to hide its gather under ([`Anatomy::pass_gather_s`]). Each device
//! also holds two gathered layers and one layer's unsharded gradient while it works
//! ([`Anatomy::device_bytes`]). Under the fp8 recipe each gathered layer is cast to fp8 when
//! it is gathered (the cast and its transpose live with the gathered layer), not once per
//! iteration.
//!
//! A mixture of experts shards its routed experts over the expert data-parallel group `edp`
//! (the ranks that hold the same experts) instead of `d x cp`, as Megatron-FSDP does with
//! expert parallelism: an MoE block's gather and reduce-scatter are the dense part's over
//! `d x cp` and the experts' over `edp`, queued one after the other. A model has up to three
//! kinds of layer (attention + dense MLP, attention + MoE, MTP + MoE): each block's exposed
//! share comes from the kind of layer it most often sits in, the opening gather of a pass
//! from the most common kind, and the gathered layers held on a device from the largest.

use super::cluster::Cluster;
use super::cost::Machine;
use super::{Anatomy, Block, BlockKind, CommTimes};
use crate::scenario::Scenario;

/// Adds ZeRO-3's gathers and reduce-scatters to `anatomy`'s blocks, its gathered layers to
/// every device's memory, and, under the fp8 recipe, moves the weights' fp8 cast from once
/// per iteration to every gather. Does nothing unless the scenario is `zero` 3.
pub(super) fn apply(anatomy: &mut Anatomy, scenario: &Scenario, machine: &Machine) {
    let par = &scenario.parallel;
    if !par.full_shard {
        return;
    }
    let cluster = Cluster::of(scenario);
    let experts = cluster.expert_dp(par.ep, par.etp);
    let grad_bytes = f64::from(par.grad_bytes);
    // A block's collective of `per_param` bytes a parameter: the dense part over `d x cp`,
    // the routed experts over `edp`.
    let over = |b: &Block, per_param: f64| {
        let routed = b.expert_params.min(b.params);
        cluster.dp_half_s(per_param * (b.params - routed) as f64)
            + experts.dp_half_s(per_param * routed as f64)
    };
    let gather = |b: &Block| over(b, 2.0);
    let scatter = |b: &Block| over(b, grad_bytes);
    let layers = anatomy.layer_kinds();
    // Per kind of layer: its gather, and what of its forward and backward it leaves exposed.
    let exposed = |a: &Block, b: &Block| {
        let (ag, rs) = (gather(a) + gather(b), scatter(a) + scatter(b));
        let fwd = (ag - (a.forward_s + b.forward_s)).max(0.0);
        let bwd = (ag + rs - (a.backward_s() + b.backward_s())).max(0.0);
        (ag, fwd, bwd)
    };
    let common = layers
        .iter()
        .max_by_key(|l| l.count)
        .map(|l| l.kinds)
        .unwrap_or([BlockKind::Attention, BlockKind::Mlp]);
    let (pass_gather_s, ..) = exposed(anatomy.block_of(common[0]), anatomy.block_of(common[1]));
    // The largest layer, gathered (twice: the running one and the prefetched one, each with
    // its fp8 cast under the fp8 recipe) and its gradient whole.
    let device_bytes = layers
        .iter()
        .map(|l| {
            let [a, b] = l.kinds.map(|k| anatomy.block_of(k));
            let layer = a.params + b.params;
            let fp8_cache = a.fp8_weight_bytes + b.fp8_weight_bytes;
            2 * (2 * layer + fp8_cache) + (grad_bytes * layer as f64).round() as u64
        })
        .max()
        .unwrap_or(0);
    // Every block's share, from the blocks as they were before any is changed.
    let mut changes = Vec::with_capacity(4);
    for kind in [
        BlockKind::Attention,
        BlockKind::Mlp,
        BlockKind::Moe,
        BlockKind::Mtp,
    ] {
        // The kind of layer this block most often sits in sets its share of the exposure.
        let Some(home) = layers
            .iter()
            .filter(|l| l.kinds.contains(&kind))
            .max_by_key(|l| l.count)
            .map(|l| l.kinds)
        else {
            continue;
        };
        let [a, b] = home.map(|k| anatomy.block_of(k));
        let (_, fwd, bwd) = exposed(a, b);
        let layer_params = (a.params + b.params) as f64;
        let block = anatomy.block_of(kind);
        let share = if layer_params > 0.0 {
            block.params as f64 / layer_params
        } else {
            0.0
        };
        changes.push((
            kind,
            share * fwd,
            share * bwd,
            gather(block),
            scatter(block),
        ));
    }
    for (kind, fwd, bwd, g, r) in changes {
        let block = anatomy.block_of_mut(kind);
        let cast = machine.mem(2.0 * block.fp8_weight_bytes as f64).s;
        block.dp_comm = CommTimes {
            forward_s: g,
            forward_added_s: fwd,
            backward_s: g + r,
            backward_added_s: bwd,
        };
        block.forward_s += fwd + cast;
        block.backward_b_s += bwd + cast;
        block.static_bytes -= block.fp8_weight_bytes.min(block.static_bytes);
        block.fp8_weight_bytes = 0;
    }
    // The embedding and the output layer stay gathered (their bf16 weights whole); their
    // gradients are reduce-scattered after each backward, under what is left of it.
    for block in [&mut anatomy.embedding, &mut anatomy.head] {
        let r = scatter(block);
        let added = (r - block.backward_s()).max(0.0);
        block.dp_comm = CommTimes {
            backward_s: r,
            backward_added_s: added,
            ..CommTimes::default()
        };
        block.backward_w_s += added;
        block.static_bytes += 2 * block.params;
    }
    anatomy.device_bytes = device_bytes;
    anatomy.pass_gather_s = pass_gather_s;
}

/// One kind of transformer layer in the chain: its two blocks' kinds and how many layers
/// are of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LayerKind {
    /// The layer's first and second block.
    pub kinds: [BlockKind; 2],
    /// Layers of this kind in the chain.
    pub count: u32,
}

impl Anatomy {
    /// The kinds of layer in the chain (attention + MLP, attention + MoE, MTP + MoE, ...)
    /// with their counts, in order of first appearance.
    pub(crate) fn layer_kinds(&self) -> Vec<LayerKind> {
        let mut kinds: Vec<LayerKind> = Vec::new();
        for j in 0..self.layers as usize {
            let pair = [self.kind_of(2 * j + 1), self.kind_of(2 * j + 2)];
            match kinds.iter_mut().find(|l| l.kinds == pair) {
                Some(l) => l.count += 1,
                None => kinds.push(LayerKind {
                    kinds: pair,
                    count: 1,
                }),
            }
        }
        kinds
    }

    /// Parameters of the largest layer on a device (ZeRO-3 gathers it whole, and its
    /// gradient is whole until reduce-scattered); 0 for a chain without layers.
    pub(crate) fn largest_layer_params(&self) -> u64 {
        self.layer_kinds()
            .iter()
            .map(|l| l.kinds.iter().map(|&k| self.block_of(k).params).sum())
            .max()
            .unwrap_or(0)
    }
}
