//! `pipescope simulate`: generate one schedule with abstract costs (or plan a real
//! scenario from scenario flags), simulate it, and print a compact text Gantt (p <= 16)
//! with a metrics table, or JSON (docs/cli.md); `--ops` lists every op.

use clap::Args;
use serde::Serialize;

use super::export::{AbstractArgs, abstract_run, planned_run};
use super::output::{emit, emit_line};
use super::scenario_args::ScenarioArgs;
use pipescope::{DeviceMetrics, Lane, ScheduleKind, Simulation, Span, SpanKind, Units};

/// Arguments of `pipescope simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Scenario flags; with `--costs`, or with `--schedule`, `-p` and `-m` and no flag that
    /// only a planned scenario has, the schedule, sizes and limits of an abstract run.
    #[command(flatten)]
    pub scenario: Box<ScenarioArgs>,
    /// Abstract-run flags (`--costs` default 1,1,1).
    #[command(flatten)]
    pub run: AbstractArgs,
    /// Print JSON instead of a Gantt and a table.
    #[arg(long)]
    pub json: bool,
    /// With --json, list every op with its start and end (a run has at most
    /// 131072 micro-batch-chunks, so at most a few hundred thousand ops).
    #[arg(long, requires = "json")]
    pub ops: bool,
}

/// The first flag given that only a planned scenario uses (a model, a GPU, a batch, a
/// budget, a strategy...): every scenario flag but the schedule, `-p`, `-m`, `--chunks` and the
/// schedule's limits, which an abstract run takes too.
pub fn planned_only_flag(s: &ScenarioArgs) -> Option<&'static str> {
    let mut rest = s.clone();
    rest.layout.schedule = None;
    rest.layout.pp = None;
    rest.layout.micro_batches = None;
    rest.layout.chunks = None;
    rest.settings.mem_limit = None;
    rest.settings.group_size = None;
    rest.settings.offload_chunks = None;
    if rest.is_empty() {
        return None;
    }
    let src = &rest.source;
    let (l, st) = (&rest.layout, &rest.settings);
    let flags: &[(&str, bool)] = &[
        ("--preset", src.preset.is_some()),
        ("--model", src.model.is_some()),
        ("--gpu", src.gpu.is_some()),
        ("--profile", src.profile.is_some()),
        ("-t/--tp", l.tp.is_some()),
        ("-d/--dp", l.dp.is_some()),
        ("--gpus", l.gpus.is_some()),
        ("--sp/--no-sp", l.sp || l.no_sp),
        ("-b/--micro-batch-size", l.micro_batch_size.is_some()),
        ("--global-batch", l.global_batch.is_some()),
        ("--strategy", l.strategy.is_some()),
        (
            "--distributed-optimizer",
            l.distributed_optimizer || l.no_distributed_optimizer,
        ),
        ("-s/--seq", st.seq_len.is_some()),
        ("--budget-gib", st.budget_gib.is_some()),
        ("--reserve-gib", st.reserve_gib.is_some()),
        ("--flash/--no-flash", st.flash || st.no_flash),
        ("--attention-backend", st.attention_backend.is_some()),
        ("--objective", st.objective.is_some()),
        ("--overlap-recompute", st.overlap_recompute),
        (
            "--overlap-grad-reduce",
            st.overlap_grad_reduce || st.no_overlap_grad_reduce,
        ),
        ("--partition", st.partition.is_some()),
        ("--layout", st.layout.is_some()),
        ("--p2p", st.p2p.is_some()),
        ("--precision", l.precision.is_some()),
        ("--cp", l.cp.is_some()),
        ("--zero", l.zero.is_some()),
        ("--overlap-param-gather", st.overlap_param_gather),
        ("--moe-a2a-overlap", st.moe_a2a_overlap),
        ("--tp-comm-overlap", st.tp_comm_overlap),
        ("--grad-bytes", st.grad_bytes.is_some()),
        ("--moment-bytes", st.moment_bytes.is_some()),
        (
            "--activation-func-fp8-input-store",
            st.activation_func_fp8_input_store,
        ),
        ("--recompute-units", st.recompute_units.is_some()),
        (
            "--device-max-connections",
            st.device_max_connections.is_some(),
        ),
    ];
    Some(
        flags
            .iter()
            .find(|(_, given)| *given)
            .map_or("a scenario flag", |(flag, _)| flag),
    )
}

