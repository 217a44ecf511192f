//! The whole-job model (docs/model.md): `-d`, the distributed optimizer, 16-bit
//! gradients and the overlap change time and memory as hand-computed; the breakdown adds up.

use crate::cli_common::pipescope;
use pipescope::{Catalog, Outcome, Scenario, ScenarioOverrides, Strategy, solve};

/// A100 links at the preset's 0.75 (nccl-tests' bus bandwidth): NVLink 300 GB/s, InfiniBand 25 GB/s per GPU.
const NET: f64 = 25e9 * 0.75;

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
    (a - b).abs() <= 1e-9 * b.abs().max(1e-6)
}

fn last_stage_params(o: &Outcome) -> f64 {
    let dev = o.simulation.job.as_ref().unwrap().last_device as usize;
    (o.stages[dev].weights_bytes / 2) as f64
}

fn sums(o: &Outcome) {
    let b = &o.time_breakdown_s;
    assert!(
        (b.total() - o.iteration_time_s).abs() < 1e-9 * o.iteration_time_s,
        "{b:?} vs {}",
        o.iteration_time_s
    );
    for x in [
        b.compute,
        b.recompute,
        b.bubble,
        b.tp_comm,
        b.pp_comm,
        b.dp_comm,
        b.optimizer,
    ] {
        assert!(x >= 0.0, "{b:?}");
    }
    // Every device's breakdown adds up to the iteration too, and the last device's is the
    // outcome's.
    let job = o.simulation.job.as_ref().unwrap();
    assert_eq!(job.devices.len(), o.stages.len());
    for d in &job.devices {
        assert!((d.total() - o.iteration_time_s).abs() < 1e-9 * o.iteration_time_s);
    }
    let last = &job.devices[job.last_device as usize];
    assert!(close(last.total(), b.total()) && close(last.compute, b.compute));
    for st in &o.stages {
        assert_eq!(
            st.weights_bytes + st.grads_bytes + st.optimizer_bytes,
            st.static_bytes
        );
    }
}

#[test]
fn data_parallelism_adds_the_hand_computed_ring() {
    let one = solve(&scenario(ScenarioOverrides::default())).unwrap();
    let four = solve(&scenario(ScenarioOverrides {
        dp: Some(4),
        ..Default::default()
    }))
    .unwrap();
    sums(&one);
    sums(&four);
    assert_eq!(one.time_breakdown_s.dp_comm, 0.0);
    // t = 8 fills a node: the 4 replicas of a rank are on 4 nodes, a flat ring.
    // All-reduce of fp32 gradients: 2 (d-1)/d x 4 bytes x params / net.
    let n = last_stage_params(&four);
    let ring = 2.0 * 0.75 * 4.0 * n / NET;
    assert!(
        close(four.time_breakdown_s.dp_comm, ring),
        "{:?}",
        four.time_breakdown_s
    );
    assert!(four.iteration_time_s > one.iteration_time_s);
    assert_eq!(four.gpus, 256);
    assert_eq!(four.global_batch, 256);
    // Without the distributed optimizer the memory does not depend on d.
    assert_eq!(one.stages[0].static_bytes, four.stages[0].static_bytes);
    // The tied embedding's all-reduce: V h / t fp32 gradients between nodes.
    let tied = 51200.0 * 12288.0 / 8.0 * 4.0 / NET;
    assert!(close(four.time_breakdown_s.pp_comm, tied));
    // The optimizer: 46 bytes per parameter (fp32 gradient read thrice and zeroed,
    // master/m/v read and written, master read and bf16 weight written) at 0.75 of 2039 GB/s.
    let opt = 46.0 * n / (2039e9 * 0.75);
    assert!(close(four.time_breakdown_s.optimizer, opt));
}

#[test]
fn the_distributed_optimizer_shards_memory_and_splits_the_collective() {
    let s = scenario(ScenarioOverrides {
        dp: Some(4),
        distributed_optimizer: Some(true),
        ..Default::default()
    });
    let o = solve(&s).unwrap();
    sums(&o);
    for st in &o.stages {
        let params = st.weights_bytes / 2;
        // 6 + 12/4 = 9 bytes per parameter.
        assert!(st.static_bytes.abs_diff(9 * params) <= 1, "{st:?}");
        assert!(st.optimizer_bytes.abs_diff(3 * params) <= 1);
    }
    // Reduce-scatter of fp32 gradients + all-gather of bf16 weights: (d-1)/d (4 + 2) n / net.
    let n = last_stage_params(&o);
    assert!(close(o.time_breakdown_s.dp_comm, 0.75 * 6.0 * n / NET));
    // The step runs on a quarter of the parameters.
    assert!(close(
        o.time_breakdown_s.optimizer,
        46.0 * n / 4.0 / (2039e9 * 0.75)
    ));
}

#[test]
fn sixteen_bit_gradients_halve_the_traffic_and_save_two_bytes() {
    let o = solve(&scenario(ScenarioOverrides {
        dp: Some(4),
        grad_bytes: Some(2),
        ..Default::default()
    }))
    .unwrap();
    sums(&o);
    let n = last_stage_params(&o);
    assert!(close(
        o.time_breakdown_s.dp_comm,
        2.0 * 0.75 * 2.0 * n / NET
    ));
    for st in &o.stages {
        assert!(st.static_bytes.abs_diff(16 * (st.weights_bytes / 2)) <= 1);
    }
}

