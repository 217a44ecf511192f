//! The sources' closed-form estimators (Korthikanti et al.'s per-layer formulas, Megatron's
//! theoretical memory estimator), kept beside the engine so users can compare both numbers.
