//! The loop every sweep worker runs, shared by the one-off sweep and the cached sweep of the
//! UI: take the next candidate in order, decide it, add a feasible answer to the incumbents
//! and record it, until no candidate is left or the sweep is cancelled; then the answer
//! assembled from the decided rows.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use std::collections::BTreeMap;

use super::evaluate::Candidates;
use super::front::{self, Incumbents, Point};
use super::{Row, SweepResult};
use crate::anatomy::Anatomy;
use crate::cancel::Cancel;
use crate::outcome::Outcome;

/// What the workers of one sweep share: the incumbents, the decided rows (by index) with the
/// count of candidates done, the next candidate and whether the sweep was cancelled.
struct Pool {
    /// The feasible answers so far (the ranked list's and the front's contenders).
    incumbents: Mutex<Incumbents>,
    /// The decided rows with their indices, and how many candidates are done.
    solved: Mutex<(Vec<(usize, Row)>, usize)>,
    /// The position in `order` of the next candidate to take.
    next: AtomicUsize,
    /// Set when a worker saw the sweep cancelled.
    cancelled: AtomicBool,
    /// The candidates put off to the second pass, with their positions in the first.
    later: Mutex<Vec<(usize, usize)>>,
}

/// Runs a sweep over its candidates, one worker per thread of the current rayon pool, each
/// taking the next candidate in order (the fastest bounds first, so that the incumbents
/// prune the rest as early as they can), and assembles the answer: every row with its
/// decision, the ranked list of `top` and the front. `decide` answers a candidate's row
/// from its layout group's anatomy and the incumbents at that moment (`None`: it stays as
/// it was; in the first pass it may put the candidate off to a second pass, taken in the same
/// order once the first is done, by setting the flag it is given); a candidate whose anatomy
/// could not be built stays as enumerated.
pub(super) fn run(
    candidates: Candidates,
    rejected: BTreeMap<String, u64>,
    top: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &Cancel,
    decide: impl Fn(&Row, &Anatomy, &Mutex<Incumbents>, Option<&AtomicBool>) -> Option<Row> + Sync,
) -> SweepResult {
    let Candidates {
        mut rows,
        order,
        anatomies,
        groups,
    } = candidates;
    let pool = Pool {
        incumbents: Mutex::new(Incumbents::new(top)),
        solved: Mutex::new((Vec::new(), 0)),
        next: AtomicUsize::new(0),
        cancelled: AtomicBool::new(false),
        later: Mutex::new(Vec::new()),
    };
    let total = order.len();
    let pass = |candidates: &[usize], first: bool| {
        rayon::broadcast(|_| {
            take_in_order(
                (candidates, total, first),
                cancel,
                progress,
                &pool,
                |i, defer| match &anatomies[groups[i]] {
                    Ok(anatomy) => decide(&rows[i], anatomy, &pool.incumbents, defer),
                    Err(_) => None,
                },
            )
        })
    };
    pass(&order, true);
    // The second pass takes the candidates the first put off, in order, none put off again.
    let mut later = std::mem::take(&mut *pool.later.lock().unwrap_or_else(PoisonError::into_inner));
    later.sort_unstable();
    let later: Vec<usize> = later.into_iter().map(|(_, i)| i).collect();
    pool.next.store(0, Ordering::Relaxed);
    pass(&later, false);
    let cancelled = pool.cancelled.into_inner();
    let (solved, _) = pool
        .solved
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    for (i, row) in solved {
        rows[i] = row;
    }
    SweepResult {
        ranked: front::ranked(&rows, top),
        pareto: front::pareto(&rows),
        rows,
        rejected,
        cancelled,
    }
}

/// Whether a row with these bounds can still enter the ranked list or the front that
/// `incumbents` hold now.
pub(super) fn can_enter(incumbents: &Mutex<Incumbents>, row: &Row) -> bool {
    incumbents
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .can_enter(&Point {
            time_s: row.time_bound_s,
            peak_bytes: row.memory_bound_bytes,
            gpus: row.config.gpus,
        })
}

/// Takes the candidates of `order` in turn until none is left or `cancel` is set: `decide`
/// answers a candidate's row (or `None` when it stays undecided). A candidate is skipped only
/// when solved ones already keep it out (`decide` asks the incumbents at that moment), so
/// the answer does not depend on the order of the workers. A decision cut short by the
/// token answers nothing. In the `first` pass `decide` may put a candidate off (it sets the
/// flag it is given): it is then left for the second pass, and counted done there (`total`
/// counts both passes).
fn take_in_order(
    (order, total, first): (&[usize], usize, bool),
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
    pool: &Pool,
    decide: impl Fn(usize, Option<&AtomicBool>) -> Option<Row>,
) {
    loop {
        if cancel.is_cancelled() {
            pool.cancelled.store(true, Ordering::Relaxed);
            return;
        }
        let n = pool.next.fetch_add(1, Ordering::Relaxed);
        let Some(&i) = order.get(n) else {
            return;
        };
        let put_off = AtomicBool::new(false);
        let decided = decide(i, first.then_some(&put_off));
        if put_off.load(Ordering::Relaxed) && !cancel.is_cancelled() {
            pool.later
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((n, i));
            continue;
        }
        if cancel.is_cancelled() {
            pool.cancelled.store(true, Ordering::Relaxed);
            return;
        }
        if let Some(r) = decided.as_ref().filter(|r| r.feasible()) {
            pool.incumbents
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(Point {
                    time_s: r.iteration_time_s,
                    peak_bytes: r.peak_memory_bytes,
                    gpus: r.config.gpus,
                });
        }
        let mut done = pool.solved.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = decided {
            done.0.push((i, r));
        }
        done.1 += 1;
        progress(done.1, total);
    }
}

/// Fills `row` with a solved outcome's figures (`tokens` the global batch's tokens).
pub(super) fn fill_from_outcome(row: &mut Row, o: Outcome, tokens: f64) {
    row.iteration_time_s = o.iteration_time_s;
    row.tokens_per_s_per_gpu = tokens / o.iteration_time_s / f64::from(row.config.gpus);
    row.mfu = o.mfu.unwrap_or(f64::NAN);
    row.peak_memory_bytes = o.max_peak_memory_bytes();
    row.status = if o.feasible {
        super::Status::Feasible
    } else {
        super::Status::Infeasible(
            o.infeasible_reason
                .unwrap_or_else(|| "does not fit its budget".to_string()),
        )
    };
}
