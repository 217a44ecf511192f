//! The simulated memory peak of a configuration, found without planning search or simulation
//! for the fixed strategies (`none`, `selective`, `full`: their decisions depend on neither
//! the budget nor the in-flight counts). Their plan is the even partition's, and a device's
//! activation memory over time follows its op order alone: the simulator runs a device's ops
//! one after another and records a forward's bytes at its start and a backward's release at
//! its end, so its memory curve passes through the same values as a walk along the order.
//! The peak is static + the walk's highest point + transient, exactly as the simulator
//! reports it. The op order is the generated one; for the searched schedules (ZB-V, ZB-H2,
//! ZB-auto), also regenerated with the plan's durations and kept as `solve` keeps it. The
//! sweep uses the peak to rule out a configuration that cannot fit (and as its memory bound)
//! before simulating it.

use crate::anatomy::Anatomy;
use crate::cancel::Cancel;
use crate::plan::planner;
use crate::plan::{Strategy, simcosts, split};
use crate::scenario::Scenario;
use crate::schedule::{OpKind, Schedule, ScheduleKind};
use crate::sim::SimCosts;

use super::{
    ScheduleMemo, boundary_comm, generate, none_request, options_for, order_ignores_durations,
    peaks, plan_durations, planning_anatomy, schedule_input, timing_anatomy,
};

/// Whether the simulated peaks of `kind` follow each device's op order alone (no copies to
/// the host, no overlapped pairs): then [`peak_along_order`] is the simulated peak of any
/// plan that offloads nothing.
fn order_decides_peaks(kind: ScheduleKind) -> bool {
    matches!(
        kind,
        ScheduleKind::Gpipe
            | ScheduleKind::OneFOneB
            | ScheduleKind::Interleaved
            | ScheduleKind::ZbH1
            | ScheduleKind::ZbH2
            | ScheduleKind::ZbAuto
            | ScheduleKind::ZbV
    ) || order_ignores_durations(kind)
}

/// Whether [`fixed_peak_bytes`] answers for `kind` and `strategy`.
fn answers(kind: ScheduleKind, strategy: Strategy) -> bool {
    order_decides_peaks(kind)
        && matches!(
            strategy,
            Strategy::None | Strategy::Selective | Strategy::Full
        )
}

/// The highest device peak the simulation of `sched` with `costs` reports, known from the op
/// order alone ([`peak_along_order`]), for the strategies whose plans neither offload nor
/// compress nor hide recomputation in a window (the fixed ones and the knapsack ones:
/// `uniform`, `adaptive`, `adapipe`), on the kinds whose peaks the order decides, without the
/// MoE all-to-all overlap (its pairs count a forward's memory after the backward frees);
/// `None` otherwise. A solve uses it to drop a plan that could not enter a sweep's answer
/// before simulating it.
pub(super) fn exact_peak_bytes(
    sched: &Schedule,
    costs: &SimCosts,
    strategy: Strategy,
    a2a_overlap: bool,
) -> Option<u64> {
    let knapsack_or_fixed = matches!(
        strategy,
        Strategy::None
            | Strategy::Selective
            | Strategy::Full
            | Strategy::Uniform
            | Strategy::Adaptive
            | Strategy::AdaPipe
    );
    if !knapsack_or_fixed || a2a_overlap || !order_decides_peaks(sched.kind) {
        return None;
    }
    if sched.offloaded.iter().flatten().any(|&m| m) {
        return None;
    }
    peak_along_order(sched, costs)
}

