//! The front a running sweep has solved so far, as the sweep view draws it: in the normal
//! style over the dimmed previous answer (or alone on a first sweep), marked
//! `forming · 37 %` as provisional. The answer's front replaces it when the sweep is done.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::symbols::Marker;
use ratatui::widgets::{Dataset, GraphType, Widget};

use crate::tui::app::App;

use super::sweep::{Axes, bounds, chart};

/// The front forming drawn alone over `area`, on axes that fit it (a first sweep: no
/// previous answer under it).
pub(super) fn forming_alone(area: Rect, buf: &mut Buffer, app: &App, front: &[(f64, f64)]) {
    if front.is_empty() || area.height < 4 {
        return;
    }
    let x = bounds(front.iter().map(|p| p.0));
    let y = bounds(front.iter().map(|p| p.1));
    chart(app, (x, y), forming_datasets(app, front)).render(area, buf);
    forming_label(area, buf, app);
}

/// The front forming as the chart draws it: its points joined by a line, in the front's
/// style, and each point marked.
pub(super) fn forming_datasets<'a>(app: &App, front: &'a [(f64, f64)]) -> Vec<Dataset<'a>> {
    vec![
        Dataset::default()
            .name("forming")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(app.theme.accent())
            .data(front),
        Dataset::default()
            .name("forming points")
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(app.theme.accent())
            .data(front),
    ]
}

/// Draws the front forming over the dimmed chart in `area` (with the axes it was drawn
/// with): the chart is drawn with the forming points alone and without them, and only the
/// cells they change are copied, so the axes and the previous answer stay dimmed.
pub(super) fn overlay_forming(
    area: Rect,
    buf: &mut Buffer,
    app: &App,
    axes: Axes,
    front: &[(f64, f64)],
) {
    let mut with = Buffer::empty(area);
    let mut without = Buffer::empty(area);
    chart(app, axes, forming_datasets(app, front)).render(area, &mut with);
    chart(app, axes, Vec::new()).render(area, &mut without);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if with[(x, y)] != without[(x, y)] {
                buf[(x, y)] = with[(x, y)].clone();
            }
        }
    }
    forming_label(area, buf, app);
}

/// `forming · 37 % · provisional front so far` (the first two pieces where the room is short)
/// at the top right of the chart in `area`: what is drawn in the normal
/// style there is the front so far of a sweep that has decided that share of its
/// candidates, not an answer.
pub(super) fn forming_label(area: Rect, buf: &mut Buffer, app: &App) {
    let (done, total) = app.sweep.progress;
    let percent = (done.min(total) * 100).checked_div(total).unwrap_or(0);
    let long = format!(" forming · {percent} % · provisional front so far ");
    let short = format!(" forming · {percent} % ");
    let width = |t: &str| u16::try_from(t.chars().count()).unwrap_or(u16::MAX);
    let Some(text) = [long, short]
        .into_iter()
        .find(|t| area.width >= width(t) + 8)
    else {
        return;
    };
    let w = width(&text);
    let style = app
        .theme
        .accent()
        .add_modifier(Modifier::BOLD | Modifier::REVERSED);
    buf.set_string(area.right() - w, area.y, text, style);
}
