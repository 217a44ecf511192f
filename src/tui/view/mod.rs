//! Views: one file per screen region, each a function that reads the [`App`] and writes into
//! a buffer. Views never change state. The layout (see [`layout`]):
//!
//! ```text
//! metrics: iter 12.40 s │ bubble 7.9% │ MFU 48.0% │ peak 69.8 GiB │ 1.27× vs 1F1B-full │ solve
//! stage 0 time: compute 9.10 s · recompute 1.20 s · bubble 0.98 s · tp_comm ... · optimizer
//! ┌params──────────┐┌gantt (time →)───────────────────────────────────────────────────────┐
//! │model gpt3-175b ││s0  F0██F1██F2██ ...                                                  │
//! │stages p 8      ││ ⇄  ──  ──                                                            │
//! │...             │└|0 s        |2 s        |4 s ────────────────────────────────────────┘
//! └────────────────┘┌memory per stage────────────────┐┌units of stage 0─────────────────────┐
//! ┌legend──────────┐│s0 ████▓▓▓▓▒░░░░│ 61.3/70.0   ││attn.q    K K R R R ...             │
//! └────────────────┘└────────────────────────────────┘└─────────────────────────────────────┘
//! status: solved in 0.8 ms                                          ? help · c compare · q quit
//! ```
//!
//! Compare mode stacks side B's Gantt and memory bars beside side A's (no unit grid); story
//! mode adds a narration panel above the Gantt. The sweep view ([`sweep`]) takes the place of
//! the Gantt, memory and units panels while it is open.

pub mod compare;
pub mod details;
pub mod format;
pub mod gantt;
pub mod help;
pub mod layout;
pub mod legend;
pub mod lesson;
pub mod memory;
pub mod messages;
pub mod metrics;
pub mod params;
pub mod picker;
pub mod presets;
pub mod stage_time;
pub mod status;
pub mod story;
pub mod sweep;
mod sweep_forming;
pub mod too_small;
pub mod units;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use super::app::{App, Mode};

/// Draws a dashboard panel: a bordered block with `title` in the theme's accent and a muted
/// border. Returns the area inside the border.
pub fn panel<'a>(
    title: impl Into<ratatui::text::Line<'a>>,
    theme: &crate::tui::theme::Theme,
    area: Rect,
    buf: &mut Buffer,
) -> Rect {
    use ratatui::widgets::{Block, Widget};
    let block = Block::bordered()
        .title(fit_title(title.into(), area.width.saturating_sub(2)))
        .border_style(theme.muted())
        .title_style(theme.accent());
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// `title` as it fits a border with `room` columns between its corners: whole (less its
/// closing spaces, where the border takes them), or cut with "…" as its last character (the border would cut it silently, mid-word, so that a cut
/// title read as a whole one: `B (schedule 1f1b→interleaved, chu┐`).
pub fn fit_title(title: ratatui::text::Line<'_>, room: u16) -> ratatui::text::Line<'static> {
    use ratatui::text::{Line, Span};
    let owned = Line {
        spans: title
            .spans
            .into_iter()
            .map(|s| Span::styled(s.content.into_owned(), s.style))
            .collect(),
        style: title.style,
        alignment: title.alignment,
    };
    // The border may take a title's closing spaces: only a cut into its text is marked.
    let text: String = owned.spans.iter().map(|s| s.content.as_ref()).collect();
    let spaces = text.len() - text.trim_end_matches(' ').len();
    if owned.width().saturating_sub(spaces) <= usize::from(room) {
        return owned;
    }
    format::clip_line(owned, usize::from(room))
}

/// Clears and returns the `w` x `h` rectangle centred in `area`: where an overlay (help,
/// messages, a picker) draws over the dashboard.
pub fn clear_centred(area: Rect, buf: &mut Buffer, w: u16, h: u16) -> Rect {
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    ratatui::widgets::Clear.render(r, buf);
    r
}

/// Draws `lines` in a bordered box `w` wide centred over `area` (cleared first), as tall as
/// the lines (at most the area less two rows), titled with the first of `titles` that fits,
/// scrolled so that line `keep` stays in view: the frame of the pickers' overlays.
pub fn centred_list(
    area: Rect,
    buf: &mut Buffer,
    theme: &crate::tui::Theme,
    w: u16,
    lines: Vec<ratatui::text::Line<'static>>,
    titles: &[&str],
    keep: usize,
) {
    use ratatui::widgets::Paragraph;
    let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let h = area.height.saturating_sub(2).min(rows.saturating_add(2));
    let visible = usize::from(h.saturating_sub(2));
    let scroll = u16::try_from((keep + 1).saturating_sub(visible)).unwrap_or(0);
    let r = clear_centred(area, buf, w, h);
    let title = titles
        .iter()
        .find(|t| t.chars().count() + 2 <= usize::from(w))
        .copied()
        .unwrap_or("");
    Paragraph::new(lines)
        .block(overlay_block(title, theme))
        .scroll((scroll, 0))
        .render(r, buf);
}

/// The border of an overlay: `title` on it, both in the theme's accent.
pub fn overlay_block<'a>(
    title: impl Into<ratatui::text::Line<'a>>,
    theme: &crate::tui::Theme,
) -> ratatui::widgets::Block<'a> {
    ratatui::widgets::Block::bordered()
        .title(title)
        .border_style(theme.accent())
        .title_style(theme.accent())
}

