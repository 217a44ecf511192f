//! The header's second line: where the selected stage's iteration goes (compute,
//! recompute, bubble, tp_comm, cp_comm (with context parallelism), pp_comm, dp_comm,
//! optimizer, as in `plan --json`'s `time_breakdown_s`), in seconds when it fits, else in shares of the iteration with
//! shorter labels; a part that still does not fit is left out whole, never cut.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::Outcome;
use crate::sim::job::TimeBreakdown;
use crate::tui::app::App;

use super::format;

/// The breakdown of device `stage`: the one the engine computed with the outcome (the
/// header and the details overlay both show it; nothing is recomputed per frame).
pub fn of_stage(o: &Outcome, stage: u32) -> Option<TimeBreakdown> {
    o.stages.get(stage as usize).map(|s| s.time_breakdown_s)
}

/// The parts in the order of the JSON field, with their long and short labels; `cp_comm`
/// only when there is some (a job without context parallelism has none).
pub fn parts(b: &TimeBreakdown) -> Vec<(&'static str, &'static str, f64)> {
    let mut out = vec![
        ("compute", "comp", b.compute),
        ("recompute", "rec", b.recompute),
        ("bubble", "bub", b.bubble),
        ("tp_comm", "tp", b.tp_comm),
    ];
    if b.cp_comm > 0.0 {
        out.push(("cp_comm", "cp", b.cp_comm));
    }
    out.extend([
        ("pp_comm", "pp", b.pp_comm),
        ("dp_comm", "dp", b.dp_comm),
        ("optimizer", "opt", b.optimizer),
    ]);
    out
}

/// The line's text items (label, value) for `stage`, in the form `form` (0 seconds, 1
/// long labels with shares, 2 short labels with shares).
fn items(stage: u32, b: &TimeBreakdown, form: u8) -> (String, Vec<(String, String)>) {
    let total = b.total().max(f64::MIN_POSITIVE);
    let head = match form {
        0 => format!(" stage {stage} time:"),
        _ => format!(" s{stage}:"),
    };
    let list = parts(b)
        .into_iter()
        .map(|(long, short, v)| match form {
            0 => (long.to_string(), format::time(v)),
            1 => (long.to_string(), format!("{:.1}%", 100.0 * v / total)),
            _ => (short.to_string(), format!("{:.0}%", 100.0 * v / total)),
        })
        .collect();
    (head, list)
}

fn width(head: &str, list: &[(String, String)], sep: &str) -> usize {
    head.chars().count()
        + list
            .iter()
            .map(|(l, v)| 1 + l.chars().count() + 1 + v.chars().count())
            .sum::<usize>()
        + sep.chars().count() * list.len().saturating_sub(1)
}

/// Draws the selected stage's breakdown on one line of `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height == 0 {
        return;
    }
    let Some(b) = app.shown().and_then(|s| of_stage(&s.outcome, app.stage)) else {
        return;
    };
    let theme = &app.theme;
    let room = usize::from(area.width);
    let mut chosen = None;
    for (form, sep) in [(0u8, " ·"), (1, " ·"), (2, "")] {
        let (head, list) = items(app.stage, &b, form);
        if width(&head, &list, sep) <= room || form == 2 {
            chosen = Some((head, list, sep));
            break;
        }
    }
    let Some((head, list, sep)) = chosen else {
        return;
    };
    let mut spans = vec![Span::styled(head.clone(), theme.muted())];
    let mut used = head.chars().count();
    for (i, (label, value)) in list.iter().enumerate() {
        let s = if i > 0 { sep } else { "" };
        let w = s.chars().count() + 1 + label.chars().count() + 1 + value.chars().count();
        if used + w > room {
            break;
        }
        used += w;
        spans.push(Span::styled(format!("{s} {label} "), theme.muted()));
        spans.push(Span::styled(value.clone(), theme.accent()));
    }
    Line::from(spans).render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_form_fits_80_columns_with_every_part() {
        let b = TimeBreakdown {
            compute: 10.2,
            recompute: 1.1,
            bubble: 2.0,
            tp_comm: 0.5,
            cp_comm: 0.0,
            pp_comm: 0.1,
            dp_comm: 0.3,
            optimizer: 0.1,
        };
        let (head, list) = items(63, &b, 2);
        assert_eq!(list.len(), 7);
        assert!(width(&head, &list, "") <= 80);
        // With context parallelism's exchange the short form still fits.
        let b = TimeBreakdown { cp_comm: 0.4, ..b };
        let (head, list) = items(63, &b, 2);
        assert_eq!(list.len(), 8);
        assert!(width(&head, &list, "") <= 80, "{}", width(&head, &list, ""));
        let (head, list) = items(63, &b, 0);
        assert!(width(&head, &list, " ·") <= 200);
    }
}
