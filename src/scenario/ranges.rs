//! The physical range of every number of a GPU and a model, in one table each: a value
//! outside its range is refused naming the field, the value and the range, before it can
//! break the cost model (an HBM of 5e-324 GB/s makes every time infinite; rates of 1e300 make
//! an iteration take no time at all). The ranges are wide sanity bounds around every device
//! and model that exists (docs/model.md says why each is where it is), not calibration.
//!
//! A new GPU or model field gets its range by one line in [`GPU_RANGES`] or
//! [`MODEL_RANGES`]; [`check_gpu`] and [`check_model`] walk the tables. Relations between
//! fields (heads dividing the hidden size, the parameter count) stay in `validate.rs`.

use super::{GpuSpec, InvalidField, ModelSpec};

/// The allowed values of one number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Dotted path of the field, as in a preset file (`gpu.hbm_gbps`).
    pub field: &'static str,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Unit shown after the bounds (`GB/s`), empty for none.
    pub unit: &'static str,
    /// Whether only whole numbers are allowed.
    pub whole: bool,
}

impl Range {
    const fn real(field: &'static str, min: f64, max: f64, unit: &'static str) -> Self {
        Self {
            field,
            min,
            max,
            unit,
            whole: false,
        }
    }

    const fn count(field: &'static str, min: f64, max: f64) -> Self {
        Self {
            field,
            min,
            max,
            unit: "",
            whole: true,
        }
    }

    /// What is allowed, in words: "a number from 10 to 1e6 GB/s".
    pub fn allowed(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let what = if self.whole {
            "a whole number"
        } else {
            "a number"
        };
        // A whole number's bounds in digits (they are below 2^53, so exact).
        let bound = |x: f64| {
            if self.whole && x.fract() == 0.0 && x.abs() < 9e15 {
                format!("{}", x as i64)
            } else {
                number_text(x)
            }
        };
        format!(
            "{what} from {} to {}{unit}",
            bound(self.min),
            bound(self.max)
        )
    }

    /// Refuses a whole number `value` outside the range, showing it exactly.
    pub fn check_count(&self, value: u64) -> Result<(), InvalidField> {
        // The bounds are far below 2^53, so the comparison in f64 is exact where it matters.
        if (value as f64) >= self.min && (value as f64) <= self.max {
            return Ok(());
        }
        Err(InvalidField::new(self.field, value, self.allowed()))
    }

    /// Refuses `value` outside the range (or fractional for a whole number; NaN always).
    pub fn check(&self, value: f64) -> Result<(), InvalidField> {
        let inside = value >= self.min && value <= self.max;
        if inside && (!self.whole || value.fract() == 0.0) {
            return Ok(());
        }
        let shown = if self.whole && value.fract() == 0.0 && value.abs() < 1e18 {
            format!("{}", value as i128)
        } else {
            number_text(value)
        };
        Err(InvalidField::new(self.field, shown, self.allowed()))
    }
}

