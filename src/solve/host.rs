//! The host side of offload in a solve (docs/model.md, "Offload"): which chunks a schedule
//! itself offloads and at what rate its copies run, the cross-node traffic that shares a
//! device's PCIe link with its copies, each device's copy-to-compute ratio `k`, and the
//! host memory each node needs against `host_memory_gib`.

use crate::anatomy::Anatomy;
use crate::anatomy::cluster::Cluster;
use crate::scenario::{GIB, Scenario};
use crate::schedule::{Schedule, ScheduleError};
use crate::sim::{SimCosts, SimError, Simulation};

use super::SolveError;

/// Applies the offload the schedule itself asks for (`gis-offload`, `po-h`, `po-f`): every
/// kept byte of a marked chunk goes to the host between its F and its B, and PipeOffload's
/// paired copies run at the pair's rates. Returns whether any chunk was marked.
pub(super) fn schedule_offload(sched: &Schedule, anatomy: &Anatomy, costs: &mut SimCosts) -> bool {
    let mut any = false;
    for (row, marks) in costs.chunks.iter_mut().zip(&sched.offloaded) {
        for (chunk, &marked) in row.iter_mut().zip(marks) {
            if marked {
                chunk.offload_bytes = chunk.act_bytes;
                any = true;
            }
        }
    }
    if sched.kind.pairs_host_copies() {
        costs.host_bytes_per_s = anatomy.host_paired_bytes_per_s;
        costs.host_solo_bytes_per_s = anatomy.host_solo_bytes_per_s;
    }
    any
}

/// Sets every chunk's `link_bytes`: the pipeline transfers of its stage that cross nodes,
/// one message per micro-batch and direction for each such boundary. They leave and enter
/// the GPU through its PCIe switch, where the network card sits, so they share the link
/// with the device's copies.
pub(super) fn add_link_bytes(
    scenario: &Scenario,
    anatomy: &Anatomy,
    sched: &Schedule,
    costs: &mut SimCosts,
) {
    let cluster = Cluster::of(scenario);
    let stages = sched.stages();
    let crosses = |a: u32, b: u32| {
        let (da, _) = sched.locate(a, 0);
        let (db, _) = sched.locate(b, 0);
        da != db && cluster.crosses_nodes(u64::from(da), u64::from(db))
    };
    for (d, row) in costs.chunks.iter_mut().enumerate() {
        for (c, chunk) in row.iter_mut().enumerate() {
            let s = sched.stage_of(d as u32, c as u32, 0);
            let boundaries = u64::from(s > 0 && crosses(s - 1, s))
                + u64::from(s + 1 < stages && crosses(s, s + 1));
            chunk.link_bytes = boundaries * anatomy.p2p_bytes;
        }
    }
}

/// Per device, PipeOffload's `k`: the round trip of a micro-batch-chunk's offloaded bytes
/// (D2H + H2D, the cross-node traffic they carry included) over its compute (F + B + W,
/// recomputation included), the largest over the device's offloaded chunks; `None` for a
/// device that offloads nothing. At `k <= 1` every copy keeps pace with compute.
pub(super) fn copy_ratios(costs: &SimCosts) -> Vec<Option<f64>> {
    let rate = costs.host_bytes_per_s;
    costs
        .chunks
        .iter()
        .map(|row| {
            row.iter()
                .filter(|c| c.offload_bytes > 0)
                .map(|c| {
                    let copy = if rate > 0.0 && rate.is_finite() {
                        c.offload_bytes.saturating_add(c.link_bytes) as f64 / rate
                    } else {
                        0.0
                    };
                    let compute = c.f_s + c.b_s + c.w_s + c.r_s;
                    if compute > 0.0 {
                        2.0 * copy / compute
                    } else {
                        f64::INFINITY
                    }
                })
                .reduce(f64::max)
        })
        .collect()
}

/// Per device, the most bytes it holds on the host at once.
pub(super) fn host_peaks(sim: &Simulation) -> Vec<u64> {
    sim.memory
        .iter()
        .map(|c| c.host_points.iter().map(|&(_, b)| b).max().unwrap_or(0))
        .collect()
}

