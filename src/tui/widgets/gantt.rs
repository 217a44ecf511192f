//! The Gantt widget: one row per device (plus a transfer lane when there is room), ops as
//! coloured glyphs, micro-batch labels where they fit, overlapped forward-backward pairs drawn
//! as one unit, idle time shaded, a time axis at the bottom. It takes plain data (a timeline,
//! a time window, a theme) and writes cells.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use crate::sim::{Lane, MemoryCurve, Span, SpanKind, Timeline};
use crate::tui::theme::Theme;
use crate::tui::view::format;
use crate::tui::view::layout::GANTT_LABEL;

use super::gantt_pairs;

/// The Gantt of one timeline between `t0` and `t1`.
pub struct Gantt<'a> {
    /// Spans to draw.
    pub timeline: &'a Timeline,
    /// Left edge time.
    pub t0: f64,
    /// Right edge time.
    pub t1: f64,
    /// 1: compute lane only; 2: compute and transfer lanes.
    pub lanes: u16,
    /// Colours and glyphs.
    pub theme: &'a Theme,
    /// The selected device, highlighted in the label column.
    pub selected: Option<u32>,
    /// Memory curves per device, drawn as a sparkline in lane `.1` (a lane above 0).
    pub memory: Option<(&'a [MemoryCurve], u16)>,
    /// Times are abstract cost units (the lesson's equal costs), not seconds: the axis
    /// then counts them as plain numbers.
    pub cost_units: bool,
}

/// Sparkline levels, empty to full.
const SPARK: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Span kinds in the order of [`Cell::time`].
const KINDS: [SpanKind; 12] = [
    SpanKind::F,
    SpanKind::B,
    SpanKind::W,
    SpanKind::BW,
    SpanKind::R,
    SpanKind::D2H,
    SpanKind::H2D,
    SpanKind::Send,
    SpanKind::Kv,
    SpanKind::Gather,
    SpanKind::Scatter,
    SpanKind::A2a,
];

/// Index standing for idle time in a cell's ranking.
const IDLE: usize = KINDS.len();

/// Left-anchored blocks of 1/8 to 7/8 of a cell.
const LEFT_BLOCKS: [&str; 7] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉"];

fn kind_index(kind: SpanKind) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(0)
}

/// What one cell of a lane holds.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    /// Time (in cell widths) covered by each kind of [`KINDS`].
    time: [f64; 12],
    /// The widest single overlap seen, and its micro-batch (for alternating shades).
    best: f64,
    micro_batch: u32,
    /// The chunk of that widest overlap.
    chunk: u32,
}

/// Colour, glyph and label letter of a span kind.
pub fn kind_look(theme: &Theme, kind: SpanKind) -> (Color, char, &'static str) {
    let (c, g) = (&theme.colors, &theme.glyphs);
    match kind {
        SpanKind::F => (c.forward, g.forward, "F"),
        SpanKind::B => (c.backward, g.backward, "B"),
        SpanKind::W => (c.weight_grad, g.weight_grad, "W"),
        SpanKind::BW => (c.backward, g.backward, "B"),
        SpanKind::R => (c.recompute, g.recompute, "R"),
        SpanKind::D2H => (c.offload, g.offload, "↓"),
        SpanKind::H2D => (c.offload, g.offload, "↑"),
        SpanKind::Send => (c.send, g.send, ""),
        // The collectives inside the ops, on the transfer lane: fixed glyphs that read apart
        // in every theme.
        SpanKind::Kv => (c.accent, '≈', "K"),
        SpanKind::Gather => (c.buffer, '▾', "G"),
        SpanKind::Scatter => (c.buffer, '▴', "S"),
        SpanKind::A2a => (c.send, '⇄', "A"),
    }
}

/// Glyphs of a second (odd) chunk: the lower part of a cell, so a V-shape's return leg
/// reads apart from its first leg in every theme, mono included (forward, backward,
/// weight gradient, fused backward).
pub const CHUNK2_GLYPHS: [char; 4] = ['▆', '▄', '▂', '▄'];

/// The glyph of `kind` on chunk `chunk`.
fn glyph_of(theme: &Theme, kind: SpanKind, chunk: u32) -> char {
    let (_, g, _) = kind_look(theme, kind);
    if chunk.is_multiple_of(2) {
        return g;
    }
    match kind {
        SpanKind::F => CHUNK2_GLYPHS[0],
        SpanKind::B => CHUNK2_GLYPHS[1],
        SpanKind::W => CHUNK2_GLYPHS[2],
        SpanKind::BW => CHUNK2_GLYPHS[3],
        _ => g,
    }
}