/// Whether the flags ask for an abstract run (cost units): `--costs`, `--comm` or
/// `--offload-cost` given, or `--schedule`, `-p` and `-m` with no flag that only a planned
/// scenario has. Otherwise the run is the planned scenario's, in seconds; when some of an
/// abstract run's flags were given without the rest, a note on standard error says so (the
/// run would otherwise switch units without a word).
fn is_abstract(s: &ScenarioArgs, a: &AbstractArgs) -> bool {
    if a.costs.is_some() || a.comm.is_some() || a.offload_cost.is_some() {
        return true;
    }
    if planned_only_flag(s).is_some() {
        return false;
    }
    let l = &s.layout;
    let missing: Vec<&str> = [
        ("--schedule", l.schedule.is_none()),
        ("-p", l.pp.is_none()),
        ("-m", l.micro_batches.is_none()),
    ]
    .iter()
    .filter(|(_, absent)| *absent)
    .map(|(flag, _)| *flag)
    .collect();
    if missing.is_empty() {
        return true;
    }
    if missing.len() < 3 {
        eprintln!(
            "pipescope: note: simulating the planned scenario (real costs, times in seconds); \
             an abstract run in cost units needs --schedule, -p and -m ({} not given) or --costs",
            missing.join(", ")
        );
    }
    false
}

#[derive(Serialize)]
struct JsonOut<'a> {
    schedule: &'a str,
    p: u32,
    m: u32,
    v: u32,
    /// The makespan in the run's units (an alias of `makespan_s` for a planned run, kept
    /// for one release; cost units in an abstract run).
    makespan: f64,
    /// The makespan in seconds: planned runs only (an abstract run is in cost units).
    #[serde(skip_serializing_if = "Option::is_none")]
    makespan_s: Option<f64>,
    /// `"s"` for a planned run, `"cost units"` for an abstract one: the unit of `makespan`,
    /// `busy` and the ops' times.
    units: &'static str,
    bubble_rate: f64,
    devices: Vec<JsonDevice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ops: Option<Vec<JsonOp>>,
}

#[derive(Serialize)]
struct JsonDevice {
    device: u32,
    busy: f64,
    bubble_rate: f64,
    peak_in_flight: u32,
    peak_activation: f64,
}

#[derive(Serialize)]
struct JsonOp {
    device: u32,
    kind: SpanKind,
    micro_batch: u32,
    chunk: u32,
    start: f64,
    end: f64,
    /// One half of an overlapped forward-backward pair (written only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    paired: bool,
}

/// Runs the subcommand.
pub fn run(args: &SimulateArgs) -> Result<(), super::Stop> {
    let built = if is_abstract(&args.scenario, &args.run) {
        let costs = args.run.costs.as_deref().unwrap_or("1,1,1");
        abstract_run(&args.scenario, &args.run, costs)?
    } else {
        planned_run(&args.scenario)?
    };
    let sched = &built.schedule;
    let result = &built.simulation;
    let kind = sched.kind;
    let v = sched.v.max(1);

    if args.json {
        let out = JsonOut {
            schedule: kind.name(),
            p: sched.p,
            m: sched.m,
            v,
            makespan: result.makespan,
            makespan_s: matches!(built.units, Units::Seconds).then_some(result.makespan),
            units: match built.units {
                Units::Seconds => "s",
                Units::Abstract => "cost units",
            },
            bubble_rate: result.bubble_rate,
            devices: result
                .devices
                .iter()
                .map(|d| JsonDevice {
                    device: d.device,
                    busy: d.busy,
                    bubble_rate: d.bubble_rate,
                    peak_in_flight: d.peak_in_flight,
                    peak_activation: peak_activation(built.units, d, v),
                })
                .collect(),
            ops: args.ops.then(|| {
                result
                    .timeline
                    .spans
                    .iter()
                    .map(|s| JsonOp {
                        device: s.device,
                        kind: s.kind,
                        micro_batch: s.micro_batch,
                        chunk: s.chunk,
                        start: s.start,
                        end: s.end,
                        paired: s.paired,
                    })
                    .collect()
            }),
        };
        let text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
        emit_line(&text)
    } else {
        emit(&text_report(kind, result, v, built.units))
    }
}

