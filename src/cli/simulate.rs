//! `pipescope simulate`: generate one schedule with abstract costs, simulate it, and print
//! a compact text Gantt (p <= 16) with a metrics table, or JSON (DESIGN.md section 6).

use clap::Args;
use serde::Serialize;

use pipescope::schedule::{self, ScheduleInput, ScheduleKind};
use pipescope::sim::{self, Lane, SimCosts, Simulation, Span, SpanKind};

use super::output::{emit, emit_line};
use super::scenario_args::whole;

/// Arguments of `pipescope simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Schedule name (gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-auto, zb-v, v-half, v-min,
    /// v-zb, dualpipe-v, chimera, gis, gis-offload).
    #[arg(long)]
    pub schedule: ScheduleKind,
    /// Pipeline stages (devices).
    #[arg(short = 'p', long = "stages", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub p: u32,
    /// Micro-batches per iteration.
    #[arg(short = 'm', long = "microbatches", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub m: u32,
    /// Chunks per device for interleaved and gis (default 2; fixed for the others).
    #[arg(long)]
    pub chunks: Option<u32>,
    /// Forward, input-backward and weight-backward cost of one op, as F,B,W.
    #[arg(long, default_value = "1,1,1", allow_hyphen_values = true)]
    pub costs: String,
    /// Transfer time between two devices.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub comm: f64,
    /// Memory limit in chunk-activations for the searched schedules.
    #[arg(long, allow_negative_numbers = true)]
    pub mem_limit: Option<f64>,
    /// GIS group size (default p).
    #[arg(long)]
    pub group_size: Option<u32>,
    /// Chunks gis-offload offloads (default 1).
    #[arg(long)]
    pub offload_chunks: Option<u32>,
    /// One-way transfer time of one chunk-activation to or from the host (default: F).
    #[arg(long, allow_negative_numbers = true)]
    pub offload_cost: Option<f64>,
    /// Print JSON instead of a Gantt and a table.
    #[arg(long)]
    pub json: bool,
    /// With --json, list every op with its start and end.
    #[arg(long)]
    pub ops: bool,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    schedule: &'a str,
    p: u32,
    m: u32,
    v: u32,
    makespan: f64,
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

/// Runs the subcommand.
pub fn run(args: &SimulateArgs) -> Result<(), String> {
    let [f, b, w] = parse_costs(&args.costs)?;
    check_non_negative("--comm", args.comm)?;
    if let Some(x) = args.offload_cost {
        check_non_negative("--offload-cost", x)?;
    }
    if let Some(x) = args.mem_limit {
        check_non_negative("--mem-limit", x)?;
    }
    for (flag, value) in [
        ("--chunks", args.chunks),
        ("--group-size", args.group_size),
        ("--offload-chunks", args.offload_chunks),
    ] {
        if value == Some(0) {
            return Err(format!("{flag} 0: must be at least 1"));
        }
    }
    let kind = args.schedule;
    let requested = args.chunks.unwrap_or(2);
    schedule::check_size(kind, args.p, args.m, requested).map_err(|e| e.to_string())?;
    let v = kind.chunks(requested);
    let offload_s = args.offload_cost.unwrap_or(f);
    let mut input = ScheduleInput::uniform(args.p, args.m, v, f, b, w, args.comm);
    input.mem_limit = args.mem_limit;
    input.group_size = args.group_size;
    input.offload_chunks = args.offload_chunks;
    input.offload_cost = Some(offload_s);
    let sched = schedule::generate(kind, &input).map_err(|e| match e {
        schedule::ScheduleError::NoFit { limit, .. } => no_fit_message(kind, &input, limit, &e),
        e => e.to_string(),
    })?;
    let costs = SimCosts::abstract_run(&sched, f, b, w, args.comm, offload_s);
    let result = sim::simulate(&sched, &costs).map_err(|e| e.to_string())?;
    let v = sched.v.max(1);
    if args.json {
        let out = JsonOut {
            schedule: kind.name(),
            p: sched.p,
            m: sched.m,
            v,
            makespan: result.makespan,
            bubble_rate: result.bubble_rate,
            devices: result
                .devices
                .iter()
                .map(|d| JsonDevice {
                    device: d.device,
                    busy: d.busy,
                    bubble_rate: d.bubble_rate,
                    peak_in_flight: d.peak_in_flight,
                    peak_activation: d.peak_activation_bytes as f64 / f64::from(v),
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
                    })
                    .collect()
            }),
        };
        let text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
        emit_line(&text)
    } else {
        emit(&text_report(kind, &result, v))
    }
}

/// The Gantt (p <= 16) and the metrics table.
fn text_report(kind: ScheduleKind, sim: &Simulation, v: u32) -> String {
    let mut out = String::new();
    let p = sim.devices.len();
    out.push_str(&format!(
        "{kind}: p={p} makespan {:.3}  bubble {:.1}%\n",
        sim.makespan,
        sim.bubble_rate * 100.0
    ));
    if p <= 16 {
        out.push_str(&gantt(sim, p));
        out.push_str(
            "  F/f forward, B/b input backward, W/w weight backward, X/x fused backward, \
             R/r recompute (upper case chunk 0), . idle\n",
        );
    }
    out.push_str("device      busy  bubble  in-flight  peak-act\n");
    for d in &sim.devices {
        out.push_str(&format!(
            "{:>6} {:>9.3} {:>6.1}% {:>10} {:>9.2}\n",
            d.device,
            d.busy,
            d.bubble_rate * 100.0,
            d.peak_in_flight,
            d.peak_activation_bytes as f64 / f64::from(v)
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
        SpanKind::D2H | SpanKind::H2D | SpanKind::Send => '~',
    };
    if chunk == 0 {
        c
    } else {
        c.to_ascii_lowercase()
    }
}
