//! Compare mode's metrics bar: side A's figures, then side B's with the difference to A.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::Outcome;
use crate::tui::app::App;
use crate::tui::fields::Field;

use super::{format, metrics};

/// Side B's figures with their change against side A, in the longest form that fits
/// `room` columns: changes in parentheses, then without, then without the "B is" summary
/// (the iteration change says the same), then without the bubble rate, then without the
/// MFU: the peak memory, what a plan must fit, goes last.
fn deltas(a: &Outcome, b: &Outcome, room: usize) -> (Vec<(String, String)>, &'static str) {
    let pts = |x: f64, y: f64| {
        let d = (x - y) * 100.0;
        if d >= 0.0 {
            format!("+{d:.1}pt")
        } else {
            format!("−{:.1}pt", -d)
        }
    };
    let with = |value: String, change: String, parens: bool| {
        if parens {
            format!("{value} ({change})")
        } else {
            format!("{value} {change}")
        }
    };
    let all = |parens: bool| {
        vec![
            (
                "iter".to_string(),
                with(
                    format::time(b.iteration_time_s),
                    format::change(b.iteration_time_s, a.iteration_time_s),
                    parens,
                ),
            ),
            (
                "bubble".into(),
                with(
                    format::pct(b.pipeline_bubble_rate()),
                    pts(b.pipeline_bubble_rate(), a.pipeline_bubble_rate()),
                    parens,
                ),
            ),
            (
                "MFU".into(),
                with(
                    b.mfu.map_or_else(|| "–".into(), format::pct),
                    pts(b.mfu.unwrap_or(0.0), a.mfu.unwrap_or(0.0)),
                    parens,
                ),
            ),
            (
                "peak".into(),
                with(
                    format!("{}G", format::gib(b.max_peak_memory_bytes())),
                    format::change(
                        b.max_peak_memory_bytes() as f64,
                        a.max_peak_memory_bytes() as f64,
                    ),
                    parens,
                ),
            ),
            ("B is".into(), verdict(a, b)),
        ]
    };
    let width = |figs: &[(String, String)], sep: &str| -> usize {
        figs.iter()
            .map(|(l, v)| l.chars().count() + 1 + v.chars().count())
            .sum::<usize>()
            + sep.chars().count() * figs.len().saturating_sub(1)
    };
    let long = all(true);
    if width(&long, "  ") <= room {
        return (long, "  ");
    }
    let mut short = all(false);
    if width(&short, "  ") <= room {
        return (short, "  ");
    }
    short.pop();
    if width(&short, "  ") <= room {
        return (short, "  ");
    }
    short.remove(1);
    if width(&short, "  ") > room && width(&short, " ") > room {
        short.retain(|(label, _)| label != "MFU");
    }
    let sep = if width(&short, "  ") <= room {
        "  "
    } else {
        " "
    };
    // Whole figures only: the least important go until the rest fits.
    while short.len() > 1 && width(&short, sep) > room {
        short.pop();
    }
    (short, sep)
}

/// How B stands against A: a speed ratio only when both plans fit in memory; otherwise
/// which side fits (read after "B is").
pub fn verdict(a: &Outcome, b: &Outcome) -> String {
    match (a.feasible, b.feasible) {
        (true, true) => {
            let r = a.iteration_time_s / b.iteration_time_s.max(f64::MIN_POSITIVE);
            if r >= 1.0 {
                format!("{r:.2}× faster")
            } else {
                format!("{:.2}× slower", 1.0 / r.max(f64::MIN_POSITIVE))
            }
        }
        (false, false) => "infeasible, as A".into(),
        (true, false) => "infeasible, A fits".into(),
        (false, true) => "feasible, A is not".into(),
    }
}

/// The parameters side B changed against the pinned side A, as `label a→b` (or "no
/// change").
pub fn changed(app: &App) -> String {
    let Some(a) = app.pinned.as_ref() else {
        return "no change".into();
    };
    let list: Vec<String> = Field::ALL
        .iter()
        .filter_map(|f| {
            let (va, vb) = (f.value(a), f.value(&app.scenario));
            (va != vb).then(|| format!("{} {va}→{vb}", f.label().split(' ').next().unwrap_or("")))
        })
        .collect();
    if list.is_empty() {
        "no change".into()
    } else {
        list.join(", ")
    }
}

