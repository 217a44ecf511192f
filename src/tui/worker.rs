//! The solver worker: one thread, one job running, one pending slot that every new job
//! overwrites (the latest edit wins). A newer job also cancels the running one (through its
//! [`Cancel`] token, with a cancellable solver), so a cheap edit never waits for a long
//! solve; a cancelled job delivers nothing. Results go back tagged with the job's
//! generation; the app drops stale ones. A job's scenarios are solved in parallel on the
//! worker's own rayon pool (at most the available parallelism), never on the UI thread.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use rayon::prelude::*;

use super::action::{Job, JobResult};
use super::solved::{CancellableSolveFn, SolveFn};
use crate::Scenario;
use crate::cancel::Cancel;

/// How the worker solves one scenario.
#[derive(Debug, Clone, Copy)]
pub enum Solver {
    /// Runs every job to its end (fixtures in tests).
    Plain(SolveFn),
    /// Stops early once the job's token is cancelled (the engine).
    Cancellable(CancellableSolveFn),
}

impl From<SolveFn> for Solver {
    fn from(f: SolveFn) -> Solver {
        Solver::Plain(f)
    }
}

impl From<CancellableSolveFn> for Solver {
    fn from(f: CancellableSolveFn) -> Solver {
        Solver::Cancellable(f)
    }
}

impl Solver {
    fn solve(self, scenario: &Scenario, cancel: &Cancel) -> Result<super::Solved, String> {
        match self {
            Solver::Plain(f) => f(scenario),
            Solver::Cancellable(f) => f(scenario, cancel),
        }
    }
}

#[derive(Default)]
struct Slot {
    pending: Option<Job>,
    /// The generation and token of the job being solved.
    running: Option<(u64, Cancel)>,
    closed: bool,
}

