//! The SVG export rendered with resvg and checked by its pixels (light background, op
//! colours in the rows where the ops are, later chunks lighter, a dark theme dark) and by
//! its structure (one `op` rect per compute op with `data-mb`/`data-chunk`, none for legend
//! swatches, no external fonts).

#![allow(clippy::unwrap_used)]

use pipescope::{
    Lane, Palette, Run, ScheduleInput, ScheduleKind, SimCosts, SvgExtras, Units, generate,
    simulate, svg_figure, svg_figure_with,
};
use resvg::{tiny_skia, usvg};

#[derive(Debug)]
struct OpRect {
    class: String,
    mb: u32,
    chunk: u32,
    x: f32,
    y: f32,
    w: f32,
    h: f32,
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

fn op_rects(svg: &str) -> Vec<OpRect> {
    svg.split("<rect ")
        .skip(1)
        .filter_map(|t| {
            let tag = &t[..t.find("/>")?];
            let class = attr(&format!(" {tag}"), "class")?.to_string();
            if !class.split(' ').any(|c| c == "op") {
                return None;
            }
            let tag = format!(" {tag}");
            let num = |n: &str| attr(&tag, n).unwrap().parse::<f32>().unwrap();
            Some(OpRect {
                mb: attr(&tag, "data-mb").unwrap().parse().unwrap(),
                chunk: attr(&tag, "data-chunk").unwrap().parse().unwrap(),
                x: num("x"),
                y: num("y"),
                w: num("width"),
                h: num("height"),
                class,
            })
        })
        .collect()
}

fn figure(kind: ScheduleKind, palette: &Palette) -> (String, usize) {
    let input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
    let sched = generate(kind, &input).unwrap();
    let costs = SimCosts::abstract_run(&sched, 1.0, 1.0, 1.0, 0.0, 1.0);
    let sim = simulate(&sched, &costs).unwrap();
    let run = Run {
        schedule: &sched,
        simulation: &sim,
        units: Units::Abstract,
    };
    let compute = sim
        .timeline
        .spans
        .iter()
        .filter(|s| s.lane == Lane::Compute)
        .count();
    (svg_figure(&run, palette), compute)
}

fn render(svg: &str) -> tiny_skia::Pixmap {
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
}

fn pixel(p: &tiny_skia::Pixmap, x: f32, y: f32) -> [u8; 3] {
    let c = p.pixel(x as u32, y as u32).unwrap();
    [c.red(), c.green(), c.blue()]
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(&c[1..], 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 6)
}

fn luma(c: [u8; 3]) -> u32 {
    u32::from(c[0]) * 3 + u32::from(c[1]) * 6 + u32::from(c[2])
}

#[test]
fn structure_of_every_schedule() {
    for &kind in ScheduleKind::ALL {
        let (svg, compute) = figure(kind, &Palette::light());
        let ops = op_rects(&svg);
        assert_eq!(ops.len(), compute, "{kind}");
        assert!(svg.contains("class=\"swatch F\""), "legend");
        // The legend has a swatch for each kind the run has, and none for the others.
        for kind in ["B", "W", "BW", "R"] {
            let has = svg.contains(&format!("class=\"op {kind}\""))
                || svg.contains(&format!("class=\"op {kind} "));
            assert_eq!(
                svg.contains(&format!("class=\"swatch {kind}\"")),
                has,
                "{kind} {kind:?}: legend and ops disagree"
            );
        }
        assert!(!svg.contains("@import") && !svg.contains("@font-face") && !svg.contains("url("));
        assert!(svg.contains("time (cost units)"));
        assert!(svg.contains("<polyline class=\"mem\""), "memory curves");
        // It parses as SVG.
        usvg::Tree::from_str(&svg, &usvg::Options::default()).unwrap();
    }
}

#[test]
fn pixels_light_background_and_op_colours_in_their_rows() {
    let pal = Palette::light();
    let (svg, _) = figure(ScheduleKind::OneFOneB, &pal);
    let img = render(&svg);
    assert!(luma(pixel(&img, 2.0, 2.0)) > 2400, "background light");
    let ops = op_rects(&svg);
    let mut rows = std::collections::BTreeSet::new();
    for op in &ops {
        let c = pixel(&img, op.x + op.w / 2.0, op.y + op.h - 2.0);
        let want = if op.class.contains(" F") {
            hex(&pal.forward)
        } else if op.class.contains(" BW") {
            hex(&pal.fused)
        } else {
            hex(&pal.backward)
        };
        assert!(close(c, want), "{op:?}: {c:?} vs {want:?}");
        rows.insert(op.y as u32);
    }
    assert_eq!(rows.len(), 4, "one row per device");
    assert!(ops.iter().any(|o| o.mb == 7));
}

#[test]
fn later_chunks_are_lighter_and_dark_theme_is_dark() {
    let pal = Palette::light();
    let (svg, _) = figure(ScheduleKind::Interleaved, &pal);
    let img = render(&svg);
    let ops = op_rects(&svg);
    let f = |chunk: u32| {
        let op = ops
            .iter()
            .find(|o| o.class.contains(" F") && o.chunk == chunk)
            .unwrap();
        pixel(&img, op.x + op.w / 2.0, op.y + op.h - 2.0)
    };
    assert!(close(f(0), hex(&pal.forward)));
    assert!(luma(f(1)) > luma(f(0)) + 100, "{:?} vs {:?}", f(1), f(0));
    let dark = Palette::from_theme_toml(include_str!("../../themes/dark.toml"), "dark").unwrap();
    let (svg, _) = figure(ScheduleKind::ZbV, &dark);
    let img = render(&svg);
    assert!(luma(pixel(&img, 2.0, 2.0)) < 500, "dark background");
    let w = op_rects(&svg)
        .into_iter()
        .find(|o| o.class.contains(" W") && o.chunk == 0)
        .unwrap();
    assert!(close(
        pixel(&img, w.x + w.w / 2.0, w.y + w.h - 2.0),
        hex(&dark.weight_grad)
    ));
}

#[test]
fn planned_scenario_figure_in_seconds() {
    let scenario = pipescope::default_scenario();
    let outcome = pipescope::solve(&scenario).unwrap();
    let run = Run::planned(&outcome);
    let svg = svg_figure(&run, &Palette::light());
    let compute = outcome
        .simulation
        .timeline
        .spans
        .iter()
        .filter(|s| s.lane == Lane::Compute)
        .count();
    assert_eq!(op_rects(&svg).len(), compute);
    // 100 s: the axis is in seconds, its last tick about the makespan (not 100000 ms).
    assert!(
        svg.contains("time (s)") && svg.contains("memory per device, GiB"),
        "axis"
    );
    let ticks: Vec<f64> = svg
        .split("text-anchor=\"middle\">")
        .skip(1)
        .filter_map(|t| t.split('<').next()?.parse().ok())
        .collect();
    let last = ticks.iter().copied().fold(0.0, f64::max);
    let makespan = outcome.simulation.makespan;
    assert!(
        last <= makespan && last > makespan / 2.0,
        "{ticks:?} vs {makespan}"
    );
    // Recomputation (adapipe recomputes on the first stages) is drawn and marked.
    assert!(svg.contains("class=\"op R"));
    let img = render(&svg);
    assert!(luma(pixel(&img, 2.0, 2.0)) > 2400);
}

#[cfg(feature = "tui")]
#[test]
fn a_theme_file_with_an_unknown_key_or_a_bad_colour_is_refused_with_its_place() {
    let dir = std::env::temp_dir().join(format!("pipescope-svg-theme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (text, place, needle) in [
        (
            "name = \"t\"\n[colors]\nforwrad = \"#ff0000\"\n",
            ":3:1:",
            "forward",
        ),
        (
            "name = \"t\"\n[colors]\nforward = \"nope\"\n",
            ":3:11:",
            "not a colour",
        ),
    ] {
        let file = dir.join("t.toml");
        std::fs::write(&file, text).unwrap();
        let (ok, _, err) = crate::cli_common::pipescope(&[
            "export",
            "svg",
            "--schedule",
            "1f1b",
            "-p",
            "2",
            "-m",
            "4",
            "--costs",
            "1,1,1",
            "--theme",
            file.to_str().unwrap(),
        ]);
        assert!(!ok, "{text}");
        assert!(err.contains(place) && err.contains(needle), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The planned default scenario (GPT-3 175B, 8 stages, 64 micro-batches, 100 s) as a figure,
/// with its budget.
fn planned_figure(palette: &Palette) -> (String, pipescope::Outcome) {
    let scenario = pipescope::default_scenario();
    let outcome = pipescope::solve(&scenario).unwrap();
    let extras = SvgExtras {
        memory_limit: Some(scenario.plan.memory_budget_bytes as f64),
    };
    let svg = svg_figure_with(&Run::planned(&outcome), palette, extras);
    (svg, outcome)
}

/// Every micro-batch label: (x, y, text).
fn labels(svg: &str) -> Vec<(f32, f32, String)> {
    svg.split("<text class=\"n ")
        .skip(1)
        .map(|t| {
            let tag = format!(" {}", &t[..t.find('>').unwrap()]);
            let x = attr(&tag, "x").unwrap().parse().unwrap();
            let y = attr(&tag, "y").unwrap().parse().unwrap();
            let text = t[t.find('>').unwrap() + 1..t.find('<').unwrap()].to_string();
            (x, y, text)
        })
        .collect()
}

#[test]
fn a_planned_run_has_labels_on_every_device_where_they_fit() {
    let (svg, outcome) = planned_figure(&Palette::light());
    let ops = op_rects(&svg);
    let labels = labels(&svg);
    let devices = outcome.stages.len();
    for d in 0..devices {
        let row: Vec<&OpRect> = ops
            .iter()
            .filter(|o| (o.y - 2.0 - 28.0) / 26.0 == d as f32 && !o.class.contains(" R"))
            .collect();
        assert!(!row.is_empty(), "device {d}");
        // Each op wide enough for its number carries it (centred in it).
        for o in &row {
            let text = o.mb.to_string();
            if o.w >= 5.6 * text.len() as f32 + 3.0 {
                assert!(
                    labels
                        .iter()
                        .any(|(x, _, t)| *t == text && (x - (o.x + o.w / 2.0)).abs() < 0.02),
                    "device {d}: {o:?} has no label"
                );
            }
        }
        // And most ops are wide enough: the figure widens for them.
        let labelled = row
            .iter()
            .filter(|o| o.w >= 5.6 * o.mb.to_string().len() as f32 + 3.0)
            .count();
        assert!(
            labelled * 10 >= row.len() * 9,
            "device {d}: {labelled} of {}",
            row.len()
        );
    }
}

#[test]
fn the_memory_panel_has_a_y_scale_a_budget_line_and_a_key_per_device() {
    let (svg, outcome) = planned_figure(&Palette::light());
    assert!(svg.contains(">0 GiB<"), "y scale from 0");
    assert!(
        svg.contains(">80 GiB<") || svg.contains(">70 GiB<"),
        "y scale to the budget"
    );
    assert!(svg.contains("<line class=\"budget\""), "budget line");
    assert!(svg.contains("budget 70 GiB"), "budget label");
    for d in 0..outcome.stages.len() {
        assert!(
            svg.contains(&format!("<line class=\"key\" data-device=\"{d}\"")),
            "key of device {d}"
        );
        assert!(svg.contains(&format!(">device {d}</text>")));
    }
    // Each curve has its own look (colour and dash) and the key shows the same.
    let looks: Vec<String> = svg
        .split("<polyline class=\"mem\"")
        .skip(1)
        .map(|t| {
            let tag = format!(" {}", &t[..t.find("points").unwrap()]);
            format!(
                "{:?}{:?}",
                attr(&tag, "stroke"),
                attr(&tag, "stroke-dasharray")
            )
        })
        .collect();
    let mut unique = looks.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), looks.len(), "{looks:?}");
    // The figure still parses.
    usvg::Tree::from_str(&svg, &usvg::Options::default()).unwrap();
}

#[test]
fn b_and_w_are_told_apart_by_colour_in_every_theme() {
    for theme in [
        None,
        Some(include_str!("../../themes/light.toml")),
        Some(include_str!("../../themes/dark.toml")),
        Some(include_str!("../../themes/high-contrast.toml")),
        Some(include_str!("../../themes/mono.toml")),
    ] {
        let pal = theme.map_or_else(Palette::light, |t| {
            Palette::from_theme_toml(t, "theme.toml").unwrap()
        });
        let (svg, _) = figure(ScheduleKind::ZbH1, &pal);
        let img = render(&svg);
        let ops = op_rects(&svg);
        let colour = |kind: &str| {
            let o = ops
                .iter()
                .find(|o| o.class == format!("op {kind}"))
                .unwrap();
            pixel(&img, o.x + o.w / 2.0, o.y + o.h - 2.0)
        };
        let (b, w) = (colour("B"), colour("W"));
        let far = b
            .iter()
            .zip(w)
            .map(|(x, y)| x.abs_diff(y) as u32)
            .sum::<u32>();
        assert!(far >= 90, "{theme:?}: B {b:?} and W {w:?} too close");
    }
}
