//! The Gantt's overlapped forward-backward pairs (DualPipe, DualPipe-V): a pair runs as one
//! unit (both inputs there before it starts, both outputs handed on at its end), so its
//! device row draws it as one: every cell from the forward's start to the backward's end
//! underlined, and one label `F3&b1` over the whole pair instead of one per half (the
//! letter lower-case on a second chunk, as elsewhere in the Gantt).

use ratatui::buffer::Buffer;
use ratatui::style::{Modifier, Style};

use crate::sim::{Span, Timeline};
use crate::tui::theme::Theme;

use super::gantt::kind_look;

/// One pair as the Gantt draws it: device, first cell and cells on the device's compute
/// row, and the label (empty when the pair is too narrow for one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairCells {
    /// Device whose compute row holds the pair.
    pub device: u32,
    /// First cell (column of the time area) the pair covers.
    pub first: usize,
    /// Cells the pair covers (at least one).
    pub cells: usize,
    /// `F3&b1`, or `3&1`, or nothing, whichever fits in `cells`.
    pub label: String,
}

/// The pairs of `timeline` that show between `t0` and `t0 + width dt`, on the devices
/// `devices` (first, count), in cells of `dt` seconds.
pub fn pair_cells(
    timeline: &Timeline,
    t0: f64,
    dt: f64,
    width: usize,
    devices: (u32, u32),
) -> Vec<PairCells> {
    let t1 = t0 + dt * width as f64;
    let shown = |d: u32| d >= devices.0 && d < devices.0 + devices.1;
    timeline
        .pairs()
        .into_iter()
        .filter_map(|(f, b)| {
            let (f, b) = (timeline.spans.get(f)?, timeline.spans.get(b)?);
            if !shown(f.device) || b.end < t0 || f.start >= t1 {
                return None;
            }
            let a = ((f.start.max(t0) - t0) / dt).max(0.0);
            let z = ((b.end.min(t1) - t0) / dt).min(width as f64);
            let first = (a.round() as usize).min(width.saturating_sub(1));
            let cells = (z.round() as usize).saturating_sub(first).max(1);
            Some(PairCells {
                device: f.device,
                first,
                cells,
                label: label(f, b, cells),
            })
        })
        .collect()
}

/// Whether cells `first..first + cells` of `device`'s compute row overlap one of `pairs`
/// (sorted by device, then first cell, as [`pair_cells`] returns them): a label there would
/// cut into the pair's one label (a recomputation between a pair's halves has its own).
pub fn overlaps_pair(pairs: &[PairCells], device: u32, first: usize, cells: usize) -> bool {
    let end = first + cells;
    let i = pairs.partition_point(|p| (p.device, p.first) < (device, end));
    pairs[..i]
        .iter()
        .rev()
        .take_while(|p| p.device == device)
        .any(|p| p.first + p.cells > first)
}

/// The widest label of the pair `f`, `b` that fits in `cells` with a cell to spare.
fn label(f: &Span, b: &Span, cells: usize) -> String {
    let letter = |s: &Span| {
        let l = match s.kind {
            crate::sim::SpanKind::F => "F",
            _ => "B",
        };
        if s.chunk % 2 == 1 {
            l.to_lowercase()
        } else {
            l.to_string()
        }
    };
    let long = format!(
        "{}{}&{}{}",
        letter(f),
        f.micro_batch,
        letter(b),
        b.micro_batch
    );
    let short = format!("{}&{}", f.micro_batch, b.micro_batch);
    [long, short]
        .into_iter()
        .find(|l| l.chars().count() < cells)
        .unwrap_or_default()
}

