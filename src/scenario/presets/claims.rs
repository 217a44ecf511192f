//! Names the user's files claim but cannot give: a broken user preset, or one of two user
//! presets that define the same name. Such a name is not used at all (neither the broken
//! file nor the built-in or other file it would have replaced): naming it (`--preset`,
//! `--model`, `--gpu`, or a user scenario's `model = "..."`) is refused with the file's error,
//! so that a typo in an override never falls back to the built-in without a word. A name
//! nobody asks for costs only the warning every command prints.

use std::path::Path;

use super::{Catalog, PresetError, PresetKind};

/// The kind and name a preset file means to define: its `name` (scenario), `model.name` or
/// `gpu.name` when the text reads as TOML, else the file's stem for every kind.
pub(super) fn claimed(file: &str, text: &str) -> (Vec<PresetKind>, String) {
    let all = vec![PresetKind::Model, PresetKind::Gpu, PresetKind::Scenario];
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return (all, stem);
    };
    let name_in = |t: &toml::Table| t.get("name").and_then(|n| n.as_str()).map(str::to_string);
    if let Some(name) = name_in(&table) {
        return (vec![PresetKind::Scenario], name);
    }
    for (key, kind) in [("model", PresetKind::Model), ("gpu", PresetKind::Gpu)] {
        if let Some(name) = table.get(key).and_then(|t| t.as_table()).and_then(name_in) {
            return (vec![kind], name);
        }
    }
    (all, stem)
}

impl Catalog {
    /// Records that `name` (of each of `kinds`) is not to be used, because of `e`.
    pub(super) fn refuse_name(&mut self, kinds: &[PresetKind], name: &str, e: &PresetError) {
        for &kind in kinds {
            self.unusable
                .entry((kind, name.to_string()))
                .or_insert_with(|| e.clone());
        }
    }

    /// Why the preset `name` of `kind` may not be used, if a user file claims it and cannot
    /// give it: the message names the file and says what to do.
    pub fn unusable(&self, kind: PresetKind, name: &str) -> Option<PresetError> {
        let e = self.unusable.get(&(kind, name.to_string()))?;
        let what = match kind {
            PresetKind::Model => "model",
            PresetKind::Gpu => "GPU",
            PresetKind::Scenario => "scenario",
        };
        let mut e = e.clone();
        e.message = format!(
            "{} (so the {what} preset '{name}' is not used: fix the file, or remove or rename it)",
            e.message
        );
        Some(e)
    }

    /// Adds user files as [`Catalog::add_texts`] does, and records the names they claim but
    /// cannot give (broken files, and names two files define); returns the errors.
    pub(super) fn add_user_texts(&mut self, files: &[(String, String)]) -> Vec<PresetError> {
        let mut errors = Vec::new();
        let mut defined: Vec<((PresetKind, String), String)> = Vec::new();
        for (path, text, result) in self.add_in_order(files) {
            match result {
                Ok(info) => {
                    let key = (info.kind, info.name.clone());
                    match defined.iter().find(|(k, _)| *k == key) {
                        Some((_, first)) => {
                            let e = PresetError::new(
                                path,
                                format!(
                                    "defines '{}' again (also defined in {first}): user presets \
                                     need names of their own",
                                    info.name
                                ),
                            );
                            self.refuse_name(&[info.kind], &info.name, &e);
                            errors.push(e);
                        }
                        None => defined.push((key, path.to_string())),
                    }
                }
                Err(e) => {
                    let (kinds, name) = claimed(path, text);
                    self.refuse_name(&kinds, &name, &e);
                    errors.push(e);
                }
            }
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claimed_name_comes_from_the_text_or_the_file() {
        let model = "[model]\nname = \"gpt3-175b\"\nlayers = \"x\"\n";
        assert_eq!(
            claimed("a.toml", model),
            (vec![PresetKind::Model], "gpt3-175b".to_string())
        );
        assert_eq!(claimed("dir/tiny-4x8.toml", "[gpu\n").1, "tiny-4x8");
        assert_eq!(
            claimed("s.toml", "name = \"mine\"\n").0,
            vec![PresetKind::Scenario]
        );
    }
}
