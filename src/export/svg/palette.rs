//! The colours of an SVG figure: one per op kind (forward, input-gradient backward B,
//! weight-gradient backward W, fused backward BW, recomputation, host copies), chosen so
//! that every two of the main kinds stay apart for the common colour-vision deficiencies
//! (Okabe and Ito's palette on the light and dark figures), a colour per device for the
//! memory curves, and the label colour that reads on each kind.

/// Colours of a figure, as CSS colours (`#rrggbb`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// Page background.
    pub background: String,
    /// Labels, axis and legend text.
    pub text: String,
    /// Grid lines and muted text.
    pub muted: String,
    /// Forward ops.
    pub forward: String,
    /// Input-gradient backward ops (B).
    pub backward: String,
    /// Weight-gradient backward ops (W).
    pub weight_grad: String,
    /// Fused backward ops (BW): a darker shade of B (a schedule that fuses has no B or W).
    pub fused: String,
    /// Recomputation.
    pub recompute: String,
    /// Host copies (offload and reload).
    pub offload: String,
    /// The memory budget line.
    pub budget: String,
    /// Whether the figure has no colours (greys; the labels and dashes carry the meaning).
    pub mono: bool,
}

impl Default for Palette {
    fn default() -> Self {
        Self::light()
    }
}

/// The 16 terminal colour names a theme may use, as the usual xterm colours.
const NAMED: [(&str, &str); 17] = [
    ("black", "#000000"),
    ("red", "#cd0000"),
    ("green", "#00cd00"),
    ("yellow", "#cdcd00"),
    ("blue", "#0000ee"),
    ("magenta", "#cd00cd"),
    ("cyan", "#00cdcd"),
    ("gray", "#e5e5e5"),
    ("darkgray", "#7f7f7f"),
    ("lightred", "#ff0000"),
    ("lightgreen", "#00ff00"),
    ("lightyellow", "#ffff00"),
    ("lightblue", "#5c5cff"),
    ("lightmagenta", "#ff00ff"),
    ("lightcyan", "#00ffff"),
    ("white", "#ffffff"),
    ("grey", "#e5e5e5"),
];

/// `#rrggbb` of a theme colour: `#rrggbb` itself, one of the 16 terminal names (read as the
/// UI reads them: case, spaces, `-` and `_` ignored, `bright` for `light`, `grey` for `gray`)
/// or a 256-colour index `0`-`255` (xterm's colours); `None` for anything else (`reset`
/// included: the caller maps it to the theme's base).
pub fn css_color(value: &str) -> Option<String> {
    if value.len() == 7
        && value.starts_with('#')
        && value[1..].chars().all(|c| c.is_ascii_hexdigit())
    {
        return Some(value.to_ascii_lowercase());
    }
    if let Ok(index) = value.trim().parse::<u8>() {
        return Some(xterm_256(index));
    }
    let name = value
        .to_ascii_lowercase()
        .replace(['_', '-', ' '], "")
        .replace("bright", "light")
        .replace("silver", "gray")
        .replace("lightblack", "darkgray")
        .replace("lightwhite", "white")
        .replace("lightgray", "white")
        .replace("lightgrey", "white");
    NAMED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, hex)| (*hex).to_string())
}

/// xterm's RGB value of 256-colour index `i`: the 16 terminal colours, the 6x6x6 colour
/// cube (levels 0, 95, 135, 175, 215, 255), then 24 greys from 8 to 238.
pub fn xterm_256(i: u8) -> String {
    match i {
        0..=15 => NAMED[usize::from(i)].1.to_string(),
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let n = i - 16;
            hex([level(n / 36), level((n / 6) % 6), level(n % 6)])
        }
        _ => {
            let g = 8 + 10 * (i - 232);
            hex([g, g, g])
        }
    }
}

