//! The knapsack print lists every anatomy field a stage solve reads, and a shelf answers
//! every question as a fresh cache does, never with an answer stored for another print.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::plan::stage::{self, KnapsackMode, RecomputeRule};
use crate::scenario::{Catalog, Scenario, ScenarioOverrides};

/// `gpt3-175b-16k` with tensor parallelism `tp` (sequence parallel) on `gpu`.
fn gpt3(tp: u32, gpu: &str, seq_len: u64) -> Anatomy {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    ScenarioOverrides {
        gpu: Some(gpu.into()),
        seq_len: Some(seq_len),
        tp: Some(tp),
        sp: Some(tp > 1),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    Anatomy::build(&s).unwrap()
}

/// Qwen3-30B-A3B on 64 H100s with 16-way expert parallelism (its all-to-alls can overlap).
fn qwen_moe() -> Anatomy {
    let c = Catalog::builtin();
    let mut s: Scenario = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        tp: Some(1),
        sp: Some(false),
        pp: Some(4),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.parallel.dp = 16;
    s.parallel.ep = 16;
    Anatomy::build(&s).unwrap()
}

/// Stage questions on `a`: several block ranges, in-flight counts, budgets from tight to
/// roomy (fractions of keeping everything), with and without compression and offload.
fn questions(a: &Anatomy) -> Vec<(BlockCounts, StageEnv, KnapsackMode)> {
    let n = a.num_blocks();
    let ranges = [(0, 4), (1, 6), (3, 3), (2, 9), (n - 6, n - 1), (5, 14)];
    let mut out = Vec::new();
    for &(first, last) in &ranges {
        let counts = BlockCounts::of_range(a, first, last.min(n - 1));
        for in_flight in [1, 3, 6] {
            let logits = last >= n - 1;
            let roomy = StageEnv {
                in_flight,
                budget_bytes: u64::MAX,
                logits,
            };
            let all = stage::keep_all(a, counts);
            let peak = stage::costs(a, counts, &roomy, &all, RecomputeRule::Units).peak_bytes;
            for share in [0.35, 0.55, 0.8, 1.1] {
                let env = StageEnv {
                    budget_bytes: (peak as f64 * share) as u64,
                    ..roomy
                };
                for (compress, offload_capacity_bytes) in
                    [(false, 0), (true, 0), (false, peak / 4), (true, peak / 4)]
                {
                    let mode = KnapsackMode {
                        compress,
                        offload_capacity_bytes,
                    };
                    out.push((counts, env, mode));
                }
            }
        }
    }
    out
}

/// Every answer for `a` on `questions`, each from a fresh cache.
fn fresh_answers(
    a: &Anatomy,
    questions: &[(BlockCounts, StageEnv, KnapsackMode)],
) -> Vec<Option<KnapsackPlan>> {
    questions
        .iter()
        .map(|(c, e, m)| stage::knapsack_in(&KnapsackCache::default(), a, *c, e, *m))
        .collect()
}

/// How many answers of two lists differ, and how many recompute anything at all.
fn differing(x: &[Option<KnapsackPlan>], y: &[Option<KnapsackPlan>]) -> usize {
    x.iter().zip(y).filter(|(a, b)| a != b).count()
}

/// A shelf asked in turn on anatomies that differ in fields the knapsack reads (the
/// all-to-all overlap's shorter MoE forward; an attention unit twice as slow to recompute)
/// keeps a store for each, and answers every question as a fresh cache does, although the
/// same questions get other answers on the other anatomy (so a shared store would show).
/// The split-backward variant differs in fields no solve reads: it shares the plain one's
/// store, and its answers are the plain ones.
#[test]
fn a_shelf_never_answers_from_another_print() {
    let plain = gpt3(8, "h100-80gb", 16384);
    let split = plain.for_split_backward().unwrap();
    assert_ne!(plain, split);
    let mut slow = plain.clone();
    for u in slow.attention.units.iter_mut().filter(|u| !u.forced) {
        u.forward_s *= 2.0;
    }
    let moe = qwen_moe();
    let overlapped = moe.for_a2a_overlap(true).unwrap();
    let shelf = KnapsackShelf::default();
    for (a, b, share) in [
        (&plain, &split, true),
        (&plain, &slow, false),
        (&moe, &overlapped, false),
    ] {
        let asked = questions(a);
        let (want_a, want_b) = (fresh_answers(a, &asked), fresh_answers(b, &asked));
        assert_eq!(
            KnapsackAnatomy::of(a) == KnapsackAnatomy::of(b),
            share,
            "prints"
        );
        if share {
            assert_eq!(differing(&want_a, &want_b), 0);
        } else {
            assert!(differing(&want_a, &want_b) > 0, "the pair shows nothing");
        }
        // Twice each, interleaved: the second round reads what the first stored.
        for _ in 0..2 {
            for (anatomy, want) in [(a, &want_a), (b, &want_b)] {
                let cache = shelf.cache_for(anatomy);
                for (q, w) in asked.iter().zip(want.iter()) {
                    let got = stage::knapsack_in(&cache, anatomy, q.0, &q.1, q.2);
                    assert_eq!(&got, w, "{q:?}");
                }
            }
        }
    }
    // plain (with split), slow, moe, overlapped.
    assert_eq!(shelf.anatomies(), 4);
    assert!(shelf.answers() > 0);
}

/// The print holds every field a stage solve reads: an anatomy of another GPU, sequence
/// length and tensor parallelism, given only the printed fields of the first (per unit:
/// size, forced, forward and codecs), answers every question as the first does. A solve
/// that came to read a field left out of the print would make them differ here.
#[test]
fn the_printed_fields_decide_every_answer() {
    let a = gpt3(8, "h100-80gb", 16384);
    let mut b = gpt3(2, "a100-80gb", 4096);
    assert_ne!(KnapsackAnatomy::of(&a), KnapsackAnatomy::of(&b));
    b.layers = a.layers;
    b.main_layers = a.main_layers;
    b.dense_layers = a.dense_layers;
    b.device_bytes = a.device_bytes;
    b.logits_transient_bytes = a.logits_transient_bytes;
    for kind in BlockKind::ALL {
        let (from, to) = (a.block_of(kind), b.block_of_mut(kind));
        assert_eq!(from.units.len(), to.units.len(), "{kind:?}");
        to.static_bytes = from.static_bytes;
        to.forward_s = from.forward_s;
        for (f, t) in from.units.iter().zip(to.units.iter_mut()) {
            t.size_bytes = f.size_bytes;
            t.forced = f.forced;
            t.forward_s = f.forward_s;
            t.codecs = f.codecs.clone();
        }
    }
    assert_eq!(KnapsackAnatomy::of(&a), KnapsackAnatomy::of(&b));
    assert_ne!(a, b);
    let asked = questions(&a);
    let want = fresh_answers(&a, &asked);
    assert_eq!(differing(&want, &fresh_answers(&b, &asked)), 0);
    // The questions are not trivial: some recompute, some compress, some offload, some
    // do not fit.
    let decided = |f: fn(&stage::KindDecision) -> u32| {
        want.iter()
            .flatten()
            .any(|p| p.decisions.iter().any(|d| f(d) > 0))
    };
    assert!(decided(|d| d.recompute));
    assert!(decided(|d| d.compress));
    assert!(decided(|d| d.offload));
    assert!(want.iter().any(Option::is_none));
}

/// A shelf past its size lets go of the other stores, never of the one asked for, and
/// still answers as a fresh cache does.
#[test]
fn a_full_shelf_keeps_the_store_asked_for() {
    let a = gpt3(8, "h100-80gb", 16384);
    let b = gpt3(4, "h100-80gb", 8192);
    let shelf = KnapsackShelf::with_max_answers(10);
    for anatomy in [&a, &b, &a] {
        let asked = questions(anatomy);
        let want = fresh_answers(anatomy, &asked);
        let cache = shelf.cache_for(anatomy);
        for (q, w) in asked.iter().zip(&want) {
            assert_eq!(&stage::knapsack_in(&cache, anatomy, q.0, &q.1, q.2), w);
        }
        assert!(cache.len() > 10);
        assert_eq!(shelf.anatomies(), 1);
    }
}

/// Letting go starts with the store asked for longest ago, skips the one kept, and stops
/// once few enough answers are left.
#[test]
fn letting_go_takes_the_oldest_stores_first() {
    let prints: Vec<KnapsackAnatomy> = [(8, 16384), (4, 8192), (2, 4096)]
        .iter()
        .map(|&(tp, seq)| KnapsackAnatomy::of(&gpt3(tp, "h100-80gb", seq)))
        .collect();
    let store = |n: u32| {
        let answers: Answers = (0..n)
            .map(|i| {
                (
                    (BlockCounts::default(), i, 0, false, false, Vec::new()),
                    (false, None),
                )
            })
            .collect();
        Arc::new(Mutex::new(answers))
    };
    // Asked for at ticks 5, 1 and 3, ten answers each; the second is kept.
    let mut stores: HashMap<KnapsackAnatomy, (u64, SharedAnswers)> = prints
        .iter()
        .zip([5, 1, 3])
        .map(|(p, tick)| (p.clone(), (tick, store(10))))
        .collect();
    let_go(&mut stores, (30, 20), &prints[1]);
    assert!(stores.contains_key(&prints[0]) && stores.contains_key(&prints[1]));
    assert_eq!(stores.len(), 2);
    let_go(&mut stores, (20, 0), &prints[1]);
    assert_eq!(stores.keys().collect::<Vec<_>>(), [&prints[1]]);
}
