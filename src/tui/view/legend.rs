//! The legend under the parameters: what each Gantt glyph and memory segment means.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Block, Widget};

use crate::tui::app::App;

/// Draws the legend (as many rows as fit).
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let theme = &app.theme;
    let (c, g) = (&theme.colors, &theme.glyphs);
    let block = Block::bordered()
        .title(" legend ")
        .border_style(theme.muted())
        .title_style(theme.accent());
    let inner = block.inner(area);
    block.render(area, buf);
    let rows: [[(char, ratatui::style::Color, &str); 2]; 5] = [
        [
            (g.forward, c.forward, "forward"),
            (g.backward, c.backward, "backward"),
        ],
        [
            (g.weight_grad, c.weight_grad, "wgrad"),
            (g.recompute, c.recompute, "recomp"),
        ],
        [(g.idle, c.idle, "idle"), (g.offload, c.offload, "offload")],
        [
            (g.r#static, c.r#static, "static"),
            (g.activation, c.activation, "kept"),
        ],
        [(g.buffer, c.buffer, "buffer"), (g.free, c.free, "free")],
    ];
    let half = inner.width / 2;
    for (i, row) in rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        for (j, (glyph, color, name)) in row.iter().enumerate() {
            let x = inner.x + if j == 0 { 0 } else { half };
            let w = usize::from(half.max(1));
            buf.set_stringn(
                x,
                inner.y + dy,
                glyph.to_string(),
                w,
                Style::new().fg(*color),
            );
            buf.set_stringn(
                x + 1,
                inner.y + dy,
                format!(" {name}"),
                w.saturating_sub(1),
                theme.muted(),
            );
        }
    }
}
