//! The sweep view: for the current model, GPU, GPU count and global batch, every solved
//! layout as a point of iteration time against peak memory (ratatui's `Chart`), the front
//! (no other layout is both faster and smaller) as a line, and the ranked list beside it
//! (below it on narrow screens) with the selection. While the sweep runs, its progress (a
//! bar and the count); after an edit, the previous answer stays under it, dimmed, and the
//! status line says which settings it answers, until the new answer replaces it. Over the
//! dimmed chart (or alone, on the first sweep), the front of what the running sweep has solved
//! so far, in the normal style and marked `forming · 37 %`: provisional, replaced by the
//! answer's front when it arrives (the ranked list only ever shows a finished answer).
//!
//! ```text
//! ┌ sweep · gpt3-175b on 64 × a100-80gb · batch 64 · s 16384 ──────────────────────────┐
//! │ 812 configurations · 96 feasible · front 5 · ↑↓ pick · ⏎ load · o back              │
//! │ iter s                                  │   t×cp×p×d  b    m v fl  schedule  ...   │
//! │ 12 ┤•  •                                │ ◆ 8×1×8×1   1   64 1 S·· 1f1b      ...   │
//! │    │ ◆──◆──◆                            │                                          │
//! │    └──────────── peak GiB               │                                          │
//! └─────────────────────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Widget};

use crate::scenario::GIB;
use crate::sweep::{Row, SweepResult};
use crate::tui::app::App;

use super::format;
use super::metrics::fit_words;
use super::sweep_forming::{forming_alone, overlay_forming};

/// Width of the area from which the chart and the list sit side by side.
const SIDE_BY_SIDE: u16 = 100;

/// Draws the sweep view over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 5 || area.width < 20 {
        return;
    }
    let theme = &app.theme;
    let sc = &app.scenario;
    let s = &app.sweep;
    let (gpus, batch) = s
        .inputs
        .as_ref()
        .map_or((0, 0), |i| (i.gpus, i.global_batch));
    // Whole pieces only, the least important last.
    let pieces = [
        format!("{} on {gpus} × {}", sc.model.name, sc.gpu.name),
        format!("batch {batch}"),
        format!("s {}", sc.batch.seq_len),
    ];
    let room = usize::from(area.width.saturating_sub(4));
    let mut title = " sweep".to_string();
    for p in pieces {
        if title.chars().count() + p.chars().count() + 4 > room {
            break;
        }
        title.push_str(" · ");
        title.push_str(&p);
    }
    title.push(' ');
    let inner = super::panel(title, theme, area, buf);
    let (status, style) = status_line(app);
    let room = usize::from(inner.width);
    let status = match short_status(app) {
        // Only where even the first piece (what is dimmed and why) would be cut.
        Some(short) if status.split(" · ").next().map_or(0, |f| f.chars().count()) > room => short,
        _ => status,
    };
    let status = fit_pieces(&status, room);
    buf.set_stringn(inner.x, inner.y, status, usize::from(inner.width), style);
    let mut top = 1;
    if s.running && inner.height > 1 {
        progress_bar(inner.x, inner.y + 1, inner.width, s.progress, buf, app);
        top = 2;
    }
    let body = Rect {
        y: inner.y + top,
        height: inner.height.saturating_sub(top),
        ..inner
    };
    // The finished answer, else the previous one (dimmed) while the new sweep runs.
    let dimmed = s.answer().is_none();
    // The front forming, only while its sweep runs (never once an answer is in).
    let forming: Vec<(f64, f64)> = if s.running {
        s.forming.iter().map(point).collect()
    } else {
        Vec::new()
    };
    let Some(r) = s.shown().filter(|r| !r.ranked.is_empty()) else {
        forming_alone(body, buf, app, &forming);
        return;
    };
    let list_w = list_width(body.width);
    let (chart, list) = if body.width >= SIDE_BY_SIDE {
        let chart_w = body.width.saturating_sub(list_w + 1);
        (
            Rect {
                width: chart_w,
                ..body
            },
            Rect {
                x: body.x + chart_w + 1,
                width: body.width - chart_w - 1,
                ..body
            },
        )
    } else {
        let chart_h = (body.height / 2).max(6).min(body.height);
        (
            Rect {
                height: chart_h,
                ..body
            },
            Rect {
                y: body.y + chart_h,
                height: body.height - chart_h,
                ..body
            },
        )
    };
    let axes = render_chart(chart, buf, app, r, &forming);
    render_list(list, buf, app, r);
    if dimmed {
        // The old settings' answer, in the theme's dim style.
        buf.set_style(body, dim(app));
        if let Some(axes) = axes.filter(|_| !forming.is_empty()) {
            overlay_forming(chart, buf, app, axes, &forming);
        }
    }
}

