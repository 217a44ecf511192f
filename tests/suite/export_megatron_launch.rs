//! `export megatron` for settings whose Megatron form differs from pipescope's: the launcher's
//! GPUs per host (a GB200 NVL72 rack is one NVLink node of 18 hosts of 4 GPUs), and the MoE
//! settings the simulation assumes (overlapped all-to-alls, a routing imbalance), each written
//! as Megatron's flag or said on a `#` line.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;
use crate::megatron_common::{check_flags, launch};

fn export(args: &[&str]) -> String {
    let mut all = vec!["export", "megatron"];
    all.extend_from_slice(args);
    let (ok, out, err) = pipescope(&all);
    assert!(ok, "{err}");
    out
}

#[test]
fn gb200_runs_four_gpus_per_host() {
    let base = [
        "--model",
        "llama3.1-8b",
        "--gpu",
        "gb200-186gb",
        "-t",
        "1",
        "-s",
        "4096",
        "--strategy",
        "none",
    ];
    for (p, d, m, nodes) in [("9", "8", "18", 18), ("8", "18", "16", 36)] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["-p", p, "-d", d, "-m", m]);
        let l = launch(&export(&args));
        assert_eq!((l.per_node, l.nodes), (4, nodes), "p {p} d {d}");
        assert!(check_flags(&l).is_empty(), "{:?}", check_flags(&l));
    }
}

#[test]
fn moe_settings_the_script_cannot_reproduce_are_said() {
    let text = export(&[
        "--model",
        "qwen3-30b-a3b",
        "--gpu",
        "h100-80gb",
        "-t",
        "1",
        "-p",
        "4",
        "-d",
        "8",
        "--ep",
        "8",
        "--schedule",
        "dualpipe",
        "-s",
        "4096",
        "-m",
        "8",
        "--strategy",
        "none",
        "--moe-a2a-overlap",
        "--routing-imbalance",
        "1.5",
    ]);
    let l = launch(&text);
    // DualPipe's nearest upstream schedule is plain 1F1B, where Megatron refuses its a2a
    // overlap: a `#` line says so, and no flag Megatron would refuse is written.
    assert!(!l.has("--overlap-moe-expert-parallel-comm"), "{text}");
    assert!(
        text.contains("# moe-a2a-overlap:") && text.contains("not written"),
        "{text}"
    );
    assert!(text.contains("# routing-imbalance 1.5:"), "{text}");
    assert!(!l.has("--moe-router-force-load-balancing"), "{text}");
    assert!(check_flags(&l).is_empty(), "{:?}", check_flags(&l));
}
