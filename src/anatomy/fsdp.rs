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

use super::cluster::Cluster;
use super::cost::Machine;
use super::{Anatomy, Block, CommTimes};
use crate::scenario::Scenario;

/// Adds ZeRO-3's gathers and reduce-scatters to `anatomy`'s blocks, its gathered layers to
/// every device's memory, and, under the fp8 recipe, moves the weights' fp8 cast from once
/// per iteration to every gather. Does nothing unless the scenario is `zero` 3.
pub(super) fn apply(anatomy: &mut Anatomy, scenario: &Scenario, machine: &Machine) {
    if !scenario.parallel.full_shard {
        return;
    }
    let cluster = Cluster::of(scenario);
    let grad_bytes = f64::from(scenario.parallel.grad_bytes);
    let gather = |b: &Block| cluster.dp_half_s(2.0 * b.params as f64);
    let scatter = |b: &Block| cluster.dp_half_s(grad_bytes * b.params as f64);
    let (att, mlp) = (&anatomy.attention, &anatomy.mlp);
    let layer_params = (att.params + mlp.params) as f64;
    let (ag, rs) = (gather(att) + gather(mlp), scatter(att) + scatter(mlp));
    let fwd = (ag - (att.forward_s + mlp.forward_s)).max(0.0);
    let bwd = (ag + rs - (att.backward_s() + mlp.backward_s())).max(0.0);
    // The fp8 cast of a gathered layer: read its bf16 weights, write the fp8 copy and its
    // transpose (as the per-iteration cast of the distributed optimizer's runs).
    let fp8_cache = att.fp8_weight_bytes + mlp.fp8_weight_bytes;
    for block in [&mut anatomy.attention, &mut anatomy.mlp] {
        let share = if layer_params > 0.0 {
            block.params as f64 / layer_params
        } else {
            0.0
        };
        let cast = machine.mem(2.0 * block.fp8_weight_bytes as f64).s;
        let (g, r) = (gather(block), scatter(block));
        block.dp_comm = CommTimes {
            forward_s: g,
            forward_added_s: share * fwd,
            backward_s: g + r,
            backward_added_s: share * bwd,
        };
        block.forward_s += share * fwd + cast;
        block.backward_b_s += share * bwd + cast;
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
    let layer = anatomy.attention.params + anatomy.mlp.params;
    anatomy.device_bytes = 2 * (2 * layer + fp8_cache) + (grad_bytes * layer as f64).round() as u64;
    anatomy.pass_gather_s = ag;
}
