//! The Gantt region: a bordered box with the schedule and zoom in its title, and the
//! [`crate::tui::widgets::gantt::Gantt`] widget inside on the app's viewport.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

use crate::tui::app::App;
use crate::tui::solved::Solved;
use crate::tui::widgets::gantt::{Gantt, first_shown};

/// Draws the Gantt of `solved` (side label `side` in compare mode, else empty), on a time
/// axis of `common_makespan` when given (compare mode: both sides on one scale).
pub fn render(
    area: Rect,
    buf: &mut Buffer,
    app: &App,
    solved: Option<&Solved>,
    (lanes, memory_lane): (u16, u16),
    side: &str,
    common_makespan: Option<f64>,
) {
    if area.height < 3 {
        return;
    }
    let theme = &app.theme;
    let vp = app.viewport;
    let zoom = if vp.span < 1.0 {
        format!(" · zoom {:.1}×", 1.0 / vp.span)
    } else {
        String::new()
    };
    let what = match solved {
        Some(s) => format!("{} · {}", s.outcome.schedule, s.outcome.strategy),
        None => app.scenario.plan.schedule.to_string(),
    };
    let title = if side.is_empty() {
        format!(" gantt · {what} · time →{zoom} ")
    } else {
        format!(" {side}: {what}{zoom} ")
    };
    let devices = solved.map_or(0, |s| s.outcome.simulation.timeline.devices);
    let rows = u32::from(area.height.saturating_sub(3) / lanes.max(1));
    let title = if devices > rows && rows > 0 {
        let first = first_shown(app.stage, devices, rows);
        format!("{title}· s{first}–s{} of {devices} ", first + rows - 1)
    } else {
        title
    };
    let inner = super::panel(title, theme, area, buf);
    let Some(s) = solved else {
        let msg = if app.solving {
            "solving…"
        } else {
            "no result"
        };
        Paragraph::new(msg).style(theme.muted()).render(inner, buf);
        return;
    };
    let tl = &s.outcome.simulation.timeline;
    let own = if tl.makespan > 0.0 {
        tl.makespan
    } else {
        s.outcome.iteration_time_s.max(f64::MIN_POSITIVE)
    };
    let makespan = common_makespan.map_or(own, |m| m.max(own));
    Gantt {
        timeline: tl,
        t0: vp.start * makespan,
        t1: (vp.start + vp.span) * makespan,
        lanes,
        theme,
        selected: Some(app.stage),
        memory: Some((&s.outcome.simulation.memory, memory_lane)),
        cost_units: false,
    }
    .render(inner, buf);
}
