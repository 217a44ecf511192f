//! Lynx's windows in the order of evaluation: the waits before each backward come from a
//! simulation of the schedule, the plan places recomputation in them, and its own
//! simulation may move them (a stage's exposed recomputation delays the gradients of the
//! stages before it); the plan is re-made with the waits its simulation measured until
//! they stop moving, and the fastest simulated plan is kept.

use crate::anatomy::Anatomy;
use crate::plan::planner::{Plan, PlanRequest};
use crate::plan::simcosts::{self, SimOptions};
use crate::schedule::Schedule;
use crate::sim::{self, SimError};

use super::{PlannedRun, SolveError};

/// Re-plans after the first simulation at most this many times.
const ROUNDS: usize = 3;

/// Per device, the wait before each backward when `plan` runs on `sched`.
pub(super) fn waits(
    anatomy: &Anatomy,
    plan: &Plan,
    sched: &Schedule,
    comm_s: &[f64],
    opts: SimOptions,
) -> Result<Vec<Vec<f64>>, SimError> {
    let costs = simcosts::sim_costs(anatomy, plan, comm_s, opts);
    Ok(sim::backward_waits(sched, &costs)?
        .into_iter()
        .map(|d| d.into_iter().map(|w| w.wait_s).collect())
        .collect())
}

/// Whether two sets of waits are the same up to rounding (relative to `scale_s`).
fn same(a: &[Vec<f64>], b: &[Vec<f64>], scale_s: f64) -> bool {
    let tol = 1e-9 * scale_s.max(1e-30);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| (p - q).abs() <= tol))
}

