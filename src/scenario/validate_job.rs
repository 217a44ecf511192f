//! The rules of the job's newer dimensions (docs/model.md): context parallelism, the ZeRO
//! stage and the two overlaps, each refused with the field, the value and the rule, as
//! Megatron-LM's `validate_args` and Transformer Engine state them.

use super::{InvalidField, Scenario};

/// Checks `cp`, `zero`, `overlap_param_gather` and `tp_comm_overlap` against the rest of the
/// scenario.
pub(super) fn check_job(s: &Scenario) -> Result<(), InvalidField> {
    let par = &s.parallel;
    let cp = u64::from(par.cp);
    super::ranges::CP.check_count(cp)?;
    let seq = s.batch.seq_len;
    if cp > 1 {
        // Transformer Engine's load-balanced ring cuts each sequence into 2 cp chunks.
        if !seq.is_multiple_of(2 * cp) {
            return Err(InvalidField::new(
                "batch.seq_len",
                seq,
                format!(
                    "a multiple of 2 x parallel.cp ({}): context parallelism cuts each \
                     sequence into 2 cp chunks",
                    2 * cp
                ),
            ));
        }
        if !s.plan.flash_attention {
            return Err(InvalidField::new(
                "parallel.cp",
                cp,
                "1 without FlashAttention: context parallelism runs Transformer Engine's \
                 fused attention (turn flash_attention on)",
            ));
        }
    }
    let t = u64::from(par.tp.max(1));
    if par.sequence_parallel && !(seq / cp).is_multiple_of(t) {
        return Err(InvalidField::new(
            "batch.seq_len",
            seq,
            format!(
                "a multiple of parallel.cp x parallel.tp ({cp} x {t}) with sequence \
                 parallelism: each context-parallel rank's tokens split over t"
            ),
        ));
    }
    if par.full_shard && !par.distributed_optimizer {
        return Err(InvalidField::new(
            "parallel.zero",
            "3 without the distributed optimizer",
            "zero 3 with distributed_optimizer on (Megatron-FSDP shards the optimizer too)",
        ));
    }
    let plan = &s.plan;
    if plan.overlap_param_gather {
        if !par.distributed_optimizer {
            return Err(InvalidField::new(
                "plan.overlap_param_gather",
                true,
                "off unless zero is 1 or 3: it overlaps the distributed optimizer's \
                 parameter all-gather (Megatron: supported only with the distributed \
                 optimizer or Megatron-FSDP)",
            ));
        }
        if !plan.overlap_grad_reduce {
            return Err(InvalidField::new(
                "plan.overlap_param_gather",
                true,
                "off without overlap_grad_reduce (Megatron: --overlap-param-gather needs \
                 --overlap-grad-reduce)",
            ));
        }
    }
    check_moe_a2a_overlap(s)?;
    if plan.tp_comm_overlap {
        if t <= 1 || !par.sequence_parallel {
            return Err(InvalidField::new(
                "plan.tp_comm_overlap",
                true,
                "off without tensor parallelism (t > 1) and sequence parallelism (Megatron: \
                 TP communication/GEMM overlap happens only with sequence parallelism)",
            ));
        }
        if par.tp > s.gpu.node_gpus {
            return Err(InvalidField::new(
                "plan.tp_comm_overlap",
                true,
                format!(
                    "off when the tensor-parallel group spans nodes (t {} > {} GPUs per \
                     node): Transformer Engine's userbuffers need one NVLink domain",
                    par.tp, s.gpu.node_gpus
                ),
            ));
        }
        if s.gpu.sms.is_none() {
            return Err(InvalidField::new(
                "plan.tp_comm_overlap",
                true,
                format!(
                    "off on {}: its preset gives no gpu.sms (the overlapped GEMMs lend \
                     streaming multiprocessors to the communication)",
                    s.gpu.name
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses, in a scenario file, what needs more than one data-parallel rank per stage where
/// `d x cp = 1`: zero 1 or 3 (nothing to shard, and zero 3 would still cost its gathered
/// layer) and the two data-parallel overlaps (nothing to overlap), by the rules the command
/// line and the TUI apply to their flags and fields ([`super::Zero::refusal_over`],
/// [`super::Parallel::overlap_refusal`]). `zero_key` is the key the file gave the stage
/// with (`parallel.zero` or `parallel.distributed_optimizer`), so the error points at it.
pub(crate) fn check_data_parallel_use(s: &Scenario, zero_key: &str) -> Result<(), InvalidField> {
    let par = &s.parallel;
    let zero = par.zero();
    if let Some(reason) = zero.refusal_over(par.dp, par.cp) {
        let value = if zero_key == "parallel.zero" {
            zero.level().to_string()
        } else {
            "true".to_string()
        };
        return Err(InvalidField::new(
            zero_key,
            value,
            format!("left out (zero 0) unless parallel.dp or parallel.cp is above 1: {reason}"),
        ));
    }
    for (on, key, what) in [
        (
            s.plan.overlap_grad_reduce,
            "plan.overlap_grad_reduce",
            "gradient reduction",
        ),
        (
            s.plan.overlap_param_gather,
            "plan.overlap_param_gather",
            "parameter all-gather",
        ),
    ] {
        if let Some(reason) = par.overlap_refusal(what).filter(|_| on) {
            return Err(InvalidField::new(
                key,
                true,
                format!("off unless parallel.dp or parallel.cp is above 1: {reason}"),
            ));
        }
    }
    Ok(())
}

/// The rules of the MoE all-to-all overlap (`plan.moe_a2a_overlap`): a model with experts,
/// `ep > 1`, and a schedule that pairs forwards with backwards; on Megatron's combined 1F1B
/// (`interleaved`, `1f1b`) also Megatron-Core's own rules for
/// `--overlap-moe-expert-parallel-comm` (`TransformerConfig.__post_init__`,
/// `combined_1f1b.py`): one device unless the pipeline is virtual, no full recomputation and
/// no `moe` recompute module, at most one MTP layer, and no Megatron-FSDP with a virtual
/// pipeline. Ok when the overlap is off. The sweep asks it to leave the overlap off where
/// a configuration breaks a rule.
pub(crate) fn check_moe_a2a_overlap(s: &Scenario) -> Result<(), InvalidField> {
    let (par, plan) = (&s.parallel, &s.plan);
    if !plan.moe_a2a_overlap {
        return Ok(());
    }
    let refuse = |why: String| Err(InvalidField::new("plan.moe_a2a_overlap", true, why));
    if s.model.moe.is_none() {
        return refuse(
            "off for a dense model: it hides the MoE layers' all-to-alls, which a model \
             without experts does not have"
                .into(),
        );
    }
    if par.ep <= 1 {
        return refuse(
            "off at ep 1: every rank holds every expert, so there is no all-to-all to hide \
             (set ep above 1)"
                .into(),
        );
    }
    let kind = plan.schedule;
    if !kind.pairs_forward_backward() {
        return refuse(format!(
            "off for {kind}: it hides one micro-batch's all-to-alls under another's compute in \
             overlapped forward-backward pairs, which only {} (1f1b at p 1) run",
            super::ScheduleKind::names_where(super::ScheduleKind::pairs_forward_backward)
        ));
    }
    if !kind.runs_combined_1f1b() {
        return Ok(());
    }
    let megatron = "Megatron-Core's --overlap-moe-expert-parallel-comm";
    if kind == super::ScheduleKind::OneFOneB && par.pp > 1 {
        return refuse(format!(
            "off for 1f1b on {} stages: {megatron} needs a virtual pipeline when p > 1 (use \
             interleaved, or p 1)",
            par.pp
        ));
    }
    if plan.strategy == super::Strategy::Full {
        return refuse(format!(
            "off with the full strategy: {megatron} refuses full recomputation"
        ));
    }
    if plan.strategy == super::Strategy::Named && plan.recompute_units.iter().any(|u| u == "moe") {
        return refuse(format!(
            "off with the moe recompute module: {megatron} refuses it, since the recomputed \
             block would rerun its all-to-alls"
        ));
    }
    if s.model.mtp_layers > 1 {
        return refuse(format!(
            "off with {} MTP layers: {megatron} supports at most one",
            s.model.mtp_layers
        ));
    }
    if par.full_shard && kind == super::ScheduleKind::Interleaved {
        return refuse(format!(
            "off with zero 3 on interleaved: {megatron} does not run Megatron-FSDP with a \
             virtual pipeline (use p 1 with 1f1b)"
        ));
    }
    Ok(())
}
