//! The whole-layer search of [`solve_uncached`] against the plain loop it replaced, which
//! formulates every count of layers recomputed whole.

use super::*;
use crate::plan::stage::StageEnv;
use crate::plan::testkit;
use proptest::prelude::*;

/// The reference: every count of complete layers recomputed whole is formulated and, unless
/// its own time or its groups' lower bound rules it out, solved.
pub(super) fn solve_reference(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    want_decisions: bool,
) -> Option<KnapsackPlan> {
    let base = keep_all(anatomy, counts);
    let offload = vec![0; base.len()];
    let scratch = &mut knapsack::Scratch::default();
    let none = formulate_with(
        anatomy,
        counts,
        env,
        mode,
        &base,
        &offload,
        FullLayers::NONE,
    );
    let mut best = solve_formulated(
        scratch,
        anatomy,
        none,
        &base,
        want_decisions,
        FullLayers::NONE,
    );
    for full in FullLayers::options(counts) {
        let floor = full.cost_s(anatomy);
        if best.as_ref().is_some_and(|b| b.added_s <= floor) {
            continue;
        }
        let formulated = formulate_with(anatomy, counts, env, mode, &base, &offload, full);
        if let Some(b) = &best {
            let Some(c) = formulated.2 else { continue };
            if cannot_beat(floor + knapsack::lower_bound(&formulated.0, c), b.added_s) {
                continue;
            }
        }
        if let Some(p) = solve_formulated(scratch, anatomy, formulated, &base, want_decisions, full)
            && best.as_ref().is_none_or(|b| p.added_s < b.added_s)
        {
            best = Some(p);
        }
    }
    best
}

/// A stage of a GPT-like anatomy: block counts with up to `max` layers, in-flight count and
/// budget (in units of the anatomy's `x`).
fn stage_case(max: u32) -> impl Strategy<Value = (u64, u64, BlockCounts, u32, u64)> {
    (
        1u64..40,
        0u64..20,
        1..=max,
        0u32..2,
        0u32..2,
        0u32..2,
        1u32..9,
        0u64..2000,
    )
        .prop_map(|(x, st, layers, extra, e, h, i, budget)| {
            let x = x << 10;
            let counts = BlockCounts {
                embedding: e,
                attention: layers + extra,
                mlp: layers,
                head: h,
                mlp_layers: layers,
                ..BlockCounts::default()
            };
            (x, st * x, counts, i, budget * x)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn whole_layer_search_equals_the_reference(
        (x, st, counts, i, budget) in stage_case(24),
        compress in any::<bool>(),
        want in any::<bool>(),
    ) {
        let a = testkit::gpt_like(64, x, st);
        let env = StageEnv { in_flight: i, budget_bytes: budget, logits: counts.head > 0 };
        let mode = KnapsackMode { compress, offload_capacity_bytes: 0 };
        let base = keep_all(&a, counts);
        let offload = vec![0; base.len()];
        let mut scratch = knapsack::Scratch::default();
        let got = solve_uncached(&mut scratch, &a, counts, &env, mode, (&base, &offload), want);
        let reference = solve_reference(&a, counts, &env, mode, want);
        prop_assert_eq!(got, reference);
    }
}
