//! [`Scenario::validate`]: every value that is not allowed is refused with the field, the value
//! and what would be accepted. A memory budget that a stage cannot meet is *not* an input
//! error (it makes the outcome infeasible), so it is not checked here.

use super::magnitude::{check_activations, check_parameters};
use super::{GpuSpec, InvalidField, ModelSpec, Scenario};

/// Upper bounds of single fields, far above any real training set-up. Products of fields
/// are bounded jointly in `magnitude.rs` (model parameters, activation bytes).
pub mod limits {
    /// Most transformer layers.
    pub const LAYERS: u64 = 100_000;
    /// Largest hidden, ffn size or vocabulary.
    pub const WIDTH: u64 = 1 << 24;
    /// Most attention heads.
    pub const HEADS: u64 = 1 << 16;
    /// Longest sequence, in tokens.
    pub const SEQ_LEN: u64 = 1 << 24;
    /// Largest micro-batch, in sequences.
    pub const MICRO_BATCH: u64 = 1 << 16;
    /// Most micro-batches per iteration.
    pub const MICRO_BATCHES: u64 = 1 << 20;
    /// Largest parallel degree (p, t, d, chunks).
    pub const DEGREE: u64 = 1 << 16;
    /// Largest layers x pp x chunks: the planner's tables grow with it (about 300 bytes
    /// each), so beyond it a plan would ask for more memory than a machine has.
    pub const LAYER_STAGES: u64 = 1 << 21;
}

fn positive(field: &str, value: u64, max: u64) -> Result<(), InvalidField> {
    if value == 0 || value > max {
        return Err(InvalidField::new(
            field,
            value,
            format!("a whole number from 1 to {max}"),
        ));
    }
    Ok(())
}

fn positive_f64(field: &str, value: f64) -> Result<(), InvalidField> {
    if !(value.is_finite() && value > 0.0) {
        return Err(InvalidField::new(
            field,
            value,
            "a finite number greater than 0",
        ));
    }
    Ok(())
}

fn divides(field: &str, value: u64, by: u64, what: &str) -> Result<(), InvalidField> {
    if !value.is_multiple_of(by) {
        return Err(InvalidField::new(
            field,
            value,
            format!("a multiple of {what} ({by})"),
        ));
    }
    Ok(())
}

/// Checks a model shape on its own (no parallel layout).
pub fn validate_model(m: &ModelSpec) -> Result<(), InvalidField> {
    positive("model.layers", u64::from(m.layers), limits::LAYERS)?;
    positive("model.hidden", m.hidden, limits::WIDTH)?;
    positive("model.heads", m.heads, limits::HEADS.min(m.hidden))?;
    match m.head_dim {
        None => divides("model.hidden", m.hidden, m.heads, "model.heads")?,
        Some(d) => {
            positive("model.head_dim", d, limits::WIDTH / m.heads)?;
        }
    }
    positive("model.kv_heads", m.kv_heads, m.heads)?;
    if !m.heads.is_multiple_of(m.kv_heads) {
        return Err(InvalidField::new(
            "model.kv_heads",
            m.kv_heads,
            format!("a divisor of model.heads ({})", m.heads),
        ));
    }
    positive("model.ffn", m.ffn, limits::WIDTH)?;
    positive("model.vocab", m.vocab, limits::WIDTH)?;
    if let Some(pos) = m.max_positions {
        positive("model.max_positions", pos, limits::SEQ_LEN)?;
    }
    super::validate_moe::check_model(m)?;
    check_parameters(m)
}

