//! The anatomy's data types (built by `Anatomy::build`).

use serde::{Deserialize, Serialize};

/// What a block of the chain is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// Token (and position) embedding; block 0.
    Embedding,
    /// Attention sub-layer (norm, QKV, core attention, out-projection); odd blocks.
    Attention,
    /// MLP sub-layer (norm, fc1/gate-up, activation, fc2/down); even blocks of the dense
    /// layers.
    Mlp,
    /// Mixture-of-experts MLP sub-layer (norm, router, dispatch all-to-all, grouped expert
    /// GEMMs, combine all-to-all, shared experts); even blocks of the MoE layers.
    Moe,
    /// A multi-token-prediction layer's first block: the MTP module's embedding lookup,
    /// norms and projection, then an attention sub-layer; odd blocks after the main layers.
    Mtp,
    /// Final norm, output projection and loss (and each MTP layer's loss); the last block.
    Head,
}

impl BlockKind {
    /// Lower-case name used in JSON and the UI.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Embedding => "embedding",
            BlockKind::Attention => "attention",
            BlockKind::Mlp => "mlp",
            BlockKind::Moe => "moe",
            BlockKind::Mtp => "mtp",
            BlockKind::Head => "head",
        }
    }

    /// The short name the UI's units panel shows (`attn.q`), which `--recompute-units` also
    /// takes in place of [`BlockKind::name`].
    pub fn short_name(self) -> &'static str {
        match self {
            BlockKind::Embedding => "emb",
            BlockKind::Attention => "attn",
            other => other.name(),
        }
    }

    /// Every kind, in chain order of first appearance.
    pub const ALL: [BlockKind; 6] = [
        BlockKind::Embedding,
        BlockKind::Attention,
        BlockKind::Mlp,
        BlockKind::Moe,
        BlockKind::Mtp,
        BlockKind::Head,
    ];

    /// A transformer layer's block (attention, MLP, MoE or MTP), not the embedding or head.
    pub fn is_layer(self) -> bool {
        !matches!(self, BlockKind::Embedding | BlockKind::Head)
    }

    /// The first block of a layer (attention, or an MTP layer's projection and attention):
    /// the layer's input is this block's input.
    pub fn opens_layer(self) -> bool {
        matches!(self, BlockKind::Attention | BlockKind::Mtp)
    }
}

/// One computation unit: the operator group that produces one tensor saved for backward.
/// Sizes and times are per device and per micro-batch, after tensor/sequence-parallel sharding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unit {
    /// Name as in docs/model.md (`ln_out`, `q`, `softmax_out`, `core_attn`, ...).
    pub name: String,
    /// Bytes kept per micro-batch when the unit is kept.
    pub size_bytes: u64,
    /// Always kept (block inputs); never recomputed except by `full`.
    pub forced: bool,
    /// Forward FLOPs of the producing piece (per device).
    pub forward_flops: f64,
    /// Bytes the producing piece moves through HBM in the forward.
    pub forward_bytes: f64,
    /// Forward time of the producing piece: the cost of recomputing this unit.
    pub forward_s: f64,
    /// Backward time (B + W) of the producing piece: its share of the block's backward.
    pub backward_s: f64,
    /// Kept after B until W in split-backward schedules (an input of a weight GEMM).
    pub needed_by_w: bool,
    /// Part of core attention (softmax, its dropout, or FlashAttention's `core_attn`): what
    /// Megatron's selective recomputation drops.
    pub core_attention: bool,
    /// Kept, yet re-run by Megatron's selective recomputation: its checkpoint wraps the
    /// whole core attention (QK^T, softmax, dropout, attention x V and the context's
    /// permute), so the re-run ends with this tensor (the context) although the
    /// out-projection keeps its own copy. Costs time under `selective`, saves no memory.
    pub selective_rerun: bool,
    /// Named by the scenario's `recompute_units` (recomputed by the `named` strategy).
    #[serde(skip)]
    pub named: bool,
    /// Bytes when kept compressed with the scenario's codec (by default 8-bit values with
    /// one fp32 scale per 128 values) for the 2-byte tensors; masks, token ids and fp32
    /// statistics stay as they are. Equal to `size_bytes` when nothing shrinks.
    pub compressed_bytes: u64,
    /// Time added by compressing in the forward plus decompressing in the backward (the
    /// codec's throughput, or memory-bound passes: read 2n, write the compressed form; and
    /// back); 0 when nothing shrinks.
    pub codec_s: f64,
    /// Sensitive to activation outliers (the norm outputs, and q and k, whose errors the
    /// softmax exponentiates): only codecs that keep outliers may hold it
    /// ([`crate::scenario::Codec::keeps_outliers`]).
    pub outlier_sensitive: bool,
    /// Per codec of the GPU's set ([`Anatomy::codec_names`], same order): its compressed
    /// size and codec time, or `None` when that codec may not hold this unit (it does not
    /// shrink it, or the unit is outlier-sensitive and the codec keeps no outliers).
    /// `compressed_bytes` and `codec_s` above are the first codec's (the unit's size and 0
    /// where it may not hold it).
    pub codecs: Vec<Option<UnitCodec>>,
}

