//! [`Anatomy::build`]: the block chain of a scenario with sizes, FLOPs and times.

use super::cost::Machine;
use super::outer;
use super::units::{self, Dims};
use super::{Anatomy, params};
use crate::scenario::{Codec, InvalidField, ModelStyle, Scenario};

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
        };
        let machine = Machine::new(&scenario.gpu, par.tp).with_precision(par.precision);
        let bpp = params::bytes_per_param(scenario);
        let positions = match m.style {
            ModelStyle::Gpt => m.max_positions.unwrap_or(batch.seq_len),
            ModelStyle::Llama => 0,
        };
        let per_device = |p: params::BlockParams| {
            let n = p.per_device(t);
            (n, params::static_bytes(n, bpp))
        };
        // Under the fp8 recipe each layer block also holds the fp8 cast of its linear
        // weights and its transpose (2 bytes a weight) through the iteration.
        let fp8_weights = |p: params::BlockParams| {
            if machine.fp8() {
                p.sharded / t.max(1)
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
            layers: m.layers,
            embedding: outer::embedding(&machine, &d, ep, esb),
            attention: units::attention(&machine, &d, ap, asb + 2 * a8),
            mlp: units::mlp(&machine, &d, mp, msb + 2 * m8),
            head: outer::head(&machine, &d, hp, hsb),
            logits_transient_bytes: (10.0 * tokens * d.vocab).round() as u64,
            p2p_bytes: p2p_bytes.round() as u64,
            p2p_intra_s: p2p_wire_bytes / (scenario.gpu.link_gbps * 1e9 * link_eff) + p2p_gather_s,
            p2p_inter_s: p2p_wire_bytes / (scenario.gpu.inter_node_gbps * 1e9 * link_eff)
                + p2p_gather_s,
            host_bytes_per_s: host.shared,
            host_paired_bytes_per_s: host.paired,
            host_solo_bytes_per_s: host.solo,
            node_gpus: scenario.gpu.node_gpus,
            device_bytes: 0,
            pass_gather_s: 0.0,
            codec_names: codecs.iter().map(|c| c.name.clone()).collect(),
        };
        if scenario.plan.device_max_connections > 1 {
            // Without the launch order one connection gives, nothing guarantees the
            // collectives start before the GEMMs meant to hide them: charged exposed.
            anatomy.expose_hidden_collectives();
        }
        anatomy.attention.fp8_weight_bytes = 2 * a8;
        anatomy.mlp.fp8_weight_bytes = 2 * m8;
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
            let (kind, unit) = match name.split_once('.') {
                Some((k, u)) => (Some(k), u),
                None => (None, name.as_str()),
            };
            let mut found = false;
            for block in [
                &mut self.embedding,
                &mut self.attention,
                &mut self.mlp,
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
                let mut known: Vec<String> = [&self.attention, &self.mlp]
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
                    format!("droppable units of this model{hint}: {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// Activation bytes of one attention plus one MLP block with every unit kept.
    pub fn layer_bytes(&self) -> u64 {
        self.attention.all_units_bytes() + self.mlp.all_units_bytes()
    }

    /// Forward seconds of one whole layer (attention + MLP): the cost of recomputing it.
    pub fn layer_forward_s(&self) -> f64 {
        self.attention.forward_s + self.mlp.forward_s
    }

    /// Backward seconds (B + W) of one whole layer.
    pub fn layer_backward_s(&self) -> f64 {
        self.attention.backward_s() + self.mlp.backward_s()
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
