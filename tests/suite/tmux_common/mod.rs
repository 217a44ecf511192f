//! Driving the built binary in a real terminal for the end-to-end tests: a private tmux
//! server per test (its own socket and session, killed on drop even when an assertion
//! fails), keys in, the screen read back with `capture-pane`, polling with a timeout.
//! Where tmux is not installed the tests skip with a message, except under CI (`CI` set),
//! where that fails.

#![allow(clippy::expect_used, clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a wait for the screen (or a process state) may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// One tmux server and session running a command.
pub struct Tmux {
    /// The private server's socket name (`tmux -L`).
    pub socket: String,
    /// The session running the command (`-t` target).
    pub session: String,
}

fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a test without tmux should skip (`Ok(true)`), run (`Ok(false)`) or fail: under
/// CI (`ci`, the `CI` variable set) a missing tmux is an error, so that a broken install step
/// cannot hide behind skipped tests.
pub fn skip_decision(have_tmux: bool, ci: bool) -> Result<bool, &'static str> {
    match (have_tmux, ci) {
        (true, _) => Ok(false),
        (false, false) => Ok(true),
        (false, true) => {
            Err("tmux is not installed but CI is set: install tmux for the end-to-end tests")
        }
    }
}

/// True (with a message) where tmux is missing outside CI; panics where it is missing in CI.
pub fn skip_without_tmux() -> bool {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    match skip_decision(have_tmux(), ci) {
        Ok(true) => {
            eprintln!("tmux not installed: skipping the end-to-end test");
            true
        }
        Ok(false) => false,
        Err(e) => panic!("{e}"),
    }
}

/// The binary under test (a debug build under `cargo test`, so the test hooks act).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_pipescope")
}

impl Tmux {
    /// Starts the binary with `args` and `env` in a fresh tmux server of `w`x`h`.
    pub fn start(args: &[&str], env: &[(&str, &str)], w: u16, h: u16) -> Tmux {
        let mut program = format!("'{}'", bin());
        for a in args {
            program.push_str(&format!(" '{a}'"));
        }
        Self::launch_sized(&program, env, w, h)
    }

    /// Starts a shell command line (which runs the binary itself) in a fresh 120x40 server.
    pub fn start_shell(line: &str, env: &[(&str, &str)]) -> Tmux {
        Self::launch(&format!("sh -c \"{line}\""), env)
    }

    /// Runs `program` (a shell word list, already quoted) with `env` at 120x40.
    pub fn launch(program: &str, env: &[(&str, &str)]) -> Tmux {
        Self::launch_sized(program, env, 120, 40)
    }

    /// Runs `program` (already quoted) with `env` in a new tmux server and session of
    /// `w`x`h`.
    pub fn launch_sized(program: &str, env: &[(&str, &str)], w: u16, h: u16) -> Tmux {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let t = Tmux {
            socket: format!("pipescope-tmux-{}-{n}", std::process::id()),
            session: format!("t{n}"),
        };
        let mut cmd = String::from("env TERM=xterm-256color");
        for (k, v) in env {
            cmd.push_str(&format!(" {k}='{v}'"));
        }
        cmd.push(' ');
        cmd.push_str(program);
        let status = Command::new("tmux")
            .args(["-L", &t.socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-s", &t.session])
            .args(["-x", &w.to_string(), "-y", &h.to_string(), &cmd])
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        t
    }

    /// Runs a tmux command against this server; its standard output, trimmed at the end.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// The screen as text.
    pub fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.session])
    }

    /// A pane variable (`alternate_on`, `cursor_flag`, `mouse_any_flag`, `pane_pid`, ...).
    pub fn pane(&self, var: &str) -> String {
        self.tmux(&[
            "display-message",
            "-p",
            "-t",
            &self.session,
            &format!("#{{{var}}}"),
        ])
    }

    /// Sends tmux key names (`j`, `Enter`, `C-c`, ...), one command each.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", &self.session, k])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
            sleep(Duration::from_millis(30));
        }
    }

    /// Sends tmux key names in one command, so that they arrive together.
    pub fn burst(&self, keys: &[&str]) {
        let mut args = vec!["-L", &self.socket, "send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        let status = Command::new("tmux")
            .args(&args)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Polls the screen until `pred` holds; panics with the last screen after the timeout.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(what, TIMEOUT, pred)
    }

    /// [`Tmux::wait_for`] with its own timeout.
    pub fn wait_for_within(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if pred(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out after {timeout:?} waiting for {what}; screen:\n{screen}"
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// Waits (up to `timeout`) for the session to end; how long it took.
    pub fn wait_exit(&self, timeout: Duration) -> Duration {
        let start = Instant::now();
        while self.alive() && start.elapsed() < timeout {
            sleep(Duration::from_millis(20));
        }
        start.elapsed()
    }

    /// Polls the screen until it shows `text`.
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Whether the session still runs.
    pub fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session", "-t", &self.session])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The terminal modes of the pane's tty, as `stty -a` reports them now.
    pub fn stty(&self) -> String {
        let tty = self.pane("pane_tty");
        let out = Command::new("stty")
            .args(["-a", "-F", &tty])
            .output()
            .expect("stty");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

/// A fresh, empty folder for one test (`pipescope-<tag>-<pid>` in the temp dir).
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pipescope-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes `text` to `path`, creating its folder.
pub fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

/// Whether `stty -a` output shows canonical mode with echo and signals (not raw mode).
pub fn cooked(stty: &str) -> bool {
    let words: Vec<&str> = stty
        .split(|c: char| c.is_whitespace() || c == ';')
        .collect();
    words.contains(&"icanon") && words.contains(&"echo") && words.contains(&"isig")
}

#[test]
fn a_missing_tmux_skips_locally_and_fails_in_ci() {
    assert_eq!(skip_decision(true, false), Ok(false));
    assert_eq!(skip_decision(true, true), Ok(false));
    assert_eq!(skip_decision(false, false), Ok(true));
    assert!(skip_decision(false, true).is_err());
}
