//! Lynx's plans: the windows each device has for recomputation, its optimal policy per
//! device, and the heuristic's one policy per class of identical stages.

use crate::plan::decide::{self, DevicePlan};
use crate::plan::stage::{self, BlockCounts, StageEnv, Windows};

use super::PlanRequest;

/// What Lynx knows of the schedule's timing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LynxWaits {
    /// Per device, the idle time of its compute lane before each of its backwards (the
    /// wait for the gradient), as a simulation of the schedule measured it; empty before
    /// one was measured (then only the collectives are windows).
    pub waits_s: Vec<Vec<f64>>,
    /// Whether B and W run as one op (BW), so that W's collectives hide recomputation too.
    pub fused: bool,
}

/// The windows of `device` holding `counts`. On a device with several chunks each chunk's
/// backwards have windows of their own that a per-device policy cannot split between
/// them, so Lynx is given none there and recomputes on demand (a note says so).
pub fn windows_for(req: &PlanRequest, device: usize, counts: BlockCounts) -> Windows {
    if req.stage_of.get(device).is_some_and(|c| c.len() > 1) {
        return Windows::new(&[], 0.0);
    }
    let waits = req
        .lynx
        .waits_s
        .get(device)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    Windows::new(
        waits,
        stage::collectives_s(req.anatomy, counts, req.lynx.fused),
    )
}

/// Lynx's heuristic over a plan's devices: devices holding the same blocks (a class of
/// identical stages) share one policy, the optimal one for the class's most constrained
/// member (most micro-batches in flight, and each window the smallest any member has), so
/// it fits every member; each member is then costed with its own windows.
pub fn share_policies(req: &PlanRequest, devices: &mut [DevicePlan]) {
    let mut classes: Vec<(BlockCounts, bool, Vec<usize>)> = Vec::new();
    for (k, d) in devices.iter().enumerate() {
        match classes
            .iter_mut()
            .find(|(c, l, _)| *c == d.counts && *l == d.env.logits)
        {
            Some((_, _, members)) => members.push(k),
            None => classes.push((d.counts, d.env.logits, vec![k])),
        }
    }
    for (counts, logits, members) in classes {
        let env = StageEnv {
            in_flight: members
                .iter()
                .map(|&k| devices[k].env.in_flight)
                .max()
                .unwrap_or(1),
            budget_bytes: req.budget_bytes,
            logits,
        };
        let windows = tightest(req, &members, devices, counts);
        // A class that cannot fit recomputes every optional unit on demand.
        let policy = stage::lynx_knapsack(req.anatomy, counts, &env, &windows)
            .map_or_else(|| decide::drop_all(req.anatomy, counts), |k| k.decisions);
        for &k in &members {
            let d = &devices[k];
            let own = windows_for(req, d.device, counts);
            devices[k] =
                decide::decide_lynx(req.anatomy, d.device, &d.ranges, d.env, &own, Some(&policy));
        }
    }
}

/// Windows no larger than any member's: member windows sorted, the least at each rank.
fn tightest(
    req: &PlanRequest,
    members: &[usize],
    devices: &[DevicePlan],
    counts: BlockCounts,
) -> Windows {
    let collectives = stage::collectives_s(req.anatomy, counts, req.lynx.fused);
    let mut least: Option<Vec<f64>> = None;
    for &k in members {
        let device = devices[k].device;
        if req.stage_of.get(device).is_some_and(|c| c.len() > 1) {
            return Windows::new(&[], 0.0);
        }
        let mut w = req.lynx.waits_s.get(device).cloned().unwrap_or_default();
        w.sort_by(f64::total_cmp);
        least = Some(match least {
            None => w,
            Some(l) if l.len() == w.len() => l.iter().zip(&w).map(|(a, b)| a.min(*b)).collect(),
            // Different counts of backwards: keep no waits at all (collectives only).
            Some(_) => Vec::new(),
        });
    }
    Windows::new(&least.unwrap_or_default(), collectives)
}
