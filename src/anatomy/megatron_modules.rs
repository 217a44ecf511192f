//! Megatron-LM's selective-recomputation modules (`--recompute-modules NAME ...`) and the
//! units each one recomputes, for layers built as Megatron builds them by default
//! (`--transformer-impl transformer_engine`: the norms fused into the GEMM after them).
//!
//! Read from Megatron-Core's `TransformerLayer` and `SelfAttention`: `core_attn` checkpoints
//! the core attention (its inputs q, k, v stay; its output stays as the out-projection's
//! input), `mlp` checkpoints the dense MLP module (its input, the residual stream, stays;
//! the bias-dropout-add after it is outside), and `layernorm` discards the output of a
//! separate norm module: dense Transformer Engine layers have none (the norm is part of the
//! next GEMM), but multi-head latent attention's input norm and a mixture of experts'
//! pre-MLP norm are modules of their own (their next layers are plain linears and the
//! router). From `MLASelfAttention` and `MoELayer`: `mla_up_proj` checkpoints the up
//! projections with their fused norms and RoPE (q, k and v and the normed latents),
//! `moe_act` the routed experts' activation, `moe` the whole MoE layer after its norm,
//! `shared_experts` the shared experts. `mlp` applies to dense MLPs only (Megatron-Core
//! turns it off for MoE layers). Megatron's `full` granularity is not a module: it
//! recomputes whole layers (see [`full_layer_recomputes`]).

use super::{BlockKind, Unit};

/// The residual dropout mask of a GPT sub-layer: written by the bias-dropout-add after the
/// sub-layer module, so no module's checkpoint holds it.
const RESIDUAL_MASK: &str = "out_dropout_mask";

/// One `--recompute-modules` name of Megatron-LM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecomputeModule {
    /// `core_attn`: the core attention (softmax and its dropout, or FlashAttention's saved
    /// output and statistics).
    CoreAttn,
    /// `layernorm`: the input and pre-MLP norms, when they are modules of their own.
    Layernorm,
    /// `mlp`: the dense MLP module (norm, first GEMM, activation).
    Mlp,
    /// `mla_up_proj`: multi-head latent attention's up projections (with their norms and
    /// RoPE).
    MlaUpProj,
    /// `moe_act`: the routed experts' activation.
    MoeAct,
    /// `moe`: the whole mixture-of-experts layer after its norm.
    Moe,
    /// `shared_experts`: the shared experts of a mixture of experts.
    SharedExperts,
}

/// Multi-head latent attention's units that `mla_up_proj` recomputes.
const MLA_UP_PROJ: [&str; 5] = ["q_ln_out", "kv_ln_out", "q_up", "k_up", "v_up"];

impl RecomputeModule {
    /// Every module, in the order Megatron's documentation lists them.
    pub const ALL: &'static [RecomputeModule] = &[
        Self::CoreAttn,
        Self::MlaUpProj,
        Self::Layernorm,
        Self::MoeAct,
        Self::Moe,
        Self::Mlp,
        Self::SharedExperts,
    ];

    /// The name Megatron's `--recompute-modules` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::CoreAttn => "core_attn",
            Self::Layernorm => "layernorm",
            Self::Mlp => "mlp",
            Self::MlaUpProj => "mla_up_proj",
            Self::MoeAct => "moe_act",
            Self::Moe => "moe",
            Self::SharedExperts => "shared_experts",
        }
    }

    /// The module called `name` on Megatron's command line.
    pub fn from_name(name: &str) -> Option<RecomputeModule> {
        Self::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Whether this module recomputes `unit` of a block of `kind` (instead of keeping it).
    pub fn recomputes(self, kind: BlockKind, unit: &Unit) -> bool {
        let attention = matches!(kind, BlockKind::Attention | BlockKind::Mtp);
        let name = unit.name.as_str();
        match self {
            Self::CoreAttn => attention && unit.core_attention,
            // Transformer Engine fuses the dense layers' norms into the GEMM after them (those
            // norm modules are identities); MLA's input norm and the MoE pre-MLP norm are not.
            Self::Layernorm => {
                (attention && name == "input_norm_out")
                    || (kind == BlockKind::Moe && name == "norm_out")
            }
            Self::Mlp => kind == BlockKind::Mlp && !unit.forced && name != RESIDUAL_MASK,
            Self::MlaUpProj => attention && MLA_UP_PROJ.contains(&name),
            Self::MoeAct => kind == BlockKind::Moe && name == "act_out",
            Self::Moe => {
                kind == BlockKind::Moe
                    && !unit.forced
                    && name != RESIDUAL_MASK
                    && name != "norm_out"
                    && !name.starts_with("shared_")
            }
            Self::SharedExperts => kind == BlockKind::Moe && name.starts_with("shared_"),
        }
    }
}

/// Whether Megatron's `full` granularity, recomputing a whole transformer layer from its
/// input, recomputes `unit` of a block of `kind`: everything of the layer's attention
/// block but its input, and everything of its MLP block (its input included: inside a
/// layer it is recomputed from the attention block). Embedding and head are outside.
pub fn full_layer_recomputes(kind: BlockKind, unit: &Unit) -> bool {
    match kind {
        BlockKind::Attention | BlockKind::Mtp => !unit.forced,
        BlockKind::Mlp | BlockKind::Moe => true,
        BlockKind::Embedding | BlockKind::Head => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::anatomy::Anatomy;
    use crate::scenario::{ModelStyle, default_scenario};

    fn names(a: &Anatomy, m: RecomputeModule) -> Vec<String> {
        [BlockKind::Attention, BlockKind::Mlp]
            .iter()
            .flat_map(|&k| {
                a.block_of(k)
                    .units
                    .iter()
                    .filter(move |u| m.recomputes(k, u))
                    .map(move |u| format!("{}.{}", k.name(), u.name))
            })
            .collect()
    }

    #[test]
    fn modules_cover_the_units_megatron_recomputes() {
        let mut s = default_scenario();
        s.model.style = ModelStyle::Gpt;
        s.plan.flash_attention = false;
        let gpt = Anatomy::build(&s).unwrap();
        assert_eq!(
            names(&gpt, RecomputeModule::CoreAttn),
            ["attention.softmax_out", "attention.attn_dropout"]
        );
        assert_eq!(
            names(&gpt, RecomputeModule::Mlp),
            ["mlp.ln_out", "mlp.fc1_out", "mlp.gelu_out"]
        );
        assert!(names(&gpt, RecomputeModule::Layernorm).is_empty());
        s.plan.flash_attention = true;
        s.model.style = ModelStyle::Llama;
        s.model.max_positions = None;
        let llama = Anatomy::build(&s).unwrap();
        assert_eq!(
            names(&llama, RecomputeModule::CoreAttn),
            ["attention.core_attn"]
        );
        assert_eq!(
            names(&llama, RecomputeModule::Mlp),
            ["mlp.norm_out", "mlp.gate_up", "mlp.swiglu_out"]
        );
        // The residual mask is a GPT unit: the name the MLP module leaves out exists.
        assert!(gpt.mlp.unit(RESIDUAL_MASK).is_some());
    }

    #[test]
    fn full_keeps_only_the_layer_input() {
        let a = Anatomy::build(&default_scenario()).unwrap();
        let kept: Vec<&str> = [BlockKind::Attention, BlockKind::Mlp]
            .iter()
            .flat_map(|&k| a.block_of(k).units.iter().map(move |u| (k, u)))
            .filter(|(k, u)| !full_layer_recomputes(*k, u))
            .map(|(_, u)| u.name.as_str())
            .collect();
        assert_eq!(kept, ["input"]);
    }
}
