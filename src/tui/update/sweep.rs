//! Handlers of the sweep view: opening it (which starts a sweep unless the latest answer
//! is for the same inputs), moving the selection, loading a configuration, the worker's
//! reports, and cancelling the sweep when an edit changes what it answers.

use super::resolve;
use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Mode};
use crate::tui::sweep::{Previous, SweepEvent, SweepInputs, SweepJob};

/// `o`, the selection keys and Enter of the sweep view.
pub(super) fn sweep(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::OpenSweep => toggle(app),
        Action::SweepSelect(delta) => {
            let n = app.sweep.lines().len();
            let i = i64::try_from(app.sweep.selected).unwrap_or(0) + i64::from(delta);
            app.sweep.selected =
                usize::try_from(i.clamp(0, n.saturating_sub(1) as i64)).unwrap_or(0);
            Vec::new()
        }
        Action::SweepLoad => load(app),
        _ => Vec::new(),
    }
}

fn toggle(app: &mut App) -> Vec<Effect> {
    if app.sweep.open {
        app.sweep.open = false;
        return Vec::new();
    }
    if app.mode != Mode::Normal {
        app.note = Some("the sweep opens from the main view: Esc first".into());
        return Vec::new();
    }
    app.sweep.open = true;
    app.details = None;
    ensure(app)
}

/// Starts a sweep of the current inputs unless one is running for them or answered them.
pub(super) fn ensure(app: &mut App) -> Vec<Effect> {
    let inputs = SweepInputs::of(&app.scenario);
    let s = &app.sweep;
    if s.inputs.as_ref() == Some(&inputs) && (s.running || s.answer().is_some()) {
        return Vec::new();
    }
    start(app, inputs)
}

fn start(app: &mut App, inputs: SweepInputs) -> Vec<Effect> {
    let s = &mut app.sweep;
    s.generation += 1;
    if s.inputs.is_some() {
        s.undo.clone_from(&s.inputs);
    }
    // The finished answer stays on screen, dimmed, until the new one arrives (an earlier
    // previous answer stays when the sweep replaced had not answered yet).
    if let (Some(Ok(r)), Some(old)) = (s.result.take(), s.inputs.take())
        && !r.cancelled
    {
        s.previous = Some(Previous {
            inputs: old,
            result: r,
        });
    }
    if s.previous.as_ref().is_some_and(|p| p.inputs == inputs) {
        // Edited back to what the previous answer answers: it is the answer again.
        let was_running = s.running;
        if let Some(p) = s.previous.take() {
            s.result = Some(Ok(p.result));
        }
        s.inputs = Some(inputs);
        s.running = false;
        s.forming.clear();
        return if was_running {
            vec![Effect::CancelSweep]
        } else {
            Vec::new()
        };
    }
    s.running = true;
    s.reused = None;
    s.forming.clear();
    s.inputs = Some(inputs.clone());
    s.progress = (0, 0);
    s.result = None;
    if s.previous.is_none() {
        s.selected = 0;
    }
    vec![Effect::Sweep(Box::new(SweepJob {
        generation: s.generation,
        inputs,
    }))]
}

/// After any action: an edit that changed the sweep's inputs cancels the running sweep;
/// with the view open, the new inputs are swept.
pub(super) fn after_edit(app: &mut App) -> Vec<Effect> {
    let s = &app.sweep;
    if !(s.open || s.running) {
        return Vec::new();
    }
    let inputs = SweepInputs::of(&app.scenario);
    if s.inputs.as_ref() == Some(&inputs) {
        return Vec::new();
    }
    if s.running {
        app.sweep.cancelled += 1;
    }
    if app.sweep.open {
        // Starting the new sweep cancels the old one.
        return start(app, inputs);
    }
    if app.sweep.running {
        app.sweep.running = false;
        app.sweep.forming.clear();
        app.sweep.result = None;
        app.note = Some("sweep cancelled by the edit (o sweeps again)".into());
        return vec![Effect::CancelSweep];
    }
    Vec::new()
}

/// After any action: with the sweep view open, what the next keystroke most likely asks
/// for is swept ahead (the focused parameter one step up and one down, then the inputs
/// before the latest edit); closed, or while a number is typed, nothing is. Said to the
/// worker only when the list changes.
pub(super) fn ahead(app: &mut App) -> Vec<Effect> {
    let wanted = if app.sweep.open && app.typing.is_none() && app.layout_edit.is_none() {
        neighbours(app)
    } else {
        Vec::new()
    };
    if wanted == app.sweep.ahead {
        return Vec::new();
    }
    app.sweep.ahead.clone_from(&wanted);
    vec![Effect::SweepAhead(wanted)]
}

