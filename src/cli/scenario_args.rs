//! Scenario flags shared by the TUI, `plan`, `compare` and `units` (docs/cli.md).

use std::path::Path;

use clap::Args;
use pipescope::{
    Catalog, DEFAULT_SCENARIO, MeasuredProfile, Objective, Partition, Precision, Scenario,
    ScenarioOverrides, ScheduleKind, Strategy, Zero,
};

/// Flags that pick a preset and override its fields.
#[derive(Debug, Clone, Default, Args)]
pub struct ScenarioArgs {
    /// Scenario preset name or TOML file (default: gpt3-175b-16k).
    #[arg(long, value_name = "NAME|FILE")]
    pub preset: Option<String>,
    /// Model preset name (see `pipescope presets`).
    #[arg(long)]
    pub model: Option<String>,
    /// GPU preset name (see `pipescope presets`).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Pipeline stages p.
    #[arg(short = 'p', long = "stages", value_name = "P", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub pp: Option<u32>,
    /// Tensor-parallel size t.
    #[arg(short = 't', long = "tp", value_name = "T", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub tp: Option<u32>,
    /// Data-parallel size d.
    #[arg(short = 'd', long = "dp", value_name = "D", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub dp: Option<u32>,
    /// Sequence parallelism on.
    #[arg(long, conflicts_with = "no_sp")]
    pub sp: bool,
    /// Sequence parallelism off.
    #[arg(long = "no-sp", conflicts_with = "sp")]
    pub no_sp: bool,
    /// Micro-batches per iteration m.
    #[arg(short = 'm', long = "microbatches", value_name = "M", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub micro_batches: Option<u32>,
    /// Sequences per micro-batch b.
    #[arg(short = 'b', long = "micro-batch-size", value_name = "B", value_parser = whole::<u64>, allow_negative_numbers = true)]
    pub micro_batch_size: Option<u64>,
    /// Sequence length s.
    #[arg(short = 's', long = "seq", value_name = "S", value_parser = whole::<u64>, allow_negative_numbers = true)]
    pub seq_len: Option<u64>,
    /// Memory budget per device in GiB (default: the GPU's memory).
    #[arg(long = "budget-gib", value_name = "X", value_parser = gib, allow_negative_numbers = true)]
    pub budget_gib: Option<f64>,
    /// Pipeline schedule (1f1b, gpipe, interleaved, zb-h1, zb-h2, zb-auto, zb-v, v-half, ...).
    #[arg(long)]
    pub schedule: Option<ScheduleKind>,
    /// Memory strategy (none, full, selective, uniform, adaptive, adapipe, offload, ...).
    #[arg(long)]
    pub strategy: Option<Strategy>,
    /// Virtual chunks per device for the multi-chunk schedules.
    #[arg(long, value_name = "V", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub chunks: Option<u32>,
    /// FlashAttention on.
    #[arg(long, conflicts_with = "no_flash")]
    pub flash: bool,
    /// FlashAttention off (materialised softmax).
    #[arg(long = "no-flash", conflicts_with = "flash")]
    pub no_flash: bool,
    /// Partition objective: estimate or adapipe.
    #[arg(long, value_name = "estimate|adapipe")]
    pub objective: Option<Objective>,
    /// Let recomputation overlap communication: the wait for the incoming gradient and the
    /// backward's tensor-parallel collectives (Lynx).
    #[arg(long = "overlap-recompute")]
    pub overlap_recompute: bool,
    /// Memory limit (chunk-activations) of the searched schedules.
    #[arg(long = "mem-limit", value_name = "X", allow_negative_numbers = true)]
    pub mem_limit: Option<f64>,
    /// Group size of gis / gis-offload (default p).
    #[arg(long = "group-size", value_name = "G", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub group_size: Option<u32>,
    /// Chunks offloaded by gis-offload (default 1).
    #[arg(long = "offload-chunks", value_name = "K", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub offload_chunks: Option<u32>,
    /// Context-parallel size cp: each sequence split over cp ranks (ring attention as
    /// Megatron and Transformer Engine run it; s a multiple of 2 x cp).
    #[arg(long = "cp", value_name = "CP", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub cp: Option<u32>,
    /// Expert-parallel size ep: a mixture of experts' layers re-split each stage's t x cp x d
    /// GPUs into etp x ep x edp, as Megatron-Core folds them (ep x etp must divide t x cp x d
    /// and ep the experts).
    #[arg(long = "ep", value_name = "EP", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub ep: Option<u32>,
    /// Expert tensor-parallel size etp: each routed expert split over etp ranks (default 1).
    #[arg(long = "etp", value_name = "ETP", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub etp: Option<u32>,
    /// The busiest expert's tokens over the mean (>= 1; default 1, balanced routing): scales
    /// the busiest expert-parallel rank's expert work, memory and all-to-all.
    #[arg(
        long = "routing-imbalance",
        value_name = "X",
        allow_negative_numbers = true
    )]
    pub routing_imbalance: Option<f64>,
    /// Run the expert all-to-alls as DeepEP does: each token crosses the network once per
    /// destination node, then NVLink to its experts (Megatron's flex dispatcher with DeepEP).
    #[arg(long = "deepep")]
    pub deepep: bool,
    /// Multi-token-prediction layers (replaces the model preset's depth; 0 trains without).
    #[arg(long = "mtp-layers", value_name = "N", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub mtp_layers: Option<u32>,
    /// ZeRO stage over the d x cp data-parallel ranks: 0 (plain), 1 (distributed optimizer)
    /// or 3 (Megatron-FSDP: weights, gradients and optimizer sharded).
    #[arg(long, value_name = "0|1|3")]
    pub zero: Option<Zero>,
    /// Distributed optimizer on: an alias of --zero 1.
    #[arg(
        long = "distributed-optimizer",
        conflicts_with = "no_distributed_optimizer"
    )]
    pub distributed_optimizer: bool,
    /// Distributed optimizer off: an alias of --zero 0.
    #[arg(
        long = "no-distributed-optimizer",
        conflicts_with = "distributed_optimizer"
    )]
    pub no_distributed_optimizer: bool,
    /// Overlap the data-parallel gradient reduction with the backward (Megatron's buckets).
    #[arg(
        long = "overlap-grad-reduce",
        conflicts_with = "no_overlap_grad_reduce"
    )]
    pub overlap_grad_reduce: bool,
    /// Reduce the gradients after the last backward (no overlap).
    #[arg(
        long = "no-overlap-grad-reduce",
        conflicts_with = "overlap_grad_reduce"
    )]
    pub no_overlap_grad_reduce: bool,
    /// Overlap the distributed optimizer's parameter all-gather with the next iteration's
    /// first forward (needs --zero 1 or 3 and --overlap-grad-reduce).
    #[arg(long = "overlap-param-gather")]
    pub overlap_param_gather: bool,
    /// Pipeline the tensor-parallel collectives with their GEMMs as Transformer Engine's
    /// userbuffers do (needs sequence parallelism).
    #[arg(long = "tp-comm-overlap")]
    pub tp_comm_overlap: bool,
    /// Layer split of the baselines and non-partitioning strategies: even or balanced.
    #[arg(long, value_name = "even|balanced")]
    pub partition: Option<Partition>,
    /// Sequences per iteration over all replicas (sets m = B / (b x d)).
    #[arg(long = "global-batch", value_name = "B", value_parser = whole::<u64>, allow_negative_numbers = true)]
    pub global_batch: Option<u64>,
    /// Memory kept free per device in GiB (budget = the GPU's memory minus it).
    #[arg(long = "reserve-gib", value_name = "X", allow_negative_numbers = true)]
    pub reserve_gib: Option<f64>,
    /// Bytes per gradient element kept and reduced: 4 (fp32) or 2 (16-bit).
    #[arg(long = "grad-bytes", value_name = "2|4", value_parser = whole::<u32>, allow_negative_numbers = true)]
    pub grad_bytes: Option<u32>,
    /// Number format of the transformer layers' GEMMs: bf16, or fp8 as Transformer Engine
    /// runs it (needs a GPU with fp8 tensor cores).
    #[arg(long, value_name = "bf16|fp8")]
    pub precision: Option<Precision>,
    /// Units the named strategy recomputes (names as in `units --json`, e.g. ln_out,gelu_out).
    #[arg(
        long = "recompute-units",
        value_name = "NAME,...",
        value_delimiter = ','
    )]
    pub recompute_units: Option<Vec<String>>,
    /// Measured profile (TOML) replacing the cost model's estimates.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
}

