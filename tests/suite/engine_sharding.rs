//! Sharding and the overlaps rule by rule (docs/model.md, "Sharding" and "Tensor
//! parallelism"): ZeRO-3's static bytes and gathered layers, its per-layer gathers and
//! reduce-scatters hidden under the layers' work, the distributed optimizer over `d x cp`,
//! `--overlap-param-gather` over the first forward, `--tp-comm-overlap`'s pipelined
//! collectives and the multiprocessors they take, and the refusals.

use pipescope::{
    Anatomy, Catalog, Lane, Scenario, ScenarioOverrides, SpanKind, Strategy, Zero, solve,
};

use super::cli_common::pipescope;

/// GPT-3 175B on A100s (the default preset: t 8, p 8, SP), with `o` on top.
fn scenario(o: ScenarioOverrides) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    ScenarioOverrides {
        strategy: Some(Strategy::Full),
        ..o
    }
    .apply(&mut s, &c)
    .unwrap();
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-9)
}

#[test]
fn zero_3_shards_everything_and_holds_two_gathered_layers() {
    let plain = scenario(ScenarioOverrides {
        dp: Some(4),
        cp: Some(2),
        seq_len: Some(16384),
        zero: Some(Zero::Off),
        ..Default::default()
    });
    let full = Scenario {
        parallel: {
            let mut p = plain.parallel;
            p.set_zero(Zero::Full);
            p
        },
        ..plain.clone()
    };
    let (a0, a3) = (
        Anatomy::build(&plain).unwrap(),
        Anatomy::build(&full).unwrap(),
    );
    // 18 bytes a parameter over the d x cp = 8 ranks of a stage.
    for (b0, b3) in [(&a0.attention, &a3.attention), (&a0.mlp, &a3.mlp)] {
        assert_eq!(b0.static_bytes, 18 * b0.params);
        assert_eq!(
            b3.static_bytes,
            (18.0 * b3.params as f64 / 8.0).round() as u64
        );
    }
    // The embedding and the output layer stay gathered: their bf16 weights whole.
    for (b0, b3) in [(&a0.embedding, &a3.embedding), (&a0.head, &a3.head)] {
        let shard = (18.0 * b3.params as f64 / 8.0).round() as u64;
        assert_eq!(b3.static_bytes, shard + 2 * b3.params, "{:?}", b0.kind);
    }
    // Two gathered layers in bf16 and one layer's fp32 gradient on every device.
    let layer = a3.attention.params + a3.mlp.params;
    assert_eq!(a0.device_bytes, 0);
    assert_eq!(a3.device_bytes, 2 * 2 * layer + 4 * layer);
    // The plan and the simulation hold them: static = the blocks' + the gathered layers,
    // split into weights, gradients and optimizer that add up.
    let o = solve(&full).unwrap();
    assert_eq!(o.zero, 3);
    for st in &o.stages {
        let blocks = u64::from(st.attention_blocks) * a3.attention.static_bytes
            + u64::from(st.mlp_blocks) * a3.mlp.static_bytes;
        assert!(st.static_bytes >= blocks + a3.device_bytes, "{st:?}");
        assert_eq!(
            st.weights_bytes + st.grads_bytes + st.optimizer_bytes,
            st.static_bytes
        );
        assert!(st.peak_memory_bytes >= st.static_bytes);
    }
}

#[test]
fn the_distributed_optimizer_shards_over_d_times_cp() {
    let s = scenario(ScenarioOverrides {
        dp: Some(2),
        cp: Some(2),
        seq_len: Some(16384),
        zero: Some(Zero::Optimizer),
        ..Default::default()
    });
    let a = Anatomy::build(&s).unwrap();
    // 2 + 4 + 12 / (d x cp = 4) bytes a parameter.
    assert_eq!(a.attention.static_bytes, 9 * a.attention.params);
    let o = solve(&s).unwrap();
    for st in &o.stages {
        let params = st.weights_bytes / 2;
        assert!(st.optimizer_bytes.abs_diff(3 * params) <= 1, "{st:?}");
    }
}

