//! The keymap: one table of `{keys, action, description}` ([`TABLE`]) that drives both
//! the dispatch of key presses ([`action_for`]) and the help overlay ([`help_lines`]).
//! Arrows and vim keys sit side by side. To add a key, add a [`Binding`] to a line of the
//! table (or a new line): dispatch and help follow.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::Action;
use super::line_edit::LineOp;

/// A key (or gesture) a binding answers to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Key {
    /// A key without Control.
    Code(KeyCode),
    /// Control and a letter.
    Ctrl(char),
    /// Any digit or '.': the binding's action receives the character ([`Action::Type`]).
    Digit,
    /// A mouse gesture (help only: the runner turns mouse events into actions).
    Mouse(&'static str),
}

impl Key {
    /// How the key is written in help.
    pub fn label(self) -> String {
        match self {
            Key::Code(code) => match code {
                KeyCode::Up => "↑".into(),
                KeyCode::Down => "↓".into(),
                KeyCode::Left => "←".into(),
                KeyCode::Right => "→".into(),
                KeyCode::Backspace => "⌫".into(),
                KeyCode::Enter => "⏎".into(),
                KeyCode::Tab => "Tab".into(),
                KeyCode::BackTab => "⇧Tab".into(),
                KeyCode::Esc => "Esc".into(),
                KeyCode::Delete => "Del".into(),
                KeyCode::PageUp => "PgUp".into(),
                KeyCode::PageDown => "PgDn".into(),
                KeyCode::Char(' ') => "space".into(),
                KeyCode::Char(c) => c.to_string(),
                other => format!("{other:?}"),
            },
            Key::Ctrl(c) => format!("^{}", c.to_ascii_uppercase()),
            Key::Digit => "0-9 .".into(),
            Key::Mouse(what) => what.into(),
        }
    }

