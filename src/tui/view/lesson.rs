//! The lesson's views: the narration (step, sizes, textbook formulas beside the simulated
//! figures, why), the Gantt of the equal-cost run, and each device's peak activations.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use crate::sim::Lane;
use crate::tui::app::{App, Mode};
use crate::tui::lesson::{self, LESSON};
use crate::tui::widgets::gantt::Gantt;

use super::format;

/// Height the narration wants.
pub const HEIGHT: u16 = 8;

/// Draws the narration panel.
pub fn render_narration(area: Rect, buf: &mut Buffer, app: &App) {
    let (Mode::Lesson { step }, Some(run)) = (app.mode, app.lesson.as_ref()) else {
        return;
    };
    if area.height < 3 {
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
    let block = Block::bordered()
        .title(title)
        .title_bottom(Line::styled(
            " n next · p previous · stages p, micro m: ← → · i leaves ",
            theme.muted(),
        ))
        .border_style(theme.accent());
    let t = lesson::textbook(step, run.p, run.m);
    let value = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("–".into(), f);
    let pct = |x: f64| format::pct(x);
    let acts = |x: f64| format!("{x:.1}");
    let mut lines = vec![Line::styled(
        format!(
            "p = {}, m = {}, chunks {}; every op F = B = W = 1 per chunk, no transfer time",
            run.p,
            run.m,
            kind.chunks(2)
        ),
        theme.muted(),
    )];
    match lesson::simulated(run) {
        Some((bubble, peak)) => {
            lines.push(Line::from(vec![
                Span::styled("bubble  textbook ", theme.muted()),
                Span::styled(
                    format!("{} = {}", t.bubble.0, value(t.bubble.1, &pct)),
                    theme.text(),
                ),
                Span::styled("  simulated ", theme.muted()),
                Span::styled(pct(bubble), theme.accent()),
            ]));
            lines.push(Line::from(vec![
                Span::styled("peak activations (stages' worth)  textbook ", theme.muted()),
                Span::styled(
                    format!("{} = {}", t.peak.0, value(t.peak.1, &acts)),
                    theme.text(),
                ),
                Span::styled("  simulated ", theme.muted()),
                Span::styled(acts(peak), theme.accent()),
            ]));
        }
        None => {
            let e = run.sim.as_ref().err().cloned().unwrap_or_default();
            lines.push(Line::styled(
                format!("cannot run these sizes: {e} (change p or m)"),
                theme.error(),
            ));
        }
    }
    lines.push(Line::styled(t.why, theme.text()));
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .block(block)
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
    let inner = super::panel(" peak chunk-activations per device ", theme, bottom, buf);
    let Ok(sim) = &run.sim else { return };
    // Resident ones: each weighs one in the lesson's runs, and what sits on the host (the
    // PipeOffload steps) does not count.
    let resident = |d: &crate::sim::DeviceMetrics| d.peak_activation_bytes;
    let most = sim.devices.iter().map(resident).max().unwrap_or(1).max(1);
    let bar_room = usize::from(inner.width.saturating_sub(10));
    for (i, d) in sim
        .devices
        .iter()
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
