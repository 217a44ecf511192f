//! Accelerator figures: memory, peak dense bf16 (and fp8) throughput, HBM bandwidth, links,
//! and the size-dependent efficiency curves of the roofline cost model.

use serde::{Deserialize, Serialize};

/// Achieved fraction of peak as a step function of operation size
/// (docs/model.md): the first threshold that the size reaches gives the factor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EfficiencyCurve {
    /// `(min_flops, efficiency)` steps for matrix-unit (GEMM) work, largest threshold first.
    pub matrix: Vec<(f64, f64)>,
    /// `(min_bytes, efficiency)` steps for HBM traffic, largest threshold first.
    pub memory: Vec<(f64, f64)>,
    /// Fraction of the NVLink bandwidth (`link_gbps`) that collectives and point-to-point
    /// transfers inside a node reach.
    pub link: f64,
    /// Fraction of the network bandwidth (`inter_node_gbps`) that collectives and
    /// point-to-point transfers between nodes reach (a network card's measured rate, not
    /// NVLink's); `None`: `link`.
    #[serde(default)]
    pub network: Option<f64>,
    /// `(min_flops, efficiency)` steps for fp8 GEMMs (a fraction of `fp8_tflops`); `None`:
    /// the `matrix` steps.
    #[serde(default)]
    pub matrix_fp8: Option<Vec<(f64, f64)>>,
    /// `(min_flops, efficiency)` steps for FlashAttention's forward (a fraction of
    /// `bf16_tflops`), keyed by the FLOPs of one (sequence, head) pair, causal half counted
    /// (`2 s^2 d` for `s` tokens and head width `d`): the kernel's rate follows the length of
    /// the rows it walks, which is how published attention benchmarks vary it. `None`: the
    /// `matrix` steps at the whole kernel's FLOPs.
    #[serde(default)]
    pub attention: Option<Vec<(f64, f64)>>,
    /// The same for FlashAttention's backward, keyed by 2.5 times the pair's forward FLOPs
    /// (its FLOPs); `None`: the `attention` steps.
    #[serde(default)]
    pub attention_backward: Option<Vec<(f64, f64)>>,
    /// `(min_flops, efficiency)` steps for an unmasked FlashAttention forward (the
    /// off-diagonal steps of context parallelism's ring), keyed by one pair's FLOPs (`4 s^2
    /// d` for an `s` by `s` block); `None`: the `attention` steps.
    #[serde(default)]
    pub attention_unmasked: Option<Vec<(f64, f64)>>,
    /// The same for the unmasked backward (keyed by 2.5 times the pair's forward FLOPs);
    /// `None`: the `attention_backward` steps.
    #[serde(default)]
    pub attention_unmasked_backward: Option<Vec<(f64, f64)>>,
    /// `(min_flops, efficiency)` steps for FlashAttention-2's causal forward (the
    /// `flash-attn` package, what Transformer Engine runs with `NVTE_FUSED_ATTN=0`), keyed
    /// as `attention`; `None`: the GPU has no FlashAttention-2 figures and every
    /// FlashAttention-2 kernel takes the `attention*` (cuDNN) steps.
    #[serde(default)]
    pub flash2_attention: Option<Vec<(f64, f64)>>,
    /// FlashAttention-2's causal backward, keyed as `attention_backward`; `None`: the
    /// `flash2_attention` steps.
    #[serde(default)]
    pub flash2_attention_backward: Option<Vec<(f64, f64)>>,
    /// FlashAttention-2's unmasked forward, keyed as `attention_unmasked`; `None`: the
    /// `flash2_attention` steps.
    #[serde(default)]
    pub flash2_attention_unmasked: Option<Vec<(f64, f64)>>,
    /// FlashAttention-2's unmasked backward; `None`: the `flash2_attention_backward` steps.
    #[serde(default)]
    pub flash2_attention_unmasked_backward: Option<Vec<(f64, f64)>>,
    /// `(min_flops, efficiency)` steps for grouped GEMMs (the routed experts' GEMMs of a
    /// mixture of experts, one kernel over the rank's experts), keyed by the FLOPs of one
    /// expert's share; `None`: the `matrix` steps at that size.
    #[serde(default)]
    pub grouped_matrix: Option<Vec<(f64, f64)>>,
    /// Whether a GEMM's (and FlashAttention's) HBM traffic overlaps its math, so that it
    /// takes the longer of the two (Hopper's and Blackwell's kernels load through the TMA
    /// asynchronously), or adds to it (`false`, the A100 calibration's rule).
    #[serde(default)]
    pub gemm_memory_overlap: bool,
}

