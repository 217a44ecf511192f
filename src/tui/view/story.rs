//! Story mode's narration panel: where we are in none → full → adaptive → adapipe → lynx →
//! po-h → po-f, and the sentence for this step.

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
    // The steps from `first` on; where all do not fit the border, the earliest ones give way
    // (an ellipsis says so) so that the current step stays in sight.
    let width = |first: usize| -> usize {
        let names: usize = STORY[first..]
            .iter()
            .map(|s| s.name().chars().count() + 2)
            .sum();
        let arrows = 3 * (STORY.len() - first - 1);
        names + arrows + if first > 0 { 4 } else { 0 }
    };
    let room = usize::from(area.width.saturating_sub(2));
    let mut first = 0;
    while first < step && width(first) > room {
        first += 1;
    }
    let mut steps = Vec::new();
    if first > 0 {
        steps.push(Span::styled(" … →", theme.muted()));
    }
    for (i, s) in STORY.iter().enumerate().skip(first) {
        if i > first {
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
