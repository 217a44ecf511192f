//! The arguments of Megatron-LM's `pretrain_gpt.py` for a scenario, one group per concern,
//! each written as a bash array (`MODEL_PARALLEL_ARGS=( ... )`) as Megatron's own example
//! scripts are. A new dimension of the scenario is a line in its group's function, written
//! with [`Group::switch_if`] / [`Group::value_if`] so that a default writes nothing (for
//! example `.value_if(p.cp > 1, "--context-parallel-size", p.cp)` in [`model_parallel`]):
//! parallel sizes (context, expert) in [`model_parallel`], the model's shape (experts, latent
//! attention, head size) in [`model`], number formats (fp8) in [`precision`], sharding and
//! the data-parallel overlaps in [`data_parallel`], variables Megatron reads from the
//! environment in [`environment`].
//!
//! Every flag written here must be in Megatron's parser and the set must pass the cross-flag
//! rules of its `validate_args`: the tests check both (the flag list in
//! `tests/megatron/flags.txt`, kept from Megatron's `arguments.py`; the rules in
//! `tests/suite/megatron_common`), over every preset.

use std::fmt::Display;

use crate::scenario::{AttentionBackend, ModelStyle, P2p, Scenario};

/// One argument: a flag and its values (none for a switch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The flag, `--num-layers`.
    pub flag: &'static str,
    /// Its values, each one shell word.
    pub values: Vec<String>,
}

/// A named group of arguments: one bash array of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The array's name, `MODEL_PARALLEL_ARGS`.
    pub name: &'static str,
    /// Its arguments, in order.
    pub args: Vec<Arg>,
}

impl Group {
    /// An empty group called `name`.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            args: Vec::new(),
        }
    }

    /// Adds the switch `flag`.
    pub fn switch(&mut self, flag: &'static str) -> &mut Self {
        self.args.push(Arg {
            flag,
            values: Vec::new(),
        });
        self
    }

    /// Adds the switch `flag` when `on`.
    pub fn switch_if(&mut self, on: bool, flag: &'static str) -> &mut Self {
        if on {
            self.switch(flag);
        }
        self
    }

    /// Adds `flag value`.
    pub fn value(&mut self, flag: &'static str, value: impl Display) -> &mut Self {
        self.values(flag, [value])
    }

    /// Adds `flag value` when `on`.
    pub fn value_if(&mut self, on: bool, flag: &'static str, value: impl Display) -> &mut Self {
        if on {
            self.value(flag, value);
        }
        self
    }

    /// Adds `flag value value ...`.
    pub fn values<T: Display>(
        &mut self,
        flag: &'static str,
        values: impl IntoIterator<Item = T>,
    ) -> &mut Self {
        self.args.push(Arg {
            flag,
            values: values.into_iter().map(|v| v.to_string()).collect(),
        });
        self
    }
}

/// Parallel sizes and the layer layout of the pipeline.
pub fn model_parallel(s: &Scenario, layout: &str) -> Group {
    let p = &s.parallel;
    let mut g = Group::new("MODEL_PARALLEL_ARGS");
    g.value("--tensor-model-parallel-size", p.tp)
        .value("--pipeline-model-parallel-size", p.pp)
        .value("--pipeline-model-parallel-layout", layout)
        // Megatron turns sequence parallelism off itself at t = 1 (with a warning).
        .switch_if(p.sequence_parallel && p.tp > 1, "--sequence-parallel")
        // Ring attention with the K/V exchanged point to point (Transformer Engine's p2p,
        // what pipescope models).
        .value_if(p.cp > 1, "--context-parallel-size", p.cp)
        .value_if(p.cp > 1, "--cp-comm-type", "p2p")
        .switch_if(s.plan.tp_comm_overlap, "--tp-comm-overlap");
    if s.model.moe.is_some() {
        // Megatron's expert tensor-parallel size defaults to t: written whenever it differs.
        g.value_if(p.ep > 1, "--expert-model-parallel-size", p.ep)
            .value_if(p.etp != p.tp, "--expert-tensor-parallel-size", p.etp);
    }
    g
}

