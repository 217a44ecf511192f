//! A standalone SVG figure of a run in the style of the schedule papers: one row per device,
//! one `<rect class="op KIND">` per compute op (with `data-mb` and `data-chunk`; legend
//! swatches and other shapes never carry the class `op`), micro-batch numbers inside wherever
//! they fit (the figure widens with the op count so that they do), chunks told apart by shade
//! (chunk `c` lighter by `c` steps), recomputation hatched and host copies as thin bars under
//! the row, a time axis in a unit that suits the run (s, ms, µs or cost units), a legend of
//! the kinds the run has, and the memory panel below (a curve per device with its key, a y
//! scale and the budget line). Colours come from a [`Palette`] (light page by default, or a
//! theme's colours); text uses the generic `sans-serif` family, no external fonts.

mod memory;
mod palette;

pub use palette::{Palette, label_on};

use std::fmt::Write;

use super::{Run, Units, kind_name};
use crate::sim::{Lane, SpanKind};

const LEFT: f64 = 72.0;
const TOP: f64 = 28.0;
const ROW: f64 = 26.0;
/// Narrowest figure.
const MIN_WIDTH: f64 = 1000.0;
/// Widest figure (very long runs keep their labels only where they fit).
const MAX_WIDTH: f64 = 6000.0;
/// Width a typical op gets when the figure can grow: room for a two-digit label.
const OP_WIDTH: f64 = 16.0;
/// Width of one digit of a label (9 px sans-serif).
const DIGIT: f64 = 5.6;

