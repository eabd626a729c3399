//! What people read in the chat: the question, its buttons, the notes — plain text (no parse
//! mode, so nothing an agent writes can break the markup), within Telegram's 4096 characters.

use crate::api::Button;

/// Telegram's limit on a message's text.
pub const MAX_TEXT_CHARS: usize = 4096;

/// The parts of a question message.
#[derive(Debug, Clone, Copy)]
pub struct QuestionMessage<'a> {
    /// The question.
    pub question: &'a str,
    /// Context the agent gave.
    pub context: &'a str,
    /// The agent's confidence (0–100).
    pub confidence: u8,
    /// The choices, if any.
    pub options: &'a [String],
    /// Whether it follows up an earlier question of the same conversation.
    pub follow_up: bool,
}

impl QuestionMessage<'_> {
    /// The message text.
    pub fn render(&self) -> String {
        let mut text = if self.follow_up {
            format!("❓ Follow-up: {}", self.question.trim())
        } else {
            format!("❓ {}", self.question.trim())
        };
        if !self.context.trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(self.context.trim());
        }
        if !self.options.is_empty() {
            text.push_str("\n\nChoices:");
            for (i, option) in self.options.iter().enumerate() {
                text.push_str(&format!("\n{}. {option}", i + 1));
            }
        }
        text.push_str(&format!("\n\n(agent confidence {}%)\n", self.confidence));
        text.push_str(if self.options.is_empty() {
            "Reply to this message to answer."
        } else {
            "Press a button, or reply to this message with a number or your own answer."
        });
        clip(&text)
    }

    /// One button per option; `callback_data` is `tq:<index>:<question id>` (≤ 64 bytes).
    pub fn buttons(&self, question_id: &str) -> Vec<Button> {
        self.options
            .iter()
            .enumerate()
            .map(|(i, label)| Button {
                text: label.clone(),
                data: callback_data(i, question_id),
            })
            .collect()
    }
}

/// `tq:<index>:<question id>`, cut to 64 bytes.
pub fn callback_data(index: usize, question_id: &str) -> String {
    let mut data = format!("tq:{index}:{question_id}");
    while data.len() > 64 {
        data.pop();
    }
    data
}

/// The option index and question-id prefix of a button's data, if it is one of tether's.
pub fn parse_callback_data(data: &str) -> Option<(usize, &str)> {
    let rest = data.strip_prefix("tq:")?;
    let (index, question) = rest.split_once(':').unwrap_or((rest, ""));
    Some((index.parse().ok()?, question))
}

/// The note replying to a question answered on another channel.
pub fn answered_elsewhere_note(channel: &str, responder: &str) -> String {
    format!("Answered on {channel} by {responder}.")
}

fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_TEXT_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_carry_the_index_and_question_within_64_bytes() {
        let options = vec!["Yes".to_owned(), "No".to_owned()];
        let m = QuestionMessage {
            question: "Ship it?",
            context: "",
            confidence: 40,
            options: &options,
            follow_up: false,
        };
        let b = m.buttons(&"q".repeat(100));
        assert_eq!(b.len(), 2);
        assert!(b[1].data.len() <= 64);
        assert_eq!(parse_callback_data(&b[1].data).map(|p| p.0), Some(1));
        assert_eq!(parse_callback_data("other"), None);
        assert!(m.render().contains("2. No"));
        let long = "x".repeat(5000);
        let m = QuestionMessage {
            question: &long,
            ..m
        };
        assert_eq!(m.render().chars().count(), MAX_TEXT_CHARS);
    }
}
