//! Memory bars: one stacked bar per device (static, kept activations, working buffer,
//! offloaded to host, free), the budget marked, GiB figures, over-budget in the error style.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Paragraph, Widget};

use crate::tui::app::App;
use crate::tui::solved::Solved;
use crate::tui::widgets::stacked_bar::{Segment, StackedBar};

use super::format;

/// Draws the memory bars of `solved`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App, solved: Option<&Solved>, side: &str) {
    if area.height < 3 || area.width < 12 {
        return;
    }
    let theme = &app.theme;
    let title = if side.is_empty() {
        " memory GiB · │ budget ".to_string()
    } else {
        format!(" {side}: memory, GiB ")
    };
    let inner = super::panel(title, theme, area, buf);
    let Some(s) = solved else {
        Paragraph::new("…").style(theme.muted()).render(inner, buf);
        return;
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
    for (i, st) in o.stages.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        let y = inner.y + dy;
        let over = st.peak_memory_bytes > st.budget_bytes;
        let text = format!(
            " {}/{}{}",
            format::gib(st.peak_memory_bytes),
            format::gib(st.budget_bytes),
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
        let segments = [
            seg(st.static_bytes, g.r#static, c.r#static),
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
