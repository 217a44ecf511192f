//! Planning: which units each stage keeps, recomputes, compresses or offloads (knapsack),
//! and which blocks each stage holds (partition), for every memory strategy.
//!
//! - [`knapsack`]: the exact group knapsack (dense gcd table + sparse Pareto front);
//! - [`stage`]: one stage's memory and time model and its knapsack formulation;
//! - [`partition`]: the outer DPs over block ranges (exact estimate, AdaPipe's recurrence);
//! - [`layout`]: even partition and per-block assignment of per-kind counts;
//! - [`decide`]: the per-device decisions of every strategy;
//! - [`planner`]: from a layout and in-flight counts to candidate plans;
//! - [`simcosts`]: the simulator's inputs built from a plan;
//! - [`memo`]: repeated stage knapsack questions within one request answered once.
//!
//! # How the AdaPipe artifact's approximations are fixed (docs/model.md)
//!
//! - In-flight micro-batches come from the schedule's order (`Schedule::in_flight`): for
//!   1F1B that is `min(p - s, m)`, not the artifact's `p - s`.
//! - No size is rounded: the fp32 log-sum-exp of `core_attn` keeps its exact bytes. The
//!   knapsack divides sizes by a gcd only where every size is a multiple of it, and combines
//!   the other ("odd") unit kinds exactly on a sparse Pareto front ([`knapsack`]).
//! - The recomputation buffer is the memory model of docs/model.md (one block's worth of
//!   every unit kind the stage drops at least once, plus the logits on the last stage), folded
//!   exactly into the knapsack, instead of a fixed MLP working set with an `s x s` mask.
//! - Point-to-point transfers are in every stage time (one each way); data-parallel gradient
//!   reduction is not modelled (as in the artifact).
//! - The partition objective `(m - 1) max T + sum T` is minimised exactly (no greedy on a
//!   recurrence's `main`); AdaPipe's recurrence stays available (`--objective adapipe`)
//!   verbatim, including its over-estimate for `m < p - s`, to reproduce the artifact.
//! - "Keep j of N copies" is mapped to blocks: the last j blocks of that kind keep the unit.
//! - Sizes, statistics, position embeddings and vocabulary come from the anatomy (the engine),
//!   not from constants.
//!
//! # Strategies not nested in the partition DP, and multi-chunk schedules
//!
//! `none`, `full`, `selective`, `uniform`, `adaptive`, `offload` and `compress` use the even
//! partition. `adapipe` and `unified` search the partition. On multi-chunk schedules each
//! device has one knapsack (same per-kind counts over all its chunks, assigned from its last
//! block backwards) at its time-coincident peak, counted in device-worths and rounded up
//! (`solve` re-plans a device with one more in flight when the exact weighted peak exceeds
//! the budget); there the search chooses whole layers per device, split evenly over its
//! chunks (`planner::chunked`). Where both pipeline directions run every stage (DualPipe,
//! Chimera) the search tries the even and the balanced partition and the simulation keeps
//! the faster.
//!
//! # Two resources: `offload` and `unified`
//!
//! Offload uses the host link, a second resource. Per stage the bytes the link can move per
//! micro-batch are bounded by one forward, half a steady-state period (down and back up) and
//! half the forward-to-backward gap ([`planner::offload_capacity`]): the simulator's own rule
//! (a copy whose round trip does not fit its gap, or whose copies fall behind, stays
//! resident; offload never costs time), so under 1F1B every copy planned is moved, and the
//! last stages, whose gaps are shortest, offload nothing. Offloaded copies are
//! pre-assigned greedily (three orders: recompute time per byte, size, and "what the plain
//! knapsack recomputes" first; each at the full capacity and at 1/2, 1/4, 1/8 and 1/16 of
//! it, because offloading more than needed costs staging memory) and the exact knapsack
//! decides the rest; the best result is kept, and on the plans kept (not inside the
//! partition search) refined by single-copy moves on or off the host while the exact
//! knapsack improves. Against exhaustive search over every keep/compress/offload/recompute
//! split on small cases, the largest gap measured is 2.7% of the stage's time, 100 of 4,068
//! cases are not optimal, and those miss by 0.38% on average
//! (`stage::tests::unified_gap_to_optimum_is_bounded`). Offload staging is
//! charged as two micro-batches' offloaded bytes (one leaving, one prefetched), in the
//! planner and in `solve`'s check of the schedule's exact peaks alike. The host-link window
//! is an estimate, so `solve` simulates the plan; only when that simulation exceeds the
//! budget (copies the simulator kept resident) does it re-plan with 1/2, 1/4 and
//! none of the window, keeping the fastest simulated plan within the budget. Inside the
//! partition DP `unified` plans without compression (keep/recompute/offload), and
//! compression is decided on the chosen partition.
//!
//! # Compression (Adacc)
//!
//! Per unit kind the anatomy gives the compressed size (the scenario's codec, by default
//! 8-bit values with one fp32 scale per 128 values, for 2-byte tensors; masks and fp32
//! statistics unchanged) and the codec time (compress in the forward, decompress in the
//! backward, half each). A unit whose compressed size is not smaller (a dropout mask) is
//! never offered compression. No decompression buffer is charged.

pub mod decide;
pub mod knapsack;
pub mod layout;
pub mod memo;
mod offload;
pub mod partition;
pub mod planner;
mod reach;
mod recurrence;
pub mod simcosts;
pub mod split;
pub mod stage;
mod strategy;
#[cfg(test)]
pub(crate) mod testkit;

pub use strategy::{Decision, Strategy};
