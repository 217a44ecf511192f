//! A stage as a group knapsack: one group per optional unit kind, its choices the ways to
//! split the copies (keep, recompute, compress; offloaded copies fixed beforehand), and the
//! capacity left by what is fixed (static memory, forced units, the logits, offload staging).
//! Also the knapsack's cheap bounds for the partition search.

use crate::anatomy::Anatomy;
use crate::plan::knapsack::{self, Choice, Group};

use super::full_layers::{FullLayers, least_layer_s};
use super::{BlockCounts, KINDS, KindDecision, KnapsackMode, StageEnv, keep_all};

/// Cheap bounds of [`knapsack_added_in`](super::knapsack_added_in)'s answer, from the
/// knapsack's linear relaxation (no table): `lower_s` is a lower bound (infinite only when
/// the stage cannot fit), `upper_s` an upper bound (finite only when it can). With offload
/// allowed the lower bound is 0 (an offload assignment may beat the relaxation without it)
/// and the upper bound is the one without offload (offload only ever lowers the answer).
pub fn knapsack_added_bounds(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
) -> knapsack::Bounds {
    let mut buffers = KeepBuffers::default();
    let b = over_layers(anatomy, counts, |full| {
        if mode.compress {
            let base = keep_all(anatomy, counts);
            let (groups, _, capacity) = formulate_with(
                anatomy,
                counts,
                env,
                mode,
                &base,
                &vec![0; base.len()],
                full,
            );
            capacity.map_or(NO_FIT, |c| knapsack::bounds(&groups, c))
        } else {
            keep_bounds_in(&mut buffers, anatomy, counts, env, full)
        }
    });
    if mode.offload_capacity_bytes == 0 || env.in_flight <= 2 {
        b
    } else {
        knapsack::Bounds {
            lower_s: 0.0,
            upper_s: b.upper_s,
        }
    }
}

/// Bounds over every whole-layer choice from `one`'s bounds (those of the groups, without
/// the layers' own time) with none and with all complete layers recomputed whole. A stage's
/// fewest bytes under k layers recomputed whole is linear in k past k = 1 (each such layer
/// trades what its units keep for its input) plus one recompute buffer from k = 1 on, so
/// it is least at one end: none or all. Usually all (each layer frees `in_flight` copies
/// for one buffer), but not always: with compression or one micro-batch in flight the
/// buffer can outweigh what the layers free. So only where neither end fits can nothing
/// fit; any choice with a layer costs at least one layer's forward.
pub(super) fn over_layers(
    anatomy: &Anatomy,
    counts: BlockCounts,
    mut one: impl FnMut(FullLayers) -> knapsack::Bounds,
) -> knapsack::Bounds {
    let none = one(FullLayers::NONE);
    let all = FullLayers::all(counts);
    if all == FullLayers::NONE {
        return none;
    }
    let most = one(all);
    if most.lower_s.is_infinite() && none.lower_s.is_infinite() {
        return NO_FIT;
    }
    knapsack::Bounds {
        lower_s: none.lower_s.min(least_layer_s(anatomy, counts)),
        upper_s: none.upper_s.min(most.upper_s + all.cost_s(anatomy)),
    }
}

/// Bounds of a stage that cannot fit.
const NO_FIT: knapsack::Bounds = knapsack::Bounds {
    lower_s: f64::INFINITY,
    upper_s: f64::INFINITY,
};

/// Buffers [`keep_bounds_in`] reuses from call to call.
#[derive(Debug, Default)]
pub(super) struct KeepBuffers {
    /// The keep-k-of-n groups.
    groups: Vec<knapsack::Arith>,
    /// The relaxation's chords.
    chords: Vec<(f64, usize)>,
}

