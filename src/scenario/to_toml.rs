//! [`to_toml`]: a scenario as a self-contained preset file (model and GPU inlined), which the
//! loader reads back to an equal scenario. The TUI saves the current scenario with it.

use toml::{Table, Value};

use super::{GpuSpec, ModelSpec, ModelStyle, Scenario};

fn int(v: u64) -> Value {
    Value::Integer(i64::try_from(v).unwrap_or(i64::MAX))
}

/// The description a saved model should carry: its own while it is the built-in preset of
/// its name unchanged (or a model no built-in preset names), else one made from its shape,
/// so that DeepSeek-V3 saved without its MTP layer is not described with "1 MTP".
pub fn model_description(m: &ModelSpec) -> String {
    let catalog = super::presets::Catalog::builtin();
    match catalog.model(&m.name) {
        Some(preset) if preset != m => m.shape_description(),
        _ => m.description.clone(),
    }
}

fn model_table(m: &ModelSpec) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), Value::String(m.name.clone()));
    t.insert("description".into(), Value::String(m.description.clone()));
    let style = match m.style {
        ModelStyle::Gpt => "gpt",
        ModelStyle::Llama => "llama",
    };
    t.insert("style".into(), Value::String(style.into()));
    t.insert("layers".into(), int(u64::from(m.layers)));
    t.insert("hidden".into(), int(m.hidden));
    t.insert("heads".into(), int(m.heads));
    t.insert("kv_heads".into(), int(m.kv_heads));
    if let Some(d) = m.head_dim {
        t.insert("head_dim".into(), int(d));
    }
    t.insert("ffn".into(), int(m.ffn));
    t.insert("vocab".into(), int(m.vocab));
    if let Some(p) = m.max_positions {
        t.insert("max_positions".into(), int(p));
    }
    t.insert("tied_embeddings".into(), Value::Boolean(m.tied_embeddings));
    if let Some(theta) = m.rope_theta {
        t.insert("rope_theta".into(), int(theta));
    }
    if m.qk_norm {
        t.insert("qk_norm".into(), Value::Boolean(true));
    }
    if let Some(e) = m.moe {
        t.insert("experts".into(), int(e.experts));
        t.insert("experts_per_token".into(), int(e.experts_per_token));
        t.insert("shared_experts".into(), int(e.shared_experts));
        t.insert("expert_ffn".into(), int(e.expert_ffn));
        t.insert("dense_layers".into(), int(u64::from(e.dense_layers)));
        if let Some(g) = e.groups {
            t.insert("expert_groups".into(), int(g.expert_groups));
            t.insert("groups_per_token".into(), int(g.groups_per_token));
        }
    }
    if m.mtp_layers > 0 {
        t.insert("mtp_layers".into(), int(u64::from(m.mtp_layers)));
    }
    if let Some(a) = m.mla {
        t.insert("attention".into(), Value::String("mla".into()));
        if let Some(q) = a.q_lora_rank {
            t.insert("q_lora_rank".into(), int(q));
        }
        t.insert("kv_lora_rank".into(), int(a.kv_lora_rank));
        t.insert("qk_head_dim".into(), int(a.qk_head_dim));
        t.insert("qk_rope_dim".into(), int(a.qk_rope_dim));
        t.insert("v_head_dim".into(), int(a.v_head_dim));
    }
    t
}

fn steps(s: &[(f64, f64)]) -> Value {
    Value::Array(
        s.iter()
            .map(|&(a, b)| Value::Array(vec![Value::Float(a), Value::Float(b)]))
            .collect(),
    )
}

