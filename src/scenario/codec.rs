//! The activation compression codec of the `compress` and `unified` strategies: how small a
//! compressed 2-byte activation gets and what compressing and decompressing it costs. A GPU
//! preset sets it in a `[gpu.codec]` table, a measured profile in a `[codec]` table (the
//! profile's wins); both take the keys below.

use serde::{Deserialize, Serialize};

use super::InvalidField;

/// A block-scaled quantizing codec: each 2-byte value kept as `bits` bits, with one fp32
/// scale per `group` values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CodecSpec {
    /// Bits per compressed value, 1 to 15 (8: int8/fp8; Adacc's outlier-aware codecs keep
    /// about 4).
    pub bits: u32,
    /// Values sharing one fp32 scale; 0 for no scales.
    pub group: u32,
    /// Codec throughput in GB/s of uncompressed bytes, each way (compressing in the forward,
    /// decompressing in the backward); `None`: two memory-bound passes over HBM (read the
    /// original and write the compressed form, and back).
    pub gbps: Option<f64>,
}

impl Default for CodecSpec {
    /// 8-bit values with one fp32 scale per 128 values, costed as HBM passes.
    fn default() -> Self {
        Self {
            bits: 8,
            group: 128,
            gbps: None,
        }
    }
}

/// Keys a codec table takes.
pub const CODEC_KEYS: [&str; 3] = ["bits", "group", "gbps"];

impl CodecSpec {
    /// Bytes of `elems` 2-byte values once compressed (values plus scales).
    pub fn compressed_bytes(&self, elems: f64) -> f64 {
        let scales = if self.group > 0 {
            4.0 * (elems / f64::from(self.group)).ceil()
        } else {
            0.0
        };
        elems * f64::from(self.bits) / 8.0 + scales
    }

    /// Checks the figures; `table` is the dotted path of the codec's table in errors
    /// (`gpu.codec` or `profile.codec`).
    pub fn validate(&self, table: &str) -> Result<(), InvalidField> {
        if !(1..=15).contains(&self.bits) {
            return Err(InvalidField::new(
                format!("{table}.bits"),
                self.bits,
                "whole bits per compressed value from 1 to 15 (fewer than a 2-byte value's 16)",
            ));
        }
        let range = super::ranges::CODEC_GBPS;
        if let Some(g) = self.gbps
            && range.check(g).is_err()
        {
            return Err(InvalidField::new(
                format!("{table}.gbps"),
                super::ranges::number_text(g),
                format!(
                    "a codec throughput that is {} (leave it out to cost the codec as HBM passes)",
                    range.allowed()
                ),
            ));
        }
        Ok(())
    }

    /// Reads a codec table (keys `CODEC_KEYS`, each optional: missing ones keep
    /// [`CodecSpec::default`]'s), validated; errors name `table`'s keys.
    pub fn from_table(table: &str, t: &toml::Table) -> Result<Self, InvalidField> {
        let mut c = CodecSpec::default();
        for (key, v) in t {
            let field = format!("{table}.{key}");
            match key.as_str() {
                "description" => {}
                "bits" | "group" => {
                    let n = v
                        .as_integer()
                        .and_then(|i| u32::try_from(i).ok())
                        .ok_or_else(|| {
                            InvalidField::new(&field, v, "a whole number written in digits, >= 0")
                        })?;
                    if key == "bits" {
                        c.bits = n;
                    } else {
                        c.group = n;
                    }
                }
                "gbps" => {
                    let g = v
                        .as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .ok_or_else(|| InvalidField::new(&field, v, "a number of GB/s"))?;
                    c.gbps = Some(g);
                }
                _ => {
                    return Err(InvalidField::new(
                        &field,
                        key,
                        format!("one of {}", CODEC_KEYS.join(", ")),
                    ));
                }
            }
        }
        c.validate(table)?;
        Ok(c)
    }

    /// The codec as a table ([`CodecSpec::from_table`]'s format).
    pub fn to_table(&self) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("bits".into(), toml::Value::Integer(i64::from(self.bits)));
        t.insert("group".into(), toml::Value::Integer(i64::from(self.group)));
        if let Some(g) = self.gbps {
            t.insert("gbps".into(), toml::Value::Float(g));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn default_is_int8_with_a_scale_per_128_values() {
        let c = CodecSpec::default();
        assert_eq!(c.compressed_bytes(1024.0), 1024.0 + 32.0);
        let four = CodecSpec {
            bits: 4,
            group: 64,
            gbps: None,
        };
        assert_eq!(four.compressed_bytes(1024.0), 512.0 + 64.0);
    }

    #[test]
    fn tables_round_trip_and_bad_values_name_the_key() {
        let t: toml::Table = toml::from_str("bits = 4\ngroup = 64\ngbps = 500").unwrap();
        let c = CodecSpec::from_table("gpu.codec", &t).unwrap();
        assert_eq!(c.bits, 4);
        assert_eq!(c.gbps, Some(500.0));
        assert_eq!(
            CodecSpec::from_table("gpu.codec", &c.to_table()).unwrap(),
            c
        );
        for (text, field) in [
            ("bits = 16", "gpu.codec.bits"),
            ("bits = 0", "gpu.codec.bits"),
            ("bits = -1", "gpu.codec.bits"),
            ("gbps = 0", "gpu.codec.gbps"),
            ("ratio = 2", "gpu.codec.ratio"),
        ] {
            let t: toml::Table = toml::from_str(text).unwrap();
            let e = CodecSpec::from_table("gpu.codec", &t).unwrap_err();
            assert_eq!(e.field, field, "{text}");
        }
    }
}
