//! The Megatron-LM export: the layout decoded with Megatron's grammar (commas ignored,
//! `(X)*n` and `x*n` expanded, `|` between virtual stages in virtual-stage-major order, `E`
//! first, `L` last) gives exactly the plan's layers per stage of the model chain.

#![allow(clippy::unwrap_used)]

use crate::cli_common;
use pipescope::{Placement, ScheduleKind, Strategy, default_scenario, megatron_args};

/// One stage of the model chain as the layout describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StageLayers {
    embedding: bool,
    layers: u32,
    head: bool,
}

/// Expands `(X)*n` (innermost first) and then `x*n` for single characters.
fn expand(layout: &str) -> String {
    let mut s: String = layout.chars().filter(|&c| c != ',' && c != ' ').collect();
    while let Some(close) = s.find(')') {
        let open = s[..close].rfind('(').expect("matching (");
        let inner = s[open + 1..close].to_string();
        let rest = &s[close + 1..];
        let (n, used) = count_after_star(rest);
        s = format!("{}{}{}", &s[..open], inner.repeat(n), &rest[used..]);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i + 1..].iter().collect();
        let (n, used) = count_after_star(&rest);
        out.push_str(&c.to_string().repeat(n));
        i += 1 + rest[..used].chars().count();
    }
    out
}

/// `*n` at the start of `rest`: (n, bytes used); (1, 0) when absent.
fn count_after_star(rest: &str) -> (usize, usize) {
    let Some(tail) = rest.strip_prefix('*') else {
        return (1, 0);
    };
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    assert!(!digits.is_empty(), "* without a count in {rest}");
    (digits.parse().unwrap(), 1 + digits.len())
}

/// Megatron's decoding: one entry per virtual stage.
fn decode(layout: &str) -> Vec<StageLayers> {
    let stages: Vec<String> = expand(layout).split('|').map(str::to_string).collect();
    let last = stages.len() - 1;
    stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            assert!(
                s.chars().all(|c| "EtL".contains(c)),
                "unknown layer type in {s}"
            );
            let e = s.contains('E');
            let l = s.contains('L');
            assert!(
                !e || (i == 0 && s.starts_with('E')),
                "E not first: {layout}"
            );
            assert!(
                !l || (i == last && s.ends_with('L')),
                "L not last: {layout}"
            );
            StageLayers {
                embedding: e,
                layers: s.matches('t').count() as u32,
                head: l,
            }
        })
        .collect()
}

fn layout_line(text: &str) -> String {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("--pipeline-model-parallel-layout "))
        .expect("layout always written");
    line.trim_matches('"').to_string()
}

#[test]
fn the_decoder_reads_megatrons_grammar() {
    let st = |e, n, l| StageLayers {
        embedding: e,
        layers: n,
        head: l,
    };
    let stages = vec![
        st(true, 3, false),
        st(false, 4, false),
        st(false, 4, false),
        st(false, 4, false),
        st(false, 1, false),
        st(false, 0, true),
    ];
    assert_eq!(decode("Et*3|(t*4|)*3t|L"), stages);
    assert_eq!(expand("Et*3|(tt|)*2,m|L"), "Ettt|tt|tt|m|L");
}

#[test]
fn layout_decodes_to_the_plans_layers_for_every_placement() {
    let cases = [
        (ScheduleKind::OneFOneB, Strategy::AdaPipe),
        (ScheduleKind::OneFOneB, Strategy::Full),
        (ScheduleKind::Interleaved, Strategy::Adaptive),
        (ScheduleKind::ZbV, Strategy::AdaPipe),
        (ScheduleKind::Chimera, Strategy::Full),
    ];
    for (kind, strategy) in cases {
        let mut scenario = default_scenario();
        scenario.plan.schedule = kind;
        scenario.plan.strategy = strategy;
        let outcome = pipescope::solve(&scenario).unwrap();
        let text = megatron_args(&scenario, &outcome);
        let decoded = decode(&layout_line(&text));
        // The plan's chain stages, independently: device d's chunk c sits at the placement's
        // stage; a layer counts where its attention block (2l + 1) is.
        let p = scenario.parallel.pp;
        let placement = kind.placement();
        let stages = if placement == Placement::Chimera {
            p
        } else {
            p * kind.chunks(scenario.parallel.chunks)
        };
        let mut want = vec![None; stages as usize];
        for st in &outcome.stages {
            for (c, [a, e]) in st.ranges.iter().copied().enumerate() {
                let c = c as u32;
                let s = match placement {
                    Placement::Single => st.stage,
                    Placement::Looped => c * p + st.stage,
                    Placement::VShape if c == 1 => 2 * p - 1 - st.stage,
                    Placement::Chimera if c == 1 => continue,
                    _ => st.stage,
                };
                let layers = (a..=e)
                    .filter(|b| b % 2 == 1 && *b < 2 * scenario.model.layers as usize + 1)
                    .count() as u32;
                want[s as usize] = Some(StageLayers {
                    embedding: a == 0,
                    layers,
                    head: e == 2 * scenario.model.layers as usize + 1,
                });
            }
        }
        let want: Vec<StageLayers> = want.into_iter().map(Option::unwrap).collect();
        assert_eq!(decoded, want, "{kind}/{strategy}: {}", layout_line(&text));
        let total: u32 = decoded.iter().map(|s| s.layers).sum();
        assert_eq!(total, scenario.model.layers);
        assert!(text.contains(&format!("--num-layers {}", scenario.model.layers)));
        assert!(text.contains(&format!("--pipeline-model-parallel-size {p}")));
        // Every line is an argument or a comment.
        assert!(
            text.lines()
                .all(|l| l.starts_with("--") || l.starts_with('#'))
        );
        if strategy == Strategy::Full {
            assert!(text.contains("--recompute-granularity full"));
        }
        if matches!(kind, ScheduleKind::ZbV | ScheduleKind::Chimera) {
            assert!(text.contains(&format!("# schedule: {kind} is not in upstream")));
        }
        if strategy == Strategy::AdaPipe {
            // The per-stage decisions as JSON on # lines.
            let json: Vec<serde_json::Value> = text
                .lines()
                .filter_map(|l| l.strip_prefix("# {"))
                .map(|l| serde_json::from_str(&format!("{{{l}")).unwrap())
                .collect();
            assert_eq!(json.len(), p as usize);
            assert!(json[0]["units"].as_object().unwrap().len() > 3);
        }
    }
}

#[test]
fn cli_writes_megatron_and_refuses_abstract_runs() {
    let (ok, out, _) = cli_common::pipescope(&["export", "megatron", "-p", "4"]);
    assert!(ok);
    assert!(out.contains("--pipeline-model-parallel-size 4"));
    let (ok, _, err) = cli_common::pipescope(&[
        "export",
        "megatron",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--costs",
        "1,1,1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("megatron export needs a planned scenario"),
        "{err}"
    );
}
