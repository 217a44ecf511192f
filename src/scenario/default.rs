//! The default scenario (`gpt3-175b-16k`), used when no preset is given.

use super::gpu::a100_links;
use super::{
    Batch, Catalog, EfficiencyCurve, GpuSpec, ModelSpec, ModelStyle, Objective, Parallel,
    PlanSettings, Precision, Scenario,
};
use crate::scenario::ScheduleKind;
use crate::scenario::{AttentionBackend, P2p, Partition, Strategy};

/// Name of the default scenario preset.
pub const DEFAULT_SCENARIO: &str = "gpt3-175b-16k";

/// The `gpt3-175b-16k` preset (from the embedded catalog; a copy built in code stands in
/// should the embedded file ever fail, and a test keeps the two equal).
pub fn default_scenario() -> Scenario {
    Catalog::builtin()
        .scenario(DEFAULT_SCENARIO)
        .unwrap_or_else(|_| built_in_code())
}

/// The default scenario written out in code.
pub(crate) fn built_in_code() -> Scenario {
    Scenario {
        name: DEFAULT_SCENARIO.into(),
        description: "GPT-3 175B at sequence 16384 on 64 A100s: the long-sequence case (AdaPipe)"
            .into(),
        model: ModelSpec {
            name: "gpt3-175b".into(),
            description: "GPT-3 175B: 96 layers, hidden 12288, 96 heads".into(),
            style: ModelStyle::Gpt,
            layers: 96,
            hidden: 12288,
            heads: 96,
            kv_heads: 96,
            head_dim: None,
            ffn: 49152,
            vocab: 50257,
            max_positions: None,
            tied_embeddings: true,
            moe: None,
            mla: None,
            rope_theta: None,
            qk_norm: false,
            mtp_layers: 0,
        },
        gpu: GpuSpec {
            name: "a100-80gb".into(),
            description: "NVIDIA A100 SXM 80 GB (NVLink3, 200 Gb/s InfiniBand)".into(),
            memory_gib: 80.0,
            bf16_tflops: 312.0,
            fp8_tflops: None,
            fp8_recipe: super::Fp8Recipe::Delayed,
            hbm_gbps: 2039.0,
            sms: Some(108),
            link_gbps: a100_links::LINK_GBPS,
            node_gpus: a100_links::NODE_GPUS,
            host_gpus: None,
            inter_node_gbps: a100_links::INTER_NODE_GBPS,
            host_gbps: a100_links::HOST_GBPS,
            host_duplex_gbps: a100_links::HOST_DUPLEX_GBPS,
            pcie_pair: a100_links::PCIE_PAIR,
            host_memory_gib: Some(a100_links::HOST_MEMORY_GIB),
            efficiency: EfficiencyCurve::a100_calibrated(),
            codec: super::CodecSpec::default(),
            codecs: super::builtin_codecs(),
        },
        parallel: Parallel {
            pp: 8,
            tp: 8,
            dp: 1,
            sequence_parallel: true,
            chunks: 1,
            distributed_optimizer: false,
            full_shard: false,
            cp: 1,
            grad_bytes: 4,
            moment_bytes: 4,
            precision: Precision::Bf16,
            ep: 1,
            etp: 1,
        },
        batch: Batch {
            seq_len: 16384,
            micro_batch_size: 1,
            micro_batches: 64,
        },
        plan: PlanSettings {
            schedule: ScheduleKind::OneFOneB,
            strategy: Strategy::AdaPipe,
            memory_budget_bytes: 70 << 30,
            reserve_bytes: Some(10 << 30),
            recompute_units: Vec::new(),
            partition: Partition::Even,
            p2p: P2p::Overlapped,
            layout: None,
            overlap_grad_reduce: false,
            overlap_param_gather: false,
            moe_a2a_overlap: false,
            tp_comm_overlap: false,
            routing_imbalance: 1.0,
            deepep: false,
            flex_dispatcher_num_sms: super::DEEPEP_DEFAULT_SMS,
            activation_func_fp8_input_store: false,
            flash_attention: true,
            attention_backend: AttentionBackend::Cudnn,
            objective: Objective::Estimate,
            overlap_recompute: false,
            mem_limit: None,
            group_size: None,
            device_max_connections: 1,
            offload_chunks: None,
            gradient_accumulation_fusion: true,
            cross_entropy_loss_fusion: true,
            align_grad_reduce: true,
        },
        profile: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_copy_equals_the_preset() {
        let from_file = Catalog::builtin().scenario(DEFAULT_SCENARIO).unwrap();
        assert_eq!(from_file, built_in_code());
    }
}
