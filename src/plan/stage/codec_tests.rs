//! The compress knapsack with several codecs per GPU (Adacc) against brute force: every unit
//! kind is kept, recomputed or compressed with any one codec that may hold it.

use super::*;
use crate::anatomy::UnitCodec;
use crate::plan::testkit;
use proptest::prelude::*;

/// `testkit::small` with three codecs: an int8-like one, a plain 4-bit one that the
/// outlier-sensitive `q` may not use, and a 4-bit one with outliers, slower.
fn three_codecs(x: u64, st: u64) -> Anatomy {
    let mut a = testkit::small(4, x, st);
    a.codec_names = vec!["int8".into(), "int4".into(), "int4-o".into()];
    for b in [&mut a.embedding, &mut a.attention, &mut a.mlp, &mut a.head] {
        for u in &mut b.units {
            if u.codecs.first().copied().flatten().is_none() {
                u.codecs = vec![None; 3];
                continue;
            }
            u.outlier_sensitive = u.name == "q";
            let s = u.size_bytes;
            let c = |num: u64, den: u64, t: f64| {
                Some(UnitCodec {
                    compressed_bytes: s * num / den + 5,
                    codec_s: u.forward_s * t,
                })
            };
            u.codecs = vec![
                c(17, 32, 0.15),
                (!u.outlier_sensitive).then_some(()).and(c(9, 32, 0.2)),
                c(10, 32, 0.45),
            ];
            u.compressed_bytes = s * 17 / 32 + 5;
            u.codec_s = u.forward_s * 0.15;
        }
    }
    a
}

/// Least added time over every split and codec per kind, by enumeration, with the codecs
/// the optimum used.
fn brute(a: &Anatomy, counts: BlockCounts, env: &StageEnv) -> Option<f64> {
    let base = keep_all(a, counts);
    let opts: Vec<Vec<(u32, u32, u32)>> = base
        .iter()
        .map(|d| {
            let u = &a.block_of(d.block.unwrap()).units[d.unit];
            if u.forced {
                return vec![(d.count, 0, 0)];
            }
            let mut v = Vec::new();
            for keep in 0..=d.count {
                v.push((keep, 0, 0));
                for (c, codec) in u.codecs.iter().enumerate() {
                    if codec.is_some() {
                        for comp in 1..=(d.count - keep) {
                            v.push((keep, comp, c as u32));
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
        for (k, dd) in d.iter_mut().enumerate() {
            let (keep, comp, codec) = opts[k][idx[k]];
            dd.keep = keep;
            dd.compress = comp;
            dd.codec = codec;
            dd.recompute = dd.count - keep - comp;
        }
        let c = costs(a, counts, env, &d, RecomputeRule::Units);
        if c.peak_bytes <= env.budget_bytes {
            let codec: f64 = d
                .iter()
                .map(|dd| {
                    let u = &a.block_of(dd.block.unwrap()).units[dd.unit];
                    f64::from(dd.compress) * codec_of(u, dd.codec).1
                })
                .sum();
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn several_codecs_match_enumeration(
        x in 1u64..40,
        st in 0u64..16,
        att in 0u32..=2,
        mlp in 0u32..=1,
        i in 1u32..6,
        budget in 0u64..300,
    ) {
        let x = x << 10;
        let a = three_codecs(x, st * x);
        let counts = BlockCounts { embedding: 0, attention: att, mlp, head: 0 };
        let env = StageEnv { in_flight: i, budget_bytes: budget * x, logits: false };
        let mode = KnapsackMode { compress: true, offload_capacity_bytes: 0 };
        let got = knapsack(&a, counts, &env, mode);
        let want = brute(&a, counts, &env);
        prop_assert_eq!(got.is_some(), want.is_some());
        if let (Some(g), Some(w)) = (got, want) {
            prop_assert!((g.added_s - w).abs() < 1e-9, "{} vs {}", g.added_s, w);
            let c = costs(&a, counts, &env, &g.decisions, RecomputeRule::Units);
            prop_assert!(c.peak_bytes <= env.budget_bytes);
            for d in &g.decisions {
                let u = &a.block_of(d.block.unwrap()).units[d.unit];
                if d.compress > 0 {
                    prop_assert!(u.codecs[d.codec as usize].is_some(), "{} uses a codec that may not hold it", u.name);
                }
            }
        }
    }
}

/// With room for 4-bit but not 8-bit, a stage keeps its insensitive units at 4 bits and
/// its outlier-sensitive `q` with the outlier-keeping codec: two codecs in one stage.
#[test]
fn a_stage_mixes_codecs_where_outliers_matter() {
    let x = 1u64 << 10;
    let a = three_codecs(x, 0);
    let counts = BlockCounts {
        embedding: 0,
        attention: 2,
        mlp: 2,
        head: 0,
    };
    let mode = KnapsackMode {
        compress: true,
        offload_capacity_bytes: 0,
    };
    let mut mixed = false;
    for budget in 20..200u64 {
        let env = StageEnv {
            in_flight: 4,
            budget_bytes: budget * x,
            logits: false,
        };
        let Some(k) = knapsack(&a, counts, &env, mode) else {
            continue;
        };
        let used = |name: &str| {
            k.decisions
                .iter()
                .find(|d| d.compress > 0 && a.block_of(d.block.unwrap()).units[d.unit].name == name)
        };
        if let (Some(q), Some(fc1)) = (used("q"), used("fc1_out")) {
            assert_ne!(q.codec, 1, "q may not use the plain 4-bit codec");
            if q.codec == 2 && fc1.codec == 1 {
                mixed = true;
            }
        }
    }
    assert!(mixed, "no budget mixes 4-bit with the outlier codec");
}
