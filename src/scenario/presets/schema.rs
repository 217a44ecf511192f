//! The TOML schema of preset files (docs/cli.md), as serde structs that refuse
//! unknown keys. Optional keys stay `None` here; defaults are applied when a scenario is
//! resolved (`resolve.rs`), so that a file states only what it changes. Every table may
//! carry a `description`.

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A `[model]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelToml {
    pub name: String,
    pub description: Option<String>,
    pub style: Option<String>,
    pub layers: u32,
    pub hidden: u64,
    pub heads: u64,
    pub kv_heads: Option<u64>,
    pub head_dim: Option<u64>,
    pub ffn: Option<u64>,
    pub vocab: u64,
    pub max_positions: Option<u64>,
    pub tied_embeddings: Option<bool>,
    pub rope_theta: Option<u64>,
    pub qk_norm: Option<bool>,
    pub experts: Option<u64>,
    pub experts_per_token: Option<u64>,
    pub shared_experts: Option<u64>,
    pub expert_ffn: Option<u64>,
    pub dense_layers: Option<u32>,
    pub expert_groups: Option<u64>,
    pub groups_per_token: Option<u64>,
    pub mtp_layers: Option<u32>,
    pub attention: Option<String>,
    pub q_lora_rank: Option<u64>,
    pub kv_lora_rank: Option<u64>,
    pub qk_head_dim: Option<u64>,
    pub qk_rope_dim: Option<u64>,
    pub v_head_dim: Option<u64>,
}

/// A `[gpu.efficiency]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EfficiencyToml {
    /// Free text; every table may carry one (ignored).
    pub description: Option<String>,
    pub matrix: Option<Vec<(f64, f64)>>,
    pub memory: Option<Vec<(f64, f64)>>,
    pub link: Option<f64>,
    pub network: Option<f64>,
    pub matrix_fp8: Option<Vec<(f64, f64)>>,
    pub attention: Option<Vec<(f64, f64)>>,
    pub attention_backward: Option<Vec<(f64, f64)>>,
    pub attention_unmasked: Option<Vec<(f64, f64)>>,
    pub attention_unmasked_backward: Option<Vec<(f64, f64)>>,
    pub flash2_attention: Option<Vec<(f64, f64)>>,
    pub flash2_attention_backward: Option<Vec<(f64, f64)>>,
    pub flash2_attention_unmasked: Option<Vec<(f64, f64)>>,
    pub flash2_attention_unmasked_backward: Option<Vec<(f64, f64)>>,
    pub grouped_matrix: Option<Vec<(f64, f64)>>,
    pub gemm_memory_overlap: Option<bool>,
}

/// A `[gpu]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuToml {
    pub name: String,
    pub description: Option<String>,
    pub memory_gib: f64,
    pub bf16_tflops: f64,
    pub fp8_tflops: Option<f64>,
    pub fp8_recipe: Option<crate::scenario::Fp8Recipe>,
    pub hbm_gbps: f64,
    pub sms: Option<u32>,
    pub link_gbps: Option<f64>,
    pub node_gpus: Option<u32>,
    pub host_gpus: Option<u32>,
    pub inter_node_gbps: Option<f64>,
    pub host_gbps: Option<f64>,
    pub host_duplex_gbps: Option<f64>,
    pub pcie_pair: Option<u32>,
    pub host_memory_gib: Option<f64>,
    pub efficiency: Option<EfficiencyToml>,
    /// `[gpu.codec]`: read by `CodecSpec::from_table`, which names bad keys.
    pub codec: Option<toml::Table>,
    /// `[[gpu.codecs]]`: read by `codecs_from_tables`, which names bad keys.
    pub codecs: Option<Vec<toml::Table>>,
}

/// A `[parallel]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelToml {
    /// Free text; every table may carry one (ignored).
    pub description: Option<String>,
    pub pp: Option<u32>,
    pub tp: Option<u32>,
    pub dp: Option<u32>,
    pub sequence_parallel: Option<bool>,
    pub chunks: Option<u32>,
    pub distributed_optimizer: Option<bool>,
    pub zero: Option<u32>,
    pub cp: Option<u32>,
    pub grad_bytes: Option<u32>,
    pub moment_bytes: Option<u32>,
    pub precision: Option<String>,
    pub ep: Option<u32>,
    pub etp: Option<u32>,
}

/// A `[batch]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchToml {
    /// Free text; every table may carry one (ignored).
    pub description: Option<String>,
    pub seq_len: Option<u64>,
    pub micro_batch_size: Option<u64>,
    pub micro_batches: Option<u32>,
}

/// A `[plan]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanToml {
    /// Free text; every table may carry one (ignored).
    pub description: Option<String>,
    pub schedule: Option<String>,
    pub strategy: Option<String>,
    pub memory_budget_gib: Option<f64>,
    pub reserve_gib: Option<f64>,
    pub recompute_units: Option<Vec<String>>,
    pub partition: Option<String>,
    pub p2p: Option<String>,
    pub layout: Option<String>,
    pub overlap_grad_reduce: Option<bool>,
    pub overlap_param_gather: Option<bool>,
    pub moe_a2a_overlap: Option<bool>,
    pub tp_comm_overlap: Option<bool>,
    pub routing_imbalance: Option<f64>,
    pub deepep: Option<bool>,
    pub flex_dispatcher_num_sms: Option<u32>,
    pub activation_func_fp8_input_store: Option<bool>,
    pub flash_attention: Option<bool>,
    pub attention_backend: Option<String>,
    pub objective: Option<String>,
    pub overlap_recompute: Option<bool>,
    pub mem_limit: Option<f64>,
    pub group_size: Option<u32>,
    pub offload_chunks: Option<u32>,
    pub device_max_connections: Option<u32>,
    pub gradient_accumulation_fusion: Option<bool>,
    pub cross_entropy_loss_fusion: Option<bool>,
    pub align_grad_reduce: Option<bool>,
}

/// `model = "name"` or an inline `[model]` table.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelRef {
    Name(String),
    Inline(Box<ModelToml>),
}

/// `gpu = "name"` or an inline `[gpu]` table.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuRef {
    Name(String),
    Inline(Box<GpuToml>),
}

macro_rules! name_or_table {
    ($ty:ident, $inline:ident, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str(concat!(
                            "a ",
                            $what,
                            " preset name or a [",
                            $what,
                            "] table"
                        ))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        Ok($ty::Name(v.to_string()))
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        let t = $inline::deserialize(de::value::MapAccessDeserializer::new(map))?;
                        Ok($ty::Inline(Box::new(t)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
name_or_table!(ModelRef, ModelToml, "model");
name_or_table!(GpuRef, GpuToml, "gpu");

/// A scenario preset file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioToml {
    pub name: String,
    pub description: Option<String>,
    pub model: Option<ModelRef>,
    pub gpu: Option<GpuRef>,
    #[serde(default)]
    pub parallel: ParallelToml,
    #[serde(default)]
    pub batch: BatchToml,
    #[serde(default)]
    pub plan: PlanToml,
    pub profile: Option<toml::Table>,
}

/// A model preset file: one `[model]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub model: ModelToml,
}

/// A GPU preset file: one `[gpu]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuFile {
    pub gpu: GpuToml,
}
