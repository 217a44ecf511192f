//! `uniform`: one keep set over the optional unit kinds of the layer blocks (attention, MLP,
//! MoE, MTP) for every device,
//! the one with the best estimate among those that make every device fit.

use crate::anatomy::BlockKind;
use crate::plan::decide;

use super::{Plan, PlanRequest, comm_in_out};

/// `uniform`: the keep set over the optional attention and MLP unit kinds that makes every
/// device fit with the best estimate. Where none does, every device recomputes every
/// complete layer whole as well (`full`'s activations: the least memory, so also the answer
/// when nothing fits). Every set is scored arithmetically from per-device counts; plans are
/// built for the winner only.
pub(super) fn uniform(req: &PlanRequest, plan: &mut Plan) {
    let a = req.anatomy;
    let optional: Vec<(BlockKind, usize)> = a
        .kinds()
        .filter(|k| k.is_layer())
        .flat_map(|k| {
            a.block_of(k)
                .units
                .iter()
                .enumerate()
                .filter(|(_, u)| !u.forced)
                .map(move |(i, _)| (k, i))
        })
        .collect();
    let bits = optional.len().min(20);
    let devs = device_terms(req, plan, &optional, bits);
    plan.devices = match best_mask(&devs, bits, req.m) {
        Some(mask) => plan
            .devices
            .iter()
            .map(|d| decide::with_keep_set(a, d, &optional, mask))
            .collect(),
        None => plan
            .devices
            .iter()
            .map(|d| decide::with_whole_layers(a, d))
            .collect(),
    };
}

/// One device's terms for scoring keep sets: memory and time with every optional kind
/// dropped, and per kind the extra memory when kept (in-flight x copies x size, minus the
/// transient it no longer needs) and the time saved.
struct Dev {
    mem: i128,
    time: f64,
    keep_mem: Vec<i128>,
    keep_time: Vec<f64>,
    budget: i128,
}

/// Every device's [`Dev`] terms for the first `bits` optional kinds (all `optional` kinds
/// dropped in the base).
fn device_terms(
    req: &PlanRequest,
    plan: &Plan,
    optional: &[(BlockKind, usize)],
    bits: usize,
) -> Vec<Dev> {
    let a = req.anatomy;
    plan.devices
        .iter()
        .map(|d| {
            let all_dropped = decide::with_keep_set(a, d, optional, 0);
            let comm: f64 = req.stage_of[d.device]
                .iter()
                .map(|&s| {
                    let (o, b) = comm_in_out(req, s);
                    o + b
                })
                .sum();
            let i = i128::from(d.env.in_flight);
            let (keep_mem, keep_time) = optional[..bits]
                .iter()
                .map(|&(k, ui)| {
                    let n = i128::from(d.counts.of(k));
                    let u = &a.block_of(k).units[ui];
                    let w = i128::from(u.size_bytes);
                    if n == 0 {
                        (0, 0.0)
                    } else {
                        (i * n * w - w, n as f64 * u.forward_s)
                    }
                })
                .unzip();
            Dev {
                mem: i128::from(all_dropped.costs.peak_bytes),
                time: all_dropped.costs.compute_s() + comm,
                keep_mem,
                keep_time,
                budget: i128::from(d.env.budget_bytes),
            }
        })
        .collect()
}

/// The keep set (bit b keeps optional kind b) with the least estimate among those that make
/// every device fit; `None` when none fits.
fn best_mask(devs: &[Dev], bits: usize, m: u32) -> Option<u64> {
    let mf = f64::from(m.max(1) - 1);
    let mut best: Option<(f64, u64)> = None;
    for mask in 0u64..(1u64 << bits) {
        let (mut mx, mut sum, mut fits) = (0.0f64, 0.0f64, true);
        for d in devs {
            let (mut mem, mut t) = (d.mem, d.time);
            for b in 0..bits {
                if mask & (1 << b) != 0 {
                    mem += d.keep_mem[b];
                    t -= d.keep_time[b];
                }
            }
            fits &= mem <= d.budget;
            mx = mx.max(t);
            sum += t;
        }
        let e = mf * mx + sum;
        if fits && best.is_none_or(|(b, _)| e < b) {
            best = Some((e, mask));
        }
    }
    best.map(|(_, m)| m)
}