/// Where things go: the area split into label column, lanes and axis.
struct Geometry {
    area: Rect,
    /// First column of the time area.
    x0: u16,
    /// Columns of the time area.
    width: usize,
    /// Row of the time axis.
    axis_y: u16,
    /// Seconds per column.
    dt: f64,
    lanes: u16,
    /// First device drawn (the rows scroll so the selected device is shown).
    first: u32,
    /// Devices drawn.
    shown: u32,
}

impl Geometry {
    /// Screen row of `lane` of device `d`, when drawn.
    fn row(&self, d: u32, lane: u16) -> Option<u16> {
        if d < self.first || d >= self.first + self.shown || lane >= self.lanes {
            return None;
        }
        row_of(self.area.y, d - self.first, self.lanes, lane).filter(|y| *y < self.axis_y)
    }
}

/// A micro-batch label to draw: lane row index, first cell, cells, the span.
type Label<'a> = (usize, usize, usize, &'a Span);

impl<'a> Gantt<'a> {
    fn geometry(&self, area: Rect) -> Geometry {
        let x0 = area.x + GANTT_LABEL;
        let width = area.right() - x0;
        let lanes = self.lanes.max(1);
        let rows = u32::from((area.height - 1) / lanes);
        let devices = self.timeline.devices;
        let first = first_shown(self.selected.unwrap_or(0), devices, rows);
        Geometry {
            area,
            x0,
            width: usize::from(width),
            axis_y: area.bottom() - 1,
            dt: (self.t1 - self.t0).max(f64::MIN_POSITIVE) / f64::from(width),
            lanes,
            first,
            shown: rows.min(devices.saturating_sub(first)),
        }
    }

    /// Phase 1: the stage labels and the idle background of every drawn row.
    fn draw_rows(&self, geo: &Geometry, buf: &mut Buffer) {
        let theme = self.theme;
        let idle = Style::new().fg(theme.colors.idle);
        for d in geo.first..geo.first + geo.shown {
            let Some(y) = geo.row(d, 0) else { break };
            let style = if self.selected == Some(d) {
                theme.selected()
            } else {
                theme.muted()
            };
            let label = format!("s{d}");
            buf.set_stringn(geo.area.x, y, &label, usize::from(GANTT_LABEL - 1), style);
            for x in geo.x0..geo.area.right() {
                buf[(x, y)].set_char(theme.glyphs.idle).set_style(idle);
            }
            let memory_lane = self.memory.map_or(0, |m| m.1);
            if let Some(y2) = geo.row(d, 1).filter(|_| memory_lane != 1) {
                buf.set_stringn(geo.area.x, y2, " ⇄", 3, theme.muted());
            }
        }
    }

    /// Phase 2: how much of each cell each span kind covers (area-weighted, so a cell
    /// holding many short ops shows the kind that dominates it, not the last one drawn),
    /// and the ops wide enough for a micro-batch label.
    fn coverage(&self, geo: &Geometry) -> (Vec<Cell>, Vec<Label<'a>>) {
        let (w, lanes) = (geo.width, usize::from(geo.lanes));
        let mut cover = vec![Cell::default(); geo.shown as usize * lanes * w];
        let mut labels = Vec::new();
        for span in &self.timeline.spans {
            let transfer_lane = lanes > 1 && self.memory.is_none_or(|m| m.1 != 1);
            let lane: usize = match span.lane {
                Lane::Compute => 0,
                _ if transfer_lane => 1,
                _ => continue,
            };
            let visible = span.device >= geo.first && span.device < geo.first + geo.shown;
            if !visible || span.end < self.t0 || span.start >= self.t1 {
                continue;
            }
            let row = (span.device - geo.first) as usize * lanes + lane;
            let a = ((span.start.max(self.t0) - self.t0) / geo.dt).max(0.0);
            let b = ((span.end.min(self.t1) - self.t0) / geo.dt).min(w as f64);
            let k = kind_index(span.kind);
            let mut c = a.floor() as usize;
            while c < w && (c as f64) < b.max(a + 1e-9) {
                let overlap = (b.min(c as f64 + 1.0) - a.max(c as f64)).max(1e-6);
                let cell = &mut cover[row * w + c];
                cell.time[k] += overlap;
                if overlap > cell.best {
                    cell.best = overlap;
                    cell.micro_batch = span.micro_batch;
                    cell.chunk = span.chunk;
                }
                c += 1;
            }
            // Labels only on ops nearly two cells wide or more: ops of about one and a half
            // cells (a whole iteration in view) would get a number here and there, by
            // rounding luck.
            let (first, last) = (a.round() as usize, (b.round() as usize).min(w));
            if last > first && b - a >= 1.75 {
                labels.push((row, first, last - first, span));
            }
        }
        (cover, labels)
    }

