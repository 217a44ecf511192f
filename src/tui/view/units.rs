//! The unit grid of the selected stage: one row per unit kind (name, size per micro-batch,
//! recompute time), one column per block of that kind, K/R/C/O glyphs in the decision's
//! colour.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::anatomy::BlockKind;
use crate::plan::Decision;
use crate::tui::app::App;
use crate::tui::theme::Theme;

use super::format;

fn decision_style(theme: &Theme, d: Decision) -> Style {
    let c = &theme.colors;
    let color = match d {
        Decision::Keep => c.activation,
        Decision::Recompute | Decision::Overlap => c.recompute,
        Decision::Compress => c.buffer,
        Decision::Offload => c.offload,
    };
    Style::new().fg(color)
}

/// The blocks a stage holds, every chunk's range: `blocks 0–12`, `blocks 0–5, 48–53`.
pub fn blocks_title(st: &crate::StageOutcome) -> String {
    let ranges: Vec<[usize; 2]> = if st.ranges.is_empty() {
        vec![[st.first_block, st.last_block]]
    } else {
        st.ranges.clone()
    };
    let list: Vec<String> = ranges
        .iter()
        .map(|[a, b]| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect();
    let word = if list.len() == 1 && ranges[0][0] == ranges[0][1] {
        "block"
    } else {
        "blocks"
    };
    format!("{word} {}", list.join(", "))
}

/// Draws the unit grid.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    if area.height < 3 || area.width < 16 {
        return;
    }
    let theme = &app.theme;
    let solved = app.shown();
    let stage = solved.and_then(|s| s.outcome.stages.get(app.stage as usize));
    // The longest title that fits whole, the glyph key first to go.
    let room = usize::from(area.width.saturating_sub(2));
    let key = "· K keep R recompute C compress O offload ";
    let forms = match stage {
        Some(st) => {
            let blocks = blocks_title(st);
            vec![
                format!(" stage {} units · {blocks} {key}", st.stage),
                format!(" stage {} units · {blocks} ", st.stage),
                format!(" s{} units · {blocks} ", st.stage),
            ]
        }
        None => vec![format!(" stage {} units ", app.stage)],
    };
    let last = forms.last().cloned().unwrap_or_default();
    let title = forms
        .into_iter()
        .find(|t| t.chars().count() <= room)
        .unwrap_or_else(|| format!(" {} ", super::metrics::fit_words(last.trim(), room - 2)));
    let inner = super::panel(title, theme, area, buf);
    let (Some(s), Some(st)) = (solved, stage) else {
        Paragraph::new("…").style(theme.muted()).render(inner, buf);
        return;
    };
    let width = usize::from(inner.width);
    // The stage's times per micro-batch, whole figures only ("…" when some are left out).
    let figures = [
        ("fwd ", format::time(st.forward_s)),
        ("bwd ", format::time(st.backward_s)),
        ("recomp ", format::time(st.recompute_s)),
        ("per micro-batch", String::new()),
        ("in flight ", st.in_flight.to_string()),
    ];
    let mut first = Vec::new();
    let mut used = 0;
    for (i, (label, value)) in figures.iter().enumerate() {
        let sep = if i == 0 { "" } else { "  " };
        let w = sep.len() + label.chars().count() + value.chars().count();
        if used + w + 2 > width && i + 1 < figures.len() || used + w > width {
            first.push(Span::styled(" …", theme.muted()));
            break;
        }
        used += w;
        first.push(Span::styled(format!("{sep}{label}"), theme.muted()));
        first.push(Span::styled(value.clone(), theme.accent()));
    }
    let mut lines = vec![Line::from(first)];
    let kinds = [
        BlockKind::Embedding,
        BlockKind::Attention,
        BlockKind::Mlp,
        BlockKind::Head,
    ];
    // As wide as the longest "kind.unit" name (plus a space), within a third of the panel.
    let longest = kinds
        .iter()
        .filter_map(|k| s.units_of(*k).map(|u| (k, u)))
        .flat_map(|(k, u)| {
            u.names
                .iter()
                .map(move |n| k.short_name().len() + 1 + n.len())
        })
        .max()
        .unwrap_or(15);
    let widest = kinds
        .iter()
        .map(|k| st.blocks.iter().filter(|b| b.kind == *k).count())
        .max()
        .unwrap_or(0);
    // The names as whole as the panel allows: beside the size and recompute figures and a
    // glyph per block when the names get NAME_MIN columns there, else beside the glyphs
    // alone, else beside runs (`R×10`, which say as much as ten glyphs when the blocks
    // decide alike). A name still too long keeps its head and tail (`attn.out_d…mask`).
    let wanted = longest + 1;
    let (name_w, with_figures) = if width.saturating_sub(FIGURES_W + widest) >= NAME_MIN {
        (wanted.min(width - FIGURES_W - widest), true)
    } else if width.saturating_sub(widest) >= NAME_MIN {
        (wanted.min(width - widest), false)
    } else {
        (wanted.min(width.saturating_sub(RUN_W)).max(6), false)
    };
    let rest = width.saturating_sub(name_w);
    let header = if with_figures {
        format!(
            "{:<name_w$}{:>7} {:>7} one column per block →",
            "unit", "size", "recomp"
        )
    } else {
        format!("{:<name_w$}one column per block →", "unit")
    };
    lines.push(Line::styled(header, theme.muted()));
    for kind in kinds {
        let blocks: Vec<_> = st.blocks.iter().filter(|b| b.kind == kind).collect();
        let Some(n_units) = blocks.iter().map(|b| b.decisions.len()).max() else {
            continue;
        };
        let info = s.units_of(kind);
        let grid_w = if with_figures { rest - FIGURES_W } else { rest };
        let spaced = grid_w >= 2 * blocks.len();
        for i in 0..n_units {
            let name = info
                .and_then(|u| u.names.get(i))
                .map_or_else(|| format!("u{i}"), String::clone);
            let full = format!("{}.{name}", kind.short_name());
            let shown = middle_cut(&full, name_w - 1);
            let mut spans = vec![Span::styled(format!("{shown:<name_w$}"), theme.text())];
            if with_figures {
                let size = info
                    .and_then(|u| u.size_bytes.get(i))
                    .map_or("-".into(), |b| format::bytes(*b));
                let t = info
                    .and_then(|u| u.recompute_s.get(i))
                    .map_or("-".into(), |t| format::time(*t));
                spans.push(Span::styled(format!("{size:>7} {t:>7} "), theme.muted()));
            }
            let glyphs: Vec<Decision> = blocks
                .iter()
                .map(|b| b.decisions.get(i).copied().unwrap_or(Decision::Keep))
                .collect();
            if grid_w < glyphs.len()
                && let Some(runs) = runs(&glyphs, grid_w)
            {
                for (k, (d, n)) in runs.into_iter().enumerate() {
                    let sep = if k == 0 { "" } else { " " };
                    spans.push(Span::styled(
                        format!("{sep}{}×{n}", d.glyph()),
                        decision_style(theme, d),
                    ));
                }
                lines.push(Line::from(spans));
                continue;
            }
            let mut used = 0;
            for b in &blocks {
                if used + 1 > grid_w {
                    spans.push(Span::styled("…", theme.muted()));
                    break;
                }
                let d = b.decisions.get(i).copied().unwrap_or(Decision::Keep);
                spans.push(Span::styled(
                    d.glyph().to_string(),
                    decision_style(theme, d),
                ));
                used += 1;
                if spaced {
                    spans.push(Span::raw(" "));
                    used += 1;
                }
            }
            lines.push(Line::from(spans));
        }
    }
    let h = usize::from(inner.height);
    if lines.len() > h && h > 1 {
        let more = lines.len() - (h - 1);
        lines.truncate(h - 1);
        let note = [
            format!("… {more} more rows (taller terminal)"),
            format!("… {more} more rows"),
            format!("… {more} more"),
        ]
        .into_iter()
        .find(|n| n.chars().count() <= width)
        .unwrap_or_else(|| "…".into());
        lines.push(Line::styled(note, theme.muted()));
    }
    // Anything still wider than the panel ends in "…", never cut silently.
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| format::clip_line(l, width))
        .collect();
    Paragraph::new(lines).render(inner, buf);
}

