//! Precision and the newer presets, rule by rule (docs/model.md, "FP8"): what Transformer
//! Engine's fp8 recipe keeps for the backward and in how many bytes, which GEMMs run at the
//! fp8 peak and what stays bf16, the fp8 weight cache, the halved tensor-parallel gathers,
//! the refusal of fp8 on a GPU without fp8 tensor cores; `head_dim`; the Llama 3.1 presets
//! field by field against their published configs; the Hopper and Blackwell GPU presets.

use crate::scenario_common::read_back;
use pipescope::{
    Anatomy, Block, Catalog, ModelStyle, Precision, Scenario, ScenarioOverrides, solve,
};

use super::cli_common::pipescope;

/// `model` on `gpu` at tensor parallel `t` (SP on), sequence `s`, micro-batch 1, one stage.
fn scenario(model: &str, gpu: &str, t: u32, s: u64, flash: bool, precision: Precision) -> Scenario {
    let c = Catalog::builtin();
    let mut sc = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        gpu: Some(gpu.into()),
        tp: Some(t),
        pp: Some(1),
        sp: Some(true),
        seq_len: Some(s),
        micro_batch_size: Some(1),
        flash: Some(flash),
        precision: Some(precision),
        reserve_gib: Some(0.0),
        ..Default::default()
    }
    .apply(&mut sc, &c)
    .unwrap();
    sc
}

fn both(model: &str, t: u32, s: u64, flash: bool) -> (Anatomy, Anatomy) {
    let build = |p| Anatomy::build(&scenario(model, "h100-80gb", t, s, flash, p)).unwrap();
    (build(Precision::Bf16), build(Precision::Fp8))
}

fn size(b: &Block, unit: &str) -> u64 {
    b.unit(unit).unwrap().size_bytes
}

#[test]
fn fp8_keeps_the_linear_layers_inputs_in_one_byte() {
    // Llama 3.1 8B, t 2 with SP, s 4096: h 4096, 32 heads of 128, 8 kv heads, ffn 14336.
    let (t, s, h, q, f) = (2u64, 4096u64, 4096u64, 4096u64, 14336u64);
    let (bf, f8) = both("llama3.1-8b", 2, s, true);
    // The norms emit their output in fp8 for the QKV and gate/up GEMMs: kept at 1 byte.
    for block in [(&bf.attention, &f8.attention), (&bf.mlp, &f8.mlp)] {
        assert_eq!(size(block.0, "norm_out"), 2 * s * h / t);
        assert_eq!(size(block.1, "norm_out"), s * h / t);
    }
    // The down projection keeps only the fp8 cast of its input.
    assert_eq!(size(&bf.mlp, "swiglu_out"), 2 * s * f / t);
    assert_eq!(size(&f8.mlp, "swiglu_out"), s * f / t);
    // q, k, v and the SwiGLU input are GEMM outputs, kept in bf16 by attention and SwiGLU.
    for unit in ["q", "k", "v"] {
        assert_eq!(
            size(&bf.attention, unit),
            size(&f8.attention, unit),
            "{unit}"
        );
    }
    assert_eq!(size(&bf.mlp, "gate_up"), size(&f8.mlp, "gate_up"));
    // FlashAttention keeps its bf16 output and log-sum-exp; the out-projection adds its own
    // fp8 cast of that output (delayed scaling cannot reuse the bf16 one).
    assert_eq!(
        size(&f8.attention, "core_attn"),
        size(&bf.attention, "core_attn") + s * q / t
    );
    // The embedding and the output layer stay bf16.
    assert_eq!(bf.head.units, f8.head.units);
    assert_eq!(bf.embedding.units, f8.embedding.units);
}

#[test]
fn fp8_without_flash_attention_keeps_the_context_in_one_byte() {
    // GPT-3 175B, t 8 with SP, s 2048, materialised softmax.
    let (t, s, h, f) = (8u64, 2048u64, 12288u64, 49152u64);
    let (bf, f8) = both("gpt3-175b", 8, s, false);
    assert_eq!(size(&f8.attention, "ln_out"), s * h / t);
    assert_eq!(size(&f8.attention, "context"), s * h / t);
    assert_eq!(size(&bf.attention, "context"), 2 * s * h / t);
    assert_eq!(size(&f8.mlp, "gelu_out"), s * f / t);
    for unit in [
        "q",
        "k",
        "v",
        "softmax_out",
        "attn_dropout",
        "out_dropout_mask",
    ] {
        assert_eq!(
            size(&bf.attention, unit),
            size(&f8.attention, unit),
            "{unit}"
        );
    }
    assert_eq!(size(&bf.mlp, "fc1_out"), size(&f8.mlp, "fc1_out"));
    // One byte is not compressed further by the 8-bit codec.
    let ctx = f8.attention.unit("context").unwrap();
    assert_eq!(ctx.compressed_bytes, ctx.size_bytes);
}

