//! The torchtitan (torch.distributed.pipelining `compute_only` CSV) export: every
//! (stage, micro-batch) once per action kind, on the rank that holds the stage, in an order
//! that respects the dependencies (the ranks' rows run to the end without a deadlock), for
//! every schedule with a torch equivalent; the others are refused with a reason.

#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};

use crate::cli_common;
use pipescope::{ScheduleInput, ScheduleKind, generate, torchtitan_csv};

type Action = (u32, char, u32);

fn parse(text: &str) -> Vec<Vec<Action>> {
    text.lines()
        .map(|row| {
            row.split(',')
                .filter(|c| !c.is_empty())
                .map(|cell| {
                    let at = cell.find(|c: char| c.is_ascii_alphabetic()).unwrap();
                    let kind = cell[at..].chars().next().unwrap();
                    (
                        cell[..at].parse().unwrap(),
                        kind,
                        cell[at + 1..].parse().unwrap(),
                    )
                })
                .collect()
        })
        .collect()
}

/// The rank torch places `stage` on (looped, or V-shape for two-chunk V schedules).
fn owner(kind: ScheduleKind, p: u32, stage: u32) -> u32 {
    let v_shape = matches!(
        kind,
        ScheduleKind::ZbV
            | ScheduleKind::VHalf
            | ScheduleKind::VMin
            | ScheduleKind::VZb
            | ScheduleKind::DualPipeV
    );
    if v_shape && stage >= p {
        2 * p - 1 - stage
    } else {
        stage % p
    }
}

/// Runs every rank's row in order; an action runs once its dependencies ran.
fn run_in_order(rows: &[Vec<Action>], stages: u32) {
    let mut done: HashSet<Action> = HashSet::new();
    let mut next = vec![0usize; rows.len()];
    let backward = |s: u32, mb: u32, done: &HashSet<Action>| {
        done.contains(&(s, 'I', mb)) || done.contains(&(s, 'B', mb))
    };
    loop {
        let mut progressed = false;
        for (r, row) in rows.iter().enumerate() {
            while let Some(&(s, k, mb)) = row.get(next[r]) {
                let ready = match k {
                    'F' => s == 0 || done.contains(&(s - 1, 'F', mb)),
                    'I' | 'B' => {
                        done.contains(&(s, 'F', mb))
                            && (s + 1 == stages || backward(s + 1, mb, &done))
                    }
                    'W' => done.contains(&(s, 'I', mb)),
                    other => panic!("unknown action {other}"),
                };
                if !ready {
                    break;
                }
                done.insert((s, k, mb));
                next[r] += 1;
                progressed = true;
            }
        }
        if next.iter().zip(rows).all(|(&n, row)| n == row.len()) {
            return;
        }
        assert!(progressed, "order deadlocks at {next:?}");
    }
}

#[test]
fn every_torch_schedule_is_complete_owned_and_ordered() {
    let (p, m) = (4, 8);
    for &kind in ScheduleKind::ALL {
        let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
        let sched = generate(kind, &input).unwrap();
        let text = match torchtitan_csv(&sched) {
            Ok(t) => t,
            Err(e) => {
                assert!(kind == ScheduleKind::Chimera || kind.offloads(), "{kind}");
                assert!(e.to_string().contains(kind.name()), "{e}");
                continue;
            }
        };
        let rows = parse(&text);
        assert_eq!(rows.len(), p as usize, "{kind}");
        let stages = sched.stages();
        let mut seen: HashMap<Action, u32> = HashMap::new();
        for (rank, row) in rows.iter().enumerate() {
            for &a in row {
                assert_eq!(owner(kind, p, a.0), rank as u32, "{kind}: {a:?}");
                *seen.entry(a).or_default() += 1;
            }
        }
        let kinds: &[char] = if kind.splits_backward() {
            &['F', 'I', 'W']
        } else {
            &['F', 'B']
        };
        for s in 0..stages {
            for mb in 0..m {
                for &k in kinds {
                    assert_eq!(seen.get(&(s, k, mb)), Some(&1), "{kind}: {s}{k}{mb}");
                }
            }
        }
        assert_eq!(seen.len(), (stages * m) as usize * kinds.len(), "{kind}");
        run_in_order(&rows, stages);
    }
}

#[test]
fn cli_refuses_chimera_with_a_reason() {
    let (ok, _, err) = cli_common::pipescope(&[
        "export",
        "torchtitan",
        "--schedule",
        "chimera",
        "-p",
        "4",
        "-m",
        "8",
        "--costs",
        "1,1,1",
    ]);
    assert!(!ok);
    assert!(err.contains("chimera") && err.contains("one rank"), "{err}");
    let (ok, out, _) = cli_common::pipescope(&[
        "export",
        "torchtitan",
        "--schedule",
        "interleaved",
        "-p",
        "2",
        "-m",
        "2",
        "--costs",
        "1,1,1",
    ]);
    assert!(ok);
    assert_eq!(out.lines().count(), 2);
    assert!(out.starts_with("0F0,"), "{out}");
}