/// Draws `pairs` over the compute rows: `row(device)` is the screen row of a device's
/// compute lane (None when not drawn), `x0` the first column of the time area.
pub fn draw_pairs(
    pairs: &[PairCells],
    theme: &Theme,
    x0: u16,
    row: impl Fn(u32) -> Option<u16>,
    buf: &mut Buffer,
) {
    let (forward, _, _) = kind_look(theme, crate::sim::SpanKind::F);
    for pair in pairs {
        let Some(y) = row(pair.device) else { continue };
        let x = |c: usize| x0.saturating_add(u16::try_from(c).unwrap_or(u16::MAX));
        if !pair.label.is_empty() {
            buf.set_stringn(
                x(pair.first),
                y,
                &pair.label,
                pair.cells,
                theme.label_on(forward),
            );
        }
        let underline = Style::new().add_modifier(Modifier::UNDERLINED);
        for c in pair.first..pair.first + pair.cells {
            let at = (x(c), y);
            if buf.area.contains(at.into()) {
                buf[at].set_style(underline);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Lane, SpanKind};
    use ratatui::widgets::Widget;

    fn span(kind: SpanKind, micro_batch: u32, chunk: u32, start: f64, end: f64) -> Span {
        Span {
            device: 0,
            lane: Lane::Compute,
            kind,
            micro_batch,
            chunk,
            start,
            end,
            paired: true,
        }
    }

    fn timeline() -> Timeline {
        Timeline {
            devices: 1,
            spans: vec![
                span(SpanKind::F, 3, 0, 0.0, 1.0),
                span(SpanKind::BW, 1, 1, 1.0, 3.0),
                span(SpanKind::F, 4, 0, 3.0, 4.0),
                span(SpanKind::BW, 2, 1, 4.0, 6.0),
            ],
            makespan: 6.0,
        }
    }

    #[test]
    fn a_pair_is_one_unit_with_one_label() {
        let tl = timeline();
        let pairs = pair_cells(&tl, 0.0, 0.5, 12, (0, 1));
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[0].first, pairs[0].cells), (0, 6));
        assert_eq!(pairs[0].label, "F3&b1");
        assert_eq!((pairs[1].first, pairs[1].cells), (6, 6));
        // Narrower: the numbers only, then nothing.
        let narrow = pair_cells(&tl, 0.0, 0.75, 8, (0, 1));
        assert_eq!(narrow[0].label, "3&1");
        let tiny = pair_cells(&tl, 0.0, 3.0, 2, (0, 1));
        assert_eq!(tiny[0].label, "");
        assert_eq!(tiny[0].cells, 1);
        // Off the window or on a device not drawn: nothing.
        assert!(pair_cells(&tl, 10.0, 1.0, 4, (0, 1)).is_empty());
        assert!(pair_cells(&tl, 0.0, 1.0, 4, (1, 1)).is_empty());
    }

    #[test]
    fn the_gantt_labels_a_pair_once_even_around_a_recomputation() {
        let theme = Theme::builtin("mono");
        let mut r = span(SpanKind::R, 1, 1, 1.0, 2.0);
        r.paired = false;
        let tl = Timeline {
            devices: 1,
            spans: vec![
                span(SpanKind::F, 3, 0, 0.0, 1.0),
                r,
                span(SpanKind::BW, 1, 1, 2.0, 4.0),
            ],
            makespan: 4.0,
        };
        let area = ratatui::layout::Rect::new(0, 0, 4 + 16, 2);
        let mut buf = Buffer::empty(area);
        super::super::gantt::Gantt {
            timeline: &tl,
            t0: 0.0,
            t1: 4.0,
            lanes: 1,
            theme: &theme,
            selected: None,
            memory: None,
            cost_units: false,
        }
        .render(area, &mut buf);
        let row: String = (0..area.width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect();
        // One label, then the pair's own glyphs: no F3, r1 or b1 of the halves.
        assert_eq!(row, "s0  F3&b1░░░▄▄▄▄▄▄▄▄");
    }

    #[test]
    fn labels_inside_a_pair_are_found() {
        let tl = timeline();
        let pairs = pair_cells(&tl, 0.0, 0.5, 12, (0, 1));
        assert!(overlaps_pair(&pairs, 0, 2, 2));
        assert!(overlaps_pair(&pairs, 0, 5, 3));
        assert!(overlaps_pair(&pairs, 0, 11, 4));
        assert!(!overlaps_pair(&pairs, 0, 12, 2));
        assert!(!overlaps_pair(&pairs, 1, 2, 2));
        assert!(!overlaps_pair(&[], 0, 0, 5));
    }

    #[test]
    fn draws_the_label_and_underlines_the_whole_pair() {
        let theme = Theme::builtin("mono");
        let tl = timeline();
        let area = ratatui::layout::Rect::new(0, 0, 14, 1);
        let mut buf = Buffer::empty(area);
        let pairs = pair_cells(&tl, 0.0, 0.5, 12, (0, 1));
        draw_pairs(&pairs, &theme, 2, |d| (d == 0).then_some(0), &mut buf);
        let row: String = (0..14).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row, "  F3&b1 F4&b2 ");
        for x in 2..14 {
            assert!(buf[(x, 0)].modifier.contains(Modifier::UNDERLINED), "{x}");
        }
        assert!(!buf[(1, 0)].modifier.contains(Modifier::UNDERLINED));
    }
}
