//! One stage (or one device of a multi-chunk schedule) as the planner sees it: which blocks it
//! holds, what each unit kind does (keep, recompute, compress, offload), and the memory and
//! time that follow under the memory model of `docs/model.md` (one model for planner and
//! simulator).
//!
//! Files: this one holds the stage's vocabulary and its cost model ([`costs`]); `choose`
//! asks the knapsack for a stage's decisions; `offload_search` tries host-offload
//! assignments around it; `formulate` turns a stage into the knapsack's groups and bounds;
//! `lynx` is Lynx's policy (recomputation placed in the communication windows).

use crate::anatomy::{Anatomy, BlockKind};

mod choose;
mod formulate;
mod full_layers;
mod lynx;
mod lynx_search;
mod offload_search;

pub use choose::{KnapsackMode, KnapsackPlan, knapsack_added_in, knapsack_in};
#[cfg(test)]
use formulate::formulate;
pub use formulate::knapsack_added_bounds;
pub use full_layers::{layer_extra_flops, layer_extra_s};
pub use lynx::{Windows, collectives_s, exposed_s, lynx_bounds, lynx_knapsack};

/// How many blocks of each kind a stage holds: the stage's isomorphism class (two ranges with
/// equal counts have the same knapsack).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BlockCounts {
    /// Embedding blocks (0 or 1).
    pub embedding: u32,
    /// Attention blocks.
    pub attention: u32,
    /// Dense MLP blocks.
    pub mlp: u32,
    /// Mixture-of-experts blocks.
    pub moe: u32,
    /// Multi-token-prediction blocks (an MTP layer's projection and attention).
    pub mtp: u32,
    /// Head blocks (0 or 1).
    pub head: u32,
    /// Complete attention + dense-MLP layers (both blocks here): the MLP's input, kept by
    /// every strategy but full recomputation, can be rebuilt by re-running the attention
    /// block before it, so the knapsack may recompute such a layer whole.
    pub mlp_layers: u32,
    /// Complete attention + MoE layers, likewise.
    pub moe_layers: u32,
}

impl BlockCounts {
    /// Counts of the blocks `first..=last` of the chain.
    pub fn of_range(anatomy: &Anatomy, first: usize, last: usize) -> Self {
        let n = anatomy.num_blocks();
        let mut c = BlockCounts::default();
        if first > last || last >= n {
            return c;
        }
        c.embedding = u32::from(first == 0);
        c.head = u32::from(last == n - 1);
        let lo = first.max(1);
        let hi = last.min(n - 2);
        if lo <= hi {
            // Odd blocks in lo..=hi are attention up to block 2 main_layers - 1, MTP after;
            // even ones a dense MLP up to block 2 dense_layers, MoE after.
            let odd = odd_in(lo, hi);
            let even = (hi - lo + 1) - odd;
            let attention = odd_in(
                lo,
                hi.min((2 * anatomy.main_layers as usize).saturating_sub(1)),
            );
            let mlp = even_in(lo, hi.min(2 * anatomy.dense_layers as usize));
            c.attention = attention as u32;
            c.mtp = (odd - attention) as u32;
            c.mlp = mlp as u32;
            c.moe = (even - mlp) as u32;
            // A layer is complete when its follower (even block j) and the attention block
            // j - 1 before it are both in the range.
            let dense_end = 2 * anatomy.dense_layers as usize;
            c.mlp_layers = even_in(lo + 1, hi.min(dense_end)) as u32;
            c.moe_layers = even_in(
                (lo + 1).max(dense_end + 1),
                hi.min(2 * anatomy.main_layers as usize),
            ) as u32;
        }
        c
    }

    /// Adds another stage's counts (a device's chunks).
    pub fn plus(self, o: BlockCounts) -> Self {
        BlockCounts {
            embedding: self.embedding + o.embedding,
            attention: self.attention + o.attention,
            mlp: self.mlp + o.mlp,
            moe: self.moe + o.moe,
            mtp: self.mtp + o.mtp,
            head: self.head + o.head,
            mlp_layers: self.mlp_layers + o.mlp_layers,
            moe_layers: self.moe_layers + o.moe_layers,
        }
    }

