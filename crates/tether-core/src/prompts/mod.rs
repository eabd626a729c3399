//! Every text tether puts in front of a model, in one place and in flow order, so the wording
//! stays consistent and each text is snapshot-tested.
//!
//! Texts are fixed strings or pure functions of their inputs, with no timestamps, so that the
//! same inputs give byte-identical prompts and provider prompt caches keep hitting.
//!
//! Flow order: plan mode's drafting ([`drafting`]); each goal-loop iteration's framing, plan
//! injection and asking guidance ([`goal`]); what a prompt owes the agent after its fixed part
//! — messages a person sent, answers a resumed run delivers, the goal loop's reminders, nudges
//! and continuation line ([`feedback`]); the loop judge's question about each iteration
//! ([`loop_judge`]); a person's question about a run, asked on the side ([`side`]). The Ralph
//! loop's prompt is here. Asking a human's texts
//! live with the broker (`tether_human::prompts`), the judge's with the sign-off
//! (`tether_signoff::prompts`).

pub mod drafting;
pub mod feedback;
pub mod goal;
pub mod loop_judge;
pub mod side;

pub use feedback::Feedback;

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

/// Iteration `n`'s prompt in a Ralph loop: the same prompt every time, then, only when
/// something is owed (messages from `tether say` first, answers after an interruption), the
/// feedback after a rule, so the long prefix stays byte-identical for prompt caches.
pub fn ralph_iteration(base: &str, owed: &[Feedback]) -> String {
    let mut out = base.to_owned();
    for (i, item) in owed.iter().enumerate() {
        out.push_str(if i == 0 { "\n\n---\n" } else { "\n\n" });
        out.push_str(&feedback::feedback(item));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Feedback;

    #[test]
    fn after_an_interruption() {
        insta::assert_snapshot!(super::ralph_iteration(
            "",
            &[Feedback::Answers(vec![(
                "Which port?".into(),
                "8080".into()
            )])]
        ));
    }

    #[test]
    fn a_ralph_prompt_with_a_message_and_answers() {
        let base = super::ralph("Make the tests pass.\n", Some("TESTS PASS"));
        let owed = [
            Feedback::Message {
                by: "ana".into(),
                text: "use the fixtures in tests/data".into(),
            },
            Feedback::Answers(vec![("Which port?".into(), "8080".into())]),
        ];
        let prompt = super::ralph_iteration(&base, &owed);
        assert!(prompt.starts_with(&base));
        assert_eq!(super::ralph_iteration(&base, &[]), base);
        insta::assert_snapshot!(prompt);
    }

    #[test]
    fn ralph_prompt_with_and_without_a_promise() {
        insta::assert_snapshot!(super::ralph("Make the tests pass.\n", Some("TESTS PASS")));
        assert_eq!(super::ralph("Just this.\n", None), "Just this.");
    }
}