/// The bounds of a chart's axes: peak GiB, then iteration seconds.
pub(super) type Axes = ([f64; 2], [f64; 2]);

/// The style laid over the previous answer: the theme's muted text, dimmed, not bold.
fn dim(app: &App) -> Style {
    app.theme
        .muted()
        .add_modifier(Modifier::DIM)
        .remove_modifier(Modifier::BOLD)
}

/// The running sweep's progress: a bar over the width with `done/total candidates` at its
/// right end (before the first candidate is decided, what the sweep is doing). It counts the
/// candidates the sweep decides, which is what the bar measures; the configurations ruled out
/// by their memory bound before it starts are not in it.
fn progress_bar(
    x: u16,
    y: u16,
    width: u16,
    (done, total): (usize, usize),
    buf: &mut Buffer,
    app: &App,
) {
    let w = usize::from(width);
    if total == 0 {
        let text = "░ enumerating and bounding the layouts…";
        buf.set_stringn(x, y, text, w, app.theme.muted());
        return;
    }
    let count = format!(" {}/{} candidates", done.min(total), total);
    let bar_w = w.saturating_sub(count.chars().count());
    let full = bar_w * done.min(total) / total.max(1);
    let bar = format!("{}{}", "█".repeat(full), "░".repeat(bar_w - full));
    buf.set_stringn(x, y, &bar, w, app.theme.accent());
    let at = x + u16::try_from(bar_w).unwrap_or(width);
    buf.set_stringn(at, y, count, w - bar_w, app.theme.text());
}

/// `text` cut after its last whole ` · `-separated piece that fits in `room` (words only
/// when even the first piece does not fit).
fn fit_pieces(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let mut out = String::new();
    for piece in text.split(" · ") {
        let extra = if out.is_empty() { 0 } else { 3 } + piece.chars().count();
        if out.chars().count() + extra > room {
            break;
        }
        if !out.is_empty() {
            out.push_str(" · ");
        }
        out.push_str(piece);
    }
    if out.is_empty() {
        fit_words(text, room)
    } else {
        out
    }
}

/// The status of a sweep running under the previous answer, for a narrow view: the edit
/// whole (`dimmed · budget → 73.6 GiB`, the progress bar under it) rather than the start
/// of the long form.
fn short_status(app: &App) -> Option<String> {
    let s = &app.sweep;
    let (true, Some(p), Some(now)) = (s.running, &s.previous, &s.inputs) else {
        return None;
    };
    Some(format!(
        "dimmed · {}",
        crate::tui::sweep::changes_to(&p.inputs, now)
    ))
}

