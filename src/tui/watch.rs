//! Hot reload: watches the user's config folder (`presets/`, `themes/`) and the folder of a
//! `--preset FILE` with notify, debounces bursts of events (editors save by writing a temp
//! file and renaming it), parses changed files on the watcher thread and hands the results
//! to the app as [`Reload`]s. A broken file yields an error with `file:line:column`; the app
//! keeps the last good version.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use super::action::Reload;
use super::preset_io;
use super::theme::Theme;

/// Quiet time after the last event before files are parsed.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// Keeps the watcher alive; dropping it stops watching.
#[must_use = "dropping the handle stops the watcher"]
pub struct WatchHandle {
    _watcher: RecommendedWatcher,
}

/// What a changed file is.
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

/// Parses one changed file.
pub fn parse(path: &Path) -> Option<Reload> {
    let is_theme = classify(path)?;
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            let msg = format!("{}:1:1: {e}", path.display());
            return Some(if is_theme {
                Reload::Theme(path.to_path_buf(), Err(msg))
            } else {
                Reload::Preset(path.to_path_buf(), Err(msg))
            });
        }
    };
    Some(if is_theme {
        Reload::Theme(path.to_path_buf(), Theme::parse(&text, path).map(Box::new))
    } else {
        Reload::Preset(
            path.to_path_buf(),
            preset_io::parse_preset(path, &text).map(Box::new),
        )
    })
}

/// Watches `dirs` (those that exist; recursively) and calls `deliver` with each parsed change.
pub fn start(
    dirs: &[PathBuf],
    deliver: impl Fn(Reload) + Send + 'static,
) -> Result<WatchHandle, String> {
    let (tx, rx) = mpsc::channel::<PathBuf>();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res {
            for p in event.paths {
                let _ = tx.send(p);
            }
        }
    })
    .map_err(|e| format!("file watcher: {e}"))?;
    for dir in dirs {
        if dir.is_dir() {
            watcher
                .watch(dir, RecursiveMode::Recursive)
                .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        }
    }
    thread::Builder::new()
        .name("pipescope-watch".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut changed = BTreeSet::from([first]);
                while let Ok(p) = rx.recv_timeout(DEBOUNCE) {
                    changed.insert(p);
                }
                for path in changed {
                    if let Some(reload) = parse(&path) {
                        deliver(reload);
                    }
                }
            }
        })
        .map_err(|e| format!("watcher thread: {e}"))?;
    Ok(WatchHandle { _watcher: watcher })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        match parse(&path) {
            Some(Reload::Theme(p, Err(e))) => {
                assert_eq!(p, path);
                assert!(e.contains("bad.toml:2:11"), "{e}");
            }
            other => panic!("unexpected {other:?}"),
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
