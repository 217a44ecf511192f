//! Errors of preset files: the file, the line and column (1-based) where known, and a message
//! that names the problem; unknown keys come with the nearest known key.

use std::fmt;

use crate::scenario::InvalidField;

/// Why a preset could not be loaded or resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetError {
    /// The file (a path, or `builtin:presets/...` for embedded files, or `-` for none).
    pub file: String,
    /// 1-based line of the offending text, where known.
    pub line: Option<usize>,
    /// 1-based column of the offending text, where known.
    pub column: Option<usize>,
    /// What is wrong and, where possible, what is allowed.
    pub message: String,
}

impl fmt::Display for PresetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            (Some(l), None) => write!(f, "{}:{l}: {}", self.file, self.message),
            _ => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for PresetError {}

impl PresetError {
    /// An error without a position.
    pub fn new(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.to_string(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at byte `offset` of `text`.
    pub fn at(file: &str, text: &str, offset: usize, message: impl Into<String>) -> Self {
        let (line, column) = line_column(text, offset);
        Self {
            file: file.to_string(),
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// A value of the file that is not allowed.
    pub fn invalid(file: &str, e: &InvalidField) -> Self {
        Self::new(file, e.to_string())
    }

    /// Adds the line and column of the offending value in `text` to an error of a value
    /// that is not allowed (`invalid parallel.pp = ...`, `unknown gpu 'x'`) when it has none,
    /// so that the user is sent to the value to fix, where the TOML reader's own errors of
    /// a value's type point too. The key is looked for in its table, else anywhere.
    pub fn locate(mut self, text: &str) -> Self {
        if self.line.is_some() {
            return self;
        }
        let named = ["model", "gpu"]
            .into_iter()
            .find(|what| self.message.starts_with(&format!("unknown {what} '")))
            .map(str::to_string);
        let field = self
            .message
            .strip_prefix("invalid ")
            .and_then(|r| r.split(" = ").next())
            // An entry of an array (`matrix[1]`) is found at its key.
            .map(|f| f.split('[').next().unwrap_or(f).to_string())
            .or(named);
        if let Some(offset) = field.and_then(|f| find_key(text, &f)) {
            let offset = self
                .column_in_value(text, offset)
                .unwrap_or_else(|| value_offset(text, offset));
            let (line, column) = line_column(text, offset);
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// Adds the line and column of table or key `path` (dotted, as the file spells it:
    /// `atention`, `attention.qq`) when the error has none: its `[path]` header (or that of a
    /// table under it), else its `key =` line in its parent table. For an unknown table,
    /// whose name is the offending value rather than a key.
    pub fn locate_table(mut self, text: &str, path: &str) -> Self {
        if self.line.is_some() || path.is_empty() {
            return self;
        }
        let mut offset = 0;
        let mut found = None;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim_start();
            let at = offset + (line.len() - trimmed.len());
            offset += line.len();
            let Some(header) = trimmed.strip_prefix('[') else {
                continue;
            };
            let inner = header.trim_start_matches('[');
            let name = inner.split(']').next().unwrap_or("").trim();
            if name == path || name.starts_with(&format!("{path}.")) {
                let skipped = header.len() - inner.len() + 1;
                found = Some(at + skipped + (inner.len() - inner.trim_start().len()));
                break;
            }
        }
        if let Some(offset) = found.or_else(|| find_key(text, path)) {
            let (line, column) = line_column(text, offset);
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// For a message about a string value that names a column inside it (a layout's
    /// `column 14: ...`), the byte offset of that character in the file, from the key at
    /// `key_offset`: the user is sent to the character, not to the key.
    fn column_in_value(&self, text: &str, key_offset: usize) -> Option<usize> {
        let (_, after) = self.message.split_once(": column ")?;
        let column: usize = after.split(':').next()?.trim().parse().ok()?;
        let line = &text[key_offset..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let quote = line
            .find('=')
            .and_then(|eq| line[eq..].find(['"', '\'']).map(|q| eq + q + 1))?;
        let inside = line[quote..]
            .char_indices()
            .nth(column.checked_sub(1)?)
            .map(|(i, _)| i)?;
        Some(key_offset + quote + inside)
    }

    /// Converts a TOML parse or schema error, adding the nearest key to unknown-key errors.
    pub fn from_toml(file: &str, text: &str, e: &toml::de::Error) -> Self {
        let mut message = e.message().trim().to_string();
        if let Some(hint) = unknown_field_hint(&message) {
            message.push_str(&hint);
        }
        if let Some(explained) = e
            .span()
            .and_then(|span| super::toml_error::explain(text, span, &message))
        {
            message = explained;
        }
        match e.span() {
            Some(span) => Self::at(file, text, span.start, message),
            None => Self::new(file, message),
        }
    }
}

/// The byte offset of the value of the `key = value` line whose key starts at
/// `key_offset`: the first character after `=` and its spaces (the key's own offset when the
/// line has no value).
fn value_offset(text: &str, key_offset: usize) -> usize {
    let line = text.get(key_offset..).unwrap_or("");
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    line.find('=')
        .map(|eq| {
            let after = &line[eq + 1..];
            let value = after.trim_start_matches([' ', '\t']);
            if value.is_empty() || value.starts_with('#') {
                key_offset
            } else {
                key_offset + eq + 1 + (after.len() - value.len())
            }
        })
        .unwrap_or(key_offset)
}

/// 1-based line and column (in characters) of byte `offset`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" message: "; did you mean `a`?".
fn unknown_field_hint(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let known: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    nearest(field, &known).map(|k| format!("; did you mean `{k}`?"))
}

/// The known word closest to `word`: the first that starts with it (`h100` for
/// `h100-80gb`), else the nearest by edit distance, if it is reasonably close, else the
/// first the word abbreviates (`attn` for `attention`: same first letter, its letters in
/// order). Case is ignored when comparing (`ADAPIPE` gives `adapipe`).
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let word = word.to_lowercase();
    let word = word.as_str();
    if word.chars().count() >= 2
        && let Some(k) = known.iter().find(|k| k.starts_with(word))
    {
        return Some(k);
    }
    known
        .iter()
        .map(|k| (edit_distance(word, &k.to_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.len().max(word.len()) / 2).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
        .or_else(|| known.iter().find(|k| abbreviates(word, k)).copied())
}

/// Whether `word` (at least 3 letters) is an abbreviation of `known`: the same first letter
/// and every letter found in order (`attn` of `attention`).
fn abbreviates(word: &str, known: &str) -> bool {
    let known = known.to_lowercase();
    if word.chars().count() < 3 || word.chars().next() != known.chars().next() {
        return false;
    }
    let mut rest = known.chars();
    word.chars().all(|c| rest.any(|k| k == c))
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// Byte offset of the key `field` (a dotted path: `parallel.pp`) in a TOML text: the key at
/// the start of a line inside the table the path names (or whose name ends the path), else
/// the first line with that key.
fn find_key(text: &str, field: &str) -> Option<usize> {
    let (table, key) = field.rsplit_once('.').unwrap_or(("", field));
    let mut current = String::new();
    let mut offset = 0;
    let mut fallback = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let at = offset + (line.len() - trimmed.len());
        offset += line.len();
        if let Some(header) = trimmed.strip_prefix('[') {
            let name = header.trim_start_matches('[');
            current = name.split(']').next().unwrap_or("").trim().to_string();
            continue;
        }
        let Some(rest) = trimmed.strip_prefix(key) else {
            continue;
        };
        if !rest.trim_start().starts_with('=') {
            continue;
        }
        let in_table = current == table
            || (!current.is_empty() && table.rsplit('.').next() == Some(current.as_str()));
        if in_table {
            return Some(at);
        }
        fallback.get_or_insert(at);
    }
    fallback
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
    }

    /// A value that is not allowed is pointed at where the value starts, as the TOML
    /// reader's type errors are, whichever check refused it; an unknown preset name too.
    #[test]
    fn a_refused_value_is_located_at_the_value() {
        let text = "name = \"x\"\ngpu   =  \"nope\"\n[parallel]\npp = 0 # none\n";
        let e = PresetError::new("x.toml", "invalid parallel.pp = 0: a whole number").locate(text);
        assert_eq!((e.line, e.column), (Some(4), Some(6)));
        let e = PresetError::new("x.toml", "unknown gpu 'nope'; known: a").locate(text);
        assert_eq!((e.line, e.column), (Some(2), Some(10)));
        // A key with no value on its line is pointed at itself.
        assert_eq!(value_offset("pp =\n", 0), 0);
        assert_eq!(value_offset("pp = # x\n", 0), 0);
        assert_eq!(value_offset("pp\t=\t3", 0), 5);
    }

    #[test]
    fn nearest_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(nearest("hiden", &["hidden", "heads"]), Some("hidden"));
        assert_eq!(nearest("zzzzzzzz", &["hidden", "heads"]), None);
        assert_eq!(
            nearest("ADAPIPE", &["adaptive", "adapipe"]),
            Some("adapipe")
        );
        assert_eq!(nearest("FP8", &["bf16", "fp8"]), Some("fp8"));
        assert_eq!(
            nearest("attn", &["embedding", "attention"]),
            Some("attention")
        );
        assert_eq!(nearest("xyz", &["embedding", "attention"]), None);
        let hint = unknown_field_hint("unknown field `layres`, expected one of `name`, `layers`");
        assert_eq!(hint.as_deref(), Some("; did you mean `layers`?"));
    }
}