/// One of FlashAttention's four kernels, each with its own efficiency steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKernel {
    /// The causal forward.
    Forward,
    /// The causal backward.
    Backward,
    /// The unmasked forward (context parallelism's off-diagonal ring steps).
    UnmaskedForward,
    /// The unmasked backward.
    UnmaskedBackward,
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
    /// Dense fp8 tensor-core peak, TFLOP/s; `None` for a GPU without fp8 tensor cores
    /// (such a GPU refuses `precision = "fp8"`).
    #[serde(default)]
    pub fp8_tflops: Option<f64>,
    /// The fp8 scaling recipe Transformer Engine runs on this GPU (what `export megatron`
    /// writes as `--fp8-recipe`): delayed scaling on Hopper, MXFP8 block scaling on
    /// Blackwell. The cost model is the same for both (docs/model.md, "Precision").
    #[serde(default)]
    pub fp8_recipe: Fp8Recipe,
    /// HBM bandwidth, GB/s (10^9 bytes/s).
    pub hbm_gbps: f64,
    /// Streaming multiprocessors (the GEMMs that Transformer Engine overlaps with
    /// communication lend some of them to it); `None` where the preset does not say, and
    /// such a GPU refuses `tp_comm_overlap`.
    #[serde(default)]
    pub sms: Option<u32>,
    /// GPU-to-GPU bandwidth inside a node, per direction, GB/s.
    pub link_gbps: f64,
    /// GPUs per node; stages beyond a node use `inter_node_gbps`.
    pub node_gpus: u32,
    /// GPUs per host (one machine running one launcher: torchrun's `--nproc_per_node`) where
    /// it is smaller than the NVLink domain `node_gpus` (a GB200 NVL72 rack is one 72-GPU
    /// NVLink domain of 18 hosts of 4 GPUs). `None`: a host is a node. Only the exported
    /// launch scripts use it; the cost model's links follow `node_gpus`.
    #[serde(default)]
    pub host_gpus: Option<u32>,
    /// Bandwidth between nodes, per GPU and direction, GB/s.
    pub inter_node_gbps: f64,
    /// Host link as achieved by one GPU copying in one direction alone (the PCIe link's
    /// measured rate, not its nominal one), GB/s (offload).
    pub host_gbps: f64,
    /// Host link per direction while both directions carry a copy at once (PCIe's achieved
    /// bidirectional rate), GB/s; at most `host_gbps`. PipeOffload's paired copies run at
    /// it. A preset without it assumes no loss (`host_gbps`).
    #[serde(default)]
    pub host_duplex_gbps: f64,
    /// GPUs behind one PCIe switch's uplink to the host (1 or 2): two share its bandwidth
    /// per direction, and the network cards on the switch carry their cross-node traffic
    /// through the same links. A preset without it: 1.
    #[serde(default = "one")]
    pub pcie_pair: u32,
    /// Host memory per node, GiB; offloaded activations of the node's GPUs must fit in it.
    /// `None`: not limited.
    #[serde(default)]
    pub host_memory_gib: Option<f64>,
    /// Efficiency curve of the roofline model.
    pub efficiency: EfficiencyCurve,
    /// Activation compression codec (`compress`, `unified`).
    #[serde(default)]
    pub codec: super::CodecSpec,
    /// Several codecs (`[[gpu.codecs]]`): the knapsack picks one per unit kind. Empty: the
    /// GPU has the one `codec` above.
    #[serde(default)]
    pub codecs: Vec<super::Codec>,
}

/// Transformer Engine's fp8 scaling recipe on a GPU (Megatron's `--fp8-recipe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fp8Recipe {
    /// Delayed scaling: one scale per tensor from an amax history (`DelayedScaling`), E4M3
    /// forward and E5M2 gradients; Hopper's recipe.
    #[default]
    Delayed,
    /// MXFP8 block scaling: one power-of-two scale per 32 values (`MXFP8BlockScaling`),
    /// E4M3 throughout; Blackwell's tensor cores run it natively (SM 10.0).
    Mxfp8,
}

impl Fp8Recipe {
    /// The name Megatron's `--fp8-recipe` and a GPU preset's `fp8_recipe` use.
    pub fn name(self) -> &'static str {
        match self {
            Fp8Recipe::Delayed => "delayed",
            Fp8Recipe::Mxfp8 => "mxfp8",
        }
    }
}