/// How Megatron runs the stage-to-stage sends pipescope modelled ([`crate::scenario::P2p`]),
/// for a script whose pipeline is `interleaved` (several virtual stages per rank) or not.
/// Megatron overlaps them only in its interleaved schedule, where it is the default
/// (`overlap_p2p_comm`; `--no-overlap-p2p-communication` turns to batched sends that are
/// waited for, which needs p > 2); its plain 1F1B always batches and waits. Returns the
/// switch to write, if any, and a `#` line when Megatron cannot run the sends as modelled.
pub fn pipeline_sends(s: &Scenario, interleaved: bool) -> (Option<&'static str>, Option<String>) {
    let (pp, p2p) = (s.parallel.pp, s.plan.p2p);
    if pp <= 1 {
        return (None, None);
    }
    match (p2p, interleaved) {
        (P2p::Overlapped, true) | (P2p::Blocking, false) => (None, None),
        (P2p::Blocking, true) if pp > 2 => (Some("--no-overlap-p2p-communication"), None),
        (P2p::Blocking, true) => (
            None,
            Some(
                "p2p blocking: Megatron's interleaved schedule refuses \
                 --no-overlap-p2p-communication at p 2 (two ranks would exchange several \
                 sends per batch), so it runs its default overlapped sends"
                    .into(),
            ),
        ),
        (P2p::Overlapped, false) => (
            None,
            Some(
                "p2p overlapped: Megatron overlaps stage-to-stage sends only in its interleaved \
                 schedule; its 1F1B batches them and waits (as --p2p blocking models)"
                    .into(),
            ),
        ),
    }
}

/// A mixture of experts (the alltoall dispatcher, or DeepEP's flex dispatcher with its
/// multiprocessors, with grouped GEMMs and balanced routing, as pipescope costs them,
/// group-limited when the model groups its experts), multi-head latent attention, QK-norm and
/// multi-token prediction.
fn moe_and_attention(g: &mut Group, s: &Scenario) {
    let m = &s.model;
    if let Some(e) = m.moe {
        let moe_layers = m.layers - e.dense_layers;
        g.value("--num-experts", e.experts)
            .value("--moe-router-topk", e.experts_per_token)
            .value("--moe-ffn-hidden-size", e.expert_ffn)
            .value_if(
                e.shared_experts > 0,
                "--moe-shared-expert-intermediate-size",
                e.shared_experts * e.expert_ffn,
            )
            .value_if(
                e.dense_layers > 0,
                "--moe-layer-freq",
                format!("([0]*{}+[1]*{moe_layers})", e.dense_layers),
            )
            .value_if(
                e.groups.is_some(),
                "--moe-router-num-groups",
                e.groups.map_or(0, |g| g.expert_groups),
            )
            .value_if(
                e.groups.is_some(),
                "--moe-router-group-topk",
                e.groups.map_or(0, |g| g.groups_per_token),
            )
            .switch("--moe-grouped-gemm")
            .value(
                "--moe-token-dispatcher-type",
                if s.plan.deepep { "flex" } else { "alltoall" },
            )
            .switch_if(s.plan.deepep, "--moe-enable-deepep")
            // The dispatch's multiprocessors where the scenario moves them off DeepEP's own
            // default (Megatron-Core's `moe_flex_dispatcher_num_sms`; unset, the backend
            // keeps its 20). Without `deepep` the model takes none, and the flag has no
            // dispatcher to act on.
            .value_if(
                s.plan.deepep
                    && s.plan.flex_dispatcher_num_sms != crate::scenario::DEEPEP_DEFAULT_SMS,
                "--moe-flex-dispatcher-num-sms",
                s.plan.flex_dispatcher_num_sms,
            )
            // pipescope's default routing is balanced, as the force-balanced benchmarks run.
            .switch_if(
                s.plan.routing_imbalance == 1.0,
                "--moe-router-force-load-balancing",
            );
    }
    if let Some(a) = m.mla {
        g.switch("--multi-latent-attention")
            .value_if(
                a.q_lora_rank.is_some(),
                "--q-lora-rank",
                a.q_lora_rank.unwrap_or(0),
            )
            .value("--kv-lora-rank", a.kv_lora_rank)
            .value("--qk-head-dim", a.qk_head_dim)
            .value("--qk-pos-emb-head-dim", a.qk_rope_dim)
            .value("--v-head-dim", a.v_head_dim);
    }
    // Qwen3's per-head q/k norms, and MLA's norms of the q and kv latents.
    g.switch_if(m.qk_norm || m.mla.is_some(), "--qk-layernorm")
        .value_if(m.mtp_layers > 0, "--mtp-num-layers", m.mtp_layers);
}

