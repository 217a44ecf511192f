//! [`Scenario::validate`]: every value that is not allowed is refused with the field, the value
//! and what would be accepted. A memory budget that a stage cannot meet is *not* an input
//! error (it makes the outcome infeasible), so it is not checked here.

use super::magnitude::{check_activations, check_parameters};
use super::{GpuSpec, InvalidField, ModelSpec, Scenario, ranges};

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

/// A memory limit in chunk-activations: above 0, and at most 1e9 (far above any 2p).
fn memory_limit(field: &str, value: f64) -> Result<(), InvalidField> {
    if !(value > 0.0 && value <= 1e9) {
        return Err(InvalidField::new(
            field,
            super::ranges::number_text(value),
            "a number of chunk-activations greater than 0 and at most 1e9",
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

/// Refuses a preset name with a control character (a newline, a tab, an escape): names are
/// listed one per line in tables and shown in the UI's fields.
pub fn check_name(field: &str, name: &str) -> Result<(), InvalidField> {
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        return Err(InvalidField::new(
            field,
            format!("{name:?}"),
            "a name that is not empty and has no control characters (newlines, tabs, escapes)",
        ));
    }
    Ok(())
}

/// Checks a model shape on its own (no parallel layout): its name, every number in its range
/// (`ranges.rs`), then how they relate.
pub fn validate_model(m: &ModelSpec) -> Result<(), InvalidField> {
    check_name("model.name", &m.name)?;
    super::ranges::check_model(m)?;
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
    if let Some(theta) = m.rope_theta
        && m.style != super::ModelStyle::Llama
    {
        return Err(InvalidField::new(
            "model.rope_theta",
            theta,
            "left out for a gpt-style model: it has learned positions, not RoPE",
        ));
    }
    super::validate_moe::check_model(m)?;
    check_parameters(m)
}

/// Checks a GPU's figures (every number in its range, `ranges.rs`), its efficiency curve and
/// its codec.
pub fn validate_gpu(g: &GpuSpec) -> Result<(), InvalidField> {
    check_name("gpu.name", &g.name)?;
    super::ranges::check_gpu(g)?;
    if g.host_duplex_gbps > g.host_gbps {
        return Err(InvalidField::new(
            "gpu.host_duplex_gbps",
            g.host_duplex_gbps,
            format!(
                "at most host_gbps ({}): a direction shared with the other one carries no more \
                 than alone",
                g.host_gbps
            ),
        ));
    }
    g.codec.validate("gpu.codec")?;
    for (i, c) in g.codecs.iter().enumerate() {
        c.validate(&format!("gpu.codecs[{i}]"))?;
        if g.codecs[..i].iter().any(|o| o.name == c.name) {
            return Err(InvalidField::new(
                format!("gpu.codecs[{i}].name"),
                &c.name,
                "a name no other codec of the GPU has",
            ));
        }
    }
    Ok(())
}

impl Scenario {
    /// Checks the expert layout alone (`ep`, `etp` and the routing imbalance against the model
    /// and a stage's `t x cp x d` GPUs), as [`Scenario::validate`] does: for an editor that
    /// changes one of them and words a refusal as the command line does.
    pub fn check_expert_layout(&self) -> Result<(), InvalidField> {
        super::validate_moe::check_layout(self)
    }

    /// Checks every field; the first value that is not allowed is returned as an error.
    pub fn validate(&self) -> Result<(), InvalidField> {
        check_name("name", &self.name)?;
        validate_model(&self.model)?;
        validate_gpu(&self.gpu)?;
        super::validate_moe::check_imbalance(self)?;
        let m = &self.model;
        let par = &self.parallel;
        // Attention and MLP blocks: the planner gives each stage at least one (the embedding
        // and the head ride with the first and last stage), so 2L is the most stages.
        let blocks = 2 * u64::from(m.chain_layers());
        ranges::TP.check_count(u64::from(par.tp))?;
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
        ranges::PP.check_count(u64::from(par.pp))?;
        if u64::from(par.pp) > blocks {
            return Err(InvalidField::new(
                "parallel.pp",
                par.pp,
                format!(
                    "at most the number of attention and MLP blocks 2L = {blocks} (every stage holds at least one)"
                ),
            ));
        }
        ranges::DP.check_count(u64::from(par.dp))?;
        ranges::CHUNKS.check_count(u64::from(par.chunks))?;
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
        ranges::SEQ_LEN.check_count(b.seq_len)?;
        ranges::MICRO_BATCH_SIZE.check_count(b.micro_batch_size)?;
        ranges::MICRO_BATCHES.check_count(u64::from(b.micro_batches))?;
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
        if !matches!(par.moment_bytes, 2 | 4) {
            return Err(InvalidField::new(
                "parallel.moment_bytes",
                par.moment_bytes,
                "2 (bf16 Adam moments) or 4 (fp32 Adam moments)",
            ));
        }
        if plan.activation_func_fp8_input_store
            && self.model.style != crate::scenario::ModelStyle::Llama
        {
            return Err(InvalidField::new(
                "plan.activation_func_fp8_input_store",
                true,
                format!(
                    "false for {}: it keeps the input of a SwiGLU in fp8, and this model's MLP \
                     runs GeLU (Megatron-Core applies it to SwiGLU only)",
                    self.model.name
                ),
            ));
        }
        if let Some(limit) = plan.mem_limit {
            memory_limit("plan.mem_limit", limit)?;
        }
        if let Some(g) = plan.group_size {
            ranges::GROUP_SIZE.check_count(u64::from(g))?;
        }
        if let Some(k) = plan.offload_chunks {
            ranges::OFFLOAD_CHUNKS.check_count(u64::from(k))?;
        }
        ranges::DEVICE_MAX_CONNECTIONS.check_count(u64::from(plan.device_max_connections))?;
        super::validate_job::check_job(self)?;
        super::validate_moe::check_layout(self)?;
        if let Some(profile) = &self.profile {
            profile.validate()?;
        }
        Ok(())
    }
}