    /// The action `binding` gives a press of `key`, when this key matches it.
    fn matches(self, key: &KeyEvent) -> Option<Option<char>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match self {
            Key::Code(code) if !ctrl && key.code == code => Some(None),
            Key::Ctrl(c) if ctrl && key.code == KeyCode::Char(c) => Some(None),
            Key::Digit if !ctrl => match key.code {
                KeyCode::Char(c @ ('0'..='9' | '.')) => Some(Some(c)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// One row of the table: keys, the action they trigger, and its help text.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// Keys (or gestures) that trigger it.
    pub keys: &'static [Key],
    /// What they do.
    pub action: Action,
    /// Help text.
    pub description: &'static str,
}

const fn b(keys: &'static [Key], action: Action, description: &'static str) -> Binding {
    Binding {
        keys,
        action,
        description,
    }
}

use Key::{Code, Ctrl};
use KeyCode::Char;

/// Every binding, one inner slice per help line (its bindings joined on that line; a
/// binding with an empty description shares the one before it, as `S` shares `s`'s).
pub static TABLE: &[&[Binding]] = &[
    &[
        b(
            &[Code(KeyCode::Up), Code(Char('k'))],
            Action::PrevField,
            "Previous parameter",
        ),
        b(
            &[Code(KeyCode::Down), Code(Char('j'))],
            Action::NextField,
            "next parameter",
        ),
    ],
    &[
        b(
            &[Code(KeyCode::Left), Code(Char('h')), Code(Char('-'))],
            Action::Decrease,
            "Decrease the parameter (cycle back)",
        ),
        b(
            &[
                Code(KeyCode::Right),
                Code(Char('l')),
                Code(Char('+')),
                Code(Char('=')),
            ],
            Action::Increase,
            "increase (cycle on)",
        ),
    ],
    &[
        b(&[Key::Digit], Action::Type('0'), "Type a number"),
        b(
            &[Code(KeyCode::Backspace)],
            Action::Backspace,
            "delete a digit",
        ),
        b(
            &[Code(KeyCode::Enter)],
            Action::Commit,
            "apply it, or (not typing) details",
        ),
    ],
    &[
        b(
            &[Code(Char('[')), Code(KeyCode::BackTab)],
            Action::PrevStage,
            "Previous stage (scrolls it into view)",
        ),
        b(
            &[Code(Char(']')), Code(KeyCode::Tab)],
            Action::NextStage,
            "next stage",
        ),
    ],
    &[
        b(
            &[Code(Char('s'))],
            Action::CycleSchedule(1),
            "Cycle schedule",
        ),
        b(&[Code(Char('S'))], Action::CycleSchedule(-1), ""),
        b(&[Code(Char('a'))], Action::CycleStrategy(1), "strategy"),
        b(&[Code(Char('A'))], Action::CycleStrategy(-1), ""),
        b(&[Code(Char('m'))], Action::CycleModel(1), "model"),
        b(&[Code(Char('M'))], Action::CycleModel(-1), ""),
        b(&[Code(Char('g'))], Action::CycleGpu(1), "GPU"),
        b(&[Code(Char('G'))], Action::CycleGpu(-1), "capital: back"),
    ],
    &[
        b(&[Code(Char('z'))], Action::ZoomIn, "Gantt: zoom in"),
        b(&[Code(Char('x'))], Action::ZoomOut, "out"),
        b(&[Code(Char('H'))], Action::PanLeft, "pan earlier"),
        b(&[Code(Char('L'))], Action::PanRight, "later"),
        b(&[Code(Char('f'))], Action::Fit, "fit all"),
    ],
    &[
        b(
            &[Code(Char('c'))],
            Action::ToggleCompare,
            "Compare: pin A, edit B",
        ),
        b(&[Code(Char('b'))], Action::CycleCompare, "B's strategy"),
    ],
    &[
        b(
            &[Code(Char('t'))],
            Action::ToggleStory,
            "Story, 7 steps: none → full → adaptive → adapipe → lynx → po-h → po-f",
        ),
        b(&[Code(Char('n'))], Action::StoryNext, "next"),
        b(&[Code(Char('p'))], Action::StoryPrev, "previous"),
    ],
    &[b(
        &[Code(Char('i'))],
        Action::ToggleLesson,
        "Lesson: GPipe … DualPipe-V, formulas vs simulated (n p)",
    )],
    &[b(
        &[Code(Char('o'))],
        Action::OpenSweep,
        "Sweep: every layout on these GPUs, its front and ranking",
    )],
    &[b(
        &[Code(Char('P'))],
        Action::OpenPresets,
        "Presets: pick a scenario, or a model or GPU alone (type to filter, ⏎ load)",
    )],
    &[b(
        &[Code(Char('u'))],
        Action::TogglePicker,
        "Units the named strategy recomputes: a picker",
    )],
    &[b(
        &[Code(Char('w'))],
        Action::SavePreset,
        "Save the scenario as a preset (user presets folder)",
    )],
    &[b(
        &[Code(Char('e'))],
        Action::Export,
        "Export what is shown, 4 formats (to export_dir, or here)",
    )],
    &[b(
        &[Code(Char('U'))],
        Action::Undo,
        "Undo the last edit (again: the one before)",
    )],
    &[b(
        &[Code(Char('T'))],
        Action::CycleTheme,
        "Cycle the colour theme",
    )],
    &[
        b(
            &[Key::Mouse("click")],
            Action::Click(0, 0),
            "Click: field, stage, op details",
        ),
        b(
            &[Key::Mouse("wheel")],
            Action::Scroll(0, 0, 1),
            "wheel zooms the Gantt",
        ),
    ],
    &[b(
        &[Code(Char('v'))],
        Action::ToggleMouse,
        "Mouse off (the terminal selects text) or back on",
    )],
    &[b(
        &[Code(Char('!'))],
        Action::ToggleMessages,
        "Messages: the status line whole (reload errors, why it does not fit)",
    )],
    &[
        b(
            &[Code(Char('?'))],
            Action::ToggleHelp,
            "Show or hide this help",
        ),
        b(&[Code(Char('/'))], Action::FilterHelp, "/ filters it"),
    ],
    &[b(
        &[Code(KeyCode::Esc)],
        Action::Close,
        "Close help/details, cancel typing, leave compare/story",
    )],
    &[
        b(
            &[Code(Char('q')), Ctrl('c')],
            Action::Quit,
            "Quit pipescope",
        ),
        b(&[Ctrl('z')], Action::Suspend, "^Z suspends (fg resumes)"),
    ],
];

/// Keys of the sweep view, tried before [`TABLE`] while it is open: ↑↓ pick a row, so Tab
/// and ⇧Tab (the stages' keys elsewhere; the view shows no stage) pick the parameter that
/// ← → and digits edit without leaving the view (the other keys keep their meaning there:
/// an edit cancels the sweep and sweeps the new scenario).
pub static SWEEP_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Code(Char('k'))],
        Action::SweepSelect(-1),
        "Sweep view: ↑↓ pick a configuration",
    ),
    b(
        &[Code(KeyCode::Down), Code(Char('j'))],
        Action::SweepSelect(1),
        "",
    ),
    b(&[Code(KeyCode::PageUp)], Action::SweepSelect(-10), ""),
    b(&[Code(KeyCode::PageDown)], Action::SweepSelect(10), ""),
    b(
        &[Code(KeyCode::Enter)],
        Action::SweepLoad,
        "⏎ loads it into the explorer",
    ),
    b(
        &[Code(KeyCode::Tab)],
        Action::NextField,
        "Tab ⇧Tab pick the parameter (← → or digits edit it; it sweeps again)",
    ),
    b(&[Code(KeyCode::BackTab)], Action::PrevField, ""),
];

