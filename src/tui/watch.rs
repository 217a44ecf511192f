//! Hot reload: watches the user's config folder (`presets/`, `themes/`, recursively) and a
//! `--preset FILE` (that file only: its folder is watched flat and other names are
//! ignored), debounces bursts of events (editors save by writing a temp file and renaming
//! it), parses changed files on the watcher thread and hands the results to the app as
//! [`Reload`]s. A broken file yields an error with `file:line:column`; the app keeps the
//! last good version.
//!
//! Only content changes count: access and open events are ignored, and a file is parsed
//! again only when its bytes differ from what was last read (parsing a preset reads the
//! whole config folder, and those reads must not trigger another reload, or a reload would
//! trigger itself forever).
//! When the config folder is deleted and created again, its watch is set up again.
//! The UI's settings file (`config.toml` at the top of a watched folder) is no preset: it is
//! checked as settings. A file that was read before and is gone is reported as removed, so
//! that its error (and, for a theme, its place in the `T` cycle) goes with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::action::Reload;
use super::preset_io;
use super::theme::Theme;
use crate::scenario::presets::read_text_file;

/// Quiet time after the last event before files are parsed.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// Keeps the watcher alive; dropping it stops watching.
#[must_use = "dropping the handle stops the watcher"]
pub struct WatchHandle {
    _watcher: Arc<Mutex<RecommendedWatcher>>,
}

/// What a watched file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Preset,
    Theme,
    Settings,
}

/// What a changed file is, by its name (`true` for a theme); the settings file is told
/// apart by [`Seen`], which knows the watched folders.
fn classify(path: &Path) -> Option<bool> {
    if path.extension().and_then(|e| e.to_str()) != Some("toml") {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    if name.starts_with('.') {
        return None;
    }
    let in_themes = path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "themes");
    Some(in_themes)
}

/// Parses one file's text (or the error met reading it).
fn parse_kind(path: &Path, kind: Kind, text: Result<String, String>) -> Reload {
    match kind {
        Kind::Settings => Reload::Settings(
            path.to_path_buf(),
            text.map_err(|e| format!("{}:1:1: {e}", path.display()))
                .and_then(|t| super::export::parse_settings(path, &t).map(|_| ())),
        ),
        Kind::Theme => parse_text(path, true, text),
        Kind::Preset => parse_text(path, false, text),
    }
}

/// Parses one preset or theme file's text (or the error met reading it).
fn parse_text(path: &Path, is_theme: bool, text: Result<String, String>) -> Reload {
    let text = match text {
        Ok(t) => t,
        Err(e) => {
            let msg = format!("{}:1:1: {e}", path.display());
            return if is_theme {
                Reload::Theme(path.to_path_buf(), Err(msg))
            } else {
                Reload::Preset(path.to_path_buf(), Err(msg))
            };
        }
    };
    if is_theme {
        Reload::Theme(path.to_path_buf(), Theme::parse(&text, path).map(Box::new))
    } else {
        Reload::Preset(
            path.to_path_buf(),
            preset_io::parse_preset(path, &text).map(Box::new),
        )
    }
}

/// What the watcher has read: each file's text (or read error) as last seen, so that an
/// event whose file still holds the same bytes (an open, a `touch`, our own reads) is
/// dropped.
#[derive(Debug, Default)]
pub struct Seen {
    texts: BTreeMap<PathBuf, Result<String, String>>,
    /// The settings files (`config.toml` at the top of each watched folder).
    settings: BTreeSet<PathBuf>,
}

impl Seen {
    /// Treats `dir`'s top-level `config.toml` as the UI's settings, not as a preset.
    pub fn settings_in(&mut self, dir: &Path) {
        self.settings
            .insert(dir.join(crate::scenario::presets::SETTINGS_FILE));
    }

    fn kind(&self, path: &Path) -> Option<Kind> {
        if self.settings.contains(path) {
            return Some(Kind::Settings);
        }
        classify(path).map(|theme| if theme { Kind::Theme } else { Kind::Preset })
    }