fn one() -> u32 {
    1
}

impl GpuSpec {
    /// The GPU's codecs: the `[[gpu.codecs]]` list, or the one `[gpu.codec]`.
    pub fn codec_set(&self) -> Vec<super::Codec> {
        if self.codecs.is_empty() {
            vec![super::Codec::single(self.codec)]
        } else {
            self.codecs.clone()
        }
    }

    /// GPUs per host for a launcher (`host_gpus`, else `node_gpus`), at least 1.
    pub fn launcher_host_gpus(&self) -> u32 {
        self.host_gpus.unwrap_or(self.node_gpus).max(1)
    }

    /// Device memory in bytes.
    pub fn memory_bytes(&self) -> u64 {
        (self.memory_gib * super::GIB).round() as u64
    }

    /// The dense peak MFU and HFU are measured against, TFLOP/s: the peak of the format the
    /// layers' GEMMs run in (fp8's under the fp8 recipe, as NVIDIA reports fp8 MFU).
    pub fn peak_tflops(&self, precision: super::Precision) -> f64 {
        match (precision, self.fp8_tflops) {
            (super::Precision::Fp8, Some(fp8)) => fp8,
            _ => self.bf16_tflops,
        }
    }
}

impl EfficiencyCurve {
    /// Fraction of the network bandwidth that transfers between nodes reach (`network`, or
    /// `link` where the preset gives none).
    pub fn network_link(&self) -> f64 {
        self.network.unwrap_or(self.link)
    }

    /// Calculon's A100/H100 steps (docs/model.md): GEMMs of at least 128 GFLOP
    /// reach 0.95 of peak, 16 GFLOP 0.90, 1 GFLOP 0.60, smaller ones 0.10; HBM traffic of at
    /// least 100 MB reaches 0.90 of the bandwidth, 10 MB 0.75, 1 MB 0.60, less 0.30; links
    /// reach 0.65 of their bandwidth (Calculon's NVLink figure).
    pub fn calculon() -> Self {
        Self {
            matrix: vec![(128e9, 0.95), (16e9, 0.90), (1e9, 0.60), (0.0, 0.10)],
            memory: vec![(100e6, 0.90), (10e6, 0.75), (1e6, 0.60), (0.0, 0.30)],
            link: 0.65,
            network: None,
            matrix_fp8: None,
            attention: None,
            attention_backward: None,
            attention_unmasked: None,
            attention_unmasked_backward: None,
            flash2_attention: None,
            flash2_attention_backward: None,
            flash2_attention_unmasked: None,
            flash2_attention_unmasked_backward: None,
            grouped_matrix: None,
            gemm_memory_overlap: false,
        }
    }

    /// The A100's calibrated fractions (docs/model.md, "Calibration"; the `a100-80gb`
    /// preset): GEMMs reach 0.86 of peak from 1 TFLOP, 0.82 from 256 GFLOP, 0.78 from
    /// 64 GFLOP, 0.72 from 16 GFLOP, 0.55 from 1 GFLOP, 0.10 below; HBM traffic 0.75 from
    /// 100 MB, 0.70 from 10 MB, 0.60 from 1 MB, 0.30 below; links 0.75. The default of a GPU
    /// preset that gives no curve of its own.
    pub fn a100_calibrated() -> Self {
        Self {
            matrix: vec![
                (1e12, 0.86),
                (256e9, 0.82),
                (64e9, 0.78),
                (16e9, 0.72),
                (1e9, 0.55),
                (0.0, 0.10),
            ],
            memory: vec![(100e6, 0.75), (10e6, 0.70), (1e6, 0.60), (0.0, 0.30)],
            link: 0.75,
            network: None,
            matrix_fp8: None,
            attention: None,
            attention_backward: None,
            attention_unmasked: None,
            attention_unmasked_backward: None,
            flash2_attention: None,
            flash2_attention_backward: None,
            flash2_attention_unmasked: None,
            flash2_attention_unmasked_backward: None,
            grouped_matrix: None,
            gemm_memory_overlap: false,
        }
    }

    /// Efficiency of a GEMM of `flops`.
    pub fn matrix_at(&self, flops: f64) -> f64 {
        step(&self.matrix, flops)
    }

