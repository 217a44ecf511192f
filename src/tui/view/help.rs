//! The help overlay, generated from the keymap and the actions' doc comments.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::tui::app::App;
use crate::tui::keymap;

use super::format::wrap_words;

/// The glossary at the end of the help.
const GLOSSARY: [&str; 3] = [
    "p stages · t tensor · d data parallel · m micro-batches · b micro-batch size",
    "1F1B-R: 1F1B with full recomputation (the baseline); units K keep R recompute C compress O offload",
    "bwd per micro-batch includes recomputation; mem lane: activation memory over time",
];

/// The overlay's width in `area` and the width inside its border.
fn widths(area: Rect) -> (u16, usize) {
    let w = area.width.saturating_sub(4).min(96);
    (w, usize::from(w.saturating_sub(2)).max(1))
}

/// The overlay's rows at `inner_w` columns: the key entries and the notes that match the
/// filter (all of them without one), each at most `inner_w` wide.
fn content(app: &App, inner_w: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let query = app.help_query.to_lowercase();
    let matches = |text: &str| query.is_empty() || text.to_lowercase().contains(&query);
    let entries: Vec<keymap::HelpLine> = keymap::help_lines()
        .into_iter()
        .filter(|l| matches(&l.keys) || matches(&l.text))
        .collect();
    // The key column is as wide as the widest keys, up to a third of the overlay; longer
    // keys start their row, their description beside them.
    let key_w = entries
        .iter()
        .map(|l| Line::from(l.keys.as_str()).width())
        .max()
        .unwrap_or(0)
        .min(inner_w / 3);
    let mut lines: Vec<Line> = Vec::new();
    for l in &entries {
        lines.extend(key_rows(&l.keys, &l.text, key_w, inner_w, theme));
    }
    let notes: Vec<String> = [
        "MFU: Megatron's model FLOPs (causal s² halved); HFU adds recompute.".to_string(),
        "Gantt: █ fwd ▓ bwd ▒ wgrad ░ recomp ▚ offload · idle; ▆ ▄ ▂ (f b w): 2nd chunk"
            .to_string(),
    ]
    .into_iter()
    .chain(GLOSSARY.iter().map(|g| g.to_string()))
    .chain([format!(
        "Parameters (↑ ↓ select, ← → step, digits type): {}.",
        crate::tui::fields::Field::ALL
            .iter()
            .map(|f| f.label())
            .collect::<Vec<_>>()
            .join(", ")
    )])
    .chain([format!(
        "Theme {} (T cycles; NO_COLOR: mono). Shift-drag or v: select text.",
        theme.name
    )])
    .filter(|n| matches(n))
    .collect();
    if lines.is_empty() && notes.is_empty() {
        lines.push(Line::styled(
            format!(
                "no key matches '{}' (Backspace, or Esc clears)",
                app.help_query
            ),
            theme.warning(),
        ));
    }
    for note in notes {
        for row in wrap_words(&note, inner_w) {
            lines.push(Line::styled(row, theme.muted()));
        }
    }
    lines
}

/// The overlay's height in `area` and the rows of text it shows, for `rows` rows of text.
fn heights(area: Rect, rows: u16) -> (u16, u16) {
    let h = area.height.saturating_sub(2).min(rows.saturating_add(2));
    (h, h.saturating_sub(2))
}

/// The furthest the help scrolls on a `size` terminal: the offset that shows its last row
/// at the bottom (PgDn stops there, so PgUp scrolls at once).
pub fn max_scroll(app: &App, size: (u16, u16)) -> u16 {
    let area = Rect::new(0, 0, size.0, size.1);
    let (_, inner_w) = widths(area);
    let rows = u16::try_from(content(app, inner_w).len()).unwrap_or(u16::MAX);
    let (_, visible) = heights(area, rows);
    rows.saturating_sub(visible)
}

