//! The channel interface: somewhere a question can be offered to a human — the terminal, Zulip,
//! and next the dashboard and other chat services.
//!
//! A channel is told five things by the [`crate::Broker`]: a question to offer (it resolves
//! with an answer or stops when told to), that the question was answered elsewhere (so it can
//! close its card or say who answered in its thread), that a question is still waiting
//! (`human.remind_after`), a notice about a run (it finished, paused, …), and that a run ended
//! (so it can tidy up what it shows for that run). All but the first have no-op defaults, so a
//! channel implements only what it has to show.
//!
//! An answer's body is an [`AnswerBody`]: free text, or a choice among the question's options
//! (a button). Either way what is stored is text — a choice as its label — and the store reads
//! it against the options, so a typed `2` and a pressed second button record the same choice.

pub use futures_util::future::BoxFuture;
use tether_store::{Outcome, Question, RunId};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::notices::Notice;

/// What a human answered on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerBody {
    /// Free text (a typed `2` or an option's label still counts as that choice).
    Text(String),
    /// One of the question's options, picked with a button.
    Choice {
        /// Its index in the question's options.
        index: usize,
        /// Its label.
        label: String,
    },
}

impl AnswerBody {
    /// The answer as text: what is stored and what the agent reads (a choice's label).
    pub fn text(&self) -> &str {
        match self {
            AnswerBody::Text(text) => text,
            AnswerBody::Choice { label, .. } => label,
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
    /// The option `index` of `question`, picked by `responder`; `None` when the question has no
    /// such option (a stale or forged button).
    pub fn choice(question: &Question, index: usize, responder: impl Into<String>) -> Option<Self> {
        let label = question.options.get(index)?.clone();
        Some(ChannelAnswer {
            body: AnswerBody::Choice { index, label },
            responder: responder.into(),
        })
    }

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

    /// Shows a notice about a run (it finished, paused, …) where this channel shows the run's
    /// questions. Called only for the kinds `[notify]` turns on for this channel.
    fn notice<'a>(&'a self, _notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Reminds whoever this channel reaches that `question` is still waiting (`human.remind_after`
    /// passed). Sinks send a "still waiting" notice; a chat channel may do nothing, its post
    /// being still there.
    fn remind<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Waits until what the channel queued to send in the background is handed over or given
    /// up, so a run's last notice is not lost when the process exits. The caller bounds the
    /// wait.
    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Tells the channel the run `run` ended with `outcome`. Questions of an interrupted run
    /// stay pending and are offered again when it is resumed.
    fn run_ended<'a>(&'a self, _run: &'a RunId, _outcome: Outcome) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
