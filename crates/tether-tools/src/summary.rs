//! One-line summaries of tool calls, for the event journal and the live view: short enough to
//! scan (`bash: cargo test (exit 0, 1.2 s)`), never more than one line.

use crate::output::ToolOutput;
use crate::text::first_line;

/// Summaries are cut to this many characters.
const MAX_CHARS: usize = 120;

/// `what` the call was, plus its result's note, or the first line of its error.
pub(crate) fn summarize(what: &str, output: &ToolOutput) -> String {
    let what = what.replace(['\n', '\r'], " ");
    let line = match (&output.note, output.is_error) {
        (Some(note), _) => format!("{what} ({note})"),
        (None, true) => format!("{what} (error: {})", first_line(&output.content, 60)),
        (None, false) => what,
    };
    first_line(&line, MAX_CHARS)
}

#[cfg(test)]
mod tests {
    use super::summarize;
    use crate::output::ToolOutput;

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(
            summarize("edit src/lib.rs", &ToolOutput::ok("edited")),
            "edit src/lib.rs"
        );
        assert_eq!(
            summarize(
                "bash: cargo test",
                &ToolOutput::ok("x").with_note("exit 0, 1.2 s")
            ),
            "bash: cargo test (exit 0, 1.2 s)"
        );
        assert_eq!(
            summarize("read a", &ToolOutput::error("`a` does not exist\nmore")),
            "read a (error: `a` does not exist …)"
        );
        let long = summarize(&"x".repeat(500), &ToolOutput::ok(""));
        assert_eq!(long.chars().count(), 121);
        assert!(!summarize("a\nb", &ToolOutput::ok("")).contains('\n'));
    }
}
