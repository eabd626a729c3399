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

/// The fewest options a choice question offers.
pub const MIN_OPTIONS: usize = 2;
/// The most options a choice question offers (more do not fit a row of chat buttons).
pub const MAX_OPTIONS: usize = 6;
/// The longest option label, in characters (Slack's limit for a button's text).
pub const MAX_OPTION_CHARS: usize = 75;

/// The JSON Schema of the tool's arguments.
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "What you need decided."},
            "context": {"type": "string", "description": "Error logs, code, options considered."},
            "confidence": {"type": "integer", "minimum": 0, "maximum": 100,
                "description": "How sure you are (0-100) you could resolve this without help."},
            "thread_id": {"type": "string", "description": "Continue an earlier conversation."},
            "options": {"type": "array", "items": {"type": "string", "maxLength": MAX_OPTION_CHARS},
                "minItems": MIN_OPTIONS, "maxItems": MAX_OPTIONS,
                "description": "For a decision between known alternatives: 2-6 short labels the \
                    person can pick from (they may still answer in their own words)."}
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
        options: args
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|o| match o {
                Value::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            })
            .collect(),
    }
}

/// What is wrong with a question's options, if anything: none, or 2–6 distinct, non-empty
/// labels of at most [`MAX_OPTION_CHARS`] characters each.
pub fn options_problem(options: &[String]) -> Option<String> {
    if options.is_empty() {
        return None;
    }
    if !(MIN_OPTIONS..=MAX_OPTIONS).contains(&options.len()) {
        return Some(format!(
            "`options` must list {MIN_OPTIONS} to {MAX_OPTIONS} choices (got {}); leave it out \
             for an open question",
            options.len()
        ));
    }
    if let Some(i) = options.iter().position(|o| o.trim().is_empty()) {
        return Some(format!("option {} of `options` is empty", i + 1));
    }
    if let Some(o) = options
        .iter()
        .find(|o| o.chars().count() > MAX_OPTION_CHARS)
    {
        return Some(format!(
            "the option \"{}…\" is longer than {MAX_OPTION_CHARS} characters; keep labels short \
             and explain them in the question",
            o.chars().take(30).collect::<String>()
        ));
    }
    for (i, o) in options.iter().enumerate() {
        if options[..i].iter().any(|p| p.eq_ignore_ascii_case(o)) {
            return Some(format!("the option \"{o}\" is listed twice in `options`"));
        }
    }
    None
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
        if let Some(problem) = options_problem(&args.options) {
            return Some(Reply::Refused(problem));
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
/// told once it is in the store. The same question its run already asked is given back instead
/// when the agent repeats itself after a crash ([`Broker::ask_once_with`]). Call
/// [`AskPolicy::settle`] first (the [`crate::Desk`] does).
pub async fn ask(
    broker: &Broker,
    question: NewQuestion,
    cancel: CancellationToken,
    stored: impl FnOnce(&Question),
) -> Result<Reply, AskFailed> {
    replied(broker.ask_once_with(question, cancel, stored).await)
}

/// What the agent gets for the end of a wait for a human: the answer, or a refusal it can read
/// (the question was withdrawn); the wait cancelled or the store failing is the caller's.
pub fn replied(waited: Result<Answer, BrokerError>) -> Result<Reply, AskFailed> {
    match waited {
        Ok(a) => Ok(Reply::Answered {
            text: prompts::human_replied(&a),
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
    fn options_are_checked_before_anything_is_asked() {
        let with = |options: Value| {
            let q = question_from_args(
                &json!({"question": "Q?", "context": "", "confidence": 0, "options": options}),
            );
            AskPolicy {
                threshold: 2,
                problems: Vec::new(),
            }
            .settle(&q)
            .map(|r| r.text().to_owned())
        };
        assert_eq!(with(json!(["A", "B"])), None);
        assert_eq!(with(json!([])), None);
        assert!(with(json!(["A"])).is_some_and(|e| e.contains("2 to 6")));
        assert!(
            with(json!(["A", "B", "C", "D", "E", "F", "G"])).is_some_and(|e| e.contains("got 7"))
        );
        assert!(with(json!(["A", " "])).is_some_and(|e| e.contains("option 2")));
        assert!(with(json!(["A", "a"])).is_some_and(|e| e.contains("twice")));
        assert!(with(json!(["A", "x".repeat(76)])).is_some_and(|e| e.contains("75")));
        let q = question_from_args(&json!({"question": "Q", "options": [" A ", 7]}));
        assert_eq!(q.options, vec!["A".to_owned(), "7".to_owned()]);
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
                options: Vec::new(),
            }
        );
        assert_eq!(
            question_from_args(&json!({"confidence": -3})).confidence,
            None
        );
    }
}
