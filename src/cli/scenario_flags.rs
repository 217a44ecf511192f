//! The scenario flags, in three groups so that each command takes the groups it needs with one
//! parser: where the scenario comes from ([`SourceFlags`]), its layout, batch split, schedule
//! and strategy ([`LayoutFlags`], which a sweep enumerates instead), and every other setting
//! ([`SettingFlags`], which a sweep keeps). Each value parser says what is allowed, so a bad
//! value names the flag, the value and the allowed form (clap adds the first two).

use clap::Args;

use pipescope::ranges::{self, Range};
use pipescope::{
    AttentionBackend, Objective, P2p, Partition, Precision, ScheduleKind, Strategy, Zero, limits,
};

/// Where the scenario starts from: a preset, a model, a GPU, a measured profile.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct SourceFlags {
    /// Scenario preset name or TOML file (default: gpt3-175b-16k, with nothing kept free).
    #[arg(long, value_name = "NAME|FILE", value_parser = Utf8Value(any_text))]
    pub preset: Option<String>,
    /// Model preset name (see `pipescope presets`).
    #[arg(long)]
    pub model: Option<String>,
    /// GPU preset name (see `pipescope presets`).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Measured profile (TOML) replacing the cost model's estimates.
    #[arg(long, value_name = "FILE", value_parser = Utf8Value(any_text))]
    pub profile: Option<String>,
}

/// The parallel layout (t, cp, p, d, the ZeRO stage), the number format, the batch split,
/// the schedule and the strategy: what a sweep enumerates.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct LayoutFlags {
    /// Pipeline stages p.
    #[arg(short = 'p', long = "stages", value_name = "P", value_parser = degree, allow_negative_numbers = true)]
    pub pp: Option<u32>,
    /// Tensor-parallel size t.
    #[arg(short = 't', long = "tp", value_name = "T", value_parser = degree, allow_negative_numbers = true)]
    pub tp: Option<u32>,
    /// Data-parallel size d.
    #[arg(short = 'd', long = "dp", value_name = "D", value_parser = degree, allow_negative_numbers = true)]
    pub dp: Option<u32>,
    /// GPUs of the job N: sets d = N / (t x cp x p) (refused when not whole, or beside a
    /// -d that says otherwise).
    #[arg(long = "gpus", value_name = "N", value_parser = whole_up_to::<u32>(GPUS_ALLOWED.to_string()), allow_negative_numbers = true)]
    pub gpus: Option<u32>,
    /// Sequence parallelism on.
    #[arg(long, conflicts_with = "no_sp")]
    pub sp: bool,
    /// Sequence parallelism off.
    #[arg(long = "no-sp", conflicts_with = "sp")]
    pub no_sp: bool,
    /// Micro-batches per iteration m.
    #[arg(short = 'm', long = "microbatches", value_name = "M", value_parser = count_in::<u32>(ranges::MICRO_BATCHES), allow_negative_numbers = true)]
    pub micro_batches: Option<u32>,
    /// Sequences per micro-batch b.
    #[arg(short = 'b', long = "micro-batch-size", value_name = "B", value_parser = count_in::<u64>(ranges::MICRO_BATCH_SIZE), allow_negative_numbers = true)]
    pub micro_batch_size: Option<u64>,
    /// Sequences per iteration over all replicas (sets m = B / (b x d)).
    #[arg(long = "global-batch", value_name = "B", value_parser = count_in::<u64>(ranges::GLOBAL_BATCH), allow_negative_numbers = true)]
    pub global_batch: Option<u64>,
    /// Pipeline schedule (1f1b, gpipe, interleaved, zb-h1, zb-h2, zb-auto, zb-v, v-half, ...).
    #[arg(long)]
    pub schedule: Option<ScheduleKind>,
    /// Memory strategy (none, full, selective, uniform, adaptive, adapipe, offload, ...).
    #[arg(long)]
    pub strategy: Option<Strategy>,
    /// Virtual chunks per device for interleaved, gis and gis-offload (2 or more).
    #[arg(long, value_name = "V", value_parser = degree, allow_negative_numbers = true)]
    pub chunks: Option<u32>,
    /// Context-parallel size cp: each sequence split over cp ranks (ring attention as
    /// Megatron and Transformer Engine run it; s a multiple of 2 x cp).
    #[arg(long = "cp", value_name = "CP", value_parser = degree, allow_negative_numbers = true)]
    pub cp: Option<u32>,
    /// ZeRO stage over the d x cp data-parallel ranks: 0 (plain), 1 (distributed optimizer)
    /// or 3 (Megatron-FSDP: weights, gradients and optimizer sharded).
    #[arg(long, value_name = "0|1|3", allow_negative_numbers = true)]
    pub zero: Option<Zero>,
    /// Distributed optimizer on (fp32 master weights and Adam moments sharded over d x cp):
    /// an alias of --zero 1.
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
    /// Number format of the transformer layers' GEMMs: bf16, or fp8 as Transformer Engine
    /// runs it (needs a GPU with fp8 tensor cores).
    #[arg(long, value_name = "bf16|fp8")]
    pub precision: Option<Precision>,
    /// Expert-parallel size ep: a mixture of experts' layers re-split each stage's t x cp x d
    /// GPUs into etp x ep x edp, as Megatron-Core folds them (ep x etp must divide t x cp x d
    /// and ep the experts).
    #[arg(long = "ep", value_name = "EP", value_parser = degree, allow_negative_numbers = true)]
    pub ep: Option<u32>,
    /// Expert tensor-parallel size etp: each routed expert split over etp ranks (default 1).
    #[arg(long = "etp", value_name = "ETP", value_parser = degree, allow_negative_numbers = true)]
    pub etp: Option<u32>,
}

