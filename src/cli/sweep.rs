//! `pipescope sweep`: every configuration of a model on N GPUs, ranked, with the Pareto front
//! of iteration time against peak memory (docs/cli.md). A table by default, one JSON
//! object with `--json`, one CSV row per configuration with `--csv`.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use clap::Args;

use super::scenario_args::{
    SettingFlags, SourceFlags, degree, finish_scenario, setting_overrides, starting_scenario,
    whole_up_to,
};
use super::sweep_output as out;
use super::unused_flags;
use pipescope::{
    Precision, SWEEP_DEFAULT_SCHEDULES, Scenario, ScheduleKind, Strategy, SweepOptions,
    SweepResult, SweepSpace, Zero, limits, solve, sweep, sweep_scenario, sweep_starting_scenario,
};

/// Arguments of `pipescope sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Preset (the starting scenario), model, GPU and profile.
    #[command(flatten)]
    pub source: SourceFlags,
    /// Every setting the sweep does not enumerate (kept for every configuration).
    #[command(flatten)]
    pub settings: SettingFlags,
    /// The scenario flags the sweep enumerates or derives, refused with what to use instead.
    #[command(flatten)]
    pub enumerated: EnumeratedFlags,
    /// GPU counts N of the job, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = whole_up_to::<u32>(gpus_allowed()), required = true)]
    pub gpus: Vec<u32>,
    /// Global batch in sequences (m x b x d).
    #[arg(long = "global-batch", value_name = "B", value_parser = whole_up_to::<u64>(global_batch_allowed()), required = true)]
    pub global_batch: u64,
    /// Tensor-parallel sizes (default: every t up to the GPU's node size that divides the heads).
    #[arg(short = 't', long, value_delimiter = ',', value_name = "T,...", value_parser = degree)]
    pub tp: Vec<u32>,
    /// Pipeline sizes (default: 1 to the layers).
    #[arg(short = 'p', long, visible_alias = "stages", value_delimiter = ',', value_name = "P,...", value_parser = degree)]
    pub pp: Vec<u32>,
    /// Micro-batch sizes (default: 1,2,4,8).
    #[arg(short = 'b', long, visible_alias = "micro-batch-size", value_delimiter = ',', value_name = "B,...", value_parser = whole_up_to::<u64>(list_allowed(limits::MICRO_BATCH)))]
    pub mbs: Vec<u64>,
    /// Chunks for the schedules that take them (default: 2).
    #[arg(long, value_delimiter = ',', value_name = "V,...", value_parser = degree)]
    pub chunks: Vec<u32>,
    /// Schedules (default: 1f1b,interleaved,zb-h1,zb-v,v-half).
    #[arg(
        long,
        visible_alias = "schedule",
        value_delimiter = ',',
        value_name = "NAME,..."
    )]
    pub schedules: Vec<ScheduleKind>,
    /// Strategies (default: none,full,selective,adapipe).
    #[arg(
        long,
        visible_alias = "strategy",
        value_delimiter = ',',
        value_name = "NAME,..."
    )]
    pub strategies: Vec<Strategy>,
    /// Length of the ranked list (at least 1; `best` and the front are given whatever it is).
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = top_count)]
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
    /// Number formats of the layers' GEMMs (default: the preset's, bf16 unless it says).
    #[arg(long, value_delimiter = ',', value_name = "bf16|fp8,...")]
    pub precision: Vec<Precision>,
    /// Context-parallel sizes (default: 1 and the divisors of N up to 8 whose 2 cp divides
    /// the sequence).
    #[arg(long, value_delimiter = ',', value_name = "CP,...", value_parser = degree)]
    pub cp: Vec<u32>,
    /// Expert-parallel sizes (default: for a mixture of experts every divisor of
    /// t x cp x d / etp that divides the experts; 1 for a dense model).
    #[arg(long, value_delimiter = ',', value_name = "EP,...", value_parser = whole_up_to::<u32>(list_allowed(limits::DEGREE)))]
    pub ep: Vec<u32>,
    /// Expert tensor-parallel sizes (default: 1; each must divide the expert's ffn).
    #[arg(long, value_delimiter = ',', value_name = "ETP,...", value_parser = whole_up_to::<u32>(list_allowed(limits::DEGREE)))]
    pub etp: Vec<u32>,
    /// ZeRO stages (default: 0,1; 3 only when listed).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "0|1|3,...",
        allow_negative_numbers = true
    )]
    pub zero: Vec<Zero>,
}