/// The sweep inputs one step of the focused parameter away (up, then down), then the
/// inputs before the latest edit: each once, none equal to the current inputs.
fn neighbours(app: &App) -> Vec<SweepInputs> {
    let now = SweepInputs::of(&app.scenario);
    let mut out: Vec<SweepInputs> = Vec::new();
    let stepped = [1, -1].map(|delta| {
        let mut sc = app.scenario.clone();
        crate::tui::fields::step(&mut sc, app.field, delta, &app.choices);
        SweepInputs::of(&sc)
    });
    for inputs in stepped.into_iter().chain(app.sweep.undo.clone()) {
        if inputs != now && !out.contains(&inputs) {
            out.push(inputs);
        }
    }
    out
}

/// Enter: the selected configuration becomes the scenario; back to the main view.
fn load(app: &mut App) -> Vec<Effect> {
    let Some(row) = app.sweep.selected_row() else {
        app.note = Some(if app.sweep.previous.is_some() {
            "nothing to load yet: the dimmed answer is for the old settings, the new sweep is still running".into()
        } else {
            "nothing to load yet: the sweep is still running".into()
        });
        return Vec::new();
    };
    let c = row.config;
    // The other strategies of the line (same time and memory).
    let same: Vec<&str> = app
        .sweep
        .lines()
        .get(app.sweep.selected)
        .and_then(|l| app.sweep.answer().map(|r| (l.clone(), r)))
        .map(|(l, r)| {
            l.iter()
                .skip(1)
                .map(|&i| r.rows[i].config.strategy.name())
                .collect()
        })
        .unwrap_or_default();
    let also = if same.is_empty() {
        String::new()
    } else {
        format!(" (as fast and as small: {})", same.join(", "))
    };
    app.scenario = crate::sweep::scenario_for(&app.scenario, &c);
    // The sweep timed every line on its own split (it drops the layout), so a hand-written
    // layout would give another figure than the line picked, or none at all where its stage
    // count is not the line's p x chunks: the loaded scenario leaves it out, and says so.
    let dropped = if app.scenario.plan.layout.take().is_some() {
        "; layout dropped: the sweep times its own split"
    } else {
        ""
    };
    let experts = if c.ep > 1 || c.etp > 1 {
        format!(" ep {} etp {}", c.ep, c.etp)
    } else {
        String::new()
    };
    app.sweep.open = false;
    app.note = Some(format!(
        "loaded t {} cp {} p {} d {}{experts} b {} m {} chunks {} sp {} zero {} {} {} {}{also}{dropped}",
        c.t,
        c.cp,
        c.p,
        c.d,
        c.b,
        c.m,
        c.chunks,
        on(c.sp),
        c.zero.level(),
        c.precision.name(),
        c.schedule.name(),
        c.strategy.name()
    ));
    app.stage = app.stage.min(c.p.saturating_sub(1));
    resolve(app)
}

fn on(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// A report of the sweep worker (stale generations are dropped).
pub(super) fn event(app: &mut App, e: SweepEvent) {
    match e {
        SweepEvent::Progress {
            generation,
            done,
            total,
        } if generation == app.sweep.generation && app.sweep.running => {
            app.sweep.progress = (done, total);
        }
        SweepEvent::Forming { generation, front }
            if generation == app.sweep.generation && app.sweep.running =>
        {
            app.sweep.forming = front;
        }
        SweepEvent::Reused {
            generation,
            reused,
            solved,
        } if generation == app.sweep.generation => {
            app.sweep.reused = Some((reused, solved));
        }
        SweepEvent::Done { generation, result } if generation == app.sweep.generation => {
            app.sweep.running = false;
            // The provisional front gives way to the answer (or to nothing, when cut short).
            app.sweep.forming.clear();
            let total = app.sweep.progress.1;
            app.sweep.progress = (total, total);
            // A complete answer (or an error) replaces the previous one; a cancelled sweep
            // leaves it on screen.
            if !matches!(&result, Ok(r) if r.cancelled) {
                app.sweep.previous = None;
            }
            app.sweep.result = Some(result);
            app.sweep.selected = 0;
        }
        _ => app.dirty = false,
    }
}
