//! Handlers for what is looked at: the selected stage, the Gantt's zoom and pan, the
//! mouse, the theme, the terminal size, and the details overlay.

use crate::sim::Lane;
use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Details, Viewport};
use crate::tui::view::layout::{self, Hit};

/// Zoom factor of one key press or wheel notch.
const ZOOM: f64 = 1.5;
/// Fraction of the visible width one pan moves.
const PAN: f64 = 0.25;

/// Applies a viewing action.
pub(super) fn view(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::PrevStage => select_stage(app, app.stage + app.devices() - 1),
        Action::NextStage => select_stage(app, app.stage + 1),
        Action::SelectStage(s) => select_stage(app, s.min(app.devices() - 1)),
        Action::ZoomIn => zoom(app, 1.0 / ZOOM, 0.5),
        Action::ZoomOut => zoom(app, ZOOM, 0.5),
        Action::ZoomAt(at, dir) => zoom(app, wheel_factor(dir), at),
        Action::PanLeft | Action::PanRight if app.viewport.span >= 1.0 => {
            app.note = Some("the whole iteration is in view: z zooms in, then H L pan".into());
        }
        Action::PanLeft => app.viewport = app.viewport.pan(-PAN),
        Action::PanRight => app.viewport = app.viewport.pan(PAN),
        Action::Fit => app.viewport = Viewport::FIT,
        Action::CycleTheme => cycle_theme(app),
        Action::ToggleMouse => return toggle_mouse(app),
        Action::Suspend => return vec![Effect::Suspend],
        Action::Click(x, y) => click(app, x, y),
        Action::Scroll(x, y, dir) => match layout::hit(app, x, y) {
            Some(Hit::Gantt { at, .. }) => zoom(app, wheel_factor(dir), at),
            _ => app.dirty = false,
        },
        Action::Resize(w, h) => app.size = (w, h),
        Action::OpStep(delta) => step_op(app, delta),
        _ => {}
    }
    Vec::new()
}

fn wheel_factor(dir: i32) -> f64 {
    if dir > 0 { 1.0 / ZOOM } else { ZOOM }
}

/// Selects stage `s` (wrapping), and moves the details to it: a stage's to the new stage,
/// an op's to the op of the new stage nearest in time.
fn select_stage(app: &mut App, s: u32) {
    app.stage = s % app.devices();
    match app.details {
        Some(Details::Stage(_)) => app.details = Some(Details::Stage(app.stage)),
        Some(Details::Op(span)) => {
            let mid = (span.start + span.end) / 2.0;
            let nearest = stage_ops(app, app.stage).into_iter().min_by(|a, b| {
                let d = |x: &crate::sim::Span| ((x.start + x.end) / 2.0 - mid).abs();
                d(a).total_cmp(&d(b))
            });
            if let Some(op) = nearest {
                show_op(app, op);
            }
        }
        None => {}
    }
}

/// The compute ops of device `stage` of what is shown, in start order.
fn stage_ops(app: &App, stage: u32) -> Vec<crate::sim::Span> {
    let Some(s) = app.shown() else {
        return Vec::new();
    };
    let mut ops: Vec<_> = s
        .outcome
        .simulation
        .timeline
        .spans
        .iter()
        .filter(|x| x.device == stage && x.lane == Lane::Compute)
        .copied()
        .collect();
    ops.sort_by(|a, b| a.start.total_cmp(&b.start));
    ops
}

/// Shows `op`'s details and pans the Gantt (keeping the zoom) so that it is in view.
fn show_op(app: &mut App, op: crate::sim::Span) {
    app.details = Some(Details::Op(op));
    let Some(makespan) = app
        .shown()
        .map(|s| s.outcome.simulation.timeline.makespan)
        .filter(|m| *m > 0.0)
    else {
        return;
    };
    let (a, b) = (op.start / makespan, op.end / makespan);
    let vp = app.viewport;
    if a < vp.start || b > vp.start + vp.span {
        // Centre it: pan by the difference between the op's middle and the view's.
        let shift = ((a + b) / 2.0 - (vp.start + vp.span / 2.0)) / vp.span;
        app.viewport = vp.pan(shift);
    }
}

