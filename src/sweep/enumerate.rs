//! The configurations of a sweep space, and the reasons the other combinations are rejected
//! (docs/cli.md). A rejection is counted once at the level that decides it: a `t`
//! that does not divide the heads counts once per GPU count, a `t x p` that does not divide
//! the GPUs once per (N, t, p), an `m` that is not whole once per (N, t, p, b).

use std::collections::BTreeMap;

use super::{
    Config, DEFAULT_CHUNKS, DEFAULT_MAX_CP, DEFAULT_MICRO_BATCH_SIZES, DEFAULT_STRATEGIES,
    DEFAULT_ZERO, SweepSpace, default_schedules,
};
use crate::scenario::{
    InvalidField, Precision, Scenario, ScheduleKind, Strategy, Zero, limits, micro_batches_for,
};

/// Rejection reason: `t` does not divide the query heads.
pub const T_HEADS: &str = "t does not divide the heads";
/// Rejection reason: `t` does not divide the kv heads.
pub const T_KV_HEADS: &str = "t does not divide the kv heads";
/// Rejection reason: `t` does not divide the ffn size.
pub const T_FFN: &str = "t does not divide the ffn size";
/// Rejection reason: `p` is above the layers.
pub const P_LAYERS: &str = "p above the layers";
/// Rejection reason: `d = N / (t x cp x p)` is not whole.
pub const D_WHOLE: &str = "d = N / (t x cp x p) not whole";
/// Rejection reason: context parallelism needs `s` a multiple of `2 cp`.
pub const CP_SEQ: &str = "cp needs s a multiple of 2 cp";
/// Rejection reason: context parallelism needs FlashAttention.
pub const CP_FLASH: &str = "cp needs flash attention";
/// Rejection reason: a sharding ZeRO stage (1 or 3) on a layout with one data-parallel rank
/// per stage, where it would do nothing ([`Zero::applies_over`]); counted once per layout
/// and stage.
pub const ZERO_SHARDS: &str = "zero 1 or 3 needs d x cp > 1";
/// Rejection reason: a GPU without fp8 tensor cores.
pub const FP8_GPU: &str = "fp8 needs a GPU with fp8";
/// Rejection reason: `m = B / (b x d)` is not whole.
pub const M_WHOLE: &str = "m = B / (b x d) not whole";
/// Rejection reason: expert parallelism needs `ep` to divide the experts and `ep x etp` to
/// divide `t x cp x d`.
pub const EP_DIVIDES: &str = "ep must divide the experts, ep x etp must divide t x cp x d";
/// Rejection reason: expert tensor parallelism needs `etp` to divide the expert's ffn.
pub const ETP_FFN: &str = "etp must divide the expert ffn";
/// Rejection reason: Megatron-Core runs expert with tensor parallelism only under sp.
pub const EP_SP: &str = "ep > 1 with t > 1 needs sp";
/// Rejection reason: a dense model has no experts to split.
pub const EP_DENSE: &str = "ep > 1 or etp > 1 needs a mixture of experts";
/// Rejection reason: sequence parallelism needs `s / cp` a multiple of `t`.
pub const SP_SEQ: &str = "sp needs s / cp a multiple of t";
/// Rejection reason: more stages (`p x chunks`) than blocks.
pub const STAGES_BLOCKS: &str = "p x chunks above the blocks 2L+2";
/// Rejection reason: at one stage there is no pipeline to interleave (Megatron has no
/// virtual stages without one) nor a bubble for zero-bubble's split backward to fill: those
/// run 1F1B's order, which the sweep keeps (when it tries 1F1B) under its own name.
pub const SAME_AT_P1: &str = "interleaved and zb-h1 at p 1 add nothing to 1f1b";
/// Rejection reason: interleaved 1F1B needs `m` a multiple of `p`.
pub const INTERLEAVED_M: &str = "interleaved needs m a multiple of p";
/// Rejection reason: DualPipe feeds half the micro-batches from each end of a pipeline whose
/// device `r` mirrors `p - 1 - r`: it needs an even p and an even m of at least 2p.
pub const DUALPIPE_SHAPE: &str = "dualpipe needs an even p and an even m >= 2p";

fn check_list<T: Copy + Into<u64>>(flag: &str, list: &[T], max: u64) -> Result<(), InvalidField> {
    for &x in list {
        let v: u64 = x.into();
        if v == 0 || v > max {
            return Err(InvalidField::new(
                flag,
                v,
                format!("whole numbers from 1 to {max}"),
            ));
        }
    }
    Ok(())
}