/// Keys of the help overlay, tried before [`TABLE`] while it is open.
pub static HELP_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Code(Char('k'))],
        Action::HelpScroll(-1),
        "Help: ↑↓ PgUp PgDn scroll it",
    ),
    b(
        &[Code(KeyCode::Down), Code(Char('j'))],
        Action::HelpScroll(1),
        "",
    ),
    b(&[Code(KeyCode::PageUp)], Action::HelpScroll(-10), ""),
    b(&[Code(KeyCode::PageDown)], Action::HelpScroll(10), ""),
];

/// Keys of the messages overlay, tried before [`TABLE`] while it is open.
pub static MESSAGE_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Code(Char('k'))],
        Action::MessagesScroll(-1),
        "Messages: ↑↓ PgUp PgDn scroll them",
    ),
    b(
        &[Code(KeyCode::Down), Code(Char('j'))],
        Action::MessagesScroll(1),
        "",
    ),
    b(&[Code(KeyCode::PageUp)], Action::MessagesScroll(-10), ""),
    b(&[Code(KeyCode::PageDown)], Action::MessagesScroll(10), ""),
];

/// Keys of the lesson, tried before [`TABLE`] while it is open.
pub static LESSON_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::PageUp)],
        Action::LessonScroll(-3),
        "Lesson: PgUp PgDn scroll a narration taller than its panel",
    ),
    b(&[Code(KeyCode::PageDown)], Action::LessonScroll(3), ""),
];

/// Keys of the details overlay, tried before [`TABLE`] while it is open.
pub static DETAILS_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Left), Code(Char('h'))],
        Action::OpStep(-1),
        "Details (⏎): ← → step through the stage's ops, [ ] other stages",
    ),
    b(
        &[Code(KeyCode::Right), Code(Char('l'))],
        Action::OpStep(1),
        "",
    ),
];

/// Keys of the layout field's one-line editor (⏎ on the field opens it). While it is open
/// these are the only keys with a meaning, besides ^C and ^Z: any other character is typed
/// into the line (`q` included), and the rest do nothing.
pub static EDITOR_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Left)],
        Action::EditLine(LineOp::Left),
        "Layout editor (⏎ on layout): ← → Home End ^A ^E move, ⌫ Del delete, ^U clears, ⏎ applies (empty: the partition's split), Esc cancels",
    ),
    b(&[Code(KeyCode::Right)], Action::EditLine(LineOp::Right), ""),
    b(
        &[Code(KeyCode::Home), Ctrl('a')],
        Action::EditLine(LineOp::Home),
        "",
    ),
    b(
        &[Code(KeyCode::End), Ctrl('e')],
        Action::EditLine(LineOp::End),
        "",
    ),
    b(
        &[Code(KeyCode::Backspace)],
        Action::EditLine(LineOp::Backspace),
        "",
    ),
    b(
        &[Code(KeyCode::Delete)],
        Action::EditLine(LineOp::Delete),
        "",
    ),
    b(&[Ctrl('u')], Action::EditLine(LineOp::Clear), ""),
    b(&[Code(KeyCode::Enter)], Action::Commit, ""),
    b(&[Code(KeyCode::Esc)], Action::Close, ""),
];

/// Keys of the units picker, tried before [`TABLE`] while it is open.
pub static PICKER_KEYS: &[Binding] = &[
    b(
        &[Code(KeyCode::Up), Code(Char('k'))],
        Action::PickerMove(-1),
        "Units picker (u): ↑↓ move, space or ⏎ recompute the unit or keep it",
    ),
    b(
        &[Code(KeyCode::Down), Code(Char('j'))],
        Action::PickerMove(1),
        "",
    ),
    b(
        &[Code(Char(' ')), Code(KeyCode::Enter)],
        Action::PickerToggle,
        "",
    ),
];

/// Every binding, in table order.
pub fn bindings() -> impl Iterator<Item = &'static Binding> {
    TABLE.iter().flat_map(|line| line.iter())
}

/// One help line: its keys and its description.
#[derive(Debug, Clone, PartialEq)]
pub struct HelpLine {
    /// Keys of the line's bindings (a binding's keys separated by a space, bindings by two).
    pub keys: String,
    /// The bindings' descriptions joined by "; ".
    pub text: String,
}

