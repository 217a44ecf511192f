//! The sources' closed-form estimators (Korthikanti et al.'s per-layer formulas, Megatron's
//! theoretical memory estimator), kept as test oracles beside the engine (the module is
//! built for tests only): the tests pin them to the published values and compare the
//! engine's fuller accounting with them, stating how it differs. They are deliberately
//! coarser than the anatomy (no embeddings' full accounting, no GQA or SwiGLU's extra tensor,
//! no logits on the last stage).

pub mod korthikanti;
pub mod megatron;
#[cfg(test)]
mod tests;

/// Bytes per MiB.
pub const MIB: f64 = 1_048_576.0;
/// Bytes per GiB (the one constant of the scenario, re-exported for the reference tables).
pub use crate::scenario::GIB;
