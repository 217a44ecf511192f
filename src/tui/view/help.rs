//! The help overlay, generated from the keymap and the actions' doc comments.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::tui::app::App;
use crate::tui::keymap;

/// Draws the help overlay centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    let bindings = keymap::bindings();
    let mut lines: Vec<Line> = bindings
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!("{:>13}  ", b.keys), theme.accent()),
                Span::styled(keymap::help_text(b), theme.text()),
            ])
        })
        .collect();

    lines.push(Line::styled(
        "MFU counts model FLOPs as Megatron does (causal s² halved); HFU adds recomputation.",
        theme.muted(),
    ));
    lines.push(Line::styled(
        "Gantt: █ forward ▓ backward ▒ weight-grad ░ recompute · idle, numbers are micro-batches.",
        theme.muted(),
    ));
    lines.push(Line::styled(
        format!(
            "Theme {} (T cycles; NO_COLOR picks mono). Shift-drag selects text.",
            theme.name
        ),
        theme.muted(),
    ));
    let w = area.width.saturating_sub(4).min(96);
    let h = area.height.saturating_sub(2).min(lines.len() as u16 + 2);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let block = Block::bordered()
        .title(" help · Esc closes ")
        .border_style(theme.accent())
        .title_style(theme.accent());
    Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false })
        .render(r, buf);
}