/// What the sweep is doing, or what it found, with the view's keys.
fn status_line(app: &App) -> (String, Style) {
    let theme = &app.theme;
    let s = &app.sweep;
    let cancelled = match s.cancelled {
        0 => String::new(),
        1 => " · 1 earlier sweep cancelled by an edit".into(),
        n => format!(" · {n} earlier sweeps cancelled by edits"),
    };
    if s.running {
        let (done, total) = s.progress;
        let text = if total == 0 {
            "sweeping: enumerating and bounding the layouts…".to_string()
        } else {
            // The total is the candidates (the layouts whose memory bound fits), not the
            // configurations the answer counts: a candidate is decided when it is solved or
            // pruned by a better one, and pruning is quick, so the count can run ahead.
            let forming = match s.forming.len() {
                0 => String::new(),
                1 => " · forming: 1 point so far, provisional".to_string(),
                n => format!(" · forming: the front of {n} points so far, provisional"),
            };
            format!(
                "sweeping: {done}/{total} candidates decided{forming} · candidates: layouts whose \
                 memory bound fits · each solved or pruned by a better one"
            )
        };
        return match (&s.previous, &s.inputs) {
            (Some(p), Some(now)) => (
                format!(
                    "dimmed: the answer before {} · {text}{cancelled}",
                    crate::tui::sweep::changes(&p.inputs, now)
                ),
                theme.warning(),
            ),
            _ => (format!("{text}{cancelled}"), theme.accent()),
        };
    }
    match &s.result {
        None => ("o sweeps the current scenario".into(), theme.muted()),
        Some(Err(e)) => (format!("✗ sweep: {e}"), theme.error()),
        Some(Ok(r)) if r.cancelled => (
            if s.previous.is_some() {
                "sweep cancelled (o sweeps again) · dimmed: the answer for the earlier settings"
                    .into()
            } else {
                "sweep cancelled (o sweeps again)".into()
            },
            theme.warning(),
        ),
        Some(Ok(r)) if r.ranked.is_empty() => (
            format!(
                "{} configurations, none fits: raise the budget or the GPU count",
                r.configs()
            ),
            theme.warning(),
        ),
        Some(Ok(r)) => (
            format!(
                "{} configurations · {}{} feasible · front {} · {} solved{} · ↑↓ pick · ⏎ load · o back{cancelled}",
                r.configs(),
                // Pruned configurations were never solved: the count is a lower bound then.
                if r.pruned() > 0 { "≥ " } else { "" },
                r.feasible(),
                r.pareto.len(),
                r.solved(),
                s.reused
                    .map(|(reused, _)| format!(" ({reused} from earlier sweeps)"))
                    .unwrap_or_default()
            ),
            theme.text(),
        ),
    }
}

fn point(r: &Row) -> (f64, f64) {
    (r.peak_memory_bytes as f64 / GIB, r.iteration_time_s)
}

pub(super) fn bounds(values: impl Iterator<Item = f64>) -> [f64; 2] {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return [0.0, 1.0];
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-9);
    [(lo - pad).max(0.0), hi + pad]
}

/// The three tick values of an axis with bounds `b`: both ends and the middle.
fn ticks(b: [f64; 2]) -> [f64; 3] {
    [b[0], (b[0] + b[1]) / 2.0, b[1]]
}

/// The iteration axis's tick labels: one unit for the axis (that of its largest tick: s,
/// ms or µs) and one precision, the fewest decimals (none to three) that tell every two
/// neighbouring ticks apart ("95 s 100 s 105 s", "0.8 s 1.2 s 1.6 s"; not "95.0 s 100 s").
fn time_labels(b: [f64; 2]) -> Vec<String> {
    let values = ticks(b);
    let top = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let (scale, unit) = if top >= 1.0 {
        (1.0, "s")
    } else if top >= 1e-3 {
        (1e3, "ms")
    } else {
        (1e6, "µs")
    };
    let scaled = values.map(|v| v * scale);
    let step = (scaled[2] - scaled[0]).abs() / 2.0;
    let with = |d: usize| scaled.map(|v| format!("{v:.d$} {unit}"));
    // Apart, and each within a tenth of a step of its value (0.5 is not "0").
    let close = |d: usize| {
        let f = 10f64.powi(d as i32);
        scaled
            .iter()
            .all(|v| ((v * f).round() / f - v).abs() <= step / 10.0)
    };
    let d = (0..=3)
        .find(|&d| close(d) && with(d).windows(2).all(|w| w[0] != w[1]))
        .unwrap_or(3);
    with(d).to_vec()
}

/// The peak axis's tick labels in GiB with the decimals (none to three) that tell every two
/// neighbouring ticks apart, one precision for all of them ("0.9 1.3 1.6", not "1 1 2").
fn gib_labels(b: [f64; 2]) -> Vec<String> {
    let values = ticks(b);
    let with = |d: usize| values.map(|v| format!("{v:.d$}"));
    let d = (0..=3)
        .find(|&d| with(d).windows(2).all(|w| w[0] != w[1]))
        .unwrap_or(3);
    with(d).to_vec()
}

