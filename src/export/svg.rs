//! A standalone SVG figure of a run in the style of the schedule papers: one row per device,
//! one `<rect class="op KIND">` per compute op (with `data-mb` and `data-chunk`; legend
//! swatches and other shapes never carry the class `op`), micro-batch numbers inside when
//! they fit, chunks told apart by shade (chunk `c` lighter by `c` steps), recomputation
//! hatched and host copies as thin bars under the row, a time axis, a legend and the memory
//! curves below. Colours come from a [`Palette`] (light background by default, or a theme's
//! colours); text uses the generic `sans-serif` family, no external fonts.

use std::fmt::Write;

use super::{Run, Units, kind_name};
use crate::sim::{Lane, SpanKind};

/// Colours of a figure, as CSS colours (`#rrggbb`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// Page background.
    pub background: String,
    /// Labels, axis and legend text.
    pub text: String,
    /// Grid lines and muted text.
    pub muted: String,
    /// Forward ops.
    pub forward: String,
    /// Input-gradient (and fused) backward ops.
    pub backward: String,
    /// Weight-gradient backward ops.
    pub weight_grad: String,
    /// Recomputation.
    pub recompute: String,
    /// Host copies (offload and reload).
    pub offload: String,
    /// Text inside op boxes.
    pub label: String,
}

impl Default for Palette {
    fn default() -> Self {
        Self::light()
    }
}

impl Palette {
    /// Light background, the colours of the `light` theme.
    pub fn light() -> Self {
        Self {
            background: "#ffffff".into(),
            text: "#1f2328".into(),
            muted: "#8c959f".into(),
            forward: "#1f5fbf".into(),
            backward: "#1e7b34".into(),
            weight_grad: "#0f7a70".into(),
            recompute: "#c4520a".into(),
            offload: "#7c4f9e".into(),
            label: "#ffffff".into(),
        }
    }

    /// A palette from a theme file's text (`[colors]` table, docs/cli.md): its role
    /// colours where they are `#rrggbb`, the light palette's elsewhere; a dark background
    /// for themes named `dark` or `high-contrast`; greys for a theme without colours.
    pub fn from_theme_toml(text: &str) -> Result<Self, String> {
        let value: toml::Table = text.parse().map_err(|e| format!("theme: {e}"))?;
        let name = value.get("name").and_then(|n| n.as_str()).unwrap_or("");
        let colors = value.get("colors").and_then(|c| c.as_table());
        let mut out = Self::light();
        if matches!(name, "dark" | "high-contrast") {
            out.background = "#0d1117".into();
            out.text = "#e6edf3".into();
        }
        let mut any = false;
        let mut set = |slot: &mut String, key: &str| {
            if let Some(c) = colors.and_then(|t| t.get(key)).and_then(|c| c.as_str())
                && c.len() == 7
                && c.starts_with('#')
                && c[1..].chars().all(|ch| ch.is_ascii_hexdigit())
            {
                *slot = c.to_string();
                any = true;
            }
        };
        set(&mut out.forward, "forward");
        set(&mut out.backward, "backward");
        set(&mut out.weight_grad, "weight_grad");
        set(&mut out.recompute, "recompute");
        set(&mut out.offload, "offload");
        set(&mut out.muted, "muted");
        set(&mut out.label, "label");
        if !any {
            // Mono: greys told apart by lightness; the labels carry the kind.
            out.forward = "#404040".into();
            out.backward = "#707070".into();
            out.weight_grad = "#a0a0a0".into();
            out.recompute = "#c8c8c8".into();
            out.offload = "#202020".into();
            out.label = "#ffffff".into();
        }
        Ok(out)
    }
}

const LEFT: f64 = 72.0;
const TOP: f64 = 28.0;
const ROW: f64 = 26.0;
const WIDTH: f64 = 1000.0;
const MEM_H: f64 = 110.0;

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

