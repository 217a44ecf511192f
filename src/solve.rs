//! The engine's entry point: schedule -> in-flight counts -> plan -> (searched schedules:
//! regenerate once with the plan's durations) -> simulation -> outcome (docs/model.md).

use std::time::Instant;

use crate::anatomy::Anatomy;
use crate::cancel::{Cancel, Cancelled};
use crate::outcome::Outcome;
use crate::plan::planner::{self, Plan, PlanRequest};
use crate::plan::simcosts::{self, SimOptions};
use crate::plan::{Strategy, split};
use crate::scenario::{InvalidField, Scenario};
use crate::schedule::{self, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};
use crate::sim::{self, SimError, Simulation};

mod host;
mod job;
mod peak;
mod report;
mod schedules;

pub(crate) use peak::fixed_peak_bytes;

pub use schedules::ScheduleMemo;
use schedules::order_ignores_durations;

/// Why a scenario could not be solved (invalid input; infeasibility is not an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// A scenario field holds a value that is not allowed.
    #[error(transparent)]
    Invalid(#[from] InvalidField),
    /// The schedule does not support these sizes.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The simulation failed (a bug in a schedule generator).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The solve stopped because its [`Cancel`] token was set ([`solve_cancellable`]).
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
}

/// Plans and simulates `scenario`: pure, deterministic, single-threaded.
pub fn solve(scenario: &Scenario) -> Result<Outcome, SolveError> {
    solve_cancellable(scenario, &Cancel::never())
}

/// [`solve`] that stops with [`SolveError::Cancelled`] soon after `cancel` is set (it is
/// checked between the runs, strategies and plans, between the candidates of the slow
/// schedule searches, and before every exact stage knapsack of the partition search), for
/// callers that may no longer want the result.
pub fn solve_cancellable(scenario: &Scenario, cancel: &Cancel) -> Result<Outcome, SolveError> {
    solve_timed(scenario, cancel, None)
}

/// [`solve`] for several solves of related scenarios (one scenario under several
/// strategies, as `compare` asks): the schedules they generate are kept in `memo` and
/// reused where another solve asks for the same one (each strategy's first schedule is
/// generated from the same durations, and the baseline is the same). The outcome is
/// exactly [`solve`]'s; the memo may be shared between threads.
pub fn solve_shared(scenario: &Scenario, memo: &ScheduleMemo) -> Result<Outcome, SolveError> {
    solve_timed(scenario, &Cancel::never(), Some(memo))
}

/// The public solves' common body: builds the anatomy, solves, and clocks the whole.
fn solve_timed(
    scenario: &Scenario,
    cancel: &Cancel,
    memo: Option<&ScheduleMemo>,
) -> Result<Outcome, SolveError> {
    let start = Instant::now();
    cancel.check()?;
    let anatomy = Anatomy::build(scenario)?;
    let mut out = solve_with_cancel(scenario, &anatomy, cancel, memo)?;
    out.solve_time_s = start.elapsed().as_secs_f64();
    Ok(out)
}

/// One schedule + strategy planned and simulated: the plan, the schedule it ran on and the
/// simulation (what `report` turns into an [`Outcome`]).
pub(crate) struct PlannedRun {
    pub plan: Plan,
    pub schedule: Schedule,
    pub simulation: Simulation,
    /// Whether the host link lengthens the simulation (it would be shorter with an
    /// infinitely fast one); false when nothing is offloaded.
    pub host_link_slows: bool,
    /// Per device, the copy-to-compute ratio `k` of its offloaded chunks (`None`: nothing
    /// offloaded).
    pub copy_ratio: Vec<Option<f64>>,
}