    /// Records what `path` holds now without reporting it (start-up: the app already has it).
    pub fn prime(&mut self, path: &Path) {
        if self.kind(path).is_some() && path.exists() {
            self.texts.insert(path.to_path_buf(), read_text_file(path));
        }
    }

    /// Records every preset and theme file under `dir` (bounded like the preset loader).
    pub fn prime_dir(&mut self, dir: &Path, depth: usize) {
        if depth > crate::scenario::presets::MAX_DEPTH {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => self.prime_dir(&path, depth + 1),
                Ok(t) if t.is_file() => self.prime(&path),
                _ => {}
            }
        }
    }

    /// The reload for `path` if what it holds differs from what was last read, or
    /// [`Reload::Removed`] when a file read before is gone; `None` when it is unchanged, was
    /// never read, or is not a preset, theme or settings file.
    pub fn changed(&mut self, path: &Path) -> Option<Reload> {
        let kind = self.kind(path)?;
        if !path.exists() {
            let last = self.texts.remove(path)?;
            // The theme it held: by the name its last text gave, else by the file's stem
            // (the name a theme that never loaded is listed under).
            let theme = (kind == Kind::Theme).then(|| {
                last.ok()
                    .and_then(|t| Theme::parse(&t, path).ok())
                    .map(|t| t.name)
                    .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .unwrap_or_default()
            });
            return Some(Reload::Removed(path.to_path_buf(), theme));
        }
        let text = read_text_file(path);
        if self.texts.get(path) == Some(&text) {
            return None;
        }
        self.texts.insert(path.to_path_buf(), text.clone());
        Some(parse_kind(path, kind, text))
    }
}

/// What one entry of `start`'s list watches.
enum Target {
    /// A folder, recursively.
    Dir(PathBuf),
    /// One file: its folder flat, events for other names dropped.
    File(PathBuf),
}

fn targets(paths: &[PathBuf]) -> Vec<Target> {
    paths
        .iter()
        .map(|p| {
            if p.is_file() {
                Target::File(p.clone())
            } else {
                Target::Dir(p.clone())
            }
        })
        .collect()
}

/// Arms the watches that can be armed now; returns whether each folder target is armed.
fn arm(watcher: &mut RecommendedWatcher, targets: &[Target], armed: &mut [bool]) {
    for (t, done) in targets.iter().zip(armed.iter_mut()) {
        if *done {
            continue;
        }
        *done = match t {
            Target::Dir(d) => {
                // The parent flat too, so that a deleted and re-created folder is noticed.
                if let Some(parent) = d.parent() {
                    let _ = watcher.watch(parent, RecursiveMode::NonRecursive);
                }
                // A stale watch (the folder was replaced) is dropped first.
                let _ = watcher.unwatch(d);
                d.is_dir() && watcher.watch(d, RecursiveMode::Recursive).is_ok()
            }
            Target::File(f) => f
                .parent()
                .is_some_and(|p| watcher.watch(p, RecursiveMode::NonRecursive).is_ok()),
        };
    }
}

/// Whether an event may change what a file holds (access and open events do not).
fn is_content_event(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(_))
}

