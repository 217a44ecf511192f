//! The SVG export rendered with resvg and checked by its pixels (light background, op
//! colours in the rows where the ops are, later chunks lighter, a dark theme dark) and by
//! its structure (one `op` rect per compute op with `data-mb`/`data-chunk`, none for legend
//! swatches, no external fonts).

#![allow(clippy::unwrap_used)]

use pipescope::{
    Lane, Palette, Run, ScheduleInput, ScheduleKind, SimCosts, Units, generate, simulate,
    svg_figure,
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
    let dark = Palette::from_theme_toml(include_str!("../../themes/dark.toml")).unwrap();
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
fn planned_scenario_figure_in_milliseconds() {
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
    assert!(svg.contains("time (ms)") && svg.contains("memory per device (GiB"));
    // Recomputation (adapipe recomputes on the first stages) is drawn and marked.
    assert!(svg.contains("class=\"op R"));
    let img = render(&svg);
    assert!(luma(pixel(&img, 2.0, 2.0)) > 2400);
}
