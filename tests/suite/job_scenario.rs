//! The whole-job scenario settings (docs/model.md): reserve, absolute budgets, the
//! global batch, gradient bytes, and their flags.

use crate::cli_common::pipescope;
use pipescope::{
    AttentionBackend, Catalog, Partition, ScenarioOverrides, Strategy, default_scenario, solve,
};

const GIB: u64 = 1 << 30;

#[test]
fn the_default_preset_keeps_ten_gib_free_on_any_gpu() {
    let c = Catalog::builtin();
    let s = c.scenario("gpt3-175b-16k").unwrap();
    assert_eq!(s.plan.reserve_bytes, Some(10 * GIB));
    assert_eq!(s.plan.memory_budget_bytes, 70 * GIB);
    let mut small = s.clone();
    ScenarioOverrides {
        gpu: Some("a100-40gb".into()),
        ..Default::default()
    }
    .apply(&mut small, &c)
    .unwrap();
    // Not 70 GiB on a 40 GB GPU: 30.
    assert_eq!(small.plan.memory_budget_bytes, 30 * GIB);
}

#[test]
fn an_absolute_budget_above_the_gpu_memory_is_refused_naming_it() {
    let c = Catalog::builtin();
    let mut s = default_scenario();
    let e = ScenarioOverrides {
        budget_gib: Some(81.0),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err();
    assert_eq!(e.field, "plan.memory_budget_gib");
    assert!(e.allowed.contains("a100-80gb: 80 GiB"), "{e}");
    // An absolute budget stays absolute when the GPU changes, and is refused above it.
    let mut s = default_scenario();
    let e = ScenarioOverrides {
        budget_gib: Some(70.0),
        gpu: Some("a100-40gb".into()),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err();
    assert!(e.allowed.contains("a100-40gb: 40 GiB"), "{e}");
    // A reserve is checked against the GPU.
    let e = ScenarioOverrides {
        reserve_gib: Some(80.0),
        ..Default::default()
    }
    .apply(&mut default_scenario(), &c)
    .unwrap_err();
    assert_eq!(e.field, "reserve_gib");
    let e = ScenarioOverrides {
        reserve_gib: Some(1.0),
        budget_gib: Some(50.0),
        ..Default::default()
    }
    .apply(&mut default_scenario(), &c)
    .unwrap_err();
    assert_eq!(e.field, "reserve_gib");
}

#[test]
fn the_global_batch_sets_the_micro_batches() {
    let c = Catalog::builtin();
    let mut s = default_scenario();
    ScenarioOverrides {
        dp: Some(4),
        micro_batch_size: Some(2),
        global_batch: Some(512),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    assert_eq!(s.batch.micro_batches, 64);
    for o in [
        ScenarioOverrides {
            dp: Some(4),
            global_batch: Some(510),
            ..Default::default()
        },
        ScenarioOverrides {
            dp: Some(4),
            global_batch: Some(512),
            micro_batches: Some(64),
            ..Default::default()
        },
    ] {
        let e = o.apply(&mut default_scenario(), &c).unwrap_err();
        assert_eq!(e.field, "global_batch", "{e}");
    }
    // Agreeing -m and --global-batch are fine.
    ScenarioOverrides {
        dp: Some(4),
        global_batch: Some(512),
        micro_batches: Some(128),
        ..Default::default()
    }
    .apply(&mut default_scenario(), &c)
    .unwrap();
}

#[test]
fn grad_bytes_partition_and_flags_apply() {
    let c = Catalog::builtin();
    let mut s = default_scenario();
    ScenarioOverrides {
        grad_bytes: Some(2),
        partition: Some(Partition::Balanced),
        distributed_optimizer: Some(true),
        overlap_grad_reduce: Some(true),
        // Sharding and the gradient overlap need d x cp > 1 (a file is refused otherwise).
        dp: Some(2),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    assert_eq!(s.parallel.grad_bytes, 2);
    assert!(s.parallel.distributed_optimizer && s.plan.overlap_grad_reduce);
    assert_eq!(s.plan.partition, Partition::Balanced);
    let e = ScenarioOverrides {
        grad_bytes: Some(3),
        ..Default::default()
    }
    .apply(&mut default_scenario(), &c)
    .unwrap_err();
    assert_eq!(e.field, "parallel.grad_bytes");
    // The written preset reads back the same.
    let text = pipescope::to_toml(&s);
    let mut cat = Catalog::builtin();
    let dir = std::env::temp_dir().join(format!("pipescope-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(&path, text.replace("gpt3-175b-16k", "job-roundtrip")).unwrap();
    cat.add_file(&path).unwrap();
    let back = cat.scenario("job-roundtrip").unwrap();
    assert_eq!(back.parallel, s.parallel);
    assert_eq!(back.plan, s.plan);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_cli_takes_the_job_flags_and_names_them_in_errors() {
    let (ok, _, err) = pipescope(&["plan", "--json", "-d", "4", "--global-batch", "6"]);
    assert!(!ok && err.contains("global_batch"), "{err}");
    let (ok, _, err) = pipescope(&["plan", "--json", "--grad-bytes", "3"]);
    assert!(!ok && err.contains("grad_bytes"), "{err}");
    let (ok, _, err) = pipescope(&["plan", "--json", "--budget-gib", "90"]);
    assert!(!ok && err.contains("80 GiB"), "{err}");
}

/// The attention backend is a property of the run (`--attention-backend`, scenario
/// `plan.attention_backend`): FlashAttention-2 takes the GPU's `flash2_*` steps where the
/// preset has them (the H100's: slower than cuDNN's), the cuDNN steps where it has none
/// (the A100s), and a preset written with it reads it back.
#[test]
fn the_attention_backend_is_a_property_of_the_run() {
    let c = Catalog::builtin();
    let time = |gpu: &str, backend: AttentionBackend| {
        let mut s = default_scenario();
        ScenarioOverrides {
            gpu: Some(gpu.into()),
            strategy: Some(Strategy::Full),
            attention_backend: Some(backend),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        (solve(&s).unwrap().iteration_time_s, s)
    };
    let (cudnn, _) = time("h100-80gb", AttentionBackend::Cudnn);
    let (flash2, s) = time("h100-80gb", AttentionBackend::Flash2);
    assert!(flash2 > 1.01 * cudnn, "flash2 {flash2} s, cudnn {cudnn} s");
    let (a, _) = time("a100-80gb", AttentionBackend::Cudnn);
    let (b, _) = time("a100-80gb", AttentionBackend::Flash2);
    assert_eq!(a, b);
    // Written and read back.
    let text = pipescope::to_toml(&s);
    assert!(text.contains("attention_backend = \"flash2\""), "{text}");
    let dir = std::env::temp_dir().join(format!("pipescope-attn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(&path, text.replace("gpt3-175b-16k", "attn-roundtrip")).unwrap();
    let mut cat = Catalog::builtin();
    cat.add_file(&path).unwrap();
    assert_eq!(cat.scenario("attn-roundtrip").unwrap().plan, s.plan);
    // A wrong name in a file is refused naming the key and the names allowed.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        text.replace("gpt3-175b-16k", "attn-bad")
            .replace("\"flash2\"", "\"flash3\""),
    )
    .unwrap();
    let e = Catalog::builtin().add_file(&bad).unwrap_err().to_string();
    assert!(
        e.contains("plan.attention_backend") && e.contains("cudnn, flash2"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // The flag, in the JSON and refused when wrong.
    let (ok, out, err) = pipescope(&[
        "plan",
        "--json",
        "--strategy",
        "full",
        "--attention-backend",
        "flash2",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("\"attention_backend\": \"flash2\""), "{out}");
    // Megatron is told to run the flash-attn package (its `flash` backend).
    let (ok, out, err) = pipescope(&["export", "megatron", "--attention-backend", "flash2"]);
    assert!(ok && out.contains("--attention-backend flash"), "{err}");
    let (ok, _, err) = pipescope(&["plan", "--attention-backend", "fused"]);
    assert!(
        !ok && err.contains("--attention-backend") && err.contains("cudnn"),
        "{err}"
    );
}
