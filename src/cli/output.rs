//! Writing a command's result to stdout without panicking when the reader goes away
//! (`pipescope simulate ... | head`): a closed pipe is the reader's choice, not an error.

use std::io::{ErrorKind, Write};

/// `text` with every control character except newline and tab written as `\uXXXX`, so that
/// names, descriptions and echoed values cannot send escape sequences to the terminal (in
/// JSON strings the same spelling is a valid escape of the same character).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes `text` to stdout and flushes it. A broken pipe (the reader closed early) counts
/// as success; any other write error is a failure while running, with a user-facing message.
pub fn emit(text: &str) -> Result<(), super::Stop> {
    let text = printable(text);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(super::Stop::Failed(format!("writing to stdout: {e}"))),
    }
}

/// Like [`emit`], with a newline after `text`.
pub fn emit_line(text: &str) -> Result<(), super::Stop> {
    emit(&format!("{text}\n"))
}

/// A fraction as a percentage with one decimal, or "–" where there is none (an
/// infeasible plan reports no MFU or HFU).
pub fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{:.1}%", 100.0 * v))
}

/// A ratio as `1.234x`, or "–" where there is none (no speed-up for an infeasible plan).
pub fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |v| format!("{v:.3}x"))
}
