//! Type errors of the TOML reader said in the preset's terms: "expected u32", "u64 value was
//! too large", "cannot recurse further" name neither the key nor what it takes. Where the
//! error points at a value, the key it belongs to is read off the text (its table and its
//! name), and the message becomes `invalid parallel.pp = 5000000000: a whole number from 1 to
//! 65536`, with the key's own range where it has one ([`crate::scenario::ranges`]) and the
//! type's otherwise.

use std::ops::Range;

use crate::scenario::ranges::range_of;

/// The longest value quoted in a message (longer ones end in `...`).
const MAX_VALUE_CHARS: usize = 40;

/// The message for the reader's `message` about the bytes `span` of `text`, or `None` when it
/// is not about a value's type or size (then the reader's own message stays).
pub(super) fn explain(text: &str, span: Range<usize>, message: &str) -> Option<String> {
    let allowed_by_type = type_allowed(message)?;
    let key = key_at(text, span.start);
    let value = value_at(text, span);
    let allowed = key
        .as_deref()
        .and_then(range_of)
        .map_or(allowed_by_type, |r| r.allowed());
    Some(match key {
        Some(key) => format!("invalid {key} = {value}: {allowed}"),
        None => format!("invalid value {value}: {allowed}"),
    })
}

/// What the type named in a reader's message allows, for the messages about a value's type,
/// size or nesting.
fn type_allowed(message: &str) -> Option<String> {
    let types = [
        (
            "expected u32",
            format!("a whole number from 0 to {}", u32::MAX),
        ),
        (
            "expected u64",
            format!("a whole number from 0 to {}", u64::MAX),
        ),
        ("expected i64", "a whole number".to_string()),
        ("expected f64", "a number".to_string()),
        ("expected a boolean", "true or false".to_string()),
        ("expected a string", "text in quotes".to_string()),
        ("expected a sequence", "an array in brackets".to_string()),
        (
            "expected any valid TOML value",
            format!("a whole number of at most {} (TOML's largest)", i64::MAX),
        ),
        (
            "value was too large",
            format!("a whole number of at most {} (TOML's largest)", i64::MAX),
        ),
        (
            "overflowed",
            "a finite number (at most about 1.8e308)".to_string(),
        ),
        (
            "recurse",
            "arrays or tables nested less deeply (the TOML reader stops at its depth limit)"
                .to_string(),
        ),
        (
            "recursion",
            "arrays or tables nested less deeply (the TOML reader stops at its depth limit)"
                .to_string(),
        ),
    ];
    let wanted = message.starts_with("invalid type")
        || message.starts_with("invalid value")
        || message.contains("too large")
        || message.contains("overflowed")
        || message.contains("recurs");
    if !wanted {
        return None;
    }
    types
        .into_iter()
        .find(|(needle, _)| message.contains(needle))
        .map(|(_, allowed)| allowed)
        .or_else(|| {
            // Another expectation: keep the reader's own words for it.
            message
                .split_once("expected ")
                .map(|(_, e)| format!("expected {e}"))
        })
}

/// The dotted key whose value starts at or contains `offset`: the key before the nearest `=`
/// before it, inside the table of the nearest header above that (one level of inline table
/// is followed: `gpu = { hbm_gbps = 1 }` is `gpu.hbm_gbps`).
fn key_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset.min(text.len()))?;
    let eq = before.rfind('=')?;
    let line_start = before[..eq].rfind('\n').map_or(0, |i| i + 1);
    let left = &before[line_start..eq];
    // Inside an inline table: the key after its last `{` or `,`, below the key before `{`.
    let key = clean_key(left);
    let outer = left
        .rfind('{')
        .and_then(|brace| left[..brace].rfind('=').map(|j| clean_key(&left[..j])))
        .filter(|k| !k.is_empty());
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    let table = header_above(&text[..line_start]);
    let parts: Vec<String> = [table, outer, Some(key)].into_iter().flatten().collect();
    Some(parts.join("."))
}

/// A key as written, without quotes or the spaces around it (its last part after `{`/`,`).
fn clean_key(s: &str) -> String {
    let s = s.rsplit(['{', ',']).next().unwrap_or(s);
    s.trim().trim_matches('"').trim_matches('\'').to_string()
}

/// The name of the last `[table]` header in `text`, if any.
fn header_above(text: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        let line = line.trim_start();
        let name = line.strip_prefix('[')?.trim_start_matches('[');
        Some(name.split(']').next()?.trim().to_string())
    })
}

/// The value the reader points at (`span`; when that is one character, up to the end of its
/// line), on one line, shortened.
fn value_at(text: &str, span: Range<usize>) -> String {
    let rest = match text.get(span.clone()) {
        Some(v) if span.len() > 1 => v,
        _ => text.get(span.start.min(text.len())..).unwrap_or(""),
    };
    let line = rest.lines().next().unwrap_or("");
    let line = line.split(" #").next().unwrap_or(line).trim();
    let line = line.strip_suffix(',').unwrap_or(line);
    if line.chars().count() > MAX_VALUE_CHARS {
        let short: String = line.chars().take(MAX_VALUE_CHARS).collect();
        format!("{short}...")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The explanation of `message` about the first `needle` of `text`.
    fn at(text: &str, needle: &str, message: &str) -> Option<String> {
        let start = text.find(needle).unwrap();
        explain(text, start..start + needle.len(), message)
    }

    #[test]
    fn a_type_error_names_the_key_the_value_and_its_range() {
        let text = "name = \"a\"\n[parallel]\npp = 5000000000\n";
        let m = at(
            text,
            "5000000000",
            "invalid value: integer `5000000000`, expected u32",
        );
        assert_eq!(
            m.as_deref(),
            Some("invalid parallel.pp = 5000000000: a whole number from 1 to 65536")
        );
        let text = "[gpu]\nname = \"g\"\nnode_gpus = 4.5\n";
        let m = at(
            text,
            "4.5",
            "invalid type: floating point `4.5`, expected u32",
        );
        assert_eq!(
            m.as_deref(),
            Some("invalid gpu.node_gpus = 4.5: a whole number from 1 to 65536")
        );
    }

    #[test]
    fn inline_tables_and_unranged_keys_use_the_type() {
        let text = "name = \"a\"\ngpu = { name = \"g\", flag = \"yes\" }\n";
        let m = at(
            text,
            "\"yes\"",
            "invalid type: string \"yes\", expected a boolean",
        );
        assert_eq!(
            m.as_deref(),
            Some("invalid gpu.flag = \"yes\": true or false")
        );
        let text = "[plan]\ndescription = [[[[[[\n";
        let start = text.find("[[[[").unwrap();
        let m = explain(
            text,
            start..start + 1,
            "cannot recurse further; max recursion depth met",
        )
        .unwrap();
        assert!(m.starts_with("invalid plan.description = [[[[[["), "{m}");
        assert!(m.contains("nested less deeply"), "{m}");
    }

    #[test]
    fn other_messages_are_left_alone() {
        assert_eq!(explain("a = 1", 0..1, "unknown field `x`"), None);
    }
}