/// The help overlay's lines, generated from [`TABLE`], then one line for each context
/// table ([`SWEEP_KEYS`], [`HELP_KEYS`], [`MESSAGE_KEYS`], [`LESSON_KEYS`],
/// [`DETAILS_KEYS`], [`PICKER_KEYS`], [`EDITOR_KEYS`]).
pub fn help_lines() -> Vec<HelpLine> {
    TABLE
        .iter()
        .copied()
        .chain([
            SWEEP_KEYS,
            HELP_KEYS,
            MESSAGE_KEYS,
            LESSON_KEYS,
            DETAILS_KEYS,
            PICKER_KEYS,
            EDITOR_KEYS,
        ])
        .map(|line| HelpLine {
            keys: line
                .iter()
                .map(|b| {
                    b.keys
                        .iter()
                        .map(|k| k.label())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("  "),
            text: line
                .iter()
                .map(|b| b.description)
                .filter(|d| !d.is_empty())
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect()
}

/// The action of a key press, if any (releases give none).
pub fn action_for(key: KeyEvent) -> Option<Action> {
    action_in(bindings(), key)
}

/// The action of a key press in a context table (e.g. [`SWEEP_KEYS`]), if it binds it.
pub fn context_action_for(table: &'static [Binding], key: KeyEvent) -> Option<Action> {
    action_in(table.iter(), key)
}

fn action_in<'a>(mut all: impl Iterator<Item = &'a Binding>, key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    all.find_map(|b| {
        b.keys.iter().find_map(|k| {
            k.matches(&key).map(|typed| match typed {
                Some(c) => Action::Type(c),
                None => b.action.clone(),
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn arrows_and_vim_keys_agree() {
        let pairs = [
            (KeyCode::Up, 'k'),
            (KeyCode::Down, 'j'),
            (KeyCode::Left, 'h'),
            (KeyCode::Right, 'l'),
        ];
        for (arrow, vim) in pairs {
            assert!(action_for(key(arrow)).is_some());
            assert_eq!(action_for(key(arrow)), action_for(key(Char(vim))));
        }
        let ctrl = |c| KeyEvent::new(Char(c), KeyModifiers::CONTROL);
        assert_eq!(action_for(ctrl('c')), Some(Action::Quit));
        assert_eq!(action_for(ctrl('z')), Some(Action::Suspend));
        assert_eq!(action_for(ctrl('q')), None);
        assert_eq!(action_for(key(Char('7'))), Some(Action::Type('7')));
        assert_eq!(action_for(key(Char('S'))), Some(Action::CycleSchedule(-1)));
    }

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen: Vec<Key> = Vec::new();
        for b in bindings() {
            for k in b.keys {
                assert!(!seen.contains(k), "{k:?} bound twice");
                seen.push(*k);
            }
        }
    }

    #[test]
    fn every_binding_is_in_the_help_with_its_keys() {
        let lines = help_lines();
        assert_eq!(lines.len(), TABLE.len() + 7);
        for b in bindings()
            .chain(SWEEP_KEYS)
            .chain(HELP_KEYS)
            .chain(MESSAGE_KEYS)
            .chain(LESSON_KEYS)
            .chain(DETAILS_KEYS)
            .chain(PICKER_KEYS)
            .chain(EDITOR_KEYS)
        {
            assert!(lines.iter().any(|l| l.text.contains(b.description)
                && b.keys.iter().all(|k| l.keys.contains(&k.label()))));
        }
        assert_eq!(lines[0].keys, "↑ k  ↓ j");
        assert!(TABLE.iter().all(|l| !l[0].description.is_empty()));
    }

    #[test]
    fn context_keys_are_each_bound_once_in_their_table() {
        for table in [
            SWEEP_KEYS,
            HELP_KEYS,
            MESSAGE_KEYS,
            LESSON_KEYS,
            DETAILS_KEYS,
            PICKER_KEYS,
            EDITOR_KEYS,
        ] {
            let mut seen: Vec<Key> = Vec::new();
            for b in table {
                for k in b.keys {
                    assert!(!seen.contains(k), "{k:?} bound twice");
                    seen.push(*k);
                }
            }
        }
        let enter = key(KeyCode::Enter);
        assert_eq!(
            context_action_for(SWEEP_KEYS, enter),
            Some(Action::SweepLoad)
        );
        assert_eq!(
            context_action_for(HELP_KEYS, key(Char('j'))),
            Some(Action::HelpScroll(1))
        );
        assert_eq!(context_action_for(HELP_KEYS, key(Char('q'))), None);
        assert_eq!(action_for(key(Char('o'))), Some(Action::OpenSweep));
    }
}
