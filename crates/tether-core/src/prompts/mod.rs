//! Every text tether puts in front of a model, in one place and in flow order, so the wording
//! stays consistent and each text is snapshot-tested.
//!
//! Texts are fixed strings or pure functions of their inputs, with no timestamps, so that the
//! same inputs give byte-identical prompts and provider prompt caches keep hitting.
//!
//! Flow order: plan mode's drafting ([`drafting`]); each goal-loop iteration's framing, plan
//! injection, reminder, continuation, clean end and oscillation nudge ([`goal`]); the answers a
//! resumed run delivers (here). The Ralph loop's prompt is here too. Asking a human's texts
//! live with the broker (`tether_human::prompts`), the judge's with the sign-off
//! (`tether_signoff::prompts`).

pub mod drafting;
pub mod goal;

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

/// Added to the first prompt after a resume: answers to questions the agent asked in an
/// iteration that was interrupted while it waited.
pub fn answers_after_interruption(answers: &[(String, String)]) -> String {
    format!("\n\n---\n{}", answered_while_interrupted(answers))
}

/// The answers to questions asked in an interrupted iteration, as one paragraph.
pub fn answered_while_interrupted(answers: &[(String, String)]) -> String {
    let mut out = String::from(
        "In an earlier attempt at this iteration, which was interrupted, you asked a human and \
         they have answered. Use their answers; do not ask these again.",
    );
    for (question, answer) in answers {
        out.push_str(&format!("\nQuestion: {question}\nAnswer: {answer}"));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn after_an_interruption() {
        insta::assert_snapshot!(super::answers_after_interruption(&[(
            "Which port?".into(),
            "8080".into()
        )]));
    }

    #[test]
    fn ralph_prompt_with_and_without_a_promise() {
        insta::assert_snapshot!(super::ralph("Make the tests pass.\n", Some("TESTS PASS")));
        assert_eq!(super::ralph("Just this.\n", None), "Just this.");
    }
}
