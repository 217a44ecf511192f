//! `file:line:column` locations for configuration errors.

use std::path::Path;

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn span_location(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Formats a TOML error as `path:line:column: message` (the message without toml's own
/// location header and snippet).
pub fn located(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let (line, column) = err
        .span()
        .map_or((1, 1), |span| span_location(text, span.start));
    format!(
        "{}:{line}:{column}: {}",
        path.display(),
        err.message().trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based() {
        assert_eq!(span_location("ab\ncd", 0), (1, 1));
        assert_eq!(span_location("ab\ncd", 4), (2, 2));
        assert_eq!(span_location("ab", 99), (1, 3));
    }
}
