//! The preset picker overlay (`P`): the filter line, then the scenario, model and GPU
//! presets in their sections, `●` on the current ones, the cursor's row highlighted and
//! kept in view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::tui::app::App;
use crate::tui::presets::{current, entries, label};

use super::format;

/// Draws the picker, when open, centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let Some(picker) = app.preset_picker.as_ref() else {
        return;
    };
    let theme = &app.theme;
    let list = entries(app, &picker.query);
    let w = area.width.saturating_sub(4).min(110);
    let inner_w = usize::from(w.saturating_sub(2));
    let filter = if picker.query.is_empty() {
        Line::styled("type to filter · ● current", theme.muted())
    } else {
        Line::from(vec![
            Span::styled("filter: ", theme.muted()),
            Span::styled(format!("{}▌", picker.query), theme.accent()),
        ])
    };
    let mut lines = vec![filter];
    let name_w = list
        .iter()
        .map(|&p| label(app, p).0.chars().count())
        .max()
        .unwrap_or(4)
        .min(28);
    let mut cursor_row = 0;
    let mut section = "";
    for (i, &pick) in list.iter().enumerate() {
        if pick.section() != section {
            section = pick.section();
            lines.push(Line::styled(
                section.to_string(),
                theme.muted().add_modifier(Modifier::BOLD),
            ));
        }
        let (name, description) = label(app, pick);
        let mark = if current(app, pick) { "●" } else { " " };
        let text = format!("{mark} {name:<name_w$}  {description}");
        let style = if i == picker.cursor {
            cursor_row = lines.len();
            theme.selected()
        } else if current(app, pick) {
            theme.accent()
        } else {
            theme.text()
        };
        lines.push(format::clip_line(
            Line::from(Span::styled(text, style)),
            inner_w,
        ));
    }
    if list.is_empty() {
        lines.push(Line::styled(
            format!("no preset matches '{}' (Backspace)", picker.query),
            theme.warning(),
        ));
    }
    let titles = [
        " presets · ↑↓ move · ⏎ load · Esc close · type to filter ",
        " presets · ↑↓ · ⏎ · Esc ",
        " presets ",
    ];
    // The cursor's row stays in view (the filter line scrolls away first).
    super::centred_list(area, buf, theme, w, lines, &titles, cursor_row);
}