/// Draws the answer's chart in `area`, its axes wide enough for the `forming` points too;
/// the axes drawn (none when the area is too small for a chart).
fn render_chart(
    area: Rect,
    buf: &mut Buffer,
    app: &App,
    r: &SweepResult,
    forming: &[(f64, f64)],
) -> Option<Axes> {
    if area.height < 4 || area.width < 16 {
        return None;
    }
    let theme = &app.theme;
    let solved: Vec<(f64, f64)> = r.rows.iter().filter(|x| x.feasible()).map(point).collect();
    let mut front: Vec<(f64, f64)> = r.pareto.iter().map(|&i| point(&r.rows[i])).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let selected: Vec<(f64, f64)> = app.sweep.shown_row().map(point).into_iter().collect();
    let x = bounds(solved.iter().chain(forming).map(|p| p.0));
    let y = bounds(solved.iter().chain(forming).map(|p| p.1));
    let datasets = vec![
        Dataset::default()
            .name("feasible")
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.muted())
            .data(&solved),
        Dataset::default()
            .name("front")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.accent())
            .data(&front),
        Dataset::default()
            .name("selected")
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(theme.error())
            .data(&selected),
    ];
    chart(app, (x, y), datasets).render(area, buf);
    Some((x, y))
}

/// A chart of `datasets` on the axes `(x, y)`, labelled as the sweep view labels them.
pub(super) fn chart<'a>(app: &App, (x, y): Axes, datasets: Vec<Dataset<'a>>) -> Chart<'a> {
    let theme = &app.theme;
    Chart::new(datasets)
        .legend_position(None)
        .x_axis(
            Axis::default()
                .title(Span::styled("peak GiB", theme.muted()))
                .style(theme.muted())
                .bounds(x)
                .labels(
                    gib_labels(x)
                        .into_iter()
                        .map(Line::from)
                        .collect::<Vec<_>>(),
                ),
        )
        .y_axis(
            Axis::default()
                .title(Span::styled("iter", theme.muted()))
                .style(theme.muted())
                .bounds(y)
                .labels(
                    time_labels(y)
                        .into_iter()
                        .map(Line::from)
                        .collect::<Vec<_>>(),
                ),
        )
}

/// Width of the list's lines for a body of `width` (the wide form when the list sits
/// beside the chart or has the room).
fn list_width(width: u16) -> u16 {
    if width >= SIDE_BY_SIDE || width >= 66 {
        66
    } else {
        55
    }
}

/// Significant figures that tell apart every two neighbouring times of `times` that differ
/// (beyond floating-point noise): four at least (hundreds of seconds keep a decimal), eight
/// at most.
pub fn figures_apart(times: &[f64]) -> usize {
    (4..=8)
        .find(|&sig| {
            times.windows(2).all(|w| {
                crate::sweep::front::same_time(w[0], w[1])
                    || format::time_sig(w[0], sig) != format::time_sig(w[1], sig)
            })
        })
        .unwrap_or(8)
}

/// The peaks' decimals in GiB that tell neighbours apart (one at least, four at most).
fn gib_decimals(peaks: &[u64]) -> usize {
    let mut sorted = peaks.to_vec();
    sorted.sort_unstable();
    (1..=4)
        .find(|&d| {
            sorted.windows(2).all(|w| {
                w[0] == w[1]
                    || format!("{:.d$}", w[0] as f64 / GIB) != format!("{:.d$}", w[1] as f64 / GIB)
            })
        })
        .unwrap_or(4)
}

/// How the list's columns are formatted for the lines shown.
struct Columns {
    /// Schedule column width.
    schedule: usize,
    /// Significant figures of the times.
    sig: usize,
    /// Width of the time column.
    time: usize,
    /// Decimals of the peaks in GiB.
    gib: usize,
    /// Width of the GiB column.
    gib_w: usize,
    /// Whether the list has an expert-parallel column (`ep`, or `ep/etp` with expert tensor
    /// parallelism): shown when some configuration of the sweep runs its experts over more
    /// than one rank, so that two lines that differ only there tell themselves apart.
    experts: bool,
}

/// A column of the ranked list, in the order drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Layout,
    Ep,
    B,
    M,
    Chunks,
    Flags,
    Schedule,
    Iter,
    Gib,
    Strategy,
}

