//! `pipescope export FORMAT`: the planned scenario, or an abstract schedule with `--costs`,
//! as a Perfetto trace, an SVG figure, a Megatron-LM launch script or a torchtitan schedule CSV
//! (docs/cli.md). No `-o`, or `-o -`, writes to stdout; a file is written
//! atomically (a new temporary file beside it, then renamed over it).

use std::path::Path;

use clap::{Args, ValueEnum};

use pipescope::export::svg::Palette;
use pipescope::export::{self, Run, Units};
use pipescope::scenario::ScheduleKind;
use pipescope::schedule::{self, Schedule, ScheduleInput};
use pipescope::sim::{self, SimCosts, Simulation};
use pipescope::{Outcome, Scenario, solve};

use super::scenario_args::ScenarioArgs;

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Chrome trace-event JSON for Perfetto.
    Perfetto,
    /// A standalone SVG figure.
    Svg,
    /// Megatron-LM launch script (planned scenarios only).
    Megatron,
    /// torch.distributed.pipelining schedule CSV (compute_only).
    Torchtitan,
}

/// Flags of an abstract run (`--costs`), besides the scenario's schedule, sizes and limits.
#[derive(Debug, Clone, Default, Args)]
pub struct AbstractArgs {
    /// Abstract run: forward, input-backward and weight-backward cost of one op, as F,B,W.
    #[arg(long, allow_hyphen_values = true)]
    pub costs: Option<String>,
    /// Transfer time between two devices (abstract runs; default 0).
    #[arg(long, allow_negative_numbers = true)]
    pub comm: Option<f64>,
    /// One-way host transfer time of one chunk-activation (abstract runs; default: F).
    #[arg(long, allow_negative_numbers = true)]
    pub offload_cost: Option<f64>,
}

/// Arguments of `pipescope export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// perfetto, svg, megatron or torchtitan.
    #[arg(value_enum)]
    pub format: Format,
    /// Scenario flags (or the schedule, sizes and limits of an abstract run).
    #[command(flatten)]
    pub scenario: Box<ScenarioArgs>,
    /// Abstract-run flags.
    #[command(flatten)]
    pub run: AbstractArgs,
    /// Output file (`-` or none: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// Colour theme of the SVG: light (default), dark, high-contrast, mono.
    #[arg(long)]
    pub theme: Option<String>,
}

/// A simulated run and, for a planned scenario, what was planned.
pub struct Built {
    /// The schedule (rebuilt from the timeline for a planned scenario).
    pub schedule: Schedule,
    /// Its simulation.
    pub simulation: Simulation,
    /// Unit of times and memory.
    pub units: Units,
    /// The scenario and its outcome (planned runs only).
    pub planned: Option<(Scenario, Box<Outcome>)>,
    /// The memory budget per device in the run's memory unit (the scenario's budget in
    /// bytes, or `--mem-limit` in chunk-activations), when there is one.
    pub memory_limit: Option<f64>,
}

impl Built {
    /// The view exports take.
    pub fn run(&self) -> Run<'_> {
        Run {
            schedule: &self.schedule,
            simulation: &self.simulation,
            units: self.units,
        }
    }
}

/// Parses `F,B,W` into three finite non-negative numbers.
fn parse_costs(text: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = || format!("--costs '{text}': expected three non-negative numbers F,B,W");
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0.0; 3];
    for (slot, part) in out.iter_mut().zip(&parts) {
        let x: f64 = part.parse().map_err(|_| bad())?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(bad());
        }
        *slot = x;
    }
    Ok(out)
}

/// A `NoFit` error that names the flag and the smallest whole limit that fits (searched by
/// doubling, then halving: at most about 2 log2(limit) generations).
fn no_fit_message(
    kind: ScheduleKind,
    input: &ScheduleInput,
    limit: f64,
    e: &schedule::ScheduleError,
) -> String {
    let fits = |l: f64| {
        let mut i = input.clone();
        i.mem_limit = Some(l);
        schedule::generate(kind, &i).is_ok()
    };
    let mut low = limit.max(0.0).floor();
    let mut high = (low * 2.0).max(1.0);
    let ceiling = 4.0 * f64::from(input.p) * f64::from(input.v.max(1)) + 4.0;
    while !fits(high) {
        if high >= ceiling {
            return format!("{e} (set by --mem-limit; none up to {ceiling} fits either)");
        }
        low = high;
        high = (high * 2.0).min(ceiling);
    }
    while high - low > 1.0 {
        let mid = ((low + high) / 2.0).floor();
        if fits(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    format!("{e} (set by --mem-limit; the smallest limit that fits is {high})")
}

fn check_non_negative(name: &str, x: f64) -> Result<(), String> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(format!("{name} {x}: must be a finite number >= 0"))
    }
}