/// The layout of one side: `t8 p4 d2 fp8 64 GPUs batch 512`, with `cp2` after `t` under
/// context parallelism and `zero1` after `d` when it shards, the number format unless both
/// sides run bf16 (the MFU's peak is that format's, so two sides' MFUs compare only beside
/// it; bf16 beside bf16 says nothing and takes the room of the peak memory at 80 columns)
/// and the global batch (sequences per iteration; its figures are per iteration): what the
/// job runs, which the parameters panel shows only for side B. It heads the row at every
/// width.
pub fn layout(sc: &crate::Scenario, other: Option<&crate::Scenario>) -> String {
    let par = &sc.parallel;
    let gpus = u64::from(par.tp) * u64::from(par.cp) * u64::from(par.pp) * u64::from(par.dp);
    let cp = if par.cp > 1 {
        format!(" cp{}", par.cp)
    } else {
        String::new()
    };
    let zero = match par.zero() {
        crate::scenario::Zero::Off => String::new(),
        z => format!(" zero{}", z.level()),
    };
    let bf16 = |s: &crate::Scenario| s.parallel.precision == crate::scenario::Precision::Bf16;
    let precision = if bf16(sc) && other.is_none_or(bf16) {
        String::new()
    } else {
        format!(" {}", par.precision.name())
    };
    format!(
        "t{}{cp} p{} d{}{zero}{precision} {gpus} GPUs batch {}",
        par.tp,
        par.pp,
        par.dp,
        sc.batch.global_batch(par.dp)
    )
}

/// What tells the two sides' jobs apart beyond their layout: the model's name when A and B
/// plan different models, the GPU's when they run on different GPUs, both when both differ,
/// nothing when neither does (the parameters panel names them for side B only).
pub fn identity(sc: &crate::Scenario, other: &crate::Scenario) -> String {
    let mut parts = Vec::new();
    if sc.model.name != other.model.name {
        parts.push(sc.model.name.as_str());
    }
    if sc.gpu.name != other.gpu.name {
        parts.push(sc.gpu.name.as_str());
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{} ", parts.join(" "))
    }
}

fn width(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.content.chars().count()).sum()
}

