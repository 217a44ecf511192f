//! The anatomy against closed forms: Korthikanti et al.'s per-layer activation formulas
//! (docs/model.md) reproduced exactly from the units, the FlashAttention and Llama
//! forms of costmodel.md 2.3.2-2.3.3, parameter totals against published sizes, static
//! memory per block, and the B/W split and compression fields.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pipescope::{Anatomy, Block, Catalog, MeasuredProfile, Scenario, ScenarioOverrides};

fn scenario(model: &str, s: u64, b: u64, t: u32, sp: bool, flash: bool) -> Scenario {
    let c = Catalog::builtin();
    let mut sc = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        seq_len: Some(s),
        micro_batch_size: Some(b),
        tp: Some(t),
        pp: Some(1),
        sp: Some(sp),
        flash: Some(flash),
        ..Default::default()
    }
    .apply(&mut sc, &c)
    .unwrap();
    sc
}

fn sum(block: &Block, keep: impl Fn(&pipescope::Unit) -> bool) -> u64 {
    block
        .units
        .iter()
        .filter(|u| keep(u))
        .map(|u| u.size_bytes)
        .sum()
}

/// Per-layer bytes: (everything kept, selective = core attention dropped, full = the
/// attention block's input only).
fn layer(a: &Anatomy) -> (u64, u64, u64) {
    let all = a.attention.all_units_bytes() + a.mlp.all_units_bytes();
    let sel = sum(&a.attention, |u| !u.core_attention) + sum(&a.mlp, |u| !u.core_attention);
    let full = a.attention.forced_bytes();
    (all, sel, full)
}

/// Korthikanti's Table 2 in exact integers: (no parallelism, TP, TP+SP, TP+selective,
/// TP+SP+selective), bytes per layer.
fn korthikanti(s: u64, b: u64, h: u64, a: u64, t: u64) -> [u64; 5] {
    let sbh = s * b * h;
    let sq = 5 * a * s * s * b; // 5as^2 b
    [
        34 * sbh + sq,
        10 * sbh + 24 * sbh / t + sq / t,
        (34 * sbh + sq) / t,
        10 * sbh + 24 * sbh / t,
        34 * sbh / t,
    ]
}

fn check_korthikanti(model: &str, s: u64, b: u64, h: u64, a: u64, t: u32) {
    let k = korthikanti(s, b, h, a, u64::from(t));
    let none = Anatomy::build(&scenario(model, s, b, 1, false, false)).unwrap();
    assert_eq!(layer(&none).0, k[0], "{model} no parallelism");
    let tp = Anatomy::build(&scenario(model, s, b, t, false, false)).unwrap();
    assert_eq!(layer(&tp).0, k[1], "{model} TP");
    assert_eq!(layer(&tp).1, k[3], "{model} TP + selective");
    assert_eq!(layer(&tp).2, 2 * s * b * h, "{model} full recompute, no SP");
    let sp = Anatomy::build(&scenario(model, s, b, t, true, false)).unwrap();
    assert_eq!(layer(&sp).0, k[2], "{model} TP + SP");
    assert_eq!(layer(&sp).1, k[4], "{model} TP + SP + selective");
    assert_eq!(
        layer(&sp).2,
        2 * s * b * h / u64::from(t),
        "{model} full, SP"
    );
}

#[test]
fn gpt3_175b_reproduces_korthikanti_table_2() {
    check_korthikanti("gpt3-175b", 2048, 1, 12288, 96, 8);
    // The derived values of adapipe.md 2.1.
    let k = korthikanti(2048, 1, 12288, 96, 8);
    assert_eq!(
        k,
        [
            2_868_903_936,
            578_813_952,
            358_612_992,
            327_155_712,
            106_954_752
        ]
    );
}

#[test]
fn megatron_22b_reproduces_korthikanti_table_2() {
    check_korthikanti("megatron-22b", 2048, 4, 6144, 64, 8);
}

#[test]
fn flash_attention_gpt_layer_is_34sbh_plus_lse() {
    let (s, b, h, a, t) = (2048u64, 1u64, 12288u64, 96u64, 8u64);
    let an = Anatomy::build(&scenario("gpt3-175b", s, b, 8, true, true)).unwrap();
    assert_eq!(layer(&an).0, 34 * s * b * h / t + 4 * a * s * b / t);
    // Selective with FlashAttention drops core_attn: output + lse.
    assert_eq!(
        layer(&an).0 - layer(&an).1,
        2 * s * b * h / t + 4 * a * s * b / t
    );
}