#[test]
fn overlap_hides_all_but_what_the_last_backward_cannot() {
    let plain = solve(&scenario(ScenarioOverrides {
        dp: Some(4),
        ..Default::default()
    }))
    .unwrap();
    let over = solve(&scenario(ScenarioOverrides {
        dp: Some(4),
        overlap_grad_reduce: Some(true),
        ..Default::default()
    }))
    .unwrap();
    sums(&over);
    let full = plain.time_breakdown_s.dp_comm;
    let exposed = over.time_breakdown_s.dp_comm;
    assert!(exposed < full, "{exposed} vs {full}");
    // At least the last bucket (40M parameters) stays exposed.
    let n = last_stage_params(&over);
    let buckets = (n / 40e6).ceil();
    assert!(
        exposed >= full / buckets - 1e-12,
        "{exposed} {full} {buckets}"
    );
    assert!(over.iteration_time_s < plain.iteration_time_s);
}

#[test]
fn plan_json_has_the_job_fields_and_nulls_when_infeasible() {
    let (ok, out, err) = pipescope(&["plan", "--json", "-d", "2", "--global-batch", "256"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["gpus"], 128);
    assert_eq!(v["global_batch"], 256);
    let t = v["iteration_time_s"].as_f64().unwrap();
    let tps = v["tokens_per_s"].as_f64().unwrap();
    assert!(close(tps, 256.0 * 16384.0 / t));
    assert!(close(
        v["tokens_per_s_per_gpu"].as_f64().unwrap(),
        tps / 128.0
    ));
    let b = &v["time_breakdown_s"];
    let sum: f64 = [
        "compute",
        "recompute",
        "bubble",
        "tp_comm",
        "pp_comm",
        "dp_comm",
        "optimizer",
    ]
    .iter()
    .map(|k| b[k].as_f64().unwrap())
    .sum();
    assert!((sum - t).abs() < 1e-9 * t);
    assert!(v["stages"][0]["optimizer_bytes"].as_u64().unwrap() > 0);
    let (ok, out, _) = pipescope(&["plan", "--json", "--budget-gib", "5"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["feasible"], false);
    assert!(v["mfu"].is_null() && v["hfu"].is_null() && v["speedup"].is_null());
}

#[test]
fn the_balanced_split_counts_embedding_and_head_as_layers() {
    let c = Catalog::builtin();
    let run = |partition: &str| {
        let mut s = c.scenario("gpt3-175b-16k").unwrap();
        ScenarioOverrides {
            model: Some("gpt-9.6b".into()),
            pp: Some(16),
            tp: Some(1),
            seq_len: Some(2048),
            micro_batches: Some(32),
            strategy: Some(Strategy::None),
            partition: Some(partition.parse().unwrap()),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        solve(&s).unwrap()
    };
    let even = run("even");
    let balanced = run("balanced");
    // 30 layers + embedding + head = 32 units over 16 stages: two each.
    assert_eq!(balanced.stages[0].attention_blocks, 1);
    assert_eq!(balanced.stages[1].attention_blocks, 2);
    assert_eq!(balanced.stages[15].attention_blocks, 1);
    assert_eq!(even.stages[15].attention_blocks, 2);
    assert!(
        balanced.bubble_rate < even.bubble_rate,
        "{} vs {}",
        balanced.bubble_rate,
        even.bubble_rate
    );
}

#[test]
fn the_named_strategy_recomputes_exactly_the_named_units() {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    ScenarioOverrides {
        strategy: Some(Strategy::Named),
        recompute_units: Some(vec!["ln_out".into(), "mlp.gelu_out".into()]),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    let o = solve(&s).unwrap();
    for st in &o.stages {
        for u in &st.units {
            let named = matches!(
                u.name.as_str(),
                "attention.ln_out" | "mlp.ln_out" | "mlp.gelu_out"
            );
            let blocks = u.keep + u.recompute + u.compress + u.offload;
            if named {
                assert_eq!(u.recompute, blocks, "{}", u.name);
            } else {
                assert_eq!(u.recompute, 0, "{}", u.name);
            }
        }
    }
    // A name that selects nothing is refused with the names that exist.
    let (ok, _, err) = pipescope(&[
        "plan",
        "--strategy",
        "named",
        "--recompute-units",
        "gelu_outt",
    ]);
    assert!(
        !ok && err.contains("recompute_units") && err.contains("mlp.gelu_out"),
        "{err}"
    );
}

#[test]
fn a_dropout_mask_is_regenerated_from_the_rng_state_not_the_gemm() {
    let s = Catalog::builtin().scenario("korthikanti-22b").unwrap();
    let a = pipescope::Anatomy::build(&s).unwrap();
    for block in [&a.attention, &a.mlp] {
        let mask = block.unit("out_dropout_mask").unwrap();
        // One 1-byte write of s b h / t elements (SP) at the HBM curve.
        let e = (s.batch.seq_len * s.batch.micro_batch_size * s.model.hidden) as f64 / 8.0;
        assert_eq!(mask.size_bytes, e as u64);
        assert_eq!(mask.forward_flops, 0.0);
        assert!(
            mask.forward_s < 0.02 * block.forward_s,
            "{} vs {}",
            mask.forward_s,
            block.forward_s
        );
        assert_eq!(mask.backward_s, 0.0);
    }
}