/// The model's shape: sizes, attention, MLP, norms, positions, embeddings.
pub fn model(s: &Scenario) -> Group {
    let m = &s.model;
    let llama = m.style == ModelStyle::Llama;
    let (positions, norm, dropout) = match m.style {
        ModelStyle::Gpt => ("learned_absolute", "LayerNorm", "0.1"),
        ModelStyle::Llama => ("rope", "RMSNorm", "0.0"),
    };
    let mut g = Group::new("GPT_MODEL_ARGS");
    g.value("--num-layers", m.layers)
        .value("--hidden-size", m.hidden)
        .value("--num-attention-heads", m.heads)
        // The head size when it is not hidden / heads (Qwen3's).
        .value_if(m.head_dim.is_some(), "--kv-channels", m.head_dim())
        .switch_if(m.kv_heads != m.heads, "--group-query-attention")
        .value_if(m.kv_heads != m.heads, "--num-query-groups", m.kv_heads)
        .value("--ffn-hidden-size", m.ffn)
        .switch_if(llama, "--swiglu")
        .switch_if(llama, "--disable-bias-linear")
        .value("--normalization", norm)
        .value("--position-embedding-type", positions)
        .value_if(
            llama && m.rope_theta.is_some(),
            "--rotary-base",
            m.rope_theta.unwrap_or(0),
        )
        .value("--seq-length", s.batch.seq_len)
        .value(
            "--max-position-embeddings",
            m.max_positions.unwrap_or(s.batch.seq_len),
        )
        .value("--attention-dropout", dropout)
        .value("--hidden-dropout", dropout)
        .switch_if(!m.tied_embeddings, "--untie-embeddings-and-output-weights")
        // FlashAttention-style fused attention (`auto`: Transformer Engine picks cuDNN's
        // fused kernel on Hopper and later; `flash`: the flash-attn package, what
        // `attention_backend = "flash2"` models), or the softmax materialised.
        .value(
            "--attention-backend",
            match (s.plan.flash_attention, s.plan.attention_backend) {
                (false, _) => "unfused",
                (true, AttentionBackend::Cudnn) => "auto",
                (true, AttentionBackend::Flash2) => "flash",
            },
        );
    moe_and_attention(&mut g, s);
    g
}

/// Number formats: bf16 weights and activations; 16-bit gradients with `--grad-bytes 2`;
/// bf16 Adam moments with `--moment-bytes 2` (Megatron's precision-aware optimizer);
/// under fp8 the GPU's Transformer Engine recipe (`gpu.fp8_recipe`): delayed scaling with
/// E4M3 forward and E5M2 gradients (`hybrid`) on Hopper, MXFP8 block scaling in E4M3 on
/// Blackwell (as Megatron-Bridge's `bf16_with_mxfp8_mixed` sets it).
pub fn precision(s: &Scenario) -> Group {
    let fp8 = s.parallel.precision.is_fp8();
    let recipe = s.gpu.fp8_recipe;
    let delayed = fp8 && recipe == crate::scenario::Fp8Recipe::Delayed;
    let bf16_moments = s.parallel.moment_bytes == 2;
    let mut g = Group::new("MIXED_PRECISION_ARGS");
    g.switch("--bf16")
        .switch_if(s.parallel.grad_bytes == 2, "--grad-reduce-in-bf16")
        .switch_if(bf16_moments, "--use-precision-aware-optimizer")
        .value_if(bf16_moments, "--exp-avg-dtype", "bf16")
        .value_if(bf16_moments, "--exp-avg-sq-dtype", "bf16")
        .value_if(fp8, "--fp8-format", if delayed { "hybrid" } else { "e4m3" })
        .value_if(fp8, "--fp8-recipe", recipe.name())
        .value_if(delayed, "--fp8-amax-history-len", 1024)
        .value_if(delayed, "--fp8-amax-compute-algo", "max");
    g
}

