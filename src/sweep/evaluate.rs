//! The sweep itself: one scenario per configuration, one anatomy per layout group, bounds
//! for all, then full solves in order of the time bound, skipping (with `exhaustive` off)
//! those that proven bounds (the fixed strategies' exact peak among them) keep out of both
//! the ranked list and the front.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;

use super::bounds::{Bounds, bounds};
use super::cut_solve::CutSolve;
use super::front::Incumbents;
use super::{
    Config, Row, Status, SweepError, SweepOptions, SweepResult, SweepSpace, enumerate, workers,
};
use crate::anatomy::Anatomy;
use crate::cancel::Cancel;
use crate::plan::memo::KnapsackShelf;
use crate::scenario::{Precision, Scenario, Zero};
use crate::solve::{ScheduleMemo, SolveOptions, fixed_peak_bytes};

use crate::scenario::GIB;

/// The scenario a sweep starts from: `sc` with everything the sweep enumerates reset (one
/// GPU, no context parallelism, sequence parallelism off, ZeRO 0, one micro-batch of one
/// sequence, one chunk, `1f1b` with no strategy, no pipeline layout (each configuration has
/// its own stages); the precision stays `sc`'s, the sweep's default); every other setting
/// (model, GPU, sequence length, budget or reserve, flash, partition, gradient overlap,
/// stage-to-stage sends, gradient bytes, objective, limits, profile) is kept, but not the
/// parameter-gather and tensor-parallel overlaps, which one GPU cannot run (a sweep applies
/// them per configuration, where it allows them). The command line and the UI's sweep view
/// both start here.
pub fn starting_scenario(sc: &Scenario) -> Scenario {
    let reset = Config {
        gpus: 1,
        t: 1,
        cp: 1,
        ep: 1,
        etp: 1,
        p: 1,
        d: 1,
        b: 1,
        m: 1,
        chunks: 1,
        sp: false,
        distributed_optimizer: false,
        zero: Zero::Off,
        precision: sc.parallel.precision,
        schedule: crate::scenario::ScheduleKind::OneFOneB,
        strategy: crate::scenario::Strategy::None,
    };
    let mut start = scenario_for(sc, &reset);
    start.plan.layout = None;
    start
}

/// `base` with the configuration's layout, batch, schedule and strategy; every other setting
/// (model, GPU, sequence length, budget, flash, objective, ...) is the base's. The base's
/// overlaps apply where the configuration allows them (the MoE all-to-all overlap only where its
/// rules allow it: a schedule with overlapped forward-backward pairs, ep > 1, ...).
pub fn scenario_for(base: &Scenario, c: &Config) -> Scenario {
    let mut s = base.clone();
    s.parallel.pp = c.p;
    s.parallel.tp = c.t;
    s.parallel.dp = c.d;
    s.parallel.sequence_parallel = c.sp;
    s.parallel.chunks = c.chunks;
    s.parallel.cp = c.cp;
    s.parallel.ep = c.ep;
    s.parallel.etp = c.etp;
    s.parallel.set_zero(c.zero);
    s.parallel.precision = c.precision;
    // The overlaps the base asks for, where the configuration allows them.
    s.plan.tp_comm_overlap =
        base.plan.tp_comm_overlap && c.sp && c.t > 1 && c.t <= base.gpu.node_gpus;
    s.plan.overlap_param_gather = base.plan.overlap_param_gather
        && c.zero != crate::scenario::Zero::Off
        && base.plan.overlap_grad_reduce;
    // DeepEP runs the all-to-alls: only where there are some (ep > 1).
    s.plan.deepep = base.plan.deepep && c.ep > 1;
    s.batch.micro_batch_size = c.b;
    s.batch.micro_batches = c.m;
    s.plan.schedule = c.schedule;
    s.plan.strategy = c.strategy;
    // The all-to-all overlap lives in the overlapped forward-backward pairs: off where the
    // configuration breaks one of its rules (no pairs, ep 1, Megatron's own refusals).
    s.plan.moe_a2a_overlap = base.plan.moe_a2a_overlap;
    if crate::scenario::check_moe_a2a_overlap(&s).is_err() {
        s.plan.moe_a2a_overlap = false;
    }
    s
}

