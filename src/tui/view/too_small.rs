//! Shown instead of everything else when the terminal is below the minimum size.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::tui::app::App;

use super::layout::{MIN_HEIGHT, MIN_WIDTH};

/// Draws the "terminal too small" message.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    let lines = vec![
        Line::styled("terminal too small", theme.error()),
        Line::styled(
            format!("it is {}×{}", area.width, area.height),
            theme.text(),
        ),
        Line::styled(
            format!("pipescope needs {MIN_WIDTH}×{MIN_HEIGHT}"),
            theme.text(),
        ),
        Line::styled("(q quits)", theme.muted()),
    ];
    let top = area.height.saturating_sub(lines.len() as u16) / 2;
    let r = Rect {
        y: area.y + top,
        height: area.height - top,
        ..area
    };
    Paragraph::new(lines)
        .centered()
        .wrap(Wrap { trim: true })
        .render(r, buf);
}