/// Draws the whole app into a frame.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    render(app, area, frame.buffer_mut());
}

/// Draws the whole app into `buf` over `area`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if layout::too_small(area) {
        too_small::render(area, buf, app);
        return;
    }
    let r = layout::regions(area, app);
    params::render(r.params, buf, app);
    legend::render(r.legend, buf, app);
    status::render(r.status, buf, app);
    match app.mode {
        Mode::Compare => {
            compare::render_metrics(r.metrics, buf, app);
            let (a, b) = (app.compare_solved(), app.shown());
            let span = |s: Option<&super::solved::Solved>| {
                s.map_or(0.0, |s| s.outcome.simulation.timeline.makespan)
            };
            let common = Some(span(a).max(span(b)));
            let changed = compare::changed(app);
            gantt::render(r.gantt, buf, app, a, (r.lanes, 0), "A", common);
            let b_side = format!("B ({changed})");
            gantt::render(r.gantt_b, buf, app, b, (r.lanes, 0), &b_side, common);
            memory::render(r.memory, buf, app, a, "A");
            memory::render(r.memory_b, buf, app, b, "B");
        }
        Mode::Lesson { .. } => {
            ratatui::text::Line::styled(
                " pipescope · lesson through the schedules, equal unit costs (time in units of F)",
                app.theme.accent(),
            )
            .render(r.metrics, buf);
            lesson::render_narration(r.story, buf, app);
            let bottom = Rect {
                width: r.memory.width + r.units.width,
                ..r.memory
            };
            lesson::render_run(r.gantt, bottom, buf, app);
        }
        Mode::Normal | Mode::Story { .. } => {
            metrics::render(r.metrics, buf, app);
            if r.metrics.height >= 2 {
                let second = Rect {
                    y: r.metrics.y + 1,
                    height: 1,
                    ..r.metrics
                };
                stage_time::render(second, buf, app);
            }
            if app.sweep.open && app.mode == Mode::Normal {
                let x = r.params.right();
                let right = Rect {
                    x,
                    width: r.body.right().saturating_sub(x),
                    ..r.body
                };
                sweep::render(right, buf, app);
                overlays(area, buf, app);
                return;
            }
            story::render(r.story, buf, app);
            gantt::render(
                r.gantt,
                buf,
                app,
                app.shown(),
                (r.lanes, r.memory_lane),
                "",
                None,
            );
            memory::render(r.memory, buf, app, app.shown(), "");
            units::render(r.units, buf, app);
        }
    }
    details::render(r.body, buf, app);
    overlays(area, buf, app);
}

/// The overlays over everything: the units picker (`u`), the preset picker (`P`), the
/// messages (`!`), then the help
/// (`?`) on top.
fn overlays(area: Rect, buf: &mut Buffer, app: &App) {
    picker::render(area, buf, app);
    presets::render(area, buf, app);
    if app.messages {
        messages::render(area, buf, app);
    }
    if app.help {
        help::render(area, buf, app);
    }
}
