//! `pipescope units`: the computation units of every block kind of a scenario, with sizes
//! per device and micro-batch and their forward/backward costs.

use clap::Args;
use serde::Serialize;

use super::output::{emit, emit_line};
use super::scenario_args::ScenarioArgs;
use pipescope::{Anatomy, Block};

/// Arguments of `pipescope units`.
#[derive(Debug, Args)]
pub struct UnitsArgs {
    /// Scenario flags.
    #[command(flatten)]
    pub scenario: Box<ScenarioArgs>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct UnitJson<'a> {
    name: &'a str,
    size_bytes: u64,
    forced: bool,
    forward_flops: f64,
    forward_s: f64,
    backward_s: f64,
}

#[derive(Serialize)]
struct BlocksJson<'a> {
    embedding: Vec<UnitJson<'a>>,
    attention: Vec<UnitJson<'a>>,
    mlp: Vec<UnitJson<'a>>,
    /// A mixture of experts' MoE block (absent for a dense model).
    #[serde(skip_serializing_if = "Option::is_none")]
    moe: Option<Vec<UnitJson<'a>>>,
    /// The multi-token-prediction layers' first block (absent without MTP layers).
    #[serde(skip_serializing_if = "Option::is_none")]
    mtp: Option<Vec<UnitJson<'a>>>,
    head: Vec<UnitJson<'a>>,
}

#[derive(Serialize)]
struct UnitsJson<'a> {
    scenario: &'a str,
    precision: &'static str,
    blocks: BlocksJson<'a>,
    layer_bytes: u64,
    logits_transient_bytes: u64,
    p2p_bytes: u64,
}

fn units_json(b: &Block) -> Vec<UnitJson<'_>> {
    b.units
        .iter()
        .map(|u| UnitJson {
            name: &u.name,
            size_bytes: u.size_bytes,
            forced: u.forced,
            forward_flops: u.forward_flops,
            forward_s: u.forward_s,
            backward_s: u.backward_s,
        })
        .collect()
}

const MIB: f64 = (1u64 << 20) as f64;

/// The unit table of `a` as text, headed by `title`: per block kind its times and static
/// memory, then one row per unit.
fn table(title: &str, a: &Anatomy) -> String {
    let mut out = format!("{title}\n");
    for kind in a.kinds() {
        let b = a.block_of(kind);
        out.push_str(&format!(
            "\n{:<10} forward {:8.3} ms  backward B {:8.3} ms  W {:8.3} ms  static {:10.1} MiB\n",
            kind.name(),
            b.forward_s * 1e3,
            b.backward_b_s * 1e3,
            b.backward_w_s * 1e3,
            b.static_bytes as f64 / MIB
        ));
        out.push_str(&format!(
            "  {:<18} {:>12} {:>6} {:>10} {:>10} {:>10}\n",
            "unit", "MiB", "forced", "GFLOP", "fwd ms", "bwd ms"
        ));
        for u in &b.units {
            out.push_str(&format!(
                "  {:<18} {:>12.3} {:>6} {:>10.2} {:>10.3} {:>10.3}\n",
                u.name,
                u.size_bytes as f64 / MIB,
                if u.forced { "yes" } else { "" },
                u.forward_flops / 1e9,
                u.forward_s * 1e3,
                u.backward_s * 1e3
            ));
        }
    }
    out.push_str(&format!(
        "\nper layer (attention + mlp or moe, all kept): {:.1} MiB; logits transient {:.1} MiB\n",
        a.layer_bytes() as f64 / MIB,
        a.logits_transient_bytes as f64 / MIB
    ));
    out
}

/// Runs the subcommand.
pub fn run(args: &UnitsArgs) -> Result<(), super::Stop> {
    let (scenario, _) = args.scenario.to_scenario()?;
    let a = Anatomy::build(&scenario).map_err(|e| e.to_string())?;
    if args.json {
        let out = UnitsJson {
            scenario: &scenario.name,
            precision: scenario.parallel.precision.name(),
            blocks: BlocksJson {
                embedding: units_json(&a.embedding),
                attention: units_json(&a.attention),
                mlp: units_json(&a.mlp),
                moe: a
                    .kinds()
                    .any(|k| k == pipescope::BlockKind::Moe)
                    .then(|| units_json(&a.moe)),
                mtp: a
                    .kinds()
                    .any(|k| k == pipescope::BlockKind::Mtp)
                    .then(|| units_json(&a.mtp)),
                head: units_json(&a.head),
            },
            layer_bytes: a.layer_bytes(),
            logits_transient_bytes: a.logits_transient_bytes,
            p2p_bytes: a.p2p_bytes,
        };
        let text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
        return emit_line(&text);
    }
    // The model leads: a --model flag replaces the scenario's, whose name stays behind.
    let title = format!(
        "{} on {}, p {} t {} d {}, s {} b {}, {}, sequence parallel {}, flash {} (scenario {})",
        scenario.model.name,
        scenario.gpu.name,
        scenario.parallel.pp,
        scenario.parallel.tp,
        scenario.parallel.dp,
        scenario.batch.seq_len,
        scenario.batch.micro_batch_size,
        scenario.parallel.precision,
        if scenario.parallel.sequence_parallel {
            "on"
        } else {
            "off"
        },
        if scenario.plan.flash_attention {
            "on"
        } else {
            "off"
        },
        scenario.name,
    );
    emit(&table(&title, &a))
}