/// Handle to the worker thread; dropping it stops the thread after its current job
/// (without waiting for that job).
pub struct Worker {
    shared: Arc<(Mutex<Slot>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

/// A rayon pool for work kept off the UI thread, its threads named `name-i`: one thread
/// fewer than the machine has (the UI keeps one), whatever `RAYON_NUM_THREADS` says (the
/// builder's explicit count overrides it). `None` when no pool can be built: the caller then
/// works on its own thread.
pub(super) fn background_pool(name: &'static str) -> Option<rayon::ThreadPool> {
    let threads = thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .ok()
}

impl Worker {
    /// Starts the worker; every result is passed to `deliver` (on the worker thread).
    pub fn start(solve: impl Into<Solver>, deliver: impl Fn(JobResult) + Send + 'static) -> Worker {
        let solver: Solver = solve.into();
        let shared = Arc::new((Mutex::new(Slot::default()), Condvar::new()));
        let inner = Arc::clone(&shared);
        let pool = background_pool("pipescope-solve");
        let handle = thread::Builder::new()
            .name("pipescope-worker".into())
            .spawn(move || {
                let (lock, cvar) = &*inner;
                loop {
                    let cancel = Cancel::new();
                    let job = {
                        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
                        loop {
                            if slot.closed {
                                return;
                            }
                            if let Some(job) = slot.pending.take() {
                                slot.running = Some((job.generation, cancel.clone()));
                                break job;
                            }
                            slot = cvar.wait(slot).unwrap_or_else(PoisonError::into_inner);
                        }
                    };
                    let solve = |s: &Scenario| solver.solve(s, &cancel);
                    let run = || job.scenarios.par_iter().map(solve).collect::<Vec<_>>();
                    let results = match &pool {
                        Some(pool) => pool.install(run),
                        None => job.scenarios.iter().map(solve).collect(),
                    };
                    lock.lock().unwrap_or_else(PoisonError::into_inner).running = None;
                    if cancel.is_cancelled() {
                        // A newer job replaced this one: its result is what the app wants.
                        continue;
                    }
                    deliver(JobResult {
                        generation: job.generation,
                        kind: job.kind,
                        results,
                    });
                }
            })
            .ok();
        Worker { shared, handle }
    }

    /// Queues `job`, replacing any older job that has not started yet (a job older than the
    /// one waiting is dropped: the app would discard its result) and cancelling an older
    /// job being solved.
    pub fn submit(&self, job: Job) {
        let (lock, cvar) = &*self.shared;
        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((generation, cancel)) = &slot.running
            && *generation < job.generation
        {
            cancel.cancel();
        }
        if slot
            .pending
            .as_ref()
            .is_none_or(|p| p.generation <= job.generation)
        {
            slot.pending = Some(job);
        }
        drop(slot);
        cvar.notify_one();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.shared;
        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
        slot.closed = true;
        if let Some((_, cancel)) = &slot.running {
            cancel.cancel();
        }
        drop(slot);
        cvar.notify_all();
        // Not joined: a solve in progress must not delay quitting; the thread ends after it.
        drop(self.handle.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::JobKind;
    use crate::tui::fixture;
    use crate::tui::solved::CancellableSolveFn;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn latest_job_wins_and_results_carry_their_generation() {
        let (tx, rx) = mpsc::channel();
        let worker = Worker::start(fixture::solve as SolveFn, move |r| {
            let _ = tx.send(r);
        });
        let sc = fixture::scenario("gpt3");
        for generation in 1..=20 {
            worker.submit(Job {
                generation,
                kind: JobKind::Main,
                scenarios: vec![sc.clone()],
            });
        }
        let mut last = 0;
        loop {
            let r = rx.recv_timeout(Duration::from_secs(30)).unwrap();
            assert!(r.generation > last, "results arrive in generation order");
            assert_eq!(r.results.len(), 1);
            last = r.generation;
            if last == 20 {
                break;
            }
        }
        drop(worker);
    }

    #[test]
    fn an_older_job_never_replaces_a_newer_one_waiting() {
        // The worker is busy with a slow job while two more arrive newest first; the newest
        // must still be solved (an older one replacing it left the UI "solving" forever).
        let (tx, rx) = mpsc::channel();
        let slow: SolveFn = |s| {
            std::thread::sleep(Duration::from_millis(200));
            fixture::solve(s)
        };
        let worker = Worker::start(slow, move |r| {
            let _ = tx.send(r);
        });
        let sc = fixture::scenario("gpt3");
        let job = |generation| Job {
            generation,
            kind: JobKind::Main,
            scenarios: vec![sc.clone()],
        };
        worker.submit(job(1));
        std::thread::sleep(Duration::from_millis(50));
        worker.submit(job(3));
        worker.submit(job(2));
        let mut seen = Vec::new();
        while let Ok(r) = rx.recv_timeout(Duration::from_secs(5)) {
            seen.push(r.generation);
            if r.generation == 3 {
                break;
            }
        }
        // Job 1 was superseded while running: cancelled, it delivers nothing.
        assert_eq!(seen, vec![3]);
        drop(worker);
    }

    #[test]
    fn a_newer_job_cancels_the_running_one_and_arrives_first() {
        // Generation 1 is a solve that would take 30 s unless cancelled; generation 2 must
        // arrive without waiting for it, and generation 1 must deliver nothing.
        let (tx, rx) = mpsc::channel();
        let slow: CancellableSolveFn = |s, cancel| {
            if s.parallel.pp == 4 {
                let start = std::time::Instant::now();
                while start.elapsed() < Duration::from_secs(30) {
                    if cancel.is_cancelled() {
                        return Err("cancelled".into());
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            fixture::solve(s)
        };
        let worker = Worker::start(slow, move |r| {
            let _ = tx.send(r);
        });
        let mut long = fixture::scenario("gpt3");
        long.parallel.pp = 4;
        let mut quick = long.clone();
        quick.parallel.pp = 2;
        worker.submit(Job {
            generation: 1,
            kind: JobKind::Main,
            scenarios: vec![long],
        });
        std::thread::sleep(Duration::from_millis(100));
        let start = std::time::Instant::now();
        worker.submit(Job {
            generation: 2,
            kind: JobKind::Main,
            scenarios: vec![quick],
        });
        let r = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(r.generation, 2, "the newer result comes first");
        assert!(start.elapsed() < Duration::from_secs(20));
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(worker);
    }
}
