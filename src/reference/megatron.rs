//! Megatron-LM's theoretical memory estimator (`megatron/training/theoretical_memory_usage.py`,
//! the variant that divides every parameter by t; costmodel.md 2.2, 2.4 and V5): weights and
//! optimizer on the most loaded shard (the first stage) and activations of the first stage.

/// The Megatron arguments the estimator reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MegatronArgs {
    /// `--seq-length`.
    pub seq_length: f64,
    /// `--micro-batch-size`.
    pub micro_batch_size: f64,
    /// `--hidden-size`.
    pub hidden: f64,
    /// `--num-layers`.
    pub layers: f64,
    /// `--num-attention-heads`.
    pub heads: f64,
    /// `--num-query-groups` (kv heads; equal to heads without GQA).
    pub kv_heads: f64,
    /// `--kv-channels` (head dimension).
    pub kv_channels: f64,
    /// `--ffn-hidden-size`.
    pub ffn: f64,
    /// The padded vocabulary.
    pub padded_vocab: f64,
    /// Tensor-parallel size.
    pub tp: f64,
    /// Pipeline-parallel size.
    pub pp: f64,
    /// Virtual pipeline chunks (`None` without interleaving).
    pub vpp: Option<f64>,
    /// Data-parallel size.
    pub dp: f64,
    /// Micro-batches per iteration, when known.
    pub micro_batches: Option<f64>,
    /// `--sequence-parallel`.
    pub sequence_parallel: bool,
    /// `--recompute-granularity selective`.
    pub selective: bool,
    /// `--swiglu`.
    pub swiglu: bool,
    /// `--untie-embeddings-and-output-weights`.
    pub untied: bool,
    /// RMSNorm (one weight) rather than LayerNorm (weight and bias).
    pub rmsnorm: bool,
    /// `--use-distributed-optimizer`.
    pub distributed_optimizer: bool,
}

/// Parameters of all transformer layers plus the final norm (no biases).
pub fn transformer_params(a: &MegatronArgs) -> f64 {
    let h = a.hidden;
    let norm_size = if a.rmsnorm { 1.0 } else { 2.0 };
    let gated = if a.swiglu { 1.5 } else { 1.0 };
    let q_ratio = a.kv_channels * a.heads / h;
    let attention = 2.0 * h * h * (1.0 + a.kv_heads / a.heads) * q_ratio;
    let mlp = 2.0 * h * a.ffn * gated;
    let norms = 2.0 * h * norm_size;
    a.layers * (attention + mlp + norms) + h * norm_size
}

/// Weights + gradients + optimizer bytes on the most loaded shard: `(transformer/p + V h)/t`
/// parameters (plus the output layer when untied on one stage) at 18 bytes, or
/// `6 + 12/dp` with the distributed optimizer.
pub fn weight_and_optimizer_bytes(a: &MegatronArgs) -> f64 {
    let embedding = a.hidden * a.padded_vocab;
    let mut params = (transformer_params(a) / a.pp + embedding) / a.tp;
    if a.untied && a.pp == 1.0 {
        params += embedding / a.tp;
    }
    let per_param = if a.distributed_optimizer {
        6.0 + 12.0 / a.dp
    } else {
        18.0
    };
    params * per_param
}

/// Activation bytes of the first stage. Exact Korthikanti only for SP + selective; every
/// other case uses the TP + selective row times 1.05, as Megatron does.
pub fn activation_bytes(a: &MegatronArgs) -> f64 {
    let (s, b, h, p, t) = (a.seq_length, a.micro_batch_size, a.hidden, a.pp, a.tp);
    let sbh = s * b * h;
    let outside = 8.0 * s * b * p + sbh * p;
    let penalty = |act: f64| match a.vpp {
        Some(v) => act * (1.0 + (p - 1.0) / (p * v)),
        None => match a.micro_batches {
            Some(m) if p > 1.0 => act * (m / p).min(1.0),
            _ => act,
        },
    };
    if a.sequence_parallel && a.selective {
        let mut act = sbh * (18.0 + 4.0 * a.ffn / h) * a.layers + outside;
        act = penalty(act);
        if p == 1.0 {
            act += sbh * 4.0 * (1.0 + a.padded_vocab / h);
        }
        act / t
    } else {
        let mut act = sbh * (10.0 + 24.0 / t) * a.layers + outside;
        act = penalty(act);
        if p == 1.0 {
            act += 2.0 * (s * b * a.padded_vocab / t + sbh);
        }
        act * 1.05
    }
}