    /// Efficiency of an fp8 GEMM of `flops` (a fraction of the fp8 peak).
    pub fn matrix_fp8_at(&self, flops: f64) -> f64 {
        step(self.matrix_fp8.as_deref().unwrap_or(&self.matrix), flops)
    }

    /// Efficiency of FlashAttention's forward of `flops` in all, `pair_flops` of them for
    /// each (sequence, head) pair: the `attention` steps at `pair_flops`, or without them
    /// the `matrix` steps at `flops`.
    pub fn attention_at(&self, pair_flops: f64, flops: f64) -> f64 {
        match self.attention.as_deref() {
            Some(steps) => step(steps, pair_flops),
            None => step(&self.matrix, flops),
        }
    }

    /// Efficiency of FlashAttention's backward of `flops` in all, `pair_flops` of them for
    /// each (sequence, head) pair: the `attention_backward` (else `attention`) steps at
    /// `pair_flops`, or without either the `matrix` steps at `flops`.
    pub fn attention_backward_at(&self, pair_flops: f64, flops: f64) -> f64 {
        match self
            .attention_backward
            .as_deref()
            .or(self.attention.as_deref())
        {
            Some(steps) => step(steps, pair_flops),
            None => step(&self.matrix, flops),
        }
    }

    /// Efficiency of an unmasked FlashAttention forward of `flops` in all, `pair_flops` for
    /// each (sequence, head) pair: the `attention_unmasked` steps, else as
    /// [`EfficiencyCurve::attention_at`].
    pub fn attention_unmasked_at(&self, pair_flops: f64, flops: f64) -> f64 {
        match self.attention_unmasked.as_deref() {
            Some(steps) => step(steps, pair_flops),
            None => self.attention_at(pair_flops, flops),
        }
    }

    /// Efficiency of an unmasked FlashAttention backward: the `attention_unmasked_backward`
    /// steps, else as [`EfficiencyCurve::attention_backward_at`].
    pub fn attention_unmasked_backward_at(&self, pair_flops: f64, flops: f64) -> f64 {
        match self.attention_unmasked_backward.as_deref() {
            Some(steps) => step(steps, pair_flops),
            None => self.attention_backward_at(pair_flops, flops),
        }
    }

    /// Efficiency of FlashAttention-2's `kernel` of `flops` in all, `pair_flops` of them for
    /// each (sequence, head) pair: the `flash2_attention*` steps, or, on a GPU without
    /// FlashAttention-2 figures (no `flash2_attention`), the cuDNN kernel's.
    pub fn flash2_at(&self, kernel: AttentionKernel, pair_flops: f64, flops: f64) -> f64 {
        let Some(forward) = self.flash2_attention.as_deref() else {
            return self.cudnn_at(kernel, pair_flops, flops);
        };
        let backward = self.flash2_attention_backward.as_deref().unwrap_or(forward);
        let steps = match kernel {
            AttentionKernel::Forward => forward,
            AttentionKernel::Backward => backward,
            AttentionKernel::UnmaskedForward => {
                self.flash2_attention_unmasked.as_deref().unwrap_or(forward)
            }
            AttentionKernel::UnmaskedBackward => self
                .flash2_attention_unmasked_backward
                .as_deref()
                .unwrap_or(backward),
        };
        step(steps, pair_flops)
    }

    /// Efficiency of cuDNN's fused attention `kernel` (the `attention*` steps), as
    /// [`EfficiencyCurve::attention_at`] and its siblings.
    pub fn cudnn_at(&self, kernel: AttentionKernel, pair_flops: f64, flops: f64) -> f64 {
        match kernel {
            AttentionKernel::Forward => self.attention_at(pair_flops, flops),
            AttentionKernel::Backward => self.attention_backward_at(pair_flops, flops),
            AttentionKernel::UnmaskedForward => self.attention_unmasked_at(pair_flops, flops),
            AttentionKernel::UnmaskedBackward => {
                self.attention_unmasked_backward_at(pair_flops, flops)
            }
        }
    }

    /// Efficiency of a grouped GEMM whose groups (experts) each take `flops_per_group`.
    pub fn grouped_at(&self, flops_per_group: f64) -> f64 {
        step(
            self.grouped_matrix.as_deref().unwrap_or(&self.matrix),
            flops_per_group,
        )
    }

    /// Efficiency of moving `bytes` through HBM.
    pub fn memory_at(&self, bytes: f64) -> f64 {
        step(&self.memory, bytes)
    }
}

