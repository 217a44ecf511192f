//! The messages overlay (`!`): everything the status line has to say, whole and wrapped
//! (every file that failed to reload, the last error or note, why the plan does not fit,
//! stage by stage, and the engine's notes), scrolled with the arrows when it is long.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use crate::tui::app::App;

use super::format::wrap_words;

/// The overlay's entries, most important first, each with its style.
pub fn entries(app: &App) -> Vec<(String, Style)> {
    let theme = &app.theme;
    let mut out = Vec::new();
    for (path, e) in &app.reload_errors {
        out.push((
            format!("✗ {e} {}", super::status::kept(path)),
            theme.error(),
        ));
    }
    if let Some(e) = &app.error {
        out.push((format!("✗ {e}"), theme.error()));
    }
    if let Some(n) = &app.note {
        out.push((n.clone(), theme.text()));
    }
    if let Some(s) = app.shown() {
        let o = &s.outcome;
        if !o.feasible {
            out.push(("the plan does not fit:".into(), theme.warning()));
            let why = o.infeasible_reason.as_deref().unwrap_or("over the budget");
            for part in why.split("; ") {
                out.push((format!("  {part}"), theme.warning()));
            }
        }
        for n in &o.notes {
            out.push((format!("note: {n}"), theme.muted()));
        }
    }
    if out.is_empty() {
        out.push(("no messages".into(), theme.muted()));
    }
    out
}

/// The overlay's rows for an inner width of `width` columns (every entry wrapped, a
/// continuation indented).
pub fn rows(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (text, style) in entries(app) {
        let indent = text.chars().take_while(|c| *c == ' ').count() + 2;
        let body = text.trim_start();
        let first_w = width.saturating_sub(indent - 2).max(1);
        let mut wrapped = wrap_words(body, first_w).into_iter();
        if let Some(first) = wrapped.next() {
            lines.push(Line::styled(
                format!("{}{first}", " ".repeat(indent - 2)),
                style,
            ));
        }
        // Later rows of one entry are re-wrapped to the indented width.
        let rest: Vec<String> = wrapped.collect();
        for row in wrap_words(&rest.join(" "), width.saturating_sub(indent).max(1)) {
            if !row.is_empty() {
                lines.push(Line::styled(format!("{}{row}", " ".repeat(indent)), style));
            }
        }
    }
    lines
}

/// Draws the overlay centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    let w = area.width.saturating_sub(4).min(100);
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    let lines = rows(app, inner_w);
    let total = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let h = area.height.saturating_sub(2).min(total.saturating_add(2));
    let visible = h.saturating_sub(2);
    let scroll = app.messages_scroll.min(total.saturating_sub(visible));
    let r = super::clear_centred(area, buf, w, h);
    let title = if total > visible {
        format!(
            " messages · ↑↓ {}–{} of {total} · Esc closes ",
            scroll + 1,
            scroll + visible
        )
    } else {
        " messages · Esc closes ".to_string()
    };
    Paragraph::new(lines)
        .block(super::overlay_block(title, theme))
        .scroll((scroll, 0))
        .render(r, buf);
}