    /// Phase 3: one glyph per cell.
    fn draw_cells(&self, geo: &Geometry, cover: &[Cell], buf: &mut Buffer) {
        let lanes = usize::from(geo.lanes);
        for (i, cell) in cover.iter().enumerate() {
            let (row, c) = (i / geo.width, i % geo.width);
            let lane = (row % lanes) as u16;
            let d = geo.first + (row / lanes) as u32;
            let Some(y) = geo.row(d, lane) else { continue };
            self.draw_cell(cell, lane, (geo.x0 + c as u16, y), buf);
        }
    }

    fn draw_cell(&self, cell: &Cell, lane: u16, (x, y): (u16, u16), buf: &mut Buffer) {
        let theme = self.theme;
        let total: f64 = cell.time.iter().sum();
        // The two largest kinds, with idle time as a ninth "kind" on the compute lane.
        let idle_t = if lane == 0 {
            (1.0 - total).max(0.0)
        } else {
            0.0
        };
        let (mut k, mut t1, mut k2, mut t2) = (IDLE, idle_t, IDLE, -1.0);
        for (i, &t) in cell.time.iter().enumerate() {
            if t > t1 {
                (k2, t2) = (k, t1);
                (k, t1) = (i, t);
            } else if t > t2 {
                (k2, t2) = (i, t);
            }
        }
        // Transfer lanes show any transfer over 5% of a cell; the compute lane shows
        // idle unless a kind covers at least a quarter of the cell.
        let skip_idle = k == IDLE && (lane != 0 || t2 < 0.25);
        let too_thin = lane != 0 && total < 0.05;
        if skip_idle || too_thin {
            return;
        }
        let color = |k: usize| {
            if k == IDLE {
                theme.colors.idle
            } else {
                kind_look(theme, KINDS[k]).0
            }
        };
        if !theme.mono && t2 >= 0.25 * (t1 + t2) && lane == 0 {
            // Two kinds share the cell: a left-anchored block of the first kind's share,
            // drawn over the second kind's colour.
            let eighths = ((8.0 * t1 / (t1 + t2)).round() as usize).clamp(1, 7);
            buf[(x, y)]
                .set_symbol(LEFT_BLOCKS[eighths - 1])
                .set_style(Style::new().fg(color(k)).bg(color(k2)));
            return;
        }
        if k == IDLE {
            return;
        }
        let mut style = theme.glyph(color(k));
        if cell.micro_batch % 2 == 1 && lane == 0 && KINDS[k] != SpanKind::R {
            style = style.add_modifier(Modifier::DIM);
        }
        let glyph = glyph_of(theme, KINDS[k], cell.chunk);
        buf[(x, y)].set_char(glyph).set_style(style);
    }

    /// Phase 4: micro-batch labels on ops wide enough to hold them (the letter lower-case
    /// on a second chunk), except inside an overlapped pair, which has one label of its own.
    fn draw_labels(
        &self,
        geo: &Geometry,
        labels: &[Label],
        pairs: &[gantt_pairs::PairCells],
        buf: &mut Buffer,
    ) {
        for &(row, first, cells, span) in labels {
            let lane = (row % usize::from(geo.lanes)) as u16;
            if lane == 0 && gantt_pairs::overlaps_pair(pairs, span.device, first, cells) {
                continue;
            }
            let Some(y) = geo.row(span.device, lane) else {
                continue;
            };
            let (color, _, letter) = kind_look(self.theme, span.kind);
            let letter = if span.chunk % 2 == 1 {
                letter.to_lowercase()
            } else {
                letter.to_string()
            };
            let number = span.micro_batch.to_string();
            let label = if cells > number.len() + letter.len() {
                format!("{letter}{number}")
            } else if cells > number.len() && lane == 0 {
                number
            } else {
                continue;
            };
            let x = geo.x0 + first as u16;
            buf.set_stringn(x, y, &label, cells, self.theme.label_on(color));
        }
    }
}

