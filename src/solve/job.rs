//! The job's end-of-iteration costs of a plan (docs/model.md): per device, the
//! data-parallel gradient reduction, the tied embedding's all-reduce, the optimizer step
//! (with, under the fp8 recipe, the once-per-iteration cast of the weights to fp8), the
//! parameter all-gather (exposed, or overlapped with the next forward) and the shares of its
//! compute that are tensor-parallel, context-parallel and ZeRO-3 communication, from the
//! cluster's placement and links.

use crate::anatomy::cluster::Cluster;
use crate::anatomy::cost::Machine;
use crate::anatomy::{Anatomy, Block, BlockKind, params};
use crate::plan::planner::Plan;
use crate::scenario::Scenario;
use crate::schedule::{OpKind, Placement, Schedule, ScheduleKind};
use crate::sim::collectives::ChunkComm;
use crate::sim::job::{DeviceJob, JobCosts};

/// Megatron's gradient bucket: `max(40M, 1M x D)` parameters, `D = d x cp` the ranks of the
/// data-parallel group.
fn bucket_params(d: u64) -> u64 {
    40_000_000u64.max(1_000_000 * d)
}

/// Bytes Megatron's optimizer step moves per parameter (`g` = gradient bytes): the
/// gradients read by the inf/NaN check of the unscale, by the norm of the clipping and by
/// Adam, and zeroed for the next iteration (`4 g`); the fp32 master weight and both moments
/// read and written (`8 + 4 m`, `m` the bytes of a moment: 24 in fp32, 16 with bf16
/// moments); the master read and the bf16 weight written by the copy back (6): `4 g + 14 +
/// 4 m`, 46 with fp32 gradients and moments.
fn optimizer_bytes_per_param(grad_bytes: u32, moment_bytes: u32) -> f64 {
    4.0 * f64::from(grad_bytes) + 8.0 + 4.0 * f64::from(moment_bytes) + 6.0
}

/// Parameters held by each device of `plan`.
pub(crate) fn device_params(anatomy: &Anatomy, plan: &Plan) -> Vec<u64> {
    per_device_sum(anatomy, plan, |b| b.params)
}

/// Routed-expert parameters held by each device of `plan`.
fn device_expert_params(anatomy: &Anatomy, plan: &Plan) -> Vec<u64> {
    per_device_sum(anatomy, plan, |b| b.expert_params)
}

/// Per device of `plan`, `of` summed over every block of every chunk it holds.
fn per_device_sum(anatomy: &Anatomy, plan: &Plan, of: impl Fn(&Block) -> u64) -> Vec<u64> {
    plan.devices
        .iter()
        .map(|d| {
            d.ranges
                .iter()
                .flat_map(|&(a, e)| a..=e)
                .map(|i| of(anatomy.block(i)))
                .sum()
        })
        .collect()
}

/// Per device of `plan`, the communication inside its F/B/W ops of one iteration that its
/// blocks' times include: `(tensor-parallel, context-parallel, ZeRO-3, expert-parallel)`
/// seconds. Each chunk's blocks' added times per micro-batch, times the micro-batches that
/// pass through that chunk (`passes[device][chunk]`: all `m` on every chunk of a single or
/// looped pipeline, about half of them on each copy of a two-copy schedule), and with ZeRO-3
/// the unhidden gather that opens each forward and backward pass of a chunk.
fn inner_comm_s(anatomy: &Anatomy, plan: &Plan, passes: &[Vec<f64>]) -> Vec<(f64, f64, f64, f64)> {
    plan.devices
        .iter()
        .enumerate()
        .map(|(di, d)| {
            let (mut tp, mut cp, mut dp, mut ep) = (0.0, 0.0, 0.0, 0.0);
            for (c, &(a, e)) in d.ranges.iter().enumerate() {
                let n = passes
                    .get(di)
                    .and_then(|p| p.get(c))
                    .copied()
                    .unwrap_or(0.0);
                for i in a..=e {
                    let b = anatomy.block(i);
                    tp += n * b.tp_comm.added_s();
                    cp += n * b.cp_comm.added_s();
                    dp += n * b.dp_comm.added_s();
                    ep += n * b.ep_comm.added_s();
                    if d.rule == crate::plan::stage::RecomputeRule::WholeLayer && b.kind.is_layer()
                    {
                        // What the recomputed forward hides of the backward's exposed
                        // ZeRO-3 collectives (`simcosts::whole_layer_rerun`).
                        dp -= n * crate::plan::simcosts::whole_layer_rerun(b).1;
                    }
                }
                dp += n * 2.0 * anatomy.pass_gather_s;
            }
            (tp, cp, dp, ep)
        })
        .collect()
}