/// Watches `paths` (folders recursively, files alone) and calls `deliver` with each parsed
/// change of content.
pub fn start(
    paths: &[PathBuf],
    deliver: impl Fn(Reload) + Send + 'static,
) -> Result<WatchHandle, String> {
    let (tx, rx) = mpsc::channel::<(EventKind, Vec<PathBuf>)>();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res
            && is_content_event(&event.kind)
        {
            let _ = tx.send((event.kind, event.paths));
        }
    })
    .map_err(|e| format!("file watcher: {e}"))?;
    let targets = targets(paths);
    let mut armed = vec![false; targets.len()];
    arm(&mut watcher, &targets, &mut armed);
    let watcher = Arc::new(Mutex::new(watcher));
    let weak = Arc::downgrade(&watcher);
    let mut seen = Seen::default();
    for t in &targets {
        if let Target::Dir(d) = t {
            seen.settings_in(d);
        }
    }
    for t in &targets {
        match t {
            Target::Dir(d) => seen.prime_dir(d, 0),
            Target::File(f) => seen.prime(f),
        }
    }
    thread::Builder::new()
        .name("pipescope-watch".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut changed = BTreeSet::new();
                let mut batch = vec![first];
                while let Ok(next) = rx.recv_timeout(DEBOUNCE) {
                    batch.push(next);
                }
                for (_, event_paths) in batch {
                    changed.extend(event_paths);
                }
                // A watched folder that was deleted and created again is watched again:
                // it is gone now, or its parent reported an event for the folder itself
                // (deleted and re-created within one batch).
                for (t, done) in targets.iter().zip(armed.iter_mut()) {
                    if let Target::Dir(d) = t
                        && *done
                        && (!d.is_dir() || changed.contains(d))
                    {
                        *done = false;
                    }
                }
                let was: Vec<bool> = armed.clone();
                // Gone when the handle was dropped: stop.
                let Some(watcher) = weak.upgrade() else {
                    return;
                };
                if let Ok(mut w) = watcher.lock() {
                    arm(&mut w, &targets, &mut armed);
                }
                for ((t, now), before) in targets.iter().zip(&armed).zip(was) {
                    if let Target::Dir(d) = t
                        && *now
                        && !before
                    {
                        collect(d, 0, &mut changed);
                    }
                }
                for path in changed {
                    let wanted = targets.iter().any(|t| match t {
                        Target::Dir(d) => path.starts_with(d),
                        Target::File(f) => &path == f,
                    });
                    if wanted && let Some(reload) = seen.changed(&path) {
                        deliver(reload);
                    }
                }
            }
        })
        .map_err(|e| format!("watcher thread: {e}"))?;
    Ok(WatchHandle { _watcher: watcher })
}

