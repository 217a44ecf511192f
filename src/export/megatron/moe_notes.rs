//! What the script does with the mixture-of-experts settings that pipescope simulates but
//! Megatron sets differently: the overlapped all-to-alls (`moe_a2a_overlap`), written as
//! Megatron's own `--overlap-moe-expert-parallel-comm` where Megatron accepts it and said on a
//! `#` line where it does not, and an assumed routing imbalance, which no Megatron flag sets.

use crate::anatomy::megatron_modules::RecomputeModule;
use crate::scenario::Scenario;

use super::args::Group;
use super::recompute::Recompute;

/// Why Megatron would refuse `--overlap-moe-expert-parallel-comm` for this script (the
/// checks of Megatron-Core's `TransformerConfig`), or `None` when it accepts it.
/// `virtual_stages`: whether the script runs Megatron's interleaved (virtual-stage) schedule.
fn overlap_refusal(s: &Scenario, virtual_stages: bool, recompute: &Recompute) -> Option<String> {
    if s.parallel.ep <= 1 {
        return Some("it needs expert parallelism (ep > 1)".into());
    }
    if s.parallel.pp > 1 && !virtual_stages {
        return Some(
            "with a pipeline it runs only under the interleaved schedule (virtual stages), and \
             this script runs plain 1F1B"
                .into(),
        );
    }
    match recompute {
        Recompute::FullUniform | Recompute::FullBlock(_) => {
            return Some("it refuses full-layer recomputation".into());
        }
        Recompute::Selective(modules) if modules.contains(&RecomputeModule::Moe) => {
            return Some("it refuses recomputing the moe module".into());
        }
        _ => {}
    }
    if s.model.mtp_layers > 1 {
        return Some("it takes at most one multi-token-prediction layer".into());
    }
    if s.parallel.full_shard && virtual_stages {
        return Some(
            "it does not run Megatron-FSDP under the interleaved schedule (combined_1f1b.py \
             asserts it)"
                .into(),
        );
    }
    None
}

/// Adds Megatron's overlap flags to `group` where Megatron accepts them and returns the `#`
/// lines for what the script cannot reproduce (empty when nothing is left out).
pub fn apply(
    s: &Scenario,
    virtual_stages: bool,
    recompute: &Recompute,
    group: &mut Group,
) -> String {
    let mut out = String::new();
    if s.model.moe.is_none() {
        return out;
    }
    if s.plan.moe_a2a_overlap {
        match overlap_refusal(s, virtual_stages, recompute) {
            None => {
                // Megatron's combined 1F1B runs one micro-batch's all-to-alls under another's
                // compute; its weight-gradient split is what lets the pairs interleave.
                group
                    .switch("--overlap-moe-expert-parallel-comm")
                    .switch("--delay-wgrad-compute");
                out.push_str(
                    "# moe-a2a-overlap: --overlap-moe-expert-parallel-comm hides the all-to-alls \
                     under another micro-batch's compute, as pipescope's overlapped pairs do\n",
                );
            }
            Some(why) => {
                out.push_str(&format!(
                    "# moe-a2a-overlap: the simulated time hides each all-to-all under the paired \
                     half's compute; not written: Megatron's --overlap-moe-expert-parallel-comm \
                     {why}, so the all-to-alls stay exposed and the time will not match\n"
                ));
            }
        }
    }
    let imbalance = s.plan.routing_imbalance;
    if imbalance != 1.0 {
        out.push_str(&format!(
            "# routing-imbalance {imbalance}: pipescope assumed the busiest expert takes \
             {imbalance}x the mean tokens; Megatron has no flag for it (its router decides), so \
             --moe-router-force-load-balancing is left out and real routing sets the time\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn moe(ep: u32, pp: u32) -> Scenario {
        let presets = crate::scenario::Catalog::builtin();
        let mut s = presets.scenario("gpt3-175b-16k").unwrap();
        s.model = presets.model("deepseek-v3").unwrap().clone();
        s.parallel.ep = ep;
        s.parallel.pp = pp;
        s.plan.moe_a2a_overlap = true;
        s
    }

    #[test]
    fn the_flag_only_where_megatron_takes_it_and_a_line_otherwise() {
        let mut g = Group::new("MOE");
        let text = apply(&moe(8, 4), true, &Recompute::Off, &mut g);
        let flags: Vec<_> = g.args.iter().map(|a| a.flag).collect();
        assert_eq!(
            flags,
            [
                "--overlap-moe-expert-parallel-comm",
                "--delay-wgrad-compute"
            ]
        );
        assert!(text.starts_with("# moe-a2a-overlap: --overlap"), "{text}");
        for (s, virt, rc, why) in [
            (moe(8, 4), false, Recompute::Off, "plain 1F1B"),
            (moe(1, 4), true, Recompute::Off, "ep > 1"),
            (moe(8, 4), true, Recompute::FullUniform, "full-layer"),
            (
                {
                    let mut s = moe(8, 4);
                    s.parallel.full_shard = true;
                    s
                },
                true,
                Recompute::Off,
                "Megatron-FSDP",
            ),
        ] {
            let mut g = Group::new("MOE");
            let text = apply(&s, virt, &rc, &mut g);
            assert!(g.args.is_empty(), "{why}");
            assert!(text.contains("not written") && text.contains(why), "{text}");
        }
        let mut s = moe(8, 4);
        s.plan.moe_a2a_overlap = false;
        s.plan.routing_imbalance = 1.5;
        let text = apply(&s, true, &Recompute::Off, &mut Group::new("MOE"));
        assert!(
            text.contains("routing-imbalance 1.5") && text.contains("no flag"),
            "{text}"
        );
    }
}