impl Gantt<'_> {
    /// Phase 5: each device's activation memory over time as a sparkline in its lane
    /// (scaled to the device's own peak).
    fn draw_memory(&self, geo: &Geometry, buf: &mut Buffer) {
        let Some((curves, lane)) = self.memory.filter(|m| m.1 > 0 && m.1 < geo.lanes) else {
            return;
        };
        let style = self.theme.glyph(self.theme.colors.activation);
        for curve in curves {
            let Some(y) = geo.row(curve.device, lane) else {
                continue;
            };
            buf.set_stringn(geo.area.x, y, " mem", 4, self.theme.muted());
            let peak = curve.points.iter().map(|p| p.1).max().unwrap_or(0).max(1);
            for c in 0..geo.width {
                let t = self.t0 + (c as f64 + 0.5) * geo.dt;
                let i = curve.points.partition_point(|p| p.0 <= t);
                let level = if i == 0 { 0 } else { curve.points[i - 1].1 };
                let k = ((level as f64 / peak as f64) * 8.0).ceil() as usize;
                buf[(geo.x0 + c as u16, y)]
                    .set_char(SPARK[k.min(8)])
                    .set_style(style);
            }
        }
    }
}

impl Widget for Gantt<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height < 2 || area.width <= GANTT_LABEL + 1 {
            return;
        }
        let geo = self.geometry(area);
        self.draw_rows(&geo, buf);
        let (cover, labels) = self.coverage(&geo);
        self.draw_cells(&geo, &cover, buf);
        let pairs = gantt_pairs::pair_cells(
            self.timeline,
            self.t0,
            geo.dt,
            geo.width,
            (geo.first, geo.shown),
        );
        self.draw_labels(&geo, &labels, &pairs, buf);
        gantt_pairs::draw_pairs(&pairs, self.theme, geo.x0, |d| geo.row(d, 0), buf);
        self.draw_memory(&geo, buf);
        draw_axis(
            buf,
            area,
            geo.x0,
            geo.width as u16,
            self.t0,
            geo.dt,
            self.theme,
            self.cost_units,
        );
    }
}

/// The first of `rows` consecutive devices (of `total`) to draw so that `selected` is among
/// them: the top while it fits, then scrolled so the selection sits on the last row.
pub fn first_shown(selected: u32, total: u32, rows: u32) -> u32 {
    if rows == 0 || total <= rows {
        return 0;
    }
    let selected = selected.min(total - 1);
    (selected + 1).saturating_sub(rows).min(total - rows)
}

/// Screen row of `lane` of device `d` (None when off the u16 range).
fn row_of(top: u16, d: u32, lanes: u16, lane: u16) -> Option<u16> {
    let row = u32::from(top) + d * u32::from(lanes) + u32::from(lane);
    u16::try_from(row).ok()
}

#[allow(clippy::too_many_arguments)] // one call site; the geometry comes apart here
fn draw_axis(
    buf: &mut Buffer,
    area: Rect,
    x0: u16,
    width: u16,
    t0: f64,
    dt: f64,
    theme: &Theme,
    cost_units: bool,
) {
    let y = area.bottom() - 1;
    let muted = theme.muted();
    for x in area.x..area.right() {
        buf[(x, y)].set_char(' ').set_style(muted);
    }
    let room = area.right().saturating_sub(x0);
    for (col, label) in axis_ticks(t0, dt, width, room, cost_units) {
        let x = x0 + col;
        buf.set_stringn(x, y, &label, usize::from(area.right() - x), muted);
    }
}

/// The time axis's ticks: `(column from the time area's left edge, label)` for every tick
/// whose label fits in the `room` columns left of the area's right edge. The step is the
/// round one about 14 columns wide; where that leaves a single tick (the second one falls
/// in the last columns, too close to the edge for its label: a v-half lesson 30 columns
/// wide showed only `|0`), finer round steps are tried, as long as their labels still stand
/// apart.
fn axis_ticks(t0: f64, dt: f64, width: u16, room: u16, cost_units: bool) -> Vec<(u16, String)> {
    let mut step = format::nice_step(dt * 14.0);
    let mut ticks = ticks_at(t0, dt, width, room, step, cost_units);
    for _ in 0..3 {
        if ticks.len() >= 2 {
            break;
        }
        step = finer_step(step);
        let finer = ticks_at(t0, dt, width, room, step, cost_units);
        let apart = finer
            .windows(2)
            .all(|w| usize::from(w[1].0 - w[0].0) > w[0].1.chars().count());
        if !apart {
            break;
        }
        ticks = finer;
    }
    ticks
}