/// Draws the two-line compare metrics bar: A (pinned), then B with its changes against A.
/// Each line starts with the side's strategy and layout (t, p, d and the GPU count).
pub fn render_metrics(area: Rect, buf: &mut Buffer, app: &App) {
    let theme = &app.theme;
    // The strategy names are padded to the longer of the two, so that the rows' layouts
    // line up without spending columns the peak memory needs.
    let name_w = [app.pinned.as_ref(), Some(&app.scenario)]
        .into_iter()
        .flatten()
        .map(|s| s.plan.strategy.name().chars().count())
        .max()
        .unwrap_or(0);
    let head = |side: &str, sc: Option<&crate::Scenario>, other: Option<&crate::Scenario>| {
        let name = sc.map_or("", |s| s.plan.strategy.name());
        let mut line = vec![
            Span::styled(format!(" {side} "), theme.selected()),
            Span::styled(format!(" {name:<name_w$} "), theme.accent()),
        ];
        if let Some(sc) = sc {
            if let Some(other) = other {
                let who = identity(sc, other);
                if !who.is_empty() {
                    line.push(Span::styled(who, theme.accent()));
                }
            }
            line.push(Span::styled(
                format!("{}  ", layout(sc, other)),
                theme.text(),
            ));
        }
        line
    };
    let mut a_line = head("A", app.pinned.as_ref(), Some(&app.scenario));
    let mut b_line = head("B", Some(&app.scenario), app.pinned.as_ref());
    let room = usize::from(area.width);
    let a = app.compare_solved().map(|s| &s.outcome);
    match a {
        Some(o) => {
            if !o.feasible {
                a_line.push(Span::styled("✗ INFEASIBLE ", theme.error()));
            }
            // The long labels when they fit (as in the normal metrics bar), else the
            // compact figures that fit whole. The head already gives the GPU count and the
            // batch.
            let without_gpus = |compact: bool| {
                let mut figs = metrics::figures(o, compact, None);
                figs.retain(|(label, _)| label != "GPUs" && label != "batch");
                figs
            };
            let long = metrics::spans(&without_gpus(false), theme, "  ");
            if width(&a_line) + width(&long) <= room {
                a_line.extend(long);
            } else {
                let mut compact = without_gpus(true);
                // The peak memory is kept before the bubble rate: the bubble goes first
                // when the figures up to the peak do not fit.
                let upto_peak = compact
                    .iter()
                    .position(|(l, _)| l == "peak")
                    .map_or(0, |i| i + 1);
                let first = metrics::spans(&compact[..upto_peak], theme, "  ");
                if width(&a_line) + width(&first) > room {
                    compact.retain(|(label, _)| label != "bubble");
                }
                for (i, fig) in compact.into_iter().enumerate() {
                    let mut one = metrics::spans(std::slice::from_ref(&fig), theme, "  ");
                    if i > 0 {
                        one.insert(0, Span::styled("  ", theme.muted()));
                    }
                    if width(&a_line) + width(&one) > room {
                        break;
                    }
                    a_line.extend(one);
                }
            }
        }
        None => a_line.push(Span::styled("solving…", theme.muted())),
    }
    match (app.shown(), a, &app.error) {
        (Some(b), Some(a), None) => {
            if !b.outcome.feasible {
                b_line.push(Span::styled("✗ INFEASIBLE ", theme.error()));
            }
            let (figs, sep) = deltas(a, &b.outcome, room.saturating_sub(width(&b_line)));
            b_line.extend(metrics::spans(&figs, theme, sep));
        }
        (_, _, Some(e)) => {
            // Cut at a word with an ellipsis (the status bar and `!` show it whole).
            let e = metrics::fit_words(e, room.saturating_sub(width(&b_line)));
            b_line.push(Span::styled(e, theme.error()));
        }
        _ => b_line.push(Span::styled("solving…", theme.muted())),
    }
    if let Some(Err(e)) = &app.compare {
        let e = metrics::fit_words(e, room.saturating_sub(width(&a_line)));
        a_line.push(Span::styled(e, theme.error()));
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

#[cfg(test)]
mod tests {
    use super::{deltas, identity, layout};

    /// In the room an 80-column row leaves beside B's head, the peak memory stays: the
    /// bubble rate and the MFU go before it.
    #[test]
    fn a_narrow_row_keeps_the_peak() {
        let sc = crate::tui::fixture::scenario("gpt3");
        let Ok(solved) = crate::tui::fixture::solve(&sc) else {
            panic!("the fixture solves")
        };
        let a = solved.outcome;
        let mut b = a.clone();
        b.iteration_time_s *= 1.1;
        for room in [34, 42, 50] {
            let (figs, _) = deltas(&a, &b, room);
            let labels: Vec<&str> = figs.iter().map(|(l, _)| l.as_str()).collect();
            assert!(labels.contains(&"peak"), "room {room}: {labels:?}");
            assert_eq!(labels.first(), Some(&"iter"), "room {room}");
        }
    }

    #[test]
    fn a_side_s_gpus_count_its_context_parallel_ranks() {
        let mut sc = crate::tui::fixture::scenario("gpt3");
        let (t, p, d) = (sc.parallel.tp, sc.parallel.pp, sc.parallel.dp);
        let b = sc.batch.global_batch(d);
        assert_eq!(
            layout(&sc, None),
            format!("t{t} p{p} d{d} {} GPUs batch {b}", t * p * d)
        );
        sc.parallel.cp = 2;
        assert_eq!(
            layout(&sc, Some(&sc.clone())),
            format!("t{t} cp2 p{p} d{d} {} GPUs batch {b}", 2 * t * p * d)
        );
    }

    #[test]
    fn a_side_names_its_number_format_and_a_sharding_zero() {
        let mut sc = crate::tui::fixture::scenario("gpt3");
        sc.parallel.precision = crate::scenario::Precision::Fp8;
        sc.parallel.set_zero(crate::scenario::Zero::Full);
        let text = layout(&sc, None);
        assert!(text.contains(" zero3 fp8 "), "{text}");
        // bf16 is named beside an fp8 side (their MFUs have different peaks), not beside bf16.
        let mut other = sc.clone();
        other.parallel.precision = crate::scenario::Precision::Bf16;
        assert!(layout(&other, Some(&sc)).contains(" bf16 "));
        assert!(!layout(&other, Some(&other.clone())).contains("bf16"));
    }

    /// A comparison of one job on two GPUs (or two models) names what differs on each row;
    /// one of the same job names nothing more than its layout.
    #[test]
    fn each_side_names_the_model_and_gpu_that_differ() {
        let a = crate::tui::fixture::scenario("gpt3");
        assert_eq!(identity(&a, &a.clone()), "");
        let mut b = a.clone();
        b.gpu.name = "h200-141gb".into();
        assert_eq!(identity(&b, &a), "h200-141gb ");
        assert_eq!(identity(&a, &b), format!("{} ", a.gpu.name));
        b.model.name = "llama3.1-8b".into();
        assert_eq!(identity(&b, &a), "llama3.1-8b h200-141gb ");
        assert_eq!(
            identity(&a, &b),
            format!("{} {} ", a.model.name, a.gpu.name)
        );
    }
}