/// ZeRO-3's per-layer collectives over a slow network: each layer's gather is prefetched
/// under the layer before, so `max(0, AG - F)` of the forward and `max(0, AG + RS - (B + W))`
/// of the backward are added, shared by the layer's blocks in proportion to their weights.
#[test]
fn zero_3_adds_only_what_the_layers_work_does_not_hide() {
    for net in [25.0, 0.5] {
        let base = |zero| {
            let mut s = scenario(ScenarioOverrides {
                dp: Some(4),
                zero: Some(zero),
                overlap_grad_reduce: Some(true),
                ..Default::default()
            });
            s.gpu.inter_node_gbps = net;
            s
        };
        let (a1, a3) = (
            Anatomy::build(&base(Zero::Optimizer)).unwrap(),
            Anatomy::build(&base(Zero::Full)).unwrap(),
        );
        let (att, mlp) = (&a3.attention.dp_comm, &a3.mlp.dp_comm);
        let ag = att.forward_s + mlp.forward_s;
        let rs = att.backward_s + mlp.backward_s - ag;
        let f = a1.attention.forward_s + a1.mlp.forward_s;
        let bw = a1.attention.backward_s() + a1.mlp.backward_s();
        let fwd = (ag - f).max(0.0);
        let bwd = (ag + rs - bw).max(0.0);
        assert!(close(att.forward_added_s + mlp.forward_added_s, fwd) || fwd == 0.0);
        assert!(close(att.backward_added_s + mlp.backward_added_s, bwd) || bwd == 0.0);
        assert!(close(
            a3.attention.forward_s - a1.attention.forward_s,
            att.forward_added_s
        ));
        if net < 1.0 {
            assert!(fwd > 0.0 && bwd > 0.0, "a slow network shows through");
        }
        // The gather that opens each pass of a chunk hides under nothing.
        assert!(close(a3.pass_gather_s, ag));
        assert_eq!(a1.pass_gather_s, 0.0);
        // Each forward on the timeline is its blocks' forwards plus that gather; the gathers
        // and reduce-scatters are drawn on the comm lane inside the ops.
        let o = solve(&base(Zero::Full)).unwrap();
        let st = &o.stages[1];
        let f_span = o
            .simulation
            .timeline
            .spans
            .iter()
            .find(|x| x.device == 1 && x.kind == SpanKind::F)
            .unwrap();
        let want = f64::from(st.attention_blocks) * a3.attention.forward_s
            + f64::from(st.mlp_blocks) * a3.mlp.forward_s
            + a3.pass_gather_s;
        assert!(
            close(f_span.end - f_span.start, want),
            "{f_span:?} vs {want}"
        );
        let comm = |k| {
            o.simulation
                .timeline
                .spans
                .iter()
                .any(|x| x.lane == Lane::Comm && x.kind == k)
        };
        assert!(comm(SpanKind::Gather) && comm(SpanKind::Scatter));
        // In the breakdown they are data-parallel communication.
        assert!(o.time_breakdown_s.dp_comm > 0.0);
        let b = o.time_breakdown_s;
        assert!((b.total() - o.iteration_time_s).abs() <= 1e-9 * o.iteration_time_s);
    }
}

#[test]
fn overlapping_the_parameter_gather_hides_all_but_the_first_bucket() {
    let base = |overlap| {
        scenario(ScenarioOverrides {
            dp: Some(8),
            zero: Some(Zero::Optimizer),
            overlap_grad_reduce: Some(true),
            overlap_param_gather: Some(overlap),
            pp: Some(8),
            ..Default::default()
        })
    };
    let (off, on) = (solve(&base(false)).unwrap(), solve(&base(true)).unwrap());
    let (a, b) = (off.time_breakdown_s.dp_comm, on.time_breakdown_s.dp_comm);
    assert!(b < a, "{b} >= {a}");
    // Per device: the bf16 all-gather of its parameters, in Megatron's buckets
    // (max(40M, 1M x 8) parameters): the first bucket exposed, the rest under the first
    // micro-batch's forward.
    let job = on.simulation.job.as_ref().unwrap();
    let d = job.last_device as usize;
    let st = &on.stages[d];
    let n = st.weights_bytes / 2;
    let buckets = n.div_ceil(40_000_000) as f64;
    let gather = 0.875 * 2.0 * n as f64 / (25e9 * 0.75);
    let each = gather / buckets;
    let want = each + (buckets - 1.0) * (each - st.forward_s / buckets).max(0.0);
    let off_tail = off.simulation.job.as_ref().unwrap().devices[d].dp_comm;
    assert!(
        close(off_tail - job.devices[d].dp_comm, gather - want),
        "{off_tail} {} {gather} {want}",
        job.devices[d].dp_comm
    );
}