fn gpu_table(g: &GpuSpec) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), Value::String(g.name.clone()));
    t.insert("description".into(), Value::String(g.description.clone()));
    t.insert("memory_gib".into(), Value::Float(g.memory_gib));
    t.insert("bf16_tflops".into(), Value::Float(g.bf16_tflops));
    if let Some(fp8) = g.fp8_tflops {
        t.insert("fp8_tflops".into(), Value::Float(fp8));
    }
    if g.fp8_recipe != crate::scenario::Fp8Recipe::Delayed {
        t.insert(
            "fp8_recipe".into(),
            Value::String(g.fp8_recipe.name().into()),
        );
    }
    t.insert("hbm_gbps".into(), Value::Float(g.hbm_gbps));
    if let Some(sms) = g.sms {
        t.insert("sms".into(), int(u64::from(sms)));
    }
    t.insert("link_gbps".into(), Value::Float(g.link_gbps));
    t.insert("node_gpus".into(), int(u64::from(g.node_gpus)));
    if let Some(h) = g.host_gpus {
        t.insert("host_gpus".into(), int(u64::from(h)));
    }
    t.insert("inter_node_gbps".into(), Value::Float(g.inter_node_gbps));
    t.insert("host_gbps".into(), Value::Float(g.host_gbps));
    t.insert("host_duplex_gbps".into(), Value::Float(g.host_duplex_gbps));
    t.insert("pcie_pair".into(), int(u64::from(g.pcie_pair)));
    if let Some(h) = g.host_memory_gib {
        t.insert("host_memory_gib".into(), Value::Float(h));
    }
    let mut e = Table::new();
    e.insert("matrix".into(), steps(&g.efficiency.matrix));
    e.insert("memory".into(), steps(&g.efficiency.memory));
    e.insert("link".into(), Value::Float(g.efficiency.link));
    if let Some(n) = g.efficiency.network {
        e.insert("network".into(), Value::Float(n));
    }
    e.insert(
        "gemm_memory_overlap".into(),
        Value::Boolean(g.efficiency.gemm_memory_overlap),
    );
    for (key, curve) in [
        ("matrix_fp8", &g.efficiency.matrix_fp8),
        ("attention", &g.efficiency.attention),
        ("attention_backward", &g.efficiency.attention_backward),
        ("attention_unmasked", &g.efficiency.attention_unmasked),
        (
            "attention_unmasked_backward",
            &g.efficiency.attention_unmasked_backward,
        ),
        ("flash2_attention", &g.efficiency.flash2_attention),
        (
            "flash2_attention_backward",
            &g.efficiency.flash2_attention_backward,
        ),
        (
            "flash2_attention_unmasked",
            &g.efficiency.flash2_attention_unmasked,
        ),
        (
            "flash2_attention_unmasked_backward",
            &g.efficiency.flash2_attention_unmasked_backward,
        ),
        ("grouped_matrix", &g.efficiency.grouped_matrix),
    ] {
        if let Some(c) = curve {
            e.insert(key.into(), steps(c));
        }
    }
    t.insert("efficiency".into(), Value::Table(e));
    if g.codecs.is_empty() {
        t.insert("codec".into(), Value::Table(g.codec.to_table()));
    } else {
        let list = g
            .codecs
            .iter()
            .map(|c| Value::Table(c.to_table()))
            .collect();
        t.insert("codecs".into(), Value::Array(list));
    }
    t
}

