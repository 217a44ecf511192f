//! Memory bars: one stacked bar per device (static, kept activations, working buffer,
//! offloaded to host, free), the budget marked, GiB figures, over-budget in the error style.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Paragraph, Widget};

use crate::sim::job::TimeBreakdown;
use crate::tui::app::App;
use crate::tui::solved::Solved;
use crate::tui::widgets::gantt::first_shown;
use crate::tui::widgets::stacked_bar::{Segment, StackedBar};

/// The memory bars' glyph of the routed experts' weights (fixed: it must read apart from
/// every theme's static and kept glyphs).
pub const EXPERT_GLYPH: char = '▤';

use super::format;

/// Panel width from which the time bars are drawn in full beside the memory bars.
pub const TIME_BAR_FROM: u16 = 60;
/// Panel width from which a stage's figures are `peak/budget` (below it, the peak alone).
const PEAK_AND_BUDGET_FROM: u16 = 18;
/// Panel width from which a compact time bar is drawn (below [`TIME_BAR_FROM`]).
pub const COMPACT_FROM: u16 = 26;
/// Narrowest compact time bar: `║`, three cells and the idle share.
const COMPACT_W: u16 = 9;

/// Draws one time bar per stage from the engine's per-stage breakdown (compute with the
/// optimizer step, recompute, exposed communication, bubble; the rows scroll with the
/// memory bars), with the share of communication and bubble at its end.
fn render_time(area: Rect, buf: &mut Buffer, app: &App, o: &crate::Outcome) {
    let theme = &app.theme;
    let (c, g) = (&theme.colors, &theme.glyphs);
    let first = first_shown(app.stage, o.stages.len() as u32, u32::from(area.height)) as usize;
    let micros = |s: f64| (s.max(0.0) * 1e6).round() as u64;
    for (row, st) in o
        .stages
        .iter()
        .skip(first)
        .take(usize::from(area.height))
        .enumerate()
    {
        let t: &TimeBreakdown = &st.time_breakdown_s;
        let y = area.y + row as u16;
        let total = t.total().max(f64::MIN_POSITIVE);
        let comm = t.tp_comm + t.cp_comm + t.ep_comm + t.pp_comm + t.dp_comm;
        let text = format!(" {:>3.0}%", 100.0 * (comm + t.bubble) / total);
        let text_w = text.chars().count() as u16;
        let bar_w = area.width.saturating_sub(text_w + 1);
        buf.set_string(area.x, y, "║", theme.muted());
        let seg = |s: f64, glyph, color| Segment {
            bytes: micros(s),
            glyph,
            style: Style::new().fg(color),
        };
        let segments = [
            seg(t.compute + t.optimizer, g.forward, c.forward),
            seg(t.recompute, g.recompute, c.recompute),
            seg(comm, g.send, c.send),
            seg(t.bubble, g.idle, c.idle),
        ];
        if bar_w >= 2 {
            StackedBar {
                segments: &segments,
                scale: micros(total),
                marker: None,
            }
            .render(Rect::new(area.x + 1, y, bar_w, 1), buf);
        }
        buf.set_stringn(
            area.x + 1 + bar_w,
            y,
            &text,
            usize::from(text_w),
            theme.muted(),
        );
    }
}

