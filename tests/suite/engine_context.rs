//! Context parallelism rule by rule (docs/model.md, "Context parallelism"): each rank keeps
//! and computes `1/cp` of every sequence, core attention runs as Transformer Engine's ring
//! (cp steps of one `s/cp` causal attention each) and only the K/V exchange its kernels do
//! not hide is added, the gradient reduction runs over `d x cp`, GPUs count `t x cp x p x d`
//! and tokens count once, and the refusals name the flag, the value and the rule.

use pipescope::{Anatomy, Block, Catalog, Scenario, ScenarioOverrides, solve};

use super::cli_common::pipescope;

/// Llama 3.1 8B on H100s: `t` with SP, `cp`, sequence `s`, one stage, micro-batch 1.
fn scenario(t: u32, cp: u32, s: u64) -> Scenario {
    let c = Catalog::builtin();
    let mut sc = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some("llama3.1-8b".into()),
        gpu: Some("h100-80gb".into()),
        tp: Some(t),
        pp: Some(1),
        dp: Some(1),
        cp: Some(cp),
        sp: Some(t > 1),
        seq_len: Some(s),
        micro_batch_size: Some(1),
        micro_batches: Some(4),
        flash: Some(true),
        reserve_gib: Some(0.0),
        ..Default::default()
    }
    .apply(&mut sc, &c)
    .unwrap();
    sc
}

fn sizes(b: &Block) -> Vec<(String, u64)> {
    b.units
        .iter()
        .map(|u| (u.name.clone(), u.size_bytes))
        .collect()
}

#[test]
fn cp_2_halves_a_layers_activations_exactly() {
    for t in [1, 2, 4] {
        let one = Anatomy::build(&scenario(t, 1, 8192)).unwrap();
        let two = Anatomy::build(&scenario(t, 2, 8192)).unwrap();
        assert_eq!(2 * two.layer_bytes(), one.layer_bytes(), "t {t}");
        for (a, b) in [(&one.attention, &two.attention), (&one.mlp, &two.mlp)] {
            for ((name, x), (_, y)) in sizes(a).into_iter().zip(sizes(b)) {
                assert_eq!(x, 2 * y, "t {t}: {name}");
            }
        }
        // What a stage sends to the next is the rank's share too.
        assert_eq!(one.p2p_bytes, 2 * two.p2p_bytes);
        // Each rank does half of the layer's work: its linear layers on half the tokens,
        // half of the causal attention (Megatron's MFU convention counts it once).
        for (a, b) in [(&one.attention, &two.attention), (&one.mlp, &two.mlp)] {
            let (x, y) = (a.model_forward_flops, b.model_forward_flops);
            assert!((x - 2.0 * y).abs() <= 1e-9 * x, "t {t}: {x} vs {y}");
        }
    }
}

#[test]
fn a_rank_runs_the_layers_of_its_tokens_and_cp_ring_steps() {
    // cp 4 over 8192 tokens: each rank holds 2048 tokens, as cp 1 over 2048 does.
    let ring = Anatomy::build(&scenario(1, 4, 8192)).unwrap();
    let local = Anatomy::build(&scenario(1, 1, 2048)).unwrap();
    // The MLP sees the same tokens: the same block, to the bit.
    assert_eq!(ring.mlp.forward_s, local.mlp.forward_s);
    assert_eq!(ring.mlp.backward_b_s, local.mlp.backward_b_s);
    // Core attention: four steps, each the FLOPs of one causal attention of 2048 tokens (the
    // diagonal that kernel itself, the three others unmasked kernels at the unmasked rate),
    // plus what the exchange adds and the output corrections: memory-bound passes over the
    // output (fp32 accumulation: 6 + 3 x 3/4 x 10 + 6 bytes an element of 2048 x 4096) and
    // the log-sum-exp (3 x 12 bytes of 32 heads x 2048), at no less than a fifth of the HBM.
    let step = local.attention.unit("core_attn").unwrap();
    let core = ring.attention.unit("core_attn").unwrap();
    let exposed = ring.attention.cp_comm;
    let (off_f, _) = unmasked_over_causal(&scenario(1, 4, 8192));
    assert!(off_f < 1.0, "unmasked kernels run faster: {off_f}");
    let steps = step.forward_s * (1.0 + 3.0 * off_f);
    let fix = core.forward_s - steps - exposed.forward_added_s;
    let bytes = 2048.0 * 4096.0 * (12.0 + 22.5) + 36.0 * 32.0 * 2048.0;
    assert!(fix > 0.0 && fix <= bytes / (0.2 * 3350e9), "{fix}");
    assert!((core.forward_flops - 4.0 * step.forward_flops).abs() <= 1e-6 * core.forward_flops);
    // The rank keeps exactly the tensors of its own tokens.
    assert_eq!(sizes(&ring.attention), sizes(&local.attention));
}

