//! The loop judge's texts: its system prompt and the request about one iteration.

/// The loop judge's system prompt.
pub const SYSTEM: &str = "You watch an autonomous coding agent that works in a loop, one \
iteration after another, on the goals listed below. After each iteration you read its final \
message and decide whether the loop should go on without a person.

Answer with one JSON object and nothing else:
{\"verdict\": \"continue\" | \"blocked\", \"reason\": \"<one sentence>\"}

Say \"blocked\" only when the message shows the agent cannot make progress without a person: it \
says it is stuck or waiting for a decision, credentials, access or information only a person \
has; it repeats the same failed attempt; or it is working on something the goals do not ask \
for. Otherwise say \"continue\". You cannot end the run or sign a goal off; when in doubt, \
say \"continue\".";

/// How much of the agent's final message the loop judge reads.
pub const MESSAGE_LIMIT: usize = 4096;

/// The request about one iteration: the active goals, then the agent's final message (its
/// first [`MESSAGE_LIMIT`] bytes).
pub fn request(n: u32, goals: &[String], final_message: &str) -> String {
    let goals = if goals.is_empty() {
        "(no goals: the loop runs one prompt again and again)".to_owned()
    } else {
        goals
            .iter()
            .map(|g| format!("- {g}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut end = final_message.len().min(MESSAGE_LIMIT);
    while !final_message.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < final_message.len() {
        "\n[… cut]"
    } else {
        ""
    };
    format!(
        "Active goals:\n{goals}\n\nThe agent's final message of iteration {n}:\n<<<\n{}{cut}\n>>>",
        &final_message[..end]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_judges_texts() {
        let long = "é".repeat(3000);
        insta::assert_snapshot!(format!(
            "{SYSTEM}\n---\n{}\n---\n{}",
            request(
                4,
                &["add: Add numbers".into()],
                "I need the API key to go on."
            ),
            request(5, &[], &long).len()
        ));
    }
}
