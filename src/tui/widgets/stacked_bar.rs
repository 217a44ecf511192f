//! A one-row stacked horizontal bar: segments of bytes in glyph and colour, scaled to the
//! row, with a marker (the budget) drawn on top.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

/// One part of the bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Size in bytes.
    pub bytes: u64,
    /// Glyph that fills it.
    pub glyph: char,
    /// Its style.
    pub style: Style,
}

/// Segments left to right; the bar's full width stands for `scale` bytes.
pub struct StackedBar<'a> {
    /// The parts.
    pub segments: &'a [Segment],
    /// Bytes that the whole width stands for.
    pub scale: u64,
    /// A marker at this many bytes (glyph, style).
    pub marker: Option<(u64, char, Style)>,
}

fn column(bytes: u64, scale: u64, width: u16) -> u16 {
    if scale == 0 {
        return 0;
    }
    let c = (bytes as f64 / scale as f64 * f64::from(width)).round();
    c.clamp(0.0, f64::from(width)) as u16
}

impl Widget for StackedBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 || area.width == 0 {
            return;
        }
        let y = area.y;
        let mut cum = 0u64;
        for seg in self.segments {
            let a = column(cum, self.scale, area.width);
            cum = cum.saturating_add(seg.bytes);
            let b = column(cum, self.scale, area.width);
            for c in a..b {
                buf[(area.x + c, y)]
                    .set_char(seg.glyph)
                    .set_style(seg.style);
            }
        }
        if let Some((bytes, glyph, style)) = self.marker {
            let c = column(bytes, self.scale, area.width).min(area.width - 1);
            buf[(area.x + c, y)].set_char(glyph).set_style(style);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_fill_in_proportion_and_marker_sits_on_top() {
        let s = Style::new();
        let segs = [
            Segment {
                bytes: 2,
                glyph: 'S',
                style: s,
            },
            Segment {
                bytes: 3,
                glyph: 'A',
                style: s,
            },
            Segment {
                bytes: 3,
                glyph: '.',
                style: s,
            },
        ];
        let area = Rect::new(0, 0, 10, 1);
        let mut buf = Buffer::empty(area);
        StackedBar {
            segments: &segs,
            scale: 10,
            marker: Some((8, '|', s)),
        }
        .render(area, &mut buf);
        let row: String = (0..10).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row, "SSAAA...| ");
    }
}
