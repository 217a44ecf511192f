//! The rules of mixtures of experts, multi-head latent attention and multi-token prediction
//! (docs/model.md, "Mixture of experts"): the model's expert fields, and the expert layout
//! `ep x etp` folded into each stage's `t x cp x d` GPUs as Megatron-Core's
//! `initialize_model_parallel` requires, each refused with the field, the value and the rule.

use super::ranges;
use super::validate::limits;
use super::{InvalidField, ModelSpec, Scenario};

/// Most routed experts of one layer.
pub const MAX_EXPERTS: u64 = 1 << 16;
/// Most multi-token-prediction layers.
pub const MAX_MTP_LAYERS: u32 = 64;

fn whole(field: &str, value: u64, min: u64, max: u64) -> Result<(), InvalidField> {
    if value < min || value > max {
        return Err(InvalidField::new(
            field,
            value,
            format!("a whole number from {min} to {max}"),
        ));
    }
    Ok(())
}

/// Checks the relations of a model's expert and MLA fields (each field's own range is in
/// `ranges.rs`): top-k at most the experts, the dense layers at most the layers, each MLA
/// head width times the heads within the widths allowed.
pub(super) fn check_model(m: &ModelSpec) -> Result<(), InvalidField> {
    if let Some(e) = m.moe {
        whole("model.experts_per_token", e.experts_per_token, 1, e.experts)?;
        whole(
            "model.dense_layers",
            u64::from(e.dense_layers),
            0,
            u64::from(m.layers),
        )?;
        if let Some(g) = e.groups {
            whole("model.expert_groups", g.expert_groups, 1, e.experts)?;
            if !e.experts.is_multiple_of(g.expert_groups) {
                return Err(InvalidField::new(
                    "model.expert_groups",
                    g.expert_groups,
                    format!("a divisor of model.experts ({})", e.experts),
                ));
            }
            whole(
                "model.groups_per_token",
                g.groups_per_token,
                1,
                g.expert_groups,
            )?;
            let reachable = g.groups_per_token * (e.experts / g.expert_groups);
            if e.experts_per_token > reachable {
                return Err(InvalidField::new(
                    "model.groups_per_token",
                    g.groups_per_token,
                    format!(
                        "enough groups to hold model.experts_per_token ({}) experts: \
                         {} group(s) of {} hold only {reachable}",
                        e.experts_per_token,
                        g.groups_per_token,
                        e.experts / g.expert_groups
                    ),
                ));
            }
        }
    }
    if let Some(a) = m.mla {
        let most = limits::WIDTH / m.heads.max(1);
        whole("model.qk_head_dim", a.qk_head_dim, 1, most)?;
        whole("model.qk_rope_dim", a.qk_rope_dim, 0, most)?;
        whole("model.v_head_dim", a.v_head_dim, 1, most)?;
    }
    Ok(())
}

/// Checks the routing imbalance against the model: 1 for a dense model, from 1 to
/// `experts / experts_per_token` for a mixture of experts. [`Scenario::validate`] runs it
/// before the activation-size checks, which a huge imbalance would otherwise trip first.
pub(super) fn check_imbalance(s: &Scenario) -> Result<(), InvalidField> {
    let imbalance = s.plan.routing_imbalance;
    let Some(e) = s.model.moe else {
        ranges::ROUTING_IMBALANCE.check(imbalance)?;
        if imbalance != 1.0 {
            return Err(InvalidField::new(
                "plan.routing_imbalance",
                imbalance,
                "1 for a dense model (it routes no tokens)",
            ));
        }
        return Ok(());
    };
    // Each token goes to `k` distinct experts: one expert gets at most every token, `E / k`
    // times the mean.
    let most = e.experts as f64 / (e.experts_per_token.max(1)) as f64;
    if !(1.0..=most).contains(&imbalance) {
        return Err(InvalidField::new(
            "plan.routing_imbalance",
            imbalance,
            format!(
                "at least 1 and at most experts / experts_per_token ({} / {} = {most}): the \
                 busiest expert cannot receive more than every token",
                e.experts, e.experts_per_token
            ),
        ));
    }
    ranges::ROUTING_IMBALANCE.check(imbalance)
}

/// The all-to-all's multiprocessors (`plan.flex_dispatcher_num_sms`): a count in its range,
/// and fewer than the GPU has where the preset gives its count (the compute beside an
/// overlapped all-to-all runs on the rest).
fn check_dispatcher_sms(s: &Scenario) -> Result<(), InvalidField> {
    let n = s.plan.flex_dispatcher_num_sms;
    ranges::FLEX_DISPATCHER_NUM_SMS.check_count(u64::from(n))?;
    match s.gpu.sms {
        Some(sms) if n >= sms => Err(InvalidField::new(
            "plan.flex_dispatcher_num_sms",
            n,
            format!(
                "fewer than the GPU's {sms} multiprocessors ({}): the compute beside an \
                 all-to-all runs on the rest",
                s.gpu.name
            ),
        )),
        _ => Ok(()),
    }
}

/// Checks `ep`, `etp`, the routing imbalance and the all-to-all's multiprocessors against the
/// model, the GPU and the stage's GPUs.
pub(super) fn check_layout(s: &Scenario) -> Result<(), InvalidField> {
    let par = &s.parallel;
    let (ep, etp) = (u64::from(par.ep), u64::from(par.etp));
    ranges::EP.check_count(ep)?;
    ranges::ETP.check_count(etp)?;
    check_imbalance(s)?;
    check_dispatcher_sms(s)?;
    let Some(e) = s.model.moe else {
        for (field, v) in [("parallel.ep", ep), ("parallel.etp", etp)] {
            if v > 1 {
                return Err(InvalidField::new(
                    field,
                    v,
                    "1 for a dense model (it has no experts to split)",
                ));
            }
        }
        if s.plan.deepep {
            return Err(InvalidField::new(
                "plan.deepep",
                true,
                "false for a dense model (it has no all-to-all to run)",
            ));
        }
        return Ok(());
    };
    if s.plan.deepep && ep <= 1 {
        return Err(InvalidField::new(
            "plan.deepep",
            true,
            "false at ep 1: every rank holds every expert, so there is no all-to-all for \
             DeepEP to run (set ep above 1)",
        ));
    }
    if !e.experts.is_multiple_of(ep) {
        return Err(InvalidField::new(
            "parallel.ep",
            ep,
            format!(
                "a divisor of model.experts ({}): each expert-parallel rank holds whole experts",
                e.experts
            ),
        ));
    }
    if !e.expert_ffn.is_multiple_of(etp) {
        return Err(InvalidField::new(
            "parallel.etp",
            etp,
            format!("a divisor of model.expert_ffn ({})", e.expert_ffn),
        ));
    }
    if ep > 1 && par.tp > 1 && !par.sequence_parallel {
        return Err(InvalidField::new(
            "parallel.ep",
            ep,
            "1 without sequence parallelism when tp > 1: Megatron-Core requires sequence \
             parallelism with expert and tensor parallelism (turn sp on)",
        ));
    }
    let stage = u64::from(par.tp) * u64::from(par.cp) * u64::from(par.dp);
    if !stage.is_multiple_of(ep * etp) {
        return Err(InvalidField::new(
            "parallel.ep",
            ep,
            format!(
                "ep x etp ({ep} x {etp}) must divide a stage's GPUs tp x cp x dp ({} x {} x {} \
                 = {stage}): the expert layers re-split them into etp x ep x edp",
                par.tp, par.cp, par.dp
            ),
        ));
    }
    Ok(())
}