/// Checks a GPU's figures and its efficiency curve.
pub fn validate_gpu(g: &GpuSpec) -> Result<(), InvalidField> {
    positive_f64("gpu.memory_gib", g.memory_gib)?;
    if g.memory_gib > 1.0e6 {
        return Err(InvalidField::new(
            "gpu.memory_gib",
            g.memory_gib,
            "at most 1000000 GiB",
        ));
    }
    positive_f64("gpu.bf16_tflops", g.bf16_tflops)?;
    positive_f64("gpu.hbm_gbps", g.hbm_gbps)?;
    if let Some(sms) = g.sms {
        positive("gpu.sms", u64::from(sms), limits::DEGREE)?;
    }
    positive_f64("gpu.link_gbps", g.link_gbps)?;
    positive_f64("gpu.inter_node_gbps", g.inter_node_gbps)?;
    positive_f64("gpu.host_gbps", g.host_gbps)?;
    g.codec.validate("gpu.codec")?;
    positive("gpu.node_gpus", u64::from(g.node_gpus), limits::DEGREE)?;
    if let Some(fp8) = g.fp8_tflops {
        positive_f64("gpu.fp8_tflops", fp8)?;
    }
    let eff = &g.efficiency;
    let optional = [
        ("gpu.efficiency.matrix_fp8", &eff.matrix_fp8),
        ("gpu.efficiency.attention", &eff.attention),
        ("gpu.efficiency.attention_backward", &eff.attention_backward),
        ("gpu.efficiency.grouped_matrix", &eff.grouped_matrix),
    ];
    for (field, steps) in [
        ("gpu.efficiency.matrix", &eff.matrix),
        ("gpu.efficiency.memory", &eff.memory),
    ]
    .into_iter()
    .chain(
        optional
            .into_iter()
            .filter_map(|(f, s)| s.as_ref().map(|s| (f, s))),
    ) {
        if steps.is_empty() {
            return Err(InvalidField::new(
                field,
                "[]",
                "at least one [threshold, efficiency] step",
            ));
        }
        for &(threshold, e) in steps {
            if !(threshold.is_finite() && threshold >= 0.0) {
                return Err(InvalidField::new(
                    field,
                    threshold,
                    "thresholds that are finite and >= 0",
                ));
            }
            if !(e.is_finite() && e > 0.0 && e <= 1.0) {
                return Err(InvalidField::new(field, e, "efficiencies in (0, 1]"));
            }
        }
    }
    if !(eff.link.is_finite() && eff.link > 0.0 && eff.link <= 1.0) {
        return Err(InvalidField::new(
            "gpu.efficiency.link",
            eff.link,
            "a fraction in (0, 1]",
        ));
    }
    Ok(())
}