    /// Adds `n` whole layers made of the blocks `kinds` (opener, follower): both blocks and,
    /// for an attention + MLP or MoE layer, the complete layers.
    pub fn add_layers(&mut self, kinds: [BlockKind; 2], n: u32) {
        self.add(kinds[0], n);
        self.add(kinds[1], n);
        match kinds {
            [BlockKind::Attention, BlockKind::Mlp] => self.mlp_layers += n,
            [BlockKind::Attention, BlockKind::Moe] => self.moe_layers += n,
            _ => {}
        }
    }

    /// The same blocks with no complete layers: the knapsack without whole-layer
    /// recomputation (Lynx's policies, which place unit recomputation in windows).
    pub fn without_layers(self) -> Self {
        BlockCounts {
            mlp_layers: 0,
            moe_layers: 0,
            ..self
        }
    }

    /// Adds `n` blocks of `kind`.
    pub fn add(&mut self, kind: BlockKind, n: u32) {
        let slot = match kind {
            BlockKind::Embedding => &mut self.embedding,
            BlockKind::Attention => &mut self.attention,
            BlockKind::Mlp => &mut self.mlp,
            BlockKind::Moe => &mut self.moe,
            BlockKind::Mtp => &mut self.mtp,
            BlockKind::Head => &mut self.head,
        };
        *slot += n;
    }

    /// Blocks of `kind`.
    pub fn of(&self, kind: BlockKind) -> u32 {
        match kind {
            BlockKind::Embedding => self.embedding,
            BlockKind::Attention => self.attention,
            BlockKind::Mlp => self.mlp,
            BlockKind::Moe => self.moe,
            BlockKind::Mtp => self.mtp,
            BlockKind::Head => self.head,
        }
    }

    /// Total blocks.
    pub fn total(&self) -> u32 {
        self.embedding + self.attention + self.mlp + self.moe + self.mtp + self.head
    }
}

/// Odd numbers in `lo..=hi` (0 when `hi < lo`).
fn odd_in(lo: usize, hi: usize) -> usize {
    if hi < lo { 0 } else { hi.div_ceil(2) - lo / 2 }
}

/// Even numbers in `lo..=hi` for `lo >= 1` (0 when `hi < lo`).
fn even_in(lo: usize, hi: usize) -> usize {
    if hi < lo { 0 } else { hi / 2 - (lo - 1) / 2 }
}

/// Block kinds in chain order.
pub const KINDS: [BlockKind; 6] = BlockKind::ALL;

/// What a stage does with the copies of one unit kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindDecision {
    /// Block kind the unit belongs to.
    pub block: Option<BlockKind>,
    /// Index of the unit in its block's `units`.
    pub unit: usize,
    /// Copies (blocks of that kind in the stage).
    pub count: u32,
    /// Copies kept.
    pub keep: u32,
    /// Copies recomputed.
    pub recompute: u32,
    /// Of the recomputed copies, those recomputed early in the device's communication
    /// windows (Lynx); the rest are recomputed on demand, right before their backward.
    pub overlap: u32,
    /// Copies kept compressed.
    pub compress: u32,
    /// The codec of the compressed copies: an index into the GPU's codecs
    /// ([`Anatomy::codec_names`](crate::anatomy::Anatomy::codec_names)).
    pub codec: u32,
    /// Copies offloaded to host.
    pub offload: u32,
}

/// The memory and time of a stage under given decisions (per micro-batch unless said).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageCosts {
    /// Weights, gradients and optimizer state.
    pub static_bytes: u64,
    /// Bytes kept on the device per micro-batch (compressed sizes for compressed copies).
    pub act_bytes: u64,
    /// Of `act_bytes`, the inputs of weight GEMMs kept after B until W.
    pub w_bytes: u64,
    /// Bytes per micro-batch moved to host.
    pub offload_bytes: u64,
    /// Transient bytes: recomputation buffer + logits (last stage) + offload staging.
    pub transient_bytes: u64,
    /// Peak: static + in-flight x act + transient.
    pub peak_bytes: u64,
    /// Forward time (codec compression included).
    pub forward_s: f64,
    /// Input-gradient backward time (decompression included, recomputation excluded).
    pub backward_b_s: f64,
    /// Weight-gradient backward time.
    pub backward_w_s: f64,
    /// Recomputation time.
    pub recompute_s: f64,
    /// Of `recompute_s`, what the communication windows hide (Lynx): the mean over the
    /// device's backwards of the overlapped recomputation that fits its window.
    pub hidden_s: f64,
}

