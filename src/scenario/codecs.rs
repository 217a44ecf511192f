//! A GPU's set of activation codecs (Adacc: several codecs, one chosen per unit kind by the
//! knapsack). A GPU preset lists them as `[[gpu.codecs]]` tables; without the list the GPU
//! has the one codec of its `[gpu.codec]` table (or the default int8 codec). Each codec is a
//! block-scaled quantizer ([`CodecSpec`]) that may keep a fraction of the values, the
//! outliers, at 16 bits.

use serde::{Deserialize, Serialize};

use super::{CodecSpec, InvalidField};

/// One codec of a GPU's set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Codec {
    /// Its name in outputs (`int8`, `int4-outliers`): letters, digits, `-`, `_`, `.`.
    pub name: String,
    /// Bits per value, values per fp32 scale, throughput.
    pub spec: CodecSpec,
    /// Share of the values kept at 16 bits (whole outlier channels, as LLM.int8()'s
    /// mixed-precision decomposition keeps them), from 0 to 0.5; the rest are quantized.
    pub outlier_fraction: f64,
}

/// Keys a `[[gpu.codecs]]` table takes.
pub const CODECS_KEYS: [&str; 5] = ["name", "bits", "group", "gbps", "outlier_fraction"];

/// The largest outlier share: beyond half the values kept at 16 bits a codec saves less
/// than a quarter (LLM activations have outliers in well under 1 % of their channels).
pub const MAX_OUTLIER_FRACTION: f64 = 0.5;

impl Codec {
    /// The single codec a GPU (or a profile) gives with a `[gpu.codec]` (`[codec]`) table.
    pub fn single(spec: CodecSpec) -> Self {
        Self {
            name: if spec == CodecSpec::default() {
                "int8".into()
            } else {
                format!("int{}", spec.bits)
            },
            spec,
            outlier_fraction: 0.0,
        }
    }

    /// Bytes of `elems` 2-byte values once compressed: the outlier share at 2 bytes, the
    /// rest quantized with their scales.
    pub fn compressed_bytes(&self, elems: f64) -> f64 {
        let outliers = elems * self.outlier_fraction;
        2.0 * outliers + self.spec.compressed_bytes(elems - outliers)
    }

    /// Whether the codec may hold an outlier-sensitive tensor (a norm output, the softmax's
    /// inputs): at least 8 bits per value, or outliers kept at 16 bits.
    pub fn keeps_outliers(&self) -> bool {
        self.spec.bits >= 8 || self.outlier_fraction > 0.0
    }

    /// Checks the figures; `table` names the codec's table in errors (`gpu.codecs[1]`).
    pub fn validate(&self, table: &str) -> Result<(), InvalidField> {
        let ok_name = !self.name.is_empty()
            && self.name.len() <= 32
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok_name {
            return Err(InvalidField::new(
                format!("{table}.name"),
                &self.name,
                "1 to 32 letters, digits, '-', '_' or '.'",
            ));
        }
        self.spec.validate(table)?;
        if !(0.0..=MAX_OUTLIER_FRACTION).contains(&self.outlier_fraction) {
            return Err(InvalidField::new(
                format!("{table}.outlier_fraction"),
                self.outlier_fraction,
                format!("a share of the values from 0 to {MAX_OUTLIER_FRACTION}"),
            ));
        }
        Ok(())
    }

    /// Reads one `[[gpu.codecs]]` table (keys `CODECS_KEYS`; `name` required, the others
    /// default as in [`CodecSpec::default`] and no outliers), validated.
    pub fn from_table(table: &str, t: &toml::Table) -> Result<Self, InvalidField> {
        let mut spec_table = toml::Table::new();
        let mut name = None;
        let mut outlier_fraction = 0.0;
        for (key, v) in t {
            let field = format!("{table}.{key}");
            match key.as_str() {
                "name" => {
                    let s = v
                        .as_str()
                        .ok_or_else(|| InvalidField::new(&field, v, "a name in quotes"))?;
                    name = Some(s.to_string());
                }
                "outlier_fraction" => {
                    outlier_fraction = v
                        .as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .ok_or_else(|| InvalidField::new(&field, v, "a number from 0 to 0.5"))?;
                }
                "bits" | "group" | "gbps" | "description" => {
                    spec_table.insert(key.clone(), v.clone());
                }
                _ => {
                    return Err(InvalidField::new(
                        &field,
                        key,
                        format!("one of {}", CODECS_KEYS.join(", ")),
                    ));
                }
            }
        }
        let name = name.ok_or_else(|| {
            InvalidField::new(format!("{table}.name"), "(missing)", "a name for the codec")
        })?;
        let c = Self {
            name,
            spec: CodecSpec::from_table(table, &spec_table)?,
            outlier_fraction,
        };
        c.validate(table)?;
        Ok(c)
    }