/// Every other setting of a scenario: the sequence, the budget, the planner's options and the
/// schedule's limits.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct SettingFlags {
    /// Sequence length s.
    #[arg(short = 's', long = "seq", value_name = "S", value_parser = count_in::<u64>(ranges::SEQ_LEN), allow_negative_numbers = true)]
    pub seq_len: Option<u64>,
    /// Memory budget per device in GiB (default: the GPU's memory less the reserve).
    #[arg(long = "budget-gib", value_name = "X", value_parser = budget_gib, allow_negative_numbers = true)]
    pub budget_gib: Option<f64>,
    /// Memory kept free per device in GiB (budget = the GPU's memory minus it; default 0).
    #[arg(long = "reserve-gib", value_name = "X", value_parser = reserve_gib, allow_negative_numbers = true)]
    pub reserve_gib: Option<f64>,
    /// FlashAttention on.
    #[arg(long, conflicts_with = "no_flash")]
    pub flash: bool,
    /// FlashAttention off (materialised softmax).
    #[arg(long = "no-flash", conflicts_with = "flash")]
    pub no_flash: bool,
    /// FlashAttention's kernels: cudnn (Transformer Engine's fused attention, default) or
    /// flash2 (the flash-attn package's FlashAttention-2, as runs with NVTE_FUSED_ATTN=0).
    #[arg(long = "attention-backend", value_name = "cudnn|flash2")]
    pub attention_backend: Option<AttentionBackend>,
    /// Partition objective: estimate or adapipe.
    #[arg(long, value_name = "estimate|adapipe")]
    pub objective: Option<Objective>,
    /// Let recomputation overlap communication: the wait for the incoming gradient and the
    /// backward's tensor-parallel collectives (Lynx).
    #[arg(long = "overlap-recompute")]
    pub overlap_recompute: bool,
    /// Memory limit (chunk-activations) of the searched schedules zb-auto, zb-v and v-zb.
    #[arg(long = "mem-limit", value_name = "X", value_parser = mem_limit, allow_negative_numbers = true)]
    pub mem_limit: Option<f64>,
    /// Group size of gis / gis-offload (default p).
    #[arg(long = "group-size", value_name = "G", value_parser = degree, allow_negative_numbers = true)]
    pub group_size: Option<u32>,
    /// Chunks offloaded by gis-offload (default 1).
    #[arg(long = "offload-chunks", value_name = "K", value_parser = degree, allow_negative_numbers = true)]
    pub offload_chunks: Option<u32>,
    /// CUDA_DEVICE_MAX_CONNECTIONS of the run: 1 (default) lets Megatron hide the backward's
    /// tensor-parallel collectives under its GEMMs; more (the zero-bubble runtime uses 8)
    /// leaves them exposed.
    #[arg(long = "device-max-connections", value_name = "N", value_parser = count_in::<u32>(ranges::DEVICE_MAX_CONNECTIONS), allow_negative_numbers = true)]
    pub device_max_connections: Option<u32>,
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
    /// Hide each half's MoE all-to-alls (dispatch and combine) under the other half's
    /// compute in overlapped forward-backward pairs: dualpipe, dualpipe-v, and interleaved
    /// (1f1b at p 1) run as Megatron's combined 1F1B.
    #[arg(long = "moe-a2a-overlap")]
    pub moe_a2a_overlap: bool,
    /// Pipeline the tensor-parallel collectives with their GEMMs as Transformer Engine's
    /// userbuffers do (needs sequence parallelism).
    #[arg(long = "tp-comm-overlap")]
    pub tp_comm_overlap: bool,
    /// Layer split of the baselines and non-partitioning strategies: even or balanced.
    #[arg(long, value_name = "even|balanced")]
    pub partition: Option<Partition>,
    /// Pipeline layout in Megatron's --pipeline-model-parallel-layout grammar, e.g.
    /// "Et*8|t*8|t*8|t*8L" (E embedding, t layer, L loss, `|` between virtual stages).
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// Stage-to-stage sends: overlapped (default) or blocking (Megatron-LM's 2021-2022 runs).
    #[arg(long, value_name = "blocking|overlapped")]
    pub p2p: Option<P2p>,
    /// Bytes per gradient element kept and reduced: 4 (fp32) or 2 (16-bit).
    #[arg(long = "grad-bytes", value_name = "2|4", value_parser = grad_bytes, allow_negative_numbers = true)]
    pub grad_bytes: Option<u32>,
    /// Bytes per element of Adam's two moments: 4 (fp32) or 2 (bf16, as DeepSeek-V3 trains;
    /// the fp32 master weights stay).
    #[arg(long = "moment-bytes", value_name = "2|4", value_parser = moment_bytes, allow_negative_numbers = true)]
    pub moment_bytes: Option<u32>,
    /// Keep each SwiGLU's input (the MLP's and the experts' fc1 output) in fp8 for the
    /// backward, as Megatron-Core's activation_func_fp8_input_store and DeepSeek-V3 do.
    #[arg(long = "activation-func-fp8-input-store")]
    pub activation_func_fp8_input_store: bool,
    /// Units the named strategy recomputes (names as in `units --json`, e.g. ln_out,gelu_out;
    /// the TUI units panel's `attn.q` is `attention.q`).
    #[arg(
        long = "recompute-units",
        value_name = "NAME,...",
        value_delimiter = ','
    )]
    pub recompute_units: Option<Vec<String>>,
    /// The busiest expert's tokens over the mean (from 1 to experts / experts per token:
    /// 32 for DeepSeek-V3; default 1, balanced routing): scales the busiest expert-parallel
    /// rank's expert work, memory and all-to-all.
    #[arg(
        long = "routing-imbalance",
        value_name = "X",
        value_parser = imbalance,
        allow_negative_numbers = true
    )]
    pub routing_imbalance: Option<f64>,
    /// Run the expert all-to-alls as DeepEP does: each token crosses the network once per
    /// destination node, then NVLink to its experts (Megatron's flex dispatcher with DeepEP).
    #[arg(long = "deepep")]
    pub deepep: bool,
    /// Multi-token-prediction layers (replaces the model preset's depth; 0 trains without).
    #[arg(long = "mtp-layers", value_name = "N", value_parser = count_in::<u32>(ranges::MTP_LAYERS_RANGE), allow_negative_numbers = true)]
    pub mtp_layers: Option<u32>,
}

