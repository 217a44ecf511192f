//! The Megatron export recomputes nothing the plan keeps: for every strategy on three
//! presets, the units that Megatron's recomputation flags recompute (read from Megatron's
//! code: `core_attn` the core attention, `mlp` the dense MLP module without its input and
//! the residual dropout after it, `layernorm` nothing on Transformer Engine layers, `full`
//! whole layers but their input: every layer with `uniform 1`, the first n of every virtual
//! stage with `block n`) are recomputed by the plan in every copy of every block.

#![allow(clippy::unwrap_used)]

use crate::megatron_common::{Launch, decode, launch};
use pipescope::{
    Anatomy, BlockKind, Catalog, Decision, ModelStyle, Scenario, Strategy, Unit, megatron_args,
};

/// Whether Megatron's `module` recomputes `unit` of a `kind` block (Transformer Engine layers).
fn module_recomputes(module: &str, kind: BlockKind, unit: &Unit) -> bool {
    match module {
        "core_attn" => kind == BlockKind::Attention && unit.core_attention,
        "mlp" => kind == BlockKind::Mlp && !unit.forced && unit.name != "out_dropout_mask",
        "layernorm" => false,
        other => panic!("module {other} not expected for a dense model"),
    }
}

/// Per block of the chain (index) and unit (index): whether the flags recompute it.
fn megatron_recomputes(l: &Launch, anatomy: &Anatomy) -> Vec<Vec<bool>> {
    let blocks = anatomy.num_blocks();
    let mut out: Vec<Vec<bool>> = (0..blocks)
        .map(|b| vec![false; anatomy.block(b).units.len()])
        .collect();
    // Which layers `full` recomputes: every layer, or the first n of each virtual stage.
    let mut whole = vec![false; anatomy.layers as usize];
    match (
        l.one("--recompute-granularity"),
        l.one("--recompute-method"),
    ) {
        (Some("full"), Some("uniform")) => {
            assert_eq!(
                l.one("--recompute-num-layers"),
                Some("1"),
                "groups of layers keep less than the plan's layer inputs"
            );
            whole.iter_mut().for_each(|w| *w = true);
        }
        (Some("full"), Some("block")) => {
            let n = l.int("--recompute-num-layers", 0) as usize;
            let mut first = 0;
            for stage in decode(l.one("--pipeline-model-parallel-layout").unwrap()) {
                let count = stage.layers as usize;
                for w in &mut whole[first..first + count.min(n)] {
                    *w = true;
                }
                first += count;
            }
        }
        _ => {}
    }
    let modules = l.get("--recompute-modules").unwrap_or(&[]);
    let selective = l.one("--recompute-granularity") == Some("selective");
    for (b, units) in out.iter_mut().enumerate() {
        let kind = anatomy.kind_of(b);
        for (u, slot) in units.iter_mut().enumerate() {
            let unit = &anatomy.block(b).units[u];
            let layer_whole = matches!(kind, BlockKind::Attention | BlockKind::Mlp)
                && whole[(b - 1) / 2]
                && (kind == BlockKind::Mlp || !unit.forced);
            *slot = layer_whole
                || selective && modules.iter().any(|m| module_recomputes(m, kind, unit));
        }
    }
    out
}

/// The `named` strategy's units: the MLP module's (so that `--recompute-modules mlp` is the
/// exact answer).
fn mlp_module_units(style: ModelStyle) -> Vec<String> {
    let names: &[&str] = match style {
        ModelStyle::Gpt => &["mlp.ln_out", "mlp.fc1_out", "mlp.gelu_out"],
        ModelStyle::Llama => &["mlp.norm_out", "mlp.gate_up", "mlp.swiglu_out"],
    };
    names.iter().map(|s| s.to_string()).collect()
}

fn check(scenario: &Scenario) -> Option<Launch> {
    let outcome = match pipescope::solve(scenario) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{} {}: {e}", scenario.name, scenario.plan.strategy);
            return None;
        }
    };
    let text = megatron_args(scenario, &outcome).unwrap();
    let l = launch(&text);
    let anatomy = Anatomy::build(scenario).unwrap();
    let flags = megatron_recomputes(&l, &anatomy);
    for st in &outcome.stages {
        for b in &st.blocks {
            for (u, d) in b.decisions.iter().enumerate() {
                if flags[b.block][u] {
                    assert_eq!(
                        *d,
                        Decision::Recompute,
                        "{} {}: Megatron recomputes {}.{} of block {} on stage {}, the plan \
                         does not\n{text}",
                        scenario.name,
                        scenario.plan.strategy,
                        b.kind.name(),
                        anatomy.block(b.block).units[u].name,
                        b.block,
                        st.stage
                    );
                }
            }
        }
    }
    Some(l)
}

#[test]
fn no_flag_recomputes_a_kept_unit() {
    let catalog = Catalog::builtin();
    for name in ["tiny-4x8", "gpt3-175b-16k", "adapipe-llama2-70b"] {
        for &strategy in Strategy::ALL {
            let mut s = catalog.scenario(name).unwrap();
            s.plan.strategy = strategy;
            if strategy == Strategy::Named {
                s.plan.recompute_units = mlp_module_units(s.model.style);
            }
            let Some(l) = check(&s) else { continue };
            let granularity = l.one("--recompute-granularity");
            let modules = l.get("--recompute-modules").map(|m| m.join(" "));
            match strategy {
                Strategy::None => assert_eq!(granularity, None, "{name}"),
                Strategy::Selective => {
                    assert_eq!(granularity, Some("selective"), "{name}");
                    assert_eq!(modules.as_deref(), Some("core_attn"), "{name}");
                }
                Strategy::Named => assert_eq!(modules.as_deref(), Some("mlp"), "{name}"),
                Strategy::Full => assert_eq!(granularity, Some("full"), "{name}"),
                _ => {}
            }
        }
    }
}

/// The case: AdaPipe on the default preset keeps core attention on every stage,
/// so `selective` (which recomputes exactly core attention) must not be written; what the
/// plan recomputes beyond the flags is said per stage.
#[test]
fn adapipe_keeps_core_attention_so_no_selective() {
    let s = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    let outcome = pipescope::solve(&s).unwrap();
    assert!(outcome.stages.iter().all(|st| {
        st.units
            .iter()
            .any(|u| u.name == "attention.core_attn" && u.keep > 0)
    }));
    let text = megatron_args(&s, &outcome).unwrap();
    let l = launch(&text);
    assert_ne!(
        l.get("--recompute-modules").map(|m| m.join(" ")).as_deref(),
        Some("core_attn")
    );
    assert!(text.contains("GiB more per micro-batch"), "{text}");
}

/// A plan that recomputes whole layers on the first blocks of every stage and nothing else
/// maps to `block` with the smallest count over the stages.
#[test]
fn whole_leading_layers_map_to_block() {
    let mut s = Catalog::builtin().scenario("tiny-4x8").unwrap();
    s.plan.strategy = Strategy::Full;
    let mut outcome = pipescope::solve(&s).unwrap();
    // Keep everything in the last layer of every stage (two layers each): one layer each
    // stays recomputed whole.
    for st in &mut outcome.stages {
        let last_attention = st
            .blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Attention)
            .map(|b| b.block)
            .max()
            .unwrap();
        for b in &mut st.blocks {
            if b.block >= last_attention {
                b.decisions.iter_mut().for_each(|d| *d = Decision::Keep);
            }
        }
    }
    let l = launch(&megatron_args(&s, &outcome).unwrap());
    assert_eq!(l.one("--recompute-method"), Some("block"));
    assert_eq!(l.int("--recompute-num-layers", 0), 1);
}