#[test]
fn llama_layer_matches_costmodel_2_3_3() {
    // Layer = sbh (12 + 4g) + 6 sbf + 4 asb, all divided by t with SP (rstd ignored).
    for (model, h, a, k, f) in [
        ("llama2-70b", 8192u64, 64u64, 8u64, 28672u64),
        ("llama3-8b", 4096, 32, 8, 14336),
        ("llama2-7b", 4096, 32, 32, 11008),
    ] {
        let (s, b, t) = (4096u64, 1u64, 8u64);
        let an = Anatomy::build(&scenario(model, s, b, 8, true, true)).unwrap();
        let sbh = s * b * h;
        let want = (12 * sbh + 4 * sbh * k / a + 6 * s * b * f + 4 * a * s * b) / t;
        assert_eq!(layer(&an).0, want, "{model}");
    }
    // costmodel.md 2.3.3: Llama-2 70B, s 4096, b 1, t 8, SP: 134.1 MiB per layer with the
    // fp32 rstd of the two norms (8sb/t); pipescope does not count the rstd.
    let an = Anatomy::build(&scenario("llama2-70b", 4096, 1, 8, true, true)).unwrap();
    let mib = (layer(&an).0 + 8 * 4096 / 8) as f64 / (1u64 << 20) as f64;
    assert!((mib - 134.1).abs() < 0.05, "{mib}");
}

#[test]
fn parameter_totals_match_published_sizes() {
    let c = Catalog::builtin();
    for (name, published) in [
        ("gpt3-175b", 174.6e9),
        ("megatron-22b", 22.0e9),
        ("mt-nlg-530b", 529.6e9),
        ("megatron-1t", 1008.0e9),
        ("llama2-7b", 6.74e9),
        ("llama2-13b", 13.02e9),
        ("llama2-70b", 68.98e9),
        ("llama3-8b", 8.03e9),
        ("llama3-70b", 70.55e9),
        ("llama3-405b", 405.85e9),
        ("gpt-9.6b", 9.6e9),
        ("gpt-21b", 21.0e9),
        ("gpt-38.5b", 38.5e9),
        ("gpt-98.5b", 98.5e9),
    ] {
        let n = c.model(name).unwrap().parameters() as f64;
        let err = (n - published) / published;
        assert!(err.abs() < 0.005, "{name}: {n} vs {published} ({err:+.4})");
    }
}

#[test]
fn static_memory_per_block() {
    // GPT-3 175B, t 8: attention 4h^2 + 4h (+ biases) split over t, norms whole; 18 B/param.
    let sc = scenario("gpt3-175b", 2048, 1, 8, true, false);
    let a = Anatomy::build(&sc).unwrap();
    let h = 12288u64;
    assert_eq!(a.attention.params, (4 * h * h + 3 * h) / 8 + 3 * h);
    assert_eq!(a.attention.static_bytes, 18 * a.attention.params);
    assert_eq!(a.mlp.params, (8 * h * h + 4 * h) / 8 + 3 * h);
    // Embedding: padded vocabulary 51200 at t 8, positions whole.
    assert_eq!(a.embedding.params, 51200 * h / 8 + 2048 * h);
    // Tied embeddings on one stage: the head holds only the final norm.
    assert_eq!(a.head.params, 2 * h);
    // With p > 1 the last stage keeps a copy of the embedding (Megatron).
    let mut sc8 = sc.clone();
    sc8.parallel.pp = 8;
    let a8 = Anatomy::build(&sc8).unwrap();
    assert_eq!(a8.head.params, 51200 * h / 8 + 2 * h);
    // Distributed optimizer over d = 4: 6 + 12/4 = 9 bytes per parameter.
    sc8.parallel.distributed_optimizer = true;
    sc8.parallel.dp = 4;
    let a9 = Anatomy::build(&sc8).unwrap();
    assert_eq!(a9.attention.static_bytes, 9 * a9.attention.params);
}

#[test]
fn outer_blocks_and_transients() {
    let (s, b, h, t) = (2048u64, 1u64, 12288u64, 8u64);
    let a = Anatomy::build(&scenario("gpt3-175b", s, b, 8, true, false)).unwrap();
    // Embedding: int64 token ids (not sharded) and the dropout mask (sequence shard).
    assert_eq!(a.embedding.unit("tokens").unwrap().size_bytes, 8 * s * b);
    assert_eq!(
        a.embedding.unit("dropout_mask").unwrap().size_bytes,
        s * b * h / t
    );
    // Head: final norm input and output-projection input, 2sbh/t each with SP.
    assert_eq!(a.head.all_units_bytes(), 4 * s * b * h / t);
    // Logits: bf16 + fp32 copy + fp32 gradient of sbV/t.
    assert_eq!(a.logits_transient_bytes, 10 * s * b * 51200 / t);
    assert_eq!(a.p2p_bytes, 2 * s * b * h / t);
}

