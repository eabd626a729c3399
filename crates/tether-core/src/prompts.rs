//! Every text tether puts in front of a model, in one place and in flow order, so the wording
//! stays consistent and each text is snapshot-tested.
//!
//! Texts are fixed strings or pure functions of their inputs, with no timestamps, so that the
//! same inputs give byte-identical prompts and provider prompt caches keep hitting.

/// The Ralph loop's prompt for every iteration: the user's prompt, then, when a completion
/// promise is configured, how to declare completion.
pub fn ralph(prompt: &str, promise: Option<&str>) -> String {
    let prompt = prompt.trim_end();
    match promise {
        None => prompt.to_owned(),
        Some(promise) => format!(
            "{prompt}\n\n\
             ---\n\
             You are working in a loop: this same prompt is given to you again in a fresh \
             context until the task is done. What you did in earlier iterations is in the files \
             of the workspace, not in this conversation, so look there first.\n\
             When, and only when, the task is completely done and verified, end your final \
             message with exactly:\n\
             <promise>{promise}</promise>\n\
             Never write that tag for any other reason; it ends the loop."
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ralph_prompt_with_and_without_a_promise() {
        insta::assert_snapshot!(super::ralph("Make the tests pass.\n", Some("TESTS PASS")));
        assert_eq!(super::ralph("Just this.\n", None), "Just this.");
    }
}
