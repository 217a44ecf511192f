//! Where each region goes for a terminal size and mode, computed the same way for drawing
//! and for mouse hit-testing (so a click lands on what was drawn).

use ratatui::layout::Rect;

use crate::tui::app::{App, Mode};
use crate::tui::fields::Field;
use crate::tui::widgets::gantt::first_shown;

/// Below this size the app shows only a "too small" message.
pub const MIN_WIDTH: u16 = 60;
/// Below this height the app shows only a "too small" message.
pub const MIN_HEIGHT: u16 = 18;

/// The rectangles of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Regions {
    /// The header: the metrics, then the selected stage's time (compare: side A and B); one
    /// line in the lesson.
    pub metrics: Rect,
    /// The parameters panel.
    pub params: Rect,
    /// The glyph legend under the parameters (may be empty).
    pub legend: Rect,
    /// Story mode's narration (empty otherwise).
    pub story: Rect,
    /// The Gantt of the shown outcome (side A in compare mode).
    pub gantt: Rect,
    /// Compare mode: side B's Gantt.
    pub gantt_b: Rect,
    /// Memory bars.
    pub memory: Rect,
    /// Compare mode: side B's memory bars.
    pub memory_b: Rect,
    /// The unit grid of the selected stage (empty in compare mode).
    pub units: Rect,
    /// The status bar.
    pub status: Rect,
    /// Everything between the metrics and the status bar (overlays centre on it).
    pub body: Rect,
    /// Lanes per device in the Gantt (1: compute only; 2: and transfers or memory; 3: both).
    pub lanes: u16,
    /// The lane of the memory sparkline (0: none).
    pub memory_lane: u16,
}

/// Whether `area` is too small for the app.
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_WIDTH || area.height < MIN_HEIGHT
}

fn split_h(r: Rect, left: u16) -> (Rect, Rect) {
    let left = left.min(r.width);
    (
        Rect { width: left, ..r },
        Rect {
            x: r.x + left,
            width: r.width - left,
            ..r
        },
    )
}

fn split_v(r: Rect, top: u16) -> (Rect, Rect) {
    let top = top.min(r.height);
    (
        Rect { height: top, ..r },
        Rect {
            y: r.y + top,
            height: r.height - top,
            ..r
        },
    )
}

/// Height the parameters panel wants for `sc` (every field shown and its borders).
pub fn params_height(sc: &crate::Scenario) -> u16 {
    u16::try_from(Field::shown_in(sc).len()).unwrap_or(u16::MAX) + 2
}
/// Rows the legend keeps under a parameters panel that scrolls.
const LEGEND_MIN: u16 = 4;
/// Fewest rows of the parameters panel (it scrolls below its full height).
const MIN_PARAMS: u16 = 5;

/// Rows of a Gantt panel with one stage row: its borders, the row and the time axis.
const GANTT_MIN: u16 = 4;

