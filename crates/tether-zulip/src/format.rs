//! The bot's messages, in the seed's format: a question card a human can answer at a glance,
//! and a follow-up card for the next question in the same topic. A question with choices lists
//! them numbered and asks for the number or the person's own words (tether reads the reply
//! against the choices).
//!
//! The agent's text (question, context, choices) is Markdown, so code blocks and emphasis
//! render, but it can never mention anyone or disguise a link: [`defuse`] breaks Zulip's mention
//! syntax (`@**all**`, `@**Name**`, `@_**Name**`, `@*group*`) and the Markdown link and image
//! syntax (`[text](url)`) with an invisible zero-width space, so a plain URL still shows its
//! target and is linked by Zulip as written.
//!
//! Zulip truncates a message over `max_message_length` (10 000 before feature level 53) and would
//! then drop the "Reply in this topic" line, so an overlong context is shortened here instead.

/// The longest message tether posts, in characters.
const MAX_MESSAGE_CHARS: usize = 10_000;

const FOOTER: &str = "_Reply in this topic. The agent is waiting for your response._";
const CHOICE_FOOTER: &str = "_Reply in this topic with the number or your own words. The agent is \
                             waiting for your response._";

/// An agent's question, rendered for Zulip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuestionMessage<'a> {
    /// What the agent needs decided.
    pub question: &'a str,
    /// Logs, code, options considered (Markdown). May be empty.
    pub context: &'a str,
    /// The agent's confidence it could resolve this alone, 0–100 (higher is shown as 100).
    pub confidence: u8,
    /// The choices offered, listed numbered (empty for an open question).
    pub options: &'a [String],
}

impl QuestionMessage<'_> {
    /// The first question of a conversation (a new topic).
    pub fn render(&self) -> String {
        let head = format!(
            "🤖 **Agent needs help**\n\n**Question:** {}",
            defuse(self.question.trim())
        );
        self.assemble(&head)
    }

    /// A follow-up question in an existing topic (`thread_id`).
    pub fn render_follow_up(&self) -> String {
        let head = format!("🤖 **Follow-up:**\n\n{}", defuse(self.question.trim()));
        self.assemble(&head)
    }

    fn assemble(&self, head: &str) -> String {
        let mut tail = String::new();
        if !self.options.is_empty() {
            tail.push_str("**Choices:**\n");
            for (i, option) in self.options.iter().enumerate() {
                tail.push_str(&format!("{}. {}\n", i + 1, defuse(option.trim())));
            }
            tail.push('\n');
        }
        let footer = if self.options.is_empty() {
            FOOTER
        } else {
            CHOICE_FOOTER
        };
        tail.push_str(&format!(
            "**Confidence:** {}/100\n\n{footer}",
            self.confidence.min(100)
        ));
        let context = defuse(self.context.trim_matches('\n').trim_end());
        let context = context.as_str();
        let mut text = if context.is_empty() {
            format!("{head}\n\n{tail}")
        } else {
            let fixed =
                head.chars().count() + tail.chars().count() + "\n\n**Context:**\n\n\n".len();
            let room = MAX_MESSAGE_CHARS.saturating_sub(fixed + TRUNCATED.len());
            format!(
                "{head}\n\n**Context:**\n{}\n\n{tail}",
                shorten(context, room)
            )
        };
        // Zulip rejects a NUL byte anywhere in a message.
        text.retain(|c| c != '\0');
        text
    }
}

/// Zero-width space: invisible, but it breaks the syntax it is put into.
const ZWSP: char = '\u{200b}';

/// The agent's text with every mention and every Markdown link or image made plain text.
pub fn defuse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match (c, chars.peek()) {
            // `@**all**`, `@*group*`; `@_**Name**` (silent, still a link to the person).
            ('@', Some('*' | '_')) | (']', Some('(')) => out.push(ZWSP),
            _ => {}
        }
    }
    out
}

const TRUNCATED: &str = "\n[… context truncated]";

fn shorten(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_owned();
    }
    let kept: String = text.chars().take(room).collect();
    format!("{kept}{TRUNCATED}")
}

/// The note posted in a topic when another channel answered first, e.g.
/// `✅ Answered on web by Alice. The agent has moved on.`
pub fn answered_elsewhere_note(channel: &str, responder: &str) -> String {
    format!("✅ Answered on {channel} by {responder}. The agent has moved on.")
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