/// Batch sizes, the length of the run, and the loss's fusion (`plan.cross_entropy_loss_fusion`;
/// Megatron's flag is off by default, pipescope's setting on).
pub fn training(s: &Scenario) -> Group {
    let b = &s.batch;
    let global = b.global_batch(s.parallel.dp);
    let mut g = Group::new("TRAINING_ARGS");
    g.value("--micro-batch-size", b.micro_batch_size)
        .value("--global-batch-size", global)
        .value("--train-iters", RUN_ITERATIONS)
        .value("--lr", "1.0e-4")
        .switch_if(
            s.plan.cross_entropy_loss_fusion,
            "--cross-entropy-loss-fusion",
        );
    g
}

/// Iterations of the timing run the script starts (mock data).
pub const RUN_ITERATIONS: u32 = 10;

/// The data-parallel side: the ZeRO stage and the overlaps of the gradient reduction and
/// the parameter all-gather. ZeRO-3 is Megatron-FSDP (`optim_grads_params`, its checkpoint
/// format, and the distributed optimizer its first version requires), which always overlaps
/// both; it runs its own gradient accumulation, not Transformer Engine's fused one, as its
/// user guide requires.
pub fn data_parallel(s: &Scenario) -> Group {
    let full = s.parallel.full_shard;
    let mut g = Group::new("DATA_PARALLEL_ARGS");
    g.switch_if(full, "--use-megatron-fsdp")
        .value_if(
            full,
            "--data-parallel-sharding-strategy",
            "optim_grads_params",
        )
        .value_if(full, "--ckpt-format", "fsdp_dtensor")
        .switch_if(
            full || !s.plan.gradient_accumulation_fusion,
            "--no-gradient-accumulation-fusion",
        )
        .switch_if(
            s.parallel.distributed_optimizer,
            "--use-distributed-optimizer",
        )
        .switch_if(s.plan.overlap_grad_reduce || full, "--overlap-grad-reduce")
        .switch_if(
            s.plan.overlap_grad_reduce && !full && !s.plan.align_grad_reduce,
            "--no-align-grad-reduce",
        )
        .switch_if(
            s.plan.overlap_param_gather || full,
            "--overlap-param-gather",
        );
    g
}

/// Mock data with the model's vocabulary (Megatron pads it to a multiple of `128 t` as
/// pipescope does), and a line of log per iteration to read the time from.
pub fn data(s: &Scenario) -> Group {
    let mut g = Group::new("DATA_ARGS");
    g.switch("--mock-data")
        .value("--tokenizer-type", "NullTokenizer")
        .value("--vocab-size", s.model.vocab)
        .value("--log-interval", 1);
    g
}

/// The environment `pretrain_gpt.py` needs: `(name, value, why)`.
pub fn environment(s: &Scenario) -> Vec<(&'static str, String, &'static str)> {
    let mut env = Vec::new();
    // validate_args asserts it before Blackwell whenever t or cp > 1: the tensor-parallel
    // collectives are ordered against their GEMMs through a single connection. Megatron-FSDP
    // asserts the opposite (it only warns that the two want different settings).
    if (s.parallel.tp > 1 || s.parallel.cp > 1) && !s.parallel.full_shard {
        env.push((
            "CUDA_DEVICE_MAX_CONNECTIONS",
            "1".to_string(),
            "tensor or context parallelism: Megatron requires one connection (before Blackwell)",
        ));
    }
    env
}

/// The launcher's shape for `gpus` ranks on hosts of `host_gpus` GPUs: `(per host, hosts)`.
/// torchrun starts the same number of ranks on every host, so a job that does not fill
/// whole hosts uses the largest count that divides both the job and the host.
pub fn nodes(gpus: u64, host_gpus: u32) -> (u64, u64) {
    let node = u64::from(host_gpus.max(1));
    if gpus <= node {
        return (gpus.max(1), 1);
    }
    let (mut a, mut b) = (gpus, node);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    (a, gpus / a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torchrun starts as many ranks on every node: a job larger than a node takes the
    /// largest count that divides it.
    #[test]
    fn a_job_spans_whole_nodes_of_equal_size() {
        assert_eq!(nodes(12, 8), (4, 3));
        assert_eq!(nodes(4, 8), (4, 1));
        assert_eq!(nodes(64, 8), (8, 8));
        // A GB200 NVL72 rack: four GPUs per host whatever the NVLink domain.
        assert_eq!(nodes(72, 4), (4, 18));
        assert_eq!(nodes(1024, 4), (4, 256));
        assert_eq!(nodes(6, 4), (2, 3));
    }
}