/// The columns a narrow list keeps first, most telling first: the layout and the time it
/// is ranked by, then the others ([`hidden_columns`] picks among them by what differs).
const KEEP_FIRST: [Col; 10] = [
    Col::Layout,
    Col::Iter,
    Col::Gib,
    Col::Schedule,
    Col::Strategy,
    Col::M,
    Col::B,
    Col::Chunks,
    Col::Flags,
    Col::Ep,
];

/// The header's cells, as wide as the lines' cells.
fn header_cells(cols: &Columns) -> Vec<(Col, String)> {
    let (sw, tw, gw) = (cols.schedule, cols.time, cols.gib_w);
    let mut out = vec![(Col::Layout, format!("{:<9}", "t×cp×p×d"))];
    if cols.experts {
        out.push((Col::Ep, format!("{:>5}", "ep")));
    }
    out.extend([
        (Col::B, format!("{:>2}", "b")),
        (Col::M, format!("{:>4}", "m")),
        (Col::Chunks, "v".to_string()),
        (Col::Flags, format!("{:<3}", "fl")),
        (Col::Schedule, format!("{:<sw$}", "schedule")),
        (Col::Iter, format!("{:>tw$}", "iter")),
        (Col::Gib, format!("{:>gw$}", "GiB")),
        (Col::Strategy, "strategy".to_string()),
    ]);
    out
}

/// One line's cells: layout `t×cp×p×d`, batch split, chunks, flags (sequence parallelism
/// `S`; the ZeRO stage `1` or `3`; fp8 `8`; `·` for off, 0 and bf16), schedule, iteration
/// time, peak, then the strategies (several when they tie).
fn row_cells(r: &Row, strategies: &str, cols: &Columns) -> Vec<(Col, String)> {
    let c = &r.config;
    let flags = format!(
        "{}{}{}",
        if c.sp { "S" } else { "·" },
        match c.zero {
            crate::scenario::Zero::Off => "·",
            crate::scenario::Zero::Optimizer => "1",
            crate::scenario::Zero::Full => "3",
        },
        if c.precision.is_fp8() { "8" } else { "·" }
    );
    let (sw, tw, gw, gd) = (cols.schedule, cols.time, cols.gib_w, cols.gib);
    let layout = format!("{}×{}×{}×{}", c.t, c.cp, c.p, c.d);
    let mut out = vec![(Col::Layout, format!("{layout:<9}"))];
    if cols.experts {
        let ep = if c.etp > 1 {
            format!("{}/{}", c.ep, c.etp)
        } else {
            c.ep.to_string()
        };
        out.push((Col::Ep, format!("{ep:>5}")));
    }
    out.extend([
        (Col::B, format!("{:>2}", c.b)),
        (Col::M, format!("{:>4}", c.m)),
        (Col::Chunks, c.chunks.to_string()),
        (Col::Flags, flags),
        (
            Col::Schedule,
            format!("{:<sw$}", format::cut(c.schedule.name(), sw)),
        ),
        (
            Col::Iter,
            format!("{:>tw$}", format::time_sig(r.iteration_time_s, cols.sig)),
        ),
        (
            Col::Gib,
            format!("{:>gw$.gd$}", r.peak_memory_bytes as f64 / GIB),
        ),
        (Col::Strategy, strategies.to_string()),
    ]);
    out
}

/// The cells not in `hidden`, joined by spaces and cut with "…" to `width`.
fn join_cells(cells: &[(Col, String)], hidden: &[Col], width: usize) -> String {
    let text: Vec<&str> = cells
        .iter()
        .filter(|(c, _)| !hidden.contains(c))
        .map(|(_, t)| t.as_str())
        .collect();
    format::cut(&text.join(" "), width)
}

/// One line of the ranked list ([`row_cells`]) with every column, cut with "…" to `width`.
#[cfg(test)]
fn row_text(r: &Row, strategies: &str, cols: &Columns, width: usize) -> String {
    join_cells(&row_cells(r, strategies, cols), &[], width)
}

