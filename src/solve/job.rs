//! The job's end-of-iteration costs of a plan (docs/model.md): per device, the
//! data-parallel gradient reduction, the tied embedding's all-reduce, the optimizer step
//! (with, under the fp8 recipe, the once-per-iteration cast of the weights to fp8) and the
//! tensor-parallel share of its compute, from the cluster's placement and links.

use crate::anatomy::cluster::Cluster;
use crate::anatomy::cost::Machine;
use crate::anatomy::{Anatomy, params};
use crate::plan::planner::Plan;
use crate::scenario::Scenario;
use crate::sim::job::{DeviceJob, JobCosts};

/// Megatron's gradient bucket: `max(40M, 1M x d)` parameters.
fn bucket_params(d: u64) -> u64 {
    40_000_000u64.max(1_000_000 * d)
}

/// Bytes Megatron's optimizer step moves per parameter (`g` = gradient bytes): the
/// gradients read by the inf/NaN check of the unscale, by the norm of the clipping and by
/// Adam, and zeroed for the next iteration (`4 g`); the fp32 master weight and both moments
/// read and written (24); the master read and the bf16 weight written by the copy back (6):
/// `4 g + 30`, 46 with fp32 gradients.
fn optimizer_bytes_per_param(grad_bytes: u32) -> f64 {
    4.0 * f64::from(grad_bytes) + 24.0 + 6.0
}

/// Parameters held by each device of `plan`.
pub(crate) fn device_params(anatomy: &Anatomy, plan: &Plan) -> Vec<u64> {
    plan.devices
        .iter()
        .map(|d| {
            d.ranges
                .iter()
                .flat_map(|&(a, e)| a..=e)
                .map(|i| anatomy.block(i).params)
                .sum()
        })
        .collect()
}

/// Tensor-parallel collective time of one layer block's forward and backward per
/// micro-batch that is exposed, the mean of the attention and MLP blocks (what
/// `anatomy/units.rs` charges: with SP two all-gathers or reduce-scatters forward and one
/// backward, without one all-reduce forward, plus whatever part of the backward's
/// column-parallel collectives its GEMMs do not hide; all of them with a split backward or
/// more than one device connection).
fn tp_block_s(anatomy: &Anatomy) -> f64 {
    let comm =
        |b: &crate::anatomy::Block| b.forward_comm_s + b.backward_b_comm_s + b.backward_w_comm_s;
    (comm(&anatomy.attention) + comm(&anatomy.mlp)) / 2.0
}

/// The end-of-iteration costs of every device of `plan`.
pub(crate) fn job_costs(scenario: &Scenario, anatomy: &Anatomy, plan: &Plan) -> JobCosts {
    let cluster = Cluster::of(scenario);
    let par = &scenario.parallel;
    let grad_bytes = f64::from(par.grad_bytes);
    let machine = Machine::new(&scenario.gpu, par.tp);
    let params = device_params(anatomy, plan);
    let last_block = anatomy.num_blocks().saturating_sub(1);
    let holder = |block: usize| {
        plan.devices
            .iter()
            .position(|d| d.ranges.iter().any(|&(a, e)| a <= block && block <= e))
    };
    let (first, last) = (holder(0), holder(last_block));
    let tied = scenario.model.tied_embeddings && first.is_some() && first != last;
    let t = u64::from(par.tp.max(1));
    let vocab = params::padded_vocab(scenario.model.vocab, t);
    let tied_s = if tied {
        cluster.tied_all_reduce_s((vocab * scenario.model.hidden / t) as f64 * grad_bytes)
    } else {
        0.0
    };
    let tp_block = tp_block_s(anatomy);
    let m = f64::from(scenario.batch.micro_batches);
    let devices = plan
        .devices
        .iter()
        .zip(&params)
        .enumerate()
        .map(|(i, (dev, &n))| {
            let nf = n as f64;
            let (grad_reduce_s, param_gather_s) =
                cluster.dp_collectives_s(nf, grad_bytes, par.distributed_optimizer);
            let shard = if par.distributed_optimizer {
                nf / cluster.d as f64
            } else {
                nf
            };
            let layers = f64::from(dev.counts.attention + dev.counts.mlp);
            // Under the fp8 recipe the weights are cast once per iteration: read the bf16
            // weight, write its fp8 copy and transpose (twice the cached bytes).
            let fp8_weight_bytes = u64::from(dev.counts.attention)
                * anatomy.attention.fp8_weight_bytes
                + u64::from(dev.counts.mlp) * anatomy.mlp.fp8_weight_bytes;
            DeviceJob {
                grad_reduce_s,
                param_gather_s,
                buckets: u32::try_from(n.div_ceil(bucket_params(cluster.d)).max(1))
                    .unwrap_or(u32::MAX),
                tied_s: if tied && (Some(i) == first || Some(i) == last) {
                    tied_s
                } else {
                    0.0
                },
                optimizer_s: machine
                    .mem(shard * optimizer_bytes_per_param(par.grad_bytes))
                    .s
                    + machine.mem(2.0 * fp8_weight_bytes as f64).s,
                tp_comm_s: m * layers * tp_block,
            }
        })
        .collect();
    JobCosts {
        devices,
        overlap_grad_reduce: scenario.plan.overlap_grad_reduce,
        m: scenario.batch.micro_batches,
    }
}