#[test]
fn times_split_and_add_up() {
    let a = Anatomy::build(&scenario("gpt3-175b", 2048, 1, 8, true, false)).unwrap();
    for block in [&a.embedding, &a.attention, &a.mlp, &a.head] {
        let units_fwd: f64 = block.units.iter().map(|u| u.forward_s).sum();
        assert!(units_fwd <= block.forward_s + 1e-12, "{:?}", block.kind);
        assert!(block.backward_b_s >= 0.0 && block.backward_w_s >= 0.0);
        for u in &block.units {
            assert!(u.forward_s >= 0.0 && u.backward_s >= 0.0 && u.codec_s >= 0.0);
            assert!(u.compressed_bytes <= u.size_bytes, "{}", u.name);
            if u.forced {
                assert_eq!(u.forward_s, 0.0);
            }
        }
    }
    // The weight gradient needs the GEMM inputs.
    let w: Vec<&str> = a
        .attention
        .units
        .iter()
        .chain(&a.mlp.units)
        .filter(|u| u.needed_by_w)
        .map(|u| u.name.as_str())
        .collect();
    assert_eq!(w, ["ln_out", "context", "ln_out", "gelu_out"]);
    // Backward of a GEMM is twice its forward: the MLP's W roughly equals its GEMM forward.
    assert!(a.mlp.backward_w_s > 0.5 * a.mlp.forward_s);
    // 8-bit compression with fp32 scales per 128 values: n + 4 ceil(n/128) bytes.
    let q = a.attention.unit("q").unwrap();
    let n = q.size_bytes / 2;
    assert_eq!(q.compressed_bytes, n + 4 * n.div_ceil(128));
    // Masks are not compressed.
    let m = a.mlp.unit("out_dropout_mask").unwrap();
    assert_eq!(m.compressed_bytes, m.size_bytes);
}

const PROFILE: &str = r#"
source = "example: A100 80GB"
[attention]
forward_s = 0.010
backward_s = 0.020
[attention.q]
forward_s = 0.001
backward_s = 0.002
size_bytes = 1000
[mlp.gelu_out]
forward_s = 0.0005
backward_s = 0.0007
"#;

#[test]
fn measured_profile_replaces_estimates() {
    let profile = MeasuredProfile::from_toml_str("p.toml", PROFILE).unwrap();
    let mut sc = scenario("gpt3-175b", 2048, 1, 8, true, false);
    let before = Anatomy::build(&sc).unwrap();
    sc.profile = Some(profile);
    let a = Anatomy::build(&sc).unwrap();
    assert_eq!(a.attention.forward_s, 0.010);
    assert!((a.attention.backward_s() - 0.020).abs() < 1e-15);
    // B/W split kept in the cost model's proportion.
    let share = before.attention.backward_b_s / before.attention.backward_s();
    assert!((a.attention.backward_b_s / 0.020 - share).abs() < 1e-12);
    let q = a.attention.unit("q").unwrap();
    assert_eq!(
        (q.forward_s, q.backward_s, q.size_bytes),
        (0.001, 0.002, 1000)
    );
    assert_eq!(a.mlp.unit("gelu_out").unwrap().forward_s, 0.0005);
    // Unlisted figures stay estimates.
    assert_eq!(a.mlp.forward_s, before.mlp.forward_s);
    // A scenario with a profile round-trips through to_toml.
    let text = pipescope::to_toml(&sc);
    let back = Catalog::empty()
        .scenario_from_text("x.toml", &text)
        .unwrap();
    assert_eq!(back, sc);
}

#[test]
fn profile_errors_name_the_key() {
    let e =
        MeasuredProfile::from_toml_str("p.toml", "[atention]\nforward_s = 1.0\nbackward_s = 1.0\n")
            .unwrap_err();
    assert!(e.to_string().contains("did you mean 'attention'"), "{e}");
    // An unknown table is pointed at: file:line:column of its name in its header.
    assert!(e.to_string().starts_with("p.toml:1:2: "), "{e}");
    let e =
        MeasuredProfile::from_toml_str("p.toml", "[mlp.gelu]\nforward_s = 1.0\nbackward_s = 1.0\n")
            .unwrap_err();
    assert!(e.to_string().contains("gelu_out"), "{e}");
    assert!(e.to_string().starts_with("p.toml:1:2: "), "{e}");
    let text = "source = \"x\"\n[attention]\nforward_s = 1.0\nbackward_s = 1.0\n\n[ attention.qq ]\nforward_s = 1.0\nbackward_s = 1.0\n";
    let e = MeasuredProfile::from_toml_str("p.toml", text).unwrap_err();
    assert!(e.to_string().starts_with("p.toml:6:3: "), "{e}");
    assert!(e.to_string().contains("did you mean 'q'"), "{e}");
    // A short name for a block kind is suggested in full, with the table's position.
    let text = "source = \"x\"\n[attn]\nforward_s = 1.0\nbackward_s = 1.0\n";
    let e = MeasuredProfile::from_toml_str("p.toml", text).unwrap_err();
    assert!(e.to_string().starts_with("p.toml:2:2: "), "{e}");
    assert!(e.to_string().contains("did you mean 'attention'"), "{e}");
    let e = MeasuredProfile::from_toml_str("p.toml", "[mlp]\nforward_s = -1.0\nbackward_s = 1.0\n")
        .unwrap_err();
    assert!(e.to_string().contains("profile.mlp.forward_s"), "{e}");
}

