//! `pipescope export FORMAT`: the planned scenario, or an abstract schedule with `--costs`,
//! as a Perfetto trace, an SVG figure, a Megatron-LM launch script or a torchtitan schedule CSV
//! (docs/cli.md). No `-o`, or `-o -`, writes to stdout; a file is written
//! atomically (a new temporary file beside it, then renamed over it).

use std::path::Path;

use clap::{Args, ValueEnum};

use super::scenario_args::{ScenarioArgs, cost};
use super::scenario_flags::{Utf8Value, any_text};
use pipescope::{
    AbstractRun, AbstractRunError, Cancel, Outcome, Palette, Run, Scenario, Schedule,
    ScheduleError, ScheduleInput, ScheduleKind, Simulation, SvgExtras, Units, generate,
    megatron_args, perfetto_trace, svg_figure_with, torchtitan_csv,
};

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
    #[arg(long, value_name = "C", value_parser = cost, allow_negative_numbers = true)]
    pub comm: Option<f64>,
    /// One-way host transfer time of one chunk-activation for gis-offload (abstract runs;
    /// default: F).
    #[arg(long, value_name = "X", value_parser = cost, allow_negative_numbers = true)]
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
    #[arg(short = 'o', long = "output", value_name = "FILE", value_parser = Utf8Value(output_file))]
    pub output: Option<String>,
    /// Colour theme of the SVG: light (default), dark, high-contrast, mono.
    #[arg(long, value_parser = Utf8Value(any_text))]
    pub theme: Option<String>,
}

/// A simulated run and, for a planned scenario, what was planned.
pub struct Built {
    /// The schedule that was simulated.
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

/// Parses `F,B,W` into three finite positive numbers; a value that is not one is named
/// (an op of no time, or of negative time, is no schedule's cost).
fn parse_costs(text: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = || format!("--costs '{text}': expected three positive numbers F,B,W");
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0.0; 3];
    for ((slot, part), name) in out.iter_mut().zip(&parts).zip(["F", "B", "W"]) {
        let x: f64 = part.parse().map_err(|_| bad())?;
        if !(x.is_finite() && x > 0.0) {
            return Err(format!(
                "--costs '{text}': {name} = {part} is not allowed: each of F,B,W must be a \
                 finite number above 0"
            ));
        }
        *slot = x;
    }
    Ok(out)
}

/// A `NoFit` error that names the flag and the smallest whole limit that fits.
fn no_fit_message(
    kind: ScheduleKind,
    input: &ScheduleInput,
    limit: f64,
    e: &ScheduleError,
) -> String {
    let ceiling = 4.0 * f64::from(input.p) * f64::from(input.v.max(1)) + 4.0;
    super::no_fit::message(e, limit, ceiling, "--mem-limit", |l| {
        let mut i = input.clone();
        i.mem_limit = Some(l);
        generate(kind, &i).is_ok()
    })
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
    if let Some(flag) = super::simulate::planned_only_flag(s) {
        return Err(format!(
            "{flag}: an abstract run (--costs) has no model, GPU or plan, so it would do \
             nothing; drop --costs, --comm and --offload-cost to simulate the planned scenario"
        ));
    }
    let (layout, settings) = (&s.layout, &s.settings);
    if let Some(x) = settings.mem_limit {
        check_non_negative("--mem-limit", x)?;
    }
    for (flag, value) in [
        ("--chunks", layout.chunks),
        ("--group-size", settings.group_size),
        ("--offload-chunks", settings.offload_chunks),
    ] {
        if value == Some(0) {
            return Err(format!("{flag} 0: must be at least 1"));
        }
    }
    let need = |flag: &str| format!("{flag} is required for an abstract run (--costs)");
    let kind = layout.schedule.ok_or_else(|| need("--schedule"))?;
    let p = layout.pp.ok_or_else(|| need("-p/--stages"))?;
    let m = layout
        .micro_batches
        .ok_or_else(|| need("-m/--microbatches"))?;
    super::unused_flags::check_schedule(kind, layout, settings, a.offload_cost.is_some())?;
    let run = AbstractRun {
        chunks: layout.chunks.unwrap_or(2),
        costs: [f, b, w],
        comm,
        offload_cost: a.offload_cost,
        mem_limit: settings.mem_limit,
        group_size: settings.group_size,
        offload_chunks: settings.offload_chunks,
        ..AbstractRun::new(kind, p, m)
    };
    let out = run
        .simulate(&Cancel::never())
        .map_err(|e| match (e, run.schedule_input()) {
            (AbstractRunError::Schedule(e @ ScheduleError::NoFit { limit, .. }), Ok(input)) => {
                no_fit_message(kind, &input, limit, &e)
            }
            (e, _) => e.to_string(),
        })?;
    Ok(Built {
        schedule: out.schedule,
        simulation: out.simulation,
        units: Units::Abstract,
        planned: None,
        memory_limit: settings.mem_limit,
    })
}