/// The time of an unmasked ring step over that of the causal diagonal one (forward,
/// backward), for 2048 tokens a rank and heads of 128 (both math-bound): the ratio of the
/// GPU's causal to unmasked attention efficiencies at one pair's FLOPs.
fn unmasked_over_causal(s: &Scenario) -> (f64, f64) {
    let eff = &s.gpu.efficiency;
    let pair = 2.0 * 2048.0 * 2048.0 * 128.0;
    (
        eff.attention_at(pair, 0.0) / eff.attention_unmasked_at(pair, 0.0),
        eff.attention_backward_at(2.5 * pair, 0.0)
            / eff.attention_unmasked_backward_at(2.5 * pair, 0.0),
    )
}

/// The K/V exchange by hand: `U` = the rank's K and V in bf16 over the ring's link; the
/// forward hides the send of step i + 1 under step i's kernel (the first under the causal
/// diagonal, the others under unmasked ones), the backward hides each step's send (K and V
/// with the gradient, 2U, except at the ends) only under its own.
#[test]
fn the_kv_exchange_adds_only_what_the_kernels_do_not_hide() {
    for (cp, link_gbps) in [(2u32, 450.0), (4, 450.0), (4, 0.5), (8, 0.2)] {
        let mut ring = scenario(1, cp, 2048 * u64::from(cp));
        let mut local = scenario(1, 1, 2048);
        for s in [&mut ring, &mut local] {
            s.gpu.link_gbps = link_gbps;
        }
        let a = Anatomy::build(&ring).unwrap();
        let step = Anatomy::build(&local).unwrap();
        let core = step.attention.unit("core_attn").unwrap();
        let (f, b) = (core.forward_s, core.backward_s);
        // Llama 3.1 8B: 8 kv heads of 128 at t 1; 2048 tokens per rank.
        let bytes = 2.0 * 2048.0 * 1024.0 * 2.0;
        let u = bytes / (link_gbps * 1e9 * ring.gpu.efficiency.link);
        let n = f64::from(cp);
        let c = a.attention.cp_comm;
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.max(1e-12);
        assert!(close(c.forward_s, (n - 1.0) * u), "cp {cp}");
        assert!(close(c.backward_s, 2.0 * (n - 1.0) * u), "cp {cp}");
        let (rf, rb) = unmasked_over_causal(&ring);
        let (fo, bo) = (f * rf, b * rb);
        let fwd = (u - f).max(0.0) + (n - 2.0) * (u - fo).max(0.0);
        let bwd = (u - b).max(0.0) + (u - bo).max(0.0) + (n - 2.0) * (2.0 * u - bo).max(0.0);
        assert!(close(c.forward_added_s, fwd) || fwd == 0.0 && c.forward_added_s == 0.0);
        assert!(close(c.backward_added_s, bwd) || bwd == 0.0 && c.backward_added_s == 0.0);
        if link_gbps < 1.0 {
            assert!(
                c.forward_added_s > 0.0 && c.backward_added_s > 0.0,
                "cp {cp}"
            );
        } else {
            // On NVLink the exchange hides under the attention steps.
            assert_eq!(c.added_s(), 0.0, "cp {cp}");
        }
        // No other block exchanges anything.
        assert_eq!(a.mlp.cp_comm.added_s(), 0.0);
    }
}

#[test]
fn the_ring_crosses_nodes_where_megatrons_rank_order_puts_it() {
    // t 4 x cp 2 = 8 ranks: one node (NVLink); t 8 x cp 2: two nodes (the network).
    let near = Anatomy::build(&scenario(4, 2, 8192)).unwrap();
    let far = Anatomy::build(&scenario(8, 2, 8192)).unwrap();
    let gpu = Catalog::builtin().gpu("h100-80gb").unwrap().clone();
    let eff = gpu.efficiency.link;
    // One forward send of the rank's K and V: 4096 tokens x (8 kv heads x 128 / t) x 2 x 2.
    let u = |t: f64| 2.0 * 4096.0 * (1024.0 / t) * 2.0;
    let near_s = u(4.0) / (gpu.link_gbps * 1e9 * eff);
    let far_s = u(8.0) / (gpu.inter_node_gbps * 1e9 * gpu.efficiency.network_link());
    assert!((near.attention.cp_comm.forward_s - near_s).abs() < 1e-12);
    assert!((far.attention.cp_comm.forward_s - far_s).abs() < 1e-12);
}

