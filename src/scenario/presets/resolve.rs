//! From parsed preset tables to engine types: defaults applied (docs/cli.md), named
//! models and GPUs looked up in the catalog, and the result validated.

use super::schema::{GpuRef, GpuToml, ModelRef, ModelToml, ScenarioToml};
use super::{Catalog, PresetError};
use crate::scenario::MeasuredProfile;
use crate::scenario::ScheduleKind;
use crate::scenario::budget::budget_of;
use crate::scenario::gpu::a100_links;
use crate::scenario::validate::{validate_gpu, validate_model};
use crate::scenario::{AttentionBackend, P2p, Partition, PipelineLayout, Strategy, Zero};
use crate::scenario::{
    Batch, CodecSpec, EfficiencyCurve, ExpertGroups, GpuSpec, InvalidField, MlaSpec, ModelSpec,
    ModelStyle, MoeSpec, Objective, Parallel, PlanSettings, Precision, Scenario,
};

/// A `[model]` table with its defaults applied, validated.
pub fn model_spec(t: &ModelToml) -> Result<ModelSpec, InvalidField> {
    let style = match t.style.as_deref() {
        None | Some("gpt") => ModelStyle::Gpt,
        Some("llama") => ModelStyle::Llama,
        Some(other) => {
            let hint = super::nearest(other, &["gpt", "llama"])
                .map(|n| format!(" (did you mean \"{n}\"?)"))
                .unwrap_or_default();
            return Err(InvalidField::new(
                "model.style",
                other,
                format!("\"gpt\" or \"llama\"{hint}"),
            ));
        }
    };
    let ffn = match (t.ffn, style) {
        (Some(f), _) => f,
        (None, ModelStyle::Gpt) => t.hidden.saturating_mul(4),
        (None, ModelStyle::Llama) => {
            return Err(InvalidField::new(
                "model.ffn",
                "(missing)",
                "an ffn size: required for llama-style models",
            ));
        }
    };
    let spec = ModelSpec {
        name: t.name.clone(),
        description: t.description.clone().unwrap_or_default(),
        style,
        layers: t.layers,
        hidden: t.hidden,
        heads: t.heads,
        kv_heads: t.kv_heads.unwrap_or(t.heads),
        head_dim: t.head_dim,
        ffn,
        vocab: t.vocab,
        max_positions: t.max_positions,
        tied_embeddings: t.tied_embeddings.unwrap_or(style == ModelStyle::Gpt),
        moe: moe_of(t)?,
        mla: mla_of(t)?,
        rope_theta: t.rope_theta,
        qk_norm: t.qk_norm.unwrap_or(false),
        mtp_layers: t.mtp_layers.unwrap_or(0),
    };
    validate_model(&spec)?;
    Ok(spec)
}

/// The mixture of experts of a `[model]` table: `experts` makes the model one (with
/// `experts_per_token` and `expert_ffn` required); the other expert keys need it.
fn moe_of(t: &ModelToml) -> Result<Option<MoeSpec>, InvalidField> {
    let Some(experts) = t.experts else {
        let stray = [
            ("model.experts_per_token", t.experts_per_token.is_some()),
            ("model.shared_experts", t.shared_experts.is_some()),
            ("model.expert_ffn", t.expert_ffn.is_some()),
            ("model.dense_layers", t.dense_layers.is_some()),
            ("model.expert_groups", t.expert_groups.is_some()),
            ("model.groups_per_token", t.groups_per_token.is_some()),
        ];
        if let Some((field, _)) = stray.iter().find(|(_, given)| *given) {
            return Err(InvalidField::new(
                *field,
                "(given)",
                "only with model.experts (a mixture-of-experts model)",
            ));
        }
        return Ok(None);
    };
    let required = |field: &str, v: Option<u64>| {
        v.ok_or_else(|| {
            InvalidField::new(
                field,
                "(missing)",
                "required for a mixture-of-experts model",
            )
        })
    };
    Ok(Some(MoeSpec {
        experts,
        experts_per_token: required("model.experts_per_token", t.experts_per_token)?,
        shared_experts: t.shared_experts.unwrap_or(0),
        expert_ffn: required("model.expert_ffn", t.expert_ffn)?,
        dense_layers: t.dense_layers.unwrap_or(0),
        groups: groups_of(t)?,
    }))
}

