//! Sweep: the best way to run a model on N GPUs (docs/cli.md).
//!
//! [`sweep`] enumerates every configuration of a space (t, cp, p, d, micro-batch size, chunks,
//! sequence parallelism, ZeRO stage, precision, schedule, strategy) for one or several GPU
//! counts and a global batch, evaluates them with the same engine as `plan`, and returns the
//! ranked list (top K by iteration time) and the Pareto front (iteration time, peak memory
//! and, with several GPU counts, GPU count).
//!
//! It is exact: a configuration is left unsolved only when proven bounds show it can enter
//! neither the top K nor the front ([`bounds`]), so the answer equals that of solving every
//! configuration (`exhaustive`). Work is shared: one anatomy per (N, t, cp, p, d, b, sp,
//! ZeRO stage, precision), one generated schedule per distinct generator input (shared by
//! every solve that asks for it), and the fixed strategies' exact memory peak, found without a
//! simulation, rules out what cannot fit. Configurations are evaluated in parallel (rayon, one
//! worker per thread taking the next one in order), and each `solve` stays single-threaded.
//!
//! Files: `enumerate.rs` (the space and the reasons configurations are rejected),
//! `bounds.rs` (proven lower bounds), `front.rs` (ranking and the Pareto front),
//! `evaluate.rs` (scenarios, solving and the pruning loop), `incremental.rs` (the same sweep
//! reusing what earlier sweeps computed, for the UI's sweep after every edit).

pub mod bounds;
mod cut_solve;
pub mod enumerate;
mod evaluate;
pub mod front;
mod incremental;
mod workers;

use std::collections::BTreeMap;

use crate::scenario::{InvalidField, ModelSpec, Precision, ScheduleKind, Strategy, Zero};

pub use enumerate::enumerate;
pub use evaluate::{scenario_for, starting_scenario, sweep};
pub use incremental::{Reuse as SweepReuse, SweepCache, sweep_cached};

/// The schedules a sweep tries when none are asked for.
pub const DEFAULT_SCHEDULES: [ScheduleKind; 5] = [
    ScheduleKind::OneFOneB,
    ScheduleKind::Interleaved,
    ScheduleKind::ZbH1,
    ScheduleKind::ZbV,
    ScheduleKind::VHalf,
];

/// The schedules a sweep tries on `model` when none are asked for: [`DEFAULT_SCHEDULES`],
/// and for a mixture-of-experts model also `dualpipe` (DeepSeek-V3's own schedule, whose
/// overlapped forward-backward pairs hide the all-to-alls); it runs where p is even and
/// m an even count of at least 2p ([`enumerate::DUALPIPE_SHAPE`]).
pub fn default_schedules(model: &ModelSpec) -> Vec<ScheduleKind> {
    let mut out = DEFAULT_SCHEDULES.to_vec();
    if model.moe.is_some() {
        out.push(ScheduleKind::DualPipe);
    }
    out
}

/// The strategies a sweep tries when none are asked for.
pub const DEFAULT_STRATEGIES: [Strategy; 4] = [
    Strategy::None,
    Strategy::Full,
    Strategy::Selective,
    Strategy::AdaPipe,
];

/// The micro-batch sizes a sweep tries when none are asked for.
pub const DEFAULT_MICRO_BATCH_SIZES: [u64; 4] = [1, 2, 4, 8];

/// The context-parallel sizes a sweep tries when none are asked for: 1 and every divisor of
/// the GPU count up to this that the sequence allows.
pub const DEFAULT_MAX_CP: u32 = 8;

/// The ZeRO stages a sweep tries when none are asked for (3 only when asked).
pub const DEFAULT_ZERO: [Zero; 2] = [Zero::Off, Zero::Optimizer];

/// The chunk counts tried for the schedules that take `--chunks` when none are asked for.
pub const DEFAULT_CHUNKS: [u32; 1] = [2];

/// What to enumerate. Empty lists mean the defaults of docs/cli.md.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSpace {
    /// GPU counts N (at least one).
    pub gpus: Vec<u32>,
    /// Global batch in sequences (`m x b x d`).
    pub global_batch: u64,
    /// Tensor-parallel sizes (default: every t up to the GPU's `node_gpus`).
    pub tp: Vec<u32>,
    /// Pipeline sizes (default: 1 to the model's layers).
    pub pp: Vec<u32>,
    /// Micro-batch sizes (default 1, 2, 4, 8).
    pub mbs: Vec<u64>,
    /// Chunks for the schedules that take them (default 2).
    pub chunks: Vec<u32>,
    /// Schedules (default: 1f1b, interleaved, zb-h1, zb-v, v-half).
    pub schedules: Vec<ScheduleKind>,
    /// Strategies (default: none, full, selective, adapipe).
    pub strategies: Vec<Strategy>,
    /// Context-parallel sizes (default 1 and the divisors of N up to 8 that
    /// the sequence allows).
    pub cp: Vec<u32>,
    /// Expert-parallel sizes (default: for a mixture of experts every divisor of
    /// `t x cp x d / etp` that divides the experts; 1 for a dense model).
    pub ep: Vec<u32>,
    /// Expert tensor-parallel sizes (default 1): each must divide the expert's ffn, and
    /// `ep x etp` the stage's `t x cp x d`.
    pub etp: Vec<u32>,
    /// ZeRO stages (default 0 and 1; 3 only when listed).
    pub zero: Vec<Zero>,
    /// Precisions (default: the base scenario's).
    pub precision: Vec<Precision>,
}

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepOptions {
    /// Length of the ranked list (at least 1 is kept internally for the best).
    pub top: usize,
    /// Solve every configuration in full (no pruning).
    pub exhaustive: bool,
}