/// Formats a number with at most two decimals, without trailing zeros.
fn num(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A "nice" tick step for a span of `range` with about `n` ticks.
fn tick_step(range: f64, n: f64) -> f64 {
    let raw = (range / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The unit of the time axis for a run lasting `makespan`: its scale from the run's own
/// unit and its name.
fn time_unit(units: Units, makespan: f64) -> (f64, &'static str) {
    match units {
        Units::Abstract => (1.0, "cost units"),
        Units::Seconds if makespan >= 1.0 => (1.0, "s"),
        Units::Seconds if makespan >= 1e-3 => (1e3, "ms"),
        Units::Seconds => (1e6, "µs"),
    }
}

/// A tick label: `t` (already scaled) with the decimals its step needs.
fn tick_label(t: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{t:.decimals$}")
}

/// Width of the plot area: [`MIN_WIDTH`] at least; wider, up to [`MAX_WIDTH`], when the
/// typical op of the narrowest kind (the median forward, say) would be narrower than
/// [`OP_WIDTH`].
fn plot_width(run: &Run<'_>, makespan: f64) -> f64 {
    let base = MIN_WIDTH - LEFT - 16.0;
    let median_of = |kind: SpanKind| {
        let mut widths: Vec<f64> = run
            .simulation
            .timeline
            .spans
            .iter()
            .filter(|s| s.lane == Lane::Compute && s.kind == kind)
            .map(|s| (s.end - s.start) / makespan)
            .filter(|w| *w > 0.0)
            .collect();
        widths.sort_by(f64::total_cmp);
        widths.get(widths.len() / 2).copied()
    };
    let narrowest = [SpanKind::F, SpanKind::B, SpanKind::W, SpanKind::BW]
        .into_iter()
        .filter_map(median_of)
        .fold(f64::INFINITY, f64::min);
    if !narrowest.is_finite() {
        return base;
    }
    (OP_WIDTH / narrowest).clamp(base, MAX_WIDTH - LEFT - 16.0)
}

/// What the figure draws beside the run itself.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Extras {
    /// The memory budget per device, in the run's memory unit (bytes, or chunk-activations
    /// for an abstract run); drawn as a line in the memory panel.
    pub memory_limit: Option<f64>,
}

/// The figure of `run` drawn with `palette` (no budget line).
pub fn export(run: &Run<'_>, palette: &Palette) -> String {
    export_with(run, palette, Extras::default())
}

/// The figure of `run` drawn with `palette`, with `extras`.
pub fn export_with(run: &Run<'_>, palette: &Palette, extras: Extras) -> String {
    let sim = run.simulation;
    let p = run.schedule.p.max(sim.devices.len() as u32) as usize;
    let v = run.schedule.v.max(1);
    let makespan = if sim.makespan > 0.0 {
        sim.makespan
    } else {
        1.0
    };
    let plot_w = plot_width(run, makespan);
    let width = LEFT + plot_w + 16.0;
    let x = |t: f64| LEFT + plot_w * (t / makespan).clamp(0.0, 1.0);
    let rows_h = ROW * p as f64;
    let axis_y = TOP + rows_h + 4.0;
    let mem_top = axis_y + 46.0;
    let mem = memory::Panel::new(run, palette, extras.memory_limit, mem_top, width);
    let legend_y = mem.bottom() + 16.0;
    let height = legend_y + 24.0;
    let pal = palette;
    let mut out = String::with_capacity(4096 + sim.timeline.spans.len() * 110);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <style>.F{{fill:{f}}}.B{{fill:{b}}}.BW{{fill:{bw}}}.W{{fill:{wg}}}.R{{fill:{r}}}.D2H,.H2D{{fill:{o}}}\
         .c1{{fill-opacity:.62}}.c2{{fill-opacity:.45}}.c3{{fill-opacity:.33}}\
         .op{{stroke:{bg};stroke-width:.6}}.R{{stroke:{t};stroke-dasharray:2 1}}\
         .n{{text-anchor:middle;font-size:9px}}.nF{{fill:{lf}}}.nB{{fill:{lb}}}.nW{{fill:{lw}}}.nBW{{fill:{lbw}}}\
         .t{{fill:{t}}}.m{{fill:{mu}}}\
         .g{{stroke:{mu};stroke-width:.5}}.mem{{fill:none;stroke-width:1.2}}\
         .budget{{stroke:{bu};stroke-width:1;stroke-dasharray:5 3}}</style>\n\
         <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"{bg}\"/>\n",
        w = num(width),
        h = num(height),
        f = pal.forward,
        b = pal.backward,
        bw = pal.fused,
        wg = pal.weight_grad,
        r = pal.recompute,
        o = pal.offload,
        bg = pal.background,
        t = pal.text,
        mu = pal.muted,
        bu = pal.budget,
        lf = label_on(&pal.forward),
        lb = label_on(&pal.backward),
        lw = label_on(&pal.weight_grad),
        lbw = label_on(&pal.fused),
    );
    let (scale, unit) = time_unit(run.units, makespan);
    let _ = writeln!(
        out,
        "<text class=\"t\" x=\"{LEFT}\" y=\"16\" font-size=\"13\">{}: p={p} m={} v={v}, makespan {} {unit}, bubble {:.1}%</text>",
        run.schedule.kind,
        run.schedule.m,
        sig4(makespan * scale),
        sim.bubble_rate * 100.0
    );
    for d in 0..p {
        let y = TOP + ROW * d as f64;
        let _ = writeln!(
            out,
            "<text class=\"t\" x=\"{}\" y=\"{}\" text-anchor=\"end\">device {d}</text>",
            LEFT - 6.0,
            num(y + ROW * 0.55)
        );
    }
    ops(&mut out, run, p, &x);
    // Time axis.
    let step = tick_step(makespan * scale, (plot_w / 90.0).max(4.0));
    let _ = writeln!(
        out,
        "<line class=\"g\" x1=\"{LEFT}\" y1=\"{a}\" x2=\"{}\" y2=\"{a}\"/>",
        num(LEFT + plot_w),
        a = num(axis_y)
    );
    let mut k = 0.0;
    while k * step <= makespan * scale * (1.0 + 1e-9) && k < 200.0 {
        let t = k * step;
        let _ = writeln!(
            out,
            "<text class=\"m\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            num(x(t / scale)),
            num(axis_y + 13.0),
            tick_label(t, step)
        );
        k += 1.0;
    }
    let _ = writeln!(
        out,
        "<text class=\"m\" x=\"{}\" y=\"{}\" text-anchor=\"end\">time ({unit})</text>",
        num(LEFT + plot_w),
        num(axis_y + 27.0)
    );
    mem.draw(&mut out, &x);
    legend(&mut out, run, legend_y, v);
    out.push_str("</svg>\n");
    out
}

/// `x` with four significant figures (no exponent).
fn sig4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let digits = (x.abs().log10().floor() as i64 + 1).max(1) as usize;
    let decimals = 4usize.saturating_sub(digits);
    format!("{x:.decimals$}")
}

