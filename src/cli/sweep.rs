//! `pipescope sweep`: every configuration of a model on N GPUs, ranked, with the Pareto front
//! of iteration time against peak memory (docs/cli.md). A table by default, one JSON
//! object with `--json`, one CSV row per configuration with `--csv`.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use clap::Args;

use super::scenario_args::{ScenarioArgs, whole};
use super::sweep_output as out;
use pipescope::{
    Objective, Precision, Scenario, ScheduleKind, Strategy, SweepOptions, SweepResult, SweepSpace,
    Zero, solve, sweep, sweep_scenario,
};

/// Arguments of `pipescope sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario preset name or TOML file the sweep starts from (default: gpt3-175b-16k).
    #[arg(long, value_name = "NAME|FILE")]
    pub preset: Option<String>,
    /// Model preset name (see `pipescope presets`).
    #[arg(long)]
    pub model: Option<String>,
    /// GPU preset name (see `pipescope presets`).
    #[arg(long)]
    pub gpu: Option<String>,
    /// GPU counts N of the job, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = whole::<u32>, required = true)]
    pub gpus: Vec<u32>,
    /// Global batch in sequences (m x b x d).
    #[arg(long = "global-batch", value_name = "B", value_parser = whole::<u64>, required = true)]
    pub global_batch: u64,
    /// Sequence length s.
    #[arg(short = 's', long = "seq", value_name = "S", value_parser = whole::<u64>)]
    pub seq_len: Option<u64>,
    /// Tensor-parallel sizes (default: every t up to the GPU's node size that divides the heads).
    #[arg(long, value_delimiter = ',', value_name = "T,...", value_parser = whole::<u32>)]
    pub tp: Vec<u32>,
    /// Pipeline sizes (default: 1 to the layers).
    #[arg(long, value_delimiter = ',', value_name = "P,...", value_parser = whole::<u32>)]
    pub pp: Vec<u32>,
    /// Micro-batch sizes (default: 1,2,4,8).
    #[arg(long, value_delimiter = ',', value_name = "B,...", value_parser = whole::<u64>)]
    pub mbs: Vec<u64>,
    /// Chunks for the schedules that take them (default: 2).
    #[arg(long, value_delimiter = ',', value_name = "V,...", value_parser = whole::<u32>)]
    pub chunks: Vec<u32>,
    /// Schedules (default: 1f1b,interleaved,zb-h1,zb-v,v-half).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub schedules: Vec<ScheduleKind>,
    /// Strategies (default: none,full,selective,adapipe).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub strategies: Vec<Strategy>,
    /// Memory budget per device in GiB (default: the GPU's memory).
    #[arg(long = "budget-gib", value_name = "X", conflicts_with = "reserve_gib")]
    pub budget_gib: Option<f64>,
    /// GiB of each GPU's memory kept free (the budget is the GPU's memory minus this).
    #[arg(long = "reserve-gib", value_name = "X")]
    pub reserve_gib: Option<f64>,
    /// Length of the ranked list.
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = whole::<usize>)]
    pub top: usize,
    /// Solve every configuration in full (the answer is the same; it only takes longer).
    #[arg(long)]
    pub exhaustive: bool,
    /// Print one JSON object instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print one CSV row per configuration instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// FlashAttention on.
    #[arg(long, overrides_with = "no_flash")]
    pub flash: bool,
    /// FlashAttention off (materialised softmax).
    #[arg(long = "no-flash", overrides_with = "flash")]
    pub no_flash: bool,
    /// Partition objective: estimate or adapipe.
    #[arg(long, value_name = "estimate|adapipe")]
    pub objective: Option<Objective>,
    /// Let recomputation overlap communication: the wait for the incoming gradient and the
    /// backward's tensor-parallel collectives (Lynx).
    #[arg(long = "overlap-recompute")]
    pub overlap_recompute: bool,
    /// Measured profile (TOML) replacing the cost model's estimates.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Number formats of the layers' GEMMs (default: the preset's, bf16 unless it says).
    #[arg(long, value_delimiter = ',', value_name = "bf16|fp8,...")]
    pub precision: Vec<Precision>,
    /// Context-parallel sizes (default: 1 and the divisors of N up to 8 whose 2 cp divides
    /// the sequence).
    #[arg(long, value_delimiter = ',', value_name = "CP,...", value_parser = whole::<u32>)]
    pub cp: Vec<u32>,
    /// Expert-parallel sizes (default: for a mixture of experts every divisor of
    /// t x cp x d / etp that divides the experts; 1 for a dense model).
    #[arg(long, value_delimiter = ',', value_name = "EP,...", value_parser = whole::<u32>)]
    pub ep: Vec<u32>,
    /// Expert tensor-parallel sizes (default: 1; each must divide the expert's ffn).
    #[arg(long, value_delimiter = ',', value_name = "ETP,...", value_parser = whole::<u32>)]
    pub etp: Vec<u32>,
    /// ZeRO stages (default: 0,1; 3 only when listed).
    #[arg(long, value_delimiter = ',', value_name = "0|1|3,...")]
    pub zero: Vec<Zero>,
    /// Overlap the data-parallel gradient reduction with the backward in every configuration.
    #[arg(long = "overlap-grad-reduce")]
    pub overlap_grad_reduce: bool,
    /// Overlap the distributed optimizer's parameter all-gather with the next forward where a
    /// configuration shards (zero 1 or 3; needs --overlap-grad-reduce).
    #[arg(long = "overlap-param-gather")]
    pub overlap_param_gather: bool,
    /// Pipeline the tensor-parallel collectives with their GEMMs where a configuration runs
    /// sequence parallelism inside a node.
    #[arg(long = "tp-comm-overlap")]
    pub tp_comm_overlap: bool,
}