/// ← → in the details: the selected stage's previous or next op; from a stage's details
/// the first (→) or last (←) op in view.
fn step_op(app: &mut App, delta: i32) {
    let ops = stage_ops(app, app.stage);
    if ops.is_empty() {
        app.note = Some("no op to show: nothing solved for this stage yet".into());
        return;
    }
    let index = match app.details {
        Some(Details::Op(span)) => {
            let at = ops.iter().position(|o| *o == span).unwrap_or(0);
            if delta > 0 {
                (at + 1).min(ops.len() - 1)
            } else {
                at.saturating_sub(1)
            }
        }
        _ => {
            let makespan = app
                .shown()
                .map_or(1.0, |s| s.outcome.simulation.timeline.makespan);
            let (t0, t1) = (
                app.viewport.start * makespan,
                (app.viewport.start + app.viewport.span) * makespan,
            );
            if delta > 0 {
                ops.iter().position(|o| o.end > t0).unwrap_or(0)
            } else {
                ops.iter()
                    .rposition(|o| o.start < t1)
                    .unwrap_or(ops.len() - 1)
            }
        }
    };
    show_op(app, ops[index]);
}

fn zoom(app: &mut App, factor: f64, at: f64) {
    app.viewport = app.viewport.zoom(factor, at);
}

fn cycle_theme(app: &mut App) {
    let n = app.themes.len().max(1);
    let i = app
        .themes
        .iter()
        .position(|t| t.name == app.theme.name)
        .unwrap_or(0);
    if let Some(t) = app.themes.get((i + 1) % n) {
        app.theme = t.clone();
        let broken = app
            .reload_errors
            .iter()
            .find(|(path, _)| path.file_stem().is_some_and(|s| *s == *app.theme.name));
        app.note = Some(match broken {
            Some((_, e)) => format!(
                "theme {}: its file did not load ({}); the last good version is shown",
                app.theme.name,
                super::super::view::status::short_paths(e)
            ),
            None => format!("theme {}", app.theme.name),
        });
    }
}

fn toggle_mouse(app: &mut App) -> Vec<Effect> {
    app.mouse = !app.mouse;
    app.note = Some(if app.mouse {
        "mouse captured: click selects, wheel zooms (v releases it)".into()
    } else {
        "mouse released: the terminal selects text (v captures it again)".into()
    });
    vec![Effect::Mouse(app.mouse)]
}

/// Enter without a number: the selected stage's details, or closes them.
pub(super) fn toggle_details(app: &mut App) -> Vec<Effect> {
    app.details = match app.details {
        Some(_) => None,
        None => Some(Details::Stage(app.stage)),
    };
    Vec::new()
}

fn click(app: &mut App, x: u16, y: u16) {
    match layout::hit(app, x, y) {
        Some(Hit::Field(f)) => {
            app.field = f;
            app.typing = None;
            app.layout_edit = None;
        }
        Some(Hit::Stage(s)) => select_stage(app, s),
        Some(Hit::Gantt { stage, at }) => {
            select_stage(app, stage);
            app.details = op_at(app, stage, at).map(Details::Op);
        }
        None => app.dirty = false,
    }
}

/// The compute op of device `stage` at fraction `at` of the visible time axis.
fn op_at(app: &App, stage: u32, at: f64) -> Option<crate::sim::Span> {
    let tl = &app.shown()?.outcome.simulation.timeline;
    let vp = app.viewport;
    let t = (vp.start + vp.span * at) * tl.makespan;
    tl.spans
        .iter()
        .find(|s| s.device == stage && s.lane == Lane::Compute && s.start <= t && t < s.end)
        .copied()
}