/// The columns to leave out so that lines of `width` keep what tells them apart (`lines`:
/// each line's cells; none when every line fits whole). The layout and the time stay
/// (where they fit); then, while two lines read the same, the column that tells the most
/// such pairs apart (the first of [`KEEP_FIRST`] on a tie); then the others in that order,
/// while they fit. The strategies come last on a line and may be cut.
fn hidden_columns(lines: &[Vec<(Col, String)>], width: usize) -> Vec<Col> {
    let widest = |col: Col| {
        lines
            .iter()
            .filter_map(|cells| cells.iter().find(|(c, _)| *c == col))
            .map(|(_, t)| t.chars().count())
            .max()
    };
    let present: Vec<Col> = KEEP_FIRST
        .iter()
        .copied()
        .filter(|&c| widest(c).is_some())
        .collect();
    let whole: usize = present.iter().filter_map(|&c| widest(c)).sum::<usize>() + present.len();
    if whole.saturating_sub(1) <= width {
        return Vec::new();
    }
    // A column's room on the line: its widest cell and a space (the strategies: a few
    // letters, cut after).
    let room = |col: Col| {
        1 + if col == Col::Strategy {
            4
        } else {
            widest(col).unwrap_or(0)
        }
    };
    let value = |cells: &Vec<(Col, String)>, col: Col| {
        cells
            .iter()
            .find(|(c, _)| *c == col)
            .map(|(_, t)| t.clone())
    };
    let key = |cells: &Vec<(Col, String)>, kept: &[Col]| -> Vec<Option<String>> {
        kept.iter().map(|&c| value(cells, c)).collect()
    };
    // Pairs of lines that read the same on the kept columns.
    let alike = |kept: &[Col]| -> Vec<(usize, usize)> {
        let keys: Vec<_> = lines.iter().map(|l| key(l, kept)).collect();
        let mut out = Vec::new();
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                if keys[i] == keys[j] {
                    out.push((i, j));
                }
            }
        }
        out
    };
    let mut kept: Vec<Col> = Vec::new();
    let mut used = 0;
    for col in [Col::Layout, Col::Iter] {
        if present.contains(&col) && used + room(col) <= width + 1 {
            used += room(col);
            kept.push(col);
        }
    }
    loop {
        let pairs = alike(&kept);
        let fits = |c: &Col| !kept.contains(c) && used + room(*c) <= width + 1;
        let next = if pairs.is_empty() {
            present.iter().copied().find(|c| fits(c))
        } else {
            // The column that tells the most alike pairs apart (the first on a tie).
            present
                .iter()
                .copied()
                .filter(|c| fits(c))
                .map(|c| {
                    let apart = pairs
                        .iter()
                        .filter(|&&(i, j)| value(&lines[i], c) != value(&lines[j], c))
                        .count();
                    (apart, c)
                })
                .filter(|&(apart, _)| apart > 0)
                .fold(None, |best: Option<(usize, Col)>, (apart, c)| match best {
                    Some((b, _)) if b >= apart => best,
                    _ => Some((apart, c)),
                })
                .map(|(_, c)| c)
                .or_else(|| present.iter().copied().find(|c| fits(c)))
        };
        let Some(col) = next else { break };
        used += room(col);
        kept.push(col);
    }
    present.into_iter().filter(|c| !kept.contains(c)).collect()
}