/// The highest device peak that `solve` would report for `scenario` (with `anatomy`), when it
/// can be told without search or simulation (see the module); `None` otherwise, or when the
/// scenario is not valid (the solve then reports why).
pub(crate) fn fixed_peak_bytes(
    scenario: &Scenario,
    anatomy: &Anatomy,
    memo: Option<&ScheduleMemo>,
) -> Option<u64> {
    let kind = scenario.plan.schedule;
    let strategy = scenario.plan.strategy;
    if !answers(kind, strategy) {
        return None;
    }
    // The same steps as `run`, up to the plan it simulates, on the same anatomies (so the
    // first schedule is the solve's own, shared through the memo).
    let timed = timing_anatomy(kind, anatomy);
    let anatomy = &*timed;
    let p = scenario.parallel.pp;
    let m = scenario.batch.micro_batches;
    let v = kind.chunks(scenario.parallel.chunks);
    let stages = kind.stages(p, scenario.parallel.chunks) as usize;
    let partition = scenario.plan.partition;
    let layout = scenario.plan.layout.as_ref();
    let even = split::chain_split(
        (anatomy.layers, anatomy.layers - anatomy.main_layers),
        stages,
        partition,
        layout,
    )?;
    let planning = planning_anatomy(scenario, kind, anatomy);
    let mut req = none_request(scenario, &planning, kind, stages);
    let none_plan = planner::plan_ranges(&req, &even);
    let max_comm = anatomy.p2p_inter_s.max(anatomy.p2p_intra_s);
    let durations = plan_durations(anatomy, &none_plan, &[], m);
    let input = schedule_input(scenario, (p, v), durations, max_comm, None);
    let sched = generate(memo, kind, &input, &Cancel::never()).ok()?.ok()?;
    req.stage_of = sched.placement.stage_map(sched.p, sched.v);
    req.comm_s = boundary_comm(scenario, anatomy, &sched);
    req.strategy = strategy;
    let plan = planner::plan_ranges(&req, &even);
    let mut sched = sched;
    // `plan_and_simulate`'s regeneration with the plan's durations, kept on the same rule.
    if kind.uses_durations() && !order_ignores_durations(kind) {
        let durations = plan_durations(anatomy, &plan, &req.comm_s, m);
        let input = schedule_input(scenario, (sched.p, sched.v), durations, max_comm, None);
        if let Ok(Ok(again)) = generate(memo, kind, &input, &Cancel::never()) {
            let budget = req.budget_bytes;
            let before = peaks(anatomy, &plan, &sched);
            let after = peaks(anatomy, &plan, &again);
            if after
                .iter()
                .zip(&before)
                .all(|(&a, &bf)| a <= budget || a <= bf)
            {
                sched = again;
            }
        }
    }
    let costs = simcosts::sim_costs(
        anatomy,
        &plan,
        &req.comm_s,
        options_for(m, false, 0.0, false),
    );
    peak_along_order(&sched, &costs)
}

