//! Compare mode's metrics bar: side A's figures, then side B's with the difference to A.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::Outcome;
use crate::plan::Strategy;
use crate::tui::app::App;

use super::{format, metrics};

fn peak(o: &Outcome) -> u64 {
    o.stages
        .iter()
        .map(|s| s.peak_memory_bytes)
        .max()
        .unwrap_or(0)
}

/// Side B's figures with their change against side A.
fn deltas(a: &Outcome, b: &Outcome) -> Vec<(String, String)> {
    let pts = |x: f64, y: f64| {
        let d = (x - y) * 100.0;
        if d >= 0.0 {
            format!("+{d:.1}pt")
        } else {
            format!("−{:.1}pt", -d)
        }
    };
    vec![
        (
            "iter".into(),
            format!(
                "{} ({})",
                format::time(b.iteration_time_s),
                format::change(b.iteration_time_s, a.iteration_time_s)
            ),
        ),
        (
            "bubble".into(),
            format!(
                "{} ({})",
                format::pct(b.bubble_rate),
                pts(b.bubble_rate, a.bubble_rate)
            ),
        ),
        (
            "MFU".into(),
            format!("{} ({})", format::pct(b.mfu), pts(b.mfu, a.mfu)),
        ),
        (
            "peak".into(),
            format!(
                "{}G ({})",
                format::gib(peak(b)),
                format::change(peak(b) as f64, peak(a) as f64)
            ),
        ),
        (
            "A is".into(),
            format!(
                "{:.2}× faster",
                b.iteration_time_s / a.iteration_time_s.max(f64::MIN_POSITIVE)
            ),
        ),
    ]
}

/// Draws the two-line compare metrics bar.
pub fn render_metrics(area: Rect, buf: &mut Buffer, app: &App, other: Strategy) {
    let theme = &app.theme;
    let a_name = app.scenario.plan.strategy.name();
    let head = |side: &str, name: &str| {
        vec![
            Span::styled(format!(" {side} "), theme.selected()),
            Span::styled(format!(" {name:<9} "), theme.accent()),
        ]
    };
    let mut a_line = head("A", a_name);
    let mut b_line = head("B", other.name());
    let a = app.shown().map(|s| &s.outcome);
    match a {
        Some(o) => {
            if !o.feasible {
                a_line.push(Span::styled("✗ INFEASIBLE ", theme.error()));
            }
            a_line.extend(metrics::spans(
                &metrics::figures(o, true, None),
                theme,
                "  ",
            ));
        }
        None => a_line.push(Span::styled("solving…", theme.muted())),
    }
    match (&app.compare, a) {
        (Some(Ok(b)), Some(a)) => {
            if !b.outcome.feasible {
                b_line.push(Span::styled("✗ INFEASIBLE ", theme.error()));
            }
            b_line.extend(metrics::spans(&deltas(a, &b.outcome), theme, "  "));
        }
        (Some(Err(e)), _) => b_line.push(Span::styled(e.clone(), theme.error())),
        _ => b_line.push(Span::styled("solving…", theme.muted())),
    }
    let (ra, rb) = (
        Rect { height: 1, ..area },
        Rect {
            y: area.y + 1,
            height: 1,
            ..area
        },
    );
    if area.height >= 1 {
        Line::from(a_line).render(ra, buf);
    }
    if area.height >= 2 {
        Line::from(b_line).render(rb, buf);
    }
}
