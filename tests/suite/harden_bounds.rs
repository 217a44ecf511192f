//! Every size that validation accepts finishes in seconds and bounded memory, or is refused
//! with the limit named (a user who asks for too much learns why at once instead of waiting
//! minutes); validation and the planner agree on p.

use std::time::{Duration, Instant};

use crate::cli_common::pipescope;
use pipescope::{Catalog, ScheduleKind, check_size};

#[test]
fn huge_simulations_are_refused_with_the_limit_named() {
    for (args, limit) in [
        (["v-min", "65536", "8"], "at most 1024 devices"),
        (["v-half", "65536", "8"], "at most 1024 devices"),
        (["1f1b", "65536", "8"], "at most 1024 devices"),
        (["v-min", "1024", "64"], "p x p x m x chunks at most"),
        (["1f1b", "8", "16385"], "MAX_CELLS"),
        (["v-zb", "40", "164"], "p x p x max(m, 2p) at most 262144"),
        (["v-zb", "32", "257"], "p x p x max(m, 2p) at most 262144"),
        // Fewer than 2p micro-batches cost as much as 2p (minutes before that was counted):
        // many devices with a few micro-batches are refused.
        (["v-zb", "51", "2"], "(got 51 x 51 x 102 = 265302)"),
        (["v-zb", "128", "2"], "p x p x max(m, 2p) at most 262144"),
    ] {
        let start = Instant::now();
        let (ok, _, err) = pipescope(&[
            "simulate",
            "--schedule",
            args[0],
            "-p",
            args[1],
            "-m",
            args[2],
            "--json",
        ]);
        assert!(!ok, "{args:?}");
        assert!(err.contains(limit), "{args:?}: {err}");
        assert!(start.elapsed() < Duration::from_secs(5), "{args:?}");
    }
}

#[test]
fn validation_allows_exactly_the_stages_the_planner_can_fill() {
    let mut sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    sc.model.layers = 4;
    sc.parallel.pp = 8;
    sc.batch.micro_batches = 16;
    sc.validate().unwrap();
    pipescope::solve(&sc).unwrap();
    for pp in [9, 10] {
        sc.parallel.pp = pp;
        let err = sc.validate().unwrap_err().to_string();
        assert!(err.contains("2L = 8"), "{err}");
    }
}

#[test]
fn a_huge_model_on_many_stages_is_refused_not_aborted() {
    let mut sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    sc.model.layers = 100_000;
    sc.parallel.pp = 512;
    let err = sc.validate().unwrap_err().to_string();
    assert!(
        err.contains("layers x pp x chunks at most 2097152"),
        "{err}"
    );
    let start = Instant::now();
    assert!(pipescope::solve(&sc).is_err());
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// `RAYON_NUM_THREADS=5000` would start 5,000 threads for `compare`, which only add
/// switching: the global pool is clamped to the available parallelism, so the answer is the
/// same and as quick as ever.
#[test]
fn a_huge_rayon_thread_count_is_clamped() {
    let run = |threads: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pipescope"));
        cmd.args(["compare", "--json"]);
        if let Some(n) = threads {
            cmd.env("RAYON_NUM_THREADS", n);
        }
        let start = Instant::now();
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.stdout, start.elapsed())
    };
    let (plain, _) = run(None);
    let (many, took) = run(Some("5000"));
    let strip = |b: &[u8]| {
        // Solve times differ from run to run.
        let v: serde_json::Value = serde_json::from_slice(b).unwrap();
        let mut v = v;
        for o in v.as_array_mut().unwrap() {
            o.as_object_mut().unwrap().remove("solve_time_s");
        }
        v
    };
    assert_eq!(strip(&plain), strip(&many));
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// v-zb accepts the V-shape paper's largest pure-pipeline run (p 40, m 160) and sizes up
/// to p 50, and the limit sits right above them (the search's time there is measured in
/// `benches/search.rs`).
#[test]
fn v_zb_accepts_the_papers_largest_run_and_nothing_much_larger() {
    for (p, m) in [
        (40, 160),
        (40, 163),
        (50, 104),
        (50, 1),
        (32, 256),
        (16, 1024),
    ] {
        assert!(
            check_size(ScheduleKind::VZb, p, m, 2).is_ok(),
            "p={p} m={m}"
        );
    }
    for (p, m) in [
        (40, 164),
        (50, 105),
        (51, 1),
        (32, 257),
        (16, 1025),
        (64, 2),
    ] {
        assert!(
            check_size(ScheduleKind::VZb, p, m, 2).is_err(),
            "p={p} m={m}"
        );
    }
}
