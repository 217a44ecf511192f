//! Unit tests of the fp8 cost rules and `head_dim` that need the crate's internals (the
//! roofline `Machine`, model validation); the rest of the precision rules are checked through
//! the library's surface in the integration suite (`tests/suite/engine_precision.rs`).

use crate::anatomy::cost::Machine;
use crate::anatomy::{Anatomy, Block};
use crate::scenario::validate_model;
use crate::scenario::{Catalog, Precision, Scenario, ScenarioOverrides};

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
fn fp8_runs_the_layer_gemms_at_the_fp8_peak_and_the_rest_in_bf16() {
    let sc = scenario("llama3.1-8b", "h100-80gb", 2, 4096, true, Precision::Fp8);
    let (bf, f8) = both("llama3.1-8b", 2, 4096, true);
    let m = Machine::new(&sc.gpu, 2);
    let (tokens, h, f2) = (4096.0, 4096.0, 14336.0);
    // gate_up: [tokens, h] x [h, 2f/t] forward; input gradient with the output gradient's
    // cast and transpose (4 bytes an element); weight gradient with the saved input's
    // transpose (2 bytes an element).
    let gate_up = f8.mlp.unit("gate_up").unwrap();
    assert_eq!(gate_up.forward_s, m.gemm_fp8(tokens, h, f2).s);
    let backward = m.gemm_fp8(tokens, f2, h).s
        + m.mem(4.0 * tokens * f2).s
        + m.gemm_fp8(h, tokens, f2).s
        + m.mem(2.0 * tokens * h).s;
    assert!((gate_up.backward_s - backward).abs() < 1e-15);
    assert!(gate_up.forward_s < 0.6 * bf.mlp.unit("gate_up").unwrap().forward_s);
    // FlashAttention stays bf16: the same kernel, plus the out-projection input's cast.
    let (c16, c8) = (
        bf.attention.unit("core_attn").unwrap(),
        f8.attention.unit("core_attn").unwrap(),
    );
    assert_eq!(c8.backward_s, c16.backward_s);
    let cast = m.mem(4.0 * tokens * 2048.0).s;
    assert!((c8.forward_s - c16.forward_s - cast).abs() < 1e-15);
    // Norms, the embedding and the output layer run as in bf16.
    assert_eq!(
        bf.attention.unit("norm_out").unwrap().forward_s,
        f8.attention.unit("norm_out").unwrap().forward_s
    );
    assert_eq!(bf.head.forward_s, f8.head.forward_s);
    assert_eq!(bf.embedding.backward_w_s, f8.embedding.backward_w_s);
}

#[test]
fn head_dim_sets_every_attention_size() {
    // A Qwen3-like shape: 64 heads of 128 on hidden 5120 (a d = 8192 > h), 8 kv heads.
    let c = Catalog::builtin();
    let mut m = c.model("llama3.1-8b").unwrap().clone();
    (m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn) = (5120, 64, 8, Some(128), 25600);
    validate_model(&m).unwrap();
    let mut s = scenario("llama3.1-8b", "h100-80gb", 8, 4096, true, Precision::Bf16);
    s.model = m.clone();
    let a = Anatomy::build(&s).unwrap();
    let (sb, t, q, kv, h) = (4096u64, 8u64, 64 * 128u64, 8 * 128u64, 5120u64);
    assert_eq!(size(&a.attention, "q"), 2 * sb * q / t);
    assert_eq!(size(&a.attention, "k"), 2 * sb * kv / t);
    assert_eq!(
        size(&a.attention, "core_attn"),
        2 * sb * q / t + 4 * (64 / t) * sb
    );
    let core = a.attention.unit("core_attn").unwrap();
    assert_eq!(
        core.forward_flops,
        2.0 * (64 / t) as f64 * (sb * sb) as f64 * 128.0
    );
    assert_eq!(a.attention.params, (h * (q + 2 * kv) + q * h) / t + h);
    // Without head_dim the head width is hidden / heads, which must then be whole.
    m.head_dim = None;
    m.hidden = 5000;
    let err = validate_model(&m).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.contains("model.hidden") && err.contains("model.heads"),
        "{err}"
    );
    m.hidden = 8192;
    assert_eq!(m.head_dim(), 128);
    m.head_dim = Some(0);
    let err = validate_model(&m).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("model.head_dim"), "{err}");
}
