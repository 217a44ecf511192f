//! The sweep worker: one thread that runs one sweep at a time on its own rayon pool, never
//! on the UI thread. Starting a sweep cancels the one running (its [`Cancel`] token is set;
//! the engine stops at its next candidate, and a solve running stops at its next check);
//! progress and the answer go back as [`SweepEvent`]s tagged with the sweep's generation.
//! The thread keeps one [`SweepCache`] for all its sweeps, so a sweep after an edit reuses
//! what the earlier ones computed and the edit did not change.

use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::sweep::{SweepEvent, SweepFn, SweepJob};
use super::worker::background_pool;
use crate::cancel::Cancel;
use crate::sweep::SweepCache;

/// Shortest time between two progress reports (the last one always goes).
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// Handle to the sweep thread; dropping it cancels the running sweep and ends the thread.
pub struct SweepWorker {
    tx: Option<mpsc::Sender<(SweepJob, Cancel)>>,
    current: Option<Cancel>,
}

impl SweepWorker {
    /// Starts the thread; every event is passed to `deliver` (on the sweep thread).
    pub fn start(sweep: SweepFn, deliver: impl Fn(SweepEvent) + Send + Sync + 'static) -> Self {
        let (tx, rx) = mpsc::channel::<(SweepJob, Cancel)>();
        let spawned = thread::Builder::new()
            .name("pipescope-sweep".into())
            .spawn(move || {
                let pool = background_pool("pipescope-sweep");
                let cache = SweepCache::default();
                while let Ok(mut next) = rx.recv() {
                    // Only the newest request matters (the older ones are cancelled).
                    while let Ok(newer) = rx.try_recv() {
                        next = newer;
                    }
                    let (job, cancel) = next;
                    if cancel.is_cancelled() {
                        continue;
                    }
                    run_one(sweep, &job, &cancel, &cache, &deliver, pool.as_ref());
                }
            });
        SweepWorker {
            tx: spawned.is_ok().then_some(tx),
            current: None,
        }
    }

    /// Starts `job`, cancelling the sweep running or queued before it.
    pub fn submit(&mut self, job: SweepJob) {
        self.cancel();
        let flag = Cancel::new();
        if let Some(tx) = &self.tx
            && tx.send((job, flag.clone())).is_ok()
        {
            self.current = Some(flag);
        }
    }

    /// Cancels the running sweep, if any.
    pub fn cancel(&mut self) {
        if let Some(flag) = self.current.take() {
            flag.cancel();
        }
    }
}

impl Drop for SweepWorker {
    fn drop(&mut self) {
        self.cancel();
        // Closing the channel ends the thread after the (cancelled) sweep; not joined.
        self.tx = None;
    }
}

fn run_one(
    sweep: SweepFn,
    job: &SweepJob,
    cancel: &Cancel,
    cache: &SweepCache,
    deliver: &(impl Fn(SweepEvent) + Sync),
    pool: Option<&rayon::ThreadPool>,
) {
    let generation = job.generation;
    let last = Mutex::new(None::<Instant>);
    let progress = |done: usize, total: usize| {
        let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
        if done < total && last.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        deliver(SweepEvent::Progress {
            generation,
            done,
            total,
        });
    };
    let space = job.inputs.space();
    let run = || sweep(&job.inputs.base, &space, cache, &progress, cancel);
    let result = match pool {
        Some(pool) => pool.install(run),
        None => run(),
    };
    let reuse = cache.last();
    if reuse.reused > 0 {
        deliver(SweepEvent::Reused {
            generation,
            reused: reuse.reused,
            solved: reuse.solved,
        });
    }
    deliver(SweepEvent::Done {
        generation,
        result: result.map(Box::new),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;
    use crate::tui::sweep::SweepInputs;

    #[test]
    fn a_new_sweep_cancels_the_running_one_and_only_the_newest_answers_in_full() {
        let (tx, rx) = mpsc::channel();
        let mut worker = SweepWorker::start(fixture::sweep::slow_sweep, move |e| {
            let _ = tx.send(e);
        });
        let inputs = SweepInputs::of(&fixture::scenario("gpt3"));
        let job = |generation| SweepJob {
            generation,
            inputs: inputs.clone(),
        };
        worker.submit(job(1));
        // Wait until the first one reports progress, then replace it.
        loop {
            if let Ok(SweepEvent::Progress { generation: 1, .. }) =
                rx.recv_timeout(Duration::from_secs(10))
            {
                break;
            }
        }
        worker.submit(job(2));
        let mut done = Vec::new();
        while done.len() < 2 {
            if let Ok(SweepEvent::Done { generation, result }) =
                rx.recv_timeout(Duration::from_secs(20))
            {
                done.push((generation, result.map(|r| r.cancelled)));
            }
        }
        assert_eq!(done, vec![(1, Ok(true)), (2, Ok(false))]);
    }
}