/// One codec's figures for one unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitCodec {
    /// Bytes kept per micro-batch when compressed with this codec.
    pub compressed_bytes: u64,
    /// Compressing in the forward plus decompressing in the backward.
    pub codec_s: f64,
}

/// One kind of communication inside a block's passes, per micro-batch: how long it keeps the
/// link busy (hidden or not) and how much time it adds to the block (the part no computation
/// hides, and for overlapped tensor-parallel GEMMs their slowdown), which the block's times
/// include.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CommTimes {
    /// Link time in the forward.
    pub forward_s: f64,
    /// Time it adds to the forward.
    pub forward_added_s: f64,
    /// Link time in the backward (B and W).
    pub backward_s: f64,
    /// Time it adds to the backward (B and W).
    pub backward_added_s: f64,
}

impl CommTimes {
    /// Time added to one forward and backward.
    pub fn added_s(&self) -> f64 {
        self.forward_added_s + self.backward_added_s
    }
}

/// One block kind's units, parameters and times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// Which kind of block this is.
    pub kind: BlockKind,
    /// Units in forward order; recomputation re-runs dropped ones in this order.
    pub units: Vec<Unit>,
    /// Parameters held per device (after tensor-parallel sharding; replicated norms whole).
    pub params: u64,
    /// Weights + gradients + optimizer state per device, bytes.
    pub static_bytes: u64,
    /// Forward time per micro-batch of the whole block (pieces that are no unit's included),
    /// tensor-parallel collectives included. Recomputing the whole block costs this.
    pub forward_s: f64,
    /// Backward time for the input gradient (ZB's B), collectives included.
    pub backward_b_s: f64,
    /// Backward time for the weight gradient (ZB's W).
    pub backward_w_s: f64,
    /// Tensor-parallel collectives inside `backward_b_s` (what Lynx hides recomputation
    /// under).
    pub backward_b_comm_s: f64,
    /// Tensor-parallel collectives inside `backward_w_s`.
    pub backward_w_comm_s: f64,
    /// Tensor-parallel collectives of the block (their exposed time, and with
    /// `tp_comm_overlap` the overlapped GEMMs' slowdown, is inside the block's times).
    pub tp_comm: CommTimes,
    /// Context parallelism's K/V exchange (attention blocks with `cp > 1`).
    pub cp_comm: CommTimes,
    /// ZeRO-3's gathers of the block's weights and the reduce-scatter of its gradient, in
    /// steady state (each prefetched under the previous block's work).
    pub dp_comm: CommTimes,
    /// Tensor-parallel collective time of B that a fused backward hides under the weight
    /// GEMMs (Megatron's asynchronous column-parallel backward), not in `backward_b_s`: a
    /// split backward, whose B has no weight GEMM to run under, pays it
    /// ([`Anatomy::for_split_backward`]).
    pub backward_b_hidden_s: f64,
    /// The same for W (the re-gather of a sequence-parallel shard, hidden under the
    /// input-gradient GEMM when B and W run as one).
    pub backward_w_hidden_s: f64,
    /// The expert-parallel all-to-alls (dispatch and combine, and with `etp > 1` the expert
    /// tensor-parallel gather and reduce-scatter) of an MoE block on its busiest rank; all of
    /// it inside the block's forward and input-gradient backward.
    pub ep_comm: CommTimes,
    /// Model FLOPs of the forward per device (Megatron's MFU convention: causal s^2 halved).
    pub model_forward_flops: f64,
    /// Under the fp8 recipe, the fp8 cast of the block's linear weights and its transpose
    /// (2 bytes a weight), made once per iteration and kept through its micro-batches as
    /// Transformer Engine caches it; included in `static_bytes`. 0 in bf16.
    pub fp8_weight_bytes: u64,
    /// Routed-expert parameters among `params` (split over `ep x etp`; 0 outside MoE blocks).
    pub expert_params: u64,
}

