//! The solve's inputs to the schedule generators and the simulator: transfer times across
//! stage boundaries, the generator's input, a plan's per-chunk durations and the planner's
//! memory peaks under a schedule's order.

use crate::anatomy::Anatomy;
use crate::plan::planner::Plan;
use crate::plan::simcosts::{self, SimOptions};
use crate::scenario::Scenario;
use crate::schedule::{Schedule, ScheduleInput};
use crate::sim;

/// Transfer time across each boundary of the chain.
pub(super) fn boundary_comm(
    scenario: &Scenario,
    anatomy: &Anatomy,
    schedule: &Schedule,
) -> Vec<f64> {
    let stages = schedule.stages();
    let cluster = crate::anatomy::cluster::Cluster::of(scenario);
    (0..stages.saturating_sub(1))
        .map(|s| {
            let (a, _) = schedule.locate(s, 0);
            let (b, _) = schedule.locate(s + 1, 0);
            if a == b {
                0.0
            } else if !cluster.crosses_nodes(u64::from(a), u64::from(b)) {
                anatomy.p2p_intra_s
            } else {
                anatomy.p2p_inter_s
            }
        })
        .collect()
}

/// The schedule generator's input for a scenario, its (p, v) and per-chunk durations.
pub(super) fn schedule_input(
    scenario: &Scenario,
    (p, v): (u32, u32),
    [f, b, w]: [Vec<Vec<f64>>; 3],
    comm: f64,
    offload_cost: Option<f64>,
) -> ScheduleInput {
    ScheduleInput {
        p,
        m: scenario.batch.micro_batches,
        v,
        f,
        b,
        w,
        comm,
        mem_limit: scenario.plan.mem_limit,
        group_size: scenario.plan.group_size,
        offload_chunks: scenario.plan.offload_chunks,
        offload_cost,
        combined_1f1b: scenario.plan.moe_a2a_overlap,
    }
}

/// Durations per (device, chunk) of a plan, as the schedule generators take them.
pub(super) fn plan_durations(
    anatomy: &Anatomy,
    plan: &Plan,
    comm: &[f64],
    m: u32,
) -> [Vec<Vec<f64>>; 3] {
    let costs = simcosts::sim_costs(anatomy, plan, comm, options_for(m, false, 0.0, false));
    let grid = |g: &dyn Fn(&sim::ChunkCosts) -> f64| -> Vec<Vec<f64>> {
        costs
            .chunks
            .iter()
            .map(|row| row.iter().map(g).collect())
            .collect()
    };
    [
        grid(&|c| c.f_s),
        grid(&|c| c.b_s + c.r_s + c.r_overlap_s),
        grid(&|c| c.w_s),
    ]
}

/// The simulator options a solve uses for `m` micro-batches.
pub(super) fn options_for(m: u32, overlap: bool, peak: f64, replicated: bool) -> SimOptions {
    SimOptions {
        m,
        overlap_recompute: overlap,
        peak_flops_per_device: peak,
        replicated,
        blocking_sends: false,
        moe_a2a_overlap: false,
    }
}

/// Device peaks of a plan under a schedule's order (static + weighted live activations +
/// transient), the planner's and simulator's common memory model.
pub(super) fn peaks(anatomy: &Anatomy, plan: &Plan, schedule: &Schedule) -> Vec<u64> {
    let acts = simcosts::chunk_act_bytes(anatomy, plan);
    let live = schedule.peak_weighted_in_flight(&acts);
    plan.devices
        .iter()
        .zip(live)
        .map(|(d, l)| d.costs.static_bytes + l + d.costs.transient_bytes)
        .collect()
}