/// A GPU preset's `[gpu.codec]` (Adacc-style 4-bit values, a scale per 64, a measured
/// throughput) sets every unit's compressed size and codec time; a profile's `[codec]`
/// replaces it; 1-byte masks never shrink; bad values name the key.
#[test]
fn the_codec_is_a_gpu_and_profile_setting() {
    let mut c = Catalog::builtin();
    let gpu = "[gpu]\nname = \"a100-4bit\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n\
               [gpu.codec]\nbits = 4\ngroup = 64\ngbps = 500\n";
    c.add_text("gpus/a100-4bit.toml", gpu).unwrap();
    let mut sc = scenario("gpt3-175b", 2048, 1, 8, true, true);
    let eight = Anatomy::build(&sc).unwrap();
    ScenarioOverrides {
        gpu: Some("a100-4bit".into()),
        ..Default::default()
    }
    .apply(&mut sc, &c)
    .unwrap();
    let four = Anatomy::build(&sc).unwrap();
    // `v` takes the plain 4-bit codec; `q`, outlier-sensitive, may not (it keeps its size).
    let q = four.attention.unit("v").unwrap();
    let n = q.size_bytes / 2;
    assert_eq!(q.compressed_bytes, n / 2 + 4 * n.div_ceil(64));
    assert!((q.codec_s - 2.0 * q.size_bytes as f64 / 500e9).abs() < 1e-15);
    let sensitive = four.attention.unit("q").unwrap();
    assert_eq!(sensitive.compressed_bytes, sensitive.size_bytes);
    assert_eq!(sensitive.codecs, vec![None]);
    let q8 = eight.attention.unit("v").unwrap();
    assert_eq!(q8.compressed_bytes, n + 4 * n.div_ceil(128));
    for block in [&four.attention, &four.mlp] {
        let mask = block.unit("out_dropout_mask").unwrap();
        assert_eq!(mask.compressed_bytes, mask.size_bytes);
        assert_eq!(mask.codec_s, 0.0);
    }
    // A profile's codec wins over the GPU's.
    let profile = "source = \"x\"\n[codec]\nbits = 6\ngroup = 0\n";
    sc.profile = Some(pipescope::MeasuredProfile::from_toml_str("p.toml", profile).unwrap());
    let six = Anatomy::build(&sc).unwrap();
    let q6 = six.attention.unit("v").unwrap();
    assert_eq!(q6.compressed_bytes, 3 * n / 4);
    // Bad values are refused, naming the key and what is allowed.
    for (good, bad, key) in [
        ("bits = 4", "bits = 16", "gpu.codec.bits"),
        ("gbps = 500", "gbps = -1", "gpu.codec.gbps"),
    ] {
        let text = gpu.replace(good, bad);
        let e = c.add_text("gpus/bad.toml", &text).unwrap_err().to_string();
        assert!(e.contains(key), "{e}");
    }
    let e = pipescope::MeasuredProfile::from_toml_str("p.toml", "[codec]\nbits = 0\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("profile.codec.bits") && e.contains("1 to 15"),
        "{e}"
    );
}

/// The tensor-parallel collectives exposed inside each layer block's backward (what Lynx
/// hides recomputation under). Megatron's column-parallel linear overlaps its backward
/// collectives with its GEMMs, so at GPT-3's shapes only the row-parallel output's gather
/// (SP) stays exposed in B; the re-gather (W) and, without SP, the input gradient's
/// all-reduce run under GEMMs that outlast them. With t = 1 there are none.
#[test]
fn backward_collectives_are_counted_per_block() {
    let sp = Anatomy::build(&scenario("gpt3-175b", 2048, 1, 8, true, true)).unwrap();
    for b in [&sp.attention, &sp.mlp] {
        assert!(b.backward_b_comm_s > 0.0);
        assert_eq!(b.backward_w_comm_s, 0.0);
        assert!(b.backward_b_comm_s < b.backward_b_s);
    }
    let no_sp = Anatomy::build(&scenario("gpt3-175b", 2048, 1, 8, false, true)).unwrap();
    assert_eq!(no_sp.attention.backward_b_comm_s, 0.0);
    assert_eq!(no_sp.attention.backward_w_comm_s, 0.0);
    let one = Anatomy::build(&scenario("gpt3-175b", 2048, 1, 1, false, true)).unwrap();
    assert_eq!(one.attention.backward_b_comm_s, 0.0);
    assert_eq!(one.mlp.backward_b_comm_s, 0.0);
}