/// The three channels of `#rrggbb` (black for anything else).
pub fn rgb(color: &str) -> [u8; 3] {
    let v = color
        .strip_prefix('#')
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// `color` with its channels scaled by `f` (below 1: darker).
fn shade(color: &str, f: f64) -> String {
    let c = rgb(color).map(|x| (f64::from(x) * f).round().clamp(0.0, 255.0) as u8);
    hex(c)
}

/// Relative luminance (sRGB), 0 (black) to 1 (white).
pub fn luminance(color: &str) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.040_45 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = rgb(color);
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// Black or white, whichever reads better on `color`.
pub fn label_on(color: &str) -> &'static str {
    if luminance(color) > 0.3 {
        "#000000"
    } else {
        "#ffffff"
    }
}

/// Okabe and Ito's colours that read on a light and on a dark page, for the devices'
/// memory curves (then the text colour, then dashed repeats).
const DEVICE_COLORS: [&str; 6] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
];

impl Palette {
    /// Light background (the default figure).
    pub fn light() -> Self {
        Self {
            background: "#ffffff".into(),
            text: "#1f2328".into(),
            muted: "#8c959f".into(),
            forward: "#0072b2".into(),
            backward: "#009e73".into(),
            weight_grad: "#e69f00".into(),
            fused: shade("#009e73", 0.6),
            recompute: "#d55e00".into(),
            offload: "#cc79a7".into(),
            budget: "#cf222e".into(),
            mono: false,
        }
    }

    /// A built-in theme's palette by name (`light`, `dark`, `high-contrast`, `mono`).
    pub fn builtin(name: &str) -> Option<Self> {
        let text = match name {
            "light" => return Some(Self::light()),
            "dark" => include_str!("../../../themes/dark.toml"),
            "high-contrast" => include_str!("../../../themes/high-contrast.toml"),
            "mono" => include_str!("../../../themes/mono.toml"),
            _ => return None,
        };
        Self::from_theme_toml(text, name).ok()
    }

    /// A palette from a theme file's text (`[colors]` table, docs/cli.md); `source` names
    /// the file in errors. The page (background and text) and every colour the file leaves
    /// out or sets to `reset` come from its `base` theme (without one: a dark page for themes
    /// named `dark` or `high-contrast`, the light palette otherwise); colours may be
    /// `#rrggbb`, one of the 16 terminal names or a 256-colour index (xterm's RGB); a theme
    /// without any colour and without a base gets greys told apart by lightness. Anything
    /// else is refused, naming the colour and the file.
    pub fn from_theme_toml(text: &str, source: &str) -> Result<Self, String> {
        let value: toml::Table = text.parse().map_err(|e| format!("{source}: {e}"))?;
        let name = value.get("name").and_then(|n| n.as_str()).unwrap_or("");
        let base = value.get("base").and_then(|b| b.as_str());
        let mut out = match base {
            Some(b) => Self::builtin(b).ok_or_else(|| {
                format!(
                    "{source}: base = \"{b}\" is not a built-in theme (allowed: light, dark, high-contrast, mono)"
                )
            })?,
            None => Self::light(),
        };
        if base.is_none() && matches!(name, "dark" | "high-contrast") {
            out.background = "#0d1117".into();
            out.text = "#e6edf3".into();
        }
        let mut colors = std::collections::BTreeMap::new();
        for (key, v) in value
            .get("colors")
            .and_then(|c| c.as_table())
            .into_iter()
            .flatten()
        {
            let Some(raw) = v.as_str() else {
                return Err(format!(
                    "{source}: colour {key} = {v} is not a string (a colour name, #rrggbb, 0-255 or reset)"
                ));
            };
            if raw.trim().eq_ignore_ascii_case("reset") {
                continue;
            }
            let css = css_color(raw).ok_or_else(|| {
                format!(
                    "{source}: colour {key} = \"{raw}\" has no SVG colour: allowed are a colour name, #rrggbb, 0-255 (xterm's colours) or reset (the base theme's colour)"
                )
            })?;
            colors.insert(key.as_str(), css);
        }
        let mut any = false;
        let mut set = |slot: &mut String, key: &str| {
            if let Some(c) = colors.get(key) {
                slot.clone_from(c);
                any = true;
            }
        };
        set(&mut out.forward, "forward");
        set(&mut out.backward, "backward");
        set(&mut out.weight_grad, "weight_grad");
        set(&mut out.recompute, "recompute");
        set(&mut out.offload, "offload");
        set(&mut out.muted, "muted");
        set(&mut out.budget, "budget");
        if let Some(c) = colors.get("text") {
            out.text.clone_from(c);
        }
        if any {
            out.mono = false;
            out.fused = shade(&out.backward, 0.6);
        } else if base.is_none() {
            // Mono: greys far apart in lightness; the labels and dashes carry the kind.
            out.forward = "#303030".into();
            out.backward = "#6a6a6a".into();
            out.fused = "#888888".into();
            out.weight_grad = "#a4a4a4".into();
            out.recompute = "#d0d0d0".into();
            out.offload = "#000000".into();
            out.budget = "#000000".into();
            out.mono = true;
        }
        Ok(out)
    }