/// Generates and simulates the abstract schedule the flags describe (`costs` as F,B,W).
pub fn abstract_run(s: &ScenarioArgs, a: &AbstractArgs, costs: &str) -> Result<Built, String> {
    let [f, b, w] = parse_costs(costs)?;
    let comm = a.comm.unwrap_or(0.0);
    check_non_negative("--comm", comm)?;
    if let Some(x) = a.offload_cost {
        check_non_negative("--offload-cost", x)?;
    }
    if let Some(x) = s.mem_limit {
        check_non_negative("--mem-limit", x)?;
    }
    for (flag, value) in [
        ("--chunks", s.chunks),
        ("--group-size", s.group_size),
        ("--offload-chunks", s.offload_chunks),
    ] {
        if value == Some(0) {
            return Err(format!("{flag} 0: must be at least 1"));
        }
    }
    let need = |flag: &str| format!("{flag} is required for an abstract run (--costs)");
    let kind = s.schedule.ok_or_else(|| need("--schedule"))?;
    let p = s.pp.ok_or_else(|| need("-p/--stages"))?;
    let m = s.micro_batches.ok_or_else(|| need("-m/--microbatches"))?;
    let requested = s.chunks.unwrap_or(2);
    schedule::check_size(kind, p, m, requested).map_err(|e| e.to_string())?;
    let v = kind.chunks(requested);
    let offload_s = a.offload_cost.unwrap_or(f);
    let mut input = ScheduleInput::uniform(p, m, v, f, b, w, comm);
    input.mem_limit = s.mem_limit;
    input.group_size = s.group_size;
    input.offload_chunks = s.offload_chunks;
    input.offload_cost = Some(offload_s);
    let sched = schedule::generate(kind, &input).map_err(|e| match e {
        schedule::ScheduleError::NoFit { limit, .. } => no_fit_message(kind, &input, limit, &e),
        e => e.to_string(),
    })?;
    let sim_costs = SimCosts::abstract_run(&sched, f, b, w, comm, offload_s);
    let simulation = sim::simulate(&sched, &sim_costs).map_err(|e| e.to_string())?;
    Ok(Built {
        schedule: sched,
        simulation,
        units: Units::Abstract,
        planned: None,
        memory_limit: s.mem_limit,
    })
}

/// Plans and simulates the scenario the flags describe.
pub fn planned_run(s: &ScenarioArgs) -> Result<Built, String> {
    let (scenario, _) = s.to_scenario()?;
    let outcome = solve(&scenario).map_err(|e| e.to_string())?;
    let v = scenario.plan.schedule.chunks(scenario.parallel.chunks);
    let sched = export::schedule_of(
        scenario.plan.schedule,
        scenario.batch.micro_batches,
        v,
        &outcome.simulation,
    );
    Ok(Built {
        schedule: sched,
        simulation: outcome.simulation.clone(),
        units: Units::Seconds,
        memory_limit: Some(scenario.plan.memory_budget_bytes as f64),
        planned: Some((scenario, Box::new(outcome))),
    })
}

/// The text of `format` for `built`.
pub fn render(format: Format, built: &Built, palette: &Palette) -> Result<String, String> {
    match format {
        Format::Perfetto => Ok(export::perfetto::export(&built.run())),
        Format::Svg => Ok(export::svg::export_with(
            &built.run(),
            palette,
            export::svg::Extras {
                memory_limit: built.memory_limit,
            },
        )),
        Format::Torchtitan => {
            export::torchtitan::export(&built.schedule).map_err(|e| e.to_string())
        }
        Format::Megatron => match &built.planned {
            Some((scenario, outcome)) => {
                export::megatron::export(scenario, outcome).map_err(|e| e.to_string())
            }
            None => Err(
                "megatron export needs a planned scenario (scenario flags), \
                 not an abstract run: drop --costs"
                    .to_string(),
            ),
        },
    }
}

/// The SVG palette of a theme name.
pub fn palette(theme: Option<&str>) -> Result<Palette, String> {
    let text = match theme {
        None | Some("light") => return Ok(Palette::light()),
        Some("dark") => include_str!("../../themes/dark.toml"),
        Some("high-contrast") => include_str!("../../themes/high-contrast.toml"),
        Some("mono") => include_str!("../../themes/mono.toml"),
        Some(path) if Path::new(path).is_file() => {
            return std::fs::read_to_string(path)
                .map_err(|e| format!("--theme {path}: {e}"))
                .and_then(|t| Palette::from_theme_toml(&t));
        }
        Some(other) => {
            return Err(format!(
                "--theme {other}: allowed: light, dark, high-contrast, mono or a theme file"
            ));
        }
    };
    Palette::from_theme_toml(text)
}

/// Runs the subcommand.
pub fn run(args: &ExportArgs) -> Result<(), String> {
    let palette = palette(args.theme.as_deref())?;
    let built = match &args.run.costs {
        Some(costs) => abstract_run(&args.scenario, &args.run, costs)?,
        None => {
            if args.run.comm.is_some() || args.run.offload_cost.is_some() {
                return Err(
                    "--comm and --offload-cost describe an abstract run: add --costs F,B,W"
                        .to_string(),
                );
            }
            planned_run(&args.scenario)?
        }
    };
    let text = render(args.format, &built, &palette)?;
    match args.output.as_deref() {
        None | Some("-") => super::output::emit(&text),
        Some(path) => export::write_atomic(Path::new(path), &text)
            .map(|_| ())
            .map_err(|e| format!("-o {e}")),
    }
}
