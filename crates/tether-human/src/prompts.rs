//! Every text of asking a human that a model reads: the `ask_human` tool's description for each
//! interaction threshold, tether's own answer to a confident question, the tool's result, and
//! its errors. Fixed strings or pure functions, snapshot-tested.

use crate::broker::Answer;

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
        "Ask a human and wait for the answer (it may take minutes or hours; that is fine). A \
         person reads the question wherever tether reaches them and answers it here.\n\n\
         Interaction level {threshold} of 5: {guidance}\n\n\
         When to ask: a requirement is ambiguous and the options lead to different work; you \
         need a decision, a credential or access only a human has; you are stuck after real \
         attempts (say what you tried).\n\
         When not to ask: anything you can find out yourself by reading the code, running it, \
         or checking the docs; routine choices with an obvious default.\n\n\
         Write the question so it can be answered without looking anything up: the decision \
         needed, the options you see with their consequences, and your recommendation. When \
         the decision is between alternatives you already know, also pass them as `options` \
         (2-6 short labels, your default first and named as such in the question): the person \
         picks one with a tap, or answers in their own words. Put \
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

/// What `ask_human` returns to the agent: the answer (for a choice, the chosen label and which
/// option it was), the conversation and who answered.
pub fn human_replied(answer: &Answer) -> String {
    let how = match (answer.choice, answer.options_offered) {
        (_, 0) => String::new(),
        (Some(i), n) => format!("\n(chose option {} of {n})", i + 1),
        (None, _) => "\n(answered in their own words, not one of the options)".to_owned(),
    };
    format!(
        "Human replied: {text}{how}\n\nthread_id: {thread}\nresponder: {responder} (via {channel})",
        text = answer.text,
        thread = answer.thread_id,
        responder = answer.responder,
        channel = answer.channel,
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
    use crate::broker::Answer;

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
        let answer = |text: &str, choice, options_offered| Answer {
            question_id: "q-abc123".parse().unwrap(),
            text: text.to_owned(),
            channel: "cli".to_owned(),
            responder: "alice".to_owned(),
            thread_id: "q-abc123".to_owned(),
            choice,
            options_offered,
        };
        for (title, a) in [
            ("result", answer("Use Postgres.", None, 0)),
            ("choice", answer("Postgres", Some(1), 3)),
            ("other", answer("Neither: use SQLite for now.", None, 3)),
        ] {
            all.push_str(&format!("--- {title}\n{}\n", super::human_replied(&a)));
        }
        all.push_str(&format!("--- disabled\n{}\n", super::asking_disabled()));
        all.push_str(&format!(
            "--- unavailable\n{}\n",
            super::ask_human_unavailable(&[
                "Zulip is not configured: missing the bot API key (set ZULIP_BOT_API_KEY)".into()
            ])
        ));
        insta::assert_snapshot!(all);
    }
}
