//! Turns a solved plan and its simulation into the [`Outcome`] the views draw.

use crate::anatomy::{Anatomy, BlockKind};
use crate::outcome::{BlockDecisions, Outcome, StageOutcome, UnitCount, UnitTable};
use crate::scenario::Scenario;

use super::PlannedRun;
use crate::scenario::GIB;

/// The outcome of `solved`, with `baseline_s` the 1F1B / full iteration time on its split.
pub(super) fn outcome(
    scenario: &Scenario,
    anatomy: &Anatomy,
    solved: PlannedRun,
    baseline_s: f64,
) -> Outcome {
    let PlannedRun {
        plan,
        schedule,
        simulation,
        copy_ratio,
        ..
    } = solved;
    let host_peaks = super::host::host_peaks(&simulation);
    let budget = scenario.plan.memory_budget_bytes;
    let params = super::job::device_params(anatomy, &plan);
    let tail_s = crate::sim::job::estimate_tail_s(&super::job::job_costs(
        scenario, anatomy, &plan, &schedule,
    ));
    let mut reasons = Vec::new();
    let mut stages = Vec::with_capacity(plan.devices.len());
    for d in &plan.devices {
        let sim_dev = simulation.devices.get(d.device);
        let sim_peak = sim_dev.map_or(0, |x| x.peak_memory_bytes);
        // The simulated peak decides, as the tables show it: the planner's figure counts
        // whole micro-batch-chunks in flight and may stand above it (and counts what a
        // schedule offloads by itself as resident).
        if sim_peak > budget {
            reasons.push(format!(
                "stage {} needs {:.1} GiB, budget {:.1} GiB",
                d.device,
                sim_peak as f64 / GIB,
                budget as f64 / GIB
            ));
        }
        let units = d
            .decisions
            .iter()
            .filter_map(|k| {
                let kind = k.block?;
                let u = &anatomy.block_of(kind).units[k.unit];
                Some(UnitCount {
                    name: format!("{}.{}", kind.name(), u.name),
                    size_bytes: u.size_bytes,
                    keep: k.keep,
                    recompute: k.recompute,
                    overlap: k.overlap,
                    compress: k.compress,
                    codec: (k.compress > 0)
                        .then(|| anatomy.codec_names.get(k.codec as usize).cloned())
                        .flatten(),
                    offload: k.offload,
                })
            })
            .collect();
        let blocks = d
            .blocks
            .iter()
            .map(|(i, kind, decs)| BlockDecisions {
                block: *i,
                kind: *kind,
                decisions: decs.clone(),
            })
            .collect();
        let (first, last) = d.ranges.first().copied().unwrap_or((0, 0));
        // The fp8 weight cache (fp8 recipe only) counts with the weights.
        let fp8_weights: u64 = BlockKind::ALL
            .iter()
            .map(|&k| u64::from(d.counts.of(k)) * anatomy.block_of(k).fp8_weight_bytes)
            .sum();
        let expert_params = u64::from(d.counts.moe) * anatomy.moe.expert_params;
        let expert_weights_bytes = if scenario.parallel.full_shard {
            2 * expert_params / scenario.parallel.expert_data_ranks()
        } else if scenario.parallel.precision.is_fp8() {
            4 * expert_params
        } else {
            2 * expert_params
        };
        let fp8_weights = fp8_weights.min(d.costs.static_bytes);
        let n = params.get(d.device).copied().unwrap_or(0);
        let (weights_bytes, grads_bytes, optimizer_bytes) = if scenario.parallel.full_shard {
            sharded_split(scenario, anatomy, n, expert_params, d.costs.static_bytes)
        } else {
            let (w, g, o) = crate::anatomy::params::static_split(
                n,
                d.costs.static_bytes - fp8_weights,
                scenario.parallel.grad_bytes,
            );
            (w + fp8_weights, g, o)
        };
        stages.push(StageOutcome {
            stage: d.device as u32,
            first_block: first,
            last_block: last,
            ranges: d.ranges.iter().map(|&(a, e)| [a, e]).collect(),
            attention_blocks: d.counts.attention,
            mlp_blocks: d.counts.mlp,
            moe_blocks: d.counts.moe,
            mtp_blocks: d.counts.mtp,
            static_bytes: d.costs.static_bytes,
            weights_bytes,
            expert_weights_bytes: expert_weights_bytes.min(weights_bytes),
            grads_bytes,
            optimizer_bytes,
            activation_bytes: sim_dev.map_or(0, |x| x.peak_activation_bytes),
            peak_memory_bytes: sim_peak,
            planned_peak_bytes: d.costs.peak_bytes,
            budget_bytes: budget,
            in_flight: sim_dev.map_or(d.env.in_flight, |x| x.peak_in_flight),
            forward_s: d.costs.forward_s,
            backward_s: d.costs.backward_b_s + d.costs.backward_w_s + d.costs.recompute_s,
            recompute_s: d.costs.recompute_s,
            hidden_recompute_s: d.costs.hidden_s,
            offload_bytes: host_peaks.get(d.device).copied().unwrap_or(0),
            copy_ratio: copy_ratio.get(d.device).copied().flatten(),
            time_breakdown_s: simulation
                .job
                .as_ref()
                .and_then(|j| j.devices.get(d.device).copied())
                .unwrap_or_default(),
            units,
            blocks,
        });
    }
    reasons.extend(super::host::host_memory_reasons(scenario, &simulation));
    let mut notes = plan.notes.clone();
    if scenario.plan.overlap_recompute {
        notes.push(
            "recomputation overlaps communication (Lynx): the wait for the incoming gradient \
             and the backward's tensor-parallel collectives"
                .into(),
        );
    }
    notes.extend(deepep_inside_a_node(scenario));
    notes.extend(tp_across_nodes(scenario));
    let makespan = simulation.makespan;
    let feasible = reasons.is_empty();
    let par = &scenario.parallel;
    let gpus = par.gpus();
    let global_batch = scenario.batch.global_batch(par.dp);
    let tokens_per_s = if makespan > 0.0 {
        (global_batch * scenario.batch.seq_len) as f64 / makespan
    } else {
        0.0
    };
    // A measured profile faster than the GPU's peak gives a utilisation above 1: not a
    // fraction, so it is reported as null with a note (a number above 1 would mislead).
    let fraction = |x: Option<f64>| x.filter(|v| v.is_finite() && (0.0..=1.0).contains(v));
    if fraction(simulation.mfu).is_none() && simulation.mfu.is_some_and(|v| v > 1.0)
        || fraction(simulation.hfu).is_none() && simulation.hfu.is_some_and(|v| v > 1.0)
    {
        notes.push(
            "MFU/HFU not reported (null): the times are faster than the GPU's peak FLOP rate \
             (check the measured profile's units: seconds per micro-batch)"
                .into(),
        );
    }
    Outcome {
        feasible,
        infeasible_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        iteration_time_s: makespan,
        bubble_rate: simulation.bubble_rate,
        mfu: fraction(simulation.mfu).filter(|_| feasible),
        hfu: fraction(simulation.hfu).filter(|_| feasible),
        gpus,
        tp: par.tp,
        cp: par.cp,
        pp: par.pp,
        dp: par.dp,
        zero: par.zero().level(),
        ep: par.ep,
        etp: par.etp,
        global_batch,
        tokens_per_s,
        tokens_per_s_per_gpu: tokens_per_s / gpus.max(1) as f64,
        time_breakdown_s: simulation
            .job
            .as_ref()
            .map(|j| j.breakdown)
            .unwrap_or_default(),
        strategy: scenario.plan.strategy,
        schedule: schedule.kind,
        precision: scenario.parallel.precision,
        layout: scenario.plan.layout.as_ref().map(|l| l.text().to_string()),
        p2p: scenario.plan.p2p,
        baseline_iteration_time_s: baseline_s,
        speedup: (feasible && makespan > 0.0 && baseline_s.is_finite())
            .then(|| baseline_s / makespan),
        estimated_iteration_time_s: plan.estimate_s + tail_s,
        solve_time_s: 0.0,
        notes,
        stages,
        simulation,
        op_order: schedule,
        unit_tables: unit_tables(anatomy),
    }
}