/// Group-limited routing: `expert_groups` and `groups_per_token` come together or not at all.
fn groups_of(t: &ModelToml) -> Result<Option<ExpertGroups>, InvalidField> {
    match (t.expert_groups, t.groups_per_token) {
        (None, None) => Ok(None),
        (Some(expert_groups), Some(groups_per_token)) => Ok(Some(ExpertGroups {
            expert_groups,
            groups_per_token,
        })),
        (Some(_), None) => Err(InvalidField::new(
            "model.groups_per_token",
            "(missing)",
            "required with model.expert_groups (group-limited routing)",
        )),
        (None, Some(_)) => Err(InvalidField::new(
            "model.expert_groups",
            "(missing)",
            "required with model.groups_per_token (group-limited routing)",
        )),
    }
}

/// The multi-head latent attention of a `[model]` table: `attention = "mla"` with
/// `kv_lora_rank`, `qk_head_dim`, `qk_rope_dim` and `v_head_dim` (and `q_lora_rank` unless
/// queries are projected directly); "mha" and "gqa" (the default) take none of them.
fn mla_of(t: &ModelToml) -> Result<Option<MlaSpec>, InvalidField> {
    let keys = [
        ("model.q_lora_rank", t.q_lora_rank),
        ("model.kv_lora_rank", t.kv_lora_rank),
        ("model.qk_head_dim", t.qk_head_dim),
        ("model.qk_rope_dim", t.qk_rope_dim),
        ("model.v_head_dim", t.v_head_dim),
    ];
    match t.attention.as_deref() {
        None | Some("mha") | Some("gqa") => {
            if let Some((field, _)) = keys.iter().find(|(_, v)| v.is_some()) {
                return Err(InvalidField::new(
                    *field,
                    "(given)",
                    "only with model.attention = \"mla\"",
                ));
            }
            Ok(None)
        }
        Some("mla") => {
            let required = |i: usize| {
                let (field, v) = keys[i];
                v.ok_or_else(|| {
                    InvalidField::new(field, "(missing)", "required with attention = \"mla\"")
                })
            };
            Ok(Some(MlaSpec {
                q_lora_rank: t.q_lora_rank,
                kv_lora_rank: required(1)?,
                qk_head_dim: required(2)?,
                qk_rope_dim: required(3)?,
                v_head_dim: required(4)?,
            }))
        }
        Some(other) => Err(InvalidField::new(
            "model.attention",
            other,
            "\"mha\", \"gqa\" or \"mla\"",
        )),
    }
}

