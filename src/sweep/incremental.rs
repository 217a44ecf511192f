//! A sweep that remembers what earlier sweeps computed, for callers that sweep again after
//! every small edit (the terminal UI's sweep view).
//!
//! [`SweepCache`] keeps two things across sweeps, each keyed by everything that decides it,
//! so that a reused value is provably the one a fresh computation would give:
//! - the generated schedules, in a [`ScheduleMemo`] keyed by the generator's whole input (a
//!   schedule depends on its kind, p, m, chunks and the durations, not on the strategy or the
//!   budget), which is where most of a sweep's time goes;
//! - each solved configuration's figures (time, peak, feasibility and its reason), keyed by
//!   the whole scenario that configuration solves (its `Debug` text: every field but the
//!   display name and the reserve the budget came from, the budget itself included). An
//!   edit that leaves a configuration's scenario as it was (an overlap that configuration
//!   cannot use, a value edited and edited back) reuses its figures; any other is solved
//!   again.
//!
//! - the stage knapsack answers, in a [`KnapsackShelf`] keyed by the anatomy print the
//!   knapsack reads and the whole stage question (block counts, in-flight count, stage
//!   budget, ...): an edit that leaves a layout's anatomy print as it was (the budget, an
//!   overlap, the global batch) asks its solves' questions of the answers earlier sweeps
//!   stored, and only the new questions are solved.
//!
//! While a sweep runs, the cache also holds the front of what it has solved so far
//! ([`SweepCache::forming`]): the feasible rows no other row solved so far dominates, each a
//! row the answer will carry with the same figures. It is provisional (a row solved later may
//! push a point off), for a caller that shows the front as it forms; the answer's front is
//! the one to show as final.
//!
//! [`sweep_cached`] starts from the same candidates as [`super::sweep`] (bounds, candidates
//! in order of the time bound) and runs the same worker loop with the same proven cuts: the
//! bounds before a solve, and during one the cut-offs the plain sweep's solves take (a peak
//! over the budget, a time floor the incumbents or the front's steps keep out, a floor well
//! above its bound put off to the second pass). So it answers exactly what that answers,
//! and on an empty cache solves as few configurations. Only whole solves are remembered: a
//! solve cut short proved something about the incumbents of that sweep, not about the
//! configuration.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::cut_solve::CutSolve;
use super::evaluate::{candidates, take_fixed_peak};
use super::front::{Incumbents, Point, total_order};
use super::{Row, Status, SweepError, SweepOptions, SweepResult, SweepSpace, enumerate, workers};
use super::{scenario_for, sweep};
use crate::anatomy::Anatomy;
use crate::cancel::Cancel;
use crate::plan::memo::KnapsackShelf;
use crate::scenario::Scenario;
use crate::solve::{ScheduleMemo, SolveOptions, fixed_peak_bytes};

/// Most solved configurations remembered; past it the figures are forgotten (the schedules
/// stay, bounded by [`ScheduleMemo::MAX_OPS`]).
pub const MAX_REMEMBERED: usize = 20_000;

/// What a solve told about one configuration: the figures a [`Row`] carries once solved.
#[derive(Debug, Clone, PartialEq)]
struct Solved {
    status: Status,
    iteration_time_s: f64,
    tokens_per_s_per_gpu: f64,
    mfu: f64,
    peak_memory_bytes: u64,
    solve_time_s: f64,
}

impl Solved {
    fn of(row: &Row) -> Solved {
        Solved {
            status: row.status.clone(),
            iteration_time_s: row.iteration_time_s,
            tokens_per_s_per_gpu: row.tokens_per_s_per_gpu,
            mfu: row.mfu,
            peak_memory_bytes: row.peak_memory_bytes,
            solve_time_s: row.solve_time_s,
        }
    }

    fn onto(&self, row: &Row) -> Row {
        Row {
            status: self.status.clone(),
            solved: true,
            iteration_time_s: self.iteration_time_s,
            tokens_per_s_per_gpu: self.tokens_per_s_per_gpu,
            mfu: self.mfu,
            peak_memory_bytes: self.peak_memory_bytes,
            solve_time_s: self.solve_time_s,
            ..row.clone()
        }
    }
}

