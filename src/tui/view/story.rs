//! Story mode's narration panel: where we are in none → full → adaptive → adapipe, and the
//! sentence for this step.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use crate::tui::app::{App, Mode, STORY};
use crate::tui::story;

/// Draws the story panel (nothing outside story mode).
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let Mode::Story { step } = app.mode else {
        return;
    };
    if area.height < 3 {
        return;
    }
    let theme = &app.theme;
    let mut steps = Vec::new();
    for (i, s) in STORY.iter().enumerate() {
        if i > 0 {
            steps.push(Span::styled(" → ", theme.muted()));
        }
        let style = if i == step {
            theme.selected()
        } else {
            theme.muted()
        };
        steps.push(Span::styled(format!(" {} ", s.name()), style));
    }
    let block = Block::bordered()
        .title(Line::from(steps))
        .title_bottom(Line::styled(
            format!(" story {}/{} · n next · p previous ", step + 1, STORY.len()),
            theme.muted(),
        ))
        .border_style(theme.accent());
    Paragraph::new(story::sentence(step, &app.story))
        .style(theme.text())
        .wrap(Wrap { trim: true })
        .block(block)
        .render(area, buf);
}
