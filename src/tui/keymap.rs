//! The keymap: key chords to actions, arrows and vim keys side by side. The help overlay
//! and the hint bar are generated from [`bindings`].

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::Action;

/// One binding as shown in help: the keys, and the action they trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// Keys as shown to the user.
    pub keys: &'static str,
    /// What they do.
    pub action: Action,
}

/// Every binding, in help order (one line each in the help overlay).
pub fn bindings() -> Vec<Binding> {
    let b = |keys, action| Binding { keys, action };
    vec![
        b("↑ k  ↓ j", Action::NextField),
        b("← h  → l  - +", Action::Increase),
        b("0-9 . ⌫ ⏎", Action::Type('0')),
        b("[ ]  Tab", Action::NextStage),
        b("s a m g", Action::CycleSchedule(1)),
        b("z x  H L  f", Action::ZoomIn),
        b("c  b", Action::ToggleCompare),
        b("t  n p", Action::ToggleStory),
        b("w", Action::SavePreset),
        b("T", Action::CycleTheme),
        b("e", Action::Export),
        b("mouse", Action::Click(0, 0)),
        b("v", Action::ToggleMouse),
        b("?  /", Action::ToggleHelp),
        b("Esc", Action::Close),
        b("q ^C  ^Z", Action::Quit),
    ]
}

/// The help line of a binding: the action's doc comment, or for a line that groups several
/// actions, their docs joined.
pub fn help_text(binding: &Binding) -> String {
    let join = |actions: &[Action]| {
        actions
            .iter()
            .map(Action::help)
            .collect::<Vec<_>>()
            .join("; ")
    };
    match binding.action {
        Action::NextField => join(&[Action::PrevField, Action::NextField]),
        Action::Increase => join(&[Action::Decrease, Action::Increase]),
        Action::Type(_) => join(&[Action::Type('0'), Action::Backspace, Action::Commit]),
        Action::NextStage => join(&[Action::PrevStage, Action::NextStage]),
        Action::CycleSchedule(_) => "Cycle schedule, strategy, model, GPU (capital: back)".into(),
        Action::ZoomIn => join(&[
            Action::ZoomIn,
            Action::ZoomOut,
            Action::PanLeft,
            Action::PanRight,
            Action::Fit,
        ]),
        Action::ToggleCompare => join(&[Action::ToggleCompare, Action::CycleCompare]),
        Action::ToggleStory => join(&[Action::ToggleStory, Action::StoryNext, Action::StoryPrev]),
        Action::Click(..) => join(&[Action::Click(0, 0), Action::Scroll(0, 0, 1)]),
        Action::ToggleHelp => join(&[Action::ToggleHelp, Action::FilterHelp]),
        Action::Quit => join(&[Action::Quit, Action::Suspend]),
        ref other => other.help().into(),
    }
}

/// The action of a key press, if any. Releases and repeats of non-navigation keys are
/// ignored by the caller (only presses arrive here).
pub fn action_for(key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl {
        return match key.code {
            KeyCode::Char('c') => Some(Action::Quit),
            KeyCode::Char('z') => Some(Action::Suspend),
            _ => None,
        };
    }
    let action = match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Esc => Action::Close,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('/') => Action::FilterHelp,
        KeyCode::Up | KeyCode::Char('k') => Action::PrevField,
        KeyCode::Down | KeyCode::Char('j') => Action::NextField,
        KeyCode::Left | KeyCode::Char('h') | KeyCode::Char('-') => Action::Decrease,
        KeyCode::Right | KeyCode::Char('l') | KeyCode::Char('+') | KeyCode::Char('=') => {
            Action::Increase
        }
        KeyCode::Char(c @ ('0'..='9' | '.')) => Action::Type(c),
        KeyCode::Backspace => Action::Backspace,
        KeyCode::Enter => Action::Commit,
        KeyCode::Char('[') | KeyCode::BackTab => Action::PrevStage,
        KeyCode::Char(']') | KeyCode::Tab => Action::NextStage,
        KeyCode::Char('s') => Action::CycleSchedule(1),
        KeyCode::Char('S') => Action::CycleSchedule(-1),
        KeyCode::Char('a') => Action::CycleStrategy(1),
        KeyCode::Char('A') => Action::CycleStrategy(-1),
        KeyCode::Char('m') => Action::CycleModel(1),
        KeyCode::Char('M') => Action::CycleModel(-1),
        KeyCode::Char('g') => Action::CycleGpu(1),
        KeyCode::Char('G') => Action::CycleGpu(-1),
        KeyCode::Char('z') => Action::ZoomIn,
        KeyCode::Char('x') => Action::ZoomOut,
        KeyCode::Char('H') => Action::PanLeft,
        KeyCode::Char('L') => Action::PanRight,
        KeyCode::Char('f') => Action::Fit,
        KeyCode::Char('c') => Action::ToggleCompare,
        KeyCode::Char('b') => Action::CycleCompare,
        KeyCode::Char('t') => Action::ToggleStory,
        KeyCode::Char('n') => Action::StoryNext,
        KeyCode::Char('p') => Action::StoryPrev,
        KeyCode::Char('w') => Action::SavePreset,
        KeyCode::Char('T') => Action::CycleTheme,
        KeyCode::Char('e') => Action::Export,
        KeyCode::Char('v') => Action::ToggleMouse,
        _ => return None,
    };
    Some(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn arrows_and_vim_keys_agree() {
        assert_eq!(
            action_for(key(KeyCode::Up)),
            action_for(key(KeyCode::Char('k')))
        );
        assert_eq!(
            action_for(key(KeyCode::Down)),
            action_for(key(KeyCode::Char('j')))
        );
        assert_eq!(
            action_for(key(KeyCode::Left)),
            action_for(key(KeyCode::Char('h')))
        );
        assert_eq!(
            action_for(key(KeyCode::Right)),
            action_for(key(KeyCode::Char('l')))
        );
        assert_eq!(
            action_for(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            action_for(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL)),
            Some(Action::Suspend)
        );
    }

    #[test]
    fn every_key_action_is_in_the_help() {
        let shown: Vec<String> = bindings().iter().map(help_text).collect();
        for action in [
            Action::ToggleMouse,
            Action::Suspend,
            Action::FilterHelp,
            Action::CycleTheme,
        ] {
            assert!(
                shown.iter().any(|h| h.contains(action.help())),
                "{action:?} missing from help"
            );
        }
    }

    #[test]
    fn every_binding_has_help() {
        for b in bindings() {
            assert!(!help_text(&b).is_empty());
        }
    }
}