impl Block {
    /// A block of `kind` with no units, parameters or time: the MoE and MTP blocks of a
    /// model that has none (no chain index maps to them).
    pub fn empty(kind: BlockKind) -> Block {
        Block {
            kind,
            units: Vec::new(),
            params: 0,
            static_bytes: 0,
            forward_s: 0.0,
            backward_b_s: 0.0,
            backward_w_s: 0.0,
            backward_b_comm_s: 0.0,
            backward_w_comm_s: 0.0,
            backward_b_hidden_s: 0.0,
            backward_w_hidden_s: 0.0,
            tp_comm: CommTimes::default(),
            cp_comm: CommTimes::default(),
            dp_comm: CommTimes::default(),
            ep_comm: CommTimes::default(),
            model_forward_flops: 0.0,
            fp8_weight_bytes: 0,
            expert_params: 0,
        }
    }

    /// Bytes of every unit kept (the `none` strategy's per-micro-batch activation).
    pub fn all_units_bytes(&self) -> u64 {
        self.units.iter().map(|u| u.size_bytes).sum()
    }

    /// Bytes of the forced units (the block's input).
    pub fn forced_bytes(&self) -> u64 {
        self.units
            .iter()
            .filter(|u| u.forced)
            .map(|u| u.size_bytes)
            .sum()
    }

    /// Whole backward per micro-batch (B + W).
    pub fn backward_s(&self) -> f64 {
        self.backward_b_s + self.backward_w_s
    }

    /// Charges the backward's hidden collectives (they run exposed): each joins its
    /// backward's time and its collectives (`tp_comm`'s added time too).
    pub fn expose_hidden_collectives(&mut self) {
        self.backward_b_s += self.backward_b_hidden_s;
        self.backward_b_comm_s += self.backward_b_hidden_s;
        self.backward_w_s += self.backward_w_hidden_s;
        self.backward_w_comm_s += self.backward_w_hidden_s;
        self.tp_comm.backward_added_s += self.backward_b_hidden_s + self.backward_w_hidden_s;
        self.backward_b_hidden_s = 0.0;
        self.backward_w_hidden_s = 0.0;
    }

    /// The unit called `name`.
    pub fn unit(&self, name: &str) -> Option<&Unit> {
        self.units.iter().find(|u| u.name == name)
    }
}

/// The whole model as the planner and simulator see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anatomy {
    /// Transformer layers in the chain `L` (the model's layers, then its MTP layers); blocks
    /// are `0..=2L+1`, two per layer.
    pub layers: u32,
    /// The model's own layers (the chain's layers before the MTP layers).
    pub main_layers: u32,
    /// Layers whose MLP is dense: all of them in a dense model, the first `dense_layers`
    /// of a mixture of experts.
    pub dense_layers: u32,
    /// Block 0.
    pub embedding: Block,
    /// The odd blocks of the main layers.
    pub attention: Block,
    /// The even blocks of the dense layers.
    pub mlp: Block,
    /// The even blocks of the MoE layers (MTP layers included); without units in a dense
    /// model.
    pub moe: Block,
    /// The odd blocks of the MTP layers; without units in a model without MTP layers.
    pub mtp: Block,
    /// The last block.
    pub head: Block,
    /// Last stage's logits transient: bf16 logits + fp32 copy + fp32 gradient, bytes.
    pub logits_transient_bytes: u64,
    /// Activation bytes sent between two stages per micro-batch (either direction).
    pub p2p_bytes: u64,
    /// Time of one point-to-point transfer between neighbouring stages inside a node.
    pub p2p_intra_s: f64,
    /// Time of one point-to-point transfer between nodes.
    pub p2p_inter_s: f64,
    /// Host link bandwidth of one GPU's copies, bytes/s per direction, when the GPUs that
    /// share a PCIe switch copy without taking turns (the `offload` and `unified`
    /// strategies, `gis-offload`): the switch's one-way rate shared by its `pcie_pair` GPUs.
    pub host_bytes_per_s: f64,
    /// The same for PipeOffload's paired copies (`po-h`, `po-f`): where the two GPUs of a
    /// switch are neighbouring pipeline stages (no tensor or data parallelism) they
    /// interleave, one sending while the other receives, and each copy runs at the link's
    /// rate with both directions busy; where they are peers of one stage they copy in step
    /// and halve the one-way rate.
    pub host_paired_bytes_per_s: f64,
    /// A paired copy alone on the link (the pair's warm-up sends), bytes/s.
    pub host_solo_bytes_per_s: f64,
    /// GPUs per node (stage boundaries at multiples of it cross nodes).
    pub node_gpus: u32,
    /// Bytes every device holds besides its blocks' static memory and its activations: with
    /// ZeRO-3, the two layers gathered at a time and one layer's unsharded gradient; 0
    /// otherwise.
    pub device_bytes: u64,
    /// ZeRO-3: the all-gather of one layer that starts each forward and each backward pass
    /// of a chunk, which no earlier work of the pass hides; 0 otherwise.
    pub pass_gather_s: f64,
    /// Names of the GPU's codecs (or the profile's one), in the order of `Unit::codecs`.
    pub codec_names: Vec<String>,
    /// Share of the GPU's streaming multiprocessors the MoE all-to-all kernels hold while
    /// they run (DeepEP's 20; 0 where not modelled): compute that runs beside them in an
    /// overlapped pair (`--moe-a2a-overlap`) has only the rest, so a pair hides at most
    /// `1 - share` of its all-to-all time (docs/model.md, "Overlapped all-to-alls").
    pub ep_comm_sm_share: f64,
}

