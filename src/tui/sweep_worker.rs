//! The sweep worker: one thread that runs one sweep at a time on its own rayon pool, never
//! on the UI thread. Starting a sweep cancels the one running (its [`Cancel`] token is set;
//! the engine stops at its next candidate, and a solve running stops at its next check);
//! progress and the answer go back as [`SweepEvent`]s tagged with the sweep's generation.
//! The thread keeps one [`SweepCache`] for all its sweeps, so a sweep after an edit reuses
//! what the earlier ones computed and the edit did not change.
//!
//! Sweeping ahead: while no asked-for sweep runs, the thread sweeps the inputs the UI says
//! the next keystroke most likely asks for ([`SweepWorker::sweep_ahead`]), one at a time,
//! each cancelled at once by an asked-for sweep of other inputs. Every complete answer (asked
//! for or ahead) goes into a bounded memory of finished sweeps, most recently used kept
//! ([`REMEMBERED`]), keyed by the inputs (which decide the space): asking for inputs it holds
//! answers at once, on the caller's thread ([`SweepWorker::submit`]), and asking for the
//! inputs being swept ahead adopts that sweep in flight (its progress is reported from then
//! on under the asked-for generation). With each progress report goes the front of what the
//! sweep has solved so far ([`SweepEvent::Forming`], read from the cache's slot), which the
//! view shows as provisional until the answer arrives. A remembered answer is the one the sweep gave, and a
//! sweep's answer depends on its inputs alone, so it equals a fresh sweep's.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use super::sweep::{SweepEvent, SweepFn, SweepInputs, SweepJob};
use super::worker::background_pool;
use crate::cancel::Cancel;
use crate::sweep::{SweepCache, SweepResult};

/// Shortest time between two progress reports (the last one always goes).
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// Finished sweeps remembered (asked for or swept ahead), the least recently used forgotten
/// first. An answer holds a row per configuration enumerated (14,608 at 70B @ 64 H100,
/// global batch 512, s 8192), so the memory holds at most 16 times that.
pub const REMEMBERED: usize = 16;

/// Finished answers keyed by their inputs, the most recently used last.
#[derive(Default)]
struct Remembered {
    answers: VecDeque<(SweepInputs, Box<SweepResult>)>,
}

impl Remembered {
    /// The answer for `inputs`, now the most recently used.
    fn get(&mut self, inputs: &SweepInputs) -> Option<Box<SweepResult>> {
        let i = self.answers.iter().position(|(k, _)| k == inputs)?;
        let entry = self.answers.remove(i)?;
        let answer = entry.1.clone();
        self.answers.push_back(entry);
        Some(answer)
    }

    fn holds(&self, inputs: &SweepInputs) -> bool {
        self.answers.iter().any(|(k, _)| k == inputs)
    }

    /// Keeps a complete answer (a cancelled one answers nothing and is not kept).
    fn put(&mut self, inputs: &SweepInputs, answer: &SweepResult) {
        if answer.cancelled {
            return;
        }
        self.answers.retain(|(k, _)| k != inputs);
        self.answers
            .push_back((inputs.clone(), Box::new(answer.clone())));
        while self.answers.len() > REMEMBERED {
            self.answers.pop_front();
        }
    }
}

/// The sweep ahead running: its inputs, its cancel token, and the generation of the
/// asked-for sweep that adopted it (0 while none has).
#[derive(Clone)]
struct Ahead {
    inputs: SweepInputs,
    cancel: Cancel,
    adopted: Arc<AtomicU64>,
}

/// What the UI thread and the sweep thread share.
#[derive(Default)]
struct Shared {
    remembered: Remembered,
    ahead: Option<Ahead>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the UI asks of the sweep thread.
enum Request {
    /// Sweep these inputs (an asked-for sweep).
    Sweep(Box<SweepJob>, Cancel),
    /// Sweep these ahead, in order, when idle (replacing the earlier list).
    Ahead(Vec<SweepInputs>),
}

/// Handle to the sweep thread; dropping it cancels the running sweep and ends the thread.
pub struct SweepWorker {
    tx: Option<mpsc::Sender<Request>>,
    current: Option<Cancel>,
    shared: Arc<Mutex<Shared>>,
}

impl SweepWorker {
    /// Starts the thread; every event is passed to `deliver` (on the sweep thread).
    pub fn start(sweep: SweepFn, deliver: impl Fn(SweepEvent) + Send + Sync + 'static) -> Self {
        let (tx, rx) = mpsc::channel::<Request>();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let inner = Arc::clone(&shared);
        let spawned = thread::Builder::new()
            .name("pipescope-sweep".into())
            .spawn(move || {
                let pool = background_pool("pipescope-sweep");
                let cache = SweepCache::default();
                let thread = Thread {
                    sweep,
                    cache: &cache,
                    shared: &inner,
                    deliver: &deliver,
                    pool: pool.as_ref(),
                };
                thread.serve(&rx);
            });
        SweepWorker {
            tx: spawned.is_ok().then_some(tx),
            current: None,
            shared,
        }
    }