/// Checks the space's values (flags named as on the command line).
pub fn validate(space: &SweepSpace) -> Result<(), InvalidField> {
    if space.gpus.is_empty() {
        return Err(InvalidField::new(
            "--gpus",
            "(none)",
            "at least one GPU count, e.g. 1024 or 512,1024",
        ));
    }
    // A GPU count is read as a 32-bit number: the largest it can be is u32::MAX.
    let gpus_max = (limits::DEGREE * limits::DEGREE).min(u64::from(u32::MAX));
    check_list("--gpus", &space.gpus, gpus_max)?;
    check_list("--tp", &space.tp, limits::DEGREE)?;
    check_list("--pp", &space.pp, limits::DEGREE)?;
    check_list("--mbs", &space.mbs, limits::MICRO_BATCH)?;
    check_list("--chunks", &space.chunks, limits::DEGREE)?;
    check_list("--cp", &space.cp, limits::DEGREE)?;
    check_list("--ep", &space.ep, limits::DEGREE)?;
    check_list("--etp", &space.etp, limits::DEGREE)?;
    if space.global_batch == 0 || space.global_batch > limits::MICRO_BATCHES * limits::MICRO_BATCH {
        return Err(InvalidField::new(
            "--global-batch",
            space.global_batch,
            format!(
                "a whole number of sequences from 1 to {}",
                limits::MICRO_BATCHES * limits::MICRO_BATCH
            ),
        ));
    }
    Ok(())
}

fn or_default<T: Copy>(list: &[T], default: &[T]) -> Vec<T> {
    if list.is_empty() {
        default.to_vec()
    } else {
        list.to_vec()
    }
}

fn reject(rejected: &mut BTreeMap<String, u64>, reason: &str) {
    *rejected.entry(reason.to_string()).or_insert(0) += 1;
}

/// The context-parallel sizes tried on `gpus` GPUs: the list, or by default 1 and every
/// divisor of `gpus` up to [`DEFAULT_MAX_CP`] whose `2 cp` divides the sequence (with
/// FlashAttention, which context parallelism runs on).
fn cp_choices(space: &SweepSpace, base: &Scenario, gpus: u32) -> Vec<u32> {
    if !space.cp.is_empty() {
        return space.cp.clone();
    }
    let seq = base.batch.seq_len;
    (1..=DEFAULT_MAX_CP)
        .filter(|&c| {
            c == 1
                || (gpus.is_multiple_of(c)
                    && seq.is_multiple_of(2 * u64::from(c))
                    && base.plan.flash_attention)
        })
        .collect()
}

/// The expert-parallel sizes tried on a stage of `stage = t x cp x d` GPUs: the list, or by
/// default every divisor of `stage` that divides the experts (1 for a dense model).
fn ep_choices(list: &[u32], base: &Scenario, stage: u64, etp: u32) -> Vec<u32> {
    if !list.is_empty() {
        return list.to_vec();
    }
    let Some(e) = base.model.moe else {
        return vec![1];
    };
    let stage = stage / u64::from(etp.max(1));
    (1..=stage.min(e.experts))
        .filter(|&x| stage.is_multiple_of(x) && e.experts.is_multiple_of(x))
        .filter_map(|x| u32::try_from(x).ok())
        .collect()
}