/// Per device and local chunk of `sched`, how many micro-batches pass through it in one
/// iteration (its forwards).
pub(crate) fn chunk_passes(sched: &Schedule) -> Vec<Vec<f64>> {
    sched
        .devices
        .iter()
        .map(|ops| {
            let mut n = vec![0.0; sched.v as usize];
            for op in ops.iter().filter(|op| op.kind == OpKind::F) {
                if let Some(x) = n.get_mut(op.chunk as usize) {
                    *x += 1.0;
                }
            }
            n
        })
        .collect()
}

/// The distributed optimizer's all-gather of a device's `params` updated weights (taking
/// `gather_s` in all) overlapped with the first micro-batch's forward of the next iteration
/// (`forward_s`), as Megatron's `--overlap-param-gather` runs it: the weights are gathered in
/// the gradient buckets (`buckets` of them, equal), each bucket's gather waited for by the
/// forward of its layers and the next one started then, so the first bucket's gather and
/// what each later one takes beyond its share of the forward are exposed.
fn overlapped_gather_s(gather_s: f64, buckets: u32, forward_s: f64) -> f64 {
    if gather_s <= 0.0 {
        return 0.0;
    }
    let n = f64::from(buckets.max(1));
    let each = gather_s / n;
    each + (n - 1.0) * (each - forward_s / n).max(0.0)
}

/// The end-of-iteration costs of every device of `plan` run by `sched`.
pub(crate) fn job_costs(
    scenario: &Scenario,
    anatomy: &Anatomy,
    plan: &Plan,
    sched: &Schedule,
) -> JobCosts {
    let cluster = Cluster::of(scenario);
    let par = &scenario.parallel;
    let grad_bytes = f64::from(par.grad_bytes);
    let machine = Machine::new(&scenario.gpu, par.tp);
    let params = device_params(anatomy, plan);
    let experts = device_expert_params(anatomy, plan);
    let expert_cluster = cluster.expert_dp(par.ep, par.etp);
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
    let inner = inner_comm_s(anatomy, plan, &chunk_passes(sched));
    let shards = cluster.shard_ranks();
    let full_shard = par.full_shard;
    let devices = plan
        .devices
        .iter()
        .zip(&params)
        .enumerate()
        .map(|(i, (dev, &n))| {
            // The routed experts reduce over their own data-parallel group `edp`.
            let ef = experts[i] as f64;
            let nf = n as f64 - ef;
            let buckets =
                u32::try_from(n.div_ceil(bucket_params(shards)).max(1)).unwrap_or(u32::MAX);
            let (grad_reduce_s, param_gather_s) = if full_shard {
                // ZeRO-3 reduce-scatters every layer after each backward (inside the ops);
                // the last one is waited for before the optimizer step. The embedding and
                // the output layer are gathered once, before their first use.
                // The last reduce-scatter is of a common layer: attention and MoE in a
                // mixture of experts (its routed experts over their own group `edp`).
                let mlp = if anatomy.moe.params > 0 {
                    &anatomy.moe
                } else {
                    &anatomy.mlp
                };
                let routed = mlp.expert_params.min(mlp.params);
                let dense = (anatomy.attention.params + mlp.params - routed) as f64;
                let outer: u64 = dev
                    .ranges
                    .iter()
                    .flat_map(|&(a, e)| a..=e)
                    .filter(|&i| i == 0 || i == last_block)
                    .map(|i| anatomy.block(i).params)
                    .sum();
                (
                    cluster.dp_half_s(dense * grad_bytes)
                        + expert_cluster.dp_half_s(routed as f64 * grad_bytes),
                    cluster.dp_half_s(2.0 * outer as f64),
                )
            } else {
                let (dense_grads, dense_gather) =
                    cluster.dp_collectives_s(nf, grad_bytes, par.distributed_optimizer);
                let (expert_grads, expert_gather) =
                    expert_cluster.dp_collectives_s(ef, grad_bytes, par.distributed_optimizer);
                let (grads, gather) = (dense_grads + expert_grads, dense_gather + expert_gather);
                let gather = if scenario.plan.overlap_param_gather {
                    overlapped_gather_s(gather, buckets, dev.costs.forward_s)
                } else {
                    gather
                };
                (grads, gather)
            };
            // The two-copy schedules sum each stage's two copies' gradients.
            let grad_reduce_s = if sched.placement == Placement::Chimera {
                grad_reduce_s
                    + super::mirror::mirror_reduce_s(
                        &cluster,
                        &expert_cluster,
                        i as u64,
                        nf * grad_bytes,
                        ef * grad_bytes,
                    )
            } else {
                grad_reduce_s
            };
            let shard = if par.distributed_optimizer {
                nf / shards as f64 + ef / expert_cluster.shard_ranks() as f64
            } else {
                nf + ef
            };
            let (tp_comm_s, cp_comm_s, fsdp_comm_s, ep_comm_s) = inner[i];
            // Under the fp8 recipe the weights are cast once per iteration: read the bf16
            // weight, write its fp8 copy and transpose (twice the cached bytes).
            let fp8_weight_bytes: u64 = BlockKind::ALL
                .iter()
                .map(|&k| u64::from(dev.counts.of(k)) * anatomy.block_of(k).fp8_weight_bytes)
                .sum();
            DeviceJob {
                grad_reduce_s,
                param_gather_s,
                buckets: if full_shard { 1 } else { buckets },
                tied_s: if tied && (Some(i) == first || Some(i) == last) {
                    tied_s
                } else {
                    0.0
                },
                optimizer_s: machine
                    .mem(shard * optimizer_bytes_per_param(par.grad_bytes, par.moment_bytes))
                    .s
                    + machine.mem(2.0 * fp8_weight_bytes as f64).s,
                tp_comm_s,
                cp_comm_s,
                fsdp_comm_s,
                ep_comm_s,
            }
        })
        .collect();
    JobCosts {
        devices,
        overlap_grad_reduce: scenario.plan.overlap_grad_reduce,
        m: scenario.batch.micro_batches,
        chunk_shares: if scenario.plan.align_grad_reduce
            && scenario.plan.schedule == ScheduleKind::Interleaved
            && !full_shard
        {
            chunk_param_shares(anatomy, plan)
        } else {
            Vec::new()
        },
    }
}

