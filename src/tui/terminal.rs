//! Terminal lifecycle: a guard that enters raw mode, the alternate screen and mouse capture
//! and restores all of them on drop and on panic (the panic hook restores first, then
//! chains to the previous hook), and synchronized-update framing around each draw.

use std::io::{self, Stdout, Write};
use std::sync::Once;

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The terminal type the app draws on.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
pub struct TerminalGuard {
    _private: (),
}

/// Puts the terminal back: mouse off, main screen, cursor shown, cooked mode. Safe to call
/// more than once.
pub fn restore() {
    let mut out = io::stdout();
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

impl TerminalGuard {
    /// Enters the TUI's terminal state and returns the guard with a ratatui terminal.
    pub fn enter(mouse: bool) -> io::Result<(TerminalGuard, Term)> {
        install_panic_hook();
        enable_raw_mode()?;
        let guard = TerminalGuard { _private: () };
        let mut out = io::stdout();
        execute!(out, EnterAlternateScreen, cursor::Hide)?;
        if mouse {
            execute!(out, EnableMouseCapture)?;
        }
        let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        Ok((guard, terminal))
    }
}

/// Turns mouse capture on or off.
pub fn set_mouse(on: bool) -> io::Result<()> {
    let mut out = io::stdout();
    if on {
        execute!(out, EnableMouseCapture)
    } else {
        execute!(out, DisableMouseCapture)
    }
}

/// Ctrl-Z: restores the terminal, stops this process with SIGTSTP (sent by the system's
/// `kill`, as std cannot raise a signal without `unsafe`), and once the shell resumes it
/// (`fg`), re-enters raw mode, the alternate screen and (if `mouse`) mouse capture. The
/// new terminal it returns draws every cell again (ratatui's `clear` would ask the terminal
/// for the cursor position, which races the input thread).
pub fn suspend(mouse: bool) -> io::Result<Term> {
    restore();
    let status = std::process::Command::new("kill")
        .args(["-TSTP", &std::process::id().to_string()])
        .status();
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
        cursor::Hide
    )?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    match status {
        Ok(s) if s.success() => Ok(terminal),
        Ok(s) => Err(io::Error::other(format!("kill -TSTP exited with {s}"))),
        Err(e) => Err(io::Error::other(format!("cannot run kill: {e}"))),
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Draws one frame inside a synchronized update (DEC mode 2026), so terminals that support
/// it show the frame at once, without flicker.
pub fn draw_synced(terminal: &mut Term, draw: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(draw)?;
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}