/// Scenario flags whose setting the sweep enumerates (or derives) for every configuration:
/// accepted so that the refusal can say what to give instead.
#[derive(Debug, Clone, Default, Args)]
pub struct EnumeratedFlags {
    /// (Refused: the sweep derives d = N / (t x cp x p).)
    #[arg(short = 'd', long = "dp", value_name = "D", hide = true)]
    pub dp: Option<String>,
    /// (Refused: the sweep derives m = B / (b x d).)
    #[arg(short = 'm', long = "microbatches", value_name = "M", hide = true)]
    pub micro_batches: Option<String>,
    /// (Refused: the sweep tries sequence parallelism on and off.)
    #[arg(long, hide = true)]
    pub sp: bool,
    /// (Refused: the sweep tries sequence parallelism on and off.)
    #[arg(long = "no-sp", hide = true)]
    pub no_sp: bool,
    /// (Refused: the sweep enumerates the ZeRO stages, `--zero LIST`.)
    #[arg(long = "distributed-optimizer", hide = true)]
    pub distributed_optimizer: bool,
    /// (Refused: the sweep enumerates the ZeRO stages, `--zero LIST`.)
    #[arg(long = "no-distributed-optimizer", hide = true)]
    pub no_distributed_optimizer: bool,
}

impl EnumeratedFlags {
    /// The refusal of the first flag given, saying what the sweep does instead.
    fn refuse(&self) -> Result<(), String> {
        let derived = |flag: &str, rule: &str| {
            format!(
                "{flag}: the sweep derives {rule} for every configuration; give --gpus, --global-batch (and --tp, --cp, --pp, --mbs to narrow t, cp, p and b)"
            )
        };
        if self.dp.is_some() {
            return Err(derived("-d/--dp", "d = N / (t x cp x p)"));
        }
        if self.micro_batches.is_some() {
            return Err(derived("-m/--microbatches", "m = B / (b x d)"));
        }
        let both = |flag: &str, what: &str| {
            format!(
                "{flag}: the sweep tries {what} on and off (where it applies) and keeps the better; it has no flag to fix it"
            )
        };
        if self.sp || self.no_sp {
            return Err(both("--sp/--no-sp", "sequence parallelism"));
        }
        if self.distributed_optimizer || self.no_distributed_optimizer {
            return Err(
                "--distributed-optimizer/--no-distributed-optimizer: the sweep enumerates the \
                 ZeRO stages (the distributed optimizer is zero 1); give --zero 0, --zero 1 or \
                 a list such as --zero 0,1,3"
                    .to_string(),
            );
        }
        Ok(())
    }
}