/// The compute ops (and host copies under their rows), each with its micro-batch number
/// when the box is wide enough for it.
fn ops(out: &mut String, run: &Run<'_>, p: usize, x: &dyn Fn(f64) -> f64) {
    for s in &run.simulation.timeline.spans {
        let d = s.device as usize;
        // Sends and the collectives inside the ops are not drawn (the ops hold their time).
        if d >= p || matches!(s.lane, Lane::Send | Lane::Comm) {
            continue;
        }
        let (x0, x1) = (x(s.start), x(s.end));
        let w = (x1 - x0).max(0.0);
        let y = TOP + ROW * d as f64;
        let kind = kind_name(s.kind);
        let shade = if s.chunk > 0 {
            format!(" c{}", s.chunk.min(3))
        } else {
            String::new()
        };
        if s.lane == Lane::Copy {
            let _ = writeln!(
                out,
                "<rect class=\"copy {kind}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"3\"/>",
                num(x0),
                num(y + ROW - 5.0),
                num(w)
            );
            continue;
        }
        let _ = write!(
            out,
            "<rect class=\"op {kind}{shade}\" data-mb=\"{}\" data-chunk=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            s.micro_batch,
            s.chunk,
            num(x0),
            num(y + 2.0),
            num(w),
            num(ROW - 8.0)
        );
        let label = s.micro_batch.to_string();
        if s.kind != SpanKind::R && w >= DIGIT * label.len() as f64 + 3.0 {
            let _ = write!(
                out,
                "<text class=\"n n{kind}\" x=\"{}\" y=\"{}\">{label}</text>",
                num(x0 + w / 2.0),
                num(y + ROW * 0.55)
            );
        }
        out.push('\n');
    }
}

/// The legend: one swatch per kind the run has (never of class `op`), the chunk shade when
/// devices hold several chunks.
fn legend(out: &mut String, run: &Run<'_>, y: f64, v: u32) {
    let present = |k: SpanKind| run.simulation.timeline.spans.iter().any(|s| s.kind == k);
    let items: [(SpanKind, &str, &str); 6] = [
        (SpanKind::F, "F", "forward"),
        (SpanKind::B, "B", "backward (input)"),
        (SpanKind::W, "W", "backward (weights)"),
        (SpanKind::BW, "BW", "backward (fused)"),
        (SpanKind::R, "R", "recompute"),
        (SpanKind::D2H, "D2H", "offload / reload"),
    ];
    let mut x = LEFT;
    for (kind, class, text) in items {
        let has = present(kind) || (kind == SpanKind::D2H && present(SpanKind::H2D));
        if !has {
            continue;
        }
        let _ = write!(
            out,
            "<rect class=\"swatch {class}\" x=\"{}\" y=\"{}\" width=\"14\" height=\"10\"/><text class=\"t\" x=\"{}\" y=\"{}\">{text}</text>",
            num(x),
            num(y),
            num(x + 18.0),
            num(y + 9.0)
        );
        x += 30.0 + 6.0 * text.len() as f64;
    }
    if v > 1 {
        let _ = write!(
            out,
            "<rect class=\"swatch F c1\" x=\"{}\" y=\"{}\" width=\"14\" height=\"10\"/><text class=\"t\" x=\"{}\" y=\"{}\">lighter: later chunk</text>",
            num(x),
            num(y),
            num(x + 18.0),
            num(y + 9.0)
        );
    }
    out.push('\n');
}