impl Default for SweepOptions {
    fn default() -> Self {
        Self {
            top: 10,
            exhaustive: false,
        }
    }
}

/// One point of the space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Config {
    /// GPUs of the job, `t x cp x p x d`.
    pub gpus: u32,
    /// Tensor parallel.
    pub t: u32,
    /// Context parallel.
    pub cp: u32,
    /// Expert parallel (1 for a dense model).
    pub ep: u32,
    /// Expert tensor parallel (1 for a dense model).
    pub etp: u32,
    /// Pipeline stages.
    pub p: u32,
    /// Data parallel.
    pub d: u32,
    /// Micro-batch size.
    pub b: u64,
    /// Micro-batches per iteration.
    pub m: u32,
    /// Chunks per device the schedule runs with.
    pub chunks: u32,
    /// Sequence parallelism.
    pub sp: bool,
    /// Distributed optimizer (ZeRO 1 or 3).
    pub distributed_optimizer: bool,
    /// ZeRO stage.
    pub zero: Zero,
    /// Number format of the layers' GEMMs.
    pub precision: Precision,
    /// Pipeline schedule.
    pub schedule: ScheduleKind,
    /// Memory strategy.
    pub strategy: Strategy,
}

/// What became of one configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Solved in full and every stage fits.
    Feasible,
    /// Solved in full and some stage does not fit (the outcome's reason).
    Infeasible(String),
    /// Ruled out without a solve: its memory lower bound exceeds the budget.
    DoesNotFit(String),
    /// The engine refused it (e.g. a schedule that needs m a multiple of p).
    Invalid(String),
    /// Not solved: proven bounds show it enters neither the ranked list nor the front.
    Pruned,
}

impl Status {
    /// Short name for tables and CSV.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Feasible => "feasible",
            Status::Infeasible(_) => "infeasible",
            Status::DoesNotFit(_) => "does-not-fit",
            Status::Invalid(_) => "invalid",
            Status::Pruned => "pruned",
        }
    }

    /// The reason, for the statuses that have one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Infeasible(r) | Status::DoesNotFit(r) | Status::Invalid(r) => Some(r),
            Status::Feasible | Status::Pruned => None,
        }
    }
}

/// One configuration with its bounds and, when solved, its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The configuration.
    pub config: Config,
    /// Proven lower bound of its iteration time, seconds.
    pub time_bound_s: f64,
    /// Proven lower bound of its highest device peak, bytes.
    pub memory_bound_bytes: u64,
    /// What became of it.
    pub status: Status,
    /// Whether `solve` ran on it.
    pub solved: bool,
    /// Simulated iteration time (solved rows; NaN otherwise).
    pub iteration_time_s: f64,
    /// `global_batch x seq_len / iteration_time_s / gpus` (solved rows; NaN otherwise).
    pub tokens_per_s_per_gpu: f64,
    /// Model FLOPs utilisation (solved rows; NaN otherwise).
    pub mfu: f64,
    /// Highest device peak of the simulation (solved rows; 0 otherwise).
    pub peak_memory_bytes: u64,
    /// Wall time of its solve, seconds (varies between runs): 0 when no solve ran; for a
    /// [`Status::Pruned`] row above 0, the time of a solve stopped part-way once a proven
    /// bound it learnt kept it out of the answer.
    pub solve_time_s: f64,
}

impl Row {
    /// Whether it was solved and fits.
    pub fn feasible(&self) -> bool {
        self.status == Status::Feasible
    }
}

/// The answer of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepResult {
    /// Every enumerated configuration, in enumeration order.
    pub rows: Vec<Row>,
    /// Rejected combinations: reason -> count (they are not configurations).
    pub rejected: BTreeMap<String, u64>,
    /// Indices into `rows` of the top K feasible, fastest first.
    pub ranked: Vec<usize>,
    /// Indices into `rows` of the Pareto front, fastest first.
    pub pareto: Vec<usize>,
    /// Whether the sweep was cancelled before the end (then the answer is incomplete).
    pub cancelled: bool,
}

impl SweepResult {
    /// Configurations enumerated.
    pub fn configs(&self) -> usize {
        self.rows.len()
    }

    /// Configurations solved and feasible.
    pub fn feasible(&self) -> usize {
        self.rows.iter().filter(|r| r.feasible()).count()
    }

    /// Configurations that got a full `solve`.
    pub fn solved(&self) -> usize {
        self.rows.iter().filter(|r| r.solved).count()
    }

    /// Configurations ruled out by proven bounds without a solve ([`Status::Pruned`]).
    pub fn pruned(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.status == Status::Pruned)
            .count()
    }

    /// Counts per status name (feasible, infeasible, does-not-fit, invalid, pruned).
    pub fn status_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut out = BTreeMap::new();
        for r in &self.rows {
            *out.entry(r.status.name()).or_insert(0) += 1;
        }
        out
    }

    /// The fastest feasible configuration.
    pub fn best(&self) -> Option<&Row> {
        self.ranked.first().map(|&i| &self.rows[i])
    }
}

/// Why a sweep could not run (invalid input).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// A flag or field holds a value that is not allowed.
    #[error(transparent)]
    Invalid(#[from] InvalidField),
}