impl Anatomy {
    /// The anatomy as a schedule with a split backward (B and W apart) runs it: B has no
    /// weight GEMM to hide its input-gradient collective under, and the zero-bubble
    /// runtime's W gathers its input synchronously, so every collective a fused backward
    /// hides runs exposed. `None` when nothing is hidden (no tensor parallelism, or already
    /// exposed by `CUDA_DEVICE_MAX_CONNECTIONS` above 1).
    pub fn for_split_backward(&self) -> Option<Anatomy> {
        let blocks = [&self.embedding, &self.attention, &self.mlp, &self.head];
        if blocks
            .iter()
            .all(|b| b.backward_b_hidden_s == 0.0 && b.backward_w_hidden_s == 0.0)
        {
            return None;
        }
        let mut split = self.clone();
        split.expose_hidden_collectives();
        Some(split)
    }

    /// Charges every block's hidden backward collectives ([`Block::expose_hidden_collectives`]).
    pub fn expose_hidden_collectives(&mut self) {
        for b in [
            &mut self.embedding,
            &mut self.attention,
            &mut self.mlp,
            &mut self.head,
        ] {
            b.expose_hidden_collectives();
        }
    }

    /// Number of blocks in the chain, `2L + 2`.
    pub fn num_blocks(&self) -> usize {
        2 * self.layers as usize + 2
    }

    /// The kind of block `i` of the chain: layer `j` holds blocks `2j + 1` (attention, or
    /// MTP after the main layers) and `2j + 2` (dense MLP in the first `dense_layers`, else
    /// MoE).
    pub fn kind_of(&self, i: usize) -> BlockKind {
        if i == 0 {
            BlockKind::Embedding
        } else if i == self.num_blocks() - 1 {
            BlockKind::Head
        } else if i % 2 == 1 {
            if (i - 1) / 2 < self.main_layers as usize {
                BlockKind::Attention
            } else {
                BlockKind::Mtp
            }
        } else if (i - 2) / 2 < self.dense_layers as usize {
            BlockKind::Mlp
        } else {
            BlockKind::Moe
        }
    }

    /// The block kinds the chain holds, in [`BlockKind::ALL`]'s order.
    pub fn kinds(&self) -> impl Iterator<Item = BlockKind> + '_ {
        BlockKind::ALL.into_iter().filter(|&k| match k {
            BlockKind::Mlp => self.dense_layers > 0,
            BlockKind::Moe => self.dense_layers < self.layers,
            BlockKind::Mtp => self.main_layers < self.layers,
            _ => true,
        })
    }

    /// Block `i` of the chain.
    pub fn block(&self, i: usize) -> &Block {
        self.block_of(self.kind_of(i))
    }

    /// The stored block of a kind.
    pub fn block_of(&self, kind: BlockKind) -> &Block {
        match kind {
            BlockKind::Embedding => &self.embedding,
            BlockKind::Attention => &self.attention,
            BlockKind::Mlp => &self.mlp,
            BlockKind::Moe => &self.moe,
            BlockKind::Mtp => &self.mtp,
            BlockKind::Head => &self.head,
        }
    }

    /// The stored block of a kind, to change.
    pub(crate) fn block_of_mut(&mut self, kind: BlockKind) -> &mut Block {
        match kind {
            BlockKind::Embedding => &mut self.embedding,
            BlockKind::Attention => &mut self.attention,
            BlockKind::Mlp => &mut self.mlp,
            BlockKind::Moe => &mut self.moe,
            BlockKind::Mtp => &mut self.mtp,
            BlockKind::Head => &mut self.head,
        }
    }
}