/// The ticks of one `step` that fit (see [`axis_ticks`]).
fn ticks_at(
    t0: f64,
    dt: f64,
    width: u16,
    room: u16,
    step: f64,
    cost_units: bool,
) -> Vec<(u16, String)> {
    let mut ticks = Vec::new();
    let mut k = (t0 / step).ceil();
    loop {
        let t = k * step;
        let col = ((t - t0) / dt).round();
        if !col.is_finite() || col >= f64::from(width) {
            break;
        }
        let col = col.max(0.0) as u16;
        let label = if cost_units {
            let decimals = if step >= 1.0 {
                0
            } else if step >= 0.1 {
                1
            } else {
                2
            };
            format!("|{t:.decimals$}")
        } else {
            format!("|{}", format::tick(t, step))
        };
        if label.chars().count() <= usize::from(room.saturating_sub(col)) {
            ticks.push((col, label));
        }
        k += 1.0;
    }
    ticks
}

/// The round step below `step` in the 1, 2, 5 sequence (50 → 20 → 10 → 5).
fn finer_step(step: f64) -> f64 {
    let base = 10f64.powf(step.log10().floor());
    let m = (step / base).round();
    if m >= 5.0 {
        2.0 * base
    } else if m >= 2.0 {
        base
    } else {
        0.5 * base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline() -> Timeline {
        let span = |device, kind, micro_batch, start, end| Span {
            device,
            lane: Lane::Compute,
            kind,
            micro_batch,
            chunk: 0,
            start,
            end,
            paired: false,
        };
        Timeline {
            devices: 2,
            spans: vec![
                span(0, SpanKind::F, 0, 0.0, 1.0),
                span(0, SpanKind::F, 1, 1.0, 2.0),
                span(1, SpanKind::F, 0, 1.0, 2.0),
                span(1, SpanKind::R, 0, 2.0, 3.0),
                span(1, SpanKind::BW, 0, 3.0, 4.0),
            ],
            makespan: 4.0,
        }
    }

    #[test]
    fn draws_labels_glyphs_and_idle() {
        let theme = Theme::builtin("mono");
        let tl = timeline();
        let area = Rect::new(0, 0, 4 + 16, 3);
        let mut buf = Buffer::empty(area);
        Gantt {
            timeline: &tl,
            t0: 0.0,
            t1: 4.0,
            lanes: 1,
            theme: &theme,
            selected: Some(1),
            memory: None,
            cost_units: false,
        }
        .render(area, &mut buf);
        let row = |y: u16| -> String {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        };
        assert_eq!(row(0), "s0  F0██F1██········");
        assert_eq!(row(1), "s1  ····F0██R0░░B0▓▓");
        assert!(row(2).starts_with("    |0 s"), "{}", row(2));
    }

    /// The lesson's v-half (p 4, m 8, equal costs: 53 units) in a 30-column Gantt, as at 60
    /// terminal columns: the round step of 50 puts its second tick two columns from the
    /// edge, where `|50` does not fit; the axis takes the step of 20 instead of showing
    /// `|0` alone.
    #[test]
    fn a_narrow_axis_keeps_at_least_two_ticks() {
        let theme = Theme::builtin("mono");
        let tl = timeline();
        let area = Rect::new(0, 0, 4 + 30, 3);
        let mut buf = Buffer::empty(area);
        Gantt {
            timeline: &tl,
            t0: 0.0,
            t1: 53.0,
            lanes: 1,
            theme: &theme,
            selected: None,
            memory: None,
            cost_units: true,
        }
        .render(area, &mut buf);
        let axis: String = (0..area.width)
            .map(|x| buf[(x, 2)].symbol().to_string())
            .collect();
        assert_eq!(axis.trim_end(), "    |0         |20         |40", "{axis}");
        assert_eq!(finer_step(50.0), 20.0);
        assert_eq!(finer_step(20.0), 10.0);
        assert_eq!(finer_step(10.0), 5.0);
        assert_eq!(finer_step(0.5), 0.2);
    }

    /// Where the round step already gives two ticks, it stays (no finer, busier axis).
    #[test]
    fn an_axis_with_two_ticks_keeps_its_step() {
        let ticks = axis_ticks(0.0, 33.0 / 30.0, 30, 30, true);
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["|0", "|20"]);
    }
}