/// What sweeps share with the next ones: generated schedules, stage knapsack answers and
/// solved configurations. It may be shared between threads; results never depend on what
/// it holds.
#[derive(Default)]
pub struct SweepCache {
    memo: ScheduleMemo,
    knapsacks: KnapsackShelf,
    solved: Mutex<HashMap<String, Solved>>,
    forming: Mutex<Vec<Row>>,
    reused: AtomicUsize,
    solves: AtomicUsize,
}

/// How much of the latest [`sweep_cached`] came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reuse {
    /// Configurations whose figures came from an earlier solve.
    pub reused: usize,
    /// Configurations solved in full.
    pub solved: usize,
}

impl std::fmt::Debug for SweepCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let remembered = self
            .solved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("SweepCache")
            .field("remembered", &remembered)
            .field("knapsacks", &self.knapsacks)
            .field("last", &self.last())
            .finish_non_exhaustive()
    }
}

impl SweepCache {
    /// Counts of the latest sweep run with this cache.
    pub fn last(&self) -> Reuse {
        Reuse {
            reused: self.reused.load(Ordering::Relaxed),
            solved: self.solves.load(Ordering::Relaxed),
        }
    }

    /// Stage knapsack answers kept for the next sweeps, all anatomies together.
    pub fn knapsack_answers(&self) -> usize {
        self.knapsacks.answers()
    }

    /// The front of the rows the running (or latest) [`sweep_cached`] has solved so far,
    /// in the sweep's total order: the feasible rows that no row it has solved dominates
    /// (iteration time, peak memory, GPUs). Provisional while the sweep runs: every point is
    /// a row of its answer with these figures, but a row solved later may push it off the
    /// answer's front. Once a sweep that was not cancelled returns, it is the answer's front.
    /// Empty for an exhaustive sweep, which [`sweep_cached`] hands to the plain sweep.
    pub fn forming(&self) -> Vec<Row> {
        let mut front = self
            .forming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        front.sort_by(total_order);
        front
    }

    /// Adds a decided row to the front forming: a feasible one that no point there
    /// dominates goes in, and the points it dominates go out.
    fn note_forming(&self, row: &Row) {
        if !row.feasible() {
            return;
        }
        let point = point_of(row);
        let mut front = self.forming.lock().unwrap_or_else(PoisonError::into_inner);
        if front.iter().any(|r| point_of(r).dominates(&point)) {
            return;
        }
        front.retain(|r| !point.dominates(&point_of(r)));
        front.push(row.clone());
    }

    fn lookup(&self, key: &str) -> Option<Solved> {
        self.solved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn remember(&self, key: String, row: &Row) {
        let mut map = self.solved.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_REMEMBERED {
            map.clear();
        }
        map.insert(key, Solved::of(row));
    }
}

/// [`super::sweep`] with `cache`: the same answer (best, ranked list, front and every solved
/// row's figures), without solving again a configuration whose whole scenario an earlier
/// sweep with this cache solved, and with the schedules generated by earlier sweeps. Without
/// pruning (`exhaustive`) it is the plain sweep.
pub fn sweep_cached(
    base: &Scenario,
    space: &SweepSpace,
    options: SweepOptions,
    cache: &SweepCache,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &Cancel,
) -> Result<SweepResult, SweepError> {
    cache.reused.store(0, Ordering::Relaxed);
    cache.solves.store(0, Ordering::Relaxed);
    cache
        .forming
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    if options.exhaustive {
        return sweep(base, space, options, progress, cancel);
    }
    let (configs, rejected) = enumerate(base, space)?;
    let budget = base.plan.memory_budget_bytes;
    let job = Job {
        base,
        tokens: space.global_batch as f64 * base.batch.seq_len as f64,
        budget,
        cache,
        cancel,
    };
    Ok(workers::run(
        candidates(base, &configs, budget, false),
        rejected,
        options.top,
        progress,
        cancel,
        |row, anatomy, incumbents, defer| {
            let decided = job.decide(row, anatomy, (incumbents, defer));
            // A decision cut short by the token answers nothing (the workers drop it).
            if let Some(r) = decided.as_ref().filter(|_| !cancel.is_cancelled()) {
                cache.note_forming(r);
            }
            decided
        },
    ))
}

/// A row's place on the front: its figures and GPUs.
fn point_of(row: &Row) -> Point {
    Point {
        time_s: row.iteration_time_s,
        peak_bytes: row.peak_memory_bytes,
        gpus: row.config.gpus,
    }
}

/// The cache key of a configuration's scenario: every field that decides its solve. Left
/// out: the display name and description, and the reserve, which only says how the budget
/// follows a change of GPU (the solve reads the budget itself, which the key keeps).
fn key_of(scenario: &Scenario) -> String {
    let mut s = scenario.clone();
    s.name.clear();
    s.description.clear();
    s.plan.reserve_bytes = None;
    format!("{s:?}")
}

/// What the workers read: the sweep's settings and the cache (whose knapsack shelf holds the
/// stage answers of this sweep's solves so far and of earlier sweeps').
struct Job<'a> {
    base: &'a Scenario,
    tokens: f64,
    budget: u64,
    cache: &'a SweepCache,
    cancel: &'a Cancel,
}