/// Why the offloaded activations do not fit the nodes' host memory (`host_memory_gib` of
/// the GPU preset), one reason per node over it: a node holds the host bytes of every GPU
/// on it, at the moment their sum peaks (each pipeline device's curve counted once per GPU
/// of it on the node: its tensor and data parallel ranks offload the same amounts).
pub(super) fn host_memory_reasons(scenario: &Scenario, sim: &Simulation) -> Vec<String> {
    let Some(limit_gib) = scenario.gpu.host_memory_gib else {
        return Vec::new();
    };
    if sim.memory.iter().all(|c| c.host_points.is_empty()) {
        return Vec::new();
    }
    let cluster = Cluster::of(scenario);
    let width = cluster.t * cluster.d;
    let gpus = width * cluster.p;
    let nodes = gpus.div_ceil(cluster.node_gpus);
    let limit = (limit_gib * GIB) as u128;
    let mut reasons = Vec::new();
    for node in 0..nodes {
        // GPUs of each pipeline device on this node.
        let first = node * cluster.node_gpus;
        let last = (first + cluster.node_gpus).min(gpus);
        let mut count = vec![0u128; sim.memory.len()];
        for rank in first..last {
            if let Some(c) = count.get_mut((rank / width) as usize) {
                *c += 1;
            }
        }
        let mut events: Vec<(f64, i128)> = Vec::new();
        for (curve, &n) in sim.memory.iter().zip(&count) {
            if n == 0 {
                continue;
            }
            let mut level = 0i128;
            for &(t, bytes) in &curve.host_points {
                let b = i128::from(bytes);
                events.push((t, (b - level) * n as i128));
                level = b;
            }
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut held, mut peak) = (0i128, 0i128);
        for (_, delta) in events {
            held += delta;
            peak = peak.max(held);
        }
        let peak = u128::try_from(peak).unwrap_or(0);
        if peak > limit {
            reasons.push(format!(
                "node {node} holds {:.1} GiB of offloaded activations, more than its host memory \
                 (gpu.host_memory_gib {limit_gib})",
                peak as f64 / GIB
            ));
        }
    }
    reasons
}

/// The solve's error for a failed simulation: PipeOffload's copies that cannot be placed are
/// the schedule refusing these rates (with the device's `k`), anything else is a simulator
/// error.
pub(super) fn refusal(sched: &Schedule, copy_ratio: &[Option<f64>], e: SimError) -> SolveError {
    match e {
        SimError::OffloadUnschedulable { device, copy_s } => {
            let k = copy_ratio
                .get(device as usize)
                .copied()
                .flatten()
                .map_or(String::new(), |k| format!(", k = {k:.2}"));
            SolveError::Schedule(ScheduleError::Unsupported {
                schedule: sched.kind,
                requirement: format!(
                    "copies to the host that keep pace with compute: on device {device} a \
                     reload would start before its copy to the host ended (one copy {:.2} ms \
                     each way{k}; PipeOffload needs k = (D2H + H2D) / (F + B + W) at most 1 \
                     and room in its copy slots); offload less (po-h instead of po-f), keep \
                     fewer bytes (recompute LayerNorm, GeLU and dropout), or a faster host link",
                    copy_s * 1e3
                ),
            })
        }
        SimError::NothingOffloaded { .. } | SimError::FullOffloadUnplaced { .. } => {
            let ks: Vec<f64> = copy_ratio.iter().flatten().copied().collect();
            let lo = ks.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ks.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let k = if ks.is_empty() {
                String::new()
            } else {
                format!(" (k = {lo:.2} to {hi:.2} over the devices)")
            };
            SolveError::Schedule(ScheduleError::Unsupported {
                schedule: sched.kind,
                requirement: format!("copies to the host that keep pace with compute{k}: {e}"),
            })
        }
        e => SolveError::Sim(e),
    }
}

/// Whether the simulation of `costs` (makespan `makespan`) would be shorter with an infinitely
/// fast host link; false without offloaded bytes.
pub(super) fn link_slows(
    sched: &crate::schedule::Schedule,
    costs: &crate::sim::SimCosts,
    makespan: f64,
) -> Result<bool, crate::sim::SimError> {
    let offloads = costs.chunks.iter().flatten().any(|c| c.offload_bytes > 0);
    if !offloads {
        return Ok(false);
    }
    let free = crate::sim::SimCosts {
        host_bytes_per_s: f64::INFINITY,
        ..costs.clone()
    };
    let ideal = crate::sim::simulate(sched, &free)?.makespan;
    Ok(ideal < makespan * (1.0 - 1e-12))
}