/// What the anatomy depends on: everything but the schedule, strategy, chunks and m.
type GroupKey = (
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u64,
    bool,
    Zero,
    Precision,
);

fn group_key(c: &Config) -> GroupKey {
    (
        c.gpus,
        c.t,
        c.cp,
        c.ep,
        c.etp,
        c.p,
        c.d,
        c.b,
        c.sp,
        c.zero,
        c.precision,
    )
}

fn unsolved(config: Config, b: Bounds, status: Status) -> Row {
    Row {
        config,
        time_bound_s: b.time_s,
        memory_bound_bytes: b.peak_bytes,
        status,
        solved: false,
        iteration_time_s: f64::NAN,
        tokens_per_s_per_gpu: f64::NAN,
        mfu: f64::NAN,
        peak_memory_bytes: 0,
        solve_time_s: 0.0,
    }
}

/// Solves one configuration of `job` in full (generated schedules shared through `memo`; the
/// solve stops early when the sweep is cancelled, and, unless exhaustive, as soon as a proven
/// lower bound of its time learnt during the solve keeps it out of the answer: the row then
/// stays [`Status::Pruned`], unsolved).
fn evaluate(
    job: &Job,
    anatomy: &Anatomy,
    row: &Row,
    (incumbents, defer): (&Mutex<Incumbents>, Option<&AtomicBool>),
) -> Row {
    let scenario = scenario_for(job.base, &row.config);
    let options = SolveOptions {
        cancel: job.cancel.clone(),
        memo: Some(&job.memo),
        skip_baseline: true,
        figures_only: true,
        knapsacks: job.knapsacks.as_ref(),
    };
    CutSolve {
        budget: job.budget,
        exhaustive: job.exhaustive,
        cancel: job.cancel,
        tokens: job.tokens,
        incumbents,
        defer,
    }
    .solve(&scenario, anatomy, row, &options)
}

/// What the workers read: the sweep's settings, the schedules generated so far and the
/// stage knapsack answers of the solves so far (`None`: every solve starts empty).
struct Job<'a> {
    base: &'a Scenario,
    tokens: f64,
    budget: u64,
    exhaustive: bool,
    cancel: &'a Cancel,
    memo: ScheduleMemo,
    knapsacks: Option<KnapsackShelf>,
}

impl Job<'_> {
    /// Whether a configuration with these bounds can still enter the ranked list or the
    /// front (always, when exhaustive).
    fn can_enter(&self, row: &Row, incumbents: &Mutex<Incumbents>) -> bool {
        self.exhaustive || workers::can_enter(incumbents, row)
    }

    /// One candidate: first whether its bounds from the anatomy still let it enter the answer
    /// (a larger memory bound only keeps more out, so one that cannot enter now never could,
    /// and nothing is generated for it); then its memory peak where it is known without a
    /// solve (a fixed strategy on a schedule whose order reads no durations), which rules it
    /// out when it exceeds the budget and tightens its memory bound otherwise; then a full
    /// solve when it can still enter the answer. The new row, or `None` when it stays as it
    /// was.
    fn decide(
        &self,
        row: &Row,
        anatomy: &Anatomy,
        (incumbents, defer): (&Mutex<Incumbents>, Option<&AtomicBool>),
    ) -> Option<Row> {
        if !self.can_enter(row, incumbents) {
            return None;
        }
        let scenario = scenario_for(self.base, &row.config);
        let mut row = row.clone();
        let known = fixed_peak_bytes(&scenario, anatomy, Some(&self.memo));
        if take_fixed_peak(&mut row, known, self.budget, !self.exhaustive) {
            return Some(row);
        }
        if self.can_enter(&row, incumbents) {
            Some(evaluate(self, anatomy, &row, (incumbents, defer)))
        } else {
            known.map(|_| row)
        }
    }
}

