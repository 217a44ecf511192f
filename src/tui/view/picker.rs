//! The units picker overlay (`u`): every droppable unit of the attention and MLP blocks with
//! its size and recompute time per micro-batch and layer, checked when the `named` strategy
//! recomputes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::plan::Strategy;
use crate::tui::app::App;
use crate::tui::picker;

use super::format;

/// Draws the picker, when open, centred over `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let (Some(cursor), Some(solved)) = (app.picker, app.solved.as_ref()) else {
        return;
    };
    let theme = &app.theme;
    let entries = picker::entries(solved);
    let names = &app.scenario.plan.recompute_units;
    let picked = entries.iter().filter(|e| e.named_in(names)).count();
    let w = area.width.saturating_sub(4).min(64);
    let inner_w = usize::from(w.saturating_sub(2));
    let name_w = entries
        .iter()
        .map(|e| e.qualified().chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let strategy = app.scenario.plan.strategy;
    let head = if strategy == Strategy::Named {
        format!(
            "named recomputes {picked} of {} units per layer",
            entries.len()
        )
    } else {
        format!("strategy {strategy}: a pick makes it named")
    };
    let mut lines = vec![
        Line::styled(super::metrics::fit_words(&head, inner_w), theme.muted()),
        Line::styled(
            format::clip_line(
                Line::from(format!(
                    "    {:<name_w$} {:>9} {:>9}",
                    "unit", "per mb", "recompute"
                )),
                inner_w,
            )
            .to_string(),
            theme.muted(),
        ),
    ];
    for (i, e) in entries.iter().enumerate() {
        let mark = if e.named_in(names) { "[R]" } else { "[ ]" };
        let text = format!(
            "{mark} {:<name_w$} {:>9} {:>9}",
            e.qualified(),
            format::bytes(e.size_bytes),
            format::time(e.recompute_s)
        );
        let style = if i == cursor {
            theme.selected()
        } else if e.named_in(names) {
            theme.accent()
        } else {
            theme.text()
        };
        lines.push(format::clip_line(
            Line::from(Span::styled(text, style)),
            inner_w,
        ));
    }
    let titles = [
        " units to recompute (named) · ↑↓ · space toggles · Esc ",
        " units (named) · ↑↓ · space · Esc ",
        " units ",
    ];
    // The cursor's row (below the two head lines) stays in view.
    super::centred_list(area, buf, theme, w, lines, &titles, cursor + 2);
}