impl Default for EfficiencyCurve {
    fn default() -> Self {
        Self::a100_calibrated()
    }
}

/// The factor of the first step whose threshold `size` reaches; steps may come in any order
/// (the largest reached threshold wins); below every threshold, the smallest step's factor.
fn step(steps: &[(f64, f64)], size: f64) -> f64 {
    let mut best: Option<(f64, f64)> = None;
    let mut lowest: Option<(f64, f64)> = None;
    for &(threshold, eff) in steps {
        if size >= threshold && best.is_none_or(|(t, _)| threshold > t) {
            best = Some((threshold, eff));
        }
        if lowest.is_none_or(|(t, _)| threshold < t) {
            lowest = Some((threshold, eff));
        }
    }
    best.or(lowest).map_or(1.0, |(_, e)| e)
}

/// The A100's link figures, the defaults of a GPU preset that does not give its own.
pub mod a100_links {
    /// NVLink3, per direction, GB/s.
    pub const LINK_GBPS: f64 = 300.0;
    /// GPUs per node.
    pub const NODE_GPUS: u32 = 8;
    /// 200 Gb/s InfiniBand per GPU, per direction, GB/s.
    pub const INTER_NODE_GBPS: f64 = 25.0;
    /// Host link of one A100 copying alone in one direction, GB/s: PCIe Gen4 x16 carries
    /// 31.5 GB/s nominal; nvbandwidth's host-to-device copy engine measures 25.9-26.2 GB/s on
    /// each of eight A100s (NVIDIA/nvbandwidth README, "Unidirectional").
    pub const HOST_GBPS: f64 = 26.0;
    /// The same per direction with both directions busy: nvbandwidth's bidirectional
    /// host-device test, 18.4-19.6 GB/s each way (README, "Bidirectional Host <-> Device").
    pub const HOST_DUPLEX_GBPS: f64 = 19.0;
    /// DGX A100: four PCIe Gen4 switches, each with two GPUs, their two compute network
    /// cards and one uplink to a CPU.
    pub const PCIE_PAIR: u32 = 2;
    /// DGX A100 (640 GB): 2 TB of host memory per node.
    pub const HOST_MEMORY_GIB: f64 = 2048.0;
}

#[cfg(test)]
mod tests {
    use super::{AttentionKernel, EfficiencyCurve};

    const KERNELS: [AttentionKernel; 4] = [
        AttentionKernel::Forward,
        AttentionKernel::Backward,
        AttentionKernel::UnmaskedForward,
        AttentionKernel::UnmaskedBackward,
    ];

    #[test]
    fn flash2_without_its_steps_is_cudnn_and_each_missing_step_falls_back_in_turn() {
        let mut e = EfficiencyCurve::a100_calibrated();
        e.attention = Some(vec![(0.0, 0.5)]);
        e.attention_backward = Some(vec![(0.0, 0.4)]);
        // No flash2 steps: every kernel as cuDNN's.
        for k in KERNELS {
            assert_eq!(e.flash2_at(k, 1e9, 1e12), e.cudnn_at(k, 1e9, 1e12));
        }
        // Only the forward: every kernel on it.
        e.flash2_attention = Some(vec![(0.0, 0.3)]);
        for k in KERNELS {
            assert_eq!(e.flash2_at(k, 1e9, 1e12), 0.3);
        }
        // A backward: the unmasked backward follows it, the unmasked forward the forward.
        e.flash2_attention_backward = Some(vec![(0.0, 0.2)]);
        assert_eq!(e.flash2_at(AttentionKernel::Backward, 1e9, 1e12), 0.2);
        assert_eq!(
            e.flash2_at(AttentionKernel::UnmaskedBackward, 1e9, 1e12),
            0.2
        );
        assert_eq!(
            e.flash2_at(AttentionKernel::UnmaskedForward, 1e9, 1e12),
            0.3
        );
        e.flash2_attention_unmasked = Some(vec![(0.0, 0.35)]);
        e.flash2_attention_unmasked_backward = Some(vec![(0.0, 0.25)]);
        assert_eq!(
            e.flash2_at(AttentionKernel::UnmaskedForward, 1e9, 1e12),
            0.35
        );
        assert_eq!(
            e.flash2_at(AttentionKernel::UnmaskedBackward, 1e9, 1e12),
            0.25
        );
        // cuDNN's are untouched by them.
        assert_eq!(e.cudnn_at(AttentionKernel::Forward, 1e9, 1e12), 0.5);
    }
}
