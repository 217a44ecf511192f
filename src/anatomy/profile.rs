//! Measured profiles: per unit kind forward/backward seconds and saved bytes that replace
//! the cost model's estimates. Format (a TOML file, or a `[profile]` table in a scenario):
//!
//! ```toml
//! source = "A100 80GB, Megatron-core 0.8, 2025-01-10"   # where the figures came from
//! [attention]                 # a whole block kind: embedding, attention, mlp or head
//! forward_s = 0.0031          # forward seconds per micro-batch
//! backward_s = 0.0062         # backward seconds (B + W; split as the cost model splits it)
//! [attention.q]               # one unit of that block kind
//! forward_s = 0.0004          # its recompute cost
//! backward_s = 0.0008
//! size_bytes = 12582912       # optional: saved bytes per micro-batch
//! ```

use super::{Anatomy, Block, BlockKind, MeasuredProfile, UnitMeasurement};
use crate::scenario::presets::nearest;
use crate::scenario::{CodecSpec, InvalidField, ranges};

/// Block kinds a profile may name.
pub const BLOCK_KINDS: [&str; 6] = ["embedding", "attention", "mlp", "moe", "mtp", "head"];

/// Every unit name of any model style or attention implementation.
pub const UNIT_NAMES: [&str; 17] = [
    "tokens",
    "dropout_mask",
    "input",
    "ln_out",
    "norm_out",
    "q",
    "k",
    "v",
    "softmax_out",
    "attn_dropout",
    "context",
    "core_attn",
    "out_dropout_mask",
    "fc1_out",
    "gelu_out",
    "gate_up",
    "swiglu_out",
];

fn seconds(field: &str, v: Option<&toml::Value>) -> Result<f64, InvalidField> {
    let x = match v {
        Some(toml::Value::Float(f)) => *f,
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(other) => return Err(InvalidField::new(field, other, "seconds (a number >= 0)")),
        None => {
            return Err(InvalidField::new(
                field,
                "(missing)",
                "seconds (a number >= 0)",
            ));
        }
    };
    check_seconds(field, x)?;
    Ok(x)
}

/// A measured time in its range ([`ranges::MEASURED_SECONDS`]).
fn check_seconds(field: &str, x: f64) -> Result<(), InvalidField> {
    let range = ranges::MEASURED_SECONDS;
    if range.check(x).is_err() {
        return Err(InvalidField::new(
            field,
            ranges::number_text(x),
            format!("seconds: {}", range.allowed()),
        ));
    }
    Ok(())
}

fn measurement(field: &str, t: &toml::Table, unit: bool) -> Result<UnitMeasurement, InvalidField> {
    let forward_s = seconds(&format!("{field}.forward_s"), t.get("forward_s"))?;
    let backward_s = seconds(&format!("{field}.backward_s"), t.get("backward_s"))?;
    let size_bytes = match t.get("size_bytes") {
        None => None,
        Some(toml::Value::Integer(i)) if unit && *i >= 0 => Some(*i as u64),
        Some(v) => {
            return Err(InvalidField::new(
                format!("{field}.size_bytes"),
                v,
                "a whole number of bytes >= 0, on units only",
            ));
        }
    };
    Ok(UnitMeasurement {
        forward_s,
        backward_s,
        size_bytes,
    })
}

fn unknown(field: &str, key: &str, known: &[&str]) -> InvalidField {
    let hint = nearest(key, known)
        .map(|k| format!("did you mean '{k}'? "))
        .unwrap_or_default();
    InvalidField::new(field, key, format!("{hint}one of {}", known.join(", ")))
}

impl MeasuredProfile {
    /// Reads a profile from its TOML table (see the module documentation).
    pub fn from_table(t: &toml::Table) -> Result<Self, InvalidField> {
        let mut profile = MeasuredProfile::default();
        for (key, value) in t {
            if key == "description" {
                continue;
            }
            if key == "source" {
                profile.source = value.as_str().unwrap_or_default().to_string();
                continue;
            }
            if key == "codec"
                && let Some(t) = value.as_table()
            {
                profile.codec = Some(CodecSpec::from_table("profile.codec", t)?);
                continue;
            }
            let Some(block) = value.as_table() else {
                return Err(unknown("profile", key, &BLOCK_KINDS));
            };
            if !BLOCK_KINDS.contains(&key.as_str()) {
                return Err(unknown("profile", key, &BLOCK_KINDS));
            }
            let field = format!("profile.{key}");
            let has_times = block.contains_key("forward_s") || block.contains_key("backward_s");
            if has_times {
                profile
                    .entries
                    .insert(key.clone(), measurement(&field, block, false)?);
            }
            for (unit, v) in block {
                if matches!(unit.as_str(), "forward_s" | "backward_s") {
                    continue;
                }
                let Some(ut) = v.as_table() else {
                    return Err(unknown(&field, unit, &["forward_s", "backward_s"]));
                };
                if !UNIT_NAMES.contains(&unit.as_str()) {
                    return Err(unknown(&field, unit, &UNIT_NAMES));
                }
                let uf = format!("{field}.{unit}");
                for k in ut.keys() {
                    if !matches!(k.as_str(), "forward_s" | "backward_s" | "size_bytes") {
                        return Err(unknown(&uf, k, &["forward_s", "backward_s", "size_bytes"]));
                    }
                }
                profile
                    .entries
                    .insert(format!("{key}.{unit}"), measurement(&uf, ut, true)?);
            }
        }
        Ok(profile)
    }