/// With `--deepep`, where the expert-parallel group fits inside one node: DeepEP runs its
/// intranode kernels over NVLink there, priced at their measured NVLink rates with the
/// copies they fuse (docs/model.md, "All-to-all cost"); a note says that none of its network
/// path is exercised.
fn deepep_inside_a_node(scenario: &Scenario) -> Option<String> {
    let par = &scenario.parallel;
    let (ep, etp) = (u64::from(par.ep), u64::from(par.etp));
    let cluster = crate::anatomy::cluster::Cluster::of(scenario);
    (scenario.plan.deepep && ep > 1 && cluster.ep_members_per_node(ep, etp) >= ep).then(|| {
        format!(
            "deepep: the expert-parallel group (ep {ep} x etp {etp}) fits inside one node, where \
             DeepEP runs its intranode NVLink kernels, costed at their measured NVLink rates; \
             nothing crosses the network"
        )
    })
}

/// Where the tensor-parallel group is larger than a node (`t` above the GPU preset's
/// `node_gpus`): its collectives then cross the inter-node network, which the cost model
/// prices at that network's rate, and a note says so (Megatron's runs keep `t` in a node).
fn tp_across_nodes(scenario: &Scenario) -> Option<String> {
    let (t, node) = (scenario.parallel.tp, scenario.gpu.node_gpus.max(1));
    (t > node).then(|| {
        format!(
            "t {t} is more than a node's {node} GPUs ({}): the tensor-parallel collectives \
             cross the inter-node network and are costed at its rate; t is usually kept \
             inside a node",
            scenario.gpu.name
        )
    })
}

