//! The sweep view's state: which sweep is running or was last answered, its progress and
//! result, and the selected configuration. The sweep asks "which layout is best on these
//! GPUs": the current model, GPU, GPU count (`t x cp x p x d`), global batch (`m x b x d`),
//! sequence length, budget and every other setting the sweep does not enumerate. It runs on
//! its own thread ([`super::sweep_worker`]); an edit that changes these inputs cancels it and
//! sweeps the new inputs, while the previous answer stays on screen, dimmed and labelled with
//! what changed, until the new one arrives.

use crate::Scenario;
use crate::cancel::Cancel;
use crate::sweep::{SweepCache, SweepOptions, SweepResult, SweepSpace};

/// Length of the ranked list the view shows (the sweep stays exact for it).
pub const TOP: usize = 40;

/// Runs one sweep: `(base, space, cache, progress(done, total), cancel)`, where `cache`
/// holds what earlier sweeps of the same worker computed. The engine's ([`engine_sweep`]) or
/// a fixture in tests.
pub type SweepFn = fn(
    &Scenario,
    &SweepSpace,
    &SweepCache,
    &(dyn Fn(usize, usize) + Sync),
    &Cancel,
) -> Result<SweepResult, String>;

/// The engine's sweep with the view's ranked-list length, pruned by proven bounds, reusing
/// the schedules and the solved configurations of earlier sweeps where they are provably
/// the same ([`crate::sweep::sweep_cached`]: the answer is the plain sweep's).
pub fn engine_sweep(
    base: &Scenario,
    space: &SweepSpace,
    cache: &SweepCache,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &Cancel,
) -> Result<SweepResult, String> {
    let options = SweepOptions {
        top: TOP,
        exhaustive: false,
    };
    crate::sweep::sweep_cached(base, space, options, cache, progress, cancel)
        .map_err(|e| e.to_string())
}

/// What a sweep answers for: the scenario with the enumerated settings reset, the GPU count
/// and the global batch. Two equal inputs give the same answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepInputs {
    /// The scenario with its layout, batch split, schedule and strategy reset.
    pub base: Scenario,
    /// GPUs of the job, `t x cp x p x d`.
    pub gpus: u32,
    /// Sequences per iteration, `m x b x d`.
    pub global_batch: u64,
}

impl SweepInputs {
    /// The inputs of a sweep for scenario `sc`.
    pub fn of(sc: &Scenario) -> SweepInputs {
        let par = &sc.parallel;
        let gpus = par
            .tp
            .saturating_mul(par.cp)
            .saturating_mul(par.pp)
            .saturating_mul(par.dp);
        let global_batch = sc.batch.global_batch(par.dp);
        let mut base = crate::sweep::starting_scenario(sc);
        // The overlaps the scenario asks for, which each configuration takes where it can.
        base.plan.tp_comm_overlap = sc.plan.tp_comm_overlap;
        base.plan.overlap_param_gather = sc.plan.overlap_param_gather;
        base.plan.moe_a2a_overlap = sc.plan.moe_a2a_overlap;
        // What no sweep reads: the reserve the budget came from (the budget itself stays), so
        // that an edit of the budget and its undo give equal inputs.
        base.plan.reserve_bytes = None;
        SweepInputs {
            base,
            gpus,
            global_batch,
        }
    }

    /// The space the view sweeps: this GPU count and batch, every default list.
    pub fn space(&self) -> SweepSpace {
        SweepSpace {
            gpus: vec![self.gpus],
            global_batch: self.global_batch,
            ..SweepSpace::default()
        }
    }
}

/// A sweep for the worker, tagged with a generation (results of older ones are dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepJob {
    /// Increases with every sweep started.
    pub generation: u64,
    /// What to sweep.
    pub inputs: SweepInputs,
}

/// What the sweep worker reports.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepEvent {
    /// Candidates examined so far out of the total.
    Progress {
        /// The sweep's generation.
        generation: u64,
        /// Candidates examined.
        done: usize,
        /// Candidates in all.
        total: usize,
    },
    /// The front of the rows the running sweep has solved so far
    /// ([`SweepCache::forming`]): provisional, every point a row of the answer to come with
    /// these figures, but a row solved later may push it off the front. Sent with the
    /// progress reports (at most one each 50 ms).
    Forming {
        /// The sweep's generation.
        generation: u64,
        /// The front so far, in the sweep's total order.
        front: Vec<crate::sweep::Row>,
    },
    /// How many of the sweep's solved configurations came from earlier sweeps (sent just
    /// before [`SweepEvent::Done`] by sweeps that keep a cache).
    Reused {
        /// The sweep's generation.
        generation: u64,
        /// Configurations whose figures an earlier sweep had solved.
        reused: usize,
        /// Configurations solved in full.
        solved: usize,
    },
    /// The sweep ended (or was cancelled: then the result says so).
    Done {
        /// The sweep's generation.
        generation: u64,
        /// The answer, or why it could not run.
        result: Result<Box<SweepResult>, String>,
    },
}