/// Every configuration of `space` on `base`'s model, GPU and sequence length, in a fixed
/// order (GPU count, t, cp, p, micro-batch size, sp, ZeRO stage, precision, schedule,
/// chunks, strategy), and the rejected combinations by reason.
pub fn enumerate(
    base: &Scenario,
    space: &SweepSpace,
) -> Result<(Vec<Config>, BTreeMap<String, u64>), InvalidField> {
    validate(space)?;
    let model = &base.model;
    let seq = base.batch.seq_len;
    let layers = model.layers;
    let tps = or_default(
        &space.tp,
        &(1..=base.gpu.node_gpus.max(1)).collect::<Vec<_>>(),
    );
    let pps = or_default(&space.pp, &(1..=layers).collect::<Vec<_>>());
    let mbs = or_default(&space.mbs, &DEFAULT_MICRO_BATCH_SIZES);
    let chunk_list = or_default(&space.chunks, &DEFAULT_CHUNKS);
    let schedules = or_default(&space.schedules, &default_schedules(model));
    let strategies = or_default(&space.strategies, &DEFAULT_STRATEGIES);
    let zeros = or_default(&space.zero, &DEFAULT_ZERO);
    let precisions = or_default(&space.precision, &[base.parallel.precision]);
    let mut configs = Vec::new();
    let mut rejected = BTreeMap::new();
    for &gpus in &space.gpus {
        for &t in &tps {
            let tw = u64::from(t);
            if !model.heads.is_multiple_of(tw) {
                reject(&mut rejected, T_HEADS);
                continue;
            }
            if !model.kv_heads.is_multiple_of(tw) {
                reject(&mut rejected, T_KV_HEADS);
                continue;
            }
            if !model.ffn.is_multiple_of(tw) {
                reject(&mut rejected, T_FFN);
                continue;
            }
            for cp in cp_choices(space, base, gpus) {
                if cp > 1 && !seq.is_multiple_of(2 * u64::from(cp)) {
                    reject(&mut rejected, CP_SEQ);
                    continue;
                }
                if cp > 1 && !base.plan.flash_attention {
                    reject(&mut rejected, CP_FLASH);
                    continue;
                }
                for &p in &pps {
                    if p > layers {
                        reject(&mut rejected, P_LAYERS);
                        continue;
                    }
                    let tcp = u64::from(t) * u64::from(cp) * u64::from(p);
                    if !u64::from(gpus).is_multiple_of(tcp) {
                        reject(&mut rejected, D_WHOLE);
                        continue;
                    }
                    let d = (u64::from(gpus) / tcp) as u32;
                    let shard_ranks = u64::from(d) * u64::from(cp);
                    for &zero in &zeros {
                        if !zero.applies_over(shard_ranks) {
                            reject(&mut rejected, ZERO_SHARDS);
                        }
                    }
                    let shape = Shape { gpus, t, cp, p, d };
                    for &b in &mbs {
                        let Ok(m) = micro_batches_for(space.global_batch, b, d) else {
                            reject(&mut rejected, M_WHOLE);
                            continue;
                        };
                        let lists = Lists {
                            zeros: &zeros,
                            precisions: &precisions,
                            schedules: &schedules,
                            chunks: &chunk_list,
                            strategies: &strategies,
                            ep: &space.ep,
                            etp: &space.etp,
                        };
                        push_batch(base, shape, (b, m), lists, &mut configs, &mut rejected);
                    }
                }
            }
        }
    }
    Ok((configs, rejected))
}

/// A layout's sizes.
#[derive(Clone, Copy)]
struct Shape {
    gpus: u32,
    t: u32,
    cp: u32,
    p: u32,
    d: u32,
}

/// The lists enumerated inside one layout and batch.
#[derive(Clone, Copy)]
struct Lists<'a> {
    zeros: &'a [Zero],
    precisions: &'a [Precision],
    schedules: &'a [ScheduleKind],
    chunks: &'a [u32],
    strategies: &'a [Strategy],
    /// Expert-parallel sizes listed (empty: the defaults of [`ep_choices`]).
    ep: &'a [u32],
    /// Expert tensor-parallel sizes listed (empty: 1).
    etp: &'a [u32],
}