/// Computes the regions of a frame of `area` for `app`.
pub fn regions(area: Rect, app: &App) -> Regions {
    let p = match (&app.mode, &app.lesson) {
        (Mode::Lesson { .. }, Some(run)) => run.p,
        _ => app.devices(),
    }
    .min(256) as u16;
    let compare = matches!(app.mode, Mode::Compare);
    let story = matches!(app.mode, Mode::Story { .. } | Mode::Lesson { .. });
    // Two header lines (the metrics, then the selected stage's time), one in the lesson.
    let lesson = matches!(app.mode, Mode::Lesson { .. });
    let (metrics, rest) = split_v(area, if lesson { 1 } else { 2 });
    // The status bar grows to show a long message whole (up to a sixth of the height).
    let status_h = crate::tui::view::status::height(app, area.width, area.height);
    let (body, status) = split_v(rest, rest.height.saturating_sub(status_h));
    let params_w = if area.width >= 120 { 28 } else { 24 };
    let (left, right) = split_h(body, params_w);
    // Every field when there is room, else the panel scrolls and the legend keeps 4 rows.
    let params_h = params_height(&app.scenario).min(left.height.saturating_sub(LEGEND_MIN));
    let (params, legend) = split_v(left, params_h.max(left.height.min(MIN_PARAMS)));
    // The narration's height follows its length (wrapped to the panel's width).
    let story_h = match app.mode {
        Mode::Story { step } => {
            let text = crate::tui::story::sentence(step, &app.story);
            let inner = usize::from(right.width.saturating_sub(2)).max(1);
            let lines = text.chars().count().div_ceil(inner) + 1;
            // The narration gives way to the Gantt's first stage row (its borders, the
            // row and the time axis) and the memory panel's borders and first row.
            let below = GANTT_MIN + 3;
            u16::try_from(lines + 2)
                .unwrap_or(8)
                .clamp(4, 8)
                .min(right.height.saturating_sub(below))
                .max(3)
        }
        Mode::Lesson { .. } => {
            // The whole narration when the Gantt keeps a row per device; it scrolls below.
            let p = app.lesson.as_ref().map_or(4, |r| r.p).min(64) as u16;
            // The Gantt keeps a row per device, the peak panel at least one.
            let others = (p + 3) + 3;
            crate::tui::view::lesson::wanted_height(app, right.width)
                .min(crate::tui::view::lesson::HEIGHT.max(right.height / 3))
                .min(right.height.saturating_sub(others))
                .max(4)
        }
        _ => 0,
    };
    let (story_r, right) = if story {
        split_v(right, story_h)
    } else {
        (Rect::default(), right)
    };
    let mut r = Regions {
        metrics,
        params,
        legend,
        story: story_r,
        status,
        body,
        ..Regions::default()
    };
    let avail = right.height;
    if compare {
        let lanes = if avail >= 2 * (2 * p + 3) + p + 2 && transfers_visible(app, right.width) {
            2
        } else {
            1
        };
        let want = lanes * p + 3;
        let mem_h = (p + 2).min(avail / 3).max(3);
        let g = want.min(avail.saturating_sub(mem_h) / 2);
        let (ga, rest) = split_v(right, g);
        let (gb, mem) = split_v(rest, g);
        let (ma, mb) = split_h(mem, mem.width / 2);
        r.gantt = ga;
        r.gantt_b = gb;
        r.memory = ma;
        r.memory_b = mb;
        r.lanes = lanes;
        return r;
    }
    if lesson {
        // The lesson: its Gantt keeps a row per device (two when there is room for the
        // memory lane too), the peak panel below takes the rest.
        let lanes = if avail >= 2 * p + 3 + p + 2 { 2 } else { 1 };
        let g = (lanes * p + 3).min(avail.saturating_sub(3));
        let (gantt, bottom) = split_v(right, g);
        r.gantt = gantt;
        r.memory = bottom;
        r.units = Rect {
            x: bottom.right(),
            width: 0,
            ..bottom
        };
        r.lanes = lanes;
        return r;
    }
    let bottom_want = (p + 2).max(10);
    // The Gantt grows with the height: a transfer lane, then a memory sparkline per device.
    let transfers = transfers_visible(app, right.width);
    let (lanes, memory_lane) = if avail >= 3 * p + 3 + bottom_want && transfers {
        (3, 2)
    } else if avail >= 2 * p + 3 + bottom_want {
        if transfers { (2, 0) } else { (2, 1) }
    } else {
        (1, 0)
    };
    r.memory_lane = memory_lane;
    let g = (lanes * p + 3)
        .min(avail.saturating_sub(bottom_want.min(avail / 2)))
        // At least one stage row when there is room for it and three rows below.
        .max(GANTT_MIN.min(avail.saturating_sub(3)));
    let (gantt, bottom) = split_v(right, g);
    // Narrow, the memory bars give way to the unit names (the bars' figures need 14).
    let mem_w = if bottom.width >= 110 {
        bottom.width * 2 / 5
    } else if bottom.width < 48 {
        (bottom.width * 2 / 5).max(14)
    } else {
        bottom.width / 2
    };
    let (memory, units) = split_h(bottom, mem_w);
    r.gantt = gantt;
    r.memory = memory;
    r.units = units;
    r.lanes = lanes;
    r
}