/// Draws the memory bars of `solved`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App, solved: Option<&Solved>, side: &str) {
    if area.height < 3 || area.width < 12 {
        return;
    }
    let theme = &app.theme;
    // A time bar per stage beside its memory bar when there is room for both.
    // Below TIME_BAR_FROM columns, a compact time bar: a few cells and the idle share.
    let time_w = if area.width >= TIME_BAR_FROM {
        area.width / 3
    } else if area.width >= COMPACT_FROM {
        (area.width / 4).max(COMPACT_W)
    } else {
        0
    };
    // Compact: the peak alone, beside a compact time bar or in a panel too narrow for
    // `peak/budget` and a bar (the bar marks the budget).
    let compact = side.is_empty() && time_w > 0 && area.width < TIME_BAR_FROM
        || area.width < PEAK_AND_BUDGET_FROM;
    let title = match (side.is_empty(), time_w > 0, area.width >= TIME_BAR_FROM) {
        (true, true, true) => {
            " memory GiB · │ budget  ║  time: compute recomp comm idle ".to_string()
        }
        (true, true, false) => " GiB │budget ║time idle% ".to_string(),
        (true, false, _) => " memory GiB · │ budget ".to_string(),
        (false, _, _) => format!(" {side}: memory, GiB "),
    };
    let inner = super::panel(title, theme, area, buf);
    let Some(s) = solved else {
        Paragraph::new("…").style(theme.muted()).render(inner, buf);
        return;
    };
    let inner = if time_w > 0 && side.is_empty() {
        let mem = Rect {
            width: inner.width.saturating_sub(time_w),
            ..inner
        };
        let time = Rect {
            x: mem.right(),
            width: inner.width - mem.width,
            ..inner
        };
        render_time(time, buf, app, &s.outcome);
        mem
    } else {
        inner
    };
    let o = &s.outcome;
    let host: Vec<u64> = (0..o.stages.len())
        .map(|d| {
            o.simulation
                .memory
                .get(d)
                .and_then(|m| m.host_points.iter().map(|p| p.1).max())
                .unwrap_or(0)
        })
        .collect();
    let scale = o
        .stages
        .iter()
        .zip(&host)
        .map(|(st, h)| st.budget_bytes.max(st.peak_memory_bytes + h))
        .max()
        .unwrap_or(1)
        .max(1);
    let (c, g) = (&theme.colors, &theme.glyphs);
    let rows = u32::from(inner.height);
    let first = first_shown(app.stage, o.stages.len() as u32, rows) as usize;
    for (i, st) in o.stages.iter().enumerate().skip(first) {
        let Ok(dy) = u16::try_from(i - first) else {
            break;
        };
        if dy >= inner.height {
            break;
        }
        let y = inner.y + dy;
        let over = st.peak_memory_bytes > st.budget_bytes;
        // Compact: the peak alone (the bar marks the budget).
        let budget = if compact {
            String::new()
        } else {
            format!("/{}", format::gib(st.budget_bytes))
        };
        let text = format!(
            " {}{budget}{}",
            format::gib(st.peak_memory_bytes),
            if over {
                g.over.to_string()
            } else {
                String::new()
            }
        );
        let text_w = text.chars().count() as u16;
        let label_w = 4u16;
        let bar_w = inner.width.saturating_sub(label_w + text_w);
        let label_style = if app.stage == st.stage {
            theme.selected()
        } else {
            theme.muted()
        };
        buf.set_stringn(inner.x, y, format!("s{}", st.stage), 3, label_style);
        let buffer = st
            .peak_memory_bytes
            .saturating_sub(st.static_bytes + st.activation_bytes);
        let free = st.budget_bytes.saturating_sub(st.peak_memory_bytes);
        let seg = |bytes, glyph, color| Segment {
            bytes,
            glyph,
            style: Style::new().fg(color),
        };
        // The routed experts' weights as their own segment (a fixed glyph that reads apart in
        // every theme, as the Gantt's collectives do); nothing for a dense model.
        let experts = st.expert_weights_bytes.min(st.static_bytes);
        let segments = [
            seg(st.static_bytes - experts, g.r#static, c.r#static),
            seg(experts, EXPERT_GLYPH, c.accent),
            seg(st.activation_bytes, g.activation, c.activation),
            seg(buffer, g.buffer, c.buffer),
            seg(host[i], g.host, c.offload),
            seg(free, g.free, c.free),
        ];
        if bar_w >= 4 {
            StackedBar {
                segments: &segments,
                scale,
                marker: Some((st.budget_bytes, g.budget, theme.error())),
            }
            .render(Rect::new(inner.x + label_w, y, bar_w, 1), buf);
        }
        let style = if over { theme.error() } else { theme.text() };
        buf.set_stringn(
            inner.x + label_w + bar_w,
            y,
            &text,
            usize::from(inner.width.saturating_sub(label_w + bar_w)),
            style,
        );
    }
}