/// [`solve_cancellable`] with a given anatomy (no clock) and, optionally, a memo of
/// generated schedules: the outcome with `solve_time_s = 0`.
fn solve_with_cancel(
    scenario: &Scenario,
    anatomy: &Anatomy,
    cancel: &Cancel,
    memo: Option<&ScheduleMemo>,
) -> Result<Outcome, SolveError> {
    let kind = scenario.plan.schedule;
    let main = run(
        scenario,
        anatomy,
        kind,
        scenario.plan.strategy,
        cancel,
        memo,
    )?;
    let baseline = if kind == ScheduleKind::OneFOneB
        && scenario.plan.strategy == Strategy::Full
        && !scenario.plan.overlap_recompute
    {
        main.simulation.makespan
    } else {
        let mut base = scenario.clone();
        base.plan.overlap_recompute = false;
        run(
            &base,
            anatomy,
            ScheduleKind::OneFOneB,
            Strategy::Full,
            cancel,
            memo,
        )?
        .simulation
        .makespan
    };
    Ok(report::outcome(scenario, anatomy, main, baseline))
}

/// [`solve_with_cancel`] without the baseline run (1F1B, full recomputation): the outcome's
/// `baseline_iteration_time_s` and `speedup` are NaN, everything else is as `solve_with_cancel`'s.
/// For sweeps, which rank by iteration time and memory and need no baseline; `memo` shares
/// generated schedules between their solves (the outcome is the same without it).
pub(crate) fn solve_without_baseline(
    scenario: &Scenario,
    anatomy: &Anatomy,
    memo: Option<&ScheduleMemo>,
) -> Result<Outcome, SolveError> {
    let main = run(
        scenario,
        anatomy,
        scenario.plan.schedule,
        scenario.plan.strategy,
        &Cancel::never(),
        memo,
    )?;
    Ok(report::outcome(scenario, anatomy, main, f64::NAN))
}

/// Transfer time across each boundary of the chain.
fn boundary_comm(scenario: &Scenario, anatomy: &Anatomy, schedule: &Schedule) -> Vec<f64> {
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

fn schedule_input(
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
    }
}

/// Durations per (device, chunk) of a plan, as the schedule generators take them.
fn plan_durations(anatomy: &Anatomy, plan: &Plan, comm: &[f64], m: u32) -> [Vec<Vec<f64>>; 3] {
    let costs = simcosts::sim_costs(anatomy, plan, comm, options_for(m, false, 0.0, false));
    let grid = |g: &dyn Fn(&sim::ChunkCosts) -> f64| -> Vec<Vec<f64>> {
        costs
            .chunks
            .iter()
            .map(|row| row.iter().map(g).collect())
            .collect()
    };
    [grid(&|c| c.f_s), grid(&|c| c.b_s + c.r_s), grid(&|c| c.w_s)]
}

fn options_for(m: u32, overlap: bool, peak: f64, replicated: bool) -> SimOptions {
    SimOptions {
        m,
        overlap_recompute: overlap,
        peak_flops_per_device: peak,
        replicated,
    }
}

/// Device peaks of a plan under a schedule's order (static + weighted live activations +
/// transient), the planner's and simulator's common memory model.
fn peaks(anatomy: &Anatomy, plan: &Plan, schedule: &Schedule) -> Vec<u64> {
    let acts = simcosts::chunk_act_bytes(anatomy, plan);
    let live = schedule::inflight::peak_weighted(schedule, &acts);
    plan.devices
        .iter()
        .zip(live)
        .map(|(d, l)| d.costs.static_bytes + l + d.costs.transient_bytes)
        .collect()
}

/// `schedule::generate`, from `memo` when there is one. A cancelled generation is the outer
/// error (every caller gives up on it); the generator's own outcome is inside (a caller may
/// ignore a failed regeneration).
fn generate(
    memo: Option<&ScheduleMemo>,
    kind: ScheduleKind,
    input: &ScheduleInput,
    cancel: &Cancel,
) -> Result<Result<Schedule, ScheduleError>, Cancelled> {
    let made = match memo {
        Some(m) => m.generate(kind, input),
        None => schedule::generate_cancellable(kind, input, cancel),
    };
    match made {
        Err(ScheduleError::Cancelled(c)) => Err(c),
        made => Ok(made),
    }
}

