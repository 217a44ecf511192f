//! What a device spends after its pipeline work per parameter it holds: the part of its
//! end-of-iteration steps that a lower bound can charge before any plan exists (the sweep's
//! anatomy bounds and the floors before the partition search both add it per block).

use crate::anatomy::cluster::Cluster;
use crate::scenario::Scenario;

/// Seconds per parameter a device spends after its pipeline work on its data-parallel
/// collectives: the gradient reduction (unless it overlaps the backward) and, with the
/// distributed optimizer, the parameter all-gather, exactly as the job costs of a plan charge
/// them (`Cluster::dp_collectives_s`, proportional to the parameters).
pub(crate) fn tail_s_per_param(scenario: &Scenario) -> f64 {
    let par = &scenario.parallel;
    // ZeRO-3 reduces inside the ops; its tail is not proportional to the parameters (and
    // only adds), so it contributes nothing here.
    if par.full_shard {
        return 0.0;
    }
    // Routed experts reduce over their own (smaller) data-parallel group: per parameter the
    // cheaper of the two bounds every parameter.
    let cluster = Cluster::of(scenario);
    let rate =
        |c: &Cluster| c.dp_collectives_s(1.0, f64::from(par.grad_bytes), par.distributed_optimizer);
    let (dense, experts) = (rate(&cluster), rate(&cluster.expert_dp(par.ep, par.etp)));
    let (grad, gather) = if scenario.model.moe.is_some() {
        (dense.0.min(experts.0), dense.1.min(experts.1))
    } else {
        dense
    };
    let grad = if scenario.plan.overlap_grad_reduce {
        0.0
    } else {
        grad
    };
    // Overlapped with the next forward, the gather may hide all but a bucket: bound it by 0.
    let gather = if scenario.plan.overlap_param_gather {
        0.0
    } else {
        gather
    };
    (grad + gather).max(0.0)
}