/// `name` in at most `room` characters: whole when it fits, else its head and its tail
/// around a `…` (`attn.out_d…mask`), so both the kind and how the unit's name ends show.
fn middle_cut(name: &str, room: usize) -> String {
    let n = name.chars().count();
    if n <= room {
        return name.to_string();
    }
    let keep = room.saturating_sub(1);
    let tail = keep / 3;
    let head: String = name.chars().take(keep - tail).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{head}…{end}")
}

/// Columns of a unit's size and recompute time (`  48 MiB  3.5 ms `).
const FIGURES_W: usize = 16;
/// Fewest columns the unit names get before the figures, then the glyphs, give way.
const NAME_MIN: usize = 12;

/// Width of the shortest run of equal decisions the grid writes (`R×10`).
const RUN_W: usize = 4;

/// The decisions of one unit across the blocks as runs of equal ones (`K×7`, then `R×3`),
/// when they fit in `room` columns written `K×7 R×3`; `None` when they do not.
fn runs(decisions: &[Decision], room: usize) -> Option<Vec<(Decision, usize)>> {
    let mut out: Vec<(Decision, usize)> = Vec::new();
    for &d in decisions {
        match out.last_mut() {
            Some((last, n)) if *last == d => *n += 1,
            _ => out.push((d, 1)),
        }
    }
    let width: usize = out
        .iter()
        .map(|(_, n)| 2 + n.to_string().len())
        .sum::<usize>()
        + out.len().saturating_sub(1);
    (width <= room).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_keeps_its_head_and_tail() {
        assert_eq!(middle_cut("attn.core_attn", 14), "attn.core_attn");
        assert_eq!(middle_cut("attn.out_dropout_mask", 15), "attn.out_d…mask");
        assert_eq!(middle_cut("attn.out_dropout_mask", 15).chars().count(), 15);
        assert_eq!(middle_cut("abc", 1), "…");
    }

    #[test]
    fn equal_decisions_are_written_as_runs_when_the_glyphs_do_not_fit() {
        use Decision::{Keep, Recompute};
        let d = [Recompute, Recompute, Recompute, Keep, Keep, Keep, Keep];
        assert_eq!(runs(&d, 7), Some(vec![(Recompute, 3), (Keep, 4)]));
        assert_eq!(runs(&d, 6), None);
        assert_eq!(runs(&[Keep; 10], 4), Some(vec![(Keep, 10)]));
        assert_eq!(runs(&[Keep; 10], 3), None);
    }

    #[test]
    fn the_title_names_every_chunk_s_blocks() {
        let sc = crate::tui::fixture::scenario("gpt3");
        let solved = crate::tui::fixture::solve(&sc).unwrap();
        let mut st = solved.outcome.stages[0].clone();
        st.ranges = vec![[0, 5], [48, 53]];
        assert_eq!(blocks_title(&st), "blocks 0–5, 48–53");
        st.ranges = vec![[7, 7]];
        assert_eq!(blocks_title(&st), "block 7");
        st.ranges.clear();
        st.first_block = 2;
        st.last_block = 4;
        assert_eq!(blocks_title(&st), "blocks 2–4");
    }
}
