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
        let rows = wrap_entry(body, first_w, width.saturating_sub(indent).max(1));
        for (i, row) in rows.into_iter().enumerate() {
            let pad = if i == 0 { indent - 2 } else { indent };
            if i == 0 || !row.is_empty() {
                lines.push(Line::styled(format!("{}{row}", " ".repeat(pad)), style));
            }
        }
    }
    lines
}

/// One entry's rows: the first `first_w` wide, the later ones `rest_w` (indented). The later
/// rows are wrapped from the text itself: a word cut at the first row's end (a long path)
/// goes on whole, with no space put into it (`file:9:11` stays copyable).
fn wrap_entry(body: &str, first_w: usize, rest_w: usize) -> Vec<String> {
    let first = wrap_words(body, first_w)
        .into_iter()
        .next()
        .unwrap_or_default();
    let rest = after_row(body, &first);
    let mut rows = vec![first];
    rows.extend(wrap_words(rest, rest_w));
    rows
}

/// What of `text` follows its first row `row` (a prefix of it, but for spaces), with the
/// spaces at the cut left out.
fn after_row<'t>(text: &'t str, row: &str) -> &'t str {
    let mut wanted = row.chars().filter(|c| *c != ' ').peekable();
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if wanted.peek().is_none() {
            break;
        }
        if c != ' ' {
            wanted.next();
        }
        end = i + c.len_utf8();
    }
    text[end..].trim_start()
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

#[cfg(test)]
mod tests {
    use super::wrap_entry;

    /// A file error's location cut at a row's end goes on whole: no space is put into
    /// `r7.toml:9:11`, and no character is lost.
    #[test]
    fn a_long_path_wraps_without_a_space_inside_its_location() {
        let body = "✗ /home/someone/.config/pipescope/themes/r7.toml:9:11: colour forward = \"#56b4zz\" is not a colour name";
        for width in 16..60 {
            let rows = wrap_entry(body, width, width - 2);
            let text = rows.join(" ");
            assert!(!text.contains("9: 11"), "{width}: {rows:?}");
            assert!(!text.contains(": 9:11"), "{width}: {rows:?}");
            let joined: String = rows.concat().split_whitespace().collect();
            let want: String = body.split_whitespace().collect();
            assert_eq!(joined, want, "{width}");
            assert!(
                rows.iter().any(|r| r.contains("r7.toml:9:11:")),
                "{width}: {rows:?}"
            );
        }
    }
}