impl Scenario {
    /// Checks every field; the first value that is not allowed is returned as an error.
    pub fn validate(&self) -> Result<(), InvalidField> {
        validate_model(&self.model)?;
        validate_gpu(&self.gpu)?;
        let m = &self.model;
        let par = &self.parallel;
        // Attention and MLP blocks: the planner gives each stage at least one (the embedding
        // and the head ride with the first and last stage), so 2L is the most stages.
        let blocks = 2 * u64::from(m.chain_layers());
        positive("parallel.tp", u64::from(par.tp), limits::DEGREE)?;
        let t = u64::from(par.tp);
        if !m.heads.is_multiple_of(t) {
            return Err(InvalidField::new(
                "parallel.tp",
                t,
                format!("a divisor of model.heads ({})", m.heads),
            ));
        }
        if !m.kv_heads.is_multiple_of(t) {
            return Err(InvalidField::new(
                "parallel.tp",
                t,
                format!(
                    "a divisor of model.kv_heads ({}): each tensor-parallel rank needs whole kv heads",
                    m.kv_heads
                ),
            ));
        }
        if !m.ffn.is_multiple_of(t) {
            return Err(InvalidField::new(
                "parallel.tp",
                t,
                format!("a divisor of model.ffn ({})", m.ffn),
            ));
        }
        positive("parallel.pp", u64::from(par.pp), limits::DEGREE)?;
        if u64::from(par.pp) > blocks {
            return Err(InvalidField::new(
                "parallel.pp",
                par.pp,
                format!(
                    "at most the number of attention and MLP blocks 2L = {blocks} (every stage holds at least one)"
                ),
            ));
        }
        positive("parallel.dp", u64::from(par.dp), limits::DEGREE)?;
        positive("parallel.chunks", u64::from(par.chunks), limits::DEGREE)?;
        let v = u64::from(self.plan.schedule.chunks(par.chunks));
        let layer_stages = u64::from(m.layers) * u64::from(par.pp) * v;
        if layer_stages > limits::LAYER_STAGES {
            return Err(InvalidField::new(
                "parallel.pp",
                par.pp,
                format!(
                    "layers x pp x chunks at most {} for the planner to fit in memory \
                     (got {} x {} x {v} = {layer_stages})",
                    limits::LAYER_STAGES,
                    m.layers,
                    par.pp
                ),
            ));
        }
        if u64::from(par.pp) * v > blocks {
            return Err(InvalidField::new(
                "parallel.chunks",
                par.chunks,
                format!(
                    "pp x chunks ({} x {v} for {}) at most the number of attention and MLP blocks 2L = {blocks}",
                    par.pp,
                    self.plan.schedule.name()
                ),
            ));
        }
        let b = &self.batch;
        positive("batch.seq_len", b.seq_len, limits::SEQ_LEN)?;
        positive(
            "batch.micro_batch_size",
            b.micro_batch_size,
            limits::MICRO_BATCH,
        )?;
        positive(
            "batch.micro_batches",
            u64::from(b.micro_batches),
            limits::MICRO_BATCHES,
        )?;
        if par.sequence_parallel && !b.seq_len.is_multiple_of(t) {
            return Err(InvalidField::new(
                "batch.seq_len",
                b.seq_len,
                format!("a multiple of parallel.tp ({t}) with sequence parallelism"),
            ));
        }
        if let Some(pos) = m.max_positions
            && pos < b.seq_len
        {
            return Err(InvalidField::new(
                "batch.seq_len",
                b.seq_len,
                format!("at most model.max_positions ({pos})"),
            ));
        }
        check_activations(self)?;
        let plan = &self.plan;
        if plan.memory_budget_bytes == 0 {
            return Err(InvalidField::new(
                "plan.memory_budget_gib",
                0,
                "a budget greater than 0",
            ));
        }
        if plan.memory_budget_bytes > self.gpu.memory_bytes() {
            return Err(InvalidField::new(
                "plan.memory_budget_gib",
                format!(
                    "{:.2}",
                    plan.memory_budget_bytes as f64 / crate::scenario::GIB
                ),
                format!(
                    "at most the GPU's memory ({}: {} GiB)",
                    self.gpu.name, self.gpu.memory_gib
                ),
            ));
        }
        if par.precision.is_fp8() && self.gpu.fp8_tflops.is_none() {
            return Err(InvalidField::new(
                "parallel.precision",
                par.precision,
                format!(
                    "bf16 on {}: it has no fp8 tensor cores (its preset gives no gpu.fp8_tflops)",
                    self.gpu.name
                ),
            ));
        }
        if !matches!(par.grad_bytes, 2 | 4) {
            return Err(InvalidField::new(
                "parallel.grad_bytes",
                par.grad_bytes,
                "2 (16-bit gradients) or 4 (fp32 gradients)",
            ));
        }
        if let Some(limit) = plan.mem_limit {
            positive_f64("plan.mem_limit", limit)?;
        }
        if let Some(g) = plan.group_size {
            positive("plan.group_size", u64::from(g), limits::DEGREE)?;
        }
        if let Some(k) = plan.offload_chunks {
            positive("plan.offload_chunks", u64::from(k), limits::DEGREE)?;
        }
        super::validate_job::check_job(self)?;
        super::validate_moe::check_layout(self)?;
        if let Some(profile) = &self.profile {
            profile.validate()?;
        }
        Ok(())
    }
}
