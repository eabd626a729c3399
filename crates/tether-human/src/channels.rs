//! The channel interface: somewhere a question can be offered to a human — the terminal, Zulip,
//! and next the dashboard and other chat services.
//!
//! A channel is told three things by the [`crate::Broker`]: a question to offer (it resolves
//! with an answer or stops when told to), that the question was answered elsewhere (so it can
//! close its card or say who answered in its thread), and that a run ended (so it can tidy up
//! what it shows for that run). The last two have no-op defaults, so a channel implements only
//! what it has to show.
//!
//! An answer's body is an [`AnswerBody`]: today free text; it is non-exhaustive so a structured
//! answer (a choice among options) can be added without breaking the channels that exist.

pub use futures_util::future::BoxFuture;
use tether_store::{Outcome, Question, RunId};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;

/// What a human answered on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerBody {
    /// Free text.
    Text(String),
}

impl AnswerBody {
    /// The answer as text: what is stored and what the agent reads.
    pub fn text(&self) -> &str {
        match self {
            AnswerBody::Text(text) => text,
        }
    }
}

/// An answer a channel received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAnswer {
    /// The answer.
    pub body: AnswerBody,
    /// Who answered.
    pub responder: String,
}

impl ChannelAnswer {
    /// A free-text answer from `responder`.
    pub fn text(text: impl Into<String>, responder: impl Into<String>) -> Self {
        ChannelAnswer {
            body: AnswerBody::Text(text.into()),
            responder: responder.into(),
        }
    }
}

/// Somewhere a question can be offered to a human (terminal, Zulip, …).
pub trait Channel: Send + Sync {
    /// The channel's name, stored with answers.
    fn name(&self) -> &'static str;

    /// Offers `question`; resolves with an answer if this channel got one, or `None` when it
    /// stopped without one. `stop` fires when another channel won or the wait was cancelled.
    ///
    /// The same question is offered again after a restart (`tether resume`): a channel that
    /// posts somewhere must remember where (the store's `question_posts`) and wait on that post
    /// instead of posting again.
    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>>;

    /// Tells the channel another channel answered first (e.g. a note in the Zulip topic).
    fn answered_elsewhere<'a>(
        &'a self,
        _question: &'a Question,
        _answer: &'a Answer,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Tells the channel the run `run` ended with `outcome`. Questions of an interrupted run
    /// stay pending and are offered again when it is resumed.
    fn run_ended<'a>(&'a self, _run: &'a RunId, _outcome: Outcome) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
