//! [`Anatomy::build`]: the block chain of a scenario with sizes, FLOPs and times.

use super::cost::Machine;
use super::megatron_modules::RecomputeModule;
use super::outer;
use super::units::{self, Dims};
use super::{Anatomy, Block, BlockKind, params};
use crate::scenario::{Codec, InvalidField, ModelStyle, Scenario};

/// Without gradient accumulation fusion (`plan.gradient_accumulation_fusion = false`), each
/// micro-batch's weight gradient leaves its GEMM as a new 16-bit tensor and is added to the
/// accumulated gradient by a memory-bound pass: read the new gradient (2 bytes a parameter),
/// read and write the accumulated one (`grad_bytes` each). Megatron-LM of 2021 (the code of
/// Narayanan et al.'s runs, `--DDP-impl local` without contiguous buffers) zeroes gradients by
/// setting them to `None`, so PyTorch's autograd keeps the first micro-batch's gradient and adds
/// each later one into it in place: the pass runs on `m - 1` of the `m` micro-batches, and is
/// charged to every micro-batch's weight-gradient backward at `(m - 1) / m` of its time. The
/// routed experts' grouped GEMMs are timed as accumulating in the GEMM either way.
fn accumulate_outside_gemm(anatomy: &mut Anatomy, machine: &Machine, scenario: &Scenario) {
    if scenario.plan.gradient_accumulation_fusion {
        return;
    }
    let m = f64::from(scenario.batch.micro_batches.max(1));
    let share = (m - 1.0) / m;
    let per_param = 2.0 + 2.0 * f64::from(scenario.parallel.grad_bytes);
    for block in [
        &mut anatomy.embedding,
        &mut anatomy.attention,
        &mut anatomy.mlp,
        &mut anatomy.moe,
        &mut anatomy.mtp,
        &mut anatomy.head,
    ] {
        let params = block.params.saturating_sub(block.expert_params) as f64;
        block.backward_w_s += machine.mem(per_param * params).s * share;
    }
}

/// The embedding's weight gradient as PyTorch's `F.embedding` computes it (its backward,
/// `embedding_dense_backward` in `aten/src/ATen/native/cuda/Embedding.cu`, allocates the
/// gradient of the whole vocabulary-parallel table with `at::zeros` and scatters the tokens'
/// rows into it): a zero-filled 16-bit table each micro-batch, 2 bytes a parameter. No GEMM
/// accumulates it, so with gradient accumulation fusion on, Megatron-Core's gradient hook adds
/// it to the main gradient (`param.main_grad.add_(param.grad.data)` in
/// `megatron/core/distributed/distributed_data_parallel.py`, `_make_backward_post_hook`) on
/// every micro-batch: 2 + 2 `grad_bytes` bytes a parameter more. With it off, that add is
/// [`accumulate_outside_gemm`]'s. Both land in the embedding's weight-gradient backward.
fn embedding_gradient(anatomy: &mut Anatomy, machine: &Machine, scenario: &Scenario) {
    let params = anatomy.embedding.params as f64;
    let add = if scenario.plan.gradient_accumulation_fusion {
        machine
            .mem((2.0 + 2.0 * f64::from(scenario.parallel.grad_bytes)) * params)
            .s
    } else {
        0.0
    };
    anatomy.embedding.backward_w_s += machine.mem(2.0 * params).s + add;
}