/// The scenario as a preset file's text (model and GPU inlined, every key explicit).
pub fn to_toml(s: &Scenario) -> String {
    let mut root = Table::new();
    root.insert("name".into(), Value::String(s.name.clone()));
    root.insert("description".into(), Value::String(s.description.clone()));
    root.insert("model".into(), Value::Table(model_table(&s.model)));
    root.insert("gpu".into(), Value::Table(gpu_table(&s.gpu)));

    let p = &s.parallel;
    let mut par = Table::new();
    par.insert("pp".into(), int(u64::from(p.pp)));
    par.insert("tp".into(), int(u64::from(p.tp)));
    par.insert("dp".into(), int(u64::from(p.dp)));
    par.insert(
        "sequence_parallel".into(),
        Value::Boolean(p.sequence_parallel),
    );
    // The chunks the schedule runs, not a leftover request it ignores (zb-h1 with 2 runs 1):
    // a saved preset never holds a value the command line would refuse.
    let chunks = s.plan.schedule.chunks(p.chunks);
    par.insert("chunks".into(), int(u64::from(chunks)));
    par.insert("zero".into(), int(u64::from(p.zero().level())));
    par.insert("cp".into(), int(u64::from(p.cp)));
    par.insert("grad_bytes".into(), int(u64::from(p.grad_bytes)));
    if p.moment_bytes != 4 {
        par.insert("moment_bytes".into(), int(u64::from(p.moment_bytes)));
    }
    par.insert("precision".into(), Value::String(p.precision.name().into()));
    if p.ep > 1 || p.etp > 1 {
        par.insert("ep".into(), int(u64::from(p.ep)));
        par.insert("etp".into(), int(u64::from(p.etp)));
    }
    root.insert("parallel".into(), Value::Table(par));

    let b = &s.batch;
    let mut batch = Table::new();
    batch.insert("seq_len".into(), int(b.seq_len));
    batch.insert("micro_batch_size".into(), int(b.micro_batch_size));
    batch.insert("micro_batches".into(), int(u64::from(b.micro_batches)));
    root.insert("batch".into(), Value::Table(batch));

    let pl = &s.plan;
    let mut plan = Table::new();
    plan.insert("schedule".into(), Value::String(pl.schedule.name().into()));
    plan.insert("strategy".into(), Value::String(pl.strategy.name().into()));
    match pl.reserve_bytes {
        Some(r) => plan.insert("reserve_gib".into(), Value::Float(r as f64 / super::GIB)),
        None => plan.insert(
            "memory_budget_gib".into(),
            Value::Float(pl.memory_budget_bytes as f64 / super::GIB),
        ),
    };
    plan.insert(
        "partition".into(),
        Value::String(pl.partition.name().into()),
    );
    plan.insert("p2p".into(), Value::String(pl.p2p.name().into()));
    if let Some(layout) = &pl.layout {
        plan.insert("layout".into(), Value::String(layout.text().into()));
    }
    if !pl.recompute_units.is_empty() {
        let names = pl.recompute_units.iter().cloned().map(Value::String);
        plan.insert("recompute_units".into(), Value::Array(names.collect()));
    }
    plan.insert(
        "overlap_grad_reduce".into(),
        Value::Boolean(pl.overlap_grad_reduce),
    );
    plan.insert(
        "overlap_param_gather".into(),
        Value::Boolean(pl.overlap_param_gather),
    );
    plan.insert("tp_comm_overlap".into(), Value::Boolean(pl.tp_comm_overlap));
    plan.insert("moe_a2a_overlap".into(), Value::Boolean(pl.moe_a2a_overlap));
    plan.insert("flash_attention".into(), Value::Boolean(pl.flash_attention));
    plan.insert(
        "attention_backend".into(),
        Value::String(pl.attention_backend.name().into()),
    );
    if pl.activation_func_fp8_input_store {
        plan.insert(
            "activation_func_fp8_input_store".into(),
            Value::Boolean(true),
        );
    }
    if s.model.moe.is_some() {
        plan.insert(
            "routing_imbalance".into(),
            Value::Float(pl.routing_imbalance),
        );
        plan.insert("deepep".into(), Value::Boolean(pl.deepep));
    }
    if pl.flex_dispatcher_num_sms != super::DEEPEP_DEFAULT_SMS {
        plan.insert(
            "flex_dispatcher_num_sms".into(),
            int(u64::from(pl.flex_dispatcher_num_sms)),
        );
    }
    plan.insert(
        "objective".into(),
        Value::String(pl.objective.name().into()),
    );
    plan.insert(
        "overlap_recompute".into(),
        Value::Boolean(pl.overlap_recompute),
    );
    if let Some(x) = pl.mem_limit {
        plan.insert("mem_limit".into(), Value::Float(x));
    }
    if let Some(g) = pl.group_size {
        plan.insert("group_size".into(), int(u64::from(g)));
    }
    if let Some(k) = pl.offload_chunks {
        plan.insert("offload_chunks".into(), int(u64::from(k)));
    }
    if pl.device_max_connections != 1 {
        plan.insert(
            "device_max_connections".into(),
            int(u64::from(pl.device_max_connections)),
        );
    }
    if !pl.gradient_accumulation_fusion {
        plan.insert("gradient_accumulation_fusion".into(), Value::Boolean(false));
    }
    if !pl.cross_entropy_loss_fusion {
        plan.insert("cross_entropy_loss_fusion".into(), Value::Boolean(false));
    }
    if !pl.align_grad_reduce {
        plan.insert("align_grad_reduce".into(), Value::Boolean(false));
    }
    root.insert("plan".into(), Value::Table(plan));
    if let Some(profile) = &s.profile {
        root.insert("profile".into(), Value::Table(profile.to_table()));
    }
    // One key at a time, in the order a person writes a preset (a toml::Table sorts keys).
    let mut out = String::new();
    for key in [
        "name",
        "description",
        "model",
        "gpu",
        "parallel",
        "batch",
        "plan",
        "profile",
    ] {
        if let Some(v) = root.remove(key) {
            let mut one = Table::new();
            one.insert(key.into(), v);
            if !out.is_empty() && !matches!(key, "name" | "description") {
                out.push('\n');
            }
            out.push_str(&toml::to_string(&one).unwrap_or_default());
        }
    }
    out
}