/// The planner's request for the `none` strategy on `kind`'s stage map with one micro-batch
/// in flight per device: what the first schedule is generated from (step 1 of [`run`], and
/// of the sweep's exact peaks).
pub(crate) fn none_request<'a>(
    scenario: &Scenario,
    anatomy: &'a Anatomy,
    kind: ScheduleKind,
    stages: usize,
) -> PlanRequest<'a> {
    let p = scenario.parallel.pp;
    PlanRequest {
        anatomy,
        strategy: Strategy::None,
        objective: scenario.plan.objective,
        partition: scenario.plan.partition,
        stage_of: kind.stage_map(p, scenario.parallel.chunks),
        stages,
        m: scenario.batch.micro_batches,
        in_flight: vec![1; p as usize],
        budget_bytes: scenario.plan.memory_budget_bytes,
        comm_s: Vec::new(),
        offload_scale: 1.0,
        cache: Default::default(),
    }
}

/// Schedule, plan and simulation of one (schedule, strategy) pair (generated schedules
/// from `memo` when there is one).
pub(crate) fn run(
    scenario: &Scenario,
    anatomy: &Anatomy,
    kind: ScheduleKind,
    strategy: Strategy,
    cancel: &Cancel,
    memo: Option<&ScheduleMemo>,
) -> Result<PlannedRun, SolveError> {
    let split;
    let anatomy = match kind.splits_backward().then(|| anatomy.for_split_backward()) {
        Some(Some(a)) => {
            split = a;
            &split
        }
        _ => anatomy,
    };
    let p = scenario.parallel.pp;
    let m = scenario.batch.micro_batches;
    let v = kind.chunks(scenario.parallel.chunks);
    let budget = scenario.plan.memory_budget_bytes;
    let peak_flops = scenario.gpu.bf16_tflops * 1e12;
    // 1. The schedule from the `none` strategy's durations on the even partition.
    let stages = kind.stages(p, scenario.parallel.chunks) as usize;
    let partition = scenario.plan.partition;
    let even = split::default_partition(anatomy.layers, stages, partition).ok_or_else(|| {
        InvalidField::new(
            "parallel.pp",
            p,
            format!(
                "at most {} pipeline stages in total for {} layers with {} chunks per device",
                2 * anatomy.layers,
                anatomy.layers,
                v
            ),
        )
    })?;
    let mut req = none_request(scenario, anatomy, kind, stages);
    let none_plan = planner::plan_ranges(&req, &even);
    let max_comm = anatomy.p2p_inter_s.max(anatomy.p2p_intra_s);
    let durations = plan_durations(anatomy, &none_plan, &[], m);
    let offload_cost = if kind == ScheduleKind::GisOffload && anatomy.host_bytes_per_s > 0.0 {
        let bytes = simcosts::chunk_act_bytes(anatomy, &none_plan)
            .first()
            .and_then(|r| r.first().copied())
            .unwrap_or(0);
        Some(bytes as f64 / anatomy.host_bytes_per_s)
    } else {
        None
    };
    let input = schedule_input(scenario, (p, v), durations, max_comm, offload_cost);
    let sched = generate(memo, kind, &input, cancel)??;
    req.stage_of = sched.placement.stage_map(sched.p, sched.v);
    req.comm_s = boundary_comm(scenario, anatomy, &sched);
    req.strategy = strategy;
    // 2. In-flight counts from the order (device-worths for several chunks, rounded up).
    req.in_flight = in_flight(anatomy, &sched, &req.stage_of, &even);
    let replicated = sched.placement == Placement::Chimera;
    let opts = options_for(m, scenario.plan.overlap_recompute, peak_flops, replicated);
    let offloads = matches!(strategy, Strategy::Offload | Strategy::Unified);
    let scales: &[f64] = if offloads {
        &[1.0, 0.5, 0.25, 0.0]
    } else {
        &[1.0]
    };
    // Offload: the host-link window is an estimate; the simulation decides. The fastest
    // scale whose simulation stays within the budget wins (the last one tried otherwise).
    let mut best: Option<PlannedRun> = None;
    for &scale in scales {
        req.offload_scale = scale;
        cancel.check()?;
        let Some(mut solved) =
            plan_and_simulate(&mut req, anatomy, scenario, &sched, opts, cancel, memo)?
        else {
            continue;
        };
        if scale < 1.0 {
            solved.plan.notes.push(format!(
                "offload limited to {:.0}% of the host-link window (the simulation decides)",
                100.0 * scale
            ));
        }
        let ok = |s: &PlannedRun| !sim_exceeds(s, budget);
        let better = match &best {
            None => true,
            Some(b) => match (ok(&solved), ok(b)) {
                (true, false) => true,
                (false, true) => false,
                _ => solved.simulation.makespan < b.simulation.makespan,
            },
        };
        // The planner tries 1 .. 1/16 of the window at every scale, so a smaller scale
        // mostly takes options away: once a simulation fits and the host link does not
        // lengthen it, the smaller scales are not tried.
        let done = ok(&solved) && !solved.host_link_slows;
        if better {
            best = Some(solved);
        }
        if done {
            break;
        }
    }
    best.ok_or_else(|| {
        SolveError::Invalid(InvalidField::new(
            "parallel.pp",
            p,
            "a layout with at least one block per stage",
        ))
    })
}

