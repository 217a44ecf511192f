//! Writing a command's result to stdout without panicking when the reader goes away
//! (`pipescope simulate ... | head`): a closed pipe is the reader's choice, not an error.

use std::io::{ErrorKind, Write};

/// Writes `text` to stdout and flushes it. A broken pipe (the reader closed early) counts
/// as success; any other write error is returned as a user-facing message.
pub fn emit(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("writing to stdout: {e}")),
    }
}

/// Like [`emit`], with a newline after `text`.
pub fn emit_line(text: &str) -> Result<(), String> {
    emit(&format!("{text}\n"))
}
