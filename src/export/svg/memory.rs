//! The memory panel of the SVG figure: every device's memory over time (static bytes plus
//! the activations held, in GiB; or chunk-activations for an abstract run) on a y scale
//! with its ticks, the budget as a dashed line, and a key naming each device's curve.

use std::fmt::Write;

use super::{LEFT, Palette, num, tick_step};
use crate::export::{Run, Units};

/// Height of the plot.
const MEM_H: f64 = 110.0;
/// Width of one entry of the device key.
const KEY_W: f64 = 84.0;
/// Height of one row of the device key.
const KEY_H: f64 = 15.0;

/// The panel laid out: where it is and what scale it uses.
pub(super) struct Panel<'a> {
    run: &'a Run<'a>,
    pal: &'a Palette,
    limit: Option<f64>,
    top: f64,
    width: f64,
    /// Top of the y scale, in the panel's unit.
    y_max: f64,
    /// Highest value of any curve.
    peak: f64,
}

impl<'a> Panel<'a> {
    /// The panel of `run` at `top`, in a figure `width` wide, with the budget `limit` (in
    /// the run's memory unit) when known.
    pub(super) fn new(
        run: &'a Run<'a>,
        pal: &'a Palette,
        limit: Option<f64>,
        top: f64,
        width: f64,
    ) -> Self {
        let limit = limit
            .filter(|l| l.is_finite() && *l > 0.0)
            .map(|l| match run.units {
                Units::Seconds => l / crate::scenario::GIB,
                Units::Abstract => l,
            });
        let mut panel = Panel {
            run,
            pal,
            limit,
            top,
            width,
            y_max: 1.0,
            peak: 0.0,
        };
        panel.peak = run
            .simulation
            .memory
            .iter()
            .flat_map(|c| {
                let base = panel.value(c, 0);
                c.points
                    .iter()
                    .map(|&(_, b)| panel.value(c, b))
                    .chain([base])
                    .collect::<Vec<_>>()
            })
            .fold(0.0_f64, f64::max);
        let top_value = panel.peak.max(panel.limit.unwrap_or(0.0));
        let step = tick_step(top_value.max(f64::MIN_POSITIVE), 4.0);
        panel.y_max = ((top_value / step).ceil() * step).max(step);
        panel
    }

    /// A curve's value with `bytes` of activations, in the panel's unit.
    fn value(&self, curve: &crate::sim::MemoryCurve, bytes: u64) -> f64 {
        match self.run.units {
            Units::Seconds => (curve.static_bytes + bytes) as f64 / crate::scenario::GIB,
            Units::Abstract => bytes as f64,
        }
    }

    fn y(&self, m: f64) -> f64 {
        self.top + MEM_H - MEM_H * (m / self.y_max).clamp(0.0, 1.0)
    }

    fn key_per_row(&self) -> usize {
        (((self.width - LEFT - 16.0) / KEY_W).floor() as usize).max(1)
    }

    fn key_rows(&self) -> usize {
        self.run
            .simulation
            .memory
            .len()
            .div_ceil(self.key_per_row())
    }

    /// The lowest y the panel (with its key) takes.
    pub(super) fn bottom(&self) -> f64 {
        self.top + MEM_H + 12.0 + KEY_H * self.key_rows() as f64
    }

    /// Draws the panel; `x` maps a time to the figure's x.
    pub(super) fn draw(&self, out: &mut String, x: &dyn Fn(f64) -> f64) {
        let (unit, title) = match self.run.units {
            Units::Seconds => ("GiB", "memory per device, GiB"),
            Units::Abstract => ("", "activations per device (micro-batch-chunks)"),
        };
        let right = x(f64::INFINITY);
        let _ = writeln!(
            out,
            "<text class=\"t\" x=\"{LEFT}\" y=\"{}\">{title} (peak {})</text>",
            num(self.top - 6.0),
            num(self.peak)
        );
        // The y scale: ticks with grid lines.
        let step = tick_step(self.y_max, 4.0);
        let mut k = 0.0;
        while k * step <= self.y_max * (1.0 + 1e-9) && k < 50.0 {
            let v = k * step;
            let y = num(self.y(v));
            let _ = writeln!(
                out,
                "<line class=\"g\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke-opacity=\"{}\"/>\
                 <text class=\"m\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} {unit}</text>",
                num(right),
                if k == 0.0 { "1" } else { ".35" },
                LEFT - 6.0,
                num(self.y(v) + 3.5),
                num(v)
            );
            k += 1.0;
        }
        if let Some(limit) = self.limit {
            let y = num(self.y(limit));
            let _ = writeln!(
                out,
                "<line class=\"budget\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>\
                 <text class=\"t\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">budget {} {unit}</text>",
                num(right),
                num(right),
                num(self.y(limit) - 3.0),
                self.pal.budget,
                num(limit)
            );
        }
        for (i, curve) in self.run.simulation.memory.iter().enumerate() {
            let (color, dash) = self.pal.device(i);
            let mut pts = String::new();
            let mut last = self.value(curve, 0);
            let _ = write!(pts, "{},{}", num(x(0.0)), num(self.y(last)));
            for &(t, b) in &curve.points {
                let m = self.value(curve, b);
                let _ = write!(
                    pts,
                    " {},{} {},{}",
                    num(x(t)),
                    num(self.y(last)),
                    num(x(t)),
                    num(self.y(m))
                );
                last = m;
            }
            let _ = write!(pts, " {},{}", num(right), num(self.y(last)));
            let dash = dash.map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
            let _ = writeln!(
                out,
                "<polyline class=\"mem\" data-device=\"{}\" stroke=\"{color}\"{dash} points=\"{pts}\"/>",
                curve.device
            );
        }
        self.key(out);
    }

    /// The key: a short line in each device's colour and dash, and its name.
    fn key(&self, out: &mut String) {
        let per_row = self.key_per_row();
        let top = self.top + MEM_H + 12.0;
        for (i, curve) in self.run.simulation.memory.iter().enumerate() {
            let (color, dash) = self.pal.device(i);
            let x = LEFT + KEY_W * (i % per_row) as f64;
            let y = top + KEY_H * (i / per_row) as f64;
            let dash = dash.map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
            let _ = writeln!(
                out,
                "<line class=\"key\" data-device=\"{d}\" x1=\"{}\" y1=\"{yl}\" x2=\"{}\" y2=\"{yl}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
                 <text class=\"t\" x=\"{}\" y=\"{}\">device {d}</text>",
                num(x),
                num(x + 22.0),
                num(x + 27.0),
                num(y + 4.0),
                d = curve.device,
                yl = num(y),
            );
        }
    }
}
