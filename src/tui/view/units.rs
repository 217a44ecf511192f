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
    let name_w = (longest + 1).min(width / 3).max(6);
    let rest = width.saturating_sub(name_w);
    let widest = kinds
        .iter()
        .map(|k| st.blocks.iter().filter(|b| b.kind == *k).count())
        .max()
        .unwrap_or(0);
    let with_figures = rest >= 16 + widest;
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
        let grid_w = if with_figures { rest - 16 } else { rest };
        let spaced = grid_w >= 2 * blocks.len();
        for i in 0..n_units {
            let name = info
                .and_then(|u| u.names.get(i))
                .map_or_else(|| format!("u{i}"), String::clone);
            let full = format!("{}.{name}", kind.short_name());
            let shown: String = if full.chars().count() < name_w {
                full
            } else {
                let mut cut: String = full.chars().take(name_w - 2).collect();
                cut.push('…');
                cut
            };
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

#[cfg(test)]
mod tests {
    use super::*;

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
