//! V-ZB: the V-shape building-block search of the zero-bubble repo
//! (`scheduler/v_auto_schedule.py`, `schedule(p, m, costs, max_mem)`), ported step by step
//! and made fast without changing what it picks.
//!
//! **What it does.** A candidate is one *building block*: the six passes of one micro-batch
//! on every device (F/f forward of chunk 0/1, B/b input backward of chunk 1/0, W/w their
//! weight passes) at slots of a 6-slot period. Device 0's pattern is enumerated (60 of
//! them) and each next device's slots are shifted by uniform offsets `[k, -1, k, -1]`
//! (k = 1..5) in two regimes (the first `len_0` devices one, the rest the other). Every
//! candidate is built into a whole schedule and timed under the given costs; among those
//! whose peak stays within the memory limit (chunk-activations, default 2p), the one with
//! the smallest longest device span wins (the first one on ties).
//!
//! **The steps of one candidate**, each a function of the source:
//! 1. repeat the block for `max(m, 2p)` micro-batches and clear the copies a device cannot
//!    run ([`steps`]);
//! 2. squeeze (every pass to its earliest slot, each device's order kept: [`squeeze`]),
//!    reorder the warm-up without raising the peak, squeeze again;
//! 3. drop the redundant micro-batches when `m < 2p` ([`finish`]), reorder the cool-down;
//! 4. the last steps in one left-to-right walk ([`score`]): the greedy hole filling
//!    ([`reorder`]), the W relabelling and the timing ([`time`]), slot by slot.
//!
//! The winner is then timed against V-Half's order, which is taken where it fits the limit
//! and ends earlier ([`v_half_floor`], pipescope's addition), so `v-zb` is never slower
//! than `v-half`.
//!
//! **What keeps it fast, all exact** (the tests compare each shortcut with the plain step):
//! candidates that clear to rows already seen reuse the first one's answer; the squeezes
//! reuse each other's work on the rows' repeated middle; the walk gives up on a candidate
//! once one device's span plus the work it has left cannot beat the best so far (branch and
//! bound), before the cool-down is even squeezed; and with costs whose sums are exact the
//! search stops at a candidate whose span equals the busiest device's work. The module
//! docs of each step say how. Its size limits are `MAX_V_ZB_WORK` in the parent module;
//! docs/model.md and `benches/search.rs` give its running times.
//!
//! **Tests.** Each step's unit tests compare it with the source's step written plainly
//! (`steps_tests.rs` keeps the first port verbatim as the reference) over every block of
//! small p; `search.rs` checks that pruning and the early stop pick what scoring every
//! candidate picks. The suite checks the schedules' invariants (`tests/suite/search_vzb.rs`),
//! golden orders (`search_golden.rs`), V-ZB against V-Half's makespan, and the size limits
//! (`harden_bounds.rs`).

mod finish;
mod reorder;
mod score;
mod search;
mod squeeze;
mod steps;
mod time;
mod v_half_floor;

pub(crate) use search::generate;
