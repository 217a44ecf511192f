//! Themes: named colours and glyphs, parsed from TOML (`themes/*.toml`, embedded; user files
//! in `$XDG_CONFIG_HOME/pipescope/themes/` layered on top). A user file may be partial: the
//! keys it leaves out come from its `base` theme (default `dark`).

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use toml::Spanned;

use super::location::{located, span_location};

/// The built-in themes, in cycling order: (name, TOML text).
pub const BUILTIN: [(&str, &str); 4] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("mono", include_str!("../../themes/mono.toml")),
];

/// The colour names a theme may use (besides `#rrggbb` and 0-255), for "did you mean".
const COLOR_NAMES: [&str; 17] = [
    "reset",
    "black",
    "red",
    "green",
    "yellow",
    "blue",
    "magenta",
    "cyan",
    "gray",
    "darkgray",
    "lightred",
    "lightgreen",
    "lightyellow",
    "lightblue",
    "lightmagenta",
    "lightcyan",
    "white",
];

macro_rules! theme_keys {
    ($name:ident, $raw:ident, $ty:ty, $rawty:ty, [$($field:ident),* $(,)?]) => {
        /// One value per theme key.
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(#[doc = concat!("`", stringify!($field), "`")] pub $field: $ty,)*
        }
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $raw {
            $($field: Option<$rawty>,)*
        }
        impl $raw {
            fn entries(self) -> Vec<(&'static str, Option<$rawty>)> {
                vec![$((stringify!($field), self.$field),)*]
            }
        }
        impl $name {
            fn set(&mut self, key: &str, value: $ty) {
                match key {
                    $(stringify!($field) => self.$field = value,)*
                    _ => {}
                }
            }
        }
    };
}

theme_keys!(
    Colors,
    RawColors,
    Color,
    Spanned<String>,
    [
        forward,
        backward,
        weight_grad,
        recompute,
        offload,
        send,
        idle,
        r#static,
        activation,
        buffer,
        free,
        budget,
        text,
        muted,
        accent,
        warning,
        error,
        label
    ]
);

theme_keys!(
    Glyphs,
    RawGlyphs,
    char,
    Spanned<String>,
    [
        forward,
        backward,
        weight_grad,
        recompute,
        offload,
        send,
        idle,
        r#static,
        activation,
        buffer,
        host,
        free,
        budget,
        over
    ]
);

/// A theme file; an unknown key anywhere is refused (a misspelt colour would otherwise be
/// ignored without a word).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<String>,
    /// Free text about the theme (not shown).
    #[allow(dead_code)]
    description: Option<String>,
    base: Option<String>,
    #[serde(default)]
    colors: RawColors,
    #[serde(default)]
    glyphs: RawGlyphs,
}

/// A resolved theme.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Theme name (file stem for user files).
    pub name: String,
    /// Colours by role.
    pub colors: Colors,
    /// Glyphs by role.
    pub glyphs: Glyphs,
    /// True when every colour is `reset`: meaning is carried by glyphs and attributes only.
    pub mono: bool,
}

impl Theme {
    /// A built-in theme by name (`dark` when unknown).
    pub fn builtin(name: &str) -> Theme {
        let text = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(BUILTIN[0].1, |(_, t)| t);
        Theme::parse(text, Path::new(name)).unwrap_or_else(|_| Theme::fallback())
    }

    /// The theme to start with: `mono` when `NO_COLOR` is set and non-empty, else `dark`.
    pub fn initial(no_color: Option<&str>) -> Theme {
        match no_color {
            Some(v) if !v.is_empty() => Theme::builtin("mono"),
            _ => Theme::builtin("dark"),
        }
    }