impl StageCosts {
    /// Forward + backward + the exposed recomputation per micro-batch.
    pub fn compute_s(&self) -> f64 {
        self.forward_s + self.backward_b_s + self.backward_w_s + self.recompute_s - self.hidden_s
    }
}

/// Everything about a stage the planner needs besides its decisions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageEnv {
    /// Peak micro-batches (micro-batch-chunks for a device) whose activations are alive.
    pub in_flight: u32,
    /// Memory budget of the device.
    pub budget_bytes: u64,
    /// Whether the stage holds the logits transient (it ends with the head).
    pub logits: bool,
}

/// Every unit kind of a stage with its count, all kept: the `none` decisions.
pub fn keep_all(anatomy: &Anatomy, counts: BlockCounts) -> Vec<KindDecision> {
    let mut out = Vec::new();
    for kind in KINDS {
        let n = counts.of(kind);
        if n == 0 {
            continue;
        }
        for unit in 0..anatomy.block_of(kind).units.len() {
            out.push(KindDecision {
                block: Some(kind),
                unit,
                count: n,
                keep: n,
                ..KindDecision::default()
            });
        }
    }
    out
}

/// A unit's compressed size and codec time under codec `codec` (the unit's size and no time
/// when that codec may not hold it).
pub fn codec_of(u: &crate::anatomy::Unit, codec: u32) -> (u64, f64) {
    u.codecs
        .get(codec as usize)
        .copied()
        .flatten()
        .map_or((u.size_bytes, 0.0), |c| (c.compressed_bytes, c.codec_s))
}

/// How a stage's recomputation time is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecomputeRule {
    /// Each recomputed copy costs its unit's forward (the knapsack strategies).
    #[default]
    Units,
    /// `full`: the forward of every attention and MLP block (Megatron re-runs the whole
    /// layer, its tensor-parallel collectives included).
    WholeLayer,
    /// `selective`: Megatron's checkpoint of core attention re-runs the dropped units and,
    /// once per attention block, the kept units it ends with (`Unit::selective_rerun`:
    /// attention x V and the context's permute).
    CoreAttention,
}

/// Memory and time of a stage under `decisions`, its recomputation counted by `rule`.
pub fn costs(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    decisions: &[KindDecision],
    rule: RecomputeRule,
) -> StageCosts {
    let whole_layer_recompute = rule == RecomputeRule::WholeLayer;
    let mut c = StageCosts {
        static_bytes: anatomy.device_bytes,
        ..StageCosts::default()
    };
    for kind in KINDS {
        let n = f64::from(counts.of(kind));
        let b = anatomy.block_of(kind);
        c.static_bytes += u64::from(counts.of(kind)) * b.static_bytes;
        c.forward_s += n * b.forward_s;
        c.backward_b_s += n * b.backward_b_s;
        c.backward_w_s += n * b.backward_w_s;
    }
    let mut recompute_transient = 0u64;
    for d in decisions {
        let Some(kind) = d.block else { continue };
        let u = &anatomy.block_of(kind).units[d.unit];
        let (compressed_bytes, codec_s) = codec_of(u, d.codec);
        let kept = u64::from(d.keep) * u.size_bytes + u64::from(d.compress) * compressed_bytes;
        c.act_bytes += kept;
        if u.needed_by_w {
            c.w_bytes += kept;
        }
        c.offload_bytes += u64::from(d.offload) * u.size_bytes;
        // On-demand copies are recomputed one block at a time; overlapped ones are all
        // recomputed before the backward that reads them, so they are alive together.
        if d.recompute > d.overlap {
            recompute_transient += u.size_bytes;
        }
        recompute_transient += u64::from(d.overlap) * u.size_bytes;
        if !whole_layer_recompute {
            c.recompute_s += f64::from(d.recompute) * u.forward_s;
            // A recomputed MLP or MoE input: its layer is recomputed whole (the attention
            // block re-run), which costs more than its units' forwards.
            if u.forced && d.recompute > 0 {
                c.recompute_s += f64::from(d.recompute) * layer_extra_s(anatomy, kind);
            }
        }
        if rule == RecomputeRule::CoreAttention && u.selective_rerun {
            c.recompute_s += f64::from(d.count) * u.forward_s;
        }
        let codec = f64::from(d.compress) * codec_s / 2.0;
        c.forward_s += codec;
        c.backward_b_s += codec;
    }
    if whole_layer_recompute {
        c.recompute_s = KINDS
            .iter()
            .filter(|k| k.is_layer())
            .map(|&k| f64::from(counts.of(k)) * anatomy.block_of(k).forward_s)
            .sum();
    }
    c.transient_bytes = recompute_transient
        + if env.logits {
            anatomy.logits_transient_bytes
        } else {
            0
        }
        + 2 * c.offload_bytes;
    c.peak_bytes = c.static_bytes + u64::from(env.in_flight) * c.act_bytes + c.transient_bytes;
    c
}

