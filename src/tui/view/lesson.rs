//! The lesson's views: the narration (step, sizes, textbook formulas beside the simulated
//! figures, why), the Gantt of the equal-cost run, and each device's peak activations.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::sim::Lane;
use crate::tui::app::{App, Mode};
use crate::tui::lesson::{self, LESSON};
use crate::tui::widgets::gantt::Gantt;

use super::format;

/// Most rows the narration panel takes (with its borders) when the screen has room.
pub const HEIGHT: u16 = 12;

/// `spans` word-wrapped into rows of at most `width` columns, each word keeping its span's
/// style (a word wider than a row continues on the next one; nothing is cut).
fn wrap_spans(spans: &[(String, Style)], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut row_w = 0usize;
    for (text, style) in spans {
        // Spaces at the start of a span separate it from the one before.
        let mut gap = text.starts_with(' ');
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            let mut word = word.to_string();
            loop {
                let w = word.chars().count();
                let sep = usize::from(gap && row_w > 0);
                if row_w + sep + w <= width {
                    if sep == 1 {
                        row.push(Span::styled(" ", *style));
                    }
                    row_w += sep + w;
                    row.push(Span::styled(word, *style));
                    break;
                }
                if row_w > 0 {
                    rows.push(Line::from(std::mem::take(&mut row)));
                    row_w = 0;
                    continue;
                }
                // A word wider than a row: its first `width` characters, then the rest.
                let head: String = word.chars().take(width).collect();
                word = word.chars().skip(width).collect();
                rows.push(Line::from(Span::styled(head, *style)));
                if word.is_empty() {
                    break;
                }
            }
            gap = true;
        }
    }
    if !row.is_empty() {
        rows.push(Line::from(row));
    }
    rows
}

/// The narration's rows for an inner width of `width`: sizes, the textbook formulas beside
/// the simulated figures, and why, wrapped (nothing cut).
pub fn narration(app: &App, width: usize) -> Vec<Line<'static>> {
    let (Mode::Lesson { step }, Some(run)) = (app.mode, app.lesson.as_ref()) else {
        return Vec::new();
    };
    let theme = &app.theme;
    let kind = LESSON[step.min(LESSON.len() - 1)];
    let t = lesson::textbook(step, run.p, run.m);
    let value = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("–".into(), f);
    let pct = |x: f64| format::pct(x);
    let acts = |x: f64| format!("{x:.1}");
    let mut logical: Vec<Vec<(String, Style)>> = vec![vec![(
        format!(
            "p = {}, m = {}, chunks {}; F = B = W = 1 per chunk, no transfer time",
            run.p,
            run.m,
            kind.chunks(2)
        ),
        theme.muted(),
    )]];
    match lesson::simulated(run) {
        Some((bubble, peak)) => {
            logical.push(vec![
                ("bubble: textbook".into(), theme.muted()),
                (
                    format!(" {} = {}", t.bubble.0, value(t.bubble.1, &pct)),
                    theme.text(),
                ),
                (" · simulated".into(), theme.muted()),
                (format!(" {}", pct(bubble)), theme.accent()),
            ]);
            logical.push(vec![
                (
                    "peak activations (stages' worth): textbook".into(),
                    theme.muted(),
                ),
                (
                    format!(" {} = {}", t.peak.0, value(t.peak.1, &acts)),
                    theme.text(),
                ),
                (" · simulated".into(), theme.muted()),
                (format!(" {}", acts(peak)), theme.accent()),
            ]);
        }
        None => {
            let e = run.sim.as_ref().err().cloned().unwrap_or_default();
            logical.push(vec![(
                format!("cannot run these sizes: {e} (change p or m)"),
                theme.error(),
            )]);
        }
    }
    logical.push(vec![(t.why.to_string(), theme.text())]);
    logical.iter().flat_map(|l| wrap_spans(l, width)).collect()
}

/// Rows the narration panel wants for a panel `width` columns wide (borders included).
pub fn wanted_height(app: &App, width: u16) -> u16 {
    let rows = narration(app, usize::from(width.saturating_sub(2))).len();
    u16::try_from(rows + 2).unwrap_or(u16::MAX)
}