/// Static + highest activation level along each device's op order + transient, the highest
/// over devices; `None` if anything is offloaded (the copy lane's timing then matters).
fn peak_along_order(sched: &Schedule, costs: &SimCosts) -> Option<u64> {
    let mut highest = 0u64;
    for d in 0..sched.devices.len() {
        let row = costs.chunks.get(d)?;
        // Live, peak, and whether every op's chunk has costs and offloads nothing (a
        // repeated period walks the same levels: `walk_repeats_once`).
        let mut walk = (0i128, 0i128, true);
        sched.walk_repeats_once(
            d,
            &mut walk,
            |w| w.0,
            |(live, peak, fits), op| {
                let Some(c) = row.get(op.chunk as usize).filter(|c| c.offload_bytes == 0) else {
                    *fits = false;
                    return;
                };
                let (act, b_free) = (i128::from(c.act_bytes), i128::from(c.b_free_bytes));
                match op.kind {
                    OpKind::F => {
                        *live += act;
                        *peak = (*peak).max(*live);
                    }
                    OpKind::B => *live -= b_free,
                    OpKind::W => *live -= act - b_free,
                    OpKind::BW => *live -= act,
                }
            },
        );
        let (_, peak, fits) = walk;
        if !fits {
            return None;
        }
        let stat = costs.static_bytes.get(d).copied().unwrap_or(0);
        let transient = costs.transient_bytes.get(d).copied().unwrap_or(0);
        let peak = u64::try_from(peak).unwrap_or(0);
        highest = highest.max(stat.saturating_add(peak).saturating_add(transient));
    }
    Some(highest)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::scenario::Catalog;

    /// The peak equals the one the full solve reports, for every fixed strategy and every
    /// schedule it answers for, on a few sizes and budgets (infeasible ones included).
    #[test]
    fn the_fixed_peak_is_the_solved_peak() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut checked = 0;
        for (p, m, budget_gib) in [(2, 4, 40.0), (4, 8, 3.0), (4, 6, 40.0), (8, 16, 6.0)] {
            for &kind in ScheduleKind::ALL {
                for &strategy in Strategy::ALL {
                    if !answers(kind, strategy) {
                        continue;
                    }
                    let mut s = base.clone();
                    s.parallel.pp = p;
                    s.batch.micro_batches = m;
                    s.plan.schedule = kind;
                    s.plan.strategy = strategy;
                    s.plan.memory_budget_bytes = (budget_gib * (1u64 << 30) as f64) as u64;
                    let anatomy = Anatomy::build(&s).unwrap();
                    let Ok(solved) = super::super::solve_on(&s, &anatomy, &Default::default())
                    else {
                        continue;
                    };
                    let got = fixed_peak_bytes(&s, &anatomy, None);
                    assert_eq!(
                        got,
                        Some(solved.max_peak_memory_bytes()),
                        "{kind} {strategy} p {p} m {m}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 40, "only {checked} checked");
    }

    /// The fixed peak generates the solve's own schedules: a solve after it, with the same
    /// memo, generates nothing more, and both report the same peak. The scenarios split the
    /// backward with tensor-parallel collectives hidden in it (which a split B and W expose,
    /// so their durations differ from the fused anatomy's), on the searched and the
    /// duration-free V-shapes.
    #[test]
    fn the_fixed_peak_shares_the_solves_schedules() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut checked = 0;
        for kind in [ScheduleKind::ZbV, ScheduleKind::VHalf, ScheduleKind::ZbH1] {
            for strategy in [Strategy::None, Strategy::Selective, Strategy::Full] {
                for (p, m) in [(2, 6), (4, 8)] {
                    let mut s = base.clone();
                    s.parallel.pp = p;
                    s.parallel.tp = 2;
                    s.parallel.chunks = 2;
                    s.batch.micro_batches = m;
                    s.plan.schedule = kind;
                    s.plan.strategy = strategy;
                    let anatomy = Anatomy::build(&s).unwrap();
                    assert!(anatomy.for_split_backward().is_some(), "nothing hidden");
                    let memo = ScheduleMemo::default();
                    let got = fixed_peak_bytes(&s, &anatomy, Some(&memo));
                    let made = memo.generated();
                    let options = crate::solve::SolveOptions {
                        memo: Some(&memo),
                        ..Default::default()
                    };
                    let run =
                        crate::solve::run_until(&s, &anatomy, (kind, strategy), &options, None)
                            .unwrap();
                    assert!(made > 0, "{kind} {strategy} p {p}");
                    assert_eq!(memo.generated(), made, "{kind} {strategy} p {p} m {m}");
                    let peak = crate::solve::testcase::peak_bytes(&run.simulation);
                    assert_eq!(got, Some(peak), "{kind} {strategy} p {p} m {m}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 18);
    }

    /// The peak a solve reports to its caller's stop once the op order is fixed is exact: on
    /// random small instances (every kind whose order decides the peaks, the strategies it
    /// answers for, budgets from tight to roomy, with and without tensor parallelism), the
    /// solve's simulated highest peak is the peak reported with one of its candidates, whose
    /// floor is at most the simulated iteration.
    #[test]
    fn the_peak_given_to_stop_is_the_simulated_peak() {
        use std::sync::Mutex;

        use crate::solve::{SolveOptions, run_until};

        let mut next = crate::solve::testcase::rng(11);
        let kinds: Vec<ScheduleKind> = ScheduleKind::ALL
            .iter()
            .copied()
            .filter(|&k| order_decides_peaks(k))
            .collect();
        let strategies = [
            Strategy::AdaPipe,
            Strategy::Adaptive,
            Strategy::Uniform,
            Strategy::Full,
            Strategy::Selective,
            Strategy::None,
        ];
        let mut checked = 0;
        for case in 0..120 {
            let kind = kinds[next(kinds.len() as u64) as usize];
            let strategy = strategies[next(strategies.len() as u64) as usize];
            let (s, anatomy) =
                crate::solve::testcase::small(case % 4 == 0, (kind, strategy), &mut next);
            let asked = Mutex::new(Vec::new());
            let stop = |t: f64, peak: u64| {
                asked.lock().unwrap().push((t, peak));
                false
            };
            let Ok(run) = run_until(
                &s,
                &anatomy,
                (kind, strategy),
                &SolveOptions::default(),
                Some(&stop),
            ) else {
                continue;
            };
            let peak = crate::solve::testcase::peak_bytes(&run.simulation);
            let time = run.simulation.makespan;
            let asked = asked.into_inner().unwrap();
            let exact: Vec<_> = asked.iter().filter(|a| a.1 > 0).collect();
            assert!(
                !exact.is_empty(),
                "{kind} {strategy} case {case}: no peak given"
            );
            assert!(
                exact.iter().any(|&&(t, p)| p == peak && t <= time),
                "{kind} {strategy} case {case}: {exact:?}, simulated {time} s, {peak} bytes"
            );
            checked += 1;
        }
        assert!(checked > 80, "only {checked} checked");
    }
}