    /// Parses a theme file; errors read `path:line:column: message`.
    pub fn parse(text: &str, path: &Path) -> Result<Theme, String> {
        let raw: RawTheme = toml::from_str(text).map_err(|e| located(path, text, &e))?;
        let base_name = raw.base.clone().unwrap_or_else(|| "dark".into());
        let mut theme = if raw.base.is_none() && raw.name.as_deref() == Some("dark") {
            Theme::fallback()
        } else {
            Theme::builtin(&base_name)
        };
        theme.name = raw.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map_or("custom".into(), |s| s.to_string_lossy().into_owned())
        });
        for (field, value) in raw.colors.entries() {
            let key = field.trim_start_matches("r#");
            if let Some(v) = value {
                let color = v.get_ref().parse::<Color>().map_err(|_| {
                    let (l, c) = span_location(text, v.span().start);
                    let hint = crate::scenario::presets::nearest(v.get_ref(), &COLOR_NAMES)
                        .map(|n| format!(" (did you mean \"{n}\"?)"))
                        .unwrap_or_default();
                    format!(
                        "{}:{l}:{c}: colour {key} = \"{}\" is not a colour name, #rrggbb, 0-255 or reset{hint}",
                        path.display(),
                        v.get_ref()
                    )
                })?;
                theme.colors.set(field, color);
            }
        }
        for (field, value) in raw.glyphs.entries() {
            let key = field.trim_start_matches("r#");
            if let Some(v) = value {
                let mut chars = v.get_ref().chars();
                let glyph = match (chars.next(), chars.next()) {
                    (Some(ch), None) if !ch.is_control() => ch,
                    _ => {
                        let (l, c) = span_location(text, v.span().start);
                        return Err(format!(
                            "{}:{l}:{c}: glyph {key} = {:?} must be exactly one character, printable (not a control character)",
                            path.display(),
                            v.get_ref()
                        ));
                    }
                };
                theme.glyphs.set(field, glyph);
            }
        }
        theme.mono = theme.all_reset();
        Ok(theme)
    }

    fn all_reset(&self) -> bool {
        let c = &self.colors;
        [
            c.forward,
            c.backward,
            c.weight_grad,
            c.recompute,
            c.offload,
            c.idle,
            c.r#static,
            c.activation,
            c.buffer,
            c.budget,
            c.accent,
            c.error,
        ]
        .iter()
        .all(|c| *c == Color::Reset)
    }

    /// A theme that needs no parsing (the base of `dark`).
    fn fallback() -> Theme {
        let c = Color::Reset;
        Theme {
            name: "dark".into(),
            colors: Colors {
                forward: Color::Blue,
                backward: Color::Green,
                weight_grad: Color::Cyan,
                recompute: Color::Yellow,
                offload: Color::Magenta,
                send: Color::Gray,
                idle: Color::DarkGray,
                r#static: Color::Magenta,
                activation: Color::Blue,
                buffer: Color::Yellow,
                free: Color::DarkGray,
                budget: Color::Red,
                text: c,
                muted: Color::Gray,
                accent: Color::Cyan,
                warning: Color::Yellow,
                error: Color::Red,
                label: Color::Black,
            },
            glyphs: Glyphs {
                forward: '█',
                backward: '▓',
                weight_grad: '▒',
                recompute: '░',
                offload: '▚',
                send: '─',
                idle: '·',
                r#static: '█',
                activation: '▓',
                buffer: '▒',
                host: '▚',
                free: '╌',
                budget: '│',
                over: '!',
            },
            mono: false,
        }
    }

    /// Style of plain text.
    pub fn text(&self) -> Style {
        Style::new().fg(self.colors.text)
    }

    /// Style of secondary text.
    pub fn muted(&self) -> Style {
        if self.mono {
            Style::new().add_modifier(Modifier::DIM)
        } else {
            Style::new().fg(self.colors.muted)
        }
    }

    /// Style of titles and highlighted values.
    pub fn accent(&self) -> Style {
        Style::new()
            .fg(self.colors.accent)
            .add_modifier(Modifier::BOLD)
    }

    /// Style of the selected row or field.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// Style of error text.
    pub fn error(&self) -> Style {
        Style::new()
            .fg(self.colors.error)
            .add_modifier(Modifier::BOLD)
    }

    /// Style of warnings.
    pub fn warning(&self) -> Style {
        Style::new().fg(self.colors.warning)
    }

    /// Style for a glyph drawn in colour `color`.
    pub fn glyph(&self, color: Color) -> Style {
        Style::new().fg(color)
    }

    /// Style of a label drawn on top of a bar of colour `color`.
    pub fn label_on(&self, color: Color) -> Style {
        if self.mono {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new().fg(self.colors.label).bg(color)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for (name, text) in BUILTIN {
            let t = Theme::parse(text, Path::new(name)).unwrap();
            assert_eq!(t.name, name);
            assert_eq!(t.mono, name == "mono");
        }
    }

    #[test]
    fn no_color_picks_mono() {
        assert!(Theme::initial(Some("1")).mono);
        assert!(!Theme::initial(Some("")).mono);
        assert!(!Theme::initial(None).mono);
    }

    #[test]
    fn partial_user_theme_overrides_its_base() {
        let t = Theme::parse(
            "base = \"light\"\n[colors]\nforward = \"red\"\n",
            Path::new("mine.toml"),
        )
        .unwrap();
        assert_eq!(t.name, "mine");
        assert_eq!(t.colors.forward, Color::Red);
        assert_eq!(t.colors.backward, Theme::builtin("light").colors.backward);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = Theme::parse("[colors]\nforward = \"nope\"\n", Path::new("t.toml")).unwrap_err();
        assert!(e.starts_with("t.toml:2:11:"), "{e}");
        let e = Theme::parse("[colors\n", Path::new("t.toml")).unwrap_err();
        assert!(e.starts_with("t.toml:1:"), "{e}");
        let e = Theme::parse("[glyphs]\nforward = \"ab\"\n", Path::new("t.toml")).unwrap_err();
        assert!(e.contains("exactly one character"), "{e}");
    }

    #[test]
    fn unknown_keys_are_refused_with_the_nearest_known_one() {
        let e = Theme::parse("[colors]\nforwrad = \"red\"\n", Path::new("t.toml")).unwrap_err();
        assert!(
            e.starts_with("t.toml:2:1:") && e.contains("`forward`"),
            "{e}"
        );
        let e = Theme::parse("[colours]\nforward = \"red\"\n", Path::new("t.toml")).unwrap_err();
        assert!(e.starts_with("t.toml:1:") && e.contains("`colors`"), "{e}");
        let e = Theme::parse("[colors]\nforward = \"blu\"\n", Path::new("t.toml")).unwrap_err();
        assert!(e.contains("did you mean \"blue\""), "{e}");
        let e = Theme::parse("[glyphs]\nidel = \".\"\n", Path::new("t.toml")).unwrap_err();
        assert!(e.contains("`idle`"), "{e}");
        assert!(Theme::parse("name = \"x\"\ndescription = \"d\"\n", Path::new("t.toml")).is_ok());
    }
}