/// The configurations of one layout and batch `(b, m)`: sp, ep, ZeRO stage, precision,
/// schedule, chunks and strategy.
fn push_batch(
    base: &Scenario,
    shape: Shape,
    (b, m): (u64, u32),
    lists: Lists,
    configs: &mut Vec<Config>,
    rejected: &mut BTreeMap<String, u64>,
) {
    let Shape { gpus, t, cp, p, d } = shape;
    let blocks = 2 * u64::from(base.model.chain_layers()) + 2;
    let stage = u64::from(t) * u64::from(cp) * u64::from(d);
    let etps: &[u32] = if lists.etp.is_empty() {
        &[1]
    } else {
        lists.etp
    };
    let layouts: Vec<(u32, u32)> = etps
        .iter()
        .flat_map(|&etp| {
            ep_choices(lists.ep, base, stage, etp)
                .into_iter()
                .map(move |ep| (ep, etp))
        })
        .collect();
    let local = base.batch.seq_len / u64::from(cp.max(1));
    let sps: &[bool] = if t > 1 { &[false, true] } else { &[false] };
    let shard_ranks = u64::from(d) * u64::from(cp);
    for (&sp, &(ep, etp)) in sps
        .iter()
        .flat_map(|sp| layouts.iter().map(move |l| (sp, l)))
    {
        if sp && !local.is_multiple_of(u64::from(t)) {
            reject(rejected, SP_SEQ);
            continue;
        }
        if ep > 1 || etp > 1 {
            let Some(e) = base.model.moe else {
                reject(rejected, EP_DENSE);
                continue;
            };
            if !e.expert_ffn.is_multiple_of(u64::from(etp)) {
                reject(rejected, ETP_FFN);
                continue;
            }
            let experts_layout = u64::from(ep) * u64::from(etp);
            if !stage.is_multiple_of(experts_layout) || !e.experts.is_multiple_of(u64::from(ep)) {
                reject(rejected, EP_DIVIDES);
                continue;
            }
            if ep > 1 && t > 1 && !sp {
                reject(rejected, EP_SP);
                continue;
            }
        }
        // ZeRO 1 and 3 shard over d x cp ranks: with one, they would do nothing (rejected,
        // and counted, once per layout in `enumerate`).
        for &zero in lists.zeros.iter().filter(|&&z| z.applies_over(shard_ranks)) {
            for &precision in lists.precisions {
                if precision.is_fp8() && base.gpu.fp8_tflops.is_none() {
                    reject(rejected, FP8_GPU);
                    continue;
                }
                for &schedule in lists.schedules {
                    if p == 1
                        && matches!(schedule, ScheduleKind::Interleaved | ScheduleKind::ZbH1)
                        && lists.schedules.contains(&ScheduleKind::OneFOneB)
                    {
                        reject(rejected, SAME_AT_P1);
                        continue;
                    }
                    for v in chunk_choices(schedule, lists.chunks) {
                        if u64::from(p) * u64::from(v) > blocks {
                            reject(rejected, STAGES_BLOCKS);
                            continue;
                        }
                        if schedule == ScheduleKind::Interleaved && !m.is_multiple_of(p) {
                            reject(rejected, INTERLEAVED_M);
                            continue;
                        }
                        if schedule == ScheduleKind::DualPipe
                            && (!p.is_multiple_of(2) || !m.is_multiple_of(2) || m < 2 * p)
                        {
                            reject(rejected, DUALPIPE_SHAPE);
                            continue;
                        }
                        for &strategy in lists.strategies {
                            configs.push(Config {
                                gpus,
                                t,
                                cp,
                                ep,
                                etp,
                                p,
                                d,
                                b,
                                m,
                                chunks: v,
                                sp,
                                distributed_optimizer: zero != Zero::Off,
                                zero,
                                precision,
                                schedule,
                                strategy,
                            });
                        }
                    }
                }
            }
        }
    }
}