#[test]
fn the_gradient_reduction_runs_over_d_times_cp_and_tokens_count_once() {
    let job = |d: u32, cp: u32| {
        let mut s = scenario(2, cp, 8192);
        s.parallel.dp = d;
        s.plan.overlap_grad_reduce = false;
        solve(&s).unwrap()
    };
    // d 2 x cp 2 reduces over the same four ranks (t apart) as d 4: the same collective.
    let (a, b) = (job(2, 2), job(4, 1));
    assert!(a.time_breakdown_s.dp_comm > 0.0);
    assert!(
        (a.time_breakdown_s.dp_comm - b.time_breakdown_s.dp_comm).abs()
            <= 1e-9 * b.time_breakdown_s.dp_comm
    );
    // GPUs t x cp x p x d; each token of the global batch (m x b x d sequences) once.
    assert_eq!(a.gpus, 8);
    assert_eq!((a.tp, a.cp, a.pp, a.dp), (2, 2, 1, 2));
    assert_eq!(a.global_batch, 4 * 2);
    let tokens = (a.global_batch * 8192) as f64;
    assert!((a.tokens_per_s * a.iteration_time_s - tokens).abs() < 1e-6 * tokens);
    assert!((a.tokens_per_s_per_gpu * a.gpus as f64 - a.tokens_per_s).abs() < 1e-6 * tokens);
}

#[test]
fn the_exposed_exchange_is_cp_comm_in_the_breakdown() {
    let mut s = scenario(1, 4, 8192);
    s.gpu.link_gbps = 0.5;
    let o = solve(&s).unwrap();
    let b = o.time_breakdown_s;
    assert!(b.cp_comm > 0.0);
    assert!((b.total() - o.iteration_time_s).abs() <= 1e-9 * o.iteration_time_s);
    // m micro-batches, each layer's attention: its forward and backward exchange.
    let a = Anatomy::build(&s).unwrap();
    let want = 4.0 * f64::from(a.layers) * a.attention.cp_comm.added_s();
    assert!(
        (b.cp_comm - want).abs() <= 1e-9 * want,
        "{} vs {want}",
        b.cp_comm
    );
    // And `plan --json` says so.
    let (ok, out, err) = pipescope(&[
        "plan",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-t",
        "2",
        "--sp",
        "-p",
        "1",
        "--cp",
        "2",
        "-s",
        "8192",
        "-m",
        "2",
        "--strategy",
        "none",
        "--reserve-gib",
        "0",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cp"], 2);
    assert_eq!(v["zero"], 0);
    assert_eq!(v["precision"], "bf16");
    assert_eq!(v["gpus"], 4);
    assert!(v["time_breakdown_s"]["cp_comm"].is_number());
    // The text form's first line gives the job as t x cp x p x d.
    let (ok, out, err) = pipescope(&[
        "plan",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-t",
        "2",
        "--sp",
        "-p",
        "1",
        "--cp",
        "2",
        "-s",
        "8192",
        "-m",
        "2",
        "--strategy",
        "none",
        "--reserve-gib",
        "0",
    ]);
    assert!(ok, "{err}");
    let head = out.lines().next().unwrap_or_default();
    assert!(head.contains("on 4 GPUs (t2 x cp2 x p1 x d1)"), "{head}");
}

#[test]
fn refusals_name_the_flag_the_value_and_the_rule() {
    let base = [
        "plan",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-p",
        "1",
        "--json",
    ];
    let refused = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (ok, _, err) = pipescope(&args);
        assert!(!ok, "{extra:?} accepted");
        err
    };
    // s a multiple of 2 cp.
    let err = refused(&["--cp", "3", "-t", "1", "-s", "8188"]);
    assert!(
        err.contains("-s/--seq") && err.contains("8188") && err.contains("2 x parallel.cp"),
        "{err}"
    );
    // Ring attention runs on the fused attention kernels.
    let err = refused(&["--cp", "2", "-s", "8192", "--no-flash"]);
    assert!(
        err.contains("--cp") && err.contains("FlashAttention"),
        "{err}"
    );
    // Out of range.
    let err = refused(&["--cp", "0"]);
    assert!(err.contains("--cp") && err.contains("from 1"), "{err}");
    // Too large for the flag's type: the same range, not "written in digits".
    for value in ["99999999999", "-2", "65537"] {
        let err = refused(&["--cp", value]);
        assert!(
            err.contains("--cp") && err.contains(value) && err.contains("from 1 to 65536"),
            "{err}"
        );
    }
    // A stage or format that does not exist names the ones that do.
    let err = refused(&["--zero", "2"]);
    assert!(err.contains("--zero") && err.contains("0, 1, 3"), "{err}");
    let err = refused(&["--precision", "fp4"]);
    assert!(
        err.contains("--precision") && err.contains("bf16, fp8"),
        "{err}"
    );
    // With SP, each rank's s / cp tokens split over t.
    let err = refused(&["--cp", "2", "-t", "8", "--sp", "-s", "8200"]);
    assert!(err.contains("-s/--seq") && err.contains("8200"), "{err}");
}
