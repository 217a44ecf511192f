//! The parameters panel: one row per editable field, the selected one highlighted, a typed
//! number shown with a cursor. When the fields outnumber the rows, the panel scrolls to keep
//! the selected field in view and its borders say how many are above and below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use ratatui::style::Modifier;

use crate::tui::app::{App, Mode, STORY};
use crate::tui::fields::Field;
use crate::tui::line_edit::LineEdit;

/// Width of the label column.
const LABEL: usize = 10;

/// Index in `fields` (those shown, [`Field::shown_in`]) of the first field shown in `rows`
/// rows: the selected field kept in the middle, the list never scrolled past its ends.
pub fn first_shown(fields: &[Field], selected: Field, rows: usize) -> usize {
    let n = fields.len();
    if rows >= n {
        return 0;
    }
    let i = fields.iter().position(|f| *f == selected).unwrap_or(0);
    i.saturating_sub(rows / 2).min(n - rows)
}

/// Draws the parameters panel.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 3 {
        return;
    }
    let theme = &app.theme;
    // The longest form that fits whole (its closing space too), the plain one last.
    let forms: &[&str] = match app.mode {
        Mode::Compare => &[" params (B: edit) "],
        Mode::Lesson { .. } => &[" params (lesson: p, m) ", " params (p, m) "],
        _ => &[],
    };
    // The count of fields above the view goes on the top border: where it leaves the title
    // too little room, the title is the short one (the count wrote over "(B: edit)").
    let above = first_shown(
        &Field::shown_in(&app.scenario),
        app.field,
        usize::from(area.height.saturating_sub(2)),
    );
    let mark = format!(" ↑{above} more ");
    let room = usize::from(area.width.saturating_sub(2)).saturating_sub(if above > 0 {
        mark.chars().count() + 1
    } else {
        0
    });
    let title = forms
        .iter()
        .copied()
        .find(|t| t.chars().count() <= room)
        .unwrap_or(" params ");
    let inner = super::panel(title, theme, area, buf);
    // Story mode shows the step's strategy (and schedule), the one the views draw.
    let story_scenario = match app.mode {
        Mode::Story { step } => STORY.get(step).map(|s| s.scenario(&app.scenario)),
        _ => None,
    };
    let scenario = story_scenario.as_ref().unwrap_or(&app.scenario);
    let width = usize::from(inner.width);
    let rows = usize::from(inner.height);
    // The rows follow the scenario being edited (the expert rows only for a mixture of
    // experts), as the mouse and the field cycle do.
    let fields = Field::shown_in(&app.scenario);
    let first = first_shown(&fields, app.field, rows);
    let below = fields.len().saturating_sub(first + rows);
    // How many fields are out of view, on the borders.
    for (count, arrow, y) in [(first, "↑", area.y), (below, "↓", area.bottom() - 1)] {
        let mark = format!(" {arrow}{count} more ");
        let w = mark.chars().count() as u16;
        if count > 0 && area.width > w + 2 {
            buf.set_stringn(
                area.right() - w - 1,
                y,
                &mark,
                usize::from(w),
                theme.accent(),
            );
        }
    }
    for (i, field) in fields.iter().enumerate().skip(first) {
        let Ok(dy) = u16::try_from(i - first) else {
            break;
        };
        if dy >= inner.height {
            break;
        }
        let y = inner.y + dy;
        let selected = *field == app.field;
        let value = match (&app.typing, selected) {
            _ if *field == Field::Layout && app.layout_edit.is_some() => String::new(),
            (Some(t), true) => format!("{t}▌"),
            _ => match (app.mode, field) {
                (Mode::Lesson { .. }, Field::Stages) => app.lesson_size.0.to_string(),
                (Mode::Lesson { .. }, Field::MicroBatches) => app.lesson_size.1.to_string(),
                _ => field.value(scenario),
            },
        };
        // A preset name longer than its column starts right after its label instead, so
        // that it reads whole at 80 columns ("llama3.1-405b", not "llama3.1-40…").
        let name = matches!(field, Field::Model | Field::Gpu);
        let label_w = if name && value.chars().count() > width.saturating_sub(LABEL) {
            (field.label().chars().count() + 1).min(LABEL)
        } else {
            LABEL
        };
        let room = width.saturating_sub(label_w);
        let value: String = if value.chars().count() > room {
            let mut v: String = value.chars().take(room.saturating_sub(1)).collect();
            v.push('…');
            v
        } else {
            value
        };
        let line = format!("{:<label_w$}{value:<room$}", field.label());
        let style = if selected {
            theme.selected()
        } else {
            theme.text()
        };
        buf.set_stringn(inner.x, y, &line, width, style);
        if !selected {
            buf.set_stringn(inner.x, y, field.label(), LABEL, theme.muted());
        }
        if let (Some(edit), Field::Layout) = (&app.layout_edit, field) {
            editor(inner.x + LABEL as u16, y, room, edit, buf, app);
        }
        if app.unsolved(*field) && width > LABEL + 2 {
            // Marks an edit the engine rejected: the screen still shows the last good result.
            buf.set_stringn(inner.right() - 1, y, "✗", 1, theme.error());
        }
    }
}

/// The layout editor's line in `room` columns from `x`: the part of the text around the
/// cursor, the cursor's cell drawn against the row (a space after the text's end).
fn editor(x: u16, y: u16, room: usize, edit: &LineEdit, buf: &mut Buffer, app: &App) {
    if room == 0 {
        return;
    }
    let start = edit.window_start(room);
    let shown: Vec<char> = edit
        .chars()
        .iter()
        .copied()
        .skip(start)
        .take(room)
        .collect();
    let style = app.theme.selected();
    // The cursor is the selected row's style turned inside out (the row is reversed), and
    // underlined so that it shows on a terminal without reverse video too.
    let cursor_style = if style.add_modifier.contains(Modifier::REVERSED) {
        style.remove_modifier(Modifier::REVERSED)
    } else {
        style.add_modifier(Modifier::REVERSED)
    }
    .add_modifier(Modifier::UNDERLINED);
    let mut cx = x;
    let end = x.saturating_add(u16::try_from(room).unwrap_or(u16::MAX));
    for (i, c) in shown.iter().enumerate() {
        let w = u16::try_from(crate::tui::line_edit::columns(*c)).unwrap_or(1);
        if cx.saturating_add(w) > end {
            break;
        }
        let st = if start + i == edit.cursor() {
            cursor_style
        } else {
            style
        };
        buf.set_stringn(cx, y, c.to_string(), usize::from(w), st);
        cx += w;
    }
    if edit.cursor() >= start + shown.len() && cx < end {
        buf.set_stringn(cx, y, " ", 1, cursor_style);
    }
}