impl Anatomy {
    /// Builds the units and costs of every block kind for `scenario` (validated first).
    /// Sizes are per device and per micro-batch after tensor- and sequence-parallel
    /// sharding; a measured profile in the scenario replaces the estimates it covers.
    pub fn build(scenario: &Scenario) -> Result<Anatomy, InvalidField> {
        scenario.validate()?;
        let m = &scenario.model;
        let par = &scenario.parallel;
        let batch = &scenario.batch;
        let t = u64::from(par.tp);
        let tf = t as f64;
        let vocab = params::padded_vocab(m.vocab, t);
        let head_dim = m.head_dim() as f64;
        let cp = u64::from(par.cp.max(1));
        let local_seq = batch.seq_len / cp;
        let tokens = (local_seq * batch.micro_batch_size) as f64;
        let cluster = super::cluster::Cluster::of(scenario);
        // A measured profile's codec replaces the GPU's set.
        let codecs = match scenario.profile.as_ref().and_then(|p| p.codec) {
            Some(c) => vec![Codec::single(c)],
            None => scenario.gpu.codec_set(),
        };
        let d = Dims {
            s: local_seq as f64,
            cp: cp as f64,
            cp_ring_bytes_per_s: cluster.cp_ring_bytes_per_s(),
            tp_overlap: scenario.plan.tp_comm_overlap,
            act_fp8_store: scenario.plan.activation_func_fp8_input_store,
            b: batch.micro_batch_size as f64,
            h: m.hidden as f64,
            tokens,
            tokens_sp: if par.sequence_parallel {
                tokens / tf
            } else {
                tokens
            },
            heads: m.heads as f64 / tf,
            head_dim,
            q_width: m.heads as f64 * head_dim / tf,
            kv_width: m.kv_heads as f64 * head_dim / tf,
            ffn: m.ffn as f64 / tf,
            vocab: vocab as f64 / tf,
            sp: par.sequence_parallel,
            flash: scenario.plan.flash_attention,
            style: m.style,
            codecs: &codecs,
            qk_norm: m.qk_norm,
            mla: m.mla.map(|a| super::mla::MlaDims {
                q_lora: a.q_lora_rank.map(|r| r as f64),
                kv_lora: a.kv_lora_rank as f64,
                nope: a.qk_head_dim as f64,
                rope: a.qk_rope_dim as f64,
                v: a.v_head_dim as f64,
            }),
        };
        let machine = Machine::new(&scenario.gpu, par.tp)
            .with_precision(par.precision)
            .with_attention_backend(scenario.plan.attention_backend);
        let bpp = params::bytes_per_param(scenario);
        let positions = match m.style {
            ModelStyle::Gpt => m.max_positions.unwrap_or(batch.seq_len),
            ModelStyle::Llama => 0,
        };
        let expert_bpp = params::expert_bytes_per_param(scenario);
        let ep_etp = u64::from(par.ep.max(1)) * u64::from(par.etp.max(1));
        // Parameters on a device and their static bytes: the routed experts (split over
        // `ep x etp`) at the expert data-parallel group's rate, the rest at the stage's.
        let per_device = |p: params::BlockParams| {
            let n = p.per_device(t, ep_etp);
            let experts = p.expert_per_device(ep_etp);
            let bytes =
                params::static_bytes(n - experts, bpp) + params::static_bytes(experts, expert_bpp);
            (n, bytes)
        };
        // Under the fp8 recipe each layer block also holds the fp8 cast of its linear
        // weights and its transpose (2 bytes a weight) through the iteration.
        let fp8_weights = |p: params::BlockParams| {
            if machine.fp8() {
                p.sharded / t.max(1) + p.expert_per_device(ep_etp)
            } else {
                0
            }
        };
        let (ap, asb) = per_device(params::attention(m));
        let (mp, msb) = per_device(params::mlp(m));
        let (a8, m8) = (
            fp8_weights(params::attention(m)),
            fp8_weights(params::mlp(m)),
        );
        let (ep, esb) = per_device(params::embedding(m, vocab, positions));
        let (hp, hsb) = per_device(params::head(m, vocab, par.pp));
        let moe_params = params::moe(m);
        let (xp, xsb) = per_device(moe_params);
        let x8 = fp8_weights(moe_params);
        let mut mtp_params = params::mtp(m, vocab);
        let embedding_beside_last = matches!(
            scenario.plan.schedule.placement(),
            crate::schedule::Placement::VShape | crate::schedule::Placement::Chimera
        );
        if par.pp <= 1 || embedding_beside_last {
            // One stage, or a placement that puts the last stage on the first device (V-shape,
            // DualPipe's): the MTP layer runs where the input embedding is, and looks the next
            // tokens up in it (as the tied head does): no copy. DeepSeek-V3's technical
            // report, section 3.2.3: DualPipe puts the shallowest and deepest layers on one
            // rank, "the physical sharing of parameters and gradients, of the shared
            // embedding and output head, between the MTP module and the main model".
            mtp_params.copy = 0;
        }
        let (tp_, tsb) = per_device(mtp_params);
        let t8 = fp8_weights(mtp_params);
        let moe_dims = m.moe.map(|e| {
            let (epf, etpf) = (f64::from(par.ep.max(1)), f64::from(par.etp.max(1)));
            super::moe::MoeDims {
                experts: e.experts as f64,
                local_experts: e.experts as f64 / epf,
                top_k: e.experts_per_token as f64,
                expert_ffn: e.expert_ffn as f64 / etpf,
                shared_ffn: (e.shared_experts * e.expert_ffn) as f64 / tf,
                etp: etpf,
                imbalance: super::routing::busiest_rank_load(
                    scenario.plan.routing_imbalance,
                    e.experts as f64,
                    epf,
                ),
                a2a: if scenario.plan.deepep {
                    cluster.ep_deepep_s_per_byte(
                        u64::from(par.ep),
                        u64::from(par.etp),
                        e.experts_per_token as f64,
                        e.groups,
                        scenario.gpu.link_gbps * 1e9,
                        scenario.gpu.inter_node_gbps * 1e9,
                    )
                } else {
                    let plain = cluster.ep_all_to_all_s(1.0, u64::from(par.ep), u64::from(par.etp));
                    super::expert_comm::DeepEpRates {
                        dispatch_s_per_byte: plain,
                        combine_s_per_byte: plain,
                    }
                },
                etp_s_per_byte: cluster.etp_gather_s(1.0, u64::from(par.etp)),
                fused_copies: scenario.plan.deepep && par.ep > 1,
                grad_bytes: f64::from(par.grad_bytes),
            }
        });
        let moe_block = match &moe_dims {
            Some(e) => super::moe::moe(&machine, &d, e, xp, xsb + 2 * x8),
            None => Block::empty(BlockKind::Moe),
        };
        let mtp_block = if m.mtp_layers > 0 {
            super::mtp::mtp(&machine, &d, tp_, tsb + 2 * t8)
        } else {
            Block::empty(BlockKind::Mtp)
        };
        // A dense model's MTP layers have a dense MLP as well.
        let dense_layers = m.moe.map_or(m.chain_layers(), |e| e.dense_layers);

        let p2p_bytes = 2.0 * d.tokens_sp * d.h;
        let host = HostRates::of(scenario);
        let link_eff = scenario.gpu.efficiency.link;
        // Megatron scatters a pipeline tensor that sequence parallelism has not already split
        // over the tensor-parallel ranks (each sends its 1/t over its own link), then
        // all-gathers it on the receiving node (docs/model.md, "Stage-to-stage transfers").
        let (p2p_wire_bytes, p2p_gather_s) = if !par.sequence_parallel && t > 1 {
            (p2p_bytes / tf, machine.gather(p2p_bytes).s)
        } else {
            (p2p_bytes, 0.0)
        };
        let mut anatomy = Anatomy {
            layers: m.chain_layers(),
            main_layers: m.layers,
            dense_layers,
            embedding: outer::embedding(&machine, &d, ep, esb),
            attention: units::attention(&machine, &d, ap, asb + 2 * a8),
            mlp: units::mlp(&machine, &d, mp, msb + 2 * m8),
            moe: moe_block,
            mtp: mtp_block,
            head: outer::head(&machine, &d, f64::from(1 + m.mtp_layers), hp, hsb),
            logits_transient_bytes: (10.0 * tokens * d.vocab).round() as u64,
            p2p_bytes: p2p_bytes.round() as u64,
            p2p_intra_s: p2p_wire_bytes / (scenario.gpu.link_gbps * 1e9 * link_eff) + p2p_gather_s,
            p2p_inter_s: p2p_wire_bytes
                / (scenario.gpu.inter_node_gbps * 1e9 * scenario.gpu.efficiency.network_link())
                + p2p_gather_s,
            host_bytes_per_s: host.shared,
            host_paired_bytes_per_s: host.paired,
            host_solo_bytes_per_s: host.solo,
            node_gpus: scenario.gpu.node_gpus,
            device_bytes: 0,
            pass_gather_s: 0.0,
            codec_names: codecs.iter().map(|c| c.name.clone()).collect(),
            ep_comm_sm_share: if m.moe.is_some() && par.ep > 1 && scenario.plan.deepep {
                super::expert_comm::deepep_sm_share(
                    scenario.gpu.sms,
                    scenario.plan.flex_dispatcher_num_sms,
                )
            } else {
                0.0
            },
        };
        if scenario.plan.device_max_connections > 1 {
            // Without the launch order one connection gives, nothing guarantees the
            // collectives start before the GEMMs meant to hide them: charged exposed.
            anatomy.expose_hidden_collectives();
        }
        anatomy.attention.fp8_weight_bytes = 2 * a8;
        anatomy.mlp.fp8_weight_bytes = 2 * m8;
        anatomy.moe.fp8_weight_bytes = 2 * x8;
        anatomy.mtp.fp8_weight_bytes = 2 * t8;
        anatomy.moe.expert_params = moe_params.expert_per_device(ep_etp);
        accumulate_outside_gemm(&mut anatomy, &machine, scenario);
        embedding_gradient(&mut anatomy, &machine, scenario);
        let losses = f64::from(1 + m.mtp_layers);
        super::cross_entropy::apply(&mut anatomy, &machine, scenario, tokens * d.vocab, losses);
        if let Some(profile) = &scenario.profile {
            profile.apply(&mut anatomy);
        }
        super::fsdp::apply(&mut anatomy, scenario, &machine);
        anatomy.mark_named(&scenario.plan.recompute_units)?;
        Ok(anatomy)
    }