/// Every file under `dir` (a re-created folder's contents, which raised no event of their own).
fn collect(dir: &Path, depth: usize, out: &mut BTreeSet<PathBuf>) {
    if depth > crate::scenario::presets::MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(&entry.path(), depth + 1, out),
            Ok(t) if t.is_file() => {
                out.insert(entry.path());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_changed_content_is_reported() {
        let dir = std::env::temp_dir().join(format!("pipescope-seen-{}", std::process::id()));
        let themes = dir.join("themes");
        fs::create_dir_all(&themes).unwrap();
        let path = themes.join("t.toml");
        fs::write(&path, "name = \"t\"\n").unwrap();
        let mut seen = Seen::default();
        seen.prime_dir(&dir, 0);
        // Reads, opens and touches change nothing: no reload.
        assert_eq!(seen.changed(&path), None);
        let _ = fs::read_to_string(&path).unwrap();
        assert_eq!(seen.changed(&path), None);
        fs::write(&path, "name = \"t\"\n").unwrap();
        assert_eq!(seen.changed(&path), None);
        // New bytes: one reload, then quiet again.
        fs::write(&path, "name = \"t\"\n[colors]\nforward = \"red\"\n").unwrap();
        assert!(matches!(seen.changed(&path), Some(Reload::Theme(_, Ok(_)))));
        assert_eq!(seen.changed(&path), None);
        assert!(!is_content_event(&EventKind::Access(
            notify::event::AccessKind::Open(notify::event::AccessMode::Any)
        )));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_settings_file_is_settings_and_a_deleted_file_is_reported() {
        let dir = std::env::temp_dir().join(format!("pipescope-settings-{}", std::process::id()));
        let themes = dir.join("themes");
        fs::create_dir_all(&themes).unwrap();
        let config = dir.join("config.toml");
        fs::write(&config, "export_dir = \"/tmp\"\n").unwrap();
        let theme = themes.join("mine.toml");
        fs::write(&theme, "name = \"other\"\n").unwrap();
        let mut seen = Seen::default();
        seen.settings_in(&dir);
        seen.prime_dir(&dir, 0);
        // A valid settings file is settings, not a broken preset.
        fs::write(&config, "export_dir = \"/var\"\n").unwrap();
        assert_eq!(
            seen.changed(&config),
            Some(Reload::Settings(config.clone(), Ok(())))
        );
        // A broken one gives its own reason, where it is.
        fs::write(&config, "export_dir = 5\n").unwrap();
        match seen.changed(&config) {
            Some(Reload::Settings(_, Err(e))) => {
                assert!(e.contains("config.toml:1:14"), "{e}");
                assert!(!e.contains("not a preset"), "{e}");
            }
            other => panic!("unexpected {other:?}"),
        }
        // Gone: reported once, with the name of the theme the file held.
        fs::remove_file(&theme).unwrap();
        assert_eq!(
            seen.changed(&theme),
            Some(Reload::Removed(theme.clone(), Some("other".into())))
        );
        assert_eq!(seen.changed(&theme), None);
        fs::remove_file(&config).unwrap();
        assert_eq!(
            seen.changed(&config),
            Some(Reload::Removed(config.clone(), None))
        );
        // A file never read is not reported as removed.
        assert_eq!(seen.changed(&themes.join("never.toml")), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn classifies_by_folder_and_extension() {
        assert_eq!(
            classify(Path::new("/c/pipescope/themes/x.toml")),
            Some(true)
        );
        assert_eq!(
            classify(Path::new("/c/pipescope/presets/x.toml")),
            Some(false)
        );
        assert_eq!(
            classify(Path::new("/c/pipescope/presets/.x.toml.tmp")),
            None
        );
        assert_eq!(classify(Path::new("/c/pipescope/presets/x.toml~")), None);
    }

    #[test]
    fn broken_theme_reports_its_location() {
        let dir = std::env::temp_dir().join(format!("pipescope-watch-{}", std::process::id()));
        let themes = dir.join("themes");
        fs::create_dir_all(&themes).unwrap();
        let path = themes.join("bad.toml");
        fs::write(&path, "[colors]\nforward = \"nope\"\n").unwrap();
        let is_theme = classify(&path).unwrap();
        match Some(parse_text(&path, is_theme, read_text_file(&path))) {
            Some(Reload::Theme(p, Err(e))) => {
                assert_eq!(p, path);
                assert!(e.contains("bad.toml:2:11"), "{e}");
            }
            other => panic!("unexpected {other:?}"),
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Waits for a reload of `name` (other reloads are skipped).
    fn wait_for(rx: &mpsc::Receiver<Reload>, name: &str) -> bool {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(Reload::Theme(p, _)) if p.ends_with(name) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    #[test]
    fn a_deleted_and_recreated_config_folder_is_watched_again() {
        let root = std::env::temp_dir().join(format!("pipescope-rearm-{}", std::process::id()));
        let dir = root.join("pipescope");
        let themes = dir.join("themes");
        fs::create_dir_all(&themes).unwrap();
        let (tx, rx) = mpsc::channel();
        let _handle = start(std::slice::from_ref(&dir), move |r| {
            let _ = tx.send(r);
        })
        .unwrap();
        let write = |name: &str, color: &str| {
            let text = format!("name = \"{name}\"\n[colors]\nforward = \"{color}\"\n");
            fs::write(themes.join(name), text).unwrap();
        };
        write("a.toml", "red");
        assert!(wait_for(&rx, "a.toml"), "a change before any deletion");
        // Deleted, noticed, then created again.
        fs::remove_dir_all(&dir).unwrap();
        thread::sleep(DEBOUNCE * 3);
        fs::create_dir_all(&themes).unwrap();
        write("b.toml", "blue");
        assert!(wait_for(&rx, "b.toml"), "a file in the re-created folder");
        write("b.toml", "green");
        assert!(wait_for(&rx, "b.toml"), "an edit in the re-created folder");
        // Deleted and created again within one debounce window.
        fs::remove_dir_all(&dir).unwrap();
        fs::create_dir_all(&themes).unwrap();
        write("c.toml", "red");
        assert!(wait_for(&rx, "c.toml"), "a file after a quick re-creation");
        thread::sleep(DEBOUNCE * 3);
        write("c.toml", "blue");
        assert!(wait_for(&rx, "c.toml"), "an edit after a quick re-creation");
        let _ = fs::remove_dir_all(&root);
    }
}
