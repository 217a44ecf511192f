//! The sources' closed-form estimators (Korthikanti et al.'s per-layer formulas, Megatron's
//! theoretical memory estimator), kept beside the engine so users can compare both numbers.
//! They are deliberately coarser than the anatomy (no embeddings' full accounting, no GQA
//! or SwiGLU's extra tensor, no logits on the last stage); tests pin them to the published
//! values (costmodel.md V1 and V5) and state how the engine differs.

pub mod korthikanti;
pub mod megatron;

/// Bytes per MiB.
pub const MIB: f64 = 1_048_576.0;
/// Bytes per GiB (the one constant of the scenario, re-exported for the reference tables).
pub use crate::scenario::GIB;
