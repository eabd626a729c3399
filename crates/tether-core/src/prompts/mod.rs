//! Every text tether puts in front of a model, in one place and in flow order, so the wording
//! stays consistent and each text is snapshot-tested.
//!
//! Texts are fixed strings or pure functions of their inputs, with no timestamps, so that the
//! same inputs give byte-identical prompts and provider prompt caches keep hitting.
//!
//! Flow order: plan mode's drafting ([`drafting`]); each goal-loop iteration's framing, plan
//! injection, reminder, continuation, clean end and oscillation nudge ([`goal`]); asking a human
//! (here); signing a goal off ([`judge`]). The Ralph loop's prompt is here too.

pub mod drafting;
pub mod goal;
pub mod judge;

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

/// How readily the agent should ask, for thresholds 1–5 (0 does not offer the tool).
pub fn threshold_guidance(threshold: u8) -> &'static str {
    match threshold {
        0 => "Never ask: make the best assumption and note it in the plan log.",
        1 | 2 => {
            "Ask only when you are fundamentally blocked or facing a critical, ambiguous choice \
             you cannot undo. Otherwise decide, and note the assumption in the plan log."
        }
        3 => "Ask about ambiguous requirements and significant choices that are not obvious.",
        _ => {
            "Be cautious: confirm your assumptions and present the options before significant \
             work."
        }
    }
}

/// The `ask_human` tool's description: what it does, when to use it and when not, and how
/// `thread_id` works, for the run's threshold.
pub fn ask_human_description(threshold: u8) -> String {
    format!(
        "Ask a human and wait for the answer (it may take minutes or hours; that is fine). The \
         question reaches them on the terminal, the web dashboard or chat.\n\n\
         Interaction level {threshold} of 5: {guidance}\n\n\
         When to ask: a requirement is ambiguous and the options lead to different work; you \
         need a decision, a credential or access only a human has; you are stuck after real \
         attempts (say what you tried).\n\
         When not to ask: anything you can find out yourself by reading the code, running it, \
         or checking the docs; routine choices with an obvious default.\n\n\
         Write the question so it can be answered without looking anything up: the decision \
         needed, the options you see with their consequences, and your recommendation. Put \
         logs, code and what you tried in `context`. Set `confidence` (0-100) to how sure you \
         are you could resolve this alone; questions asked with high confidence are answered \
         by tether itself, telling you to proceed.\n\
         The result carries a `thread_id`: pass it back to continue the same conversation \
         (a follow-up, or a reply to the human's question back to you).",
        guidance = threshold_guidance(threshold)
    )
}

/// tether's answer to a question asked with confidence at or above the threshold's cutoff.
pub fn proceed_without_asking(confidence: u8, threshold: u8) -> String {
    format!(
        "Proceed without asking: your confidence {confidence} is above the cutoff for threshold \
         {threshold}; note your assumption in the plan log."
    )
}

/// What `ask_human` returns to the agent.
pub fn human_replied(answer: &str, thread_id: &str, responder: &str, channel: &str) -> String {
    format!(
        "Human replied: {answer}\n\nthread_id: {thread_id}\nresponder: {responder} (via {channel})"
    )
}

/// What `ask_human` answers at interaction level 0, where asking is disabled (an MCP client
/// still lists the tool).
pub fn asking_disabled() -> String {
    "Asking a human is disabled here (interaction level 0). Do not ask: make the best \
     assumption, note it in the plan log, and carry on."
        .to_owned()
}

/// The tool error of `ask_human` when the configured channels cannot work; each problem names
/// what is missing.
pub fn ask_human_unavailable(problems: &[String]) -> String {
    format!(
        "ask_human cannot reach a human: {}. The question was not asked. To fix it, set what is \
         missing or remove that channel from `human.channels` in tether.toml. Until then, proceed with your best judgement and note the assumption in \
         the plan log.",
        problems.join("; ")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn asking_texts() {
        let mut all = String::new();
        for t in 1..=5 {
            all.push_str(&format!(
                "--- threshold {t}\n{}\n",
                super::ask_human_description(t)
            ));
        }
        all.push_str(&format!(
            "--- auto answer\n{}\n",
            super::proceed_without_asking(55, 2)
        ));
        all.push_str(&format!(
            "--- result\n{}\n",
            super::human_replied("Use Postgres.", "q-abc123", "alice", "cli")
        ));
        all.push_str(&format!("--- disabled\n{}\n", super::asking_disabled()));
        all.push_str(&format!(
            "--- unavailable\n{}\n",
            super::ask_human_unavailable(&[
                "Zulip is not configured: missing the bot API key (set ZULIP_BOT_API_KEY)".into()
            ])
        ));
        all.push_str(&format!(
            "--- after an interruption\n{}\n",
            super::answers_after_interruption(&[("Which port?".into(), "8080".into())])
        ));
        insta::assert_snapshot!(all);
    }

    #[test]
    fn ralph_prompt_with_and_without_a_promise() {
        insta::assert_snapshot!(super::ralph("Make the tests pass.\n", Some("TESTS PASS")));
        assert_eq!(super::ralph("Just this.\n", None), "Just this.");
    }
}