/// Takes a fixed plan's exact peak (known without a solve, see [`fixed_peak_bytes`]) into
/// `row`'s memory bound; with `prune`, a peak above `budget` marks the row as not fitting,
/// and the answer is then true (the row is decided without a solve).
pub(super) fn take_fixed_peak(row: &mut Row, known: Option<u64>, budget: u64, prune: bool) -> bool {
    let Some(peak) = known else {
        return false;
    };
    row.memory_bound_bytes = row.memory_bound_bytes.max(peak);
    if prune && peak > budget {
        row.status = Status::DoesNotFit(format!(
            "peaks at {:.1} GiB (its plan and op order are fixed), budget {:.1} GiB",
            peak as f64 / GIB,
            budget as f64 / GIB
        ));
        return true;
    }
    false
}

/// A sweep's configurations before any solve: their rows (bounds, and the status of those
/// the memory bound rules out), the candidates to solve in order of the time bound (every
/// configuration with an anatomy when `exhaustive`), one anatomy per layout group and each
/// configuration's group. Both the one-off sweep and the UI's cached sweep start here.
pub(super) struct Candidates {
    /// One row per configuration, unsolved.
    pub rows: Vec<Row>,
    /// The indices of the rows to solve, best time bound first (ties by index).
    pub order: Vec<usize>,
    /// One anatomy per layout group (or why it could not be built).
    pub anatomies: Vec<Result<Anatomy, String>>,
    /// Each configuration's layout group.
    pub groups: Vec<usize>,
}

/// The [`Candidates`] of `configs` on `base` under `budget`.
pub(super) fn candidates(
    base: &Scenario,
    configs: &[Config],
    budget: u64,
    exhaustive: bool,
) -> Candidates {
    // One anatomy per layout group, built in parallel.
    let mut group_of: HashMap<GroupKey, usize> = HashMap::new();
    let mut firsts: Vec<Config> = Vec::new();
    let groups: Vec<usize> = configs
        .iter()
        .map(|c| {
            *group_of.entry(group_key(c)).or_insert_with(|| {
                firsts.push(*c);
                firsts.len() - 1
            })
        })
        .collect();
    let anatomies: Vec<Result<Anatomy, String>> = firsts
        .par_iter()
        .map(|c| Anatomy::build(&scenario_for(base, c)).map_err(|e| e.to_string()))
        .collect();
    // The schedules that split the backward are planned and simulated on the anatomy with
    // the backward's hidden collectives exposed (longer blocks): their bounds take it too.
    let split: Vec<OnceLock<Option<Anatomy>>> = anatomies.iter().map(|_| OnceLock::new()).collect();
    let rows: Vec<Row> = configs
        .iter()
        .zip(&groups)
        .map(|(c, &g)| match &anatomies[g] {
            Err(e) => unsolved(
                *c,
                Bounds {
                    time_s: f64::NAN,
                    peak_bytes: 0,
                },
                Status::Invalid(e.clone()),
            ),
            Ok(a) => {
                let timed = if c.schedule.splits_backward() {
                    split[g].get_or_init(|| a.for_split_backward()).as_ref()
                } else {
                    None
                };
                let b = bounds(c, timed.unwrap_or(a), &scenario_for(base, c));
                let status = if b.peak_bytes > budget {
                    Status::DoesNotFit(format!(
                        "needs at least {:.1} GiB (static memory and one micro-batch), budget {:.1} GiB",
                        b.peak_bytes as f64 / GIB,
                        budget as f64 / GIB
                    ))
                } else {
                    Status::Pruned
                };
                unsolved(*c, b, status)
            }
        })
        .collect();
    // Candidates in order of the time bound (ties by index).
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            anatomies[groups[i]].is_ok() && (exhaustive || rows[i].status == Status::Pruned)
        })
        .collect();
    order.sort_by(|&a, &b| {
        rows[a]
            .time_bound_s
            .total_cmp(&rows[b].time_bound_s)
            .then(a.cmp(&b))
    });
    Candidates {
        rows,
        order,
        anatomies,
        groups,
    }
}