/// The unit tables of an anatomy, one per block kind.
fn unit_tables(anatomy: &Anatomy) -> Vec<UnitTable> {
    anatomy
        .kinds()
        .map(|kind| {
            let block = anatomy.block_of(kind);
            UnitTable {
                kind,
                names: block.units.iter().map(|u| u.name.clone()).collect(),
                size_bytes: block.units.iter().map(|u| u.size_bytes).collect(),
                recompute_s: block.units.iter().map(|u| u.forward_s).collect(),
                droppable: block.units.iter().map(|u| !u.forced).collect(),
            }
        })
        .collect()
}

/// `(weights, gradients, optimizer)` of a ZeRO-3 device holding `params` parameters, of
/// which `expert_params` routed experts, with `static_bytes` in all: the optimizer its `12/D`
/// share (`12/edp` for the experts; 8 for 12 with bf16 moments), the gradients their `g/D` (`g/edp`) share plus the
/// largest layer's unsharded gradient, the weights the rest (their shard, the layers gathered at a
/// time with their fp8 casts, and the embedding and output layer kept gathered).
fn sharded_split(
    scenario: &Scenario,
    anatomy: &Anatomy,
    params: u64,
    expert_params: u64,
    static_bytes: u64,
) -> (u64, u64, u64) {
    let par = &scenario.parallel;
    let routed = expert_params.min(params);
    // Parameters a device holds a shard of: the dense ones over d x cp, the routed experts
    // over their own data-parallel group edp.
    let shard = (params - routed) as f64 / par.shard_ranks() as f64
        + routed as f64 / par.expert_data_ranks() as f64;
    let g = f64::from(par.grad_bytes);
    let layer = anatomy.largest_layer_params() as f64;
    let state = crate::anatomy::params::optimizer_state_bytes(scenario);
    let optimizer = ((state * shard).round() as u64).min(static_bytes);
    let grads = ((g * shard + g * layer).round() as u64).min(static_bytes - optimizer);
    (static_bytes - optimizer - grads, grads, optimizer)
}
