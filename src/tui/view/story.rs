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
    let steps = title(step, usize::from(area.width.saturating_sub(2)), theme);
    let block = Block::bordered()
        .title(steps)
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

/// The steps as the panel's title, in `room` columns, the current one highlighted. Where all
/// do not fit the border, the earliest ones give way first, then the last ones, each cut
/// marked by an ellipsis (`… →` before, `→ …` after), so that the current step stays in
/// sight and a cut never passes for the end of the story.
fn title(step: usize, room: usize, theme: &crate::tui::theme::Theme) -> Line<'static> {
    // Columns of the steps `first..last` with the ellipses their cuts need.
    let width = |first: usize, last: usize| -> usize {
        let names: usize = STORY[first..last]
            .iter()
            .map(|s| s.name().chars().count() + 2)
            .sum();
        let arrows = 3 * (last - first).saturating_sub(1);
        let before = if first > 0 { 4 } else { 0 };
        let after = if last < STORY.len() { 4 } else { 0 };
        names + arrows + before + after
    };
    let mut first = 0;
    while first < step && width(first, STORY.len()) > room {
        first += 1;
    }
    let mut last = STORY.len();
    while last > step + 1 && width(first, last) > room {
        last -= 1;
    }
    let mut steps = Vec::new();
    if first > 0 {
        steps.push(Span::styled(" … →", theme.muted()));
    }
    for (i, s) in STORY.iter().enumerate().take(last).skip(first) {
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
    if last < STORY.len() {
        steps.push(Span::styled("→ … ", theme.muted()));
    }
    Line::from(steps)
}