/// The view's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepState {
    /// Whether the view is shown.
    pub open: bool,
    /// Generation of the latest sweep started.
    pub generation: u64,
    /// Whether that sweep is still running.
    pub running: bool,
    /// Inputs of the latest sweep started.
    pub inputs: Option<SweepInputs>,
    /// Candidates examined and their total, of the running sweep.
    pub progress: (usize, usize),
    /// The latest sweep's answer.
    pub result: Option<Result<Box<SweepResult>, String>>,
    /// Index into the ranked list's lines ([`SweepState::lines`]).
    pub selected: usize,
    /// Sweeps cancelled by edits since the app started.
    pub cancelled: u32,
    /// Of the latest sweep: configurations reused from earlier sweeps and solved in full,
    /// when its sweep keeps a cache.
    pub reused: Option<(usize, usize)>,
    /// The front of what the running sweep has solved so far ([`SweepEvent::Forming`]),
    /// shown as provisional over the dimmed previous answer; empty once it answers.
    pub forming: Vec<crate::sweep::Row>,
    /// The last complete answer, for the inputs before the edits that started the running
    /// sweep: shown dimmed until the new answer arrives.
    pub previous: Option<Previous>,
    /// The inputs before the latest edit (what undoing it asks for again).
    pub undo: Option<SweepInputs>,
    /// The inputs last handed to the worker to sweep ahead ([`crate::tui::Effect::SweepAhead`]).
    pub ahead: Vec<SweepInputs>,
}

/// A complete answer kept on screen while the sweep of newer inputs runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Previous {
    /// The inputs it answers.
    pub inputs: SweepInputs,
    /// The answer.
    pub result: Box<SweepResult>,
}

/// The settings a sweep's answer depends on that the UI edits, each with its value as the
/// view names it (the base scenario's other fields are summed up as "other settings").
fn settings(i: &SweepInputs) -> Vec<(&'static str, String)> {
    let b = &i.base;
    let on = |x: bool| if x { "on" } else { "off" }.to_string();
    vec![
        ("model", b.model.name.clone()),
        ("gpu", b.gpu.name.clone()),
        ("GPUs", i.gpus.to_string()),
        ("batch", i.global_batch.to_string()),
        ("seq", b.batch.seq_len.to_string()),
        (
            "budget",
            format!(
                "{:.1} GiB",
                b.plan.memory_budget_bytes as f64 / crate::scenario::GIB
            ),
        ),
        ("precision", b.parallel.precision.name().to_string()),
        ("flash", on(b.plan.flash_attention)),
        ("objective", format!("{:?}", b.plan.objective)),
        ("partition", format!("{:?}", b.plan.partition)),
        ("grad overlap", on(b.plan.overlap_grad_reduce)),
        ("gather overlap", on(b.plan.overlap_param_gather)),
        ("tp overlap", on(b.plan.tp_comm_overlap)),
        ("a2a overlap", on(b.plan.moe_a2a_overlap)),
        ("imbalance", format!("{}", b.plan.routing_imbalance)),
        ("recompute overlap", on(b.plan.overlap_recompute)),
    ]
}

/// What changed from `old` to `new`, e.g. `budget 70.0 GiB → 74.0 GiB` (every named setting
/// that differs; "other settings" when none of them does).
pub fn changes(old: &SweepInputs, new: &SweepInputs) -> String {
    let parts: Vec<String> = settings(old)
        .into_iter()
        .zip(settings(new))
        .filter(|(a, b)| a.1 != b.1)
        .map(|((name, a), (_, b))| format!("{name} {a} → {b}"))
        .collect();
    if parts.is_empty() {
        "other settings".into()
    } else {
        parts.join(", ")
    }
}

/// [`changes`] naming only the new values, e.g. `budget → 74.0 GiB` (for narrow views).
pub fn changes_to(old: &SweepInputs, new: &SweepInputs) -> String {
    let parts: Vec<String> = settings(old)
        .into_iter()
        .zip(settings(new))
        .filter(|(a, b)| a.1 != b.1)
        .map(|(_, (name, b))| format!("{name} → {b}"))
        .collect();
    if parts.is_empty() {
        "other settings".into()
    } else {
        parts.join(", ")
    }
}

impl SweepState {
    /// The finished, complete answer, if any.
    pub fn answer(&self) -> Option<&SweepResult> {
        match &self.result {
            Some(Ok(r)) if !r.cancelled => Some(r),
            _ => None,
        }
    }

    /// The answer on screen: the finished one, else the previous one (dimmed) while the
    /// sweep of the new inputs runs.
    pub fn shown(&self) -> Option<&SweepResult> {
        self.answer()
            .or_else(|| self.previous.as_ref().map(|p| &*p.result))
    }

    /// The ranked list's lines of the answer on screen: configurations that differ only in
    /// their strategy and tie on time and memory share one (indices into the rows, in the
    /// total order).
    pub fn lines(&self) -> Vec<Vec<usize>> {
        self.shown()
            .map(|r| crate::sweep::front::tie_groups(&r.rows, &r.ranked))
            .unwrap_or_default()
    }

    /// The selected line's first configuration (the first of its strategies) in the answer
    /// on screen, if any.
    pub fn shown_row(&self) -> Option<&crate::sweep::Row> {
        let r = self.shown()?;
        let lines = self.lines();
        lines.get(self.selected).and_then(|l| r.rows.get(l[0]))
    }

    /// The selected configuration of the finished answer (none while only the previous
    /// answer is shown: it answers other settings).
    pub fn selected_row(&self) -> Option<&crate::sweep::Row> {
        self.answer()?;
        self.shown_row()
    }
}
