//! The parameters panel: one row per editable field, the selected one highlighted, a typed
//! number shown with a cursor.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::tui::app::{App, Mode, STORY};
use crate::tui::fields::Field;

/// Width of the label column.
const LABEL: usize = 9;

/// Draws the parameters panel.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 3 {
        return;
    }
    let theme = &app.theme;
    let title = match app.mode {
        Mode::Compare => " params (B: edit) ",
        Mode::Lesson { .. } => " params (lesson: p, m) ",
        _ => " params ",
    };
    let inner = super::panel(title, theme, area, buf);
    // Story mode shows the step's strategy (and schedule), the one the views draw.
    let story_scenario = match app.mode {
        Mode::Story { step } => STORY.get(step).map(|s| s.scenario(&app.scenario)),
        _ => None,
    };
    let scenario = story_scenario.as_ref().unwrap_or(&app.scenario);
    let width = usize::from(inner.width);
    for (i, field) in Field::ALL.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        let y = inner.y + dy;
        let selected = *field == app.field;
        let value = match (&app.typing, selected) {
            (Some(t), true) => format!("{t}▌"),
            _ => match (app.mode, field) {
                (Mode::Lesson { .. }, Field::Stages) => app.lesson_size.0.to_string(),
                (Mode::Lesson { .. }, Field::MicroBatches) => app.lesson_size.1.to_string(),
                _ => field.value(scenario),
            },
        };
        let room = width.saturating_sub(LABEL);
        let value: String = if value.chars().count() > room {
            let mut v: String = value.chars().take(room.saturating_sub(1)).collect();
            v.push('…');
            v
        } else {
            value
        };
        let line = format!("{:<LABEL$}{value:<room$}", field.label());
        let style = if selected {
            theme.selected()
        } else {
            theme.text()
        };
        buf.set_stringn(inner.x, y, &line, width, style);
        if !selected {
            buf.set_stringn(inner.x, y, field.label(), LABEL, theme.muted());
        }
        if app.unsolved(*field) && width > LABEL + 2 {
            // Marks an edit the engine rejected: the screen still shows the last good result.
            buf.set_stringn(inner.right() - 1, y, "✗", 1, theme.error());
        }
    }
}