/// Draws the narration panel; when it is shorter than the narration, the narration scrolls
/// (PgUp PgDn) and the bottom border says how far.
pub fn render_narration(area: Rect, buf: &mut Buffer, app: &App) {
    let Mode::Lesson { step } = app.mode else {
        return;
    };
    if area.height < 3 || app.lesson.is_none() {
        return;
    }
    let theme = &app.theme;
    let kind = LESSON[step.min(LESSON.len() - 1)];
    let title = Line::from(vec![
        Span::styled(
            format!(" lesson {}/{}: ", step + 1, LESSON.len()),
            theme.accent(),
        ),
        Span::styled(format!("{kind} "), theme.selected()),
    ]);
    let lines = narration(app, usize::from(area.width.saturating_sub(2)));
    let total = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let visible = area.height - 2;
    let scroll = app.lesson_scroll.min(total.saturating_sub(visible));
    let more = if total > visible {
        format!(
            " PgUp PgDn {}–{} of {total} ·",
            scroll + 1,
            scroll + visible
        )
    } else {
        String::new()
    };
    // The longest key hint that fits whole on the bottom border.
    let room = usize::from(area.width.saturating_sub(4));
    let keys = [
        format!("{more} n next · p previous · stages p, micro m: ← → · i leaves "),
        format!("{more} n/p step · ← → p, m · i leaves "),
        format!("{more} n/p · ← → · i "),
        format!("{more} "),
    ]
    .into_iter()
    .find(|k| k.chars().count() <= room)
    .unwrap_or_default();
    let block = Block::bordered()
        .title(title)
        .title_bottom(Line::styled(keys, theme.muted()))
        .border_style(theme.accent());
    Paragraph::new(lines)
        .block(block)
        .scroll((scroll, 0))
        .render(area, buf);
}

/// Draws the equal-cost run's Gantt and, beside it, each device's peak activations.
pub fn render_run(gantt: Rect, bottom: Rect, buf: &mut Buffer, app: &App) {
    let Some(run) = app.lesson.as_ref() else {
        return;
    };
    let theme = &app.theme;
    if gantt.height >= 3 {
        let inner = super::panel(" gantt · equal costs · time → ", theme, gantt, buf);
        if let Ok(sim) = &run.sim {
            let vp = app.viewport;
            let m = sim.timeline.makespan.max(f64::MIN_POSITIVE);
            // A memory sparkline under each device when there is room, and above it the copy
            // lane of the schedules that offload (its copies to and from the host).
            let rows = u32::from(inner.height.saturating_sub(1));
            let copies = sim.timeline.spans.iter().any(|s| s.lane == Lane::Copy);
            // Without room for both, the copies win: the panel below gives the peaks.
            let (lanes, memory_lane) = if copies && rows >= 3 * run.p {
                (3, 2)
            } else if rows >= 2 * run.p {
                (2, if copies { 0 } else { 1 })
            } else {
                (1, 1)
            };
            Gantt {
                timeline: &sim.timeline,
                t0: vp.start * m,
                t1: (vp.start + vp.span) * m,
                lanes,
                theme,
                selected: Some(app.stage),
                memory: Some((&sim.memory, memory_lane)),
                cost_units: true,
            }
            .render(inner, buf);
        }
    }
    if bottom.height < 3 {
        return;
    }
    let Ok(sim) = &run.sim else {
        super::panel(" peak chunk-activations per device ", theme, bottom, buf);
        return;
    };
    // The devices shown: all when they fit, else the rows around the selected one ([ ]).
    let n = sim.devices.len() as u32;
    let rows = u32::from(bottom.height.saturating_sub(2));
    let first = crate::tui::widgets::gantt::first_shown(app.stage, n, rows);
    let title = if rows < n {
        format!(
            " peak chunk-activations · s{}–s{} of {n} ([ ] scrolls) ",
            first,
            (first + rows).min(n) - 1
        )
    } else {
        " peak chunk-activations per device ".to_string()
    };
    let inner = super::panel(title, theme, bottom, buf);
    // Resident ones: each weighs one in the lesson's runs, and what sits on the host (the
    // PipeOffload steps) does not count.
    let resident = |d: &crate::sim::DeviceMetrics| d.peak_activation_bytes;
    let most = sim.devices.iter().map(resident).max().unwrap_or(1).max(1);
    let bar_room = usize::from(inner.width.saturating_sub(10));
    for (i, d) in sim
        .devices
        .iter()
        .skip(first as usize)
        .take(usize::from(inner.height))
        .enumerate()
    {
        let cells = (resident(d) as usize * bar_room).div_ceil(most as usize);
        let line = Line::from(vec![
            Span::styled(format!("s{:<3}", d.device), theme.muted()),
            Span::styled(
                theme.glyphs.activation.to_string().repeat(cells),
                theme.glyph(theme.colors.activation),
            ),
            Span::styled(format!(" {}", resident(d)), theme.text()),
        ]);
        line.render(Rect::new(inner.x, inner.y + i as u16, inner.width, 1), buf);
    }
}