#[test]
fn fp8_holds_a_cast_of_the_linear_weights() {
    // Transformer Engine keeps each weight's fp8 copy and transpose: 2 bytes a weight.
    let (bf, f8) = both("llama3.1-8b", 2, 4096, true);
    let (h, q, kv, f, t) = (4096u64, 4096u64, 1024u64, 14336u64, 2u64);
    let attention = (h * (q + 2 * kv) + q * h) / t;
    let mlp = 3 * h * f / t;
    assert_eq!(f8.attention.fp8_weight_bytes, 2 * attention);
    assert_eq!(f8.mlp.fp8_weight_bytes, 2 * mlp);
    assert_eq!(
        f8.attention.static_bytes - bf.attention.static_bytes,
        2 * attention
    );
    assert_eq!(f8.mlp.static_bytes - bf.mlp.static_bytes, 2 * mlp);
    assert_eq!(bf.attention.fp8_weight_bytes, 0);
    assert_eq!(f8.head.static_bytes, bf.head.static_bytes);
}

#[test]
fn fp8_gathers_the_layer_inputs_in_one_byte() {
    // With SP, of a layer block's three exposed gathers (input all-gather, output
    // reduce-scatter, output-gradient all-gather) two move fp8: 2/3 of the bf16 time.
    let c = Catalog::builtin();
    let run = |p| {
        let mut s = c.scenario("gpt3-175b-16k").unwrap();
        ScenarioOverrides {
            gpu: Some("h100-80gb".into()),
            precision: Some(p),
            strategy: Some(pipescope::Strategy::Full),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        solve(&s).unwrap()
    };
    let (bf, f8) = (run(Precision::Bf16), run(Precision::Fp8));
    let ratio = f8.time_breakdown_s.tp_comm / bf.time_breakdown_s.tp_comm;
    assert!((ratio - 2.0 / 3.0).abs() < 1e-9, "{ratio}");
    // The weights' fp8 cast, once an iteration, lengthens the optimizer step.
    assert!(f8.time_breakdown_s.optimizer > bf.time_breakdown_s.optimizer);
    // MFU is against the precision's own peak (1979 TFLOP/s for fp8 on an H100).
    let flops = |o: &pipescope::Outcome, peak: f64| o.mfu.unwrap() * o.iteration_time_s * peak;
    let (a, b) = (flops(&bf, 989.0), flops(&f8, 1979.0));
    assert!((a - b).abs() / a < 1e-9, "{a} {b}");
    assert_eq!(f8.precision, Precision::Fp8);
}

#[test]
fn a_gpu_without_fp8_refuses_fp8_naming_the_gpu() {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    let err = ScenarioOverrides {
        precision: Some(Precision::Fp8),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("parallel.precision") && err.contains("fp8"),
        "{err}"
    );
    assert!(err.contains("a100-80gb") && err.contains("bf16"), "{err}");
    let (ok, _, stderr) = pipescope(&["plan", "--precision", "fp8"]);
    assert!(!ok);
    assert!(
        stderr.contains("--precision") && stderr.contains("a100-80gb"),
        "{stderr}"
    );
    let (ok, _, stderr) = pipescope(&["plan", "--precision", "fp16"]);
    assert!(!ok);
    assert!(
        stderr.contains("fp16") && stderr.contains("bf16, fp8"),
        "{stderr}"
    );
    // A preset file says the key, the value and what is allowed, with its line.
    let mut cat = Catalog::builtin();
    let text = "name = \"x\"\n[parallel]\nprecision = \"int8\"\n";
    let err = cat.add_text("x.toml", text).unwrap_err().to_string();
    assert!(err.contains("x.toml:3:13:"), "{err}");
    assert!(
        err.contains("parallel.precision = int8") && err.contains("bf16, fp8"),
        "{err}"
    );
}

#[test]
fn precision_reaches_the_json_and_round_trips() {
    let args = ["--gpu", "h100-80gb", "--precision", "fp8", "--json"];
    let (ok, out, err) = pipescope(&[&["plan"][..], &args].concat());
    assert!(ok, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(plan["precision"], "fp8");
    let (ok, out, err) = pipescope(&[&["units"][..], &args].concat());
    assert!(ok, "{err}");
    let units: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(units["precision"], "fp8");
    let (ok, out, err) = pipescope(&[&["export", "megatron"][..], &args[..4]].concat());
    assert!(ok, "{err}");
    assert!(out.contains("--fp8-recipe delayed"), "{out}");
    let sweep = [
        "sweep",
        "--gpu",
        "h100-80gb",
        "--model",
        "llama3.1-8b",
        "--gpus",
        "8",
        "--global-batch",
        "16",
        "-s",
        "2048",
        "--strategies",
        "full",
        "--schedules",
        "1f1b",
        "--precision",
        "fp8",
        "--json",
    ];
    let (ok, out, err) = pipescope(&sweep);
    assert!(ok, "{err}");
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["best"]["precision"], "fp8");
    let (ok, out, _) = pipescope(&["plan", "--json"]);
    assert!(ok);
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(plan["precision"], "bf16");
    // A scenario with fp8 and an explicit head width is written back and read equal.
    let mut s = scenario("llama3.1-70b", "h200-141gb", 8, 8192, true, Precision::Fp8);
    s.name = "round-trip".into();
    assert_eq!(read_back(&s), s);
}

#[test]
fn llama_3_1_presets_match_their_published_configs() {
    // (name, layers, hidden, intermediate, heads, kv heads, published parameters): the
    // Hugging Face config.json of meta-llama/Llama-3.1-{8B,70B,405B}; all have head_dim 128,
    // vocab 128256, max_position_embeddings 131072, untied embeddings, RMSNorm and SwiGLU.
    let c = Catalog::builtin();
    for (name, layers, hidden, ffn, heads, kv, published) in [
        ("llama3.1-8b", 32, 4096, 14336, 32, 8, 8.03e9),
        ("llama3.1-70b", 80, 8192, 28672, 64, 8, 70.6e9),
        ("llama3.1-405b", 126, 16384, 53248, 128, 8, 405.85e9),
    ] {
        let m = c.model(name).unwrap();
        assert_eq!(m.style, ModelStyle::Llama, "{name}");
        assert_eq!(
            (m.layers, m.hidden, m.ffn, m.heads, m.kv_heads),
            (layers, hidden, ffn, heads, kv),
            "{name}"
        );
        assert_eq!(m.head_dim(), 128, "{name}");
        assert_eq!(m.vocab, 128256, "{name}");
        assert_eq!(m.max_positions, Some(131072), "{name}");
        assert!(!m.tied_embeddings, "{name}");
        let n = m.parameters() as f64;
        assert!((n - published).abs() / published < 0.005, "{name}: {n}");
    }
    // The Llama 3 names keep working with the same shapes (405B is Llama 3.1's).
    for (old, new) in [
        ("llama3-8b", "llama3.1-8b"),
        ("llama3-70b", "llama3.1-70b"),
        ("llama3-405b", "llama3.1-405b"),
    ] {
        assert_eq!(
            c.model(old).unwrap().parameters(),
            c.model(new).unwrap().parameters()
        );
    }
    // A sequence past the published context is refused.
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    let err = ScenarioOverrides {
        model: Some("llama3.1-8b".into()),
        seq_len: Some(262_144),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("batch.seq_len") && err.contains("131072"),
        "{err}"
    );
}

#[test]
fn hopper_and_blackwell_presets_carry_their_sheets() {
    let c = Catalog::builtin();
    // (name, reported GiB, bf16, fp8, HBM GB/s, GPUs per NVLink domain).
    for (name, gib, bf16, fp8, hbm, node) in [
        ("h100-80gb", 79.6, 989.0, 1979.0, 3350.0, 8),
        ("h200-141gb", 140.4, 989.0, 1979.0, 4800.0, 8),
        ("b200-180gb", 179.1, 2250.0, 4500.0, 8000.0, 8),
        ("gb200-186gb", 185.0, 2500.0, 5000.0, 8000.0, 72),
    ] {
        let g = c.gpu(name).unwrap();
        assert_eq!(
            (
                g.memory_gib,
                g.bf16_tflops,
                g.fp8_tflops,
                g.hbm_gbps,
                g.node_gpus
            ),
            (gib, bf16, Some(fp8), hbm, node),
            "{name}"
        );
        let e = &g.efficiency;
        assert!(e.gemm_memory_overlap && e.matrix_fp8.is_some() && e.attention.is_some());
    }
    // Tables of their own: the H100's are not the A100's.
    let a100 = &c.gpu("a100-80gb").unwrap().efficiency;
    assert_ne!(c.gpu("h100-80gb").unwrap().efficiency.matrix, a100.matrix);
    assert_eq!(c.gpu("a100-80gb").unwrap().fp8_tflops, None);
}
