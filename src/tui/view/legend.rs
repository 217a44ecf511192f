//! The legend under the parameters: what each Gantt glyph and memory segment means (with
//! the collectives of the transfer lane when the shown job has them: context parallelism's
//! K/V exchange, ZeRO-3's gathers and reduce-scatters).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::sim::SpanKind;
use crate::tui::app::App;
use crate::tui::widgets::gantt::kind_look;

/// Draws the legend (as many rows as fit).
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let theme = &app.theme;
    let (c, g) = (&theme.colors, &theme.glyphs);
    let inner = super::panel(" legend ", theme, area, buf);
    type Item<'a> = (char, ratatui::style::Color, &'a str);
    let gantt: [[Item; 2]; 3] = [
        [
            (g.forward, c.forward, "forward"),
            (g.backward, c.backward, "backward"),
        ],
        [
            (g.weight_grad, c.weight_grad, "wgrad"),
            (g.recompute, c.recompute, "recomp"),
        ],
        [(g.idle, c.idle, "idle"), (g.offload, c.offload, "offload")],
    ];
    let memory: [[Item; 2]; 3] = [
        [
            (g.r#static, c.r#static, "static"),
            (g.activation, c.activation, "kept"),
        ],
        [(g.buffer, c.buffer, "buffer"), (g.free, c.free, "free")],
        [
            (g.host, c.offload, "on host"),
            (g.budget, c.budget, "budget"),
        ],
    ];
    // The transfer lane's collectives, when the shown job runs some (with room).
    let look = |kind: SpanKind, name| {
        let (color, glyph, _) = kind_look(theme, kind);
        (glyph, color, name)
    };
    let collectives: [[Item; 2]; 2] = [
        [look(SpanKind::Kv, "K/V"), look(SpanKind::Gather, "gather")],
        [look(SpanKind::Scatter, "scatter"), (g.send, c.send, "send")],
    ];
    let has_collectives = app
        .shown()
        .is_some_and(|s| s.outcome.cp > 1 || s.outcome.zero == 3);
    // The Gantt and the memory bars reuse the same block glyphs, so with room the two
    // halves get a heading each (in mono the glyph alone cannot say which it is).
    let headed = inner.height >= 8;
    let mut rows: Vec<Option<[Item; 2]>> = Vec::new();
    if headed {
        rows.push(None);
    }
    rows.extend(gantt.iter().copied().map(Some));
    if headed && has_collectives {
        rows.extend(collectives.iter().copied().map(Some));
    }
    if headed {
        rows.push(None);
        rows.extend(memory.iter().copied().map(Some));
    } else {
        rows.extend(memory[..2].iter().copied().map(Some));
    }
    let mut headings = ["Gantt", "memory bars"].into_iter();
    let half = inner.width / 2;
    for (i, row) in rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        let Some(row) = row else {
            if let Some(h) = headings.next() {
                buf.set_stringn(
                    inner.x,
                    inner.y + dy,
                    h,
                    usize::from(inner.width),
                    theme.accent(),
                );
            }
            continue;
        };
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
