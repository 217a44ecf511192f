//! The app's state: the scenario being edited, what is selected, the latest solve results,
//! the mode (normal, compare, story), overlays, theme and status messages. No terminal types
//! live here beyond colours inside the theme.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::Scenario;
use crate::plan::Strategy;
use crate::scenario::ScheduleKind;

use super::fields::{Choices, Field};
use super::solved::Solved;
use super::theme::{BUILTIN, Theme};

/// How an export's error starts on the status bar (`e`).
pub const EXPORT_ERROR: &str = "could not export: ";
/// How a save's error starts on the status bar (`w`).
pub const SAVE_ERROR: &str = "could not save the preset: ";

/// One step of the story: the memory strategy it plans with and, for PipeOffload's steps,
/// the schedule it runs instead of the scenario's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoryStep {
    /// Memory strategy of the step.
    pub strategy: Strategy,
    /// Schedule of the step (`None`: the scenario's).
    pub schedule: Option<ScheduleKind>,
}

impl StoryStep {
    const fn strategy(strategy: Strategy) -> Self {
        Self {
            strategy,
            schedule: None,
        }
    }

    const fn offload(schedule: ScheduleKind) -> Self {
        Self {
            strategy: Strategy::Named,
            schedule: Some(schedule),
        }
    }

    /// The step's name: its schedule's for PipeOffload's steps, else its strategy's.
    pub fn name(self) -> &'static str {
        self.schedule
            .map_or(self.strategy.name(), ScheduleKind::name)
    }

    /// The scenario of this step: `base` with the step's strategy and, for PipeOffload's
    /// steps, its schedule with at least two chunks per device (and the schedule's own
    /// group and offload choice), keeping every activation but what PipeOffload recomputes
    /// to send fewer bytes ([`crate::ModelStyle::cheap_recompute_units`]). The strategy
    /// steps run a schedule that offloads by itself (`gis-offload`, `po-h`, `po-f`) as `gis`,
    /// its order with nothing on the host, so that what they say they keep stays on the
    /// device.
    pub fn scenario(self, base: &Scenario) -> Scenario {
        let mut sc = base.clone();
        sc.plan.strategy = self.strategy;
        if self.schedule.is_none() && sc.plan.schedule.offloads() {
            sc.plan.schedule = ScheduleKind::Gis;
            sc.plan.offload_chunks = None;
        }
        if let Some(kind) = self.schedule {
            sc.plan.schedule = kind;
            sc.parallel.chunks = sc.parallel.chunks.max(2);
            sc.plan.group_size = None;
            sc.plan.offload_chunks = None;
            sc.plan.recompute_units = sc
                .model
                .style
                .cheap_recompute_units()
                .iter()
                .map(|u| (*u).to_string())
                .collect();
        }
        sc
    }
}

/// The story's steps, in order (docs/model.md): the AdaPipe chain (keep everything, full
/// recomputation, adaptive recomputation, adaptive partitioning), Lynx (recomputation hidden
/// in the communication windows), then PipeOffload's answer to the same memory (keep
/// everything, on the host: half the stages, then all).
pub const STORY: [StoryStep; 7] = [
    StoryStep::strategy(Strategy::None),
    StoryStep::strategy(Strategy::Full),
    StoryStep::strategy(Strategy::Adaptive),
    StoryStep::strategy(Strategy::AdaPipe),
    StoryStep::strategy(Strategy::Lynx),
    StoryStep::offload(ScheduleKind::PoH),
    StoryStep::offload(ScheduleKind::PoF),
];

/// Which screen is shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// One scenario.
    Normal,
    /// The pinned scenario (A, [`App::pinned`]) against the one being edited (B).
    Compare,
    /// The lesson: step `step` of [`crate::tui::lesson::LESSON`].
    Lesson {
        /// Index into the lesson's schedules.
        step: usize,
    },
    /// The story: step `step` of `STORY` (none, full, adaptive, adapipe, lynx, po-h, po-f).
    Story {
        /// Index of the step.
        step: usize,
    },
}

/// What the details overlay shows (Enter, or a click on an op).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Details {
    /// A stage: its memory and time broken down.
    Stage(u32),
    /// One op of the Gantt.
    Op(crate::sim::Span),
}

/// The visible slice of the Gantt's time axis as fractions of the iteration, so that it
/// survives re-solves that change the iteration time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Left edge, 0..1.
    pub start: f64,
    /// Visible width, 0..1 (1 = the whole iteration).
    pub span: f64,
}