    /// The codec as a table ([`Codec::from_table`]'s format).
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("name".into(), toml::Value::String(self.name.clone()));
        t.extend(self.spec.to_table());
        t.insert(
            "outlier_fraction".into(),
            toml::Value::Float(self.outlier_fraction),
        );
        t
    }
}

/// The codecs of every built-in GPU preset: `int8` (8 bits, a scale per 128 values),
/// `int4` (4 bits, a scale per 64) and `int4-outliers` (the same with 1 % of the values at
/// 16 bits).
pub fn builtin_codecs() -> Vec<Codec> {
    let four = CodecSpec {
        bits: 4,
        group: 64,
        gbps: None,
    };
    vec![
        Codec {
            name: "int8".into(),
            spec: CodecSpec::default(),
            outlier_fraction: 0.0,
        },
        Codec {
            name: "int4".into(),
            spec: four,
            outlier_fraction: 0.0,
        },
        Codec {
            name: "int4-outliers".into(),
            spec: four,
            outlier_fraction: 0.01,
        },
    ]
}

/// Reads a `[[gpu.codecs]]` list: every entry valid, names distinct, at least one entry.
pub fn codecs_from_tables(tables: &[toml::Table]) -> Result<Vec<Codec>, InvalidField> {
    if tables.is_empty() {
        return Err(InvalidField::new(
            "gpu.codecs",
            "[]",
            "at least one [[gpu.codecs]] table (or leave the list out)",
        ));
    }
    let mut out: Vec<Codec> = Vec::with_capacity(tables.len());
    for (i, t) in tables.iter().enumerate() {
        let table = format!("gpu.codecs[{i}]");
        let c = Codec::from_table(&table, t)?;
        if out.iter().any(|o| o.name == c.name) {
            return Err(InvalidField::new(
                format!("{table}.name"),
                &c.name,
                "a name no other codec of the GPU has",
            ));
        }
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn outliers_stay_at_16_bits() {
        let c = Codec {
            name: "int4-outliers".into(),
            spec: CodecSpec {
                bits: 4,
                group: 64,
                gbps: None,
            },
            outlier_fraction: 0.01,
        };
        // 1 % of 6400 values at 2 bytes, the other 6336 at half a byte plus 99 scales.
        assert_eq!(c.compressed_bytes(6400.0), 128.0 + 3168.0 + 4.0 * 99.0);
        assert!(c.keeps_outliers());
        let plain = Codec {
            outlier_fraction: 0.0,
            ..c.clone()
        };
        assert!(!plain.keeps_outliers());
        assert!(Codec::single(CodecSpec::default()).keeps_outliers());
    }

    #[test]
    fn tables_round_trip_and_bad_entries_name_the_key() {
        let t: toml::Table =
            toml::from_str("name = \"int4-o\"\nbits = 4\ngroup = 64\noutlier_fraction = 0.01")
                .unwrap();
        let c = Codec::from_table("gpu.codecs[0]", &t).unwrap();
        assert_eq!(
            Codec::from_table("gpu.codecs[0]", &c.to_table()).unwrap(),
            c
        );
        for (text, field) in [
            ("bits = 4", "gpu.codecs[0].name"),
            ("name = \"a b\"", "gpu.codecs[0].name"),
            (
                "name = \"x\"\noutlier_fraction = 0.6",
                "gpu.codecs[0].outlier_fraction",
            ),
            (
                "name = \"x\"\noutlier_fraction = -0.1",
                "gpu.codecs[0].outlier_fraction",
            ),
            ("name = \"x\"\nbits = 16", "gpu.codecs[0].bits"),
            ("name = \"x\"\nratio = 2", "gpu.codecs[0].ratio"),
        ] {
            let t: toml::Table = toml::from_str(text).unwrap();
            let e = Codec::from_table("gpu.codecs[0]", &t).unwrap_err();
            assert_eq!(e.field, field, "{text}");
        }
        let two: Vec<toml::Table> = ["name = \"a\"", "name = \"a\"\nbits = 4"]
            .iter()
            .map(|s| toml::from_str(s).unwrap())
            .collect();
        assert_eq!(
            codecs_from_tables(&two).unwrap_err().field,
            "gpu.codecs[1].name"
        );
        assert_eq!(codecs_from_tables(&[]).unwrap_err().field, "gpu.codecs");
    }
}