    /// Marks the units that `names` select (`gelu_out` in every block kind that has it,
    /// `mlp.gelu_out` in one) for the `named` strategy; a name that selects no droppable
    /// unit is refused, listing the ones that exist.
    fn mark_named(&mut self, names: &[String]) -> Result<(), InvalidField> {
        for name in names {
            if let Some(module) = RecomputeModule::from_name(name) {
                self.mark_module(module, name)?;
                continue;
            }
            let (kind, unit) = match name.split_once('.') {
                Some((k, u)) => (Some(k), u),
                None => (None, name.as_str()),
            };
            let mut found = false;
            for block in [
                &mut self.embedding,
                &mut self.attention,
                &mut self.mlp,
                &mut self.moe,
                &mut self.mtp,
                &mut self.head,
            ] {
                if kind.is_some_and(|k| k != block.kind.name()) {
                    continue;
                }
                for u in block
                    .units
                    .iter_mut()
                    .filter(|u| u.name == unit && !u.forced)
                {
                    u.named = true;
                    found = true;
                }
            }
            if !found {
                let mut known: Vec<String> = [&self.attention, &self.mlp, &self.moe, &self.mtp]
                    .iter()
                    .flat_map(|b| {
                        b.units
                            .iter()
                            .filter(|u| !u.forced)
                            .map(|u| format!("{}.{}", b.kind.name(), u.name))
                    })
                    .collect();
                known.dedup();
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                let bare: Vec<&str> = names
                    .iter()
                    .map(|n| n.split_once('.').map_or(*n, |(_, u)| u))
                    .collect();
                let hint = crate::scenario::presets::nearest(name, &names)
                    .or_else(|| crate::scenario::presets::nearest(name, &bare))
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                return Err(InvalidField::new(
                    "plan.recompute_units",
                    name,
                    format!(
                        "droppable units of this model{hint}: {}; or Megatron's \
                         --recompute-modules names: {}",
                        known.join(", "),
                        RecomputeModule::ALL
                            .iter()
                            .map(|m| m.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Marks the units Megatron's `--recompute-modules` name `module` recomputes; a module
    /// that recomputes nothing droppable in this model is refused.
    fn mark_module(&mut self, module: RecomputeModule, name: &str) -> Result<(), InvalidField> {
        let mut found = false;
        for block in [
            &mut self.attention,
            &mut self.mlp,
            &mut self.moe,
            &mut self.mtp,
        ] {
            let kind = block.kind;
            for u in block.units.iter_mut() {
                if !u.forced && module.recomputes(kind, u) {
                    u.named = true;
                    found = true;
                }
            }
        }
        if found {
            return Ok(());
        }
        Err(InvalidField::new(
            "plan.recompute_units",
            name,
            "a Megatron module this model has units for (core_attn; mla_up_proj with multi-head \
             latent attention; layernorm with MLA or experts; mlp with dense layers; moe, moe_act \
             and shared_experts with experts), or a unit name",
        ))
    }

    /// The MLP of most of the model's layers: the MoE block of a mixture of experts whose
    /// MoE layers outnumber its dense ones, else the dense MLP block.
    fn common_mlp(&self) -> &Block {
        if self.main_layers - self.dense_layers.min(self.main_layers) > self.dense_layers {
            &self.moe
        } else {
            &self.mlp
        }
    }

    /// Activation bytes of one attention block plus one MLP (or MoE) block with every unit
    /// kept.
    pub fn layer_bytes(&self) -> u64 {
        self.attention.all_units_bytes() + self.common_mlp().all_units_bytes()
    }

    /// Forward seconds of one whole layer (attention + MLP or MoE): the cost of recomputing
    /// it.
    pub fn layer_forward_s(&self) -> f64 {
        self.attention.forward_s + self.common_mlp().forward_s
    }

    /// Backward seconds (B + W) of one whole layer.
    pub fn layer_backward_s(&self) -> f64 {
        self.attention.backward_s() + self.common_mlp().backward_s()
    }
}

/// One GPU's copy rates to and from the host, bytes/s per direction (docs/model.md,
/// "Offload"): the one-way rate shared by the `pcie_pair` GPUs of a switch when they copy
/// without taking turns; for PipeOffload's paired copies, the rate with both directions busy
/// (the pair's two GPUs take turns on each direction) and the one-way rate of a copy alone,
/// or half the one-way rate for both where the switch's two GPUs belong to one pipeline stage
/// (tensor or data parallel peers copy in step).
struct HostRates {
    shared: f64,
    paired: f64,
    solo: f64,
}

impl HostRates {
    fn of(scenario: &Scenario) -> Self {
        let gpu = &scenario.gpu;
        let one = gpu.host_gbps * 1e9;
        let duplex = gpu.host_duplex_gbps.min(gpu.host_gbps) * 1e9;
        let pair = f64::from(gpu.pcie_pair.max(1));
        let peers = u64::from(scenario.parallel.tp) * u64::from(scenario.parallel.dp);
        let (paired, solo) = if gpu.pcie_pair <= 1 {
            (one, one)
        } else if peers > 1 {
            (one / pair, one / pair)
        } else {
            (duplex, one)
        };
        Self {
            shared: one / pair,
            paired,
            solo,
        }
    }
}
