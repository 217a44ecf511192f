//! Accelerator figures: memory, peak dense bf16 throughput, HBM bandwidth, links, and the
//! size-dependent efficiency curve of the roofline cost model.

use serde::{Deserialize, Serialize};

/// Achieved fraction of peak as a step function of operation size
/// (`reference/costmodel.md` 2.6): the first threshold that the size reaches gives the factor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EfficiencyCurve {
    /// `(min_flops, efficiency)` steps for matrix-unit (GEMM) work, largest threshold first.
    pub matrix: Vec<(f64, f64)>,
    /// `(min_bytes, efficiency)` steps for HBM traffic, largest threshold first.
    pub memory: Vec<(f64, f64)>,
    /// Fraction of link bandwidth that collectives and point-to-point transfers reach.
    pub link: f64,
}

/// One GPU model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSpec {
    /// Preset name, e.g. `a100-80gb`.
    pub name: String,
    /// One line saying what this device is.
    pub description: String,
    /// Memory as the device reports it, in GiB (2^30 bytes).
    pub memory_gib: f64,
    /// Dense bf16 tensor-core peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// HBM bandwidth, GB/s (10^9 bytes/s).
    pub hbm_gbps: f64,
    /// GPU-to-GPU bandwidth inside a node, per direction, GB/s.
    pub link_gbps: f64,
    /// GPUs per node; stages beyond a node use `inter_node_gbps`.
    pub node_gpus: u32,
    /// Bandwidth between nodes, per GPU and direction, GB/s.
    pub inter_node_gbps: f64,
    /// Host link as achieved, per direction, GB/s (offload).
    pub host_gbps: f64,
    /// Efficiency curve of the roofline model.
    pub efficiency: EfficiencyCurve,
}

impl GpuSpec {
    /// Device memory in bytes.
    pub fn memory_bytes(&self) -> u64 {
        (self.memory_gib * (1u64 << 30) as f64).round() as u64
    }
}