impl SweepArgs {
    /// The starting scenario: the preset (or the default one, nothing kept free) reset to the
    /// sweep's starting point ([`sweep_starting_scenario`]), with every setting flag on top.
    pub fn base(&self) -> Result<Scenario, String> {
        self.enumerated.refuse()?;
        let schedules = if self.schedules.is_empty() {
            SWEEP_DEFAULT_SCHEDULES.to_vec()
        } else {
            self.schedules.clone()
        };
        unused_flags::check_sweep_layout(&self.settings)?;
        unused_flags::check_sweep(&schedules, &self.chunks, &self.settings)?;
        let strategies = if self.strategies.is_empty() {
            pipescope::SWEEP_DEFAULT_STRATEGIES.to_vec()
        } else {
            self.strategies.clone()
        };
        let gpus = self.gpu_counts();
        let lists = super::unused_plan_flags::SweepLists {
            gpus: &gpus,
            pp: &self.pp,
            tp: &self.tp,
            cp: &self.cp,
            chunks: &self.chunks,
        };
        super::unused_plan_flags::check_sweep_flags(
            &self.settings,
            &schedules,
            &strategies,
            &lists,
        )?;
        let (start, catalog) = starting_scenario(&self.source, false)?;
        // The three overlaps apply per configuration, where it allows them
        // (`sweep_scenario`): the one-GPU starting scenario would refuse them.
        let mut settings = self.settings.clone();
        settings.overlap_param_gather = false;
        settings.tp_comm_overlap = false;
        settings.moe_a2a_overlap = false;
        // DeepEP likewise applies where a configuration has an all-to-all (ep > 1).
        settings.deepep = false;
        let mut scenario = finish_scenario(
            sweep_starting_scenario(&start),
            &catalog,
            &setting_overrides(&self.source, &settings),
            self.source.profile.as_deref(),
        )?;
        unused_flags::check_sweep_overlaps(&scenario, &self.tp, &self.zero, &self.settings)?;
        super::unused_plan_flags::check_named_units(&strategies, &scenario, "--strategies")?;
        super::sweep_dense::refuse_expert_flags(
            &scenario,
            &self.ep,
            &self.etp,
            self.settings.deepep,
        )?;
        scenario.plan.deepep = self.settings.deepep;
        scenario.plan.overlap_param_gather = self.settings.overlap_param_gather;
        scenario.plan.tp_comm_overlap = self.settings.tp_comm_overlap;
        scenario.plan.moe_a2a_overlap = self.settings.moe_a2a_overlap;
        Ok(scenario)
    }

    /// The GPU counts of `--gpus`, each once, in the order first given (`8,8` is one run).
    pub fn gpu_counts(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::with_capacity(self.gpus.len());
        for &n in &self.gpus {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }

    /// The space the flags describe.
    pub fn space(&self) -> SweepSpace {
        SweepSpace {
            gpus: self.gpu_counts(),
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

/// Parses `--top K`: a ranked list of no line is refused rather than printed as "no feasible
/// configuration" beside a count of feasible ones.
/// What `--gpus` allows, in the words of the sweep's own check of its values.
fn gpus_allowed() -> String {
    list_allowed((limits::DEGREE * limits::DEGREE).min(u64::from(u32::MAX)))
}

/// What a list flag of the sweep allows, in the words of the sweep's own check.
fn list_allowed(max: u64) -> String {
    format!("whole numbers from 1 to {max}")
}

/// What `--global-batch` allows, in the words of the sweep's own check.
fn global_batch_allowed() -> String {
    format!(
        "a whole number of sequences from 1 to {}",
        limits::MICRO_BATCHES * limits::MICRO_BATCH
    )
}

fn top_count(text: &str) -> Result<usize, String> {
    const ALLOWED: &str = "a whole number from 1 up (the length of the ranked list)";
    match text.trim().parse::<usize>() {
        Ok(k) if k >= 1 => Ok(k),
        _ => Err(ALLOWED.to_string()),
    }
}

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
pub fn run(args: &SweepArgs) -> Result<(), super::Stop> {
    let start = Instant::now();
    let (base, result) = run_sweep(args)?;
    let elapsed = start.elapsed().as_secs_f64();
    if args.csv {
        return super::output::emit(&out::csv(&result));
    }
    let best = match result.best() {
        Some(row) => {
            let scenario = sweep_scenario(&base, &row.config);
            let outcome = solve(&scenario)
                .map_err(|e| format!("solving the best configuration again: {e}"))?;
            Some((scenario, outcome))
        }
        None => None,
    };
    if args.json {
        let best_json = match &best {
            Some((scenario, outcome)) => super::plan::plan_json(scenario, outcome)?,
            None => serde_json::Value::Null,
        };
        let value = out::json(&result, best_json)?;
        let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        return super::output::emit_line(&text);
    }
    super::output::emit(&out::table(
        &base,
        args,
        &result,
        best.as_ref().map(|(_, o)| o),
        elapsed,
    ))
}