/// Peak activation in units of one micro-batch's activations of all the device's layers:
/// chunk-activations / v in an abstract run; the peak in-flight count / v for a planned
/// scenario (its chunks hold about equal activations).
fn peak_activation(units: Units, d: &DeviceMetrics, v: u32) -> f64 {
    match units {
        Units::Abstract => d.peak_activation_bytes as f64 / f64::from(v),
        Units::Seconds => f64::from(d.peak_in_flight) / f64::from(v),
    }
}

/// The Gantt (p <= 16) and the metrics table.
fn text_report(kind: ScheduleKind, sim: &Simulation, v: u32, units: Units) -> String {
    let mut out = String::new();
    let p = sim.devices.len();
    let unit = match units {
        Units::Seconds => " s",
        Units::Abstract => "",
    };
    out.push_str(&format!(
        "{kind}: p={p} makespan {}{unit}  bubble {:.1}%\n",
        super::sim_number::three_places(sim.makespan),
        sim.bubble_rate * 100.0
    ));
    if p <= 16 {
        out.push_str(&gantt(sim, p));
        out.push_str(
            "  F/f forward, B/b input backward, W/w weight backward, X/x fused backward, \
             R/r recompute (upper case chunk 0), . idle\n",
        );
    }
    let pairs = sim.timeline.pairs().len();
    if pairs > 0 {
        out.push_str(&format!(
            "{pairs} overlapped F&B pairs, each run as one unit (a forward and another \
             micro-batch's backward)\n"
        ));
    }
    out.push_str("device      busy  bubble  in-flight  peak-act\n");
    for d in &sim.devices {
        out.push_str(&format!(
            "{:>6} {:>9} {:>6.1}% {:>10} {:>9.2}\n",
            d.device,
            super::sim_number::three_places(d.busy),
            d.bubble_rate * 100.0,
            d.peak_in_flight,
            peak_activation(units, d, v)
        ));
    }
    out
}

fn gantt(sim: &Simulation, p: usize) -> String {
    let compute: Vec<&Span> = sim
        .timeline
        .spans
        .iter()
        .filter(|s| s.lane == Lane::Compute)
        .collect();
    let shortest = compute
        .iter()
        .map(|s| s.end - s.start)
        .filter(|&x| x > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !(sim.makespan > 0.0 && shortest.is_finite()) {
        return String::new();
    }
    let cols = ((sim.makespan / shortest).ceil() as usize).clamp(1, 120);
    let dt = sim.makespan / cols as f64;
    let mut rows = vec![vec!['.'; cols]; p];
    for s in compute {
        let first = ((s.start / dt) + 1e-9).floor() as usize;
        let last = (((s.end / dt) - 1e-9).ceil() as usize).min(cols);
        let glyph = glyph(s.kind, s.chunk);
        for cell in rows[s.device as usize]
            .iter_mut()
            .take(last)
            .skip(first.min(cols))
        {
            *cell = glyph;
        }
    }
    let mut out = String::new();
    for (d, row) in rows.iter().enumerate() {
        out.push_str(&format!("{d:>3} |"));
        out.extend(row.iter());
        out.push_str("|\n");
    }
    out
}

fn glyph(kind: SpanKind, chunk: u32) -> char {
    let c = match kind {
        SpanKind::F => 'F',
        SpanKind::B => 'B',
        SpanKind::W => 'W',
        SpanKind::BW => 'X',
        SpanKind::R => 'R',
        SpanKind::D2H
        | SpanKind::H2D
        | SpanKind::Send
        | SpanKind::Kv
        | SpanKind::Gather
        | SpanKind::Scatter
        | SpanKind::A2a => '~',
    };
    if chunk == 0 {
        c
    } else {
        c.to_ascii_lowercase()
    }
}
