//! The status bar: the most important message on the left (reload error, solve error,
//! infeasibility, a note, solving / solved in), key hints on the right.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::tui::app::{App, Mode};

use super::format;

/// Shortens an absolute path at the start of `msg` to its last two components
/// (`presets/mine.toml:3:9: ...`), so the line and column stay visible in the status bar.
pub fn short_paths(msg: &str) -> String {
    if !msg.starts_with('/') {
        return msg.to_string();
    }
    let end = msg.find(".toml").map_or(0, |i| i + ".toml".len());
    let (path, rest) = msg.split_at(end);
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    let short: Vec<&str> = parts.into_iter().rev().collect();
    format!("{}{rest}", short.join("/"))
}

/// The left-hand message and its style.
pub fn message(app: &App) -> (String, Style) {
    let theme = &app.theme;
    // The answer to the last key first (it goes at the next one); then a file that did not
    // reload, which stays until it is fixed.
    if let Some(n) = app.note.as_ref().filter(|_| !app.reload_errors.is_empty()) {
        return (n.clone(), theme.text());
    }
    if let Some(e) = app.reload_errors.values().next() {
        return (
            format!("✗ {} (last good version kept)", short_paths(e)),
            theme.error(),
        );
    }
    if let Some(e) = &app.error {
        return (format!("✗ {e}"), theme.error());
    }
    if let Some(n) = &app.note {
        return (n.clone(), theme.text());
    }
    if app.typing.is_some() {
        return (
            format!("typing {}: Enter applies, Esc cancels", app.field.label()),
            theme.accent(),
        );
    }
    if app.solving {
        return ("solving…".into(), theme.muted());
    }
    if crate::tui::fields::Field::ALL
        .iter()
        .any(|f| app.unsolved(*f))
    {
        return (
            "✗ marked fields did not solve; the last good result is shown".into(),
            theme.warning(),
        );
    }
    match app.shown() {
        Some(s) if !s.outcome.feasible => (infeasible(&s.outcome), theme.warning()),
        Some(s) if !s.outcome.notes.is_empty() => (s.outcome.notes.join("; "), theme.muted()),
        Some(s) if app.show_solve_time => (
            format!("solved in {}", format::time(s.outcome.solve_time_s)),
            theme.muted(),
        ),
        Some(_) => ("solved".into(), theme.muted()),
        None => (String::new(), theme.muted()),
    }
}

/// A short infeasibility summary that fits the status bar: how many stages are over
/// budget and the worst one (the memory panel shows every stage).
fn infeasible(o: &crate::Outcome) -> String {
    let over: Vec<_> = o
        .stages
        .iter()
        .filter(|s| s.peak_memory_bytes > s.budget_bytes)
        .collect();
    let worst = over
        .iter()
        .max_by_key(|s| s.peak_memory_bytes.saturating_sub(s.budget_bytes));
    match worst {
        Some(w) => format!(
            "infeasible: stage {} needs {}/{} GiB ({} of {} over)",
            w.stage,
            format::gib(w.peak_memory_bytes),
            format::gib(w.budget_bytes),
            over.len(),
            o.stages.len(),
        ),
        None => format!(
            "infeasible: {}",
            o.infeasible_reason.as_deref().unwrap_or("over budget")
        ),
    }
}

/// Draws the status bar.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let hints = match app.mode {
        Mode::Normal if app.sweep.open => " ↑↓ pick · ⏎ load · o back · q quit ",
        Mode::Compare => " b B's strategy · c back · ? help · q quit ",
        Mode::Story { .. } => " n/p step · t back · ? help · q quit ",
        Mode::Lesson { .. } => " n/p step · i back · ? help · q quit ",
        Mode::Normal => " ? help · c compare · t story · q quit ",
    };
    let hints_w = hints.chars().count() as u16;
    let (msg, style) = message(app);
    let msg_w = area.width.saturating_sub(hints_w + 1);
    // A message longer than the room left of the hints takes the whole line (an error
    // matters more than hints that `?` repeats).
    let long = msg.chars().count() + 1 > usize::from(msg_w);
    let msg_w = if msg_w < 20 || long {
        area.width
    } else {
        msg_w
    };
    let msg = super::metrics::fit_words(&msg, usize::from(msg_w).saturating_sub(1));
    buf.set_stringn(area.x, area.y, format!(" {msg}"), usize::from(msg_w), style);
    if msg_w < area.width {
        buf.set_stringn(
            area.right() - hints_w,
            area.y,
            hints,
            usize::from(hints_w),
            theme.muted(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shortened_but_keep_line_and_column() {
        assert_eq!(
            short_paths("/tmp/x/pipescope/presets/mine.toml:10:17: bad"),
            "presets/mine.toml:10:17: bad"
        );
        assert_eq!(short_paths("mine.toml:1:1: bad"), "mine.toml:1:1: bad");
    }
}
