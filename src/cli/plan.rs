//! `pipescope plan`: solve one scenario and print the per-stage plan and metrics (a table,
//! or the JSON object of docs/cli.md with `--json`).

use clap::Args;

use super::scenario_args::ScenarioArgs;
use pipescope::{GIB, Outcome, Scenario};
use serde_json::Value;

/// Arguments of `pipescope plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Scenario flags.
    #[command(flatten)]
    pub scenario: Box<ScenarioArgs>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The text form of one outcome: headline (schedule, strategy, the job's GPUs as
/// `t x cp x p x d`, and for a mixture of experts the expert layers' `ep x etp`, the
/// figures), then one row per stage.
pub fn table(o: &Outcome) -> String {
    let experts = if o.stages.iter().any(|st| st.moe_blocks > 0) {
        format!(", ep{} x etp{}", o.ep, o.etp)
    } else {
        String::new()
    };
    // The planner's estimate is the one-chunk formula `(m - 1) max T + sum T`: shown only
    // where every device holds one chunk (it reads far above the simulation elsewhere).
    let estimate = if o.stages.iter().all(|st| st.ranges.len() <= 1) {
        format!(" (estimate {:.3} s)", o.estimated_iteration_time_s)
    } else {
        String::new()
    };
    let mut s = format!(
        "{} / {} on {} GPUs (t{} x cp{} x p{} x d{}{experts}): iteration {:.3} s{estimate}, \
         bubble {:.1}%, MFU {}, HFU {}, {} vs 1f1b + full ({:.3} s), solved in {:.2} ms\n",
        o.schedule,
        o.strategy,
        o.gpus,
        o.tp,
        o.cp,
        o.pp,
        o.dp,
        o.iteration_time_s,
        100.0 * o.pipeline_bubble_rate(),
        super::output::percent(o.mfu),
        super::output::percent(o.hfu),
        super::output::ratio(o.speedup),
        o.baseline_iteration_time_s,
        o.solve_time_s * 1e3
    );
    if let Some(r) = &o.infeasible_reason {
        s.push_str(&format!("INFEASIBLE: {r}\n"));
    }
    // Columns of what sits on the host, only when something does.
    let offloads = o.stages.iter().any(|st| st.offload_bytes > 0);
    // The blocks column is as wide as its widest entry (a V's stage holds two ranges).
    let blocks: Vec<String> = o
        .stages
        .iter()
        .map(|st| {
            st.ranges
                .iter()
                .map(|[a, e]| format!("{a}-{e}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let bw = blocks.iter().map(String::len).max().unwrap_or(0).max(6);
    s.push_str(&format!(
        "{:>5} {:>bw$} {:>4} {:>4} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "stage",
        "blocks",
        "attn",
        "mlp",
        "in-fl",
        "static",
        "activ",
        "peak GiB",
        "fwd ms",
        "bwd ms",
        "recomp ms"
    ));
    s.push_str(&if offloads {
        format!(" {:>9} {:>6}\n", "host GiB", "k")
    } else {
        "\n".to_string()
    });
    for (st, blocks) in o.stages.iter().zip(&blocks) {
        s.push_str(&format!(
            "{:>5} {:>bw$} {:>4} {:>4} {:>6} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            st.stage,
            blocks,
            // MTP layers open with an attention sub-layer; MoE blocks are the MLPs of the
            // mixture-of-experts layers.
            st.attention_blocks + st.mtp_blocks,
            st.mlp_blocks + st.moe_blocks,
            st.in_flight,
            st.static_bytes as f64 / GIB,
            st.activation_bytes as f64 / GIB,
            st.peak_memory_bytes as f64 / GIB,
            st.forward_s * 1e3,
            st.backward_s * 1e3,
            st.recompute_s * 1e3
        ));
        if offloads {
            let k = st.copy_ratio.map_or("-".to_string(), |k| format!("{k:.2}"));
            s.push_str(&format!(" {:>9.2} {:>6}", st.offload_bytes as f64 / GIB, k));
        }
        s.push('\n');
    }
    for n in &o.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// The `plan --json` object: the outcome, and what was planned (scenario, model, GPU,
/// batch, layout knobs and budget) so that a saved file says so by itself. Keys the outcome
/// already has are kept as they are.
pub(super) fn plan_json(scenario: &Scenario, outcome: &Outcome) -> Result<Value, String> {
    let mut value = serde_json::to_value(outcome).map_err(|e| e.to_string())?;
    if let Some(map) = value.as_object_mut() {
        let par = &scenario.parallel;
        let plan = &scenario.plan;
        let batch = &scenario.batch;
        let keys: [(&str, Value); 13] = [
            ("scenario", scenario.name.clone().into()),
            ("model", scenario.model.name.clone().into()),
            ("gpu", scenario.gpu.name.clone().into()),
            ("micro_batches", batch.micro_batches.into()),
            ("micro_batch_size", batch.micro_batch_size.into()),
            ("seq_len", batch.seq_len.into()),
            ("chunks", par.chunks.into()),
            ("sequence_parallel", par.sequence_parallel.into()),
            ("flash_attention", plan.flash_attention.into()),
            ("attention_backend", plan.attention_backend.name().into()),
            ("overlap_grad_reduce", plan.overlap_grad_reduce.into()),
            ("overlap_param_gather", plan.overlap_param_gather.into()),
            ("budget_bytes", plan.memory_budget_bytes.into()),
        ];
        for (k, v) in keys {
            map.entry(k).or_insert(v);
        }
    }
    Ok(value)
}

/// Runs the subcommand.
pub fn run(args: &PlanArgs) -> Result<(), super::Stop> {
    let (scenario, _) = args.scenario.to_scenario()?;
    let outcome =
        super::no_fit::solve_explained(&scenario, args.scenario.settings.mem_limit.is_some())?;
    if args.json {
        let value = plan_json(&scenario, &outcome)?;
        let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        super::output::emit_line(&text)
    } else {
        super::output::emit(&table(&outcome))
    }
}