/// [`formulate_with`]'s keep/recompute knapsack (no offload, no compression) handed straight
/// to [`knapsack::bounds_keep_in`], without building choice lists, its lists in `buffers`.
pub(super) fn keep_bounds_in(
    buffers: &mut KeepBuffers,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    full: FullLayers,
) -> knapsack::Bounds {
    let i = u64::from(env.in_flight);
    let mut fixed = anatomy.device_bytes
        + if env.logits {
            anatomy.logits_transient_bytes
        } else {
            0
        };
    let groups = &mut buffers.groups;
    groups.clear();
    for kind in KINDS {
        let n = counts.of(kind);
        let block = anatomy.block_of(kind);
        fixed += u64::from(n) * block.static_bytes;
        if n == 0 {
            continue;
        }
        for u in &block.units {
            let whole = full.copies(kind, u.forced);
            let Some(left) = n.checked_sub(whole) else {
                return NO_FIT;
            };
            let charge = if whole > 0 {
                fixed += u.size_bytes;
                0
            } else {
                u.size_bytes
            };
            if u.forced {
                fixed += i * u64::from(left) * u.size_bytes;
            } else {
                groups.push(knapsack::Arith {
                    n: left,
                    step: i * u.size_bytes,
                    charge,
                    unit_cost: u.forward_s,
                });
            }
        }
    }
    env.budget_bytes.checked_sub(fixed).map_or(NO_FIT, |c| {
        knapsack::bounds_keep_in(groups, c, &mut buffers.chords)
    })
}

/// The stage's group knapsack with no layer recomputed whole (see [`formulate_with`]).
pub(super) fn formulate(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    offload: &[u32],
) -> (Vec<Group>, Vec<usize>, Option<u64>) {
    formulate_with(anatomy, counts, env, mode, base, offload, FullLayers::NONE)
}

/// The stage's group knapsack with the layers `full` recomputed whole: groups, the base
/// decision each group belongs to, and the capacity left for them (`None` when the fixed
/// part alone exceeds the budget, or the copies do not allow `full` and `offload`). The
/// copies those layers recompute are taken out of their groups (each such unit kind is
/// dropped at least once, so its recomputation buffer is fixed), and their time is not in
/// the groups' costs: add [`FullLayers::cost_s`].
pub(super) fn formulate_with(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    offload: &[u32],
    full: FullLayers,
) -> (Vec<Group>, Vec<usize>, Option<u64>) {
    let i = u64::from(env.in_flight);
    let mut fixed = anatomy.device_bytes
        + if env.logits {
            anatomy.logits_transient_bytes
        } else {
            0
        };
    for kind in KINDS {
        fixed += u64::from(counts.of(kind)) * anatomy.block_of(kind).static_bytes;
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut owners: Vec<usize> = Vec::new();
    for (k, d) in base.iter().enumerate() {
        let Some(kind) = d.block else { continue };
        let u = &anatomy.block_of(kind).units[d.unit];
        let off = offload[k];
        let whole = full.copies(kind, u.forced);
        let Some(left) = d.count.checked_sub(off + whole) else {
            return (Vec::new(), Vec::new(), None);
        };
        fixed += 2 * u64::from(off) * u.size_bytes;
        // A kind some whole layer recomputes has its recomputation buffer whatever else.
        let (charge, prepaid) = if whole > 0 {
            (0, u.size_bytes)
        } else {
            (u.size_bytes, 0)
        };
        fixed += prepaid;
        if u.forced {
            fixed += i * u64::from(left) * u.size_bytes;
            continue;
        }
        let n = left;
        if !mode.compress {
            groups.push(Group::keep_of(
                knapsack::Arith {
                    n,
                    step: i * u.size_bytes,
                    charge,
                    unit_cost: u.forward_s,
                },
                |k| [k, 0, off, 0],
            ));
            owners.push(k);
            continue;
        }
        // Keep, recompute, or compress with any one codec that may hold the unit (none may
        // hold a dropout mask; only outlier-keeping codecs an outlier-sensitive unit).
        let mut choices = Vec::new();
        for keep in 0..=n {
            let rec = n - keep;
            choices.push(Choice {
                bytes: i * u64::from(keep) * u.size_bytes + if rec > 0 { charge } else { 0 },
                cost_s: f64::from(rec) * u.forward_s,
                tag: [keep, 0, off, 0],
            });
            for (c, codec) in u.codecs.iter().enumerate() {
                let Some(codec) = codec else { continue };
                for comp in 1..=(n - keep) {
                    let rec = n - keep - comp;
                    let bytes = i
                        * (u64::from(keep) * u.size_bytes
                            + u64::from(comp) * codec.compressed_bytes)
                        + if rec > 0 { charge } else { 0 };
                    let cost_s = f64::from(rec) * u.forward_s + f64::from(comp) * codec.codec_s;
                    choices.push(Choice {
                        bytes,
                        cost_s,
                        tag: [keep, comp, off, c as u32],
                    });
                }
            }
        }
        groups.push(Group {
            choices,
            arith: None,
        });
        owners.push(k);
    }
    (groups, owners, env.budget_bytes.checked_sub(fixed))
}