    /// Starts `job`, cancelling the sweep running or queued before it. When its inputs were
    /// answered before and are remembered, the answer comes back here at once (the event to
    /// hand to the UI now); when they are being swept ahead, that sweep is adopted.
    pub fn submit(&mut self, job: SweepJob) -> Option<SweepEvent> {
        self.cancel();
        let mut shared = lock(&self.shared);
        if let Some(answer) = shared.remembered.get(&job.inputs) {
            return Some(SweepEvent::Done {
                generation: job.generation,
                result: Ok(answer),
            });
        }
        if let Some(ahead) = &shared.ahead {
            if ahead.inputs == job.inputs && !ahead.cancel.is_cancelled() {
                ahead.adopted.store(job.generation, Ordering::SeqCst);
                self.current = Some(ahead.cancel.clone());
                return None;
            }
            ahead.cancel.cancel();
        }
        drop(shared);
        let flag = Cancel::new();
        if let Some(tx) = &self.tx
            && tx.send(Request::Sweep(Box::new(job), flag.clone())).is_ok()
        {
            self.current = Some(flag);
        }
        None
    }

    /// Sweeps `inputs` ahead, most likely first, whenever no asked-for sweep runs; the sweep
    /// ahead running is cancelled unless it is in the list (or was adopted). An empty list
    /// stops sweeping ahead.
    pub fn sweep_ahead(&mut self, inputs: Vec<SweepInputs>) {
        let shared = lock(&self.shared);
        if let Some(ahead) = &shared.ahead
            && ahead.adopted.load(Ordering::SeqCst) == 0
            && !inputs.contains(&ahead.inputs)
        {
            ahead.cancel.cancel();
        }
        let wanted: Vec<SweepInputs> = inputs
            .into_iter()
            .filter(|i| !shared.remembered.holds(i))
            .collect();
        drop(shared);
        if let Some(tx) = &self.tx {
            let _ = tx.send(Request::Ahead(wanted));
        }
    }

    /// Cancels the running sweep, if any.
    pub fn cancel(&mut self) {
        if let Some(flag) = self.current.take() {
            flag.cancel();
        }
    }

    /// Whether an answer for `inputs` is remembered (asking for it answers at once).
    pub fn remembers(&self, inputs: &SweepInputs) -> bool {
        lock(&self.shared).remembered.holds(inputs)
    }

    /// The inputs being swept ahead now, if any.
    pub fn sweeping_ahead(&self) -> Option<SweepInputs> {
        lock(&self.shared).ahead.as_ref().map(|a| a.inputs.clone())
    }
}

impl Drop for SweepWorker {
    fn drop(&mut self) {
        self.cancel();
        if let Some(ahead) = &lock(&self.shared).ahead {
            ahead.cancel.cancel();
        }
        // Closing the channel ends the thread after the (cancelled) sweep; not joined.
        self.tx = None;
    }
}

/// The sweep thread's side.
struct Thread<'a, D> {
    sweep: SweepFn,
    cache: &'a SweepCache,
    shared: &'a Mutex<Shared>,
    deliver: &'a D,
    pool: Option<&'a rayon::ThreadPool>,
}

