//! The metrics bar: iteration time, bubble rate, MFU, peak memory, speed-up against the 1F1B
//! full-recomputation baseline, solve time. A long form when it fits, a compact one else.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::Outcome;
use crate::tui::app::App;
use crate::tui::theme::Theme;

use super::format;

/// The figures of one outcome as (label, value) pairs, long or compact.
pub fn figures(o: &Outcome, compact: bool, solve_time: Option<f64>) -> Vec<(String, String)> {
    let peak = o.max_peak_memory_bytes();
    // The job (GPU count and global batch) is shown at every width, in both forms; the long
    // form gives the GPUs with their layout.
    let job = [
        (
            "GPUs".to_string(),
            if compact { o.gpus.to_string() } else { gpus(o) },
        ),
        ("batch".to_string(), o.global_batch.to_string()),
    ];
    if !o.feasible {
        // No speed-up or MFU for a plan that does not run: the bar says why instead.
        let mut v = vec![
            ("iter".to_string(), format::time(o.iteration_time_s)),
            ("peak".into(), format!("{} GiB", format::gib(peak))),
        ];
        v.extend(job);
        if let Some(t) = solve_time {
            v.push(("solve".into(), format::time(t)));
        }
        return v;
    }
    let mut v = vec![
        ("iter".to_string(), format::time(o.iteration_time_s)),
        ("bubble".into(), format::pct(o.pipeline_bubble_rate())),
        ("MFU".into(), o.mfu.map_or_else(|| "–".into(), format::pct)),
        (
            "peak".into(),
            if compact {
                format!("{}G", format::gib(peak))
            } else {
                format!("{} GiB", format::gib(peak))
            },
        ),
    ];
    let speedup = (
        if compact {
            "vs 1F1B-R".into()
        } else {
            "vs 1F1B full-recompute".into()
        },
        o.speedup.map_or_else(|| "–".into(), |x| format!("{x:.2}×")),
    );
    // The compact form drops figures from its end when they do not fit: the job goes
    // before the speed-up there.
    if compact {
        v.extend(job);
        v.push(speedup);
    } else {
        v.push(speedup);
        v.extend(job);
    }
    v.push((
        if compact { "tok/s/GPU" } else { "tokens/s/GPU" }.into(),
        format!("{:.0}", o.tokens_per_s_per_gpu),
    ));
    if let Some(t) = solve_time {
        v.push(("solve".into(), format::time(t)));
    }
    v
}

/// The job's GPU count with its layout, `t x cp x p x d`: "256 = t8×cp2×p8×d2".
pub fn gpus(o: &Outcome) -> String {
    format!("{} = t{}×cp{}×p{}×d{}", o.gpus, o.tp, o.cp, o.pp, o.dp)
}

/// Spans for a figures list: muted labels, accented values, separators.
pub fn spans<'a>(figs: &[(String, String)], theme: &Theme, sep: &'a str) -> Vec<Span<'a>> {
    let mut out = Vec::new();
    for (i, (label, value)) in figs.iter().enumerate() {
        if i > 0 {
            out.push(Span::styled(sep, theme.muted()));
        }
        if label.starts_with("vs") {
            out.push(Span::styled(value.clone(), theme.accent()));
            out.push(Span::styled(format!(" {label}"), theme.muted()));
        } else {
            out.push(Span::styled(format!("{label} "), theme.muted()));
            out.push(Span::styled(value.clone(), theme.accent()));
        }
    }
    out
}

fn width(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.content.chars().count()).sum()
}

/// `text` cut at a word boundary to at most `room` characters, with "…" when cut (a word
/// is cut in half only when the words that fit would fill less than half the room).
pub fn fit_words(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let mut out = String::new();
    for word in text.split(' ') {
        let extra = usize::from(!out.is_empty()) + word.chars().count();
        if out.chars().count() + extra + 1 > room {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() * 2 < room {
        // One long word (a path): cut it rather than lose the line.
        out = text.chars().take(room.saturating_sub(1)).collect();
    }
    out.push('…');
    out
}

/// A short, whole summary of why `o` does not fit, in at most `room` columns (the memory
/// panel and the `!` overlay give every stage).
fn infeasible_head(o: &Outcome, room: usize) -> String {
    let over = o
        .stages
        .iter()
        .filter(|s| s.peak_memory_bytes > s.budget_bytes)
        .count();
    let forms = if over > 0 {
        vec![
            format!(
                "✗ does not fit: {over} of {} stages over budget",
                o.stages.len()
            ),
            format!("✗ does not fit: {over}/{} over", o.stages.len()),
            "✗ does not fit".to_string(),
        ]
    } else {
        vec![
            "✗ does not fit (! says why)".into(),
            "✗ does not fit".into(),
        ]
    };
    let last = forms.last().cloned().unwrap_or_default();
    forms
        .into_iter()
        .find(|f| f.chars().count() <= room)
        .unwrap_or(last)
}

/// Draws the metrics bar for the shown outcome: the long form when it fits, else the
/// compact figures that fit whole (the GPU count and global batch among the first).
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let room = usize::from(area.width);
    let mut line = vec![Span::styled(" pipescope ", theme.accent())];
    match app.shown() {
        None => {
            let msg = if app.solving {
                "solving…"
            } else {
                "no result yet"
            };
            line.push(Span::styled(msg, theme.muted()));
        }
        Some(s) => {
            let o = &s.outcome;
            let solve = app.show_solve_time.then_some(o.solve_time_s);
            let long = spans(&figures(o, false, solve), theme, " │ ");
            if o.feasible && width(&line) + width(&long) <= room {
                line.extend(long);
            } else {
                line.clear();
                if !o.feasible {
                    // Leave the room of three compact figures at least.
                    let head = infeasible_head(o, room.saturating_sub(40).max(14));
                    line.push(Span::styled(format!(" {head} "), theme.error()));
                }
                // Whole figures only: one that does not fit is left out, never cut; the
                // separator narrows first.
                let compact = figures(o, true, solve);
                let left = room.saturating_sub(width(&line));
                let sep = if width(&spans(&compact, theme, "  ")) < left {
                    "  "
                } else {
                    " "
                };
                // The job (GPU count and global batch) is kept at every width: its room is
                // held back, and another figure that would take it is left out.
                let one = |fig: &(String, String)| {
                    let mut one = spans(std::slice::from_ref(fig), theme, sep);
                    one.insert(0, Span::styled(sep, theme.muted()));
                    width(&one)
                };
                let is_job = |fig: &(String, String)| fig.0 == "GPUs" || fig.0 == "batch";
                let mut held: usize = compact.iter().filter(|f| is_job(f)).map(one).sum();
                let mut open = true;
                for fig in &compact {
                    let w = one(fig);
                    let job = is_job(fig);
                    if job {
                        held = held.saturating_sub(w);
                    }
                    if !open || width(&line) + w + if job { 0 } else { held } > room {
                        // Figures stay in their order: after one is left out, only the
                        // job follows.
                        open = false;
                        if !job {
                            continue;
                        }
                        if width(&line) + w > room {
                            break;
                        }
                    }
                    let mut spans_one = spans(std::slice::from_ref(fig), theme, sep);
                    spans_one.insert(0, Span::styled(sep, theme.muted()));
                    line.extend(spans_one);
                }
            }
        }
    }
    Line::from(line).render(area, buf);
}