impl Viewport {
    /// The whole iteration.
    pub const FIT: Viewport = Viewport {
        start: 0.0,
        span: 1.0,
    };
    /// The narrowest zoom.
    pub const MIN_SPAN: f64 = 1.0 / 1024.0;

    /// Zooms by `factor` (< 1 zooms in) keeping the time at fraction `at` of the view fixed.
    pub fn zoom(self, factor: f64, at: f64) -> Viewport {
        let span = (self.span * factor).clamp(Self::MIN_SPAN, 1.0);
        let pivot = self.start + self.span * at.clamp(0.0, 1.0);
        Viewport {
            start: pivot - span * at.clamp(0.0, 1.0),
            span,
        }
        .clamped()
    }

    /// Moves by `fraction` of the visible width.
    pub fn pan(self, fraction: f64) -> Viewport {
        Viewport {
            start: self.start + self.span * fraction,
            ..self
        }
        .clamped()
    }

    fn clamped(self) -> Viewport {
        let snap = |x: f64| if x.abs() < 1e-9 { 0.0 } else { x };
        let span = if self.span > 1.0 - 1e-9 {
            1.0
        } else {
            self.span
        };
        Viewport {
            start: snap(self.start.clamp(0.0, 1.0 - span)),
            span,
        }
    }
}

/// Everything the views read and `update` changes.
#[derive(Debug, Clone)]
pub struct App {
    /// The scenario being edited (side B in compare mode).
    pub scenario: Scenario,
    /// Compare mode's side A: the scenario as it was when compare was entered.
    pub pinned: Option<Scenario>,
    /// Models and GPUs to cycle through.
    pub choices: Choices,
    /// The selected parameter.
    pub field: Field,
    /// A number being typed into `field`.
    pub typing: Option<String>,
    /// The layout field's one-line editor, while open: every key goes to it (none reaches
    /// the global shortcuts) until Enter applies it or Esc cancels it.
    pub layout_edit: Option<super::line_edit::LineEdit>,
    /// The selected stage (device).
    pub stage: u32,
    /// The Gantt's visible time range.
    pub viewport: Viewport,
    /// Normal, compare or story.
    pub mode: Mode,
    /// Whether the help overlay is open.
    pub help: bool,
    /// The details overlay, when open.
    pub details: Option<Details>,
    /// The help overlay's filter (lines that do not contain it are hidden).
    pub help_query: String,
    /// Whether keys are being typed into `help_query`.
    pub help_typing: bool,
    /// Lines the help overlay is scrolled down by.
    pub help_scroll: u16,
    /// The units picker of the `named` strategy (`u`), when open: its cursor.
    pub picker: Option<usize>,
    /// The preset picker (`P`), when open.
    pub preset_picker: Option<super::presets::PresetPicker>,
    /// The scenario presets the picker offers (built in, then the user's files).
    pub presets: Vec<super::presets::PresetChoice>,
    /// The scenario preset the scenario was loaded from (`--preset`, or a pick); `None` for
    /// one made from flags alone, so that the picker marks no preset then.
    pub preset_name: Option<String>,
    /// Whether the messages overlay (`!`: the status line's messages whole) is open.
    pub messages: bool,
    /// Lines the messages overlay is scrolled down by.
    pub messages_scroll: u16,
    /// The sweep view and the latest sweep.
    pub sweep: super::sweep::SweepState,
    /// Latest good solve of the main scenario (kept while a new one runs or fails).
    pub solved: Option<Solved>,
    /// The scenario `solved` was solved from (to mark fields whose edit did not solve).
    pub solved_scenario: Option<Scenario>,
    /// Compare mode: side A's (the pinned scenario's) result.
    pub compare: Option<Result<Solved, String>>,
    /// Story mode: one result per step of the story.
    pub story: Vec<Option<Result<Solved, String>>>,
    /// The lesson's sizes (p, m), edited with the `stages p` and `micro m` fields there.
    pub lesson_size: (u32, u32),
    /// Rows the lesson's narration is scrolled down by (PgUp PgDn, when it is cut).
    pub lesson_scroll: u16,
    /// The lesson's current step, simulated (kept in step with mode and sizes by `update`).
    pub lesson: Option<crate::tui::lesson::LessonRun>,
    /// Why the latest edit could not be solved (shown in the status bar).
    pub error: Option<String>,
    /// A passing remark for the status bar.
    pub note: Option<String>,
    /// The formats the export under way leaves out, each with why (`e` says them beside the
    /// paths it wrote).
    pub export_left_out: Vec<String>,
    /// Files that failed to reload: `file:line:column: message`, until fixed.
    pub reload_errors: BTreeMap<PathBuf, String>,
    /// `error` as it stood when the latest file error arrived: an `error` that differs is
    /// newer than every file error, and goes first on the status line.
    pub error_at_reload: Option<String>,
    /// Generation of the latest job sent to the worker.
    pub generation: u64,
    /// Whether the latest job's results are still awaited.
    pub solving: bool,
    /// Terminal size (width, height), for layout and mouse hit-testing.
    pub size: (u16, u16),
    /// The active theme.
    pub theme: Theme,
    /// Themes to cycle through (built-ins, then the user's).
    pub themes: Vec<Theme>,
    /// The preset file the scenario came from, reloaded when it changes.
    pub preset_source: Option<PathBuf>,
    /// The scenario as last read from `preset_source`: a reload keeps the fields that
    /// differ from it (the user's edits since).
    pub preset_base: Option<Scenario>,
    /// Show the measured solve time (off in snapshot tests, where it would vary).
    pub show_solve_time: bool,
    /// Whether the mouse is captured (clicks and the wheel reach the app).
    pub mouse: bool,
    /// Set when something visible changed since the last draw.
    pub dirty: bool,
    /// Set by `Quit`.
    pub quit: bool,
    /// The scenarios before the latest edits, the last one last (`U` returns to it).
    pub undo: Vec<Scenario>,
    /// Set while an action is being applied, so that the actions it leads to (a key's) are
    /// one edit to undo, not several.
    pub applying: bool,
    /// Set when the action being applied was `U`: what it changed is not an edit to undo.
    pub undid: bool,
}