/// Whether a device of the simulation exceeds the budget.
fn sim_exceeds(s: &PlannedRun, budget: u64) -> bool {
    s.simulation
        .devices
        .iter()
        .any(|d| d.peak_memory_bytes > budget)
}

/// Steps 3-5 of the order of evaluation for one request: plan (re-planning a device whose
/// exact time-coincident peak exceeds the planner's rounded count), regenerate a searched
/// schedule once with the best plan's durations, simulate the candidates and keep the
/// fastest.
fn plan_and_simulate(
    req: &mut PlanRequest,
    anatomy: &Anatomy,
    scenario: &Scenario,
    first_sched: &Schedule,
    opts: SimOptions,
    cancel: &Cancel,
    memo: Option<&ScheduleMemo>,
) -> Result<Option<PlannedRun>, SolveError> {
    let budget = req.budget_bytes;
    let kind = first_sched.kind;
    let mut sched = first_sched.clone();
    let keep = if req.strategy == Strategy::Unified {
        1
    } else {
        3
    };
    let mut plans = planner::plan_cancellable(req, keep, cancel)?.unwrap_or_default();
    for _ in 0..4 {
        let Some(first) = plans.first() else { break };
        let pk = peaks(anatomy, first, &sched);
        let mut bumped = false;
        for (d, &pb) in pk.iter().enumerate() {
            if first.devices[d].fits && pb > budget {
                req.in_flight[d] += 1;
                bumped = true;
            }
        }
        if !bumped {
            break;
        }
        cancel.check()?;
        plans = planner::plan_cancellable(req, keep, cancel)?.unwrap_or_default();
    }
    // Kinds whose order ignores the durations would regenerate the same order.
    if kind.uses_durations()
        && !order_ignores_durations(kind)
        && let Some(best) = plans.first()
    {
        let durations = plan_durations(anatomy, best, &req.comm_s, req.m);
        let max_comm = anatomy.p2p_inter_s.max(anatomy.p2p_intra_s);
        let input = schedule_input(scenario, (sched.p, sched.v), durations, max_comm, None);
        cancel.check()?;
        if let Ok(again) = generate(memo, kind, &input, cancel)? {
            let before = peaks(anatomy, best, &sched);
            let after = peaks(anatomy, best, &again);
            if after
                .iter()
                .zip(&before)
                .all(|(&a, &bf)| a <= budget || a <= bf)
            {
                sched = again;
            }
        }
    }
    let mut best: Option<PlannedRun> = None;
    for mut plan in plans {
        cancel.check()?;
        let mut costs = simcosts::sim_costs(anatomy, &plan, &req.comm_s, opts);
        if host::schedule_offload(&sched, anatomy, &mut costs) {
            plan.notes.push(format!(
                "{kind}: the chunks it offloads go to host memory in the simulation; the \
                 planner budgets them as resident, so its choices are conservative"
            ));
        }
        host::add_link_bytes(scenario, anatomy, &sched, &mut costs);
        let copy_ratio = host::copy_ratios(&costs);
        let mut simulation =
            sim::simulate(&sched, &costs).map_err(|e| host::refusal(&sched, &copy_ratio, e))?;
        let pipeline_s = simulation.makespan;
        sim::job::finish(&mut simulation, &job::job_costs(scenario, anatomy, &plan));
        if best
            .as_ref()
            .is_none_or(|b| simulation.makespan < b.simulation.makespan)
        {
            let host_link_slows = host_link_slows(&sched, &costs, pipeline_s)?;
            best = Some(PlannedRun {
                plan,
                schedule: sched.clone(),
                simulation,
                host_link_slows,
                copy_ratio,
            });
        }
    }
    Ok(best)
}