impl<D: Fn(SweepEvent) + Sync> Thread<'_, D> {
    /// Serves requests until the handle is dropped: the newest asked-for sweep first, else
    /// the next input to sweep ahead, else waits.
    fn serve(&self, rx: &mpsc::Receiver<Request>) {
        let mut ahead: VecDeque<SweepInputs> = VecDeque::new();
        loop {
            let first = if ahead.is_empty() {
                match rx.recv() {
                    Ok(r) => Some(r),
                    Err(_) => return,
                }
            } else {
                match rx.try_recv() {
                    Ok(r) => Some(r),
                    Err(mpsc::TryRecvError::Empty) => None,
                    Err(mpsc::TryRecvError::Disconnected) => return,
                }
            };
            // Only the newest request of each kind matters (older asked-for sweeps are
            // cancelled, older lists replaced).
            let mut asked = None;
            for request in first
                .into_iter()
                .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            {
                match request {
                    Request::Sweep(job, cancel) => asked = Some((job, cancel)),
                    Request::Ahead(list) => ahead = list.into(),
                }
            }
            if let Some((job, cancel)) = asked {
                if !cancel.is_cancelled() {
                    self.asked(&job, &cancel);
                }
            } else if let Some(inputs) = ahead.pop_front() {
                self.ahead(inputs);
            }
        }
    }

    /// An asked-for sweep (answered from memory when a sweep ahead finished it meanwhile).
    fn asked(&self, job: &SweepJob, cancel: &Cancel) {
        let generation = job.generation;
        let known = lock(self.shared).remembered.get(&job.inputs);
        let result = match known {
            Some(answer) => Ok(answer),
            None => {
                let result = self.run(&job.inputs, cancel, &|| Some(generation));
                if let Ok(r) = &result {
                    lock(self.shared).remembered.put(&job.inputs, r);
                }
                self.report_reuse(generation);
                result
            }
        };
        (self.deliver)(SweepEvent::Done { generation, result });
    }

    /// A sweep ahead: reported only once an asked-for sweep adopts it.
    fn ahead(&self, inputs: SweepInputs) {
        let ahead = Ahead {
            inputs,
            cancel: Cancel::new(),
            adopted: Arc::new(AtomicU64::new(0)),
        };
        {
            let mut shared = lock(self.shared);
            if shared.remembered.holds(&ahead.inputs) {
                return;
            }
            shared.ahead = Some(ahead.clone());
        }
        let adopted = || match ahead.adopted.load(Ordering::SeqCst) {
            0 => None,
            g => Some(g),
        };
        let result = self.run(&ahead.inputs, &ahead.cancel, &adopted);
        // Under the lock that adoption takes: adopted before this point, the answer goes to
        // the adopter; after it, the adopter finds it remembered.
        let generation = {
            let mut shared = lock(self.shared);
            shared.ahead = None;
            if let Ok(r) = &result {
                shared.remembered.put(&ahead.inputs, r);
            }
            adopted()
        };
        if let Some(generation) = generation {
            self.report_reuse(generation);
            (self.deliver)(SweepEvent::Done { generation, result });
        }
    }

    /// Runs one sweep of `inputs`, reporting progress under the generation `reported` gives
    /// (none: not reported).
    fn run(
        &self,
        inputs: &SweepInputs,
        cancel: &Cancel,
        reported: &(dyn Fn() -> Option<u64> + Sync),
    ) -> Result<Box<SweepResult>, String> {
        let last = Mutex::new(None::<Instant>);
        let progress = |done: usize, total: usize| {
            let Some(generation) = reported() else {
                return;
            };
            let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
            if done < total && last.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
                return;
            }
            *last = Some(Instant::now());
            let front = self.cache.forming();
            if !front.is_empty() {
                (self.deliver)(SweepEvent::Forming { generation, front });
            }
            (self.deliver)(SweepEvent::Progress {
                generation,
                done,
                total,
            });
        };
        let space = inputs.space();
        let run = || (self.sweep)(&inputs.base, &space, self.cache, &progress, cancel);
        let result = match self.pool {
            Some(pool) => pool.install(run),
            None => run(),
        };
        result.map(Box::new)
    }

    fn report_reuse(&self, generation: u64) {
        let reuse = self.cache.last();
        if reuse.reused > 0 {
            (self.deliver)(SweepEvent::Reused {
                generation,
                reused: reuse.reused,
                solved: reuse.solved,
            });
        }
    }
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

    fn wait_until(what: &str, ok: impl Fn() -> bool) {
        let start = Instant::now();
        while !ok() {
            assert!(start.elapsed() < Duration::from_secs(30), "never: {what}");
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn worker(sweep: SweepFn) -> (SweepWorker, mpsc::Receiver<SweepEvent>) {
        let (tx, rx) = mpsc::channel();
        let worker = SweepWorker::start(sweep, move |e| {
            let _ = tx.send(e);
        });
        (worker, rx)
    }

    fn done(rx: &mpsc::Receiver<SweepEvent>) -> (u64, Result<Box<SweepResult>, String>) {
        loop {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(SweepEvent::Done { generation, result }) => return (generation, result),
                Ok(_) => {}
                Err(e) => panic!("no answer: {e}"),
            }
        }
    }

    fn budget(gib: u64) -> SweepInputs {
        let mut sc = fixture::scenario("gpt3");
        sc.plan.memory_budget_bytes = gib << 30;
        SweepInputs::of(&sc)
    }

    fn job(generation: u64, inputs: &SweepInputs) -> SweepJob {
        SweepJob {
            generation,
            inputs: inputs.clone(),
        }
    }

    /// Asked for again, a finished answer comes back at once from the caller's thread (no
    /// sweep runs), equal to the one the sweep gave.
    #[test]
    fn a_finished_answer_is_remembered_and_answers_at_once() {
        let (mut worker, rx) = worker(fixture::sweep::slow_sweep);
        let a = budget(70);
        assert_eq!(worker.submit(job(1, &a)), None);
        let (g, first) = done(&rx);
        assert_eq!(g, 1);
        assert!(worker.remembers(&a));
        let Some(SweepEvent::Done { generation, result }) = worker.submit(job(2, &a)) else {
            panic!("not answered at once");
        };
        assert_eq!(generation, 2);
        assert_eq!(result, first);
        assert!(rx.try_recv().is_err(), "a remembered answer runs no sweep");
    }

    /// Swept ahead while idle, an input answers at once when asked for, and nothing is
    /// reported before it is asked for.
    #[test]
    fn a_sweep_ahead_answers_the_edit_it_guessed() {
        let (mut worker, rx) = worker(fixture::sweep::slow_sweep);
        let (a, b) = (budget(70), budget(66));
        worker.sweep_ahead(vec![b.clone(), a.clone()]);
        wait_until("both swept ahead", || {
            worker.remembers(&a) && worker.remembers(&b)
        });
        assert!(rx.try_recv().is_err(), "sweeps ahead report nothing");
        let Some(SweepEvent::Done { result: Ok(r), .. }) = worker.submit(job(3, &b)) else {
            panic!("not answered at once");
        };
        assert!(!r.cancelled);
        assert_eq!(*r, fixture::sweep::result(&b.base, b.gpus, b.global_batch));
    }

    /// Asked for while it is being swept ahead, the sweep is adopted in flight: it goes on,
    /// its progress and answer reported under the asked-for generation.
    #[test]
    fn the_sweep_ahead_asked_for_is_adopted_in_flight() {
        let (mut worker, rx) = worker(fixture::sweep::slow_sweep);
        let b = budget(66);
        worker.sweep_ahead(vec![b.clone()]);
        wait_until("sweeping ahead", || {
            worker.sweeping_ahead().as_ref() == Some(&b)
        });
        assert_eq!(worker.submit(job(7, &b)), None);
        let mut progress = false;
        let (generation, result) = loop {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(SweepEvent::Progress { generation, .. }) => {
                    assert_eq!(generation, 7);
                    progress = true;
                }
                Ok(SweepEvent::Done { generation, result }) => break (generation, result),
                Ok(_) => {}
                Err(e) => panic!("no answer: {e}"),
            }
        };
        assert!(progress, "the adopted sweep's progress is shown");
        assert_eq!(generation, 7);
        assert!(result.is_ok_and(|r| !r.cancelled));
    }

    /// An edit that asks for other inputs cancels the sweep ahead at once (its partial
    /// answer is not remembered), and a new list that leaves it out cancels it too.
    #[test]
    fn an_edit_elsewhere_cancels_the_sweep_ahead() {
        let (mut worker, rx) = worker(fixture::sweep::slow_sweep);
        let (a, b, c) = (budget(70), budget(66), budget(62));
        worker.sweep_ahead(vec![b.clone()]);
        wait_until("sweeping ahead", || {
            worker.sweeping_ahead().as_ref() == Some(&b)
        });
        let asked = Instant::now();
        assert_eq!(worker.submit(job(1, &a)), None);
        let (g, result) = done(&rx);
        assert_eq!(g, 1);
        assert!(result.is_ok_and(|r| !r.cancelled));
        assert!(
            !worker.remembers(&b),
            "the cut sweep ahead answered nothing"
        );
        // The slow sweep takes STEPS x 25 ms: had b run to its end first, a would have
        // waited for it too.
        assert!(
            asked.elapsed() < Duration::from_millis(1900),
            "{:?}",
            asked.elapsed()
        );
        worker.sweep_ahead(vec![c.clone()]);
        wait_until("sweeping c ahead", || {
            worker.sweeping_ahead().as_ref() == Some(&c)
        });
        worker.sweep_ahead(vec![b.clone()]);
        wait_until("c given up for b", || {
            worker.sweeping_ahead().as_ref() == Some(&b)
        });
        assert!(!worker.remembers(&c));
    }

    /// The memory is bounded: past [`REMEMBERED`] answers the least recently used goes.
    #[test]
    fn the_memory_forgets_the_least_recently_used() {
        let mut memory = Remembered::default();
        let answer = fixture::sweep::result(&fixture::scenario("gpt3"), 64, 64);
        let inputs: Vec<SweepInputs> = (0..=REMEMBERED as u64).map(|i| budget(30 + i)).collect();
        for i in &inputs[..REMEMBERED] {
            memory.put(i, &answer);
        }
        // The first one used again: the second is now the least recently used.
        assert!(memory.get(&inputs[0]).is_some());
        memory.put(&inputs[REMEMBERED], &answer);
        assert_eq!(memory.answers.len(), REMEMBERED);
        assert!(memory.holds(&inputs[0]));
        assert!(!memory.holds(&inputs[1]));
        let mut cut = answer.clone();
        cut.cancelled = true;
        memory.put(&inputs[1], &cut);
        assert!(
            !memory.holds(&inputs[1]),
            "a cancelled sweep answers nothing"
        );
    }

    /// With the engine's sweep: an answer swept ahead (its cache warmed by the sweep before)
    /// equals a fresh sweep of the same inputs, row for row on the ranked list and front.
    #[test]
    fn an_answer_swept_ahead_equals_a_fresh_sweep() {
        let catalog = crate::scenario::Catalog::builtin();
        let base = catalog
            .scenario("tiny-4x8")
            .unwrap_or_else(|e| panic!("{e}"));
        let a = SweepInputs::of(&base);
        let mut tighter = base.clone();
        tighter.plan.memory_budget_bytes -= 1 << 30;
        let b = SweepInputs::of(&tighter);
        let (mut worker, rx) = worker(crate::tui::sweep::engine_sweep);
        assert_eq!(worker.submit(job(1, &a)), None);
        let _ = done(&rx);
        worker.sweep_ahead(vec![b.clone()]);
        wait_until("swept ahead", || worker.remembers(&b));
        let Some(SweepEvent::Done {
            result: Ok(ahead), ..
        }) = worker.submit(job(2, &b))
        else {
            panic!("not answered at once");
        };
        let options = crate::sweep::SweepOptions {
            top: crate::tui::sweep::TOP,
            exhaustive: false,
        };
        let fresh = crate::sweep::sweep(&b.base, &b.space(), options, &|_, _| {}, &Cancel::never())
            .unwrap_or_else(|e| panic!("{e}"));
        let rows = |r: &SweepResult| -> Vec<String> {
            r.ranked
                .iter()
                .chain(&r.pareto)
                .map(|&i| {
                    let row = &r.rows[i];
                    format!(
                        "{:?} {:?} {} {}",
                        row.config,
                        row.status,
                        row.iteration_time_s.to_bits(),
                        row.peak_memory_bytes
                    )
                })
                .collect()
        };
        assert!(!fresh.ranked.is_empty());
        assert_eq!(rows(&ahead), rows(&fresh));
    }

    /// With the engine's sweep, an asked-for sweep reports the front it has solved so far
    /// under its own generation: every point a feasible row of the answer with the same
    /// figures, and the last front sent the answer's front.
    #[test]
    fn the_engine_sweep_reports_its_front_as_it_forms() {
        let base = crate::scenario::Catalog::builtin()
            .scenario("tiny-4x8")
            .unwrap_or_else(|e| panic!("{e}"));
        let a = SweepInputs::of(&base);
        let (mut worker, rx) = worker(crate::tui::sweep::engine_sweep);
        assert_eq!(worker.submit(job(4, &a)), None);
        let mut fronts = Vec::new();
        let answer = loop {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(SweepEvent::Forming { generation, front }) => {
                    assert_eq!(generation, 4);
                    fronts.push(front);
                }
                Ok(SweepEvent::Done { result, .. }) => {
                    break result.unwrap_or_else(|e| panic!("{e}"));
                }
                Ok(_) => {}
                Err(e) => panic!("no answer: {e}"),
            }
        };
        assert!(!answer.cancelled);
        let last = fronts.last().unwrap_or_else(|| panic!("no front sent"));
        for p in fronts.iter().flatten() {
            let row = answer
                .rows
                .iter()
                .find(|r| r.config == p.config)
                .unwrap_or_else(|| panic!("{:?} is not a row", p.config));
            assert!(row.feasible());
            assert_eq!(row.iteration_time_s.to_bits(), p.iteration_time_s.to_bits());
            assert_eq!(row.peak_memory_bytes, p.peak_memory_bytes);
        }
        let configs = |rows: Vec<&crate::sweep::Row>| -> Vec<crate::sweep::Config> {
            rows.into_iter().map(|r| r.config).collect()
        };
        assert_eq!(
            configs(last.iter().collect()),
            configs(answer.pareto.iter().map(|&i| &answer.rows[i]).collect())
        );
    }
}
