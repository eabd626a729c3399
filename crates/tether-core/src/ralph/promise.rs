//! The completion promise of a Ralph loop.
//!
//! The loop ends with success when the agent's **final** message of an iteration contains a
//! `<promise>…</promise>` tag whose text equals the configured promise, comparing after trimming
//! and collapsing white space. Only the **first** tag counts, so an agent cannot hedge by listing
//! several.

/// The text of the first `<promise>…</promise>` tag in `message`, if it has a closed one.
pub fn first_promise(message: &str) -> Option<&str> {
    const OPEN: &str = "<promise>";
    const CLOSE: &str = "</promise>";
    let start = message.find(OPEN)? + OPEN.len();
    let len = message[start..].find(CLOSE)?;
    Some(&message[start..start + len])
}

/// Trims and collapses runs of white space to one space.
pub fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `final_message` keeps `promise`.
pub fn is_kept(final_message: &str, promise: &str) -> bool {
    first_promise(final_message).is_some_and(|p| normalise(p) == normalise(promise))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_closed_tag_counts_after_normalising_white_space() {
        assert!(is_kept(
            "all done <promise>  TESTS\n  PASS </promise>",
            "TESTS PASS"
        ));
        assert!(!is_kept(
            "<promise>NOT YET</promise> <promise>DONE</promise>",
            "DONE"
        ));
        assert!(!is_kept("<promise>DONE", "DONE"));
        assert!(!is_kept("no tag at all", "DONE"));
        assert!(!is_kept("<promise>done</promise>", "DONE"));
        assert_eq!(first_promise("a</promise><promise>x</promise>"), Some("x"));
    }
}
