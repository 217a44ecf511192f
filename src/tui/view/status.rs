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

/// What a file that did not reload leaves in place: the last good version of a preset or
/// theme; nothing for the settings file, which `e` reads when it exports.
pub fn kept(path: &std::path::Path) -> &'static str {
    if path
        .file_name()
        .is_some_and(|n| n == crate::scenario::presets::SETTINGS_FILE)
    {
        "(e refuses to export until it is fixed)"
    } else {
        "(last good version kept)"
    }
}

/// The left-hand message and its style.
pub fn message(app: &App) -> (String, Style) {
    let theme = &app.theme;
    // The answer to the last key first (it goes at the next one); then a file that did not
    // reload, which stays until it is fixed.
    if let Some(n) = app.note.as_ref().filter(|_| !app.reload_errors.is_empty()) {
        return (n.clone(), theme.text());
    }
    // An error newer than the latest file error (an edit refused since) is the answer to
    // the last key: it goes first, and the files wait in `!`.
    if let Some(e) = app
        .error
        .as_ref()
        .filter(|e| !app.reload_errors.is_empty() && app.error_at_reload.as_ref() != Some(*e))
    {
        let files = match app.reload_errors.len() {
            1 => "; 1 file has an error (! shows all)".to_string(),
            n => format!("; {n} files have errors (! shows all)"),
        };
        return (format!("✗ {e}{files}"), theme.error());
    }
    if let Some((path, e)) = app.reload_errors.iter().next() {
        let more = match app.reload_errors.len() - 1 {
            0 => String::new(),
            1 => "; 1 more file has an error (! shows all)".into(),
            n => format!("; {n} more files have errors (! shows all)"),
        };
        return (
            format!("✗ {} {}{more}", short_paths(e), kept(path)),
            theme.error(),
        );
    }
    if let Some(e) = &app.error {
        return (format!("✗ {e}"), theme.error());
    }
    if let Some(n) = &app.note {
        return (n.clone(), theme.text());
    }
    if app.layout_edit.is_some() {
        return (
            "layout: E embedding, t layer, L loss, | between stages, t*3 repeats; empty: the \
             partition's split"
                .into(),
            theme.accent(),
        );
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

/// The key hints of the current mode, as `(key, what)` pairs.
pub fn hints(app: &App) -> &'static [(&'static str, &'static str)] {
    if app.layout_edit.is_some() {
        // Every key types into the editor: the global ones would mislead here.
        return &[("⏎", "apply"), ("Esc", "cancel"), ("← →", "move")];
    }
    match app.mode {
        Mode::Normal if app.sweep.open => &[
            ("↑↓", "pick"),
            ("⏎", "load"),
            ("Tab", "parameter"),
            ("←→", "edit"),
            ("o", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Mode::Compare => &[
            ("b", "B's strategy"),
            ("c", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Mode::Story { .. } => &[("n/p", "step"), ("t", "back"), ("?", "help"), ("q", "quit")],
        Mode::Lesson { .. } => &[("n/p", "step"), ("i", "back"), ("?", "help"), ("q", "quit")],
        Mode::Normal => &[
            ("?", "help"),
            ("c", "compare"),
            ("t", "story"),
            ("i", "lesson"),
            ("o", "sweep"),
            ("e", "export"),
            ("q", "quit"),
        ],
    }
}

/// The hints as one line: ` · ` between them (`wide`), or single spaces (the keys stand
/// out by colour), as `(text, is_key)` parts.
fn hints_line(app: &App, wide: bool) -> Vec<(String, bool)> {
    let pairs = hints(app);
    let mut out = vec![(" ".to_string(), false)];
    for (i, (key, what)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push((if wide { " · " } else { " " }.to_string(), false));
        }
        out.push(((*key).to_string(), true));
        out.push((format!(" {what}"), false));
    }
    out.push((" ".to_string(), false));
    out
}

fn text_width(parts: &[(String, bool)]) -> usize {
    parts.iter().map(|(t, _)| t.chars().count()).sum()
}

/// Most rows the status message may take in a terminal `height` rows high; a longer message
/// ends in "… ! shows all" (the `!` overlay shows it whole).
pub fn max_rows(height: u16) -> usize {
    usize::from(height / 6).clamp(1, 6)
}

/// Terminals shorter than this give a message other than a reload error one line of its own
/// (above the hints' line), cut with "… ! shows all": at 80x24 every row of the panels counts.
pub const ONE_LINE_BELOW: u16 = 30;

/// Most rows `app`'s message may take at `height` rows: a file that did not reload, and the
/// layout editor's error, are shown whole up to [`max_rows`] (a place in a text must stay
/// readable, and `!` types into the editor); any other message takes one row below
/// [`ONE_LINE_BELOW`] rows.
fn rows_for(app: &App, height: u16) -> usize {
    let reload_shown = !app.reload_errors.is_empty() && app.note.is_none();
    // The layout editor's error is read while fixing the text, where `!` is a character.
    let editing = app.layout_edit.is_some();
    if reload_shown || editing || height >= ONE_LINE_BELOW {
        max_rows(height)
    } else {
        1
    }
}

/// Suffix of a message cut to [`max_rows`].
pub const SHOWS_ALL: &str = "… ! shows all";

/// How the status bar lays out.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The message's rows (one when the hints share it).
    pub rows: Vec<String>,
    /// Whether the hints share the message's single row (else they take a row below it).
    pub beside: bool,
    /// Whether the hints are separated by ` · ` (else by single spaces).
    pub wide: bool,
}

/// How the status bar lays out in `width` x `height` columns and rows: the message's rows
/// (wrapped; cut to [`max_rows`], or one row on a short terminal, with [`SHOWS_ALL`]), and
/// where the hints go.
pub fn plan(app: &App, width: u16, height: u16) -> Plan {
    plan_rows(app, width, rows_for(app, height))
}

/// [`plan`] with at most `max` rows for the message.
fn plan_rows(app: &App, width: u16, max: usize) -> Plan {
    let (msg, _) = message(app);
    let w = usize::from(width);
    let msg_w = msg.chars().count() + 2;
    for wide in [true, false] {
        if msg_w + text_width(&hints_line(app, wide)) <= w {
            return Plan {
                rows: vec![msg],
                beside: true,
                wide,
            };
        }
    }
    let room = w.saturating_sub(1).max(1);
    let mut rows = super::format::wrap_words(&msg, room);
    let max = max.max(1);
    if rows.len() > max {
        let rest = rows[max - 1..].join(" ");
        rows.truncate(max - 1);
        let keep = room.saturating_sub(SHOWS_ALL.chars().count());
        let cut = super::metrics::fit_words(&rest, keep + 1);
        let cut = cut.strip_suffix('…').unwrap_or(&cut).trim_end().to_string();
        rows.push(format!("{cut}{SHOWS_ALL}"));
    }
    Plan {
        rows,
        beside: false,
        wide: text_width(&hints_line(app, true)) <= w,
    }
}

/// Rows the status bar takes in a terminal of `width` x `height` (the layout asks).
pub fn height(app: &App, width: u16, height: u16) -> u16 {
    let p = plan(app, width, height);
    let n = p.rows.len() + usize::from(!p.beside);
    u16::try_from(n).unwrap_or(1).max(1)
}

/// Draws the status bar: the message, wrapped over as many rows as the layout gave it, and
/// the key hints on the right of the last row.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let (_, style) = message(app);
    let beside = plan_rows(app, area.width, usize::MAX).beside;
    let room = usize::from(area.height) - usize::from(!beside && area.height > 1);
    let p = plan_rows(app, area.width, room);
    for (i, row) in p.rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= area.height {
            break;
        }
        buf.set_stringn(
            area.x,
            area.y + dy,
            format!(" {row}"),
            usize::from(area.width),
            style,
        );
    }
    let hints = hints_line(app, p.wide);
    let hints_w = u16::try_from(text_width(&hints)).unwrap_or(u16::MAX);
    if hints_w > area.width {
        return;
    }
    let y = if p.beside {
        area.y
    } else {
        area.bottom().saturating_sub(1)
    };
    let mut x = area.right() - hints_w;
    for (text, key) in hints {
        let st = if key { theme.accent() } else { theme.muted() };
        buf.set_stringn(x, y, &text, usize::from(area.right() - x), st);
        x += u16::try_from(text.chars().count()).unwrap_or(0);
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
