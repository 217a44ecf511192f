//! Small hand-made anatomies for the planner's tests.

use crate::anatomy::{Anatomy, Block, BlockKind, Unit};

/// A unit with the given bytes and recompute time; a `*mask` unit does not shrink when
/// compressed (1-byte values), the others about halve.
pub fn unit(name: &str, size: u64, forced: bool, fwd: f64) -> Unit {
    let mask = name.ends_with("mask");
    Unit {
        name: name.into(),
        size_bytes: size,
        forced,
        forward_flops: fwd * 1e12,
        forward_bytes: 0.0,
        forward_s: fwd,
        backward_s: 2.0 * fwd,
        needed_by_w: !forced,
        core_attention: name == "core_attn",
        selective_rerun: false,
        named: false,
        compressed_bytes: if mask { size } else { size / 2 + size / 64 + 3 },
        codec_s: if mask { 0.0 } else { fwd * 0.2 },
        outlier_sensitive: false,
        codecs: if mask {
            vec![None]
        } else {
            vec![Some(crate::anatomy::UnitCodec {
                compressed_bytes: size / 2 + size / 64 + 3,
                codec_s: fwd * 0.2,
            })]
        },
    }
}

fn block(kind: BlockKind, units: Vec<Unit>, static_bytes: u64, f: f64) -> Block {
    Block {
        kind,
        units,
        params: 0,
        static_bytes,
        forward_s: f,
        backward_b_s: f,
        backward_w_s: f,
        backward_b_comm_s: 0.0,
        backward_w_comm_s: 0.0,
        tp_comm: Default::default(),
        cp_comm: Default::default(),
        dp_comm: Default::default(),
        backward_b_hidden_s: 0.0,
        backward_w_hidden_s: 0.0,
        ep_comm: Default::default(),
        model_forward_flops: f * 1e12,
        fp8_weight_bytes: 0,
        expert_params: 0,
    }
}

/// A GPT-like anatomy of `layers` layers with sizes in units of `x` bytes (plus an odd
/// log-sum-exp term) and the given static bytes per block.
pub fn gpt_like(layers: u32, x: u64, static_bytes: u64) -> Anatomy {
    let attention = block(
        BlockKind::Attention,
        vec![
            unit("input", 2 * x, true, 0.0),
            unit("ln_out", 2 * x, false, 0.05),
            unit("q", 2 * x, false, 0.2),
            unit("k", 2 * x, false, 0.2),
            unit("v", 2 * x, false, 0.2),
            unit("core_attn", 2 * x + 3 * (x / 64) + 5, false, 1.0),
            unit("out_dropout_mask", x, false, 0.02),
        ],
        static_bytes,
        2.0,
    );
    let mlp = block(
        BlockKind::Mlp,
        vec![
            unit("input", 2 * x, true, 0.3),
            unit("ln_out", 2 * x, false, 0.05),
            unit("fc1_out", 8 * x, false, 0.8),
            unit("gelu_out", 8 * x, false, 0.1),
            unit("out_dropout_mask", x, false, 0.02),
        ],
        2 * static_bytes,
        2.5,
    );
    let embedding = block(
        BlockKind::Embedding,
        vec![
            unit("tokens", 4 * x, true, 0.0),
            unit("dropout_mask", x, false, 0.01),
        ],
        3 * static_bytes,
        0.3,
    );
    let head = block(
        BlockKind::Head,
        vec![
            unit("input", 2 * x, true, 0.0),
            unit("norm_out", 2 * x, false, 0.05),
        ],
        3 * static_bytes,
        1.5,
    );
    Anatomy {
        layers,
        main_layers: layers,
        dense_layers: layers,
        embedding,
        attention,
        mlp,
        moe: Block::empty(BlockKind::Moe),
        mtp: Block::empty(BlockKind::Mtp),
        head,
        logits_transient_bytes: 5 * x,
        p2p_bytes: 2 * x,
        p2p_intra_s: 0.01,
        p2p_inter_s: 0.05,
        device_bytes: 0,
        pass_gather_s: 0.0,
        host_bytes_per_s: x as f64 * 4.0,
        host_paired_bytes_per_s: x as f64 * 4.0,
        host_solo_bytes_per_s: x as f64 * 4.0,
        node_gpus: 8,
        codec_names: vec!["half".into()],
        ep_comm_sm_share: 0.0,
    }
}

/// A smaller anatomy (fewer unit kinds) for exhaustive checks.
pub fn small(layers: u32, x: u64, static_bytes: u64) -> Anatomy {
    let mut a = gpt_like(layers, x, static_bytes);
    a.attention.units = vec![
        unit("input", 2 * x, true, 0.0),
        unit("q", 2 * x, false, 0.2),
        unit("core_attn", 2 * x + 3 * (x / 64) + 5, false, 1.0),
        unit("out_dropout_mask", x, false, 0.02),
    ];
    a.mlp.units = vec![
        unit("input", 2 * x, true, 0.3),
        unit("fc1_out", 8 * x, false, 0.8),
        unit("gelu_out", 8 * x, false, 0.1),
    ];
    a
}
