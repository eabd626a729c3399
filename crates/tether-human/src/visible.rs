//! Text from agents, models, verify commands and chat users made safe to print on a terminal.
//!
//! Questions, context, answers, responders, tool arguments and verify output can carry escape
//! sequences (`ESC [ 2 J` clears the screen, `ESC ] 52` writes the clipboard), a bare carriage
//! return that overwrites what was printed before it, or text-direction overrides that make a
//! line read differently from what it holds. Every human-facing text output of tether passes
//! its text through [`escape`] first; `--json` output is left exact (JSON escapes control
//! characters itself).
//!
//! The convention: a control character is shown as the Rust-style escape that names it — `\r`
//! for a carriage return, `\x1b` for ESC (and `\xNN` for every other C0 control and DEL),
//! `\u{9b}` for a C1 control or a text-direction control. Tabs are kept, and newlines are kept
//! where the layout has room for several lines ([`Layout::Lines`]); a backslash is printed as it
//! is, so ordinary text (paths, regular expressions) reads unchanged.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether the place the text is printed has room for more than one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A block of lines: `\n` and `\t` are kept.
    Lines,
    /// One line (a status line redrawn in place): `\n` is shown as `\n` too; `\t` is kept.
    OneLine,
}

/// `text` with every control character that could act on a terminal shown as a visible escape;
/// borrowed unchanged when there is none.
pub fn escape(text: &str, layout: Layout) -> Cow<'_, str> {
    let kept = |c: char| c == '\t' || (c == '\n' && layout == Layout::Lines);
    if !text.chars().any(|c| is_control(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_control(c) || kept(c) {
            out.push(c);
            continue;
        }
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// [`escape`] for a block of lines: what most outputs need.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, Layout::Lines)
}

/// [`escape`] for one line.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, Layout::OneLine)
}

/// C0 controls, DEL, C1 controls, and the Unicode controls that reorder text (bidirectional
/// embeddings, overrides, isolates and marks).
fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_carriage_returns_and_c1_controls_become_visible() {
        let text = "a\x1b[2Jb\rc\u{7}d\u{7f}e\u{9b}31mf\u{202e}g";
        assert_eq!(
            visible(text),
            "a\\x1b[2Jb\\rc\\x07d\\x7fe\\u{9b}31mf\\u{202e}g"
        );
    }

    #[test]
    fn newlines_and_tabs_are_kept_where_there_is_room_for_them() {
        assert_eq!(visible("one\n\ttwo"), "one\n\ttwo");
        assert_eq!(one_line("one\n\ttwo\r"), "one\\n\ttwo\\r");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "C:\\path\\x1b is text, ünïcödé and emoji 🙂";
        assert!(matches!(visible(text), Cow::Borrowed(t) if t == text));
    }
}