    /// The colour and dash pattern (`None`: solid) of device `d`'s memory curve: six
    /// colours then the text colour, solid, then dashed, then dotted, then again.
    pub fn device(&self, d: usize) -> (String, Option<&'static str>) {
        const DASHES: [Option<&str>; 3] = [None, Some("6 3"), Some("1.5 2")];
        if self.mono {
            let greys = [self.text.as_str(), "#707070"];
            return (greys[d % 2].to_string(), DASHES[(d / 2) % DASHES.len()]);
        }
        let n = DEVICE_COLORS.len() + 1;
        let color = DEVICE_COLORS
            .get(d % n)
            .map_or_else(|| self.text.clone(), |c| (*c).to_string());
        (color, DASHES[(d / n) % DASHES.len()])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Machado, Oliveira and Fernandes (2009), severity 1: protanopia, deuteranopia,
    /// tritanopia, applied to linear RGB.
    const VISIONS: [(&str, [[f64; 3]; 3]); 4] = [
        (
            "normal",
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        ),
        (
            "protanopia",
            [
                [0.152_286, 1.052_583, -0.204_868],
                [0.114_503, 0.786_281, 0.099_216],
                [-0.003_882, -0.048_116, 1.051_998],
            ],
        ),
        (
            "deuteranopia",
            [
                [0.367_322, 0.860_646, -0.227_968],
                [0.280_085, 0.672_501, 0.047_413],
                [-0.011_820, 0.042_940, 0.968_881],
            ],
        ),
        (
            "tritanopia",
            [
                [1.255_528, -0.076_749, -0.178_779],
                [-0.078_411, 0.930_809, 0.147_602],
                [0.004_733, 0.691_367, 0.303_900],
            ],
        ),
    ];

    /// CIELAB of `color` as seen with `vision`.
    fn lab(color: &str, vision: &[[f64; 3]; 3]) -> [f64; 3] {
        let lin = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.040_45 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let c = rgb(color).map(lin);
        let s: Vec<f64> = (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| vision[i][j] * c[j])
                    .sum::<f64>()
                    .clamp(0.0, 1.0)
            })
            .collect();
        let x = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2];
        let y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2];
        let z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2];
        let f = |t: f64| {
            if t > 0.008_856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        let (fx, fy, fz) = (f(x / 0.950_47), f(y), f(z / 1.088_83));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    /// Colour difference (CIE76) of `a` and `b` as seen with `vision`.
    fn delta_e(a: &str, b: &str, vision: &[[f64; 3]; 3]) -> f64 {
        let (p, q) = (lab(a, vision), lab(b, vision));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    fn palettes() -> Vec<(&'static str, Palette)> {
        let theme = |t: &str| Palette::from_theme_toml(t, "theme.toml").unwrap();
        vec![
            ("default", Palette::light()),
            ("light", theme(include_str!("../../../themes/light.toml"))),
            ("dark", theme(include_str!("../../../themes/dark.toml"))),
            (
                "high-contrast",
                theme(include_str!("../../../themes/high-contrast.toml")),
            ),
            ("mono", theme(include_str!("../../../themes/mono.toml"))),
        ]
    }

    #[test]
    fn backward_kinds_stay_apart_for_colour_blind_eyes_in_every_theme() {
        for (name, p) in palettes() {
            for (vision, m) in &VISIONS {
                let pairs = [
                    ("B", &p.backward, "W", &p.weight_grad, 20.0),
                    ("F", &p.forward, "B", &p.backward, 15.0),
                    ("F", &p.forward, "W", &p.weight_grad, 15.0),
                    ("B", &p.backward, "BW", &p.fused, 8.0),
                    ("W", &p.weight_grad, "BW", &p.fused, 8.0),
                    ("F", &p.forward, "BW", &p.fused, 8.0),
                    ("R", &p.recompute, "B", &p.backward, 8.0),
                    ("R", &p.recompute, "W", &p.weight_grad, 8.0),
                    ("R", &p.recompute, "F", &p.forward, 8.0),
                ];
                for (ka, a, kb, b, min) in pairs {
                    let d = delta_e(a, b, m);
                    assert!(
                        d >= min,
                        "{name}, {vision}: {ka} {a} and {kb} {b} differ by only {d:.1}"
                    );
                }
            }
        }
    }

    #[test]
    fn indexed_colours_reset_and_base() {
        assert_eq!(css_color("208").as_deref(), Some("#ff8700"));
        assert_eq!(css_color("9").as_deref(), Some("#ff0000"));
        assert_eq!(css_color("16").as_deref(), Some("#000000"));
        assert_eq!(css_color("231").as_deref(), Some("#ffffff"));
        assert_eq!(css_color("244").as_deref(), Some("#808080"));
        assert_eq!(css_color("bright blue").as_deref(), Some("#5c5cff"));
        let p = Palette::from_theme_toml(
            "base = \"dark\"\n[colors]\nforward = \"208\"\nbackward = \"reset\"\n",
            "my.toml",
        )
        .unwrap();
        let dark = Palette::builtin("dark").unwrap();
        assert_eq!(p.forward, "#ff8700");
        assert_eq!(p.backward, dark.backward);
        assert_eq!(
            (p.background.as_str(), p.text.as_str()),
            ("#0d1117", "#e6edf3")
        );
        let light = Palette::from_theme_toml("base = \"light\"\n", "l.toml").unwrap();
        assert_eq!(light, Palette::light());
        let err =
            Palette::from_theme_toml("[colors]\nforward = \"blurple\"\n", "my.toml").unwrap_err();
        assert!(
            err.contains("my.toml") && err.contains("forward = \"blurple\""),
            "{err}"
        );
        let err = Palette::from_theme_toml("base = \"sepia\"\n", "my.toml").unwrap_err();
        assert!(err.contains("my.toml") && err.contains("sepia"), "{err}");
    }

    #[test]
    fn named_colours_and_labels() {
        assert_eq!(css_color("lightBlue").as_deref(), Some("#5c5cff"));
        assert_eq!(css_color("#A0b0C0").as_deref(), Some("#a0b0c0"));
        assert_eq!(css_color("reset"), None);
        assert_eq!(label_on("#ffff00"), "#000000");
        assert_eq!(label_on("#0072b2"), "#ffffff");
        let p = Palette::light();
        let colors: Vec<String> = (0..7).map(|d| p.device(d).0).collect();
        let mut unique = colors.clone();
        unique.dedup();
        assert_eq!(unique.len(), 7, "{colors:?}");
        assert_eq!(p.device(7), (p.device(0).0, Some("6 3")));
    }
}