/// Whether the transfer lane would show anything: some send or copy span covers at least
/// the 5% of a cell that the Gantt draws, at the current zoom and Gantt width `width`.
/// Without one, the lane would be empty rows taking half the Gantt's height.
fn transfers_visible(app: &App, width: u16) -> bool {
    let Some(s) = app.shown() else {
        return false;
    };
    let tl = &s.outcome.simulation.timeline;
    let cells = f64::from(width.saturating_sub(GANTT_LABEL + 2).max(1));
    let cell_s = tl.makespan * app.viewport.span / cells;
    tl.spans
        .iter()
        .any(|x| x.lane != crate::sim::Lane::Compute && x.end - x.start >= 0.05 * cell_s)
}

/// What a mouse position points at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hit {
    /// A parameter row.
    Field(Field),
    /// A memory row (or a unit grid title): a stage.
    Stage(u32),
    /// The Gantt: a stage row and the time as a fraction of the visible width.
    Gantt {
        /// Device row.
        stage: u32,
        /// Fraction 0..1 across the time area.
        at: f64,
    },
}

fn inside(r: Rect, x: u16, y: u16) -> bool {
    x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height
}

/// Left margin of a Gantt row (stage label) inside its border.
pub const GANTT_LABEL: u16 = 4;

/// Maps a mouse position to what is drawn there.
pub fn hit(app: &App, x: u16, y: u16) -> Option<Hit> {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    if too_small(area)
        || app.help
        || app.messages
        || app.picker.is_some()
        || app.preset_picker.is_some()
    {
        return None;
    }
    let r = regions(area, app);
    let p = app.devices();
    if inside(r.params, x, y) && y > r.params.y && y + 1 < r.params.bottom() {
        let rows = usize::from(r.params.height.saturating_sub(2));
        let fields = Field::shown_in(&app.scenario);
        let first = crate::tui::view::params::first_shown(&fields, app.field, rows);
        return fields
            .get(first + usize::from(y - r.params.y - 1))
            .copied()
            .map(Hit::Field);
    }
    if app.sweep.open {
        // The sweep view covers the Gantt and the memory bars.
        return None;
    }
    for g in [r.gantt, r.gantt_b] {
        if inside(g, x, y) && y > g.y && x > g.x + GANTT_LABEL {
            let rows = u32::from(g.height.saturating_sub(3) / r.lanes.max(1));
            let first = first_shown(app.stage, p, rows);
            let row = first + u32::from((y - g.y - 1) / r.lanes.max(1));
            let width = g.width.saturating_sub(GANTT_LABEL + 2).max(1);
            let at = f64::from(x - g.x - 1 - GANTT_LABEL) / f64::from(width);
            if row < p {
                return Some(Hit::Gantt {
                    stage: row,
                    at: at.clamp(0.0, 1.0),
                });
            }
            return None;
        }
    }
    for m in [r.memory, r.memory_b] {
        if inside(m, x, y) && y > m.y {
            let first = first_shown(app.stage, p, u32::from(m.height.saturating_sub(2)));
            let row = first + u32::from(y - m.y - 1);
            return (row < p).then_some(Hit::Stage(row));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::sim::{Lane, Span, SpanKind};

    #[test]
    fn the_transfer_lane_shows_only_when_it_has_something_to_show() {
        let mut app = crate::tui::fixture::solved_app("gpt3");
        let area = Rect::new(0, 0, 160, 48);
        // No transfer to show: the second lane is the memory sparkline.
        let r = regions(area, &app);
        assert_eq!((r.lanes, r.memory_lane), (2, 1));
        let solved = app.solved.as_mut().unwrap();
        let tl = &mut solved.outcome.simulation.timeline;
        let long = tl.makespan / 10.0;
        tl.spans.push(Span {
            device: 0,
            lane: Lane::Copy,
            kind: SpanKind::D2H,
            micro_batch: 0,
            chunk: 0,
            start: 0.0,
            end: long,
            paired: false,
        });
        // Transfers: lane 1 shows them, the sparkline moves to lane 2.
        let r = regions(area, &app);
        assert_eq!((r.lanes, r.memory_lane), (3, 2));
        assert_eq!(regions(Rect::new(0, 0, 160, 30), &app).memory_lane, 0);
    }
}
