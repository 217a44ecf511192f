//! pipescope: plan and simulate pipeline-parallel LLM training.
//!
//! Data flows one way (see docs/architecture.md):
//!
//! ```text
//! Scenario ──► Anatomy ──► Schedule ──► Plan ──► Simulation ──► Views (TUI, CLI/JSON)
//! ```
//!
//! The engine's entry point is [`solve`] (and [`solve_with`], the same solve with
//! [`SolveOptions`]): pure, deterministic, no I/O and no threads. An infeasible scenario is an
//! `Ok` [`Outcome`] with `feasible == false` and a reason per stage; `Err` is reserved for
//! invalid input. The [`Outcome`] carries what views and exporters draw: per stage the plan's
//! figures and its time breakdown, the schedule it simulated, the simulation and the unit
//! tables.
//!
//! Beside it: a schedule on its own ([`generate`], [`simulate`], or [`AbstractRun`] for one
//! with equal op costs), the exports ([`perfetto_trace`], [`svg_figure`], [`megatron_args`],
//! [`torchtitan_csv`], written with [`write_atomic`]), and the [`sweep`] over parallel
//! layouts. The modules are private: what a library user needs is listed below, each item at
//! this one path. The terminal UI is the [`tui`] module (default feature `tui`).

mod anatomy;
mod cancel;
mod export;
mod files;
mod outcome;
mod plan;
#[cfg(test)]
mod reference;
mod scenario;
mod schedule;
mod sim;
mod solve;
mod sweep;
#[cfg(feature = "tui")]
pub mod tui;

// The scenario: what is trained, where, how it is split; presets and overrides.
pub use scenario::presets::{MAX_DEPTH, MAX_FILE_BYTES, read_text_file, user_config_dir};
pub use scenario::ranges;
pub use scenario::{
    AttentionBackend, Batch, Catalog, Codec, CodecSpec, DEEPEP_DEFAULT_SMS, DEFAULT_SCENARIO,
    EfficiencyCurve, GIB, GpuSpec, InvalidField, LayoutError, LayoutLayer, LayoutStage,
    MeasuredProfile, ModelSpec, ModelStyle, Objective, P2p, Parallel, Partition, PipelineLayout,
    PlanSettings, Precision, PresetError, PresetInfo, PresetKind, Scenario, ScenarioOverrides,
    ScheduleKind, Strategy, UnitMeasurement, Zero, default_scenario, limits, micro_batches_for,
    model_description, to_toml,
};
pub use scenario::{DataParallelUse, data_parallel_refusal, grad_overlap_refusal};

// The model as blocks of computation units, with their bytes and times.
pub use anatomy::{Anatomy, Block, BlockKind, CommTimes, Unit, UnitCodec};

// Solving: the outcome and what it is made of.
pub use cancel::{Cancel, Cancelled};
pub use outcome::{BlockDecisions, Outcome, StageOutcome, UnitCount, UnitTable};
pub use plan::Decision;
pub use plan::split::searches_own_split;
pub use sim::job::{DeviceTail, JobTimes, TimeBreakdown};
pub use solve::{ScheduleMemo, SolveError, SolveOptions, solve, solve_with};

// A schedule on its own: generation and simulation.
pub use schedule::{
    InFlight, MAX_CELLS, MAX_STAGES, MAX_V_GREEDY_WORK, MAX_V_ZB_WORK, Op, OpKind, Placement,
    Schedule, ScheduleError, ScheduleInput, check_size, generate,
};
pub use sim::estimate::{adapipe_recurrence, classic_estimate};
pub use sim::{
    AbstractOutcome, AbstractRun, AbstractRunError, ChunkCosts, DeviceMetrics, Lane, MemoryCurve,
    SimCosts, SimError, Simulation, Span, SpanKind, Timeline, simulate, simulate_figures,
};

// Exports and writing them.
pub use export::megatron::export as megatron_args;
pub use export::perfetto::export as perfetto_trace;
pub use export::svg::{
    Extras as SvgExtras, Palette, export as svg_figure, export_with as svg_figure_with,
};
pub use export::torchtitan::{Unsupported as TorchtitanUnsupported, export as torchtitan_csv};
pub use export::{ChainOp, Run, Units, flow_chains, kind_name};
pub use files::{
    Existing, is_stdout_alias, remove_stale_temp_files, write_atomic, write_atomic_with,
};

// The sweep over parallel layouts.
pub use sweep::front::{same_time as sweep_same_time, tie_groups as sweep_tie_groups};
pub use sweep::{
    Config as SweepConfig, DEFAULT_SCHEDULES as SWEEP_DEFAULT_SCHEDULES,
    DEFAULT_STRATEGIES as SWEEP_DEFAULT_STRATEGIES, Row as SweepRow, Status as SweepStatus,
    SweepError, SweepOptions, SweepResult, SweepSpace, scenario_for as sweep_scenario,
    starting_scenario as sweep_starting_scenario, sweep,
};
pub use sweep::{SweepCache, SweepReuse, sweep_cached};
