//! Panel titles that are wider than their border: what is cut says so with an ellipsis,
//! so that a cut title never passes for a whole one.

use crate::tui_common;

use pipescope::tui::Action;
use tui_common::{act, render, solved_app};

/// The story's steps, as the title names them (README: none → full → adaptive → adapipe →
/// lynx, then po-h → po-f).
const STORY: [&str; 7] = [
    "none", "full", "adaptive", "adapipe", "lynx", "po-h", "po-f",
];

/// The story panel's title row (the row that holds the `none` or `…` step list).
fn story_title(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(" → "))
        .unwrap_or_default()
        .to_string()
}

/// At 80 columns the seven steps do not fit: the first step showed `… lynx  →  p┐`, the
/// later steps cut off mid-name with nothing to say more follow.
#[test]
fn the_story_title_marks_the_steps_it_leaves_out_at_every_step_and_width() {
    for (w, h) in [(60, 18), (80, 24), (100, 30), (200, 60)] {
        let mut app = solved_app("gpt3-175b-16k");
        act(&mut app, Action::ToggleStory);
        for (step, current) in STORY.iter().enumerate() {
            let screen = render(&mut app, w, h).to_string();
            let title = story_title(&screen);
            assert!(
                title.contains(&format!(" {current} ")),
                "{w}x{h} step {step}: {title}"
            );
            // Every step is either named whole or stands behind an ellipsis.
            let first = STORY.iter().position(|s| title.contains(&format!(" {s} ")));
            let last = STORY
                .iter()
                .rposition(|s| title.contains(&format!(" {s} ")));
            let (first, last) = (first.unwrap(), last.unwrap());
            assert_eq!(
                first > 0,
                title.contains("… →"),
                "{w}x{h} step {step}: {title}"
            );
            assert_eq!(
                last + 1 < STORY.len(),
                title.contains("→ …"),
                "{w}x{h} step {step}: {title}"
            );
            // No step is cut in the middle of its name: the title ends on the border.
            let inner = title.trim_end_matches(['"', '┐', '─', ' ']);
            assert!(
                inner.ends_with(STORY[last]) || inner.ends_with('…'),
                "{w}x{h} step {step}: {title}"
            );
            act(&mut app, Action::StoryNext);
        }
    }
}

/// Rows of `screen` where a border's top-right corner follows a title's character: a title
/// the border cut mid-word (`B (schedule 1f1b→interleaved, chu┐`), with nothing to say so.
fn cut_titles(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .windows(2)
                .any(|w| w[1] == '┐' && !matches!(w[0], ' ' | '─' | '…' | '┐' | '┬'))
        })
        .map(str::to_string)
        .collect()
}

/// Every panel's title that does not fit its border ends in "…": at 60x18 compare's B title
/// (`B (schedule 1f1b→interleaved, chu┐`) and the lesson's memory panel
/// (`peak chunk-activations · s0–s0 of┐`) were cut mid-word.
#[test]
fn panel_titles_cut_by_their_border_end_in_an_ellipsis() {
    for (w, h) in [(60, 18), (64, 20), (80, 24), (120, 40)] {
        let mut app = solved_app("gpt3-175b-16k");
        let screen = render(&mut app, w, h).to_string();
        assert!(cut_titles(&screen).is_empty(), "{w}x{h} main\n{screen}");
        act(&mut app, Action::ToggleCompare);
        act(&mut app, Action::CycleSchedule(1));
        let screen = render(&mut app, w, h).to_string();
        assert!(cut_titles(&screen).is_empty(), "{w}x{h} compare\n{screen}");
        act(&mut app, Action::ToggleCompare);
        act(&mut app, Action::ToggleLesson);
        for step in 0..12 {
            let screen = render(&mut app, w, h).to_string();
            assert!(
                cut_titles(&screen).is_empty(),
                "{w}x{h} lesson step {step}\n{screen}"
            );
            act(&mut app, Action::StoryNext);
        }
    }
}

/// The params panel's count of the fields above (`↑8 more`) wrote over the end of its title
/// in compare at 60x18 (`params (B: e ↑8 more ┐`): where both do not fit, the title is the
/// short one, and the count stays.
#[test]
fn the_params_title_gives_way_to_the_count_of_fields_above() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::CycleSchedule(1));
    for (w, h) in [(60, 18), (80, 24), (200, 60)] {
        let screen = render(&mut app, w, h).to_string();
        let top = screen.lines().nth(2).unwrap_or_default();
        assert!(
            top.contains(" params (B: edit) ") || top.contains(" params ─"),
            "{w}x{h}: {top}"
        );
        if w == 60 {
            assert!(top.contains("more ┐"), "{w}x{h}: {top}");
        }
    }
}