/// A `[gpu]` table with its defaults applied, validated.
pub fn gpu_spec(t: &GpuToml) -> Result<GpuSpec, InvalidField> {
    let default = EfficiencyCurve::a100_calibrated();
    let efficiency = match &t.efficiency {
        None => default,
        Some(e) => EfficiencyCurve {
            matrix: e.matrix.clone().unwrap_or(default.matrix),
            memory: e.memory.clone().unwrap_or(default.memory),
            link: e.link.unwrap_or(default.link),
            network: e.network,
            matrix_fp8: e.matrix_fp8.clone(),
            attention: e.attention.clone(),
            attention_backward: e.attention_backward.clone(),
            attention_unmasked: e.attention_unmasked.clone(),
            attention_unmasked_backward: e.attention_unmasked_backward.clone(),
            flash2_attention: e.flash2_attention.clone(),
            flash2_attention_backward: e.flash2_attention_backward.clone(),
            flash2_attention_unmasked: e.flash2_attention_unmasked.clone(),
            flash2_attention_unmasked_backward: e.flash2_attention_unmasked_backward.clone(),
            grouped_matrix: e.grouped_matrix.clone(),
            gemm_memory_overlap: e.gemm_memory_overlap.unwrap_or(default.gemm_memory_overlap),
        },
    };
    let spec = GpuSpec {
        name: t.name.clone(),
        description: t.description.clone().unwrap_or_default(),
        memory_gib: t.memory_gib,
        bf16_tflops: t.bf16_tflops,
        fp8_tflops: t.fp8_tflops,
        fp8_recipe: t.fp8_recipe.unwrap_or_default(),
        hbm_gbps: t.hbm_gbps,
        sms: t.sms,
        link_gbps: t.link_gbps.unwrap_or(a100_links::LINK_GBPS),
        node_gpus: t.node_gpus.unwrap_or(a100_links::NODE_GPUS),
        host_gpus: t.host_gpus,
        inter_node_gbps: t.inter_node_gbps.unwrap_or(a100_links::INTER_NODE_GBPS),
        host_gbps: t.host_gbps.unwrap_or(a100_links::HOST_GBPS),
        host_duplex_gbps: t
            .host_duplex_gbps
            .or(t.host_gbps)
            .unwrap_or(a100_links::HOST_DUPLEX_GBPS),
        pcie_pair: t.pcie_pair.unwrap_or(1),
        host_memory_gib: t.host_memory_gib,
        efficiency,
        codec: match &t.codec {
            None => CodecSpec::default(),
            Some(c) => CodecSpec::from_table("gpu.codec", c)?,
        },
        codecs: match &t.codecs {
            None => Vec::new(),
            Some(_) if t.codec.is_some() => {
                return Err(InvalidField::new(
                    "gpu.codecs",
                    "[[gpu.codecs]] with [gpu.codec]",
                    "one of them: a [gpu.codec] table (one codec) or [[gpu.codecs]] tables",
                ));
            }
            Some(list) => crate::scenario::codecs_from_tables(list)?,
        },
    };
    validate_gpu(&spec)?;
    Ok(spec)
}

fn parse_name<T: std::str::FromStr<Err = String>>(
    field: &str,
    value: &str,
) -> Result<T, InvalidField> {
    value.parse::<T>().map_err(|e| {
        // "unknown strategy 'x' (did you mean 'y'?): expected one of ...": the field is
        // named by the error already; the hint and the list are what is allowed.
        let (head, list) = e.split_once(": ").unwrap_or(("", e.as_str()));
        let hint = head
            .find(" (did you mean")
            .map_or("", |i| head[i..].trim_start());
        let allowed = if hint.is_empty() {
            list.to_string()
        } else {
            format!("{list} {hint}")
        };
        InvalidField::new(field, value, allowed)
    })
}

/// The ZeRO stage of a `[parallel]` table: `zero = 0|1|3`, or the older
/// `distributed_optimizer = true|false` (1 or 0); both given, they must agree.
fn zero_of(zero: Option<u32>, distributed_optimizer: Option<bool>) -> Result<Zero, InvalidField> {
    let level = match zero {
        None => None,
        Some(0) => Some(Zero::Off),
        Some(1) => Some(Zero::Optimizer),
        Some(3) => Some(Zero::Full),
        Some(other) => {
            return Err(InvalidField::new(
                "parallel.zero",
                other,
                "0 (plain data parallelism), 1 (distributed optimizer) or 3 (Megatron-FSDP)",
            ));
        }
    };
    match (level, distributed_optimizer) {
        (Some(z), Some(d)) if d != (z != Zero::Off) => Err(InvalidField::new(
            "parallel.distributed_optimizer",
            d,
            format!(
                "a value that agrees with parallel.zero = {} (or leave it out: zero says it)",
                z.level()
            ),
        )),
        (Some(z), _) => Ok(z),
        (None, Some(true)) => Ok(Zero::Optimizer),
        (None, _) => Ok(Zero::Off),
    }
}

