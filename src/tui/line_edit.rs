//! A one-line text editor: the text, a cursor between characters, and the edits of a
//! terminal prompt (insert, Backspace, Delete, Left, Right, Home, End, clear). The layout
//! field types into one; it holds no terminal state, so it is tested on its own. Columns are
//! counted by each character's display width (a CJK character takes two), so the window
//! keeps the cursor in view whatever the text holds.

use unicode_width::UnicodeWidthChar;

/// Columns `c` takes on a terminal (at least one: a zero-width character still gets a cell
/// of its own in the editor).
pub fn columns(c: char) -> usize {
    c.width().unwrap_or(1).max(1)
}

/// Longest text the editor takes, in characters (a layout of a thousand-layer model in
/// run-length form is far shorter; pasted junk stops here).
pub const MAX_CHARS: usize = 256;

/// An edit of the line, as the keys ask for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOp {
    /// Cursor one character left.
    Left,
    /// Cursor one character right.
    Right,
    /// Cursor to the start.
    Home,
    /// Cursor to the end.
    End,
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    /// Delete everything.
    Clear,
}

/// The text being edited and the cursor, as a character index (0 before the first
/// character, `len` after the last).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineEdit {
    chars: Vec<char>,
    cursor: usize,
    /// The text the editor opened with (Esc gives it back).
    original: String,
}

impl LineEdit {
    /// An editor on `text` with the cursor at its end.
    pub fn new(text: &str) -> LineEdit {
        let chars: Vec<char> = text.chars().take(MAX_CHARS).collect();
        LineEdit {
            cursor: chars.len(),
            chars,
            original: text.to_string(),
        }
    }

    /// The text as edited.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// The text the editor opened with.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// The cursor, as a character index.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// The characters, in order.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// Puts the cursor before character `at` (clamped to the text).
    pub fn set_cursor(&mut self, at: usize) {
        self.cursor = at.min(self.chars.len());
    }

    /// Inserts `c` at the cursor; control characters and text past `MAX_CHARS` are not
    /// taken (false).
    pub fn insert(&mut self, c: char) -> bool {
        if c.is_control() || self.chars.len() >= MAX_CHARS {
            return false;
        }
        self.chars.insert(self.cursor, c);
        self.cursor += 1;
        true
    }

    /// Inserts `text` at the cursor (a paste), leaving out control characters (line breaks,
    /// tabs); false when something was left out or the text stopped at `MAX_CHARS`.
    pub fn insert_str(&mut self, text: &str) -> bool {
        let mut all = true;
        for c in text.chars() {
            if !self.insert(c) {
                all = false;
                if self.chars.len() >= MAX_CHARS {
                    break;
                }
            }
        }
        all
    }

    /// Applies `op`; false when it changed nothing (a Backspace at the start).
    pub fn apply(&mut self, op: LineOp) -> bool {
        let before = (self.cursor, self.chars.len());
        match op {
            LineOp::Left => self.cursor = self.cursor.saturating_sub(1),
            LineOp::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            LineOp::Home => self.cursor = 0,
            LineOp::End => self.cursor = self.chars.len(),
            LineOp::Backspace => {
                if self.cursor > 0 {
                    self.cursor -= 1;
                    self.chars.remove(self.cursor);
                }
            }
            LineOp::Delete => {
                if self.cursor < self.chars.len() {
                    self.chars.remove(self.cursor);
                }
            }
            LineOp::Clear => {
                self.chars.clear();
                self.cursor = 0;
            }
        }
        before != (self.cursor, self.chars.len())
    }

    /// The first character shown in a window `width` columns wide that keeps the cursor's
    /// character (or the cell after the text, where the cursor sits at the end) whole in
    /// view, as close to the start as it can; columns by display width.
    pub fn window_start(&self, width: usize) -> usize {
        let width = width.max(1);
        let at_cursor = self.chars.get(self.cursor).map_or(1, |c| columns(*c));
        let mut used = at_cursor;
        let mut start = self.cursor;
        while start > 0 {
            let w = columns(self.chars[start - 1]);
            if used + w > width {
                break;
            }
            used += w;
            start -= 1;
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_goes_in_at_the_cursor_without_control_characters() {
        let mut e = LineEdit::new("E|L");
        e.apply(LineOp::Left);
        assert!(e.insert_str("t*4|"));
        assert_eq!((e.text().as_str(), e.cursor()), ("E|t*4|L", 6));
        assert!(!e.insert_str("t\nt"));
        assert_eq!(e.text(), "E|t*4|ttL");
        let mut long = LineEdit::new("");
        assert!(!long.insert_str(&"t".repeat(MAX_CHARS + 10)));
        assert_eq!(long.chars().len(), MAX_CHARS);
    }

    #[test]
    fn the_window_counts_display_columns() {
        // Ten wide characters take twenty columns: a window of 9 shows the last four
        // before the cursor at the end (eight columns) and the cursor's cell.
        let e = LineEdit::new(&"表".repeat(10));
        assert_eq!(e.window_start(9), 6);
        assert_eq!(LineEdit::new("abcdefghij").window_start(9), 2);
        let mut e = LineEdit::new("ab表cd");
        e.set_cursor(2);
        assert_eq!(e.window_start(2), 2);
        assert_eq!(e.window_start(3), 1);
        assert_eq!(e.window_start(4), 0);
        assert_eq!(columns('表'), 2);
        assert_eq!(columns('a'), 1);
    }

    #[test]
    fn the_keys_edit_at_the_cursor() {
        let mut e = LineEdit::new("Et|tL");
        assert_eq!(e.cursor(), 5);
        e.apply(LineOp::Left);
        e.apply(LineOp::Left);
        assert!(e.insert('*'));
        assert!(e.insert('2'));
        assert_eq!(e.text(), "Et|*2tL");
        e.apply(LineOp::Home);
        assert!(!e.apply(LineOp::Backspace));
        e.apply(LineOp::Delete);
        assert_eq!(e.text(), "t|*2tL");
        e.apply(LineOp::End);
        e.apply(LineOp::Backspace);
        assert_eq!(e.text(), "t|*2t");
        assert!(!e.apply(LineOp::Right));
        assert!(!e.apply(LineOp::Delete));
        e.apply(LineOp::Clear);
        assert_eq!((e.text().as_str(), e.cursor()), ("", 0));
        assert_eq!(e.original(), "Et|tL");
    }

    #[test]
    fn control_characters_and_overlong_text_are_not_taken() {
        let mut e = LineEdit::new("");
        for c in ['\n', '\t', '\u{1b}', '\u{7f}', '\0'] {
            assert!(!e.insert(c));
        }
        // Wide and combining characters are kept (the parser names them).
        assert!(e.insert('層'));
        for _ in 0..2 * MAX_CHARS {
            e.insert('t');
        }
        assert_eq!(e.chars().len(), MAX_CHARS);
        assert_eq!(LineEdit::new(&"t".repeat(1000)).chars().len(), MAX_CHARS);
    }

    #[test]
    fn the_window_follows_the_cursor() {
        let mut e = LineEdit::new("abcdefghij");
        // At the end the cursor cell after the text is shown: 10 chars + 1 in 5 columns.
        assert_eq!(e.window_start(5), 6);
        e.apply(LineOp::Home);
        assert_eq!(e.window_start(5), 0);
        e.set_cursor(7);
        assert_eq!(e.window_start(5), 3);
        assert_eq!(e.window_start(0), 7);
    }
}