impl SweepArgs {
    /// The base scenario: the preset with the flags that are not enumerated; the layout is
    /// reset to one GPU (each configuration sets its own).
    pub fn base(&self) -> Result<Scenario, String> {
        let args = ScenarioArgs {
            preset: self.preset.clone(),
            model: self.model.clone(),
            gpu: self.gpu.clone(),
            pp: Some(1),
            tp: Some(1),
            dp: Some(1),
            no_sp: true,
            micro_batches: Some(1),
            micro_batch_size: Some(1),
            seq_len: self.seq_len,
            budget_gib: self.budget_gib,
            flash: self.flash,
            no_flash: self.no_flash,
            objective: self.objective,
            overlap_recompute: self.overlap_recompute,
            profile: self.profile.clone(),
            precision: self.precision.first().copied(),
            overlap_grad_reduce: self.overlap_grad_reduce,
            ..ScenarioArgs::default()
        };
        if self.overlap_param_gather && !self.overlap_grad_reduce {
            return Err(
                "invalid --overlap-param-gather: it needs --overlap-grad-reduce as well \
                 (Megatron: --overlap-param-gather needs --overlap-grad-reduce)"
                    .to_string(),
            );
        }
        let (mut scenario, _) = args.to_scenario()?;
        // Applied to each configuration that allows them (`sweep::scenario_for`).
        scenario.plan.overlap_param_gather = self.overlap_param_gather;
        scenario.plan.tp_comm_overlap = self.tp_comm_overlap;
        if let Some(reserve) = self.reserve_gib {
            let memory = scenario.gpu.memory_gib;
            if !(reserve.is_finite() && reserve >= 0.0 && reserve < memory) {
                return Err(format!(
                    "invalid --reserve-gib = {reserve}: a number of GiB from 0 to below the \
                     GPU's memory ({memory} GiB of {})",
                    scenario.gpu.name
                ));
            }
            scenario.plan.memory_budget_bytes =
                ((memory - reserve) * pipescope::GIB).round() as u64;
        }
        Ok(scenario)
    }

    /// The space the flags describe.
    pub fn space(&self) -> SweepSpace {
        SweepSpace {
            gpus: self.gpus.clone(),
            global_batch: self.global_batch,
            tp: self.tp.clone(),
            pp: self.pp.clone(),
            mbs: self.mbs.clone(),
            chunks: self.chunks.clone(),
            schedules: self.schedules.clone(),
            strategies: self.strategies.clone(),
            cp: self.cp.clone(),
            ep: self.ep.clone(),
            etp: self.etp.clone(),
            zero: self.zero.clone(),
            precision: self.precision.clone(),
        }
    }
}

/// Progress on stderr, only when it is a terminal.
fn progress_line(done: usize, total: usize) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\rsweep: {done}/{total} candidates examined");
    if done >= total {
        let _ = writeln!(err);
    }
    let _ = err.flush();
}

fn quiet(_: usize, _: usize) {}

/// Runs the sweep the flags describe (no output).
pub fn run_sweep(args: &SweepArgs) -> Result<(Scenario, SweepResult), String> {
    let base = args.base()?;
    let options = SweepOptions {
        top: args.top,
        exhaustive: args.exhaustive,
    };
    let cancel = pipescope::Cancel::never();
    let progress: &(dyn Fn(usize, usize) + Sync) = if std::io::stderr().is_terminal() {
        &progress_line
    } else {
        &quiet
    };
    let result =
        sweep(&base, &args.space(), options, progress, &cancel).map_err(|e| e.to_string())?;
    Ok((base, result))
}

/// Runs the subcommand.
pub fn run(args: &SweepArgs) -> Result<(), String> {
    let start = Instant::now();
    let (base, result) = run_sweep(args)?;
    let elapsed = start.elapsed().as_secs_f64();
    if args.csv {
        return super::output::emit(&out::csv(&result));
    }
    let best = match result.best() {
        Some(row) => Some(
            solve(&sweep_scenario(&base, &row.config))
                .map_err(|e| format!("solving the best configuration again: {e}"))?,
        ),
        None => None,
    };
    if args.json {
        let value = out::json(&result, best.as_ref())?;
        let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        return super::output::emit_line(&text);
    }
    super::output::emit(&out::table(&base, args, &result, best.as_ref(), elapsed))
}