#[cfg(test)]
mod codec_tests;

/// Steps the brute-force tests' odometer `idx` (one position per unit kind, counting up to
/// `opts[k].len()`) to the next combination; `false` once every combination was visited.
#[cfg(test)]
pub(crate) fn next_choice<T>(idx: &mut [usize], opts: &[Vec<T>]) -> bool {
    for (i, options) in idx.iter_mut().zip(opts) {
        *i += 1;
        if *i < options.len() {
            return true;
        }
        *i = 0;
    }
    false
}

/// [`knapsack_in`] with a cache of its own (tests ask one question at a time).
#[cfg(test)]
pub(crate) fn knapsack(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
) -> Option<KnapsackPlan> {
    knapsack_in(
        &crate::plan::memo::KnapsackCache::default(),
        anatomy,
        counts,
        env,
        mode,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::knapsack;
    use crate::plan::testkit;
    use proptest::prelude::*;

    /// Least added time over every per-kind split allowed by `mode` and every count of
    /// complete layers recomputed whole, by enumeration.
    fn brute(a: &Anatomy, counts: BlockCounts, env: &StageEnv, mode: KnapsackMode) -> Option<f64> {
        std::iter::once(full_layers::FullLayers::NONE)
            .chain(full_layers::FullLayers::options(counts))
            .filter_map(|full| brute_with(a, counts, env, mode, full))
            .min_by(f64::total_cmp)
    }

    /// [`brute`] with the layers `full` recomputed whole: in each of them every unit but the
    /// layer input is recomputed (a recomputed MLP input stands for its whole layer in
    /// [`costs`]).
    fn brute_with(
        a: &Anatomy,
        counts: BlockCounts,
        env: &StageEnv,
        mode: KnapsackMode,
        full: full_layers::FullLayers,
    ) -> Option<f64> {
        let base = keep_all(a, counts);
        let opts: Vec<Vec<[u32; 3]>> = base
            .iter()
            .map(|d| {
                let kind = d.block.unwrap();
                let u = &a.block_of(kind).units[d.unit];
                let n = d.count - full.copies(kind, u.forced);
                if u.forced {
                    return vec![[n, 0, 0]];
                }
                let mut v = Vec::new();
                for keep in 0..=n {
                    for comp in 0..=(n - keep) {
                        for off in 0..=(n - keep - comp) {
                            let shrinks = u.compressed_bytes < u.size_bytes;
                            let ok_c = (mode.compress && shrinks) || comp == 0;
                            let ok_o = mode.offload_capacity_bytes > 0 || off == 0;
                            if ok_c && ok_o {
                                v.push([keep, comp, off]);
                            }
                        }
                    }
                }
                v
            })
            .collect();
        let mut idx = vec![0usize; base.len()];
        let mut best: Option<f64> = None;
        loop {
            let mut d = base.clone();
            let mut host = 0u64;
            for (k, dd) in d.iter_mut().enumerate() {
                let [keep, comp, off] = opts[k][idx[k]];
                dd.keep = keep;
                dd.compress = comp;
                dd.offload = off;
                dd.recompute = dd.count - keep - comp - off;
                host += u64::from(off) * a.block_of(dd.block.unwrap()).units[dd.unit].size_bytes;
            }
            let c = costs(a, counts, env, &d, RecomputeRule::Units);
            let codec: f64 = d
                .iter()
                .map(|dd| {
                    f64::from(dd.compress) * a.block_of(dd.block.unwrap()).units[dd.unit].codec_s
                })
                .sum();
            if c.peak_bytes <= env.budget_bytes && host <= mode.offload_capacity_bytes {
                let t = c.recompute_s + codec;
                if best.is_none_or(|b| t < b) {
                    best = Some(t);
                }
            }
            if !crate::plan::stage::next_choice(&mut idx, &opts) {
                return best;
            }
        }
    }

    fn case(max_n: u32) -> impl Strategy<Value = (u64, u64, BlockCounts, u32, u64)> {
        (
            1u64..50,
            0u64..20,
            0..=max_n,
            0..=max_n,
            0u32..2,
            0u32..2,
            1u32..6,
            0u64..400,
            0..=max_n,
        )
            .prop_map(|(x, st, att, mlp, e, h, i, budget, layers)| {
                let x = x << 10;
                let counts = BlockCounts {
                    embedding: e,
                    attention: att,
                    mlp,
                    head: h,
                    mlp_layers: layers.min(att).min(mlp),
                    ..BlockCounts::default()
                };
                (x, st * x, counts, i, budget * x)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn recompute_knapsack_matches_enumeration((x, st, counts, i, budget) in case(3)) {
            let a = testkit::small(4, x, st);
            let env = StageEnv { in_flight: i, budget_bytes: budget, logits: counts.head > 0 };
            let mode = KnapsackMode::default();
            let got = knapsack(&a, counts, &env, mode);
            let want = brute(&a, counts, &env, mode);
            prop_assert_eq!(got.is_some(), want.is_some());
            let b = knapsack_added_bounds(&a, counts, &env, mode);
            match want {
                Some(w) => prop_assert!(b.lower_s <= w + 1e-12 && w <= b.upper_s + 1e-12, "{} <= {} <= {}", b.lower_s, w, b.upper_s),
                None => prop_assert!(b.lower_s.is_infinite() && b.upper_s.is_infinite()),
            }
            if let (Some(g), Some(w)) = (got, want) {
                prop_assert!((g.added_s - w).abs() < 1e-9, "{} vs {}", g.added_s, w);
                let c = costs(&a, counts, &env, &g.decisions, RecomputeRule::Units);
                prop_assert!(c.peak_bytes <= budget);
                prop_assert!((c.recompute_s - g.added_s).abs() < 1e-9);
            }
        }

        #[test]
        fn compress_knapsack_matches_enumeration((x, st, counts, i, budget) in case(2)) {
            let a = testkit::small(4, x, st);
            let env = StageEnv { in_flight: i, budget_bytes: budget, logits: counts.head > 0 };
            let mode = KnapsackMode { compress: true, offload_capacity_bytes: 0 };
            let got = knapsack(&a, counts, &env, mode);
            let want = brute(&a, counts, &env, mode);
            prop_assert_eq!(got.is_some(), want.is_some());
            let b = knapsack_added_bounds(&a, counts, &env, mode);
            match want {
                Some(w) => prop_assert!(b.lower_s <= w + 1e-12 && w <= b.upper_s + 1e-12, "{} <= {} <= {}", b.lower_s, w, b.upper_s),
                None => prop_assert!(b.lower_s.is_infinite() && b.upper_s.is_infinite()),
            }
            if let (Some(g), Some(w)) = (got, want) {
                prop_assert!((g.added_s - w).abs() < 1e-9, "{} vs {}", g.added_s, w);
                prop_assert!(costs(&a, counts, &env, &g.decisions, RecomputeRule::Units).peak_bytes <= budget);
            }
        }
    }

    /// The compress knapsack on a real anatomy (GPT-3 175B at s 16384: compressed sizes with
    /// per-block scales make the dense table tens of thousands of cells wide, so the pruned
    /// fronts answer) against the dense table alone, over stage sizes, in-flight counts and
    /// budgets: the same least cost, and decisions that fit.
    #[test]
    fn pruned_fronts_agree_with_the_dense_table_on_a_real_anatomy() {
        let s = crate::scenario::Catalog::builtin()
            .scenario("gpt3-175b-16k")
            .unwrap();
        let a = Anatomy::build(&s).unwrap();
        let mut compared = 0;
        for (att, mlp) in [(6u32, 6u32), (12, 12), (13, 12), (20, 20)] {
            let counts = BlockCounts {
                embedding: 0,
                attention: att,
                mlp,
                head: 0,
                ..BlockCounts::default()
            };
            for in_flight in [1u32, 2, 3, 5, 8] {
                for gib in [20u64, 30, 40, 50, 60, 70, 90] {
                    let env = StageEnv {
                        in_flight,
                        budget_bytes: gib << 30,
                        logits: false,
                    };
                    let mode = KnapsackMode {
                        compress: true,
                        offload_capacity_bytes: 0,
                    };
                    let base = keep_all(&a, counts);
                    let (groups, _, cap) =
                        formulate(&a, counts, &env, mode, &base, &vec![0; base.len()]);
                    let Some(cap) = cap else { continue };
                    let got = knapsack::solve(&groups, cap);
                    let want = knapsack::solve_dense(&groups, cap);
                    assert_eq!(
                        got.is_some(),
                        want.is_some(),
                        "{att}/{mlp} i{in_flight} {gib}"
                    );
                    if let (Some(g), Some(w)) = (got, want) {
                        assert!((g.cost_s - w.cost_s).abs() <= 1e-12 * w.cost_s.max(1.0));
                        assert!(g.bytes <= cap);
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared >= 20, "only {compared} compared");
    }

    /// `unified`'s offload (a second resource) is heuristic: over small cases it is never
    /// better than the optimum (sanity), and never worse than the knapsack without offload.
    /// The largest gap to the optimum seen is printed (see the module docs for the figure).
    #[test]
    fn unified_gap_to_optimum_is_bounded() {
        let mut worst_gap = 0.0f64;
        let (mut cases, mut missed, mut sum_gap) = (0, 0u32, 0.0f64);
        for x in [1u64 << 10, 3 << 10, 7 << 10] {
            for i in 2..6u32 {
                for att in 0..=2u32 {
                    for mlp in 0..=1u32 {
                        for budget in (0..120).step_by(7) {
                            for host in [0u64, 2, 5, 11] {
                                let a = testkit::small(4, x, x);
                                let counts = BlockCounts {
                                    embedding: 0,
                                    attention: att,
                                    mlp,
                                    head: 0,
                                    ..BlockCounts::default()
                                };
                                let env = StageEnv {
                                    in_flight: i,
                                    budget_bytes: budget * x,
                                    logits: false,
                                };
                                let mode = KnapsackMode {
                                    compress: true,
                                    offload_capacity_bytes: host * x,
                                };
                                let got = knapsack(&a, counts, &env, mode);
                                let want = brute(&a, counts, &env, mode);
                                let plain = knapsack(
                                    &a,
                                    counts,
                                    &env,
                                    KnapsackMode {
                                        compress: true,
                                        offload_capacity_bytes: 0,
                                    },
                                );
                                assert!(want.is_some() || got.is_none());
                                if let Some(p) = &plain {
                                    let g = got.as_ref().expect("offload never loses a fit");
                                    assert!(g.added_s <= p.added_s + 1e-12);
                                }
                                if let (Some(g), Some(w)) = (got, want) {
                                    assert!(g.added_s + 1e-9 >= w);
                                    let c =
                                        costs(&a, counts, &env, &g.decisions, RecomputeRule::Units);
                                    assert!(c.peak_bytes <= env.budget_bytes);
                                    let base = c.forward_s + c.backward_b_s + c.backward_w_s
                                        - (g.added_s - c.recompute_s);
                                    let gap = (g.added_s - w) / base.max(1e-9);
                                    worst_gap = worst_gap.max(gap);
                                    cases += 1;
                                    if gap > 1e-9 {
                                        missed += 1;
                                        sum_gap += gap;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        println!(
            "unified offload heuristic: worst gap {:.2}% of stage time over {cases} cases; \
             {missed} not optimal, mean gap of those {:.2}%",
            100.0 * worst_gap,
            100.0 * sum_gap / f64::from(missed.max(1))
        );
        assert!(worst_gap < 0.05, "gap {worst_gap}");
    }
}