/// The figure of `run` drawn with `palette`.
pub fn export(run: &Run<'_>, palette: &Palette) -> String {
    let sim = run.simulation;
    let p = run.schedule.p.max(sim.devices.len() as u32) as usize;
    let v = run.schedule.v.max(1);
    let makespan = if sim.makespan > 0.0 {
        sim.makespan
    } else {
        1.0
    };
    let plot_w = WIDTH - LEFT - 16.0;
    let x = |t: f64| LEFT + plot_w * (t / makespan).clamp(0.0, 1.0);
    let rows_h = ROW * p as f64;
    let axis_y = TOP + rows_h + 4.0;
    let mem_top = axis_y + 40.0;
    let legend_y = mem_top + MEM_H + 30.0;
    let height = legend_y + 24.0;
    let pal = palette;
    let mut out = String::with_capacity(4096 + sim.timeline.spans.len() * 110);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{h}\" viewBox=\"0 0 {WIDTH} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <style>.F{{fill:{f}}}.B,.BW{{fill:{b}}}.W{{fill:{w}}}.R{{fill:{r}}}.D2H,.H2D{{fill:{o}}}\
         .c1{{fill-opacity:.62}}.c2{{fill-opacity:.45}}.c3{{fill-opacity:.33}}\
         .op{{stroke:{bg};stroke-width:.6}}.R{{stroke:{t};stroke-dasharray:2 1}}\
         .n{{fill:{l};text-anchor:middle;font-size:9px}}.t{{fill:{t}}}.m{{fill:{mu}}}\
         .g{{stroke:{mu};stroke-width:.5}}.mem{{fill:none;stroke-width:1.2}}</style>\n\
         <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"{bg}\"/>\n",
        h = num(height),
        f = pal.forward,
        b = pal.backward,
        w = pal.weight_grad,
        r = pal.recompute,
        o = pal.offload,
        bg = pal.background,
        t = pal.text,
        l = pal.label,
        mu = pal.muted,
    );
    let _ = writeln!(
        out,
        "<text class=\"t\" x=\"{LEFT}\" y=\"16\" font-size=\"13\">{}: p={p} m={} v={v}, makespan {} {}, bubble {:.1}%</text>",
        run.schedule.kind,
        run.schedule.m,
        num(if run.units == Units::Seconds {
            makespan * 1e3
        } else {
            makespan
        }),
        if run.units == Units::Seconds {
            "ms"
        } else {
            "units"
        },
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
    // Ops.
    for s in &sim.timeline.spans {
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
        if s.kind != SpanKind::R && w >= 6.0 * label.len() as f64 + 2.0 {
            let _ = write!(
                out,
                "<text class=\"n\" x=\"{}\" y=\"{}\">{label}</text>",
                num(x0 + w / 2.0),
                num(y + ROW * 0.55)
            );
        }
        out.push('\n');
    }
    // Time axis.
    let step = tick_step(makespan, 10.0);
    let _ = writeln!(
        out,
        "<line class=\"g\" x1=\"{LEFT}\" y1=\"{a}\" x2=\"{}\" y2=\"{a}\"/>",
        num(LEFT + plot_w),
        a = num(axis_y)
    );
    let (scale, unit) = match run.units {
        Units::Seconds => (1e3, "time (ms)"),
        Units::Abstract => (1.0, "time (cost units)"),
    };
    let mut k = 0.0;
    while k * step <= makespan * (1.0 + 1e-9) && k < 100.0 {
        let t = k * step;
        let _ = writeln!(
            out,
            "<text class=\"m\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            num(x(t)),
            num(axis_y + 13.0),
            num(t * scale)
        );
        k += 1.0;
    }
    let _ = writeln!(
        out,
        "<text class=\"m\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{unit}</text>",
        num(LEFT + plot_w),
        num(axis_y + 27.0)
    );
    memory_curves(&mut out, run, pal, mem_top, &x);
    legend(&mut out, legend_y);
    out.push_str("</svg>\n");
    out
}

/// The memory curves of every device under the rows.
fn memory_curves(out: &mut String, run: &Run<'_>, pal: &Palette, top: f64, x: &dyn Fn(f64) -> f64) {
    let sim = run.simulation;
    let value = |curve: &crate::sim::MemoryCurve, bytes: u64| match run.units {
        Units::Seconds => (curve.static_bytes + bytes) as f64 / crate::scenario::GIB,
        Units::Abstract => bytes as f64,
    };
    let peak = sim
        .memory
        .iter()
        .flat_map(|c| c.points.iter().map(move |&(_, b)| value(c, b)))
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let y = |m: f64| top + MEM_H - MEM_H * (m / peak);
    let label = match run.units {
        Units::Seconds => format!("memory per device (GiB, peak {})", num(peak)),
        Units::Abstract => format!("activations per device (peak {})", num(peak)),
    };
    let _ = writeln!(
        out,
        "<text class=\"t\" x=\"{LEFT}\" y=\"{}\">{label}</text>\n<line class=\"g\" x1=\"{LEFT}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\"/>",
        num(top - 4.0),
        num(x(f64::INFINITY)),
        b = num(top + MEM_H)
    );
    let n = sim.memory.len().max(1);
    for (i, curve) in sim.memory.iter().enumerate() {
        // Shades from the forward colour (first device) to the backward colour (last).
        let colour = if i * 2 < n {
            &pal.forward
        } else {
            &pal.backward
        };
        let opacity = 0.35 + 0.65 * (i % n.div_ceil(2).max(1)) as f64 / n.div_ceil(2) as f64;
        let mut pts = String::new();
        let mut last = value(curve, 0);
        let _ = write!(pts, "{},{}", num(x(0.0)), num(y(last)));
        for &(t, b) in &curve.points {
            let m = value(curve, b);
            let _ = write!(
                pts,
                " {},{} {},{}",
                num(x(t)),
                num(y(last)),
                num(x(t)),
                num(y(m))
            );
            last = m;
        }
        let _ = write!(pts, " {},{}", num(x(f64::INFINITY)), num(y(last)));
        let _ = writeln!(
            out,
            "<polyline class=\"mem\" data-device=\"{}\" stroke=\"{colour}\" stroke-opacity=\"{:.2}\" points=\"{pts}\"/>",
            curve.device, opacity
        );
    }
}

/// The legend: one swatch per kind (never of class `op`), chunk shades, copies.
fn legend(out: &mut String, y: f64) {
    let items: [(&str, &str); 6] = [
        ("F", "forward"),
        ("B", "backward (input)"),
        ("W", "backward (weights)"),
        ("BW", "backward (fused)"),
        ("R", "recompute"),
        ("D2H", "offload / reload"),
    ];
    let mut x = LEFT;
    for (class, text) in items {
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
    let _ = writeln!(
        out,
        "<rect class=\"swatch F c1\" x=\"{}\" y=\"{}\" width=\"14\" height=\"10\"/><text class=\"t\" x=\"{}\" y=\"{}\">lighter: later chunk</text>",
        num(x),
        num(y),
        num(x + 18.0),
        num(y + 9.0)
    );
}