/// The chunk counts a schedule runs with: the list (deduplicated after the schedule's own
/// rule) for the schedules that take `--chunks`, the schedule's fixed count otherwise.
fn chunk_choices(schedule: ScheduleKind, list: &[u32]) -> Vec<u32> {
    let mut vs: Vec<u32> = list.iter().map(|&c| schedule.chunks(c)).collect();
    vs.sort_unstable();
    vs.dedup();
    vs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::scenario::Catalog;

    fn space(gpus: u32, batch: u64) -> SweepSpace {
        SweepSpace {
            gpus: vec![gpus],
            global_batch: batch,
            ..SweepSpace::default()
        }
    }

    #[test]
    fn every_config_is_whole_and_reasons_are_counted() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let (configs, rejected) = enumerate(&base, &space(16, 32)).unwrap();
        assert!(!configs.is_empty());
        for c in &configs {
            assert_eq!(c.t * c.cp * c.p * c.d, 16);
            assert_eq!(u64::from(c.m) * c.b * u64::from(c.d), 32);
            assert!(c.p <= 8);
            assert!(!c.sp || c.t > 1);
            assert!(!c.distributed_optimizer || c.d * c.cp > 1);
            assert_eq!(c.distributed_optimizer, c.zero != Zero::Off);
            // By default cp is 1 or a divisor of 16 up to 8 whose 2 cp divides s (4096).
            assert!([1, 2, 4, 8].contains(&c.cp), "{c:?}");
            assert_ne!(c.zero, Zero::Full, "zero 3 only when asked");
        }
        for cp in [1, 2, 4, 8] {
            assert!(configs.iter().any(|c| c.cp == cp), "cp {cp} enumerated");
        }
        // 16 heads: t = 3, 5, 6, 7 (of 1..=8) do not divide them.
        assert_eq!(rejected.get(T_HEADS), Some(&4));
        assert!(rejected.get(D_WHOLE).copied().unwrap_or(0) > 0);
        // The default p list stops at the layers, so nothing is rejected for it.
        assert_eq!(rejected.get(P_LAYERS), None);
        // Interleaved configurations all have m a multiple of p.
        for c in configs
            .iter()
            .filter(|c| c.schedule == ScheduleKind::Interleaved)
        {
            assert_eq!(c.m % c.p, 0);
        }
    }

    /// A mixture-of-experts model's default list adds DualPipe (DeepSeek-V3's own schedule)
    /// where its shape allows it (even p, even m >= 2p); a dense model's leaves it out.
    #[test]
    fn dualpipe_is_a_default_for_experts_where_its_shape_allows() {
        let c = Catalog::builtin();
        let dense = c.scenario("tiny-4x8").unwrap();
        let mut moe = dense.clone();
        moe.model = c.model("qwen3-30b-a3b").unwrap().clone();
        let sp = space(8, 64);
        let (configs, rejected) = enumerate(&dense, &sp).unwrap();
        assert!(!configs.iter().any(|c| c.schedule == ScheduleKind::DualPipe));
        assert_eq!(rejected.get(DUALPIPE_SHAPE), None);
        let (configs, rejected) = enumerate(&moe, &sp).unwrap();
        let duals: Vec<_> = configs
            .iter()
            .filter(|c| c.schedule == ScheduleKind::DualPipe)
            .collect();
        assert!(!duals.is_empty());
        for c in &duals {
            assert!(c.p % 2 == 0 && c.m % 2 == 0 && c.m >= 2 * c.p, "{c:?}");
            assert_eq!(c.chunks, 2);
        }
        assert!(rejected.get(DUALPIPE_SHAPE).copied().unwrap_or(0) > 0);
        // Listed schedules are kept as listed.
        let mut listed = sp.clone();
        listed.schedules = vec![ScheduleKind::OneFOneB];
        let (configs, _) = enumerate(&moe, &listed).unwrap();
        assert!(configs.iter().all(|c| c.schedule == ScheduleKind::OneFOneB));
    }

    /// At p 1 interleaved and zb-h1 would be listed beside 1f1b with its figures: they are
    /// rejected (counted) where 1f1b is tried, kept where it is not.
    #[test]
    fn one_stage_keeps_1f1b_alone() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut s = space(16, 32);
        s.pp = vec![1, 2];
        let (configs, rejected) = enumerate(&base, &s).unwrap();
        let at = |p: u32, k: ScheduleKind| configs.iter().any(|c| c.p == p && c.schedule == k);
        assert!(at(1, ScheduleKind::OneFOneB));
        assert!(!at(1, ScheduleKind::Interleaved) && !at(1, ScheduleKind::ZbH1));
        assert!(at(2, ScheduleKind::Interleaved) && at(2, ScheduleKind::ZbH1));
        assert!(rejected.get(SAME_AT_P1).copied().unwrap_or(0) > 0);
        s.schedules = vec![ScheduleKind::ZbH1];
        let (configs, _) = enumerate(&base, &s).unwrap();
        assert!(
            configs
                .iter()
                .any(|c| c.p == 1 && c.schedule == ScheduleKind::ZbH1)
        );
    }

    #[test]
    fn listed_cp_zero_and_precision_are_enumerated_or_rejected_with_the_rule() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut s = space(16, 32);
        // s 4096: cp 3 does not divide 16 (d not whole), cp 4096 puts 2 cp above s.
        s.cp = vec![1, 3, 4096];
        s.zero = vec![Zero::Off, Zero::Full];
        s.precision = vec![Precision::Bf16, Precision::Fp8];
        let (configs, rejected) = enumerate(&base, &s).unwrap();
        assert!(configs.iter().all(|c| c.cp == 1));
        assert!(rejected.get(CP_SEQ).copied().unwrap_or(0) > 0);
        assert!(configs.iter().any(|c| c.zero == Zero::Full && c.d > 1));
        assert!(
            configs
                .iter()
                .all(|c| c.zero != Zero::Full || c.d * c.cp > 1)
        );
        // The tiny preset's A100 has no fp8: every fp8 combination is rejected, by reason.
        assert!(configs.iter().all(|c| c.precision == Precision::Bf16));
        assert!(rejected.get(FP8_GPU).copied().unwrap_or(0) > 0);
    }

    #[test]
    fn ep_is_enumerated_for_experts_only_and_listed_sizes_are_checked() {
        let c = Catalog::builtin();
        let dense = c.scenario("tiny-4x8").unwrap();
        let (configs, _) = enumerate(&dense, &space(16, 32)).unwrap();
        assert!(configs.iter().all(|c| c.ep == 1));
        let mut moe = dense.clone();
        moe.model = c.model("qwen3-30b-a3b").unwrap().clone();
        let mut sp = space(16, 32);
        sp.tp = vec![1, 2];
        sp.pp = vec![1, 2];
        let (configs, rejected) = enumerate(&moe, &sp).unwrap();
        for c in &configs {
            let stage = c.t * c.cp * c.d;
            assert_eq!(stage % c.ep, 0, "{c:?}");
            assert_eq!(128 % c.ep, 0);
            assert!(c.ep == 1 || c.t == 1 || c.sp, "{c:?}");
        }
        // Every divisor of t x cp x d (up to 16) is tried.
        for ep in [1, 2, 4, 8, 16] {
            assert!(configs.iter().any(|c| c.ep == ep), "ep {ep}");
        }
        assert!(rejected.get(EP_SP).copied().unwrap_or(0) > 0);
        // A listed size that divides neither is rejected with the rule.
        sp.ep = vec![3];
        let (configs, rejected) = enumerate(&moe, &sp).unwrap();
        assert!(configs.is_empty());
        assert!(rejected.get(EP_DIVIDES).copied().unwrap_or(0) > 0);
        sp.ep = vec![2];
        let (_, rejected) = enumerate(&dense, &sp).unwrap();
        assert!(rejected.get(EP_DENSE).copied().unwrap_or(0) > 0);
    }

    #[test]
    fn etp_is_enumerated_when_listed_with_the_ep_sizes_it_leaves() {
        let c = Catalog::builtin();
        let dense = c.scenario("tiny-4x8").unwrap();
        let mut moe = dense.clone();
        moe.model = c.model("qwen3-30b-a3b").unwrap().clone();
        let mut sp = space(16, 32);
        sp.tp = vec![1, 2];
        sp.pp = vec![1, 2];
        // Not listed: etp 1 only.
        let (configs, _) = enumerate(&moe, &sp).unwrap();
        assert!(configs.iter().all(|c| c.etp == 1));
        sp.etp = vec![1, 2];
        let (configs, _) = enumerate(&moe, &sp).unwrap();
        for c in &configs {
            assert_eq!((c.t * c.cp * c.d) % (c.ep * c.etp), 0, "{c:?}");
        }
        // With etp 2 the default ep sizes stop at t x cp x d / 2.
        let most = |etp| {
            configs
                .iter()
                .filter(|c| c.etp == etp && c.t * c.cp * c.d == 16)
                .map(|c| c.ep)
                .max()
        };
        assert_eq!((most(1), most(2)), (Some(16), Some(8)));
        // 5 divides no expert ffn of 768; a dense model has no experts to split.
        sp.etp = vec![5];
        let (configs, rejected) = enumerate(&moe, &sp).unwrap();
        assert!(configs.is_empty());
        assert!(rejected.get(ETP_FFN).copied().unwrap_or(0) > 0);
        sp.etp = vec![2];
        let (configs, rejected) = enumerate(&dense, &sp).unwrap();
        assert!(configs.is_empty());
        assert!(rejected.get(EP_DENSE).copied().unwrap_or(0) > 0);
    }

    #[test]
    fn a_sharding_zero_on_one_data_parallel_rank_is_rejected_by_name() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut s = space(8, 8);
        s.tp = vec![8];
        s.pp = vec![1];
        s.cp = vec![1];
        s.zero = vec![Zero::Optimizer, Zero::Full];
        // The one layout (t 8, cp 1, p 1) has d = 1: both stages rejected, each once.
        let (configs, rejected) = enumerate(&base, &s).unwrap();
        assert!(configs.is_empty());
        assert_eq!(rejected.get(ZERO_SHARDS), Some(&2));
        // On 16 GPUs d = 2: nothing rejected for it.
        s.gpus = vec![16];
        s.global_batch = 16;
        let (configs, rejected) = enumerate(&base, &s).unwrap();
        assert!(!configs.is_empty());
        assert_eq!(rejected.get(ZERO_SHARDS), None);
    }

    #[test]
    fn bad_lists_name_the_flag() {
        let base = Catalog::builtin().scenario("tiny-4x8").unwrap();
        let mut s = space(16, 32);
        s.tp = vec![0];
        let e = enumerate(&base, &s).unwrap_err();
        assert_eq!(e.field, "--tp");
        let e = enumerate(&base, &space(16, 0)).unwrap_err();
        assert_eq!(e.field, "--global-batch");
        let mut s = space(16, 32);
        s.gpus.clear();
        assert_eq!(enumerate(&base, &s).unwrap_err().field, "--gpus");
    }
}
