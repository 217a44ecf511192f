//! Number formatting shared by the views: times with units, GiB, percentages.

use crate::scenario::GIB;
const MIB: f64 = (1u64 << 20) as f64;

/// A duration with a unit that suits its size: `12.40 s`, `840 ms`, `85.0 µs`.
pub fn time(s: f64) -> String {
    let a = s.abs();
    if !s.is_finite() {
        "-".into()
    } else if a >= 100.0 {
        format!("{s:.0} s")
    } else if a >= 1.0 {
        format!("{s:.2} s")
    } else if a >= 1e-3 {
        let ms = s * 1e3;
        if ms.abs() >= 100.0 {
            format!("{ms:.0} ms")
        } else {
            format!("{ms:.1} ms")
        }
    } else if a == 0.0 {
        "0 s".into()
    } else if a >= 1e-5 {
        format!("{:.0} µs", s * 1e6)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// A duration with `sig` significant figures (at least; whole numbers keep every digit) and
/// the unit [`time`] would choose: `177.2 s`, `82.54 s`, `840.3 ms`.
pub fn time_sig(s: f64, sig: usize) -> String {
    let a = s.abs();
    if !s.is_finite() {
        return "-".into();
    }
    if a == 0.0 {
        return "0 s".into();
    }
    let (v, unit) = if a >= 1.0 {
        (s, "s")
    } else if a >= 1e-3 {
        (s * 1e3, "ms")
    } else {
        (s * 1e6, "µs")
    };
    let int_digits = (v.abs().log10().floor() as i64 + 1).max(1) as usize;
    let decimals = sig.saturating_sub(int_digits);
    format!("{v:.decimals$} {unit}")
}

/// Bytes in GiB with one decimal, no unit.
pub fn gib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / GIB)
}

/// Bytes with a unit that suits their size: `96 MiB`, `1.5 GiB`, `512 KiB`.
pub fn bytes(b: u64) -> String {
    let f = b as f64;
    if f >= GIB {
        format!("{:.1} GiB", f / GIB)
    } else if f >= MIB {
        format!("{:.0} MiB", f / MIB)
    } else {
        format!("{:.0} KiB", f / 1024.0)
    }
}

/// A fraction as a percentage with one decimal: `7.9%`.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A signed relative change: `+26.6%`, `−3.0%`.
pub fn change(new: f64, old: f64) -> String {
    if old == 0.0 || !old.is_finite() || !new.is_finite() {
        return "-".into();
    }
    let d = (new / old - 1.0) * 100.0;
    if d >= 0.0 {
        format!("+{d:.1}%")
    } else {
        format!("−{:.1}%", -d)
    }
}

/// A "nice" step (1, 2 or 5 times a power of ten) at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let m = raw / base;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * base
}

/// A tick label for time `t` on an axis whose ticks are `step` apart.
pub fn tick(t: f64, step: f64) -> String {
    let (scale, unit) = if step >= 0.1 {
        (1.0, "s")
    } else if step >= 1e-4 {
        (1e3, "ms")
    } else {
        (1e6, "µs")
    };
    let v = t * scale;
    let s = step * scale;
    let decimals = if s >= 1.0 {
        0
    } else if s >= 0.1 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {unit}")
}

/// `line` cut to `width` columns with "…" as its last character when it is wider (the
/// styles kept), so that a cut is always visible.
pub fn clip_line(line: ratatui::text::Line<'static>, width: usize) -> ratatui::text::Line<'static> {
    use ratatui::text::{Line, Span};
    if line.width() <= width {
        return line;
    }
    let mut left = width.saturating_sub(1);
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut last_style = ratatui::style::Style::default();
    for span in line.spans {
        last_style = span.style;
        if left == 0 {
            break;
        }
        let n = span.content.chars().count();
        if n <= left {
            left -= n;
            spans.push(span);
        } else {
            let head: String = span.content.chars().take(left).collect();
            spans.push(Span::styled(head, span.style));
            left = 0;
        }
    }
    if width > 0 {
        spans.push(Span::styled("…", last_style));
    }
    Line::from(spans)
}

/// `text` broken at spaces into rows of at most `width` columns. A word longer than a row
/// (a path) continues on the next row, cut after its last `/` that fits: every character of
/// `text` is kept.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    use ratatui::text::Line;
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_w = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word = word.to_string();
        let mut word_w = Line::from(word.as_str()).width();
        while word_w > width {
            if !row.is_empty() {
                rows.push(std::mem::take(&mut row));
            }
            let mut cut: String = word.chars().take(width).collect();
            // A path is cut after a `/`, so that its file name and location (`a.toml:9:11`)
            // stay on one row when they fit one.
            if let Some(slash) = cut.rfind('/').filter(|&i| i > 0) {
                cut.truncate(slash + 1);
            }
            let cut_len = cut.len();
            rows.push(cut);
            word = word[cut_len..].to_string();
            word_w = Line::from(word.as_str()).width();
            row_w = 0;
        }
        if word.is_empty() {
            continue;
        }
        let gap = usize::from(!row.is_empty());
        if row_w + gap + word_w > width {
            rows.push(std::mem::take(&mut row));
            row_w = 0;
        } else if gap == 1 {
            row.push(' ');
            row_w += 1;
        }
        row.push_str(&word);
        row_w += word_w;
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// `text` within `w` columns, cut with "…" where it is longer.
pub fn cut(text: &str, w: usize) -> String {
    if text.chars().count() <= w {
        return text.to_string();
    }
    let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// `text` up to its last whole word within `w` columns: a header gives way by whole
/// column names (a cut one read "G…" or "ite…").
pub fn cut_at_word(text: &str, w: usize) -> String {
    if text.chars().count() <= w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let end = (1..=w)
        .rev()
        .find(|&i| chars[i - 1] != ' ' && chars[i] == ' ')
        .unwrap_or(0);
    chars[..end].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(time(12.4), "12.40 s");
        assert_eq!(time(0.84), "840 ms");
        assert_eq!(time(0.0008), "800 µs");
        assert_eq!(time(0.000_002_5), "2.5 µs");
        assert_eq!(gib(3 << 29), "1.5");
        assert_eq!(bytes(96 << 20), "96 MiB");
        assert_eq!(pct(0.079), "7.9%");
        assert_eq!(change(2.0, 1.0), "+100.0%");
        assert_eq!(nice_step(0.37), 0.5);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(tick(1.5, 0.5), "1.5 s");
        assert_eq!(tick(0.02, 0.01), "20 ms");
        assert_eq!(time_sig(177.234, 3), "177 s");
        assert_eq!(time_sig(177.234, 4), "177.2 s");
        assert_eq!(time_sig(7.891, 3), "7.89 s");
        assert_eq!(time_sig(0.8403, 4), "840.3 ms");
        assert_eq!(cut_at_word("  t×cp  iter    GiB", 14), "  t×cp  iter");
        assert_eq!(cut_at_word("  t×cp  iter    GiB", 11), "  t×cp");
        assert_eq!(cut_at_word("short", 9), "short");
        assert_eq!(cut_at_word("unbroken", 4), "");
    }
}
