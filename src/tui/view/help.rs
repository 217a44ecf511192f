//! The help overlay, generated from the keymap and the actions' doc comments.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::tui::app::App;
use crate::tui::keymap;

/// The glossary at the end of the help.
const GLOSSARY: [&str; 3] = [
    "p stages · t tensor · d data parallel · m micro-batches · b micro-batch size",
    "1F1B-R: 1F1B with full recomputation (the baseline); units K keep R recompute C compress O offload",
    "bwd per micro-batch includes recomputation; mem lane: activation memory over time",
];

/// Draws the help overlay centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    let query = app.help_query.to_lowercase();
    let mut lines: Vec<Line> = keymap::help_lines()
        .into_iter()
        .filter(|l| {
            query.is_empty()
                || l.keys.to_lowercase().contains(&query)
                || l.text.to_lowercase().contains(&query)
        })
        .map(|l| {
            Line::from(vec![
                Span::styled(format!("{:>15}  ", l.keys), theme.accent()),
                Span::styled(l.text, theme.text()),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            format!(
                "no key matches '{}' (Backspace, or Esc clears)",
                app.help_query
            ),
            theme.warning(),
        ));
    }
    lines.push(Line::styled(
        "MFU: Megatron's model FLOPs (causal s² halved); HFU adds recompute.",
        theme.muted(),
    ));
    lines.push(Line::styled(
        "Gantt: █ fwd ▓ bwd ▒ wgrad ░ recomp ▚ offload · idle; ▆ ▄ ▂ (f b w): 2nd chunk",
        theme.muted(),
    ));
    for gloss in GLOSSARY {
        lines.push(Line::styled(gloss, theme.muted()));
    }
    lines.push(Line::styled(
        format!(
            "Theme {} (T cycles; NO_COLOR: mono). Shift-drag or v: select text.",
            theme.name
        ),
        theme.muted(),
    ));
    let w = area.width.saturating_sub(4).min(96);
    // Rows the lines take once wrapped; what does not fit scrolls (↑↓ PgUp PgDn).
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| {
            // Word wrapping leaves ends of rows empty: count a wrapped line generously.
            let w = l.width();
            if w <= inner_w {
                1
            } else {
                w.div_ceil((inner_w * 4 / 5).max(1))
            }
        })
        .sum();
    let rows = u16::try_from(rows).unwrap_or(u16::MAX);
    let h = area.height.saturating_sub(2).min(rows.saturating_add(2));
    let visible = h.saturating_sub(2);
    let scroll = app.help_scroll.min(rows.saturating_sub(visible));
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let title = match (app.help_typing, app.help_query.is_empty()) {
        (true, _) => format!(
            " help · filter: {}▌ · Enter keeps · Esc clears ",
            app.help_query
        ),
        (false, false) => format!(" help · filter: {} · / edits · Esc closes ", app.help_query),
        (false, true) => " help · / filters · Esc closes ".to_string(),
    };
    let title = if rows > visible {
        let more = if scroll + visible < rows { "↓" } else { " " };
        let less = if scroll > 0 { "↑" } else { " " };
        format!(
            "{} ·{less}{more} {}–{} of {rows} ",
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
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(r, buf);
}