impl Job<'_> {
    /// One candidate, decided as [`super::sweep`] decides it (bounds, then the exact peak of
    /// a fixed plan, then a solve with the same cut-offs), the solve's figures taken from the
    /// cache when this very scenario was solved in full before. The new row, or `None` when
    /// it stays as it was. In the first pass (`defer` given) a solve may be put off to the
    /// second, as the plain sweep's are.
    fn decide(
        &self,
        row: &Row,
        anatomy: &Anatomy,
        (incumbents, defer): (&Mutex<Incumbents>, Option<&AtomicBool>),
    ) -> Option<Row> {
        if !workers::can_enter(incumbents, row) {
            return None;
        }
        let scenario = scenario_for(self.base, &row.config);
        let mut row = row.clone();
        let known = fixed_peak_bytes(&scenario, anatomy, Some(&self.cache.memo));
        if take_fixed_peak(&mut row, known, self.budget, true) {
            return Some(row);
        }
        if !workers::can_enter(incumbents, &row) {
            return known.map(|_| row);
        }
        let key = key_of(&scenario);
        if let Some(found) = self.cache.lookup(&key) {
            self.cache.reused.fetch_add(1, Ordering::Relaxed);
            return Some(found.onto(&row));
        }
        let solved = self.solve(&scenario, anatomy, &row, (incumbents, defer));
        // A solve cut short (by the token, a proven bound or the put-off) is not remembered.
        if solved.solved && !self.cancel.is_cancelled() {
            self.cache.solves.fetch_add(1, Ordering::Relaxed);
            self.cache.remember(key, &solved);
        }
        Some(solved)
    }

    /// The solve of one configuration as [`super::sweep`] runs it (the same cut-offs).
    fn solve(
        &self,
        scenario: &Scenario,
        anatomy: &Anatomy,
        row: &Row,
        (incumbents, defer): (&Mutex<Incumbents>, Option<&AtomicBool>),
    ) -> Row {
        let options = SolveOptions {
            cancel: self.cancel.clone(),
            memo: Some(&self.cache.memo),
            skip_baseline: true,
            figures_only: true,
            knapsacks: Some(&self.cache.knapsacks),
        };
        CutSolve {
            budget: self.budget,
            exhaustive: false,
            cancel: self.cancel,
            tokens: self.tokens,
            incumbents,
            defer,
        }
        .solve(scenario, anatomy, row, &options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Catalog, GIB};
    use crate::sweep::Config;

    fn tiny(budget_gib: f64) -> Scenario {
        let mut s = Catalog::builtin()
            .scenario("tiny-4x8")
            .unwrap_or_else(|e| panic!("{e}"));
        s.plan.memory_budget_bytes = (budget_gib * GIB) as u64;
        s
    }

    fn space() -> SweepSpace {
        SweepSpace {
            gpus: vec![8],
            global_batch: 32,
            tp: vec![1, 2, 4],
            pp: vec![1, 2, 4, 8],
            mbs: vec![1, 2],
            ..SweepSpace::default()
        }
    }

    const OPTIONS: SweepOptions = SweepOptions {
        top: 6,
        exhaustive: false,
    };

    /// The answer's rows (best, ranked list, front) with their figures, wall time left out:
    /// what must not depend on the cache.
    fn answer(r: &SweepResult) -> Vec<(Config, String, f64, u64, f64)> {
        r.ranked
            .iter()
            .chain(&r.pareto)
            .map(|&i| {
                let row = &r.rows[i];
                let status = format!("{:?}", row.status);
                (
                    row.config,
                    status,
                    row.iteration_time_s,
                    row.peak_memory_bytes,
                    row.mfu,
                )
            })
            .collect()
    }

    fn fresh(base: &Scenario) -> SweepResult {
        sweep(base, &space(), OPTIONS, &|_, _| {}, &Cancel::never())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn cached(base: &Scenario, cache: &SweepCache) -> SweepResult {
        sweep_cached(base, &space(), OPTIONS, cache, &|_, _| {}, &Cancel::never())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The scenarios the cached sweep is held to the plain one on: the tiny model under a
    /// roomy, a middling and a tight budget, with the gradient overlaps on, and on two GPU
    /// counts at once (a front over GPUs too).
    fn scenarios() -> Vec<(Scenario, SweepSpace)> {
        let mut overlap = tiny(12.0);
        overlap.plan.overlap_grad_reduce = true;
        overlap.plan.overlap_param_gather = true;
        let two_counts = SweepSpace {
            gpus: vec![4, 8],
            global_batch: 16,
            tp: vec![1, 2],
            pp: vec![1, 2, 4],
            mbs: vec![1, 2, 4],
            ..SweepSpace::default()
        };
        vec![
            (tiny(30.0), space()),
            (tiny(12.0), space()),
            (tiny(6.0), space()),
            (overlap, space()),
            (tiny(10.0), two_counts),
        ]
    }

    /// Every row as a sweep decided it, its solve's wall time left out: configuration,
    /// status, whether solved, time, peak.
    fn decisions(r: &SweepResult) -> Vec<(Config, String, bool, u64, u64)> {
        r.rows
            .iter()
            .map(|x| {
                (
                    x.config,
                    format!("{:?}", x.status),
                    x.solved,
                    x.iteration_time_s.to_bits(),
                    x.peak_memory_bytes,
                )
            })
            .collect()
    }

    /// On every scenario the cached sweep (on a fresh cache and again on the warm one)
    /// answers exactly what the plain sweep and the exhaustive one answer: best, ranked list
    /// and front, with their figures.
    #[test]
    fn the_cached_sweep_answers_the_plain_and_the_exhaustive_sweep_s_answer() {
        let exhaustive = SweepOptions {
            exhaustive: true,
            ..OPTIONS
        };
        for (base, space) in scenarios() {
            let cache = SweepCache::default();
            let run = |options| {
                sweep_cached(&base, &space, options, &cache, &|_, _| {}, &Cancel::never())
                    .unwrap_or_else(|e| panic!("{e}"))
            };
            let cold = run(OPTIONS);
            let warm = run(OPTIONS);
            let plain = sweep(&base, &space, OPTIONS, &|_, _| {}, &Cancel::never())
                .unwrap_or_else(|e| panic!("{e}"));
            let all = sweep(&base, &space, exhaustive, &|_, _| {}, &Cancel::never())
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!all.ranked.is_empty(), "the space has feasible layouts");
            assert_eq!(answer(&cold), answer(&all), "{space:?}");
            assert_eq!(answer(&warm), answer(&all), "{space:?}");
            assert_eq!(answer(&plain), answer(&all), "{space:?}");
            assert_eq!((&cold.ranked, &cold.pareto), (&all.ranked, &all.pareto));
        }
    }

    /// On a fresh cache the cached sweep solves exactly what the plain sweep solves: every
    /// row decided the same (the same cut part-way, the same solved in full), so the UI's
    /// count of solves is the command line's. The one difference, on a warm cache: a solve
    /// the cache answers costs nothing and counts as reused, so sweeping the same inputs
    /// again reuses each whole solve and solves none. One worker, so that the order in which
    /// solves finish (which decides what the incumbents cut) is the same in both sweeps.
    #[test]
    fn a_fresh_cache_solves_what_the_plain_sweep_solves() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut cut_part_way = 0;
        for (base, space) in scenarios() {
            let cache = SweepCache::default();
            let run = || {
                one.install(|| {
                    sweep_cached(&base, &space, OPTIONS, &cache, &|_, _| {}, &Cancel::never())
                })
                .unwrap_or_else(|e| panic!("{e}"))
            };
            let plain = one
                .install(|| sweep(&base, &space, OPTIONS, &|_, _| {}, &Cancel::never()))
                .unwrap_or_else(|e| panic!("{e}"));
            let cold = run();
            assert_eq!(decisions(&cold), decisions(&plain), "{space:?}");
            assert_eq!(cold.solved(), plain.solved());
            assert_eq!(
                cache.last(),
                Reuse {
                    reused: 0,
                    solved: plain.solved()
                }
            );
            let warm = run();
            assert_eq!(decisions(&warm), decisions(&plain), "{space:?}");
            assert_eq!(
                cache.last(),
                Reuse {
                    reused: plain.solved(),
                    solved: 0
                }
            );
            cut_part_way += plain
                .rows
                .iter()
                .filter(|x| x.status == Status::Pruned && x.solve_time_s > 0.0)
                .count();
        }
        // Solves stopped part-way happen here: without the plain sweep's cut-offs the
        // cached sweep would solve these in full, and the decisions would differ.
        assert!(
            cut_part_way > 0,
            "no solve was cut part-way: the test shows nothing"
        );
    }

    /// A sequence of edits as the UI makes them (the budget down and back, an overlap that
    /// only some configurations use): after each one the cached sweep answers exactly what a
    /// fresh sweep answers, every solved row it reuses equals a fresh solve of that row, and
    /// the reuse happens (an edit back solves nothing again).
    #[test]
    fn reuse_answers_exactly_what_a_fresh_sweep_answers() {
        let cache = SweepCache::default();
        let roomy = tiny(30.0);
        let tight = tiny(6.0);
        let mut overlap = roomy.clone();
        overlap.plan.overlap_grad_reduce = !overlap.plan.overlap_grad_reduce;
        overlap.plan.overlap_param_gather = true;
        // The roomy budget given as memory kept free: the same solves.
        let mut via_reserve = roomy.clone();
        let free = via_reserve.gpu.memory_bytes() - roomy.plan.memory_budget_bytes;
        via_reserve
            .keep_free(free)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            via_reserve.plan.memory_budget_bytes,
            roomy.plan.memory_budget_bytes
        );
        // One worker: which configurations the bounds leave unsolved depends on the order
        // in which workers finish, so with several a row pruned in one sweep can be solved
        // in the next, and the counts below would hold only most of the time.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut steps = Vec::new();
        for base in [&roomy, &tight, &roomy, &overlap, &tight, &via_reserve] {
            let r = one.install(|| cached(base, &cache));
            let f = one.install(|| fresh(base));
            assert!(!r.ranked.is_empty(), "the space has feasible layouts");
            assert_eq!(answer(&r), answer(&f));
            assert_eq!((&r.ranked, &r.pareto), (&f.ranked, &f.pareto));
            // Rows solved by both (reused or not) carry the same figures.
            for (a, b) in r
                .rows
                .iter()
                .zip(&f.rows)
                .filter(|(a, b)| a.solved && b.solved)
            {
                assert_eq!(a.config, b.config);
                assert_eq!(a.status, b.status, "{:?}", a.config);
                assert_eq!(a.iteration_time_s.to_bits(), b.iteration_time_s.to_bits());
                assert_eq!(a.peak_memory_bytes, b.peak_memory_bytes);
            }
            steps.push(cache.last());
        }
        // The first sweep solves everything it needs; back to a budget seen before, every
        // solve is reused.
        assert_eq!(steps[0].reused, 0, "{steps:?}");
        assert!(steps[0].solved > 0, "{steps:?}");
        assert_eq!(steps[2].solved, 0, "{steps:?}");
        assert!(steps[2].reused > 0, "{steps:?}");
        assert_eq!(steps[4].solved, 0, "{steps:?}");
        assert_eq!(steps[5].solved, 0, "{steps:?}");
    }

    /// The knapsack shelf outlives a sweep: the stage answers the first sweep stored are
    /// still there for the next one after an edit (a budget asks new questions of the same
    /// anatomies, and the old answers stay), and the answer is still the fresh sweep's.
    #[test]
    fn the_knapsack_shelf_is_kept_across_sweeps() {
        let cache = SweepCache::default();
        let _ = cached(&tiny(30.0), &cache);
        let first = cache.knapsack_answers();
        assert!(first > 0, "adapipe solves ask the knapsack");
        let tight = tiny(8.0);
        let r = cached(&tight, &cache);
        assert!(cache.knapsack_answers() >= first);
        assert_eq!(answer(&r), answer(&fresh(&tight)));
    }

    /// A cancelled sweep remembers nothing it cut short: the next sweep still answers as a
    /// fresh one.
    #[test]
    fn a_cancelled_sweep_leaves_the_cache_sound() {
        let cache = SweepCache::default();
        let base = tiny(30.0);
        let cancel = Cancel::new();
        let stop = |done: usize, _: usize| {
            if done >= 2 {
                cancel.cancel();
            }
        };
        let cut = sweep_cached(&base, &space(), OPTIONS, &cache, &stop, &cancel)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cut.cancelled);
        let r = cached(&base, &cache);
        assert!(!r.cancelled);
        assert_eq!(answer(&r), answer(&fresh(&base)));
    }

    /// The front as it forms, read at every progress report of a sweep: each point is a
    /// feasible solved row of the final answer with the same time and peak, no point of a
    /// reading dominates another, a later reading keeps or dominates every point of an
    /// earlier one, and once the sweep is done it is the answer's front (which equals a
    /// fresh sweep's).
    #[test]
    fn the_front_forming_holds_real_solved_points_and_ends_as_the_answer_s_front() {
        for base in [tiny(30.0), tiny(6.0)] {
            let cache = SweepCache::default();
            let readings = Mutex::new(Vec::new());
            let progress = |_: usize, _: usize| {
                readings
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(cache.forming());
            };
            let r = sweep_cached(
                &base,
                &space(),
                OPTIONS,
                &cache,
                &progress,
                &Cancel::never(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(answer(&r), answer(&fresh(&base)));
            let readings = readings
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            assert!(readings.iter().any(|f| !f.is_empty()), "a front formed");
            for front in &readings {
                for p in front {
                    let row = r
                        .rows
                        .iter()
                        .find(|x| x.config == p.config)
                        .unwrap_or_else(|| panic!("{:?} is not a row", p.config));
                    assert!(row.solved && row.feasible(), "{:?}", p.config);
                    assert_eq!(row.iteration_time_s.to_bits(), p.iteration_time_s.to_bits());
                    assert_eq!(row.peak_memory_bytes, p.peak_memory_bytes);
                    for q in front {
                        assert!(!point_of(q).dominates(&point_of(p)), "{front:?}");
                    }
                }
            }
            for pair in readings.windows(2) {
                for p in &pair[0] {
                    assert!(
                        pair[1]
                            .iter()
                            .any(|q| q.config == p.config || point_of(q).dominates(&point_of(p))),
                        "{:?} left the front with nothing better",
                        p.config
                    );
                }
            }
            let formed: Vec<Config> = cache.forming().iter().map(|x| x.config).collect();
            let front: Vec<Config> = r.pareto.iter().map(|&i| r.rows[i].config).collect();
            assert_eq!(formed, front);
        }
    }
}