/// Per device of `plan`, the share of its parameters each of its local chunks holds (equal
/// shares where it holds none): what each chunk's gradient reduction carries when
/// Megatron-Core's interleaved schedule reduces the chunks one by one (`sim::chunk_sync`).
fn chunk_param_shares(anatomy: &Anatomy, plan: &Plan) -> Vec<Vec<f64>> {
    plan.devices
        .iter()
        .map(|d| {
            let chunk: Vec<f64> = d
                .ranges
                .iter()
                .map(|&(a, e)| (a..=e).map(|i| anatomy.block(i).params as f64).sum())
                .collect();
            let total: f64 = chunk.iter().sum();
            let n = chunk.len().max(1) as f64;
            chunk
                .iter()
                .map(|&c| if total > 0.0 { c / total } else { 1.0 / n })
                .collect()
        })
        .collect()
}

/// Per device and local chunk of `plan`, the link time of the collectives inside its ops
/// per micro-batch (the comm lane's spans): the K/V exchange, the MoE layers' all-to-alls,
/// ZeRO-3's gathers of the chunk's layers and the reduce-scatters of their gradients.
pub(crate) fn chunk_comm(anatomy: &Anatomy, plan: &Plan) -> Vec<Vec<ChunkComm>> {
    plan.devices
        .iter()
        .map(|d| {
            d.ranges
                .iter()
                .map(|&(a, e)| {
                    let mut c = ChunkComm::default();
                    for i in a..=e {
                        let b = anatomy.block(i);
                        c.kv_forward_s += b.cp_comm.forward_s;
                        c.kv_backward_s += b.cp_comm.backward_s;
                        c.gather_forward_s += b.dp_comm.forward_s;
                        c.gather_backward_s += b.dp_comm.forward_s;
                        c.scatter_s += b.dp_comm.backward_s - b.dp_comm.forward_s;
                        c.a2a_forward_s += b.ep_comm.forward_s;
                        c.a2a_backward_s += b.ep_comm.backward_s;
                    }
                    c
                })
                .collect()
        })
        .collect()
}