impl App {
    /// A fresh app on `scenario` with the given choices and theme; nothing solved yet.
    pub fn new(scenario: Scenario, choices: Choices, theme: Theme) -> App {
        let themes = BUILTIN.iter().map(|(n, _)| Theme::builtin(n)).collect();
        App {
            scenario,
            pinned: None,
            choices,
            field: Field::Stages,
            typing: None,
            layout_edit: None,
            stage: 0,
            viewport: Viewport::FIT,
            mode: Mode::Normal,
            help: false,
            details: None,
            help_query: String::new(),
            help_typing: false,
            help_scroll: 0,
            picker: None,
            preset_picker: None,
            presets: Vec::new(),
            preset_name: None,
            messages: false,
            messages_scroll: 0,
            sweep: super::sweep::SweepState::default(),
            solved: None,
            solved_scenario: None,
            compare: None,
            story: vec![None; STORY.len()],
            lesson_size: (4, 8),
            lesson_scroll: 0,
            lesson: None,
            error: None,
            note: None,
            export_left_out: Vec::new(),
            reload_errors: BTreeMap::new(),
            error_at_reload: None,
            generation: 0,
            solving: false,
            size: (80, 24),
            theme,
            themes,
            preset_source: None,
            preset_base: None,
            show_solve_time: true,
            mouse: true,
            dirty: true,
            quit: false,
            undo: Vec::new(),
            applying: false,
            undid: false,
        }
    }

    /// The solve the main views draw: the story's current step in story mode, else the main one.
    pub fn shown(&self) -> Option<&Solved> {
        match self.mode {
            Mode::Story { step } => match self.story.get(step) {
                Some(Some(Ok(s))) => Some(s),
                _ => None,
            },
            _ => self.solved.as_ref(),
        }
    }

    /// Forgets the error of an earlier export or save (`e`, `w`) once one succeeds: it
    /// would otherwise hide the success on the status bar, an error going before a note. A
    /// solve's error stays (the scenario still does not solve).
    pub fn clear_output_error(&mut self) {
        if self
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with(EXPORT_ERROR) || e.starts_with(SAVE_ERROR))
        {
            self.error = None;
        }
    }

    /// Compare mode's side A (the pinned scenario), if solved.
    pub fn compare_solved(&self) -> Option<&Solved> {
        match (&self.mode, &self.compare) {
            (Mode::Compare, Some(Ok(s))) => Some(s),
            _ => None,
        }
    }

    /// Whether `field`'s value differs from the one the shown result was solved with
    /// (an edit the engine rejected, while the last good result stays on screen). False
    /// while a solve is running, so a normal edit does not flash.
    pub fn unsolved(&self, field: Field) -> bool {
        !self.solving
            && self
                .solved_scenario
                .as_ref()
                .is_some_and(|s| field.value(s) != field.value(&self.scenario))
    }

    /// Number of devices of what is shown (the scenario's p before the first solve).
    pub fn devices(&self) -> u32 {
        self.shown()
            .map_or(self.scenario.parallel.pp, |s| s.outcome.stages.len() as u32)
            .max(1)
    }
}