impl Catalog {
    /// Resolves a parsed scenario preset into a validated scenario.
    pub(crate) fn resolve(&self, file: &str, t: &ScenarioToml) -> Result<Scenario, PresetError> {
        let inv = |e: InvalidField| PresetError::invalid(file, &e);
        let model = match &t.model {
            // Resolved with a stand-in so that the file's other errors are reported first;
            // refused at the end.
            None => self.model_or_err(file, "gpt3-175b")?,
            Some(ModelRef::Name(n)) => self.model_or_err(file, n)?,
            Some(ModelRef::Inline(m)) => model_spec(m).map_err(inv)?,
        };
        let gpu = match &t.gpu {
            // A stand-in as for the model; refused at the end.
            None => self.gpu_or_err(file, "a100-80gb")?,
            Some(GpuRef::Name(n)) => self.gpu_or_err(file, n)?,
            Some(GpuRef::Inline(g)) => gpu_spec(g).map_err(inv)?,
        };
        let p = &t.parallel;
        let zero = zero_of(p.zero, p.distributed_optimizer).map_err(inv)?;
        let mut parallel = Parallel {
            pp: p.pp.unwrap_or(1),
            tp: p.tp.unwrap_or(1),
            dp: p.dp.unwrap_or(1),
            sequence_parallel: p.sequence_parallel.unwrap_or(true),
            chunks: p.chunks.unwrap_or(1),
            distributed_optimizer: false,
            full_shard: false,
            cp: p.cp.unwrap_or(1),
            grad_bytes: p.grad_bytes.unwrap_or(4),
            moment_bytes: p.moment_bytes.unwrap_or(4),
            precision: match &p.precision {
                Some(name) => parse_name::<Precision>("parallel.precision", name).map_err(inv)?,
                None => Precision::Bf16,
            },
            ep: p.ep.unwrap_or(1),
            etp: p.etp.unwrap_or(1),
        };
        parallel.set_zero(zero);
        let b = &t.batch;
        let batch = Batch {
            seq_len: b.seq_len.unwrap_or(2048),
            micro_batch_size: b.micro_batch_size.unwrap_or(1),
            micro_batches: b
                .micro_batches
                .unwrap_or_else(|| parallel.pp.saturating_mul(4)),
        };
        let pl = &t.plan;
        let schedule = match &pl.schedule {
            Some(s) => parse_name::<ScheduleKind>("plan.schedule", s).map_err(inv)?,
            None => ScheduleKind::OneFOneB,
        };
        let strategy = match &pl.strategy {
            Some(s) => parse_name::<Strategy>("plan.strategy", s).map_err(inv)?,
            None => Strategy::AdaPipe,
        };
        let objective = match &pl.objective {
            Some(s) => parse_name::<Objective>("plan.objective", s).map_err(inv)?,
            None => Objective::Estimate,
        };
        let partition = match &pl.partition {
            Some(s) => parse_name::<Partition>("plan.partition", s).map_err(inv)?,
            None => Partition::Even,
        };
        let p2p = match &pl.p2p {
            Some(s) => parse_name::<P2p>("plan.p2p", s).map_err(inv)?,
            None => P2p::Overlapped,
        };
        let attention_backend = match &pl.attention_backend {
            Some(s) => parse_name::<AttentionBackend>("plan.attention_backend", s).map_err(inv)?,
            None => AttentionBackend::Cudnn,
        };
        let layout = match &pl.layout {
            Some(s) => Some(
                PipelineLayout::parse(s)
                    .map_err(|e| inv(InvalidField::new("plan.layout", s, e.to_string())))?,
            ),
            None => None,
        };
        let (memory_budget_bytes, reserve_bytes) = budget_of(
            pl.memory_budget_gib,
            pl.reserve_gib,
            &gpu,
            ("plan.memory_budget_gib", "plan.reserve_gib"),
        )
        .map_err(inv)?;
        let plan = PlanSettings {
            schedule,
            strategy,
            memory_budget_bytes,
            reserve_bytes,
            recompute_units: pl.recompute_units.clone().unwrap_or_default(),
            partition,
            p2p,
            layout,
            overlap_grad_reduce: pl.overlap_grad_reduce.unwrap_or(false),
            overlap_param_gather: pl.overlap_param_gather.unwrap_or(false),
            moe_a2a_overlap: pl.moe_a2a_overlap.unwrap_or(false),
            tp_comm_overlap: pl.tp_comm_overlap.unwrap_or(false),
            routing_imbalance: pl.routing_imbalance.unwrap_or(1.0),
            deepep: pl.deepep.unwrap_or(false),
            flex_dispatcher_num_sms: pl
                .flex_dispatcher_num_sms
                .unwrap_or(crate::scenario::DEEPEP_DEFAULT_SMS),
            activation_func_fp8_input_store: pl.activation_func_fp8_input_store.unwrap_or(false),
            flash_attention: pl.flash_attention.unwrap_or(true),
            attention_backend,
            objective,
            overlap_recompute: pl.overlap_recompute.unwrap_or(false),
            mem_limit: pl.mem_limit,
            group_size: pl.group_size,
            offload_chunks: pl.offload_chunks,
            device_max_connections: pl.device_max_connections.unwrap_or(1),
            gradient_accumulation_fusion: pl.gradient_accumulation_fusion.unwrap_or(true),
            cross_entropy_loss_fusion: pl.cross_entropy_loss_fusion.unwrap_or(true),
            align_grad_reduce: pl.align_grad_reduce.unwrap_or(true),
        };
        let profile = match &t.profile {
            Some(table) => Some(MeasuredProfile::from_table(table).map_err(inv)?),
            None => None,
        };
        let scenario = Scenario {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            model,
            gpu,
            parallel,
            batch,
            plan,
            profile,
        };
        scenario.validate().map_err(inv)?;
        let zero_key = if p.zero.is_none() && p.distributed_optimizer.is_some() {
            "parallel.distributed_optimizer"
        } else {
            "parallel.zero"
        };
        crate::scenario::validate_job::check_data_parallel_use(&scenario, zero_key).map_err(inv)?;
        // The file's layout against the file's own model and pipeline, so that a layout that
        // does not fit is reported at its place in the file, not later as a flag.
        if let Some(layout) = &scenario.plan.layout {
            let stages = scenario
                .plan
                .schedule
                .stages(scenario.parallel.pp, scenario.parallel.chunks);
            layout
                .chain(
                    scenario.model.layers,
                    scenario.model.mtp_layers,
                    stages as usize,
                )
                .map_err(|e| inv(InvalidField::new("plan.layout", layout, e.to_string())))?;
        }
        // No default model: a scenario without one would be planned as some other model
        // under the scenario's own name.
        if t.model.is_none() {
            return Err(PresetError::new(
                file,
                "the scenario has no model: give a [model] table, or model = \"NAME\" (a \
                 model preset: `pipescope presets`)",
            ));
        }
        // Nor a default GPU: a file that names none would be planned on some GPU it never
        // chose, with its reserve taken from that GPU's memory.
        if t.gpu.is_none() {
            return Err(PresetError::new(
                file,
                "the scenario has no GPU: give a [gpu] table, or gpu = \"NAME\" (a GPU \
                 preset: `pipescope presets`)",
            ));
        }
        Ok(scenario)
    }

    fn model_or_err(&self, file: &str, name: &str) -> Result<ModelSpec, PresetError> {
        if let Some(e) = self.unusable(super::PresetKind::Model, name) {
            return Err(e);
        }
        self.model(name)
            .cloned()
            .ok_or_else(|| PresetError::new(file, unknown_name("model", name, &self.model_names())))
    }

    fn gpu_or_err(&self, file: &str, name: &str) -> Result<GpuSpec, PresetError> {
        if let Some(e) = self.unusable(super::PresetKind::Gpu, name) {
            return Err(e);
        }
        self.gpu(name)
            .cloned()
            .ok_or_else(|| PresetError::new(file, unknown_name("gpu", name, &self.gpu_names())))
    }
}

/// "unknown model 'x' (did you mean 'y'?); known: a, b, c".
pub fn unknown_name(what: &str, name: &str, known: &[&str]) -> String {
    let hint = super::error::nearest(name, known)
        .map(|k| format!(" (did you mean '{k}'?)"))
        .unwrap_or_default();
    format!("unknown {what} '{name}'{hint}; known: {}", known.join(", "))
}
