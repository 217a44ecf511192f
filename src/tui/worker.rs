//! The solver worker: one thread, one job running, one pending slot that every new job
//! overwrites (the latest edit wins). Results go back tagged with the job's generation;
//! the app drops stale ones. A job's scenarios are solved in parallel on the worker's own
//! rayon pool, never on the UI thread.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use rayon::prelude::*;

use super::action::{Job, JobResult};
use super::solved::SolveFn;

#[derive(Default)]
struct Slot {
    pending: Option<Job>,
    closed: bool,
}

/// Handle to the worker thread; dropping it stops the thread after its current job
/// (without waiting for that job).
pub struct Worker {
    shared: Arc<(Mutex<Slot>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the worker; every result is passed to `deliver` (on the worker thread).
    pub fn start(solve: SolveFn, deliver: impl Fn(JobResult) + Send + 'static) -> Worker {
        let shared = Arc::new((Mutex::new(Slot::default()), Condvar::new()));
        let inner = Arc::clone(&shared);
        let threads =
            thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("pipescope-solve-{i}"))
            .build()
            .ok();
        let handle = thread::Builder::new()
            .name("pipescope-worker".into())
            .spawn(move || {
                let (lock, cvar) = &*inner;
                loop {
                    let job = {
                        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
                        loop {
                            if slot.closed {
                                return;
                            }
                            if let Some(job) = slot.pending.take() {
                                break job;
                            }
                            slot = cvar.wait(slot).unwrap_or_else(PoisonError::into_inner);
                        }
                    };
                    let run = || job.scenarios.par_iter().map(solve).collect::<Vec<_>>();
                    let results = match &pool {
                        Some(pool) => pool.install(run),
                        None => job.scenarios.iter().map(solve).collect(),
                    };
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
    /// one waiting is dropped: the app would discard its result).
    pub fn submit(&self, job: Job) {
        let (lock, cvar) = &*self.shared;
        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
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
        lock.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
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
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn latest_job_wins_and_results_carry_their_generation() {
        let (tx, rx) = mpsc::channel();
        let worker = Worker::start(fixture::solve, move |r| {
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
        assert_eq!(seen, vec![1, 3]);
        drop(worker);
    }
}