#[test]
fn tp_comm_overlap_hides_collectives_and_lends_multiprocessors() {
    // GPT-3 175B, t 8 with SP on A100s: the forward's gathers and reduce-scatters are
    // exposed without the overlap.
    let run = |overlap: bool, link: f64| {
        let mut s = scenario(ScenarioOverrides {
            tp_comm_overlap: Some(overlap),
            strategy: Some(Strategy::None),
            micro_batches: Some(8),
            seq_len: Some(2048),
            ..Default::default()
        });
        s.gpu.link_gbps = link;
        Anatomy::build(&s).unwrap()
    };
    // On a fast link the collectives were small already: the overlap costs the GEMMs the
    // 16 multiprocessors the pipelined reduce-scatter and the bulk collectives take.
    let (plain, over) = (run(false, 3000.0), run(true, 3000.0));
    assert!(over.mlp.tp_comm.added_s() > plain.mlp.tp_comm.added_s());
    // On a slow link the pipelined all-gathers hide what the GEMMs cover.
    let (plain, over) = (run(false, 30.0), run(true, 30.0));
    assert!(over.mlp.tp_comm.forward_added_s < plain.mlp.tp_comm.forward_added_s);
    assert!(over.attention.forward_s < plain.attention.forward_s);
    // What they keep on the link does not change.
    assert!(close(
        over.mlp.tp_comm.forward_s,
        plain.mlp.tp_comm.forward_s
    ));
}

#[test]
fn refusals_name_the_flag_the_value_and_the_rule() {
    let refused = |extra: &[&str]| {
        let mut args = vec!["plan", "--json"];
        args.extend_from_slice(extra);
        let (ok, _, err) = pipescope(&args);
        assert!(!ok, "{extra:?} accepted");
        err
    };
    let err = refused(&["--overlap-param-gather", "-d", "2", "--overlap-grad-reduce"]);
    assert!(
        err.contains("--overlap-param-gather") && err.contains("distributed optimizer"),
        "{err}"
    );
    let err = refused(&["--overlap-param-gather", "-d", "2", "--zero", "1"]);
    assert!(
        err.contains("--overlap-param-gather") && err.contains("--overlap-grad-reduce"),
        "{err}"
    );
    let err = refused(&["--tp-comm-overlap", "--no-sp"]);
    assert!(
        err.contains("--tp-comm-overlap") && err.contains("sequence parallelism"),
        "{err}"
    );
    let err = refused(&["--zero", "2"]);
    assert!(err.contains("--zero") && err.contains("0, 1, 3"), "{err}");
    let err = refused(&["--zero", "3", "--no-distributed-optimizer"]);
    assert!(
        err.contains("--distributed-optimizer") && err.contains("--zero) = 3"),
        "{err}"
    );
    let err = refused(&["--zero", "0", "--distributed-optimizer"]);
    assert!(
        err.contains("--distributed-optimizer) = true: false") && err.contains("--zero) = 0"),
        "{err}"
    );
    // The old switches are the stages they stand for.
    let (ok, out, err) = pipescope(&["plan", "--json", "-d", "2", "--distributed-optimizer"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["zero"], 1);
}

#[test]
fn presets_say_zero_or_the_old_switch_and_both_must_agree() {
    let dir = std::env::temp_dir().join(format!("pipescope-zero-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, parallel: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\nmodel = \"llama2-7b\"\ngpu = \"a100-40gb\"\n[parallel]\n\
                 dp = 2\n{parallel}\n"
            ),
        )
        .unwrap();
        path
    };
    let mut catalog = Catalog::builtin();
    let ok = write("z3.toml", "zero = 3\ncp = 2");
    let info = catalog.add_file(&ok).unwrap();
    let s = catalog.scenario(&info.name).unwrap();
    assert_eq!((s.parallel.zero(), s.parallel.cp), (Zero::Full, 2));
    assert!(s.parallel.distributed_optimizer);
    let text = pipescope::to_toml(&s);
    assert!(
        text.contains("zero = 3") && text.contains("cp = 2"),
        "{text}"
    );
    for (name, body, want) in [
        ("z2.toml", "zero = 2", "parallel.zero"),
        (
            "zclash.toml",
            "zero = 1\ndistributed_optimizer = false",
            "parallel.distributed_optimizer",
        ),
    ] {
        let path = write(name, body);
        let err = catalog.add_file(&path).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
