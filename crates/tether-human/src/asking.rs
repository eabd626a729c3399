//! What `ask_human` does, whoever offers it: the built-in agent's tool ([`super::tool`]) and
//! the MCP server (`tether mcp`) both call this, so the two cannot drift apart.
//!
//! A call is first settled without a person when it can be — an empty question, asking disabled
//! (threshold 0), confidence at or above the threshold's cutoff, channels misconfigured — and
//! only then stored and offered through the [`Broker`]. The question is one
//! [`NewQuestion`] from the tool's arguments ([`question_from_args`]) to the store. The agent gets `Human replied: …` with
//! the `thread_id` and who answered, or a tool error it can read.

use serde_json::{Value, json};
use tether_store::{NewQuestion, Question, QuestionId, StoreError};
use tokio_util::sync::CancellationToken;

use crate::broker::{Answer, Broker, BrokerError};
use crate::{prompts, threshold};

/// The tool's name, the same everywhere.
pub const NAME: &str = "ask_human";

/// The JSON Schema of the tool's arguments.
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "What you need decided."},
            "context": {"type": "string", "description": "Error logs, code, options considered."},
            "confidence": {"type": "integer", "minimum": 0, "maximum": 100,
                "description": "How sure you are (0-100) you could resolve this without help."},
            "thread_id": {"type": "string", "description": "Continue an earlier conversation."}
        },
        "required": ["question", "context", "confidence"],
        "additionalProperties": false
    })
}

/// The question of one call, read leniently from the arguments the agent passed (a JSON
/// object): a missing text is empty, a confidence above 100 counts as 100, one that is not a
/// whole number is absent. The run is set by the caller (`run_id` is `None` here).
///
/// This is the only place a question's fields are read; the same [`NewQuestion`] goes through
/// the policy and the broker into the store.
pub fn question_from_args(args: &Value) -> NewQuestion {
    let text = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    NewQuestion {
        run_id: None,
        question: text("question"),
        context: text("context"),
        confidence: args
            .get("confidence")
            .and_then(Value::as_u64)
            .map(|c| u8::try_from(c.min(100)).unwrap_or(100)),
        thread_id: args
            .get("thread_id")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned),
    }
}

/// How `ask_human` behaves here: the interaction threshold, and what is wrong with the
/// configured channels (each problem names what is missing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AskPolicy {
    /// The interaction threshold, 0–5.
    pub threshold: u8,
    /// Misconfiguration found while setting the channels up, e.g. a missing `ZULIP_BOT_API_KEY`.
    pub problems: Vec<String>,
}

/// What the agent gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A result: a human's answer (then `answer` is set), or tether's own when no human was
    /// needed.
    Answered {
        /// The text for the agent.
        text: String,
        /// The human's answer, when one was given.
        answer: Option<Answer>,
    },
    /// A tool error the agent should read (nothing was asked, or there will be no answer).
    Refused(String),
}

impl Reply {
    /// The text for the agent, whichever kind of reply this is.
    pub fn text(&self) -> &str {
        match self {
            Reply::Answered { text, .. } | Reply::Refused(text) => text,
        }
    }

    /// Whether this is a tool error.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Refused(_))
    }
}

/// The wait for a human ended without a reply for the agent.
#[derive(Debug, thiserror::Error)]
pub enum AskFailed {
    /// The wait was cancelled; the question stays pending and is asked again on resume.
    #[error("stopped waiting for an answer to {0}; the question stays pending")]
    Cancelled(QuestionId),
    /// The store failed (the question could not be stored or read).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AskPolicy {
    /// The reply given without reaching a human, if this call needs none: an empty question,
    /// asking disabled (threshold 0), confidence at or above the cutoff, or channels that are
    /// misconfigured (the call then fails, naming what to fix, and nothing is stored).
    pub fn settle(&self, args: &NewQuestion) -> Option<Reply> {
        if args.question.trim().is_empty() {
            return Some(Reply::Refused("`question` must not be empty".to_owned()));
        }
        if self.threshold == 0 {
            return Some(Reply::Answered {
                text: prompts::asking_disabled(),
                answer: None,
            });
        }
        if let Some(text) = threshold::auto_answer(self.threshold, args.confidence) {
            return Some(Reply::Answered { text, answer: None });
        }
        if !self.problems.is_empty() {
            return Some(Reply::Refused(prompts::ask_human_unavailable(
                &self.problems,
            )));
        }
        None
    }
}

/// Stores the question, offers it through `broker` and waits for the first answer; `stored` is
/// told once it is in the store. Call [`AskPolicy::settle`] first (the [`crate::Desk`] does).
pub async fn ask(
    broker: &Broker,
    question: NewQuestion,
    cancel: CancellationToken,
    stored: impl FnOnce(&Question),
) -> Result<Reply, AskFailed> {
    match broker.ask_with(question, cancel, stored).await {
        Ok(a) => Ok(Reply::Answered {
            text: prompts::human_replied(&a.text, &a.thread_id, &a.responder, &a.channel),
            answer: Some(a),
        }),
        Err(e @ BrokerError::Withdrawn(_)) => Ok(Reply::Refused(e.to_string())),
        Err(BrokerError::Cancelled(id)) => Err(AskFailed::Cancelled(id)),
        Err(BrokerError::Store(e)) => Err(AskFailed::Store(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(confidence: u8) -> NewQuestion {
        question_from_args(&json!({"question": "Q?", "context": "", "confidence": confidence}))
    }

    #[test]
    fn settled_without_a_human_in_this_order() {
        let policy = |threshold, problems: &[&str]| AskPolicy {
            threshold,
            problems: problems.iter().map(|p| (*p).to_owned()).collect(),
        };
        let empty = question_from_args(&json!({"question": "  "}));
        assert!(policy(2, &[]).settle(&empty).is_some_and(|r| r.is_error()));
        let off = policy(0, &["broken"]).settle(&args(0)).unwrap();
        assert_eq!(off.text(), prompts::asking_disabled());
        assert!(!off.is_error());
        let sure = policy(2, &["broken"]).settle(&args(40)).unwrap();
        assert_eq!(sure.text(), prompts::proceed_without_asking(40, 2));
        let broken = policy(2, &["missing X (set X)"]).settle(&args(10)).unwrap();
        assert!(broken.is_error() && broken.text().contains("missing X (set X)"));
        assert_eq!(policy(2, &[]).settle(&args(10)), None);
    }

    #[test]
    fn arguments_are_read_leniently() {
        let a = question_from_args(&json!({"question": "Q", "confidence": 250, "thread_id": ""}));
        assert_eq!(
            a,
            NewQuestion {
                run_id: None,
                question: "Q".into(),
                context: String::new(),
                confidence: Some(100),
                thread_id: None,
            }
        );
        assert_eq!(
            question_from_args(&json!({"confidence": -3})).confidence,
            None
        );
    }
}
