//! Terminal lifecycle: a guard that enters raw mode, the alternate screen and mouse capture
//! and restores all of them on drop and on panic (the panic hook restores first, then
//! chains to the previous hook), and synchronized-update framing around each draw.
//!
//! Signals (signal-hook, on a thread of their own): every signal whose default action ends
//! the process and that can be caught ([`TERMINATING`]: SIGTERM, SIGHUP, SIGINT, SIGQUIT,
//! SIGUSR1, SIGUSR2, the timers' and the limits' signals) restores the terminal and exits with
//! 128 + the signal; SIGTSTP restores, stops the process, and on SIGCONT the TUI's terminal
//! state comes back and the loop repaints every cell. Left out: the faults a handler cannot
//! outlive (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS: a panic restores
//! through the panic hook), SIGPIPE (ignored, as Rust programs do) and SIGKILL (no handler
//! runs: nothing can restore the terminal after it).

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::signal::{
    SIGALRM, SIGCONT, SIGHUP, SIGINT, SIGPROF, SIGQUIT, SIGTERM, SIGTSTP, SIGUSR1, SIGUSR2,
    SIGVTALRM, SIGXCPU, SIGXFSZ,
};
use signal_hook::iterator::Signals;
use signal_hook::low_level::emulate_default_handler;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The terminal type the app draws on.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// The signals that end the process by default and are caught to restore the terminal first.
#[cfg(target_os = "linux")]
pub const TERMINATING: &[i32] = &[
    SIGTERM,
    SIGHUP,
    SIGINT,
    SIGQUIT,
    SIGUSR1,
    SIGUSR2,
    SIGALRM,
    SIGVTALRM,
    SIGPROF,
    SIGXCPU,
    SIGXFSZ,
    signal_hook::consts::signal::SIGIO,
];

/// The signals that end the process by default and are caught to restore the terminal first
/// (SIGIO is ignored by default here, so it is left alone).
#[cfg(not(target_os = "linux"))]
pub const TERMINATING: &[i32] = &[
    SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
    SIGXFSZ,
];

/// Whether the TUI's terminal state is on (between `enter` and the guard's drop).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the mouse is captured (to capture it again after a stop).
static MOUSE: AtomicBool = AtomicBool::new(false);
/// Set when the screen was re-entered behind the loop's back (after SIGCONT).
static REPAINT: AtomicBool = AtomicBool::new(false);

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
        DisableBracketedPaste,
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
        ACTIVE.store(true, Ordering::SeqCst);
        MOUSE.store(mouse, Ordering::SeqCst);
        let guard = TerminalGuard { _private: () };
        let mut out = io::stdout();
        // Bracketed paste: a paste arrives as one event (the layout editor inserts it whole),
        // not as keys that would run commands.
        execute!(
            out,
            EnterAlternateScreen,
            EnableBracketedPaste,
            cursor::Hide
        )?;
        if mouse {
            execute!(out, EnableMouseCapture)?;
        }
        let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        Ok((guard, terminal))
    }
}

/// Turns mouse capture on or off.
pub fn set_mouse(on: bool) -> io::Result<()> {
    MOUSE.store(on, Ordering::SeqCst);
    let mut out = io::stdout();
    if on {
        execute!(out, EnableMouseCapture)
    } else {
        execute!(out, DisableMouseCapture)
    }
}

/// Enters the TUI's terminal state again after a stop: raw mode, the alternate screen
/// (cleared), cursor hidden, and the mouse if it was captured.
fn reenter() -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
        cursor::Hide
    )?;
    if MOUSE.load(Ordering::SeqCst) {
        execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// A new terminal whose previous frame is empty, so the next draw writes every cell
/// (ratatui's `clear` would ask the terminal for the cursor position, which races the
/// input thread).
pub fn fresh() -> io::Result<Term> {
    Terminal::new(CrosstermBackend::new(io::stdout()))
}

/// Whether the screen was re-entered after a stop since the last call (the loop then draws
/// on a [`fresh`] terminal).
pub fn take_repaint() -> bool {
    REPAINT.swap(false, Ordering::SeqCst)
}

/// Ctrl-Z: restores the terminal, stops this process (SIGTSTP's default action, raised
/// in-process by signal-hook: no program is run), and once the shell resumes it (`fg`),
/// re-enters raw mode, the alternate screen and (if captured) the mouse.
pub fn suspend() -> io::Result<Term> {
    restore();
    let stopped = emulate_default_handler(SIGTSTP);
    reenter()?;
    stopped.map_err(|e| io::Error::other(format!("cannot stop: {e}")))?;
    fresh()
}

/// Handles the signals that end or stop the program on a thread of its own (see the
/// module doc). `wake` is called after the screen was re-entered, so that the loop wakes
/// up, sees [`take_repaint`] and draws everything.
pub fn handle_signals(wake: impl Fn() + Send + 'static) -> io::Result<()> {
    let mut signals = Signals::new(TERMINATING.iter().chain(&[SIGTSTP, SIGCONT]))?;
    std::thread::Builder::new()
        .name("pipescope-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let active = ACTIVE.load(Ordering::SeqCst);
                match sig {
                    SIGTSTP => {
                        if active {
                            restore();
                        }
                        let _ = emulate_default_handler(SIGTSTP);
                        if active && ACTIVE.load(Ordering::SeqCst) && reenter().is_ok() {
                            REPAINT.store(true, Ordering::SeqCst);
                            wake();
                        }
                    }
                    SIGCONT => {
                        if active && reenter().is_ok() {
                            REPAINT.store(true, Ordering::SeqCst);
                            wake();
                        }
                    }
                    _ => {
                        if active {
                            restore();
                        }
                        std::process::exit(128 + sig);
                    }
                }
            }
        })?;
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
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