/// A number as a person reads it: `80`, `0.75`, `1e308`, `5e-324` (never 309 digits).
pub fn number_text(x: f64) -> String {
    let ax = x.abs();
    if x.is_finite() && ax != 0.0 && !(1e-4..1e9).contains(&ax) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A GPU field read as a number (`None`: an optional field that is not set).
pub type GpuField = fn(&GpuSpec) -> Option<f64>;

/// A model field read as a whole number (`None`: an optional field that is not set).
pub type ModelField = fn(&ModelSpec) -> Option<u64>;

/// Every number of a GPU and its range. Rates span today's devices many times over (an A100
/// has 312 TFLOP/s and 2039 GB/s; the bounds are 1 to 1e5 TFLOP/s and 10 to 1e6 GB/s).
#[rustfmt::skip]
pub const GPU_RANGES: &[(Range, GpuField)] = &[
    (Range::real("gpu.memory_gib", 1.0, 1e5, "GiB"), |g| Some(g.memory_gib)),
    (Range::real("gpu.bf16_tflops", 1.0, 1e5, "TFLOP/s"), |g| Some(g.bf16_tflops)),
    (Range::real("gpu.fp8_tflops", 1.0, 2e5, "TFLOP/s"), |g| g.fp8_tflops),
    (Range::real("gpu.hbm_gbps", 10.0, 1e6, "GB/s"), |g| Some(g.hbm_gbps)),
    (Range::real("gpu.link_gbps", 0.1, 1e5, "GB/s"), |g| Some(g.link_gbps)),
    (Range::count("gpu.node_gpus", 1.0, 65536.0), |g| Some(f64::from(g.node_gpus))),
    (Range::count("gpu.host_gpus", 1.0, 65536.0), |g| g.host_gpus.map(f64::from)),
    (Range::real("gpu.inter_node_gbps", 0.01, 1e5, "GB/s"), |g| Some(g.inter_node_gbps)),
    (Range::real("gpu.host_gbps", 0.01, 1e5, "GB/s"), |g| Some(g.host_gbps)),
    (Range::real("gpu.host_duplex_gbps", 0.01, 1e5, "GB/s"), |g| Some(g.host_duplex_gbps)),
    (Range::count("gpu.pcie_pair", 1.0, 2.0), |g| Some(f64::from(g.pcie_pair))),
    (Range::real("gpu.host_memory_gib", 1.0, 1e7, "GiB"), |g| g.host_memory_gib),
    (Range::real("gpu.efficiency.link", 0.01, 1.0, ""), |g| Some(g.efficiency.link)),
    (Range::real("gpu.efficiency.network", 0.01, 1.0, ""), |g| g.efficiency.network),
    (Range::count("gpu.sms", 1.0, 65536.0), |g| g.sms.map(f64::from)),
];

/// A measured time of a profile (`profile.BLOCK.forward_s`, ...), in seconds: one block of one
/// micro-batch takes milliseconds; a million seconds is far beyond any.
pub const MEASURED_SECONDS: Range = Range::real("seconds", 0.0, 1e6, "s");

/// The throughput of an activation codec (`gpu.codec.gbps`, `profile.codec.gbps`).
pub const CODEC_GBPS: Range = Range::real("codec.gbps", 1.0, 1e6, "GB/s");

/// The thresholds of an efficiency table: FLOPs of a GEMM or bytes through HBM.
pub const EFFICIENCY_THRESHOLD: Range = Range::real("threshold", 0.0, 1e18, "");

/// The efficiencies of an efficiency table (fractions of the peak).
pub const EFFICIENCY: Range = Range::real("efficiency", 0.001, 1.0, "");

/// Every single-field number of a model and its range (`validate::limits` holds the bounds).
#[rustfmt::skip]
pub const MODEL_RANGES: &[(Range, ModelField)] = &[
    (Range::count("model.layers", 1.0, LAYERS), |m| Some(u64::from(m.layers))),
    (Range::count("model.hidden", 1.0, WIDTH), |m| Some(m.hidden)),
    (Range::count("model.heads", 1.0, HEADS), |m| Some(m.heads)),
    (Range::count("model.head_dim", 1.0, WIDTH), |m| m.head_dim),
    (Range::count("model.kv_heads", 1.0, HEADS), |m| Some(m.kv_heads)),
    (Range::count("model.ffn", 1.0, WIDTH), |m| Some(m.ffn)),
    (Range::count("model.vocab", 1.0, WIDTH), |m| Some(m.vocab)),
    (Range::count("model.max_positions", 1.0, SEQ), |m| m.max_positions),
    (Range::count("model.rope_theta", 1.0, 1e12), |m| m.rope_theta),
    (Range::count("model.experts", 1.0, EXPERTS), |m| m.moe.map(|e| e.experts)),
    (Range::count("model.shared_experts", 0.0, EXPERTS), |m| m.moe.map(|e| e.shared_experts)),
    (Range::count("model.expert_ffn", 1.0, WIDTH), |m| m.moe.map(|e| e.expert_ffn)),
    (MTP_LAYERS_RANGE, |m| Some(u64::from(m.mtp_layers))),
    (Range::count("model.q_lora_rank", 1.0, WIDTH), |m| m.mla.and_then(|a| a.q_lora_rank)),
    (Range::count("model.kv_lora_rank", 1.0, WIDTH), |m| m.mla.map(|a| a.kv_lora_rank)),
];

/// Multi-token-prediction layers of a model (`--mtp-layers` replaces the preset's).
pub const MTP_LAYERS_RANGE: Range = Range::count("model.mtp_layers", 0.0, MTP_LAYERS);
/// Sequences per iteration over all replicas, `B = m x b x d` (at most the largest m x b x d).
pub const GLOBAL_BATCH: Range = Range::count(
    "global_batch",
    1.0,
    MICRO_BATCHES_MAX * MICRO_BATCH * DEGREE,
);
/// Stages `p`.
pub const PP: Range = Range::count("parallel.pp", 1.0, DEGREE);
/// Tensor-parallel size `t`.
pub const TP: Range = Range::count("parallel.tp", 1.0, DEGREE);
/// Context-parallel size `cp`.
pub const CP: Range = Range::count("parallel.cp", 1.0, DEGREE);
/// Data-parallel size `d`.
pub const DP: Range = Range::count("parallel.dp", 1.0, DEGREE);
/// Chunks per device `v`.
pub const CHUNKS: Range = Range::count("parallel.chunks", 1.0, DEGREE);
/// Sequence length `s`, tokens.
pub const SEQ_LEN: Range = Range::count("batch.seq_len", 1.0, SEQ);
/// Sequences per micro-batch `b`.
pub const MICRO_BATCH_SIZE: Range = Range::count("batch.micro_batch_size", 1.0, MICRO_BATCH);
/// Micro-batches per iteration `m`.
pub const MICRO_BATCHES: Range = Range::count("batch.micro_batches", 1.0, MICRO_BATCHES_MAX);
/// Group size of `gis`/`gis-offload`.
pub const GROUP_SIZE: Range = Range::count("plan.group_size", 1.0, DEGREE);
/// Chunks offloaded by `gis-offload`.
pub const OFFLOAD_CHUNKS: Range = Range::count("plan.offload_chunks", 1.0, DEGREE);
/// Expert-parallel size `ep`.
pub const EP: Range = Range::count("parallel.ep", 1.0, DEGREE);
/// Expert tensor-parallel size `etp`.
pub const ETP: Range = Range::count("parallel.etp", 1.0, DEGREE);
/// The busiest expert's tokens over the mean: 1 is balanced routing; a million is far beyond
/// any router (at most every token of a batch goes to one expert: `experts / top-k`).
pub const ROUTING_IMBALANCE: Range = Range::real("plan.routing_imbalance", 1.0, 1e6, "");

/// Multiprocessors the expert all-to-all's kernels run on (Megatron-Core's
/// `moe_flex_dispatcher_num_sms`); below the GPU's own count, checked in `validate_moe.rs`.
pub const FLEX_DISPATCHER_NUM_SMS: Range =
    Range::count("plan.flex_dispatcher_num_sms", 1.0, 1024.0);

/// `CUDA_DEVICE_MAX_CONNECTIONS` of the run (the hardware has 32 work queues).
pub const DEVICE_MAX_CONNECTIONS: Range = Range::count("plan.device_max_connections", 1.0, 32.0);

/// The single-field ranges of a scenario's layout, batch and plan (relations between fields
/// stay in `validate.rs`).
pub const SETTING_RANGES: &[Range] = &[
    PP,
    TP,
    CP,
    DP,
    CHUNKS,
    SEQ_LEN,
    MICRO_BATCH_SIZE,
    MICRO_BATCHES,
    GROUP_SIZE,
    OFFLOAD_CHUNKS,
    DEVICE_MAX_CONNECTIONS,
    EP,
    ETP,
    ROUTING_IMBALANCE,
    FLEX_DISPATCHER_NUM_SMS,
];

/// The range of the field at dotted path `field` (`gpu.hbm_gbps`, `parallel.pp`), if it has
/// one of its own; an inline `[model]` or `[gpu]` table of a scenario has the same ranges.
pub fn range_of(field: &str) -> Option<Range> {
    let gpu = GPU_RANGES.iter().map(|(r, _)| *r);
    let model = MODEL_RANGES.iter().map(|(r, _)| *r);
    gpu.chain(model)
        .chain(SETTING_RANGES.iter().copied())
        .find(|r| r.field == field)
}

const DEGREE: f64 = super::validate::limits::DEGREE as f64;
const MICRO_BATCH: f64 = super::validate::limits::MICRO_BATCH as f64;
const MICRO_BATCHES_MAX: f64 = super::validate::limits::MICRO_BATCHES as f64;
const LAYERS: f64 = super::validate::limits::LAYERS as f64;
const WIDTH: f64 = super::validate::limits::WIDTH as f64;
const HEADS: f64 = super::validate::limits::HEADS as f64;
const SEQ: f64 = super::validate::limits::SEQ_LEN as f64;
const EXPERTS: f64 = super::validate_moe::MAX_EXPERTS as f64;
const MTP_LAYERS: f64 = super::validate_moe::MAX_MTP_LAYERS as f64;

/// Checks every number of `gpu` against [`GPU_RANGES`], and its efficiency tables: each entry
/// in range, thresholds sorted from the largest down (the order the cost model reads them).
pub fn check_gpu(gpu: &GpuSpec) -> Result<(), InvalidField> {
    for (range, read) in GPU_RANGES {
        if let Some(value) = read(gpu) {
            range.check(value)?;
        }
    }
    let eff = &gpu.efficiency;
    check_steps("gpu.efficiency.matrix", &eff.matrix)?;
    check_steps("gpu.efficiency.memory", &eff.memory)?;
    for (field, steps) in [
        ("gpu.efficiency.matrix_fp8", &eff.matrix_fp8),
        ("gpu.efficiency.attention", &eff.attention),
        ("gpu.efficiency.attention_backward", &eff.attention_backward),
        ("gpu.efficiency.attention_unmasked", &eff.attention_unmasked),
        (
            "gpu.efficiency.attention_unmasked_backward",
            &eff.attention_unmasked_backward,
        ),
        ("gpu.efficiency.flash2_attention", &eff.flash2_attention),
        (
            "gpu.efficiency.flash2_attention_backward",
            &eff.flash2_attention_backward,
        ),
        (
            "gpu.efficiency.flash2_attention_unmasked",
            &eff.flash2_attention_unmasked,
        ),
        (
            "gpu.efficiency.flash2_attention_unmasked_backward",
            &eff.flash2_attention_unmasked_backward,
        ),
        ("gpu.efficiency.grouped_matrix", &eff.grouped_matrix),
    ] {
        if let Some(steps) = steps {
            check_steps(field, steps)?;
        }
    }
    Ok(())
}

/// Checks every number of `model` against [`MODEL_RANGES`].
pub fn check_model(model: &ModelSpec) -> Result<(), InvalidField> {
    for (range, read) in MODEL_RANGES {
        if let Some(value) = read(model) {
            range.check_count(value)?;
        }
    }
    Ok(())
}

/// An efficiency table: at least one `[threshold, efficiency]` step, each in range, the
/// thresholds strictly decreasing.
fn check_steps(field: &'static str, steps: &[(f64, f64)]) -> Result<(), InvalidField> {
    if steps.is_empty() {
        return Err(InvalidField::new(
            field,
            "[]",
            "at least one [threshold, efficiency] step",
        ));
    }
    for (i, &(threshold, e)) in steps.iter().enumerate() {
        let entry = |what: &str, r: &Range| {
            InvalidField::new(
                format!("{field}[{i}]"),
                format!("[{}, {}]", number_text(threshold), number_text(e)),
                format!("a {what} that is {}", r.allowed()),
            )
        };
        if EFFICIENCY_THRESHOLD.check(threshold).is_err() {
            return Err(entry("threshold", &EFFICIENCY_THRESHOLD));
        }
        if EFFICIENCY.check(e).is_err() {
            return Err(entry("efficiency", &EFFICIENCY));
        }
        if let Some(&(previous, _)) = i.checked_sub(1).and_then(|j| steps.get(j))
            && threshold >= previous
        {
            return Err(InvalidField::new(
                format!("{field}[{i}]"),
                format!("[{}, {}]", number_text(threshold), number_text(e)),
                format!(
                    "steps sorted from the largest threshold down: this one is not below the \
                     step before it ({})",
                    number_text(previous)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Catalog;

    fn a100() -> GpuSpec {
        Catalog::builtin().gpu("a100-80gb").cloned().unwrap()
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(number_text(1e308), "1e308");
        assert_eq!(number_text(5e-324), "5e-324");
        assert_eq!(number_text(80.0), "80");
        assert_eq!(number_text(0.75), "0.75");
        assert_eq!(number_text(2039.5), "2039.5");
        assert_eq!(number_text(f64::INFINITY), "inf");
    }

    #[test]
    fn every_builtin_gpu_and_model_is_in_range() {
        let c = Catalog::builtin();
        for name in c.gpu_names() {
            check_gpu(c.gpu(name).unwrap()).unwrap();
        }
        for name in c.model_names() {
            check_model(c.model(name).unwrap()).unwrap();
        }
    }

    #[test]
    fn a_rate_out_of_range_names_field_value_and_range() {
        let mut g = a100();
        g.hbm_gbps = 5e-324;
        let e = check_gpu(&g).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid gpu.hbm_gbps = 5e-324: a number from 10 to 1000000 GB/s"
        );
        for (range, _) in GPU_RANGES {
            let mut g = a100();
            set(&mut g, range.field, 1e300);
            let e = check_gpu(&g).unwrap_err();
            assert_eq!(e.field, range.field);
            if !range.whole {
                assert_eq!(e.value, "1e300");
            }
        }
    }

    /// Sets the GPU field named `field` to `value` (every field of the table).
    fn set(g: &mut GpuSpec, field: &str, value: f64) {
        match field {
            "gpu.memory_gib" => g.memory_gib = value,
            "gpu.bf16_tflops" => g.bf16_tflops = value,
            "gpu.fp8_tflops" => g.fp8_tflops = Some(value),
            "gpu.hbm_gbps" => g.hbm_gbps = value,
            "gpu.link_gbps" => g.link_gbps = value,
            "gpu.node_gpus" => g.node_gpus = u32::MAX,
            "gpu.host_gpus" => g.host_gpus = Some(u32::MAX),
            "gpu.inter_node_gbps" => g.inter_node_gbps = value,
            "gpu.host_gbps" => g.host_gbps = value,
            "gpu.host_duplex_gbps" => g.host_duplex_gbps = value,
            "gpu.pcie_pair" => g.pcie_pair = u32::MAX,
            "gpu.host_memory_gib" => g.host_memory_gib = Some(value),
            "gpu.efficiency.link" => g.efficiency.link = value,
            "gpu.efficiency.network" => g.efficiency.network = Some(value),
            "gpu.sms" => g.sms = Some(u32::MAX),
            other => panic!("the test does not know {other}: add it here"),
        }
    }

    #[test]
    fn unsorted_efficiency_tables_are_refused() {
        let mut g = a100();
        g.efficiency.matrix = vec![(1e9, 0.5), (1e12, 0.9)];
        let e = check_gpu(&g).unwrap_err();
        assert_eq!(e.field, "gpu.efficiency.matrix[1]");
        assert!(e.allowed.contains("sorted"), "{e}");
        g.efficiency.matrix = vec![(1e12, 0.9), (1e9, 0.0)];
        assert!(check_gpu(&g).unwrap_err().allowed.contains("efficiency"));
    }

    #[test]
    fn unmasked_attention_tables_are_checked_and_named() {
        let mut g = a100();
        g.efficiency.attention_unmasked = Some(vec![(1e9, 0.5), (1e12, 0.6)]);
        let e = check_gpu(&g).unwrap_err();
        assert_eq!(e.field, "gpu.efficiency.attention_unmasked[1]");
        let mut g = a100();
        g.efficiency.attention_unmasked_backward = Some(vec![(1e9, 1.5)]);
        let e = check_gpu(&g).unwrap_err();
        assert!(
            e.field
                .starts_with("gpu.efficiency.attention_unmasked_backward"),
            "{e}"
        );
    }
}
