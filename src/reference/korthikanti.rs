//! Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
//! Models": Table 2's activation bytes per layer and Figure 1's per-GPU memory
//! (costmodel.md 2.3.1 and V1). 2-byte activations, 1-byte dropout masks, no FlashAttention.

/// The parallelism and recomputation settings of Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// No parallelism: `sbh (34 + 5as/h)`.
    None,
    /// Tensor parallel: `sbh (10 + 24/t + 5as/(ht))`.
    Tp,
    /// Tensor + sequence parallel: `sbh/t (34 + 5as/h)`.
    TpSp,
    /// Tensor parallel + selective recomputation: `sbh (10 + 24/t)`.
    TpSelective,
    /// Tensor + sequence parallel + selective recomputation: `34 sbh / t`.
    TpSpSelective,
    /// Full recomputation (the layer input only): `2 sbh`.
    Full,
}

/// Activation bytes of one layer per micro-batch.
pub fn layer_activation_bytes(s: f64, b: f64, h: f64, a: f64, t: f64, setting: Setting) -> f64 {
    let sbh = s * b * h;
    let attn = 5.0 * a * s / h;
    match setting {
        Setting::None => sbh * (34.0 + attn),
        Setting::Tp => sbh * (10.0 + 24.0 / t + attn / t),
        Setting::TpSp => sbh / t * (34.0 + attn),
        Setting::TpSelective => sbh * (10.0 + 24.0 / t),
        Setting::TpSpSelective => 34.0 * sbh / t,
        Setting::Full => 2.0 * sbh,
    }
}

/// The interleaved schedule's memory factor on the first stage: `1 + (p-1)/(p v)` for
/// `v > 1` chunks, else 1.
pub fn interleave_penalty(p: f64, v: f64) -> f64 {
    if v > 1.0 {
        1.0 + (p - 1.0) / (p * v)
    } else {
        1.0
    }
}

/// Figure 1's activation bytes on the first stage: `L` layers' worth (1F1B holds p
/// micro-batches of L/p layers) times the interleave penalty.
#[allow(clippy::too_many_arguments)]
pub fn fig1_activation_bytes(
    s: f64,
    b: f64,
    h: f64,
    a: f64,
    t: f64,
    layers: f64,
    p: f64,
    v: f64,
    setting: Setting,
) -> f64 {
    layer_activation_bytes(s, b, h, a, t, setting) * layers * interleave_penalty(p, v)
}

/// Figure 1's parameters + optimizer bytes per GPU: `12 L h^2 / (t p)` parameters at 18
/// bytes each (no embeddings, biases or norms).
pub fn fig1_params_optimizer_bytes(layers: f64, h: f64, t: f64, p: f64) -> f64 {
    12.0 * layers * h * h / (t * p) * 18.0
}