/// What a count flag says of a value that is not a whole number written in digits.
const NOT_DIGITS: &str = "a whole number written in digits, like 4096";

/// Parses a whole number of a sweep list or count whose range the sweep's own check states
/// as `allowed` (`--gpus`: "whole numbers from 1 to 4294967295"): a number written in digits
/// but too large for its type says that range, as the check does for 0, not that it is not
/// written in digits; one within the type goes on to that check, which names the value.
pub fn whole_up_to<T: TryFrom<u64>>(
    allowed: String,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let t = text.trim();
        let digits = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        match t.parse::<u64>() {
            Ok(v) => T::try_from(v).map_err(|_| allowed.clone()),
            Err(_) if digits => Err(allowed.clone()),
            Err(_) => Err(NOT_DIGITS.to_string()),
        }
    }
}

/// A flag's value read as UTF-8 text and then by its own parser: a file name that is not
/// UTF-8 is refused naming the flag and what to do (clap's own words, "invalid UTF-8 was
/// detected in one or more arguments", named neither), and the parser's refusal reads as
/// clap's (`invalid value 'x' for '--flag <V>': what is allowed`).
#[derive(Debug, Clone, Copy)]
pub struct Utf8Value(pub fn(&str) -> Result<String, String>);

impl clap::builder::TypedValueParser for Utf8Value {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let flag = arg.map_or_else(|| "a value".to_string(), ToString::to_string);
        let refuse = |kind, message: String| {
            clap::Error::raw(kind, format!("invalid value '{message}\n")).with_cmd(cmd)
        };
        let Some(text) = value.to_str() else {
            return Err(refuse(
                clap::error::ErrorKind::InvalidUtf8,
                format!(
                    "{}' for '{flag}': a name in UTF-8 (this one is not: rename the file, or \
                     give a link to it whose name is UTF-8)",
                    value.to_string_lossy()
                ),
            ));
        };
        (self.0)(text).map_err(|allowed| {
            refuse(
                clap::error::ErrorKind::ValueValidation,
                format!("{text}' for '{flag}': {allowed}"),
            )
        })
    }
}