/// Parses a count flag (`-p`, `-s`, `-m`, ...) so that a bad value such as `1e12` or `-1`
/// says what is allowed; the scenario's validation then checks the range.
pub fn whole<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.trim()
        .parse()
        .map_err(|_| "a whole number written in digits, like 4096".to_string())
}

/// Parses a GiB flag (`--budget-gib`) so that `70GiB` says what is allowed.
pub fn gib(text: &str) -> Result<f64, String> {
    text.trim()
        .parse()
        .map_err(|_| "a number of GiB without a unit, like 70 or 75.5".to_string())
}

fn flag_pair(on: bool, off: bool) -> Option<bool> {
    match (on, off) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

impl ScenarioArgs {
    /// The overrides these flags give.
    pub fn overrides(&self) -> ScenarioOverrides {
        ScenarioOverrides {
            model: self.model.clone(),
            gpu: self.gpu.clone(),
            pp: self.pp,
            tp: self.tp,
            dp: self.dp,
            sp: flag_pair(self.sp, self.no_sp),
            micro_batches: self.micro_batches,
            micro_batch_size: self.micro_batch_size,
            seq_len: self.seq_len,
            budget_gib: self.budget_gib,
            schedule: self.schedule,
            strategy: self.strategy,
            chunks: self.chunks,
            flash: flag_pair(self.flash, self.no_flash),
            objective: self.objective,
            overlap_recompute: self.overlap_recompute.then_some(true),
            mem_limit: self.mem_limit,
            group_size: self.group_size,
            offload_chunks: self.offload_chunks,
            distributed_optimizer: flag_pair(
                self.distributed_optimizer,
                self.no_distributed_optimizer,
            ),
            overlap_grad_reduce: flag_pair(self.overlap_grad_reduce, self.no_overlap_grad_reduce),
            zero: self.zero,
            cp: self.cp,
            ep: self.ep,
            etp: self.etp,
            routing_imbalance: self.routing_imbalance,
            deepep: self.deepep.then_some(true),
            mtp_layers: self.mtp_layers,
            overlap_param_gather: self.overlap_param_gather.then_some(true),
            tp_comm_overlap: self.tp_comm_overlap.then_some(true),
            partition: self.partition,
            global_batch: self.global_batch,
            reserve_gib: self.reserve_gib,
            grad_bytes: self.grad_bytes,
            precision: self.precision,
            recompute_units: self.recompute_units.clone(),
        }
    }

    /// The catalog (built-in presets, the user's config dir, `--preset FILE` on top) and
    /// the scenario the flags describe. Errors are user-facing messages.
    pub fn to_scenario(&self) -> Result<(Scenario, Catalog), String> {
        let mut catalog = Catalog::with_user_config();
        let name = match &self.preset {
            Some(p) if Path::new(p).is_file() => {
                let info = catalog.add_file(Path::new(p)).map_err(|e| e.to_string())?;
                if info.kind != pipescope::PresetKind::Scenario {
                    return Err(format!(
                        "{p}: --preset needs a scenario file (top-level `name`, model, gpu, ...)"
                    ));
                }
                info.name
            }
            Some(p) => p.clone(),
            None => DEFAULT_SCENARIO.to_string(),
        };
        let mut scenario = catalog.scenario(&name).map_err(|e| {
            let mut msg = e.to_string();
            for err in catalog.errors() {
                msg.push_str(&format!("\n  (user preset not loaded: {err})"));
            }
            msg
        })?;
        self.overrides()
            .apply(&mut scenario, &catalog)
            .map_err(|e| name_flags(&e.to_string()))?;
        if let Some(path) = &self.profile {
            let text = pipescope::read_text_file(Path::new(path))
                .map_err(|e| format!("{path}: cannot read the profile: {e}"))?;
            let profile = MeasuredProfile::from_toml_str(path, &text).map_err(|e| e.to_string())?;
            scenario.profile = Some(profile);
            scenario
                .validate()
                .map_err(|e| name_flags(&e.to_string()))?;
        }
        // Broken user presets are said, not silently skipped: the user meant them to load.
        for err in catalog.errors() {
            let err = super::output::printable(&err.to_string());
            eprintln!("pipescope: warning: user preset not loaded: {err}");
        }
        Ok((scenario, catalog))
    }
}

/// The scenario's keys and the command-line flags that set them.
const KEY_FLAGS: [(&str, &str); 26] = [
    ("parallel.pp", "-p/--stages"),
    ("parallel.precision", "--precision"),
    ("parallel.tp", "-t/--tp"),
    ("parallel.dp", "-d/--dp"),
    ("parallel.chunks", "--chunks"),
    ("parallel.grad_bytes", "--grad-bytes"),
    ("parallel.cp", "--cp"),
    ("parallel.ep", "--ep"),
    ("parallel.etp", "--etp"),
    ("plan.routing_imbalance", "--routing-imbalance"),
    ("plan.deepep", "--deepep"),
    ("model.mtp_layers", "--mtp-layers"),
    ("parallel.zero", "--zero"),
    ("parallel.distributed_optimizer", "--distributed-optimizer"),
    ("plan.overlap_param_gather", "--overlap-param-gather"),
    ("plan.tp_comm_overlap", "--tp-comm-overlap"),
    ("plan.overlap_grad_reduce", "--overlap-grad-reduce"),
    ("batch.seq_len", "-s/--seq"),
    ("batch.micro_batches", "-m/--microbatches"),
    ("batch.micro_batch_size", "-b/--micro-batch-size"),
    ("plan.memory_budget_gib", "--budget-gib"),
    ("plan.reserve_gib", "--reserve-gib"),
    ("plan.recompute_units", "--recompute-units"),
    // Fields of the command line's own overrides (after the keys that contain them).
    ("reserve_gib", "--reserve-gib"),
    ("budget_gib", "--budget-gib"),
    ("global_batch", "--global-batch"),
];

/// A validation message with each scenario key followed by the flag that sets it
/// (`batch.seq_len (-s/--seq)`), so an error names what the user typed on the command line
/// as well as the preset key.
pub fn name_flags(message: &str) -> String {
    let mut out = message.to_string();
    for (key, flag) in KEY_FLAGS {
        let tagged = format!("{key} ({flag})");
        if !out.contains(&tagged) {
            out = out.replace(key, &tagged);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::name_flags;

    #[test]
    fn errors_name_the_flag_beside_the_key() {
        let msg = "invalid batch.seq_len = 16384: a multiple of parallel.tp (3)";
        assert_eq!(
            name_flags(msg),
            "invalid batch.seq_len (-s/--seq) = 16384: a multiple of parallel.tp (-t/--tp) (3)"
        );
        assert_eq!(name_flags("nothing to name"), "nothing to name");
        assert_eq!(
            name_flags("invalid reserve_gib = 90: less than the GPU's memory"),
            "invalid reserve_gib (--reserve-gib) = 90: less than the GPU's memory"
        );
        // A key that contains an override's name is tagged once, with its own flag.
        assert_eq!(
            name_flags("invalid plan.memory_budget_gib = 0"),
            "invalid plan.memory_budget_gib (--budget-gib) = 0"
        );
    }
}