/// Plans and simulates the scenario the flags describe.
pub fn planned_run(s: &ScenarioArgs) -> Result<Built, String> {
    let (scenario, _) = s.to_scenario()?;
    let outcome = super::no_fit::solve_explained(&scenario, s.settings.mem_limit.is_some())?;
    Ok(Built {
        schedule: (*outcome.op_order).clone(),
        simulation: outcome.simulation.clone(),
        units: Units::Seconds,
        memory_limit: Some(scenario.plan.memory_budget_bytes as f64),
        planned: Some((scenario, Box::new(outcome))),
    })
}

/// The text of `format` for `built`.
pub fn render(format: Format, built: &Built, palette: &Palette) -> Result<String, String> {
    match format {
        Format::Perfetto => Ok(perfetto_trace(&built.run())),
        Format::Svg => Ok(svg_figure_with(
            &built.run(),
            palette,
            SvgExtras {
                memory_limit: built.memory_limit,
            },
        )),
        Format::Torchtitan => torchtitan_csv(&built.schedule).map_err(|e| e.to_string()),
        Format::Megatron => match &built.planned {
            Some((scenario, outcome)) => {
                megatron_args(scenario, outcome).map_err(|e| e.to_string())
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
    match theme {
        None => Ok(Palette::light()),
        Some(name) if Palette::builtin(name).is_some() => {
            Palette::builtin(name).ok_or_else(|| format!("--theme {name}"))
        }
        // Any path that exists is read as a theme file: one that is not a regular file
        // (a device, a FIFO, a folder) is refused as such, not taken for a misspelt name.
        Some(path) if Path::new(path).symlink_metadata().is_ok() => {
            let text = pipescope::read_text_file(Path::new(path))
                .map_err(|e| format!("--theme {path}: {e}"))?;
            // The UI's reading of a theme refuses an unknown key or a value that is not a
            // colour, with its place in the file (a build without the UI refuses, naming it,
            // a colour the figure cannot draw).
            #[cfg(feature = "tui")]
            pipescope::tui::Theme::parse(&text, Path::new(path))
                .map_err(|e| format!("--theme {e}"))?;
            Palette::from_theme_toml(&text, path).map_err(|e| format!("--theme {e}"))
        }
        Some(other) => Err(format!(
            "--theme {other}: allowed: light, dark, high-contrast, mono or a theme file"
        )),
    }
}

/// Runs the subcommand.
pub fn run(args: &ExportArgs) -> Result<(), super::Stop> {
    if let Some(theme) = args.theme.as_deref().filter(|_| args.format != Format::Svg) {
        return Err(format!(
            "--theme {theme}: the {} export has no colours, so it would do nothing (--theme \
             colours the svg export)",
            args.format
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        )
        .into());
    }
    let palette = palette(args.theme.as_deref())?;
    let built = match &args.run.costs {
        Some(costs) => abstract_run(&args.scenario, &args.run, costs)?,
        None => {
            if args.run.comm.is_some() || args.run.offload_cost.is_some() {
                return Err(
                    "--comm and --offload-cost describe an abstract run: add --costs F,B,W"
                        .to_string()
                        .into(),
                );
            }
            planned_run(&args.scenario)?
        }
    };
    let text = render(args.format, &built, &palette)?;
    match args.output.as_deref() {
        None | Some("-") => super::output::emit(&text),
        Some(path) if pipescope::is_stdout_alias(Path::new(path)) => super::output::emit(&text),
        Some(path) => pipescope::write_atomic(Path::new(path), &text)
            .map(|_| ())
            .map_err(|e| super::Stop::Failed(format!("-o {e}"))),
    }
}

/// Parses `-o`: an empty name (`-o ''`, a variable that was not set) is refused before
/// anything is planned, in words that say what is allowed (it read "-o : not a file name").
fn output_file(text: &str) -> Result<String, String> {
    if text.is_empty() {
        Err("a file name, or - for standard output".into())
    } else {
        Ok(text.to_string())
    }
}