/// Any text (for [`Utf8Value`] where the flag has no other rule).
pub fn any_text(text: &str) -> Result<String, String> {
    Ok(text.to_string())
}

/// What a plan's `--gpus` allows (a sweep's takes a list).
const GPUS_ALLOWED: &str = "a whole number of GPUs from 1 (t x cp x p x d)";

/// Parses a count flag that has its own range in the one table of ranges (`-s`, `-m`, `-b`,
/// `--global-batch`, `--device-max-connections`, `--mtp-layers`): anything that is not a whole
/// number (`-1`, `1e99`, `nan`, `x`, one too large for the flag's type) says the range; a
/// whole number outside it is refused by the scenario's validation, which names the field.
pub fn count_in<T: TryFrom<u64>>(
    range: Range,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let value: u64 = text.trim().parse().map_err(|_| range.allowed())?;
        T::try_from(value).map_err(|_| range.allowed())
    }
}

/// Parses `--grad-bytes`: 2 or 4 (the scenario refuses any other number with the same words).
pub fn grad_bytes(text: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .map_err(|_| "2 (16-bit gradients) or 4 (fp32 gradients)".to_string())
}

/// Parses `--moment-bytes`: 2 or 4 (the scenario refuses any other number with the same
/// words).
pub fn moment_bytes(text: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .map_err(|_| "2 (bf16 Adam moments) or 4 (fp32 Adam moments)".to_string())
}

/// Parses a parallel degree or count of chunks (`-t`, `-p`, `-d`, `--cp`, `--chunks`,
/// `--group-size`, `--offload-chunks`): anything that is not a whole number in the range
/// every such setting shares, 1 to [`limits::DEGREE`], says that range (a number too large
/// for the flag's type included); the scenario's validation then names the field.
pub fn degree(text: &str) -> Result<u32, String> {
    let allowed = || format!("a whole number from 1 to {}", limits::DEGREE);
    let value: u64 = text.trim().parse().map_err(|_| allowed())?;
    u32::try_from(value).map_err(|_| allowed())
}

