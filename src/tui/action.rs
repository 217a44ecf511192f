//! Everything that can happen to the app, as one enum, and what `update` asks the runner
//! to do in return. Each variant's doc comment is its help text ([`Action::help`]), so the
//! help overlay is generated from the same source as the code.

use std::path::PathBuf;

use crate::Scenario;

use super::fields::Field;
use super::preset_io::ParsedPreset;
use super::solved::Solved;
use super::sweep::{SweepEvent, SweepInputs, SweepJob};
use super::theme::Theme;

macro_rules! actions {
    ($( #[doc = $doc:literal] $name:ident $( ( $($ty:ty),* ) )? , )*) => {
        /// An input to [`super::update::update`]: a key's meaning, a mouse gesture, or an
        /// event from a worker thread.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Action {
            $( #[doc = $doc] $name $( ( $($ty),* ) )? , )*
        }

        impl Action {
            /// One line of help: the variant's doc comment.
            pub fn help(&self) -> &'static str {
                match self {
                    $( Action::$name { .. } => $doc.trim(), )*
                }
            }
        }
    };
}

actions! {
    /// Quit pipescope
    Quit,
    /// Close help, cancel typing, leave compare/story
    Close,
    /// Show or hide this help
    ToggleHelp,
    /// / filters it
    FilterHelp,
    /// A key press (internal): typed into the help filter, or mapped by the keymap
    Key(crossterm::event::KeyEvent),
    /// Previous parameter
    PrevField,
    /// next parameter
    NextField,
    /// Select a parameter (mouse)
    SelectField(Field),
    /// Decrease the parameter (cycle back)
    Decrease,
    /// increase (cycle on)
    Increase,
    /// Type a number
    Type(char),
    /// delete a digit
    Backspace,
    /// apply it
    Commit,
    /// An edit of the layout editor's line (cursor moves, deletions)
    EditLine(super::line_edit::LineOp),
    /// A character typed into the layout editor
    InsertChar(char),
    /// Text pasted (bracketed paste): the layout editor inserts it at the cursor, elsewhere it is ignored
    Paste(String),
    /// Previous stage (memory row, unit grid)
    PrevStage,
    /// next stage
    NextStage,
    /// Select a stage (mouse)
    SelectStage(u32),
    /// Cycle the schedule (+1 forward, -1 back)
    CycleSchedule(i32),
    /// Cycle the memory strategy
    CycleStrategy(i32),
    /// Cycle the model preset
    CycleModel(i32),
    /// Cycle the GPU preset
    CycleGpu(i32),
    /// Gantt: zoom in
    ZoomIn,
    /// out
    ZoomOut,
    /// Zoom in (+) or out (-) keeping the time under a column fraction (mouse wheel)
    ZoomAt(f64, i32),
    /// pan earlier
    PanLeft,
    /// later
    PanRight,
    /// fit all
    Fit,
    /// Compare with another strategy side by side
    ToggleCompare,
    /// cycle it
    CycleCompare,
    /// Story, 7 steps: none → full → adaptive → adapipe → lynx → po-h → po-f
    ToggleStory,
    /// next
    StoryNext,
    /// previous
    StoryPrev,
    /// Lesson through the schedules (equal costs)
    ToggleLesson,
    /// Sweep: every layout on these GPUs, the front and the ranking
    OpenSweep,
    /// Sweep view: move the selection by this many rows
    SweepSelect(i32),
    /// Sweep view: load the selected configuration into the explorer
    SweepLoad,
    /// Help: scroll by this many lines
    HelpScroll(i32),
    /// Show the status line's messages whole (reload errors, why the plan does not fit)
    ToggleMessages,
    /// Messages: scroll by this many lines
    MessagesScroll(i32),
    /// Lesson: scroll its narration by this many lines
    LessonScroll(i32),
    /// Named strategy: pick the units it recomputes
    TogglePicker,
    /// Presets: scenarios, models, GPUs (type to filter, ⏎ loads)
    OpenPresets,
    /// Picker: move the cursor by this many units
    PickerMove(i32),
    /// Picker: recompute the unit under the cursor, or keep it again
    PickerToggle,
    /// Details: the stage's next (+1) or previous (-1) op (from a stage: the first or last in view)
    OpStep(i32),
    /// The sweep worker reported (internal)
    Sweep(Box<SweepEvent>),
    /// Save the scenario as a preset (user presets folder)
    SavePreset,
    /// Cycle the colour theme
    CycleTheme,
    /// Export what is shown (4 formats) to the current folder
    Export,
    /// Mouse off (the terminal selects text) or back on
    ToggleMouse,
    /// ^Z suspends (fg resumes)
    Suspend,
    /// Undo the last edit of the scenario
    Undo,
    /// Click selects a parameter or stage
    Click(u16, u16),
    /// wheel zooms the Gantt
    Scroll(u16, u16, i32),
    /// The terminal now has (width, height)
    Resize(u16, u16),
    /// Solve results arrived (internal)
    Solved(JobResult),
    /// A watched preset or theme file changed (internal)
    Reloaded(Box<Reload>),
    /// A preset file was written (internal): its path, or the error
    Saved(Result<PathBuf, String>),
    /// Export files were written (internal): their paths, or the error
    Exported(Result<Vec<PathBuf>, String>),
}