/// Whether the simulation of `costs` (makespan `makespan`) would be shorter with an infinitely
/// fast host link; false without offloaded bytes.
fn host_link_slows(
    sched: &Schedule,
    costs: &sim::SimCosts,
    makespan: f64,
) -> Result<bool, SimError> {
    let offloads = costs.chunks.iter().flatten().any(|c| c.offload_bytes > 0);
    if !offloads {
        return Ok(false);
    }
    let free = sim::SimCosts {
        host_bytes_per_s: f64::INFINITY,
        ..costs.clone()
    };
    let ideal = sim::simulate(sched, &free)?.makespan;
    Ok(ideal < makespan * (1.0 - 1e-12))
}

/// Peak in-flight per device: the count for one chunk; for several, the time-coincident peak
/// weighted by each chunk's blocks, in device-worths, rounded up.
fn in_flight(
    anatomy: &Anatomy,
    sched: &Schedule,
    stage_of: &[Vec<usize>],
    ranges: &[(usize, usize)],
) -> Vec<u32> {
    if sched.v == 1 {
        return schedule::inflight::peak_in_flight(sched);
    }
    let weights: Vec<Vec<u64>> = stage_of
        .iter()
        .map(|cs| {
            cs.iter()
                .map(|&s| {
                    let (a, e) = ranges[s];
                    let c = crate::plan::stage::BlockCounts::of_range(anatomy, a, e);
                    u64::from(c.total())
                })
                .collect()
        })
        .collect();
    let live = schedule::inflight::peak_weighted(sched, &weights);
    live.iter()
        .zip(&weights)
        .map(|(&l, w)| {
            let total: u64 = w.iter().sum::<u64>().max(1);
            u32::try_from(l.div_ceil(total)).unwrap_or(u32::MAX).max(1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::scenario::Catalog;

    /// Under 1F1B a device's time-coincident peak is its in-flight count times its kept
    /// bytes, so the exact-peak check must agree with the planner's own peaks, offloaded
    /// copies included (they are staging, not resident). When it did not, every offloading
    /// device was re-planned with more micro-batches in flight than it holds.
    #[test]
    fn exact_peaks_agree_with_the_planner_for_offloading_plans() {
        let base = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
        for strategy in [Strategy::Offload, Strategy::Unified] {
            let anatomy = Anatomy::build(&base).unwrap();
            let solved = run(
                &base,
                &anatomy,
                ScheduleKind::OneFOneB,
                strategy,
                &Cancel::never(),
                None,
            )
            .unwrap();
            assert!(
                solved
                    .plan
                    .devices
                    .iter()
                    .any(|d| d.costs.offload_bytes > 0),
                "{strategy} offloads nothing"
            );
            let exact = peaks(&anatomy, &solved.plan, &solved.schedule);
            for (d, &e) in solved.plan.devices.iter().zip(&exact) {
                assert_eq!(e, d.costs.peak_bytes, "{strategy} device {}", d.device);
                // The simulation moves exactly the copies the planner offloads (none waits,
                // none stays resident), so its peak is the planner's to the byte.
                let sim = &solved.simulation.devices[d.device];
                assert_eq!(sim.peak_memory_bytes, d.costs.peak_bytes, "{strategy}");
            }
        }
    }
}
