//! Schedule data types.

use serde::{Deserialize, Serialize};

pub use crate::scenario::ScheduleKind;

/// Kind of a compute op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpKind {
    /// Forward.
    F,
    /// Backward for the input gradient only.
    B,
    /// Backward for the weight gradient only.
    W,
    /// Fused full backward (B then W).
    BW,
}

impl OpKind {
    /// Every kind, in the order of [`OpKind::index`].
    pub(crate) const ALL: [OpKind; 4] = [OpKind::F, OpKind::B, OpKind::W, OpKind::BW];

    /// The kind's place in [`OpKind::ALL`]: F 0, B 1, W 2, BW 3 (what per-kind tables and
    /// counts are indexed by).
    pub(crate) fn index(self) -> usize {
        match self {
            OpKind::F => 0,
            OpKind::B => 1,
            OpKind::W => 2,
            OpKind::BW => 3,
        }
    }
}

/// One compute op: one micro-batch through one chunk of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Op {
    /// What the op computes.
    pub kind: OpKind,
    /// Micro-batch index `0..m`.
    pub micro_batch: u32,
    /// Local chunk index on the device `0..v`.
    pub chunk: u32,
}

impl Op {
    /// An op of `kind` for micro-batch `micro_batch` on local chunk `chunk`.
    pub const fn new(kind: OpKind, micro_batch: u32, chunk: u32) -> Self {
        Self {
            kind,
            micro_batch,
            chunk,
        }
    }
}

/// How (device, chunk) pairs map onto the global chain of stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// One chunk per device: stage `d` on device `d`.
    Single,
    /// Looped: stage `c p + d` is chunk `c` of device `d` (interleaved, GIS).
    Looped,
    /// V-shape with two chunks: chunk 0 of device `d` is stage `d`, chunk 1 is `2p - 1 - d`.
    VShape,
    /// Chimera: micro-batches `< m/2` run down (stage `d` = chunk 0 of device `d`), the rest
    /// run up (stage `s` = chunk 1 of device `p - 1 - s`); the chain has `p` stages.
    Chimera,
}

/// Per-device op order of one schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schedule {
    /// Which schedule this is.
    pub kind: ScheduleKind,
    /// Devices.
    pub p: u32,
    /// Micro-batches.
    pub m: u32,
    /// Chunks per device.
    pub v: u32,
    /// Stage placement.
    pub placement: Placement,
    /// For every device, its compute ops in execution order.
    pub devices: Vec<Vec<Op>>,
    /// Chunks whose activations the schedule offloads to host (PipeOffload), per device.
    pub offloaded: Vec<Vec<bool>>,
    /// Per device, the overlapped forward-backward pairs of DualPipe and DualPipe-V: each
    /// entry `i` (ascending) says that op `i` (a forward) and op `i + 1` (a backward of
    /// another micro-batch) are one pair, run as two ops in sequence, forward first. The
    /// simulator starts a pair when the inputs of both are there and hands both outputs on
    /// at its end, as the source does; a pair is also where one micro-batch's
    /// communication can hide under the other's compute (docs/model.md). Empty lists for
    /// schedules that pair nothing.
    pub pairs: Vec<Vec<u32>>,
    /// What the solve asks of the order again and again, worked out on the first ask and
    /// kept (`order_facts`); not serialised, not compared, not copied.
    #[serde(skip)]
    pub(super) facts: super::order_facts::OrderFacts,
}

impl Schedule {
    /// A schedule of `kind` with `p` empty device op lists and nothing offloaded.
    pub fn empty(kind: ScheduleKind, p: u32, m: u32, v: u32, placement: Placement) -> Self {
        Self {
            kind,
            p,
            m,
            v,
            placement,
            devices: vec![Vec::new(); p as usize],
            offloaded: vec![vec![false; v as usize]; p as usize],
            pairs: vec![Vec::new(); p as usize],
            facts: Default::default(),
        }
    }

    /// The overlapped pairs of `device`: positions of their forwards in its op list.
    pub fn pair_starts(&self, device: u32) -> &[u32] {
        self.pairs.get(device as usize).map_or(&[], Vec::as_slice)
    }