/// What a [`Job`] solves besides the main scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobKind {
    /// Only the main scenario.
    Main,
    /// The main scenario, then the compare side.
    Compare,
    /// The main scenario, then the story's four steps.
    Story,
}

/// A batch of scenarios to solve, tagged with the generation of the edit that asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Increases with every edit; results of older generations are dropped.
    pub generation: u64,
    /// What the scenarios after the first are for.
    pub kind: JobKind,
    /// Main scenario first.
    pub scenarios: Vec<Scenario>,
}

/// The worker's answer to a [`Job`].
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    /// The job's generation.
    pub generation: u64,
    /// The job's kind.
    pub kind: JobKind,
    /// One result per scenario, in the job's order.
    pub results: Vec<Result<Solved, String>>,
}

/// A file the watcher parsed after it changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Reload {
    /// A preset file: what it holds, or `file:line:column: message`.
    Preset(PathBuf, Result<Box<ParsedPreset>, String>),
    /// A theme file.
    Theme(PathBuf, Result<Box<Theme>, String>),
    /// The UI's settings file (`config.toml` at the top of the config folder, not a
    /// preset): whether it still reads, or `file:line:column: message`.
    Settings(PathBuf, Result<(), String>),
    /// A file that was read before is gone; for a theme file, the name of the theme it held.
    Removed(PathBuf, Option<String>),
}

/// What the runner must do after an update (the update itself does no I/O).
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Hand this job to the solver worker (replacing any pending one).
    Solve(Job),
    /// Write `text` to the user's presets folder as `file_name`, atomically.
    Save {
        /// File name inside the presets folder.
        file_name: String,
        /// TOML text.
        text: String,
    },
    /// Write these `(file name, text)` exports into the export folder, never replacing a
    /// file (numbered names `-2`, `-3` ... when the names are taken).
    Export(Vec<(String, String)>),
    /// Start this sweep on the sweep worker (cancelling the one running).
    Sweep(Box<SweepJob>),
    /// Cancel the running sweep.
    CancelSweep,
    /// Sweep these inputs ahead, most likely first, while no asked-for sweep runs (the
    /// inputs the next keystroke most likely asks for); an empty list stops sweeping ahead.
    SweepAhead(Vec<SweepInputs>),
    /// Leave the app.
    Quit,
    /// Capture the mouse (true) or hand it back to the terminal (false).
    Mouse(bool),
    /// Restore the terminal, stop the process (SIGTSTP), and re-enter the TUI on resume.
    Suspend,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_the_doc_comment() {
        assert_eq!(Action::Quit.help(), "Quit pipescope");
        assert_eq!(Action::Scroll(0, 0, 1).help(), "wheel zooms the Gantt");
    }
}