/// Runs the sweep of `space` on `base` (model, GPU, sequence length and every setting that is
/// not enumerated). `progress(done, total)` is called after each candidate (from the worker
/// threads, with `done` rising); setting `cancel` stops the workers before their next
/// candidate (the result then says `cancelled`).
pub fn sweep(
    base: &Scenario,
    space: &SweepSpace,
    options: SweepOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &Cancel,
) -> Result<SweepResult, SweepError> {
    sweep_sharing(base, space, options, progress, cancel, true)
}

/// [`sweep`], whose solves share their stage knapsack answers where `share` (as the sweep
/// does), or each start empty (what the tests compare it with: the answer is the same).
fn sweep_sharing(
    base: &Scenario,
    space: &SweepSpace,
    options: SweepOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &Cancel,
    share: bool,
) -> Result<SweepResult, SweepError> {
    let (configs, rejected) = enumerate(base, space)?;
    let tokens = space.global_batch as f64 * base.batch.seq_len as f64;
    let budget = base.plan.memory_budget_bytes;
    let job = Job {
        base,
        tokens,
        budget,
        exhaustive: options.exhaustive,
        cancel,
        memo: ScheduleMemo::default(),
        knapsacks: share.then(KnapsackShelf::default),
    };
    Ok(workers::run(
        candidates(base, &configs, budget, options.exhaustive),
        rejected,
        options.top,
        progress,
        cancel,
        |row, anatomy, incumbents, defer| job.decide(row, anatomy, (incumbents, defer)),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::scenario::{Catalog, ScheduleKind, Strategy};
    use crate::solve::solve;

    /// The schedules that split the backward are solved on the anatomy whose backward
    /// collectives are all exposed: their time bounds come from that anatomy (higher than
    /// the layout's own where tensor parallelism hides some collectives), and they still
    /// never exceed the solved iteration.
    #[test]
    fn split_backward_bounds_use_the_exposed_anatomy_and_hold() {
        let base = starting_scenario(&Catalog::builtin().scenario("gpt3-175b-16k").unwrap());
        let mut configs = Vec::new();
        for schedule in [
            ScheduleKind::ZbH1,
            ScheduleKind::ZbV,
            ScheduleKind::OneFOneB,
        ] {
            for strategy in [Strategy::Full, Strategy::AdaPipe] {
                configs.push(Config {
                    gpus: 64,
                    t: 8,
                    cp: 1,
                    ep: 1,
                    etp: 1,
                    p: 8,
                    d: 1,
                    b: 1,
                    m: 16,
                    chunks: 2,
                    sp: true,
                    distributed_optimizer: false,
                    zero: Zero::Off,
                    precision: base.parallel.precision,
                    schedule,
                    strategy,
                });
            }
        }
        let budget = base.plan.memory_budget_bytes;
        let found = candidates(&base, &configs, budget, true);
        let anatomy = found.anatomies[0].as_ref().unwrap();
        assert!(
            anatomy.for_split_backward().is_some(),
            "the layout hides no backward collective: the test shows nothing"
        );
        let mut raised = 0;
        for (c, row) in configs.iter().zip(&found.rows) {
            let own = bounds(c, anatomy, &scenario_for(&base, c)).time_s;
            if c.schedule.splits_backward() {
                assert!(
                    row.time_bound_s > own,
                    "{c:?}: {} <= {own}",
                    row.time_bound_s
                );
                raised += 1;
            } else {
                assert_eq!(row.time_bound_s, own, "{c:?}");
            }
            let solved = solve(&scenario_for(&base, c)).unwrap();
            assert!(
                row.time_bound_s <= solved.iteration_time_s,
                "{c:?}: bound {} above {}",
                row.time_bound_s,
                solved.iteration_time_s
            );
        }
        assert_eq!(raised, 4);
    }
}

#[cfg(test)]
#[path = "share_tests.rs"]
mod share_tests;