fn render_list(area: Rect, buf: &mut Buffer, app: &App, r: &SweepResult) {
    if area.height < 2 {
        return;
    }
    let theme = &app.theme;
    let lines_all = app.sweep.lines();
    let width = usize::from(area.width).saturating_sub(2);
    let rows = usize::from(area.height) - 1;
    let selected = app.sweep.selected.min(lines_all.len().saturating_sub(1));
    // The selection stays in view: the list scrolls by whole pages.
    let first = selected / rows.max(1) * rows.max(1);
    let shown: Vec<&Vec<usize>> = lines_all.iter().skip(first).take(rows).collect();
    let times: Vec<f64> = lines_all
        .iter()
        .map(|l| r.rows[l[0]].iteration_time_s)
        .collect();
    let peaks: Vec<u64> = lines_all
        .iter()
        .map(|l| r.rows[l[0]].peak_memory_bytes)
        .collect();
    let sig = figures_apart(&times);
    let gib = gib_decimals(&peaks);
    let cols = Columns {
        schedule: if area.width >= 62 { 11 } else { 7 },
        sig,
        time: times
            .iter()
            .map(|t| format::time_sig(*t, sig).chars().count())
            .max()
            .unwrap_or(4)
            .max(4),
        gib,
        gib_w: (gib + 3).max(3),
        experts: r.rows.iter().any(|row| row.config.ep * row.config.etp > 1),
    };
    let strategies_of = |line: &Vec<usize>| -> String {
        line.iter()
            .map(|&i| r.rows[i].config.strategy.name())
            .collect::<Vec<_>>()
            .join(",")
    };
    // Every line's cells (a few dozen lines), to find the columns that tell none apart.
    let all_cells: Vec<Vec<(Col, String)>> = lines_all
        .iter()
        .map(|l| row_cells(&r.rows[l[0]], &strategies_of(l), &cols))
        .collect();
    // The columns are chosen by what tells the lines of this page apart.
    let page: Vec<Vec<(Col, String)>> = all_cells.iter().skip(first).take(rows).cloned().collect();
    let hidden = hidden_columns(&page, width);
    let header = format!(
        "  {}",
        join_cells(&header_cells(&cols), &hidden, usize::MAX)
    );
    // Where the page is, on the header line's right (the header gives way by whole column names).
    let pos = (lines_all.len() > rows).then(|| format!(" {}/{} ", selected + 1, lines_all.len()));
    let header_room = (width + 2).saturating_sub(pos.as_ref().map_or(0, |p| p.chars().count()));
    let mut lines = vec![Line::styled(
        format::cut_at_word(&header, header_room),
        theme.muted(),
    )];
    for (k, line) in shown.iter().enumerate() {
        let k = first + k;
        let mark = if line.iter().any(|i| r.pareto.contains(i)) {
            "◆ "
        } else {
            "  "
        };
        let text = join_cells(&all_cells[k], &hidden, width);
        if k == selected {
            lines.push(Line::styled(format!("{mark}{text}"), theme.selected()));
        } else {
            lines.push(Line::from(vec![
                Span::styled(mark, theme.accent()),
                Span::styled(text, theme.text()),
            ]));
        }
    }
    Paragraph::new(lines).render(area, buf);
    if let Some(pos) = pos {
        let x = area.right().saturating_sub(pos.chars().count() as u16);
        buf.set_stringn(x, area.y, pos, usize::from(area.width), theme.accent());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fit_their_width_and_times_have_the_figures_that_tell_them_apart() {
        let sc = crate::tui::fixture::scenario("gpt3");
        let r = crate::tui::fixture::sweep::result(&sc, 64, 64);
        let cols = Columns {
            schedule: 7,
            sig: 4,
            time: 8,
            gib: 1,
            gib_w: 5,
            experts: false,
        };
        for row in &r.rows {
            let text = row_text(row, "adapipe,none,full", &cols, 50);
            assert!(text.chars().count() <= 50, "{text}");
        }
        // The layout reads t×cp×p×d; the flags give sp, the ZeRO stage and fp8.
        let mut row = r.rows[0].clone();
        let c = row.config;
        let text = row_text(&row, "none", &cols, 200);
        assert!(
            text.starts_with(&format!("{}×{}×{}×{} ", c.t, c.cp, c.p, c.d)),
            "{text}"
        );
        row.config.sp = true;
        row.config.zero = crate::scenario::Zero::Full;
        row.config.precision = crate::scenario::Precision::Fp8;
        assert!(row_text(&row, "none", &cols, 200).contains(" S38 "));
        row.config.sp = false;
        row.config.zero = crate::scenario::Zero::Off;
        row.config.precision = crate::scenario::Precision::Bf16;
        assert!(row_text(&row, "none", &cols, 200).contains(" ··· "));
        // With expert parallelism in the sweep, the ep column (ep/etp) follows the layout.
        let moe = Columns {
            experts: true,
            ..cols
        };
        row.config.ep = 8;
        let text = row_text(&row, "none", &moe, 200);
        let lay = format!("{}×{}×{}×{}", c.t, c.cp, c.p, c.d);
        assert!(text.starts_with(&format!("{lay:<9}     8 ")), "{text}");
        row.config.etp = 2;
        let text = row_text(&row, "none", &moe, 200);
        assert!(text.starts_with(&format!("{lay:<9}   8/2 ")), "{text}");
        assert_eq!(figures_apart(&[177.21, 177.24, 180.0]), 5);
        assert_eq!(figures_apart(&[177.2, 177.2, 180.0]), 4);
        assert_eq!(figures_apart(&[82.544, 82.740]), 4);
        assert_eq!(figures_apart(&[82.544, 82.549]), 4);
    }

    /// Two lines that differ only in peak and strategy, at a width that cuts both: the
    /// layout, the time and the peak that tells them apart stay, columns that tell nothing
    /// apart go, so the lines stay apart (cut at the end they read the same).
    #[test]
    fn a_narrow_list_leaves_out_the_columns_that_tell_no_line_apart() {
        let sc = crate::tui::fixture::scenario("gpt3");
        let r = crate::tui::fixture::sweep::result(&sc, 64, 64);
        let cols = Columns {
            schedule: 7,
            sig: 4,
            time: 6,
            gib: 1,
            gib_w: 5,
            experts: false,
        };
        let a = r.rows[0].clone();
        let mut b = a.clone();
        b.config.strategy = crate::scenario::Strategy::Full;
        b.peak_memory_bytes = a.peak_memory_bytes + (10 << 30);
        let width = 34;
        assert_eq!(
            row_text(&a, "adapipe", &cols, width),
            row_text(&b, "full", &cols, width),
            "the case this test is for: cut at the end, the lines read the same"
        );
        let lines = vec![
            row_cells(&a, "adapipe", &cols),
            row_cells(&b, "full", &cols),
        ];
        let hidden = hidden_columns(&lines, width);
        let (ta, tb) = (
            join_cells(&lines[0], &hidden, width),
            join_cells(&lines[1], &hidden, width),
        );
        assert_ne!(ta, tb);
        assert!(ta.chars().count() <= width && tb.chars().count() <= width);
        for col in [Col::Layout, Col::Iter, Col::Gib] {
            assert!(!hidden.contains(&col), "{col:?} in {hidden:?}");
        }
        // Wide enough for everything, nothing is left out.
        assert!(hidden_columns(&lines, 200).is_empty());
    }

    #[test]
    fn peak_ticks_have_the_decimals_that_tell_them_apart() {
        assert_eq!(gib_labels([0.95, 1.6]), ["0.9", "1.3", "1.6"]);
        assert_eq!(gib_labels([10.0, 70.0]), ["10", "40", "70"]);
        assert_eq!(gib_labels([40.02, 40.08]), ["40.02", "40.05", "40.08"]);
    }

    /// One unit and one precision per axis: the labels never mix "95.0 s" with "100 s",
    /// nor seconds with milliseconds.
    #[test]
    fn iteration_ticks_share_one_unit_and_precision() {
        assert_eq!(time_labels([95.0, 105.0]), ["95 s", "100 s", "105 s"]);
        assert_eq!(time_labels([0.8, 1.6]), ["0.8 s", "1.2 s", "1.6 s"]);
        assert_eq!(time_labels([0.5, 1.5]), ["0.5 s", "1.0 s", "1.5 s"]);
        assert_eq!(
            time_labels([0.0042, 0.0062]),
            ["4.2 ms", "5.2 ms", "6.2 ms"]
        );
        assert_eq!(time_labels([2e-4, 6e-4]), ["200 µs", "400 µs", "600 µs"]);
        for b in [[0.9, 120.0], [3e-4, 2e-3], [12.3, 12.4]] {
            let labels = time_labels(b);
            let unit: Vec<&str> = labels.iter().filter_map(|l| l.split(' ').nth(1)).collect();
            assert!(unit.windows(2).all(|w| w[0] == w[1]), "{labels:?}");
            let decimals: Vec<usize> = labels
                .iter()
                .map(|l| {
                    l.split(' ')
                        .next()
                        .unwrap_or("")
                        .split('.')
                        .nth(1)
                        .map_or(0, str::len)
                })
                .collect();
            assert!(decimals.windows(2).all(|w| w[0] == w[1]), "{labels:?}");
        }
    }

    #[test]
    fn the_status_keeps_whole_pieces() {
        assert_eq!(fit_pieces("a · bb · ccc", 8), "a · bb");
        assert_eq!(fit_pieces("a · bb · ccc", 20), "a · bb · ccc");
        assert_eq!(fit_pieces("abcdef ghi", 8), "abcdef…");
    }
}
