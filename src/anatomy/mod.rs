//! The model as a chain of blocks `0..=2L+1` (0 = embedding, odd = attention, even = MLP,
//! 2L+1 = head + loss), each a list of computation units (one saved tensor each) with its
//! bytes, FLOPs and time on the scenario's GPU, plus static memory per block.
//!
//! Only one block of each kind is stored: every attention block is identical, and so is
//! every MLP block. [`Anatomy::kind_of`] maps a block index to its kind.
//!
//! Files: `types.rs` (the data), `build.rs` ([`Anatomy::build`]), `units.rs` (the units of
//! the layer blocks), `outer.rs` (embedding and head), `tp_comm.rs` (the tensor-parallel collectives and their
//! overlap), `ring.rs` (context parallelism's ring attention), `fsdp.rs` (ZeRO-3's gathers),
//! `cost.rs` (the roofline cost model), `params.rs` (parameters and static
//! memory), `profile.rs` (measured profiles), `megatron_modules.rs` (the units each of
//! Megatron-LM's `--recompute-modules` recomputes).

mod build;
pub mod cluster;
pub mod cost;
mod cross_entropy;
mod expert_comm;
mod fsdp;
pub mod megatron_modules;
mod mla;
mod moe;
mod mtp;
mod outer;
mod profile;
mod ring;
mod routing;
pub mod tp_comm;
mod types;
mod units;

#[cfg(test)]
mod calibration_h100_tests;
#[cfg(test)]
mod grouped_gemm_tests;
#[cfg(test)]
mod precision_tests;

pub use crate::scenario::params;
pub use crate::scenario::{MeasuredProfile, UnitMeasurement};
pub(crate) use expert_comm::hidden_beside;
pub use types::{Anatomy, Block, BlockKind, CommTimes, Unit, UnitCodec};