    /// Parses a profile file's text; errors name the file (and line:column for syntax).
    pub fn from_toml_str(file: &str, text: &str) -> Result<Self, crate::scenario::PresetError> {
        use crate::scenario::PresetError;
        let table: toml::Table =
            toml::from_str(text).map_err(|e| PresetError::from_toml(file, text, &e))?;
        let profile = Self::from_table(&table).map_err(|e| {
            // An unknown table or key names itself as the value: `profile = atention`,
            // `profile.attention = qq`; the file spells it `atention`, `attention.qq`.
            let under = e.field.strip_prefix("profile").unwrap_or(&e.field);
            let path = format!("{}.{}", under.trim_start_matches('.'), e.value);
            PresetError::invalid(file, &e)
                .locate(text)
                .locate_table(text, path.trim_start_matches('.'))
        })?;
        // A file that measures nothing (empty, or only its `source`) would change nothing:
        // most likely the wrong file, or one whose writing failed.
        if profile.entries.is_empty() && profile.codec.is_none() {
            return Err(PresetError::new(
                file,
                "the profile measures nothing: give a table per block kind (or kind.unit) \
                 with forward_s and backward_s, or a [codec] table",
            ));
        }
        Ok(profile)
    }

    /// The profile as a TOML table (the format [`MeasuredProfile::from_table`] reads).
    pub fn to_table(&self) -> toml::Table {
        let mut root = toml::Table::new();
        root.insert("source".into(), toml::Value::String(self.source.clone()));
        if let Some(c) = &self.codec {
            root.insert("codec".into(), toml::Value::Table(c.to_table()));
        }
        for (key, m) in &self.entries {
            let (block, unit) = match key.split_once('.') {
                Some((b, u)) => (b, Some(u)),
                None => (key.as_str(), None),
            };
            let entry = root
                .entry(block.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(bt) = entry.as_table_mut() else {
                continue;
            };
            let mut t = toml::Table::new();
            t.insert("forward_s".into(), toml::Value::Float(m.forward_s));
            t.insert("backward_s".into(), toml::Value::Float(m.backward_s));
            if let Some(n) = m.size_bytes {
                t.insert(
                    "size_bytes".into(),
                    toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
                );
            }
            match unit {
                Some(u) => {
                    bt.insert(u.to_string(), toml::Value::Table(t));
                }
                None => bt.extend(t),
            }
        }
        root
    }

    /// Checks every figure (finite, non-negative) and key.
    pub fn validate(&self) -> Result<(), InvalidField> {
        if let Some(c) = &self.codec {
            c.validate("profile.codec")?;
        }
        for (key, m) in &self.entries {
            let (block, unit) = match key.split_once('.') {
                Some((b, u)) => (b, Some(u)),
                None => (key.as_str(), None),
            };
            if !BLOCK_KINDS.contains(&block) {
                return Err(unknown("profile", block, &BLOCK_KINDS));
            }
            if let Some(u) = unit
                && !UNIT_NAMES.contains(&u)
            {
                return Err(unknown(&format!("profile.{block}"), u, &UNIT_NAMES));
            }
            for (what, x) in [("forward_s", m.forward_s), ("backward_s", m.backward_s)] {
                check_seconds(&format!("profile.{key}.{what}"), x)?;
            }
        }
        Ok(())
    }

    /// Replaces the anatomy's estimates by the figures this profile has. A block's measured
    /// backward is split into B and W in the cost model's proportion; a unit's new size
    /// keeps the cost model's compression ratio.
    pub fn apply(&self, anatomy: &mut Anatomy) {
        for kind in BlockKind::ALL {
            let block = match kind {
                BlockKind::Embedding => &mut anatomy.embedding,
                BlockKind::Attention => &mut anatomy.attention,
                BlockKind::Mlp => &mut anatomy.mlp,
                BlockKind::Moe => &mut anatomy.moe,
                BlockKind::Mtp => &mut anatomy.mtp,
                BlockKind::Head => &mut anatomy.head,
            };
            self.apply_block(kind.name(), block);
        }
    }

    fn apply_block(&self, kind: &str, block: &mut Block) {
        if let Some(m) = self.entries.get(kind) {
            let total = block.backward_b_s + block.backward_w_s;
            let b_share = if total > 0.0 {
                block.backward_b_s / total
            } else {
                1.0
            };
            block.forward_s = m.forward_s;
            block.backward_b_s = m.backward_s * b_share;
            block.backward_w_s = m.backward_s * (1.0 - b_share);
        }
        for unit in &mut block.units {
            let Some(m) = self.entries.get(&format!("{kind}.{}", unit.name)) else {
                continue;
            };
            unit.forward_s = m.forward_s;
            unit.backward_s = m.backward_s;
            if let Some(size) = m.size_bytes {
                let ratio = if unit.size_bytes > 0 {
                    unit.compressed_bytes as f64 / unit.size_bytes as f64
                } else {
                    1.0
                };
                let old = unit.size_bytes;
                unit.size_bytes = size;
                unit.compressed_bytes = (size as f64 * ratio).round() as u64;
                for c in unit.codecs.iter_mut().flatten() {
                    let r = if old > 0 {
                        c.compressed_bytes as f64 / old as f64
                    } else {
                        1.0
                    };
                    c.compressed_bytes = (size as f64 * r).round() as u64;
                }
            }
        }
    }
}