    /// Where op `index` of `device` is one half of an overlapped pair, the position of the
    /// other half (`index + 1` for the forward, `index - 1` for the backward).
    pub fn pair_partner(&self, device: u32, index: usize) -> Option<usize> {
        let starts = self.pair_starts(device);
        let has = |i: usize| {
            u32::try_from(i)
                .map(|i| starts.binary_search(&i).is_ok())
                .unwrap_or(false)
        };
        if has(index) {
            Some(index + 1)
        } else if index > 0 && has(index - 1) {
            Some(index - 1)
        } else {
            None
        }
    }

    /// Total number of compute ops over all devices.
    pub fn op_count(&self) -> usize {
        self.devices.iter().map(Vec::len).sum()
    }

    /// Number of stages in the model chain (`p v`, or `p` for Chimera).
    pub fn stages(&self) -> u32 {
        self.placement.stages(self.p, self.v)
    }

    /// Position in the model chain of `chunk` on `device` for micro-batch `mb`.
    pub fn stage_of(&self, device: u32, chunk: u32, mb: u32) -> u32 {
        let _ = mb;
        self.placement.stage_of(self.p, device, chunk)
    }

    /// The (device, chunk) that runs `stage` for micro-batch `mb`.
    pub fn locate(&self, stage: u32, mb: u32) -> (u32, u32) {
        match self.placement {
            Placement::Single => (stage, 0),
            Placement::Looped => (stage % self.p, stage / self.p),
            Placement::VShape => {
                if stage < self.p {
                    (stage, 0)
                } else {
                    (2 * self.p - 1 - stage, 1)
                }
            }
            Placement::Chimera => {
                if mb < self.m / 2 {
                    (stage, 0)
                } else {
                    (self.p - 1 - stage, 1)
                }
            }
        }
    }
}

/// Sizes, durations and limits a schedule is generated from.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleInput {
    /// Devices.
    pub p: u32,
    /// Micro-batches.
    pub m: u32,
    /// Chunks per device (as requested; fixed-chunk schedules ignore it).
    pub v: u32,
    /// Forward time per (device, chunk), `[device][chunk]`.
    pub f: Vec<Vec<f64>>,
    /// Input-gradient backward time per (device, chunk).
    pub b: Vec<Vec<f64>>,
    /// Weight-gradient backward time per (device, chunk).
    pub w: Vec<Vec<f64>>,
    /// Point-to-point transfer time between devices.
    pub comm: f64,
    /// Memory limit in chunk-activations (`None`: the source's default).
    pub mem_limit: Option<f64>,
    /// GIS group size (`None`: p).
    pub group_size: Option<u32>,
    /// Chunks gis-offload offloads (`None`: 1).
    pub offload_chunks: Option<u32>,
    /// One-way offload transfer time of one chunk-activation (gis-offload), in cost units.
    pub offload_cost: Option<f64>,
    /// Megatron's combined 1F1B for `interleaved` (and `1f1b` on one device): one more
    /// warm-up forward and every steady-state forward paired with the next backward, where
    /// the MoE all-to-all overlap runs (`--moe-a2a-overlap`); other schedules (and `1f1b` on
    /// more devices) ignore it.
    pub combined_1f1b: bool,
}

impl ScheduleInput {
    /// Equal costs `f`, `b`, `w` on every (device, chunk) of `p` devices and `v` chunks.
    pub fn uniform(p: u32, m: u32, v: u32, f: f64, b: f64, w: f64, comm: f64) -> Self {
        let grid = |x: f64| vec![vec![x; v.max(2) as usize]; p as usize];
        Self {
            p,
            m,
            v,
            f: grid(f),
            b: grid(b),
            w: grid(w),
            comm,
            mem_limit: None,
            group_size: None,
            offload_chunks: None,
            offload_cost: None,
            combined_1f1b: false,
        }
    }
}

/// Why a schedule cannot be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// The combination of sizes is not supported by this schedule.
    #[error("{schedule} needs {requirement}")]
    Unsupported {
        /// The schedule asked for.
        schedule: ScheduleKind,
        /// What it requires, e.g. "m to be a multiple of p (got p=4, m=6)".
        requirement: String,
    },
    /// A searched schedule found no order within its memory limit.
    #[error("{schedule}: no order fits the memory limit {limit} chunk-activations")]
    NoFit {
        /// The schedule asked for.
        schedule: ScheduleKind,
        /// The limit that could not be met.
        limit: f64,
    },
    /// The search stopped because its [`Cancel`](crate::cancel::Cancel) token was set.
    #[error(transparent)]
    Cancelled(#[from] crate::cancel::Cancelled),
}