/// Draws the help overlay centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    let (w, inner_w) = widths(area);
    let lines = content(app, inner_w);
    // Every line is at most `inner_w` wide: one row each, so the scroll range is exact.
    let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let (h, visible) = heights(area, rows);
    let scroll = app.help_scroll.min(rows.saturating_sub(visible));
    let r = super::clear_centred(area, buf, w, h);
    let title = match (app.help_typing, app.help_query.is_empty()) {
        (true, _) => format!(
            " help · filter: {}▌ · Enter keeps · Esc clears ",
            app.help_query
        ),
        (false, false) => format!(" help · filter: {} · / edits · Esc closes ", app.help_query),
        (false, true) => " help · / filters · Esc closes ".to_string(),
    };
    let title = if rows > visible {
        let more = if scroll + visible < rows { "↓" } else { "" };
        let less = if scroll > 0 { "↑" } else { "" };
        format!(
            "{} · {less}{more} {}–{} of {rows} ",
            title.trim_end(),
            scroll + 1,
            scroll + visible
        )
    } else {
        title
    };
    let block = Block::bordered()
        .title(title)
        .border_style(theme.accent())
        .title_style(theme.accent());
    Paragraph::new(lines)
        .block(block)
        .scroll((scroll, 0))
        .render(r, buf);
}

/// One help entry as rows no wider than `width`: the keys right-aligned in a column of
/// `key_w`, the description word-wrapped beside them with a hanging indent (keys wider
/// than the column get a row of their own).
fn key_rows<'a>(
    keys: &str,
    text: &str,
    key_w: usize,
    width: usize,
    theme: &crate::tui::theme::Theme,
) -> Vec<Line<'a>> {
    let indent = key_w + 2;
    let text_w = width.saturating_sub(indent).max(8);
    let keys_w = Line::from(keys).width();
    let mut rows = Vec::new();
    if keys_w > key_w {
        // Wider keys start the row and the description follows them on it, so that it is
        // not pushed to the next line; what is left wraps under the key column's indent.
        // The keys take single spaces here, to leave the description more of the row.
        let keys = keys.split_whitespace().collect::<Vec<_>>().join(" ");
        let keys_w = Line::from(keys.as_str()).width();
        let (first, rest) = first_words(text, width.saturating_sub(keys_w + 2));
        if keys_w + 2 > width || first.is_empty() {
            for part in wrap_words(&keys, width) {
                rows.push(Line::from(Span::styled(part, theme.accent())));
            }
        } else {
            rows.push(Line::from(vec![
                Span::styled(format!("{keys}  "), theme.accent()),
                Span::styled(first, theme.text()),
            ]));
            for part in wrap_words(&rest, text_w) {
                rows.push(Line::from(vec![
                    Span::raw(" ".repeat(indent)),
                    Span::styled(part, theme.text()),
                ]));
            }
            return rows;
        }
    }
    let mut body = wrap_words(text, text_w).into_iter();
    if keys_w <= key_w
        && let Some(first) = body.next()
    {
        rows.push(Line::from(vec![
            Span::styled(format!("{keys:>key_w$}  "), theme.accent()),
            Span::styled(first, theme.text()),
        ]));
    }
    for rest in body {
        rows.push(Line::from(vec![
            Span::raw(" ".repeat(indent)),
            Span::styled(rest, theme.text()),
        ]));
    }
    rows
}

/// The words of `text` that fit on a row of `width` columns, and the rest.
fn first_words(text: &str, width: usize) -> (String, String) {
    let mut first = String::new();
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.peek() {
        let extra = usize::from(!first.is_empty()) + Line::from(*word).width();
        if Line::from(first.as_str()).width() + extra > width {
            break;
        }
        if !first.is_empty() {
            first.push(' ');
        }
        first.push_str(word);
        words.next();
    }
    (first, words.collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::super::format::wrap_words;
    use ratatui::text::Line;

    #[test]
    fn words_wrap_within_the_width_and_keep_every_word() {
        let text = "Cycle schedule; strategy; model; GPU; capital: back ↑↓ PgUp";
        for width in 1..40 {
            let rows = wrap_words(text, width);
            assert!(
                rows.iter().all(|r| Line::from(r.as_str()).width() <= width),
                "{rows:?}"
            );
            let joined: String = rows.concat().split_whitespace().collect();
            let want: String = text.split_whitespace().collect();
            assert_eq!(joined, want, "width {width}");
        }
    }
}
