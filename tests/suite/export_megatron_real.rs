//! Megatron-LM's own argument check on exported scripts, where Megatron-LM and torch are
//! importable: `tests/megatron/check_args.py` runs `parse_args`, `validate_args` (with the
//! world size set) and the `TransformerConfig` built from the arguments. Point
//! `PIPESCOPE_MEGATRON_LM` at a Megatron-LM checkout (and `PIPESCOPE_PYTHON` at a Python,
//! 3.12 or later, that imports torch; a CPU build is enough); without them the test says
//! why it is skipped and passes. CI does not install torch: the flag list and the rules in
//! `megatron_common` are what CI checks.

#![allow(clippy::unwrap_used)]

use pipescope::{Catalog, ScheduleKind, Strategy, megatron_args};
use std::path::PathBuf;
use std::process::Command;

/// The Python and the Megatron-LM checkout to run the check with, when they import.
fn megatron_python() -> Option<(String, PathBuf)> {
    let Some(checkout) = std::env::var_os("PIPESCOPE_MEGATRON_LM").map(PathBuf::from) else {
        eprintln!(
            "skipped: set PIPESCOPE_MEGATRON_LM to a Megatron-LM checkout (and PIPESCOPE_PYTHON \
             to a Python with torch) to run Megatron's own argument check"
        );
        return None;
    };
    let python = std::env::var("PIPESCOPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args([
            "-W",
            "ignore",
            "-c",
            "import torch, megatron.training.arguments",
        ])
        .env("PYTHONPATH", &checkout)
        .output();
    match probe {
        Ok(out) if out.status.success() => Some((python, checkout)),
        Ok(out) => {
            eprintln!(
                "skipped: {python} cannot import torch and Megatron-LM from {}: {}",
                checkout.display(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            None
        }
        Err(e) => {
            eprintln!("skipped: cannot run {python}: {e}");
            None
        }
    }
}

#[test]
fn megatron_accepts_the_exported_scripts() {
    let Some((python, checkout)) = megatron_python() else {
        return;
    };
    let checker = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/megatron/check_args.py");
    let dir = std::env::temp_dir().join(format!("pipescope-megatron-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = Catalog::builtin();
    let cases = [
        ("gpt3-175b-16k", None, Strategy::AdaPipe),
        (
            "gpt3-175b-16k",
            Some(ScheduleKind::Interleaved),
            Strategy::Full,
        ),
        ("adapipe-llama2-70b", None, Strategy::Selective),
        ("korthikanti-22b", None, Strategy::Selective),
        ("korthikanti-175b", None, Strategy::Full),
        ("tiny-4x8", Some(ScheduleKind::ZbV), Strategy::AdaPipe),
    ];
    let mut paths = Vec::new();
    for (name, kind, strategy) in cases {
        let mut s = catalog.scenario(name).unwrap();
        if let Some(kind) = kind {
            s.plan.schedule = kind;
        }
        s.plan.strategy = strategy;
        s.parallel.dp = 2;
        s.parallel.distributed_optimizer = true;
        s.plan.overlap_grad_reduce = true;
        let outcome = pipescope::solve(&s).unwrap();
        let path = dir.join(format!("{name}-{strategy}.sh"));
        std::fs::write(&path, megatron_args(&s, &outcome).unwrap()).unwrap();
        paths.push(path);
    }
    // Context parallelism with each ZeRO stage and the overlaps.
    for (zero, overlaps) in [
        (pipescope::Zero::Optimizer, true),
        (pipescope::Zero::Full, false),
    ] {
        let mut s = catalog.scenario("gpt3-175b-16k").unwrap();
        s.parallel.dp = 2;
        s.parallel.cp = 2;
        s.parallel.set_zero(zero);
        s.plan.overlap_grad_reduce = true;
        s.plan.overlap_param_gather = overlaps;
        s.plan.tp_comm_overlap = overlaps;
        let outcome = pipescope::solve(&s).unwrap();
        let path = dir.join(format!("cp2-zero{}.sh", zero.level()));
        std::fs::write(&path, megatron_args(&s, &outcome).unwrap()).unwrap();
        paths.push(path);
    }
    // One Python for all: importing Megatron-LM is the slow part.
    let out = Command::new(&python)
        .args(["-W", "ignore"])
        .arg(&checker)
        .args(&paths)
        .env("PYTHONPATH", &checkout)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        paths.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