/// From a first planned run, re-plans with the waits each run's simulation measured
/// (through `plan_and_simulate`) until they no longer move or [`ROUNDS`] re-plans were
/// made; returns the fastest run (a run that stays within `budget_bytes` before one that
/// does not), with a note saying whether its windows are its own simulation's.
pub(super) fn settle(
    req: &mut PlanRequest,
    anatomy: &Anatomy,
    first: PlannedRun,
    opts: SimOptions,
    budget_bytes: u64,
    mut plan_and_simulate: impl FnMut(&mut PlanRequest) -> Result<Option<PlannedRun>, SolveError>,
) -> Result<PlannedRun, SolveError> {
    let fits = |r: &PlannedRun| {
        r.simulation
            .devices
            .iter()
            .all(|d| d.peak_memory_bytes <= budget_bytes)
    };
    let mut best = first;
    let mut last_waits = req.lynx.waits_s.clone();
    let mut current = best.clone();
    let mut converged = false;
    for round in 0..=ROUNDS {
        let measured = waits(anatomy, &current.plan, &current.schedule, &req.comm_s, opts)?;
        if same(&measured, &last_waits, current.simulation.makespan) {
            converged = current.plan == best.plan && current.schedule == best.schedule;
            break;
        }
        if round == ROUNDS {
            break;
        }
        req.lynx.waits_s = measured.clone();
        last_waits = measured;
        let Some(next) = plan_and_simulate(req)? else {
            break;
        };
        let better = match (fits(&next), fits(&best)) {
            (true, false) => true,
            (false, true) => false,
            _ => next.simulation.makespan < best.simulation.makespan,
        };
        current = next.clone();
        if better {
            best = next;
        }
    }
    best.plan.notes.push(if converged {
        "lynx: recomputation placed in the waits its own simulation has (the planner's \
         exposed time is the simulation's)"
            .into()
    } else {
        "lynx: the waits moved with each re-plan; the fastest simulated plan is shown (its \
         windows come from a neighbouring plan's simulation)"
            .into()
    });
    Ok(best)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::cancel::Cancel;
    use crate::plan::Strategy;
    use crate::plan::stage::{self, Windows};
    use crate::scenario::{Catalog, Scenario};
    use crate::schedule::ScheduleKind;
    use crate::sim::SpanKind;

    fn tiny() -> (Scenario, Anatomy) {
        let s = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let a = Anatomy::build(&s).unwrap();
        (s, a)
    }

    /// The simulator realises the planner's cost exactly: for every device, the exposed
    /// recomputation the planner charges with the waits of a simulation (on-demand time,
    /// plus the overlapped time its windows leave) is, over the device's backwards, the
    /// delay that simulation's recomputation causes; overlapped recomputation is an R span
    /// that starts as soon as its device is free.
    #[test]
    fn the_simulation_realises_the_planned_exposure() {
        let (s, a) = tiny();
        for strategy in [Strategy::Lynx, Strategy::LynxHeuristic] {
            for kind in [
                ScheduleKind::OneFOneB,
                ScheduleKind::ZbH1,
                ScheduleKind::Gpipe,
            ] {
                let run =
                    super::super::run(&s, &a, kind, strategy, &Cancel::never(), None).unwrap();
                let comm = crate::solve::boundary_comm(&s, &a, &run.schedule);
                let opts = super::super::options_for(s.batch.micro_batches, false, 1.0, false);
                let costs = simcosts::sim_costs(&a, &run.plan, &comm, opts);
                let measured = sim::backward_waits(&run.schedule, &costs).unwrap();
                let mut overlapped = 0;
                for (d, dev) in run.plan.devices.iter().enumerate() {
                    let waits: Vec<f64> = measured[d].iter().map(|w| w.wait_s).collect();
                    let fused = !kind.splits_backward();
                    let w = Windows::new(&waits, stage::collectives_s(&a, dev.counts, fused));
                    let planned = stage::exposed_s(&a, &dev.decisions, &w);
                    let delays: f64 = measured[d].iter().map(|w| w.delay_s).sum();
                    let m = f64::from(s.batch.micro_batches);
                    assert!(
                        (planned * m - delays).abs() <= 1e-9 * delays.max(1e-6),
                        "{strategy} {kind} device {d}: planned {} simulated {delays}",
                        planned * m
                    );
                    overlapped += dev.decisions.iter().map(|k| k.overlap).sum::<u32>();
                }
                assert!(overlapped > 0, "{strategy} {kind} overlaps nothing");
                // Every R span of a device with overlapped copies and no on-demand ones
                // starts where the device's previous compute span ended.
                let spans = &run.simulation.timeline.spans;
                for dev in &run.plan.devices {
                    let demand: u32 = dev.decisions.iter().map(|k| k.recompute - k.overlap).sum();
                    if demand > 0 || dev.decisions.iter().all(|k| k.overlap == 0) {
                        continue;
                    }
                    let mine: Vec<_> = spans
                        .iter()
                        .filter(|x| x.device as usize == dev.device && x.lane == sim::Lane::Compute)
                        .collect();
                    for pair in mine.windows(2) {
                        if pair[1].kind == SpanKind::R {
                            assert!((pair[1].start - pair[0].end).abs() < 1e-12);
                        }
                    }
                }
            }
        }
    }

    /// Where Lynx's waits settle, the planner's exposed time is the simulation's: each
    /// device's hidden recomputation per micro-batch (`hidden_s`) is its recomputation less
    /// the delays the simulation measures.
    #[test]
    fn settled_plans_agree_with_their_simulation() {
        let (s, a) = tiny();
        let run = super::super::run(
            &s,
            &a,
            ScheduleKind::OneFOneB,
            Strategy::LynxHeuristic,
            &Cancel::never(),
            None,
        )
        .unwrap();
        assert!(
            run.plan
                .notes
                .iter()
                .any(|n| n.contains("its own simulation")),
            "{:?}",
            run.plan.notes
        );
        let comm = crate::solve::boundary_comm(&s, &a, &run.schedule);
        let opts = super::super::options_for(s.batch.micro_batches, false, 1.0, false);
        let costs = simcosts::sim_costs(&a, &run.plan, &comm, opts);
        let measured = sim::backward_waits(&run.schedule, &costs).unwrap();
        let m = f64::from(s.batch.micro_batches);
        let mut hidden = 0.0;
        for (d, dev) in run.plan.devices.iter().enumerate() {
            let delays: f64 = measured[d].iter().map(|w| w.delay_s).sum();
            let simulated_hidden = dev.costs.recompute_s - delays / m;
            assert!(
                (dev.costs.hidden_s - simulated_hidden).abs()
                    <= 1e-9 * dev.costs.recompute_s.max(1e-9),
                "device {d}: planner hides {} simulation {simulated_hidden}",
                dev.costs.hidden_s
            );
            hidden += dev.costs.hidden_s;
        }
        assert!(hidden > 0.0);
    }
}