/// Parses a GiB flag (`--budget-gib`, `--reserve-gib`) so that `70GiB` says what is allowed.
pub fn gib(text: &str) -> Result<f64, String> {
    text.trim()
        .parse()
        .map_err(|_| "a number of GiB without a unit, like 70 or 75.5".to_string())
}

/// Parses a GiB flag whose `range` the scenario checks, refusing here a number no `f64`
/// holds (`1e309`, `inf`, `nan`): the error then quotes the value as given (the scenario's
/// check would show it as `inf`) with the range allowed.
fn finite_gib(text: &str, range: &str) -> Result<f64, String> {
    let v = gib(text)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("a number of GiB {range}"))
    }
}

/// Parses `--budget-gib`: a finite number of GiB (the scenario checks its range).
pub fn budget_gib(text: &str) -> Result<f64, String> {
    finite_gib(text, "greater than 0 and at most 1e9")
}

/// Parses `--reserve-gib`: a finite number of GiB (the scenario checks it against the GPU).
pub fn reserve_gib(text: &str) -> Result<f64, String> {
    finite_gib(text, "at least 0 and less than the GPU's memory")
}

/// Parses `--mem-limit`: a number of chunk-activations (the scenario or the run checks > 0).
pub fn mem_limit(text: &str) -> Result<f64, String> {
    text.trim().parse().map_err(|_| {
        "a memory limit in chunk-activations: a number greater than 0, like 8 or 12.5".to_string()
    })
}

/// Parses `--routing-imbalance`: a ratio (the scenario checks its range).
pub fn imbalance(text: &str) -> Result<f64, String> {
    text.trim().parse().map_err(|_| {
        "the busiest expert's tokens over the mean: a number from 1 to experts / \
         experts_per_token, like 1.3"
            .to_string()
    })
}

/// Parses a time of an abstract run (`--comm`, `--offload-cost`), in the run's cost units.
pub fn cost(text: &str) -> Result<f64, String> {
    text.trim().parse().map_err(|_| {
        "a time in the run's cost units (those of --costs): a number >= 0, like 0.5".to_string()
    })
}

/// `Some(true)` for the `--x` flag, `Some(false)` for `--no-x`, `None` for neither.
pub fn flag_pair(on: bool, off: bool) -> Option<bool> {
    match (on, off) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_parsers_say_what_is_allowed() {
        assert!(mem_limit("abc").unwrap_err().contains("chunk-activations"));
        assert!(cost("1s").unwrap_err().contains("cost units"));
        assert!(gib("70GiB").unwrap_err().contains("GiB"));
        assert_eq!(mem_limit(" 8 "), Ok(8.0));
        for bad in ["99999999999", "-1", "2.5", "x"] {
            assert_eq!(
                degree(bad),
                Err("a whole number from 1 to 65536".to_string())
            );
        }
        assert_eq!(degree(" 4 "), Ok(4));
        // Every count flag with its own range says that range, whatever the bad text.
        for (range, bad) in [
            (ranges::MTP_LAYERS_RANGE, "a whole number from 0 to 64"),
            (ranges::SEQ_LEN, "a whole number from 1 to 16777216"),
            (
                ranges::DEVICE_MAX_CONNECTIONS,
                "a whole number from 1 to 32",
            ),
        ] {
            for text in ["-1", "1e99", "nan", "x", "2.5", "99999999999999999999999"] {
                assert_eq!(count_in::<u32>(range)(text), Err(bad.to_string()), "{text}");
            }
        }
        assert_eq!(count_in::<u32>(ranges::MTP_LAYERS_RANGE)("0"), Ok(0));
        assert_eq!(
            count_in::<u32>(ranges::MICRO_BATCHES)("4294967296"),
            Err("a whole number from 1 to 1048576".to_string())
        );
        assert!(grad_bytes("-1").unwrap_err().contains("2 (16-bit"));
    }
}
