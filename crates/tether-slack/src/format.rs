//! The bot's messages: a question as Block Kit (the question, its context, the agent's
//! confidence, one button per option, how to answer), the same message once answered (the
//! buttons replaced by who answered what), and short notes.
//!
//! Text written by agents is escaped (`&`, `<`, `>`), so it can neither mention `@channel`
//! nor forge a link. A section holds at most 3,000 characters and a button's text 75, so longer
//! text is shortened here rather than refused by Slack.

use serde_json::{Value, json};

use crate::filter::option_action_id;

/// The most characters in one section block.
const MAX_SECTION_CHARS: usize = 3_000;
/// The most characters in a button's text.
const MAX_BUTTON_CHARS: usize = 75;
/// The most characters of the fallback `text`.
const MAX_FALLBACK_CHARS: usize = 3_000;

const TRUNCATED: &str = "\n[… truncated]";

/// An agent's question, rendered for Slack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuestionMessage<'a> {
    /// What the agent needs decided.
    pub question: &'a str,
    /// Logs, code, options considered. May be empty.
    pub context: &'a str,
    /// The agent's confidence it could resolve this alone, 0–100 (higher is shown as 100).
    pub confidence: u8,
    /// The choices offered as buttons (empty for a plain question).
    pub options: &'a [String],
    /// A follow-up in an existing thread rather than a new conversation.
    pub follow_up: bool,
}

impl QuestionMessage<'_> {
    /// The fallback text (notifications) and the blocks of the question, with its buttons.
    pub fn render(&self) -> (String, Value) {
        let mut blocks = self.body();
        if !self.options.is_empty() {
            let buttons: Vec<Value> = self
                .options
                .iter()
                .enumerate()
                .map(|(i, label)| {
                    json!({
                        "type": "button",
                        "action_id": option_action_id(i),
                        "value": i.to_string(),
                        "text": {"type": "plain_text", "text": shorten(label, MAX_BUTTON_CHARS, "…"), "emoji": true},
                    })
                })
                .collect();
            blocks.push(
                json!({"type": "actions", "block_id": "tether_options", "elements": buttons}),
            );
        }
        let how = if self.options.is_empty() {
            "Reply in this thread. The agent is waiting for your answer."
        } else {
            "Press a button, or reply in this thread (a number or your own answer). The agent is waiting."
        };
        blocks.push(context_block(how));
        (self.fallback(), Value::Array(blocks))
    }

    /// The question once answered: no buttons, and `line` (e.g. [`answered_note`]) instead.
    pub fn render_answered(&self, line: &str) -> (String, Value) {
        let mut blocks = self.body();
        blocks.push(context_block(&escape(line)));
        (self.fallback(), Value::Array(blocks))
    }

    fn fallback(&self) -> String {
        let head = if self.follow_up {
            "Follow-up"
        } else {
            "Agent needs help"
        };
        shorten(
            &format!("{head}: {}", escape(self.question.trim())),
            MAX_FALLBACK_CHARS,
            TRUNCATED,
        )
    }

    fn body(&self) -> Vec<Value> {
        let head = if self.follow_up {
            "*Follow-up:*"
        } else {
            ":robot_face: *Agent needs help*"
        };
        let question = format!("{head}\n{}", escape(self.question.trim()));
        let mut blocks = vec![section(&question)];
        let context = self.context.trim_matches('\n').trim_end();
        if !context.is_empty() {
            blocks.push(section(&format!("*Context:*\n{}", escape(context))));
        }
        if !self.options.is_empty() {
            let list: Vec<String> = self
                .options
                .iter()
                .enumerate()
                .map(|(i, o)| format!("{}. {}", i + 1, escape(o)))
                .collect();
            blocks.push(section(&format!("*Options:*\n{}", list.join("\n"))));
        }
        blocks.push(context_block(&format!(
            "Confidence: {}/100",
            self.confidence.min(100)
        )));
        blocks
    }
}

fn section(text: &str) -> Value {
    let text = shorten(text, MAX_SECTION_CHARS, TRUNCATED);
    json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})
}

fn context_block(text: &str) -> Value {
    json!({"type": "context", "elements": [{"type": "mrkdwn", "text": text}]})
}

/// Escapes the three characters Slack's mrkdwn gives meaning to.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn shorten(text: &str, room: usize, marker: &str) -> String {
    if text.chars().count() <= room {
        return text.to_owned();
    }
    let kept: String = text
        .chars()
        .take(room.saturating_sub(marker.chars().count()))
        .collect();
    format!("{kept}{marker}")
}

/// The line shown in the thread (and on the answered question) when someone answered, e.g.
/// `✅ Answered on web by Alice: Yes. The agent has moved on.`
pub fn answered_note(channel: &str, responder: &str) -> String {
    format!("✅ Answered on {channel} by {responder}. The agent has moved on.")
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
