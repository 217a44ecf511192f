//! `file:line:column` locations for configuration errors.

use std::path::Path;

/// 1-based line and column (in characters) of byte `offset` in `text`: the engine's one
/// helper, shared by every configuration error.
pub(crate) use crate::scenario::presets::line_column as span_location;

/// Formats a TOML error as `path:line:column: message` (the message without toml's own
/// location header and snippet), as preset errors are: an unknown key with the nearest known
/// one, a value of the wrong type with its key.
pub fn located(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let mut e = crate::scenario::PresetError::from_toml(&path.display().to_string(), text, err);
    if e.line.is_none() {
        (e.line, e.column) = (Some(1), Some(1));
    }
    e.to_string()
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
